//! The articulated-body algorithm at a revolute joint about a coordinate axis e_K of its
//! link, X_T a translation (the hinges of chains whose bodies share their orientation),
//! written out. Two facts cut the products of the general forms:
//!
//! - X_up's rotation E turns about e_K: it mixes the other two coordinates only (passes 1
//!   and 3 move velocities and accelerations with it, and pass 1 the world poses);
//! - S = ±e_K (angular), and I^a S = 0: row and column K of I^a's angular block and row K of
//!   its coupling block are zero, so pass 2 neither forms nor rotates them, and the velocity
//!   product c = v × S q̇ (zero in the K components) meets a 5×5 block.

use nalgebra::{Matrix3, Vector3};

use super::{coordinate_rotation, Workspace};
use crate::articulated::inertia::{
    add_shifted, add_shifted_along, congruence_symmetric_about_axis, sub_symmetric_outer,
};
use crate::articulated::spatial::{ArticulatedInertia, Force, Motion, Transform};
use crate::articulated::tree::Link;

/// `E v` for a rotation E about the coordinate axis `K`.
#[inline]
fn rotate<const K: usize>(e: &Matrix3<f64>, v: &Vector3<f64>) -> Vector3<f64> {
    let (j, l) = ((K + 1) % 3, (K + 2) % 3);
    let mut out = *v;
    out[j] = e[(j, j)] * v[j] + e[(j, l)] * v[l];
    out[l] = e[(l, j)] * v[j] + e[(l, l)] * v[l];
    out
}

/// `Eᵀ v` for a rotation E about the coordinate axis `K`.
#[inline]
pub(super) fn rotate_back<const K: usize>(e: &Matrix3<f64>, v: &Vector3<f64>) -> Vector3<f64> {
    let (j, l) = ((K + 1) % 3, (K + 2) % 3);
    let mut out = *v;
    out[j] = e[(j, j)] * v[j] + e[(l, j)] * v[l];
    out[l] = e[(j, l)] * v[j] + e[(l, l)] * v[l];
    out
}

/// `X m` ([`Transform::apply_motion`]) for X's rotation about the coordinate axis `K`.
#[inline]
pub(super) fn apply_motion<const K: usize>(x: &Transform, m: &Motion) -> Motion {
    Motion::new(
        rotate::<K>(&x.rot, &m.ang),
        rotate::<K>(&x.rot, &(m.lin - x.trans.cross(&m.ang))),
    )
}

impl Workspace {
    /// Pass 1 at link `i`, revolute about `sign` e_K at angle `q` and rate `qd`.
    #[inline]
    pub(super) fn revolute_about_axis_kinematics<const K: usize>(
        &mut self,
        i: usize,
        link: &Link,
        sign: f64,
        q: f64,
        qd: f64,
        world_poses: bool,
    ) {
        let (j, l) = ((K + 1) % 3, (K + 2) % 3);
        let x_up = Transform {
            rot: coordinate_rotation(K, -sign * q),
            trans: link.parent_to_joint.trans,
        };
        // v_J = w e_K.
        let w = sign * qd;
        let mut v = match link.parent {
            Some(p) => apply_motion::<K>(&x_up, &self.v[p]),
            None => Motion::zero(),
        };
        v.ang[K] += w;
        if world_poses {
            self.x_base[i] = match link.parent {
                Some(p) => {
                    // E (parent's rotation): rows J and L mixed, row K kept.
                    let (e, base) = (&x_up.rot, &self.x_base[p]);
                    let mut rot = base.rot;
                    rot.set_row(
                        j,
                        &(base.rot.row(j) * e[(j, j)] + base.rot.row(l) * e[(j, l)]),
                    );
                    rot.set_row(
                        l,
                        &(base.rot.row(j) * e[(l, j)] + base.rot.row(l) * e[(l, l)]),
                    );
                    Transform {
                        rot,
                        trans: base.trans + base.rot.tr_mul(&x_up.trans),
                    }
                }
                None => x_up,
            };
        }
        // c = v × v_J = w (ω × e_K, v_O × e_K), and x × e_K = (x_L, −x_J) on (J, L).
        let mut c = Motion::zero();
        c.ang[j] = w * v.ang[l];
        c.ang[l] = -w * v.ang[j];
        c.lin[j] = w * v.lin[l];
        c.lin[l] = -w * v.lin[j];
        self.c[i] = c;
        self.h[i] = link.inertia.mul_motion(&v);
        self.v[i] = v;
        self.x_up[i] = x_up;
    }

    /// Pass 2 at link `i`, revolute about `sign` e_K: U, D⁻¹ and u for pass 3 and, for a
    /// link with a parent, I^a and p^a + I^a c added to the parent's in its frame. `None`
    /// if D is not positive.
    #[inline]
    pub(super) fn revolute_about_axis_backward<const K: usize>(
        &mut self,
        i: usize,
        sign: f64,
        tau: f64,
        parent: Option<usize>,
    ) -> Option<()> {
        let (before, from_i) = self.ia.split_at_mut(i);
        let ia = &from_i[0];
        // U = ±(A e_K, Bᵀ e_K) = ±(a, b), D = A_KK.
        let a: Vector3<f64> = ia.ang_ang.column(K).into();
        let b: Vector3<f64> = ia.ang_lin.row(K).transpose();
        let d = a[K];
        if !(d.is_finite() && d > 0.0) {
            return None;
        }
        let dinv = 1.0 / d;
        let p = self.pa[i];
        let u = tau - sign * p.ang[K];
        self.u_cols[i][0] = Force::new(a * sign, b * sign);
        self.dinv[i][0][0] = dinv;
        self.u[i][0] = u;
        let Some(parent) = parent else {
            return Some(());
        };
        let reduced = Reduced::<K>::of(ia, &a, &b, dinv);
        let x = &self.x_up[i];
        let (f_ang, f_lin) = reduced.bias(&p, &a, &b, sign * u * dinv, &self.c[i]);
        self.pa[parent] += force_to_parent::<K>(x, &f_ang, &f_lin);
        let rotated = reduced.rotated_back(&x.rot);
        let target = &mut before[parent];
        match self.offset_axis[i] {
            Some(0) => add_shifted_along::<0>(&rotated, x.trans[0], target),
            Some(1) => add_shifted_along::<1>(&rotated, x.trans[1], target),
            Some(_) => add_shifted_along::<2>(&rotated, x.trans[2], target),
            None => add_shifted(&rotated, &x.trans, target),
        }
        Some(())
    }
}

/// X* f for X's rotation E about the coordinate axis `K`: X* = [Eᵀ  r× Eᵀ; 0  Eᵀ] on the
/// force (`ang`, `lin`) of the child's frame.
#[inline(always)]
fn force_to_parent<const K: usize>(x: &Transform, ang: &Vector3<f64>, lin: &Vector3<f64>) -> Force {
    let e = &x.rot;
    let lin = rotate_back::<K>(e, lin);
    let ang = rotate_back::<K>(e, ang) + x.trans.cross(&lin);
    Force::new(ang, lin)
}

/// I^a = I^A − (a, b)(a, b)ᵀ/D at a revolute joint about e_K, where it is not zero: A's
/// block on J, L (the other two axes), B's rows J, L, and all of C.
struct Reduced<const K: usize> {
    a_jj: f64,
    a_jl: f64,
    a_ll: f64,
    b_j: Vector3<f64>,
    b_l: Vector3<f64>,
    c_a: Matrix3<f64>,
}

impl<const K: usize> Reduced<K> {
    /// I^a of `ia` (I^A) with U = ±(a, b) and D⁻¹ = `dinv`.
    #[inline(always)]
    fn of(ia: &ArticulatedInertia, a: &Vector3<f64>, b: &Vector3<f64>, dinv: f64) -> Self {
        let (j, l) = ((K + 1) % 3, (K + 2) % 3);
        let (am, bm, cm) = (&ia.ang_ang, &ia.ang_lin, &ia.lin_lin);
        let (wa, wb) = (a * dinv, b * dinv);
        let mut c_a = *cm;
        sub_symmetric_outer(&mut c_a, b, &wb);
        Self {
            a_jj: am[(j, j)] - a[j] * wa[j],
            a_jl: am[(j, l)] - a[j] * wa[l],
            a_ll: am[(l, l)] - a[l] * wa[l],
            b_j: bm.row(j).transpose() - wb * a[j],
            b_l: bm.row(l).transpose() - wb * a[l],
            c_a,
        }
    }

    /// p^a + I^a c (angular, linear), with p^a = p^A + U D⁻¹ u = `p` + (a, b) `g`; c's K
    /// components are zero (c = v × S q̇).
    #[inline(always)]
    fn bias(
        &self,
        p: &Force,
        a: &Vector3<f64>,
        b: &Vector3<f64>,
        g: f64,
        cv: &Motion,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let (j, l) = ((K + 1) % 3, (K + 2) % 3);
        let (cj, cl) = (cv.ang[j], cv.ang[l]);
        let mut f_ang = p.ang + a * g;
        f_ang[j] += self.a_jj * cj + self.a_jl * cl + self.b_j.dot(&cv.lin);
        f_ang[l] += self.a_jl * cj + self.a_ll * cl + self.b_l.dot(&cv.lin);
        let f_lin = p.lin + b * g + self.b_j * cj + self.b_l * cl + self.c_a * cv.lin;
        (f_ang, f_lin)
    }

    /// Eᵀ I^a E: A's J, L block by the 2×2 block G of E (T = A G, then Gᵀ T), B's rows J, L
    /// as Eᵀ (Eᵀ B) row by row, C by the symmetric form.
    #[inline(always)]
    fn rotated_back(&self, e: &Matrix3<f64>) -> ArticulatedInertia {
        let (j, l) = ((K + 1) % 3, (K + 2) % 3);
        let (a_jj, a_jl, a_ll) = (self.a_jj, self.a_jl, self.a_ll);
        let (b_j, b_l) = (&self.b_j, &self.b_l);
        let (ejj, ejl, elj, ell) = (e[(j, j)], e[(j, l)], e[(l, j)], e[(l, l)]);
        let (t_jj, t_jl) = (a_jj * ejj + a_jl * elj, a_jj * ejl + a_jl * ell);
        let (t_lj, t_ll) = (a_jl * ejj + a_ll * elj, a_jl * ejl + a_ll * ell);
        let mut ang_ang = Matrix3::zeros();
        ang_ang[(j, j)] = ejj * t_jj + elj * t_lj;
        ang_ang[(j, l)] = ejj * t_jl + elj * t_ll;
        ang_ang[(l, j)] = ang_ang[(j, l)];
        ang_ang[(l, l)] = ejl * t_jl + ell * t_ll;
        let mut ang_lin = Matrix3::zeros();
        ang_lin.set_row(
            j,
            &rotate_back::<K>(e, &(b_j * ejj + b_l * elj)).transpose(),
        );
        ang_lin.set_row(
            l,
            &rotate_back::<K>(e, &(b_j * ejl + b_l * ell)).transpose(),
        );
        ArticulatedInertia {
            ang_ang,
            ang_lin,
            lin_lin: congruence_symmetric_about_axis::<K>(e, &self.c_a),
        }
    }
}
