//! Joint models in reduced coordinates: what each joint's coordinates q (position) and
//! velocities q̇ mean, the joint transform X_J(q), the motion subspace S(q) and the velocity
//! product term c_J = S̊ q̇ (Featherstone's `jcalc`, RBDA §4.4).
//!
//! A joint connects its *predecessor frame* F_p (fixed in the parent link) to its
//! *successor frame* F_s (the child's link frame). At q = q₀ ([`JointType::neutral_q`]) the
//! two coincide. S, v_J = S q̇ and c_J are expressed in F_s; c_J is the rate of the
//! coordinates of S q̇ in F_s with q̈ = 0 (the apparent derivative).
//!
//! | joint        | q (nq)                         | q̇ (nv)                    |
//! |--------------|--------------------------------|---------------------------|
//! | revolute     | angle about `axis` (1)         | angle rate (1)            |
//! | prismatic    | travel along `axis` (1)        | its rate (1)              |
//! | spherical    | unit quaternion F_p→F_s, w x y z (4) | ω in F_s (3)        |
//! | universal    | angles about `axis1` (in F_p), then `axis2` (in F_s) (2) | rates (2) |
//! | cylindrical  | angle about and travel along `axis` (2) | rates (2)        |
//! | planar       | angle about `normal`, travel along two in-plane axes u, w of F_p (3) | rates (3) |
//! | free         | origin of F_s in F_p (3), quaternion (4) (7) | ω and v of F_s's origin, in F_s (6) |
//! | fixed        | none (0)                       | none (0)                  |
//!
//! The quaternions of q are unit in exact arithmetic; [`JointType::calc`] normalises them
//! before use, and the integrators renormalise them after each step.

use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};

use super::spatial::{Motion, Transform};

/// Most degrees of freedom of one joint.
pub const MAX_DOF: usize = 6;

/// A joint type with its axes (unit vectors; see the module table for the frames).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointType {
    /// Rotation about `axis`.
    Revolute {
        /// Unit axis (F_p = F_s coordinates: it does not move).
        axis: Vector3<f64>,
    },
    /// Translation along `axis`.
    Prismatic {
        /// Unit axis.
        axis: Vector3<f64>,
    },
    /// Any rotation about the common origin (ball joint).
    Spherical,
    /// Rotation about `axis1` (fixed in F_p), then about `axis2` (fixed in F_s) (Hooke joint).
    Universal {
        /// First axis, in F_p.
        axis1: Vector3<f64>,
        /// Second axis, in F_s.
        axis2: Vector3<f64>,
    },
    /// Rotation about and translation along `axis`.
    Cylindrical {
        /// Unit axis.
        axis: Vector3<f64>,
    },
    /// Translation in the plane ⊥ `normal` and rotation about `normal`.
    Planar {
        /// Unit normal of the plane.
        normal: Vector3<f64>,
    },
    /// No constraint (six degrees of freedom; the root of a free-floating body).
    Free,
    /// No relative motion.
    Fixed,
}

/// What [`JointType::calc`] returns: X_J, S, v_J and c_J at one (q, q̇).
#[derive(Clone, Copy, Debug, Default)]
pub struct JointCalc {
    /// F_s_X_F_p.
    pub x_j: Transform,
    /// The first `dof` columns of S (in F_s).
    pub s: [Motion; MAX_DOF],
    /// Number of degrees of freedom (nv).
    pub dof: usize,
    /// v_J = S q̇.
    pub v_j: Motion,
    /// c_J = S̊ q̇.
    pub c_j: Motion,
}

/// The rotation matrix of a rotation by `angle` about the unit `axis` (Rodrigues).
#[inline]
pub fn axis_angle_matrix(axis: &Vector3<f64>, angle: f64) -> Matrix3<f64> {
    let (s, c) = angle.sin_cos();
    let t = 1.0 - c;
    let (x, y, z) = (axis.x, axis.y, axis.z);
    // I cos + [a]× sin + a aᵀ (1 − cos), written out.
    Matrix3::new(
        t * x * x + c,
        t * x * y - s * z,
        t * x * z + s * y,
        t * x * y + s * z,
        t * y * y + c,
        t * y * z - s * x,
        t * x * z - s * y,
        t * y * z + s * x,
        t * z * z + c,
    )
}

/// Two unit vectors u, w with (u, w, n) a right-handed orthonormal basis.
pub fn plane_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let helper = if n.x.abs() < 0.6 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u = (helper - n * helper.dot(n)).normalize();
    // w = n × u completes the right-handed basis: u × w = u × (n × u) = n.
    let w = n.cross(&u);
    (u, w)
}

/// The rotation matrix of the quaternion stored as w, x, y, z in `q` (normalised first).
#[inline]
pub fn quaternion_matrix(q: &[f64]) -> Matrix3<f64> {
    unit_quaternion(q).to_rotation_matrix().into_inner()
}

/// The unit quaternion stored as w, x, y, z in `q` (normalised).
#[inline]
pub fn unit_quaternion(q: &[f64]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]))
}

/// q̇ of a quaternion (w, x, y, z) for the angular velocity ω in the rotated frame:
/// Q̇ = ½ Q ⊗ (0, ω).
#[inline]
fn quaternion_rate(q: &[f64], w: &Vector3<f64>, out: &mut [f64]) {
    let (qw, qv) = (q[0], Vector3::new(q[1], q[2], q[3]));
    let s = -qv.dot(w);
    let v = w * qw + qv.cross(w);
    out[0] = 0.5 * s;
    out[1] = 0.5 * v.x;
    out[2] = 0.5 * v.y;
    out[3] = 0.5 * v.z;
}

/// Q ← Q ⊗ exp(ω h / 2), normalised: the exact rotation by the body angular velocity ω over h.
#[inline]
fn quaternion_advance(q: &mut [f64], w: &Vector3<f64>, h: f64) {
    let d = UnitQuaternion::from_scaled_axis(w * h);
    let r = unit_quaternion(q) * d;
    q[0] = r.w;
    q[1] = r.i;
    q[2] = r.j;
    q[3] = r.k;
}

/// Normalises the quaternion stored in `q[..4]`.
#[inline]
fn quaternion_normalise(q: &mut [f64]) {
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    for x in &mut q[..4] {
        *x /= n;
    }
}

impl JointType {
    /// Number of position coordinates nq.
    #[inline]
    pub fn nq(&self) -> usize {
        match self {
            JointType::Revolute { .. } | JointType::Prismatic { .. } => 1,
            JointType::Spherical => 4,
            JointType::Universal { .. } | JointType::Cylindrical { .. } => 2,
            JointType::Planar { .. } => 3,
            JointType::Free => 7,
            JointType::Fixed => 0,
        }
    }

    /// Number of velocity coordinates (degrees of freedom) nv.
    #[inline]
    pub fn nv(&self) -> usize {
        match self {
            JointType::Revolute { .. } | JointType::Prismatic { .. } => 1,
            JointType::Spherical => 3,
            JointType::Universal { .. } | JointType::Cylindrical { .. } => 2,
            JointType::Planar { .. } => 3,
            JointType::Free => 6,
            JointType::Fixed => 0,
        }
    }

    /// A short name for messages.
    pub fn name(&self) -> &'static str {
        match self {
            JointType::Revolute { .. } => "revolute",
            JointType::Prismatic { .. } => "prismatic",
            JointType::Spherical => "spherical",
            JointType::Universal { .. } => "universal",
            JointType::Cylindrical { .. } => "cylindrical",
            JointType::Planar { .. } => "planar",
            JointType::Free => "free",
            JointType::Fixed => "fixed",
        }
    }

    /// Writes the neutral coordinates q₀ (F_s = F_p) into `q` (length nq).
    pub fn neutral_q(&self, q: &mut [f64]) {
        q.fill(0.0);
        match self {
            JointType::Spherical => q[0] = 1.0,
            JointType::Free => q[3] = 1.0,
            _ => {}
        }
    }

    /// X_J, S, v_J and c_J at coordinates `q` (nq) and velocities `qd` (nv).
    #[inline]
    pub fn calc(&self, q: &[f64], qd: &[f64], out: &mut JointCalc) {
        let zero = Vector3::zeros();
        out.dof = self.nv();
        out.c_j = Motion::zero();
        match *self {
            JointType::Revolute { axis } => {
                out.x_j = Transform {
                    rot: axis_angle_matrix(&axis, q[0]).transpose(),
                    trans: zero,
                };
                out.s[0] = Motion::new(axis, zero);
            }
            JointType::Prismatic { axis } => {
                out.x_j = Transform {
                    rot: Matrix3::identity(),
                    trans: axis * q[0],
                };
                out.s[0] = Motion::new(zero, axis);
            }
            JointType::Spherical => {
                out.x_j = Transform {
                    rot: quaternion_matrix(q).transpose(),
                    trans: zero,
                };
                for k in 0..3 {
                    out.s[k] = Motion::new(Vector3::ith(k, 1.0), zero);
                }
            }
            JointType::Universal { axis1, axis2 } => universal(axis1, axis2, q, qd, out),
            JointType::Cylindrical { axis } => {
                out.x_j = Transform {
                    rot: axis_angle_matrix(&axis, q[0]).transpose(),
                    trans: axis * q[1],
                };
                out.s[0] = Motion::new(axis, zero);
                out.s[1] = Motion::new(zero, axis);
            }
            JointType::Planar { normal } => planar(normal, q, qd, out),
            JointType::Free => {
                out.x_j = Transform {
                    rot: quaternion_matrix(&q[3..7]).transpose(),
                    trans: Vector3::new(q[0], q[1], q[2]),
                };
                for k in 0..3 {
                    out.s[k] = Motion::new(Vector3::ith(k, 1.0), zero);
                    out.s[k + 3] = Motion::new(zero, Vector3::ith(k, 1.0));
                }
            }
            JointType::Fixed => {
                out.x_j = Transform::identity();
            }
        }
        let mut v = Motion::zero();
        for (s, qdk) in out.s.iter().zip(qd).take(out.dof) {
            v += *s * *qdk;
        }
        out.v_j = v;
    }

    /// q̇ (nq) from the velocities `qd` (nv) at `q`.
    #[inline]
    pub fn q_rate(&self, q: &[f64], qd: &[f64], out: &mut [f64]) {
        match self {
            JointType::Spherical => {
                quaternion_rate(q, &Vector3::new(qd[0], qd[1], qd[2]), out);
            }
            JointType::Free => {
                let r = quaternion_matrix(&q[3..7]);
                let v = r * Vector3::new(qd[3], qd[4], qd[5]);
                out[0] = v.x;
                out[1] = v.y;
                out[2] = v.z;
                quaternion_rate(&q[3..7], &Vector3::new(qd[0], qd[1], qd[2]), &mut out[3..7]);
            }
            _ => out[..self.nq()].copy_from_slice(&qd[..self.nv()]),
        }
    }

    /// q ← q advanced by the velocities `qd` over `h` (the position update of semi-implicit
    /// Euler): exact rotations for the quaternions.
    #[inline]
    pub fn advance_q(&self, q: &mut [f64], qd: &[f64], h: f64) {
        match self {
            JointType::Spherical => {
                quaternion_advance(q, &Vector3::new(qd[0], qd[1], qd[2]), h);
            }
            JointType::Free => {
                let v = quaternion_matrix(&q[3..7]) * Vector3::new(qd[3], qd[4], qd[5]);
                for k in 0..3 {
                    q[k] += v[k] * h;
                }
                quaternion_advance(&mut q[3..7], &Vector3::new(qd[0], qd[1], qd[2]), h);
            }
            _ => {
                for (x, v) in q.iter_mut().zip(qd) {
                    *x += v * h;
                }
            }
        }
    }

    /// Renormalises the quaternion part of `q`, if any.
    #[inline]
    pub fn normalise_q(&self, q: &mut [f64]) {
        match self {
            JointType::Spherical => quaternion_normalise(q),
            JointType::Free => quaternion_normalise(&mut q[3..7]),
            _ => {}
        }
    }

    /// The velocities q̇ (nv) that best produce the joint motion `v_rel` (in F_s) at `q`:
    /// the least-squares solution of S q̇ = v_rel (exact when `v_rel` is a motion the joint
    /// allows). Used to map maximal-coordinate velocities onto the tree.
    #[allow(clippy::needless_range_loop)] // small dense matrices read best with indices
    pub fn velocity_from_motion(&self, q: &[f64], v_rel: &Motion, out: &mut [f64]) {
        let n = self.nv();
        let mut c = JointCalc::default();
        let zeros = [0.0; MAX_DOF];
        self.calc(q, &zeros, &mut c);
        let mut a = [[0.0; MAX_DOF]; MAX_DOF];
        let mut b = [0.0; MAX_DOF];
        let v6 = v_rel.to_vector6();
        for i in 0..n {
            let si = c.s[i].to_vector6();
            b[i] = si.dot(&v6);
            for j in 0..n {
                a[i][j] = si.dot(&c.s[j].to_vector6());
            }
        }
        if invert_spd(&mut a, n).is_some() {
            for i in 0..n {
                out[i] = (0..n).map(|j| a[i][j] * b[j]).sum();
            }
        }
    }
}

/// [`JointType::calc`] of a universal joint: X_J, S (whose first column turns with the
/// second angle) and c_J.
#[inline]
fn universal(axis1: Vector3<f64>, axis2: Vector3<f64>, q: &[f64], qd: &[f64], out: &mut JointCalc) {
    let zero = Vector3::zeros();
    let r2 = axis_angle_matrix(&axis2, q[1]);
    let r = axis_angle_matrix(&axis1, q[0]) * r2;
    out.x_j = Transform {
        rot: r.transpose(),
        trans: zero,
    };
    let s1 = r2.tr_mul(&axis1);
    out.s[0] = Motion::new(s1, zero);
    out.s[1] = Motion::new(axis2, zero);
    out.c_j = Motion::new(-axis2.cross(&s1) * (qd[0] * qd[1]), zero);
}

/// [`JointType::calc`] of a planar joint: X_J, S (whose sliding columns turn with the angle)
/// and c_J.
#[inline]
fn planar(normal: Vector3<f64>, q: &[f64], qd: &[f64], out: &mut JointCalc) {
    let zero = Vector3::zeros();
    let (u, w) = plane_basis(&normal);
    let e = axis_angle_matrix(&normal, q[0]).transpose();
    out.x_j = Transform {
        rot: e,
        trans: u * q[1] + w * q[2],
    };
    let (eu, ew) = (e * u, e * w);
    out.s[0] = Motion::new(normal, zero);
    out.s[1] = Motion::new(zero, eu);
    out.s[2] = Motion::new(zero, ew);
    out.c_j = Motion::new(zero, -normal.cross(&(eu * qd[1] + ew * qd[2])) * qd[0]);
}

/// Inverts the leading n×n block of a symmetric positive definite matrix in place
/// (Gauss–Jordan without pivoting, which is stable for SPD matrices). `None` if a pivot is
/// not positive (the matrix is singular or indefinite).
#[allow(clippy::needless_range_loop)] // small dense matrices read best with indices
pub fn invert_spd(a: &mut [[f64; MAX_DOF]; MAX_DOF], n: usize) -> Option<()> {
    for k in 0..n {
        let p = a[k][k];
        if !(p.is_finite() && p > 0.0) {
            return None;
        }
        let inv = 1.0 / p;
        a[k][k] = 1.0;
        for j in 0..n {
            a[k][j] *= inv;
        }
        for i in 0..n {
            if i != k {
                let f = a[i][k];
                a[i][k] = 0.0;
                for j in 0..n {
                    a[i][j] -= f * a[k][j];
                }
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn unit(rng: &mut ChaCha8Rng) -> Vector3<f64> {
        Vector3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize()
    }

    /// One of each joint type with random axes.
    pub(crate) fn all_types(rng: &mut ChaCha8Rng) -> Vec<JointType> {
        vec![
            JointType::Revolute { axis: unit(rng) },
            JointType::Prismatic { axis: unit(rng) },
            JointType::Spherical,
            JointType::Universal {
                axis1: unit(rng),
                axis2: unit(rng),
            },
            JointType::Cylindrical { axis: unit(rng) },
            JointType::Planar { normal: unit(rng) },
            JointType::Free,
            JointType::Fixed,
        ]
    }

    /// Random coordinates: neutral plus a random offset, quaternions renormalised.
    pub(crate) fn random_q(j: &JointType, rng: &mut ChaCha8Rng, q: &mut [f64]) {
        j.neutral_q(q);
        for x in q.iter_mut() {
            *x += rng.random_range(-0.8..0.8);
        }
        j.normalise_q(q);
    }

    /// The successor frame's pose in F_p: (rotation F_p_R_F_s, origin in F_p).
    fn pose(x: &Transform) -> (Matrix3<f64>, Vector3<f64>) {
        (x.rot.transpose(), x.trans)
    }

    /// S q̇ is the velocity of F_s relative to F_p (finite differences of X_J along
    /// q(t) = q + t q̇ through the joint's own q̇ map), and c_J is the rate of the coordinates
    /// of S q̇ in F_s (finite differences of v_J along the motion with q̈ = 0).
    #[test]
    fn motion_subspace_and_bias_match_finite_differences() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for _ in 0..20 {
            for j in all_types(&mut rng) {
                let (nq, nv) = (j.nq(), j.nv());
                let mut q = [0.0; 7];
                random_q(&j, &mut rng, &mut q[..nq]);
                let qd: Vec<f64> = (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect();
                // q(t) integrated with the joint's own q̇ map (RK4, tiny step).
                let at = |t: f64| {
                    let mut qt = q;
                    let steps = 8;
                    let h = t / steps as f64;
                    for _ in 0..steps {
                        let f = |qq: &[f64; 7]| {
                            let mut r = [0.0; 7];
                            j.q_rate(&qq[..nq], &qd, &mut r[..nq]);
                            r
                        };
                        let add = |a: &[f64; 7], k: &[f64; 7], s: f64| {
                            let mut r = *a;
                            for i in 0..7 {
                                r[i] += k[i] * s;
                            }
                            r
                        };
                        let k1 = f(&qt);
                        let k2 = f(&add(&qt, &k1, h / 2.0));
                        let k3 = f(&add(&qt, &k2, h / 2.0));
                        let k4 = f(&add(&qt, &k3, h));
                        for i in 0..7 {
                            qt[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                        }
                    }
                    let mut c = JointCalc::default();
                    j.calc(&qt[..nq], &qd, &mut c);
                    c
                };
                let eps = 1e-5;
                let (c0, cp, cm) = (at(0.0), at(eps), at(-eps));
                let (r0, _) = pose(&c0.x_j);
                let (rp, pp) = pose(&cp.x_j);
                let (rm, pm) = pose(&cm.x_j);
                // Angular velocity in F_s: R₀ᵀ Ṙ = [ω]×; origin velocity in F_s: R₀ᵀ ṗ.
                let rdot = (rp - rm) / (2.0 * eps);
                let wx = r0.transpose() * rdot;
                let w = Vector3::new(wx[(2, 1)], wx[(0, 2)], wx[(1, 0)]);
                let v = r0.transpose() * (pp - pm) / (2.0 * eps);
                let tol = 1e-7;
                assert!(
                    (w - c0.v_j.ang).amax() < tol,
                    "{}: ω {w} vs {}",
                    j.name(),
                    c0.v_j.ang
                );
                assert!(
                    (v - c0.v_j.lin).amax() < tol,
                    "{}: v {v} vs {}",
                    j.name(),
                    c0.v_j.lin
                );
                let cj = (cp.v_j - cm.v_j) * (1.0 / (2.0 * eps));
                assert!(
                    (cj.to_vector6() - c0.c_j.to_vector6()).amax() < tol,
                    "{}: c_J {:?} vs {:?}",
                    j.name(),
                    cj,
                    c0.c_j
                );
            }
        }
    }

    /// `velocity_from_motion` inverts S q̇ and `advance_q` agrees with `q_rate` to first order.
    #[test]
    fn velocity_projection_and_position_update() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        for j in all_types(&mut rng) {
            let (nq, nv) = (j.nq(), j.nv());
            let mut q = [0.0; 7];
            random_q(&j, &mut rng, &mut q[..nq]);
            let qd: Vec<f64> = (0..nv).map(|_| rng.random_range(-1.0..1.0)).collect();
            let mut c = JointCalc::default();
            j.calc(&q[..nq], &qd, &mut c);
            let mut back = [0.0; 6];
            j.velocity_from_motion(&q[..nq], &c.v_j, &mut back[..nv]);
            for k in 0..nv {
                assert!((back[k] - qd[k]).abs() < 1e-12, "{}", j.name());
            }
            let h = 1e-6;
            let mut q1 = q;
            j.advance_q(&mut q1[..nq], &qd, h);
            let mut rate = [0.0; 7];
            j.q_rate(&q[..nq], &qd, &mut rate[..nq]);
            for k in 0..nq {
                assert!(((q1[k] - q[k]) / h - rate[k]).abs() < 1e-5, "{}", j.name());
            }
        }
    }

    #[test]
    fn plane_basis_is_right_handed_and_orthonormal() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let n = unit(&mut rng);
            let (u, w) = plane_basis(&n);
            assert!((u.norm() - 1.0).abs() < 1e-12 && (w.norm() - 1.0).abs() < 1e-12);
            assert!(u.dot(&n).abs() < 1e-12 && w.dot(&n).abs() < 1e-12);
            assert!((u.cross(&w) - n).amax() < 1e-12);
        }
    }
}
