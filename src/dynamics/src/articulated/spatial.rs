//! Spatial algebra in Featherstone's notation ("Rigid Body Dynamics Algorithms", ch. 2).
//!
//! - [`Motion`] vectors (velocities, accelerations, joint axes) and [`Force`] vectors
//!   (forces, momenta), each an angular part and a linear part, both expressed in one frame
//!   and taken about that frame's origin: a motion is (ω, v_O), v_O the velocity of the body
//!   point at the origin; a force is (n_O, f), n_O the moment about the origin.
//! - The cross operators `v ×` (on motions, [`Motion::cross_motion`]) and `v ×*` (on forces,
//!   [`Motion::cross_force`]), with `v ×* = −(v ×)ᵀ`.
//! - [`Transform`] `B_X_A` in its factored form (E, r): E rotates A coordinates into B
//!   coordinates and r is B's origin in A coordinates. As a 6×6 matrix on motions it is
//!   `[E 0; −E r× E]`, on forces `[E −E r×; 0 E]`; it is never formed as a matrix.
//! - the inertias, [`RigidInertia`] and [`ArticulatedInertia`], are in
//!   [`super::inertia`] (and re-exported here).
//!
//! Every vector is stored angular part first, as in the book.

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

pub use super::inertia::{ArticulatedInertia, RigidInertia};

/// The cross-product matrix `[x]×` with `[x]× y = x × y`.
#[inline]
pub fn skew(x: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -x.z, x.y, x.z, 0.0, -x.x, -x.y, x.x, 0.0)
}

/// A spatial motion vector (angular rad/s, linear m/s; or their rates).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Motion {
    /// Angular part ω.
    pub ang: Vector3<f64>,
    /// Linear part: the velocity of the body point at the frame origin.
    pub lin: Vector3<f64>,
}

/// A spatial force vector (moment N·m about the frame origin, force N; or momenta).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Force {
    /// Moment about the frame origin.
    pub ang: Vector3<f64>,
    /// Force.
    pub lin: Vector3<f64>,
}

macro_rules! vector_ops {
    ($t:ident) => {
        impl $t {
            /// The zero vector.
            #[inline]
            pub fn zero() -> Self {
                Self::default()
            }

            /// From angular and linear parts.
            #[inline]
            pub fn new(ang: Vector3<f64>, lin: Vector3<f64>) -> Self {
                Self { ang, lin }
            }

            /// As a 6-vector (angular part first).
            #[inline]
            pub fn to_vector6(&self) -> Vector6<f64> {
                Vector6::new(
                    self.ang.x, self.ang.y, self.ang.z, self.lin.x, self.lin.y, self.lin.z,
                )
            }

            /// From a 6-vector (angular part first).
            #[inline]
            pub fn from_vector6(v: &Vector6<f64>) -> Self {
                Self {
                    ang: Vector3::new(v[0], v[1], v[2]),
                    lin: Vector3::new(v[3], v[4], v[5]),
                }
            }
        }

        impl std::ops::Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, o: $t) -> $t {
                $t::new(self.ang + o.ang, self.lin + o.lin)
            }
        }

        impl std::ops::AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, o: $t) {
                self.ang += o.ang;
                self.lin += o.lin;
            }
        }

        impl std::ops::Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, o: $t) -> $t {
                $t::new(self.ang - o.ang, self.lin - o.lin)
            }
        }

        impl std::ops::SubAssign for $t {
            #[inline]
            fn sub_assign(&mut self, o: $t) {
                self.ang -= o.ang;
                self.lin -= o.lin;
            }
        }

        impl std::ops::Neg for $t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                $t::new(-self.ang, -self.lin)
            }
        }

        impl std::ops::Mul<f64> for $t {
            type Output = $t;
            #[inline]
            fn mul(self, s: f64) -> $t {
                $t::new(self.ang * s, self.lin * s)
            }
        }
    };
}

vector_ops!(Motion);
vector_ops!(Force);

impl Motion {
    /// `self × m`: the rate of change of the motion `m` fixed in a body moving with `self`.
    #[inline]
    pub fn cross_motion(&self, m: &Motion) -> Motion {
        Motion::new(
            self.ang.cross(&m.ang),
            self.ang.cross(&m.lin) + self.lin.cross(&m.ang),
        )
    }

    /// `self ×* f`: the rate of change of the force `f` fixed in a body moving with `self`.
    #[inline]
    pub fn cross_force(&self, f: &Force) -> Force {
        Force::new(
            self.ang.cross(&f.ang) + self.lin.cross(&f.lin),
            self.ang.cross(&f.lin),
        )
    }

    /// The scalar product m · f with a force (power, W).
    #[inline]
    pub fn dot(&self, f: &Force) -> f64 {
        self.ang.dot(&f.ang) + self.lin.dot(&f.lin)
    }

    /// The 6×6 matrix of `self ×` (for tests and references).
    pub fn cross_matrix(&self) -> Matrix6<f64> {
        let mut m = Matrix6::zeros();
        let w = skew(&self.ang);
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&w);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&w);
        m.fixed_view_mut::<3, 3>(3, 0).copy_from(&skew(&self.lin));
        m
    }
}

/// A Plücker transform `B_X_A` in factored form (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// E: rotates A coordinates into B coordinates (B_R_A).
    pub rot: Matrix3<f64>,
    /// r: B's origin in A coordinates (m).
    pub trans: Vector3<f64>,
}

impl Default for Transform {
    fn default() -> Self {
        Self::identity()
    }
}

impl Transform {
    /// The identity.
    #[inline]
    pub fn identity() -> Self {
        Self {
            rot: Matrix3::identity(),
            trans: Vector3::zeros(),
        }
    }

    /// `B_X_A` from the world poses (rotation `world_R_·`, origin) of frames A and B.
    pub fn between(
        world_rot_a: &Matrix3<f64>,
        origin_a: &Vector3<f64>,
        world_rot_b: &Matrix3<f64>,
        origin_b: &Vector3<f64>,
    ) -> Self {
        Self {
            rot: world_rot_b.transpose() * world_rot_a,
            trans: world_rot_a.transpose() * (origin_b - origin_a),
        }
    }

    /// `B_X_A m`: a motion given in A expressed in B.
    #[inline]
    pub fn apply_motion(&self, m: &Motion) -> Motion {
        Motion::new(
            self.rot * m.ang,
            self.rot * (m.lin - self.trans.cross(&m.ang)),
        )
    }

    /// `B_X*_A f`: a force given in A expressed in B.
    #[inline]
    pub fn apply_force(&self, f: &Force) -> Force {
        Force::new(
            self.rot * (f.ang - self.trans.cross(&f.lin)),
            self.rot * f.lin,
        )
    }

    /// `A_X_B m` (the inverse transform) on a motion given in B.
    #[inline]
    pub fn inv_apply_motion(&self, m: &Motion) -> Motion {
        let ang = self.rot.tr_mul(&m.ang);
        Motion::new(ang, self.rot.tr_mul(&m.lin) + self.trans.cross(&ang))
    }

    /// `A_X*_B f = (B_X_A)ᵀ f`: a force given in B expressed in A (how the articulated-body
    /// algorithm passes forces to the parent).
    #[inline]
    pub fn inv_apply_force(&self, f: &Force) -> Force {
        let lin = self.rot.tr_mul(&f.lin);
        Force::new(self.rot.tr_mul(&f.ang) + self.trans.cross(&lin), lin)
    }

    /// The composition `C_X_A = self ∘ a_to_b` where `self` is `C_X_B` and `a_to_b` is `B_X_A`.
    #[inline]
    pub fn compose(&self, a_to_b: &Transform) -> Transform {
        Transform {
            rot: self.rot * a_to_b.rot,
            trans: a_to_b.trans + a_to_b.rot.tr_mul(&self.trans),
        }
    }

    /// The inverse `A_X_B`.
    pub fn inverse(&self) -> Transform {
        Transform {
            rot: self.rot.transpose(),
            trans: -(self.rot * self.trans),
        }
    }

    /// The 6×6 matrix acting on motions (for tests and references).
    pub fn motion_matrix(&self) -> Matrix6<f64> {
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.rot);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.rot);
        m.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(-self.rot * skew(&self.trans)));
        m
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use nalgebra::Rotation3;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    pub(crate) fn v3(rng: &mut ChaCha8Rng) -> Vector3<f64> {
        Vector3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    }

    pub(crate) fn motion(rng: &mut ChaCha8Rng) -> Motion {
        Motion::new(v3(rng), v3(rng))
    }

    pub(crate) fn force(rng: &mut ChaCha8Rng) -> Force {
        Force::new(v3(rng), v3(rng))
    }

    pub(crate) fn transform(rng: &mut ChaCha8Rng) -> Transform {
        Transform {
            rot: *Rotation3::from_scaled_axis(v3(rng) * 2.0).matrix(),
            trans: v3(rng),
        }
    }

    pub(crate) fn close6(a: &Vector6<f64>, b: &Vector6<f64>) -> bool {
        (a - b).amax() < 1e-12 * (1.0 + b.amax())
    }

    pub(crate) fn close66(a: &Matrix6<f64>, b: &Matrix6<f64>) -> bool {
        (a - b).amax() < 1e-12 * (1.0 + b.amax())
    }

    /// The factored transforms agree with their 6×6 matrices, and X* = X⁻ᵀ.
    #[test]
    fn factored_transforms_match_their_matrices() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..50 {
            let x = transform(&mut rng);
            let (m, f) = (motion(&mut rng), force(&mut rng));
            let xm = x.motion_matrix();
            let xf = xm.try_inverse().unwrap().transpose();
            assert!(close6(
                &x.apply_motion(&m).to_vector6(),
                &(xm * m.to_vector6())
            ));
            assert!(close6(
                &x.apply_force(&f).to_vector6(),
                &(xf * f.to_vector6())
            ));
            assert!(close6(
                &x.inv_apply_motion(&m).to_vector6(),
                &(xm.try_inverse().unwrap() * m.to_vector6())
            ));
            assert!(close6(
                &x.inv_apply_force(&f).to_vector6(),
                &(xm.transpose() * f.to_vector6())
            ));
            let y = transform(&mut rng);
            assert!(close66(
                &x.compose(&y).motion_matrix(),
                &(xm * y.motion_matrix())
            ));
            assert!(close66(
                &x.inverse().motion_matrix(),
                &xm.try_inverse().unwrap()
            ));
        }
    }

    /// Power is frame invariant: (X m)·(X* f) = m·f.
    #[test]
    fn power_is_invariant_under_transforms() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        for _ in 0..50 {
            let x = transform(&mut rng);
            let (m, f) = (motion(&mut rng), force(&mut rng));
            let p = x.apply_motion(&m).dot(&x.apply_force(&f));
            assert!((p - m.dot(&f)).abs() < 1e-12);
        }
    }

    /// v ×* = −(v ×)ᵀ, v × v = 0, and X (v × m) = (X v) × (X m).
    #[test]
    fn cross_operators() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let (v, m, f) = (motion(&mut rng), motion(&mut rng), force(&mut rng));
            assert!(close6(
                &v.cross_motion(&m).to_vector6(),
                &(v.cross_matrix() * m.to_vector6())
            ));
            assert!(close6(
                &v.cross_force(&f).to_vector6(),
                &(-v.cross_matrix().transpose() * f.to_vector6())
            ));
            assert!(v.cross_motion(&v).to_vector6().amax() < 1e-15);
            let x = transform(&mut rng);
            assert!(close6(
                &x.apply_motion(&v.cross_motion(&m)).to_vector6(),
                &x.apply_motion(&v)
                    .cross_motion(&x.apply_motion(&m))
                    .to_vector6()
            ));
        }
    }
}
