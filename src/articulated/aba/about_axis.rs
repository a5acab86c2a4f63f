//! Pass 2 of the articulated-body algorithm at a revolute joint about a coordinate axis of
//! its link, X_T a translation (the hinges of chains whose bodies share their orientation),
//! written out. The general step forms I^a = I^A − U D⁻¹ Uᵀ, rotates and shifts it to the
//! parent and passes p^a + I^a c; here two facts halve its products:
//!
//! - S = ±e_K (angular), and I^a S = 0: row and column K of I^a's angular block and row K of
//!   its coupling block are zero, so they are neither formed nor rotated, and the velocity
//!   product c (zero in the K components) meets a 5×5 block;
//! - X_up's rotation E turns about e_K: it mixes the other two coordinates only.

use nalgebra::{Matrix3, Vector3};

use super::Workspace;
use crate::articulated::inertia::{add_shifted, congruence_symmetric_about_axis};
use crate::articulated::spatial::{ArticulatedInertia, Force};

/// `Eᵀ v` for a rotation E about the coordinate axis `K`.
#[inline]
pub(super) fn rotate_back<const K: usize>(e: &Matrix3<f64>, v: &Vector3<f64>) -> Vector3<f64> {
    let (j, l) = ((K + 1) % 3, (K + 2) % 3);
    let mut out = *v;
    out[j] = e[(j, j)] * v[j] + e[(l, j)] * v[l];
    out[l] = e[(j, l)] * v[j] + e[(l, l)] * v[l];
    out
}

impl Workspace {
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
        let (j, l) = ((K + 1) % 3, (K + 2) % 3);
        let (before, from_i) = self.ia.split_at_mut(i);
        let ia = &from_i[0];
        let (am, bm, cm) = (&ia.ang_ang, &ia.ang_lin, &ia.lin_lin);
        // U = ±(A e_K, Bᵀ e_K) = ±(a, b), D = A_KK.
        let a: Vector3<f64> = am.column(K).into();
        let b: Vector3<f64> = bm.row(K).transpose();
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
        // I^a = I^A − (a, b)(a, b)ᵀ/D: A's block on J, L; B's rows J, L; all of C.
        let (wa, wb) = (a * dinv, b * dinv);
        let a_jj = am[(j, j)] - a[j] * wa[j];
        let a_jl = am[(j, l)] - a[j] * wa[l];
        let a_ll = am[(l, l)] - a[l] * wa[l];
        let b_j = bm.row(j).transpose() - wb * a[j];
        let b_l = bm.row(l).transpose() - wb * a[l];
        let (c01, c02, c12) = (
            cm.m12 - b.x * wb.y,
            cm.m13 - b.x * wb.z,
            cm.m23 - b.y * wb.z,
        );
        let c_a = Matrix3::new(
            cm.m11 - b.x * wb.x,
            c01,
            c02,
            c01,
            cm.m22 - b.y * wb.y,
            c12,
            c02,
            c12,
            cm.m33 - b.z * wb.z,
        );
        // p^a + I^a c with p^a = p^A + U D⁻¹ u; c's K components are zero (c = v × S q̇).
        let cv = &self.c[i];
        let (cj, cl) = (cv.ang[j], cv.ang[l]);
        let g = sign * u * dinv;
        let mut f_ang = p.ang + a * g;
        f_ang[j] += a_jj * cj + a_jl * cl + b_j.dot(&cv.lin);
        f_ang[l] += a_jl * cj + a_ll * cl + b_l.dot(&cv.lin);
        let f_lin = p.lin + b * g + b_j * cj + b_l * cl + c_a * cv.lin;
        // To the parent: X* = [Eᵀ  r× Eᵀ; 0  Eᵀ] on forces.
        let x = &self.x_up[i];
        let e = &x.rot;
        let lin = rotate_back::<K>(e, &f_lin);
        let ang = rotate_back::<K>(e, &f_ang) + x.trans.cross(&lin);
        self.pa[parent] += Force::new(ang, lin);
        // Eᵀ I^a E: A's J, L block by the 2×2 block G of E (T = A G, then Gᵀ T), B's rows
        // J, L as Eᵀ (Eᵀ B) row by row, C by the symmetric form.
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
        let rotated = ArticulatedInertia {
            ang_ang,
            ang_lin,
            lin_lin: congruence_symmetric_about_axis::<K>(e, &c_a),
        };
        add_shifted(&rotated, &x.trans, &mut before[parent]);
        Some(())
    }
}
