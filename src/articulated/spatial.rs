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
//! - [`RigidInertia`] (mass, first moment h = m c, rotational inertia about the origin) and
//!   the general symmetric [`ArticulatedInertia`] that the articulated-body algorithm builds.
//!
//! Every vector is stored angular part first, as in the book.

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

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

    /// `Xᵀ I X` for a symmetric 6×6 inertia `I` given in B: the same inertia expressed in A
    /// (A's articulated inertia gets its child's this way), in the factored form: rotate the
    /// blocks with E, then shift them by r. The symmetric blocks are computed on and above
    /// the diagonal only, which also keeps them exactly symmetric.
    #[inline]
    pub fn inertia_to_parent(&self, inertia: &ArticulatedInertia) -> ArticulatedInertia {
        let e = &self.rot;
        let a = congruence_symmetric(e, &inertia.ang_ang);
        let c = congruence_symmetric(e, &inertia.lin_lin);
        let b = e.tr_mul(&(inertia.ang_lin * e));
        // With T = [1 0; −r× 1]: Tᵀ [A B; Bᵀ C] T = [A − B r× + r× Bᵀ − r× C r×, B + r× C; ·, C].
        // W = r× C column by column; r× C r× = W r× is symmetric, so the upper left block is
        // A − (N r×) − (N r×)ᵀ with N = B + W/2 (one product with r× instead of two).
        let r = &self.trans;
        let w = Matrix3::from_columns(&[
            r.cross(&c.column(0)),
            r.cross(&c.column(1)),
            r.cross(&c.column(2)),
        ]);
        let n = b + w * 0.5;
        // Row i of N r× is (nᵢ × r)ᵀ, nᵢ the i-th row of N.
        let row = |i: usize| n.row(i).transpose().cross(r);
        let (n0, n1, n2) = (row(0), row(1), row(2));
        let ang_ang = Matrix3::new(
            a.m11 - 2.0 * n0.x,
            a.m12 - n0.y - n1.x,
            a.m13 - n0.z - n2.x,
            a.m12 - n0.y - n1.x,
            a.m22 - 2.0 * n1.y,
            a.m23 - n1.z - n2.y,
            a.m13 - n0.z - n2.x,
            a.m23 - n1.z - n2.y,
            a.m33 - 2.0 * n2.z,
        );
        ArticulatedInertia {
            ang_ang,
            ang_lin: b + w,
            lin_lin: c,
        }
    }
}

/// Eᵀ S E for a symmetric S: the six entries on and above the diagonal, mirrored.
#[inline]
fn congruence_symmetric(e: &Matrix3<f64>, s: &Matrix3<f64>) -> Matrix3<f64> {
    let se = s * e;
    let d = |i: usize, j: usize| e.column(i).dot(&se.column(j));
    let (m01, m02, m12) = (d(0, 1), d(0, 2), d(1, 2));
    Matrix3::new(d(0, 0), m01, m02, m01, d(1, 1), m12, m02, m12, d(2, 2))
}

/// The spatial inertia of one rigid body about a frame origin O (in that frame's axes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidInertia {
    /// Mass m (kg).
    pub mass: f64,
    /// First moment h = m c, c the centre of mass from O (kg·m).
    pub first_moment: Vector3<f64>,
    /// Rotational inertia about O (kg·m²): `Ī_c + m [c]×[c]×ᵀ`.
    pub rot_inertia: Matrix3<f64>,
}

impl RigidInertia {
    /// From the mass, the centre of mass `c` from O and the inertia `inertia_about_com` about
    /// the centre of mass (all in the frame's axes).
    pub fn new(mass: f64, c: Vector3<f64>, inertia_about_com: Matrix3<f64>) -> Self {
        let cx = skew(&c);
        Self {
            mass,
            first_moment: c * mass,
            rot_inertia: inertia_about_com - cx * cx * mass,
        }
    }

    /// The momentum `I v`.
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        Force::new(
            self.rot_inertia * v.ang + self.first_moment.cross(&v.lin),
            v.lin * self.mass - self.first_moment.cross(&v.ang),
        )
    }

    /// Kinetic energy ½ vᵀ I v (J).
    #[inline]
    pub fn kinetic_energy(&self, v: &Motion) -> f64 {
        0.5 * v.dot(&self.mul_motion(v))
    }

    /// As a general (articulated) inertia.
    #[inline]
    pub fn to_articulated(&self) -> ArticulatedInertia {
        let hx = skew(&self.first_moment);
        ArticulatedInertia {
            ang_ang: self.rot_inertia,
            ang_lin: hx,
            lin_lin: Matrix3::identity() * self.mass,
        }
    }

    /// The 6×6 matrix `[Ī_O h×; h×ᵀ m 1]` (for tests and references).
    pub fn matrix(&self) -> Matrix6<f64> {
        self.to_articulated().matrix()
    }
}

/// A symmetric 6×6 inertia `[A B; Bᵀ C]` acting on motions (angular part first): the
/// articulated inertias of the articulated-body algorithm (ang_ang = A, ang_lin = B,
/// lin_lin = C).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArticulatedInertia {
    /// A (kg·m²), symmetric.
    pub ang_ang: Matrix3<f64>,
    /// B (kg·m).
    pub ang_lin: Matrix3<f64>,
    /// C (kg), symmetric.
    pub lin_lin: Matrix3<f64>,
}

impl Default for ArticulatedInertia {
    fn default() -> Self {
        Self::zero()
    }
}

impl ArticulatedInertia {
    /// The zero inertia.
    pub fn zero() -> Self {
        Self {
            ang_ang: Matrix3::zeros(),
            ang_lin: Matrix3::zeros(),
            lin_lin: Matrix3::zeros(),
        }
    }

    /// `I v`.
    #[inline]
    pub fn mul_motion(&self, v: &Motion) -> Force {
        Force::new(
            self.ang_ang * v.ang + self.ang_lin * v.lin,
            self.ang_lin.tr_mul(&v.ang) + self.lin_lin * v.lin,
        )
    }

    /// `self += other`.
    #[inline]
    pub fn add_assign(&mut self, other: &ArticulatedInertia) {
        self.ang_ang += other.ang_ang;
        self.ang_lin += other.ang_lin;
        self.lin_lin += other.lin_lin;
    }

    /// `self −= s · u uᵀ` for a force-like column u (`u` = I S, the rank-one update of the
    /// articulated-body algorithm).
    #[inline]
    pub fn sub_outer(&mut self, u: &Force, w: &Force, s: f64) {
        // Symmetric when u == w; the general form serves the multi-degree-of-freedom joints.
        self.ang_ang -= u.ang * w.ang.transpose() * s;
        self.ang_lin -= u.ang * w.lin.transpose() * s;
        self.lin_lin -= u.lin * w.lin.transpose() * s;
    }

    /// `self −= s · u uᵀ`, the symmetric rank-one update of a joint with one degree of
    /// freedom: the symmetric blocks on and above the diagonal only, mirrored.
    #[inline]
    pub fn sub_outer_symmetric(&mut self, u: &Force, s: f64) {
        let (ua, ul) = (&u.ang, &u.lin);
        let (wa, wl) = (ua * s, ul * s);
        self.ang_lin -= ua * wl.transpose();
        sub_symmetric_outer(&mut self.ang_ang, ua, &wa);
        sub_symmetric_outer(&mut self.lin_lin, ul, &wl);
    }

    /// The 6×6 matrix.
    pub fn matrix(&self) -> Matrix6<f64> {
        let mut m = Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.ang_ang);
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&self.ang_lin);
        m.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&self.ang_lin.transpose());
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.lin_lin);
        m
    }
}

/// `m −= u wᵀ` for w parallel to u, on and above the diagonal, mirrored.
#[inline]
fn sub_symmetric_outer(m: &mut Matrix3<f64>, u: &Vector3<f64>, w: &Vector3<f64>) {
    let (m01, m02, m12) = (m.m12 - u.x * w.y, m.m13 - u.x * w.z, m.m23 - u.y * w.z);
    *m = Matrix3::new(
        m.m11 - u.x * w.x,
        m01,
        m02,
        m01,
        m.m22 - u.y * w.y,
        m12,
        m02,
        m12,
        m.m33 - u.z * w.z,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, SymmetricEigen};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn v3(rng: &mut ChaCha8Rng) -> Vector3<f64> {
        Vector3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    }

    fn motion(rng: &mut ChaCha8Rng) -> Motion {
        Motion::new(v3(rng), v3(rng))
    }

    fn force(rng: &mut ChaCha8Rng) -> Force {
        Force::new(v3(rng), v3(rng))
    }

    fn transform(rng: &mut ChaCha8Rng) -> Transform {
        Transform {
            rot: *Rotation3::from_scaled_axis(v3(rng) * 2.0).matrix(),
            trans: v3(rng),
        }
    }

    fn close6(a: &Vector6<f64>, b: &Vector6<f64>) -> bool {
        (a - b).amax() < 1e-12 * (1.0 + b.amax())
    }

    fn close66(a: &Matrix6<f64>, b: &Matrix6<f64>) -> bool {
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

    /// The spatial inertia is symmetric positive definite, its kinetic energy is
    /// ½ m v_c² + ½ ωᵀ Ī_c ω, and the factored Xᵀ I X equals the matrix product.
    #[test]
    fn inertia_identities() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..50 {
            let c = v3(&mut rng);
            let a = Matrix3::from_fn(|_, _| rng.random_range(-1.0..1.0));
            let ic = a * a.transpose() + Matrix3::identity() * 0.1;
            let m = 1.3;
            let i = RigidInertia::new(m, c, ic);
            let im = i.matrix();
            assert!(close66(&im, &im.transpose()));
            assert!(SymmetricEigen::new(im).eigenvalues.min() > 0.0);
            let v = motion(&mut rng);
            let v_com = v.lin + v.ang.cross(&c);
            let ke = 0.5 * m * v_com.norm_squared() + 0.5 * v.ang.dot(&(ic * v.ang));
            assert!((i.kinetic_energy(&v) - ke).abs() < 1e-12);
            assert!(close6(
                &i.mul_motion(&v).to_vector6(),
                &(im * v.to_vector6())
            ));
            let x = transform(&mut rng);
            let moved = x.inertia_to_parent(&i.to_articulated()).matrix();
            let xm = x.motion_matrix();
            assert!(close66(&moved, &(xm.transpose() * im * xm)));
        }
    }
}
