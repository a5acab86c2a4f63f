//! Spatial inertias (Featherstone, RBDA §2.13): [`RigidInertia`] (mass, first moment h = m c,
//! rotational inertia about the frame origin) and the general symmetric
//! [`ArticulatedInertia`] that the articulated-body algorithm builds, with the transform
//! `Xᵀ I X` that moves an articulated inertia to the parent's frame
//! ([`Transform::inertia_to_parent`]): the most costly operation of the algorithm, so it
//! computes symmetric blocks once (and the pieces that the algorithm's written-out step at
//! a joint about a link axis, `aba::about_axis`, uses).

use nalgebra::{Matrix3, Matrix6, Vector3};

use super::spatial::{skew, Force, Motion, Transform};

impl Transform {
    /// `Xᵀ I X` for a symmetric 6×6 inertia `I` given in B: the same inertia expressed in A
    /// (A's articulated inertia gets its child's this way), in the factored form: rotate the
    /// blocks with E, then shift them by r. The symmetric blocks are computed on and above
    /// the diagonal only, which also keeps them exactly symmetric.
    #[inline]
    pub fn inertia_to_parent(&self, inertia: &ArticulatedInertia) -> ArticulatedInertia {
        let mut moved = ArticulatedInertia::zero();
        self.add_inertia_to_parent(inertia, &mut moved);
        moved
    }

    /// `parent += Xᵀ I X` ([`Self::inertia_to_parent`] added in place, the step of the
    /// articulated-body algorithm).
    #[inline]
    pub fn add_inertia_to_parent(
        &self,
        inertia: &ArticulatedInertia,
        parent: &mut ArticulatedInertia,
    ) {
        let e = &self.rot;
        let rotated = ArticulatedInertia {
            ang_ang: congruence_symmetric(e, &inertia.ang_ang),
            ang_lin: e.tr_mul(&(inertia.ang_lin * e)),
            lin_lin: congruence_symmetric(e, &inertia.lin_lin),
        };
        add_shifted(&rotated, &self.trans, parent);
    }
}

/// `target += Tᵀ I T` with T = [1 0; −r× 1]: the inertia `I` about a point r moved to the
/// origin (axes unchanged), `[A − B r× + r× Bᵀ − r× C r×, B + r× C; ·, C]`.
#[inline]
pub(super) fn add_shifted(
    inertia: &ArticulatedInertia,
    r: &Vector3<f64>,
    target: &mut ArticulatedInertia,
) {
    let (a, b, c) = (&inertia.ang_ang, &inertia.ang_lin, &inertia.lin_lin);
    // W = r× C column by column; r× C r× = W r× is symmetric, so the upper left block is
    // A − (N r×) − (N r×)ᵀ with N = B + W/2 (one product with r× instead of two).
    let w = Matrix3::from_columns(&[
        r.cross(&c.column(0)),
        r.cross(&c.column(1)),
        r.cross(&c.column(2)),
    ]);
    let n = b + w * 0.5;
    // Row i of N r× is (nᵢ × r)ᵀ, nᵢ the i-th row of N.
    let row = |i: usize| n.row(i).transpose().cross(r);
    let (n0, n1, n2) = (row(0), row(1), row(2));
    let (a01, a02, a12) = (
        a.m12 - n0.y - n1.x,
        a.m13 - n0.z - n2.x,
        a.m23 - n1.z - n2.y,
    );
    let t = &mut target.ang_ang;
    t.m11 += a.m11 - 2.0 * n0.x;
    t.m22 += a.m22 - 2.0 * n1.y;
    t.m33 += a.m33 - 2.0 * n2.z;
    t.m12 += a01;
    t.m21 += a01;
    t.m13 += a02;
    t.m31 += a02;
    t.m23 += a12;
    t.m32 += a12;
    target.ang_lin += b + w;
    target.lin_lin += c;
}

/// [`add_shifted`] for r = ρ e_M along the coordinate axis `M` (the link offset of a chain
/// whose links lie along a frame axis): r× has two entries, so W = r× C is two rows of C
/// and the upper left block needs six entries of N = B + W/2.
#[inline(always)]
pub(super) fn add_shifted_along<const M: usize>(
    inertia: &ArticulatedInertia,
    rho: f64,
    target: &mut ArticulatedInertia,
) {
    let (p, q) = ((M + 1) % 3, (M + 2) % 3);
    // Column-major arrays (`x[col][row]`): indices known at compile time, no checks.
    let a = &inertia.ang_ang.data.0;
    let b = &inertia.ang_lin.data.0;
    let c = &inertia.lin_lin.data.0;
    // e_M × x = x_P e_Q − x_Q e_P: W's row M is zero, row P is −ρ C_Q·, row Q is ρ C_P·;
    // row i of N r× is ρ (N_iQ e_P − N_iP e_Q).
    let half = 0.5 * rho;
    let n_pq = b[q][p] - half * c[q][q];
    let n_qp = b[p][q] + half * c[p][p];
    let n_pp = b[p][p] - half * c[p][q];
    let n_qq = b[q][q] + half * c[q][p];
    let a_mp = a[p][M] - rho * b[q][M];
    let a_mq = a[q][M] + rho * b[p][M];
    let a_pq = a[q][p] + rho * (n_pp - n_qq);
    let t = &mut target.ang_ang.data.0;
    t[M][M] += a[M][M];
    t[p][p] += a[p][p] - 2.0 * rho * n_pq;
    t[q][q] += a[q][q] + 2.0 * rho * n_qp;
    t[p][M] += a_mp;
    t[M][p] += a_mp;
    t[q][M] += a_mq;
    t[M][q] += a_mq;
    t[q][p] += a_pq;
    t[p][q] += a_pq;
    let t = &mut target.ang_lin.data.0;
    for (tk, (bk, ck)) in t.iter_mut().zip(b.iter().zip(c)) {
        tk[M] += bk[M];
        tk[p] += bk[p] - rho * ck[q];
        tk[q] += bk[q] + rho * ck[p];
    }
    target.lin_lin += inertia.lin_lin;
}

/// Eᵀ S E for a symmetric S: the six entries on and above the diagonal, mirrored.
#[inline]
fn congruence_symmetric(e: &Matrix3<f64>, s: &Matrix3<f64>) -> Matrix3<f64> {
    let se = s * e;
    let d = |i: usize, j: usize| e.column(i).dot(&se.column(j));
    let (m01, m02, m12) = (d(0, 1), d(0, 2), d(1, 2));
    Matrix3::new(d(0, 0), m01, m02, m01, d(1, 1), m12, m02, m12, d(2, 2))
}

/// [`congruence_symmetric`] for a rotation E about the coordinate axis `K`: row and column
/// K of E are those of the identity (and not read), E mixes the other two coordinates only.
#[inline]
pub(super) fn congruence_symmetric_about_axis<const K: usize>(
    e: &Matrix3<f64>,
    s: &Matrix3<f64>,
) -> Matrix3<f64> {
    let (j, l) = ((K + 1) % 3, (K + 2) % 3);
    let (ejj, ejl, elj, ell) = (e[(j, j)], e[(j, l)], e[(l, j)], e[(l, l)]);
    let t = |q: usize, n: usize| s[(q, j)] * e[(j, n)] + s[(q, l)] * e[(l, n)];
    let (tjj, tjl, tll) = (t(j, j), t(j, l), t(l, l));
    let mut m = Matrix3::zeros();
    m[(K, K)] = s[(K, K)];
    m[(K, j)] = s[(K, j)] * ejj + s[(K, l)] * elj;
    m[(K, l)] = s[(K, j)] * ejl + s[(K, l)] * ell;
    m[(j, K)] = m[(K, j)];
    m[(l, K)] = m[(K, l)];
    m[(j, j)] = ejj * tjj + elj * t(l, j);
    m[(j, l)] = ejj * tjl + elj * tll;
    m[(l, j)] = m[(j, l)];
    m[(l, l)] = ejl * tjl + ell * tll;
    m
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
pub(crate) fn sub_symmetric_outer(m: &mut Matrix3<f64>, u: &Vector3<f64>, w: &Vector3<f64>) {
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
    use crate::articulated::spatial::tests::{close6, close66, force, motion, transform, v3};
    use nalgebra::{Rotation3, SymmetricEigen};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The shift along a coordinate axis equals the general shift.
    #[test]
    fn shift_along_an_axis_is_the_general_shift() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let mut ia = RigidInertia::new(
                0.7,
                v3(&mut rng),
                Matrix3::from_diagonal(&Vector3::new(0.3, 0.4, 0.5)),
            )
            .to_articulated();
            ia.sub_outer_symmetric(&force(&mut rng), 0.2);
            let start = RigidInertia::new(1.1, v3(&mut rng), Matrix3::identity()).to_articulated();
            let rho = rng.random_range(-1.0..1.0);
            let check = |m: usize, along: &ArticulatedInertia| {
                let mut general = start;
                add_shifted(&ia, &Vector3::ith(m, rho), &mut general);
                let diff = (along.matrix() - general.matrix()).amax();
                assert!(
                    diff < 1e-14 * (1.0 + general.matrix().amax()),
                    "axis {m}: {diff}"
                );
            };
            let mut along = start;
            add_shifted_along::<0>(&ia, rho, &mut along);
            check(0, &along);
            let mut along = start;
            add_shifted_along::<1>(&ia, rho, &mut along);
            check(1, &along);
            let mut along = start;
            add_shifted_along::<2>(&ia, rho, &mut along);
            check(2, &along);
        }
    }

    /// The spatial inertia is symmetric positive definite, its kinetic energy is
    /// ½ m v_c² + ½ ωᵀ Ī_c ω, and the factored Xᵀ I X equals the matrix product (in general
    /// and about each coordinate axis, for a general articulated inertia too).
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
            // Rotations about a coordinate axis (either sign) by the specialised form.
            let angle = rng.random_range(-3.0..3.0);
            let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
            let mut ia = i.to_articulated();
            ia.sub_outer_symmetric(&force(&mut rng), 0.3);
            let s = ia.lin_lin;
            let about =
                |k: usize| *Rotation3::from_scaled_axis(Vector3::ith(k, sign * angle)).matrix();
            let (e0, e1, e2) = (about(0), about(1), about(2));
            let close =
                |a: Matrix3<f64>, b: Matrix3<f64>| (a - b).amax() < 1e-12 * (1.0 + b.amax());
            assert!(close(
                congruence_symmetric_about_axis::<0>(&e0, &s),
                e0.transpose() * s * e0
            ));
            assert!(close(
                congruence_symmetric_about_axis::<1>(&e1, &s),
                e1.transpose() * s * e1
            ));
            assert!(close(
                congruence_symmetric_about_axis::<2>(&e2, &s),
                e2.transpose() * s * e2
            ));
        }
    }
}
