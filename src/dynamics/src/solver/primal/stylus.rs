//! The stylus clipped to a body whose angular velocities are condensed out of the primal
//! system H (see [`super::pattern`]): the linear 3 × 3 it adds to H, and the angular
//! velocities recovered after a solve.

use nalgebra::{Matrix3, Vector3};

use super::pattern::{local_jacobian, Pattern};
use crate::solver::direct::coupled::GlobalBlock;

/// The stylus on a condensed body (see [`super::pattern`]): the body's angular
/// velocities u_a, eliminated from H, are H_aa⁻¹ (r_a − H_laᵀ u_l).
#[derive(Clone, Copy, Debug)]
pub(in crate::solver) struct CondensedStylus {
    /// The body's first (linear) velocity in H.
    pub(in crate::solver) first: usize,
    /// H_aa⁻¹: the body's inertia plus the stylus' angular terms, inverted.
    pub(in crate::solver) inv_aa: Matrix3<f64>,
    /// H_la: the stylus' coupling of the body's linear and angular velocities.
    pub(in crate::solver) la: Matrix3<f64>,
    /// The angular part r_a of the last solve's right-hand side.
    pub(in crate::solver) r_a: Vector3<f64>,
}

/// Stylus row `k`'s Jacobian on its body: linear and angular part.
pub(in crate::solver) fn stylus_jacobian(
    p: &Pattern,
    g: &GlobalBlock,
    k: usize,
) -> (Vector3<f64>, Vector3<f64>) {
    let j = local_jacobian(&p.first_dof, g.b1, g.b2, &g.row(k), false);
    (
        Vector3::new(j[0], j[1], j[2]),
        Vector3::new(j[3], j[4], j[5]),
    )
}

/// The stylus block `g` on a condensed body whose (Newton) weight is `weight`: H_ll − H_la
/// H_aa⁻¹ H_laᵀ of its rows (the linear 3 × 3 it adds to H, beside the body's mass) and what
/// the solve needs to recover the angular velocities. `None` if H_aa is singular.
pub(in crate::solver) fn condense_stylus(
    p: &Pattern,
    g: &GlobalBlock,
    weight: &Matrix3<f64>,
) -> Option<(CondensedStylus, Matrix3<f64>)> {
    let mut aa = (0.5 * (weight + weight.transpose())).try_inverse()?;
    let mut la = Matrix3::zeros();
    let mut ll = Matrix3::zeros();
    for k in 0..g.rows {
        let (j_l, j_a) = stylus_jacobian(p, g, k);
        let soft = g.inv_soft[k].recip();
        ll += soft * j_l * j_l.transpose();
        la += soft * j_l * j_a.transpose();
        aa += soft * j_a * j_a.transpose();
    }
    let inv_aa = aa.try_inverse()?;
    let condensed = CondensedStylus {
        first: p.first_dof[g.b1],
        inv_aa,
        la,
        r_a: Vector3::zeros(),
    };
    Some((condensed, ll - la * inv_aa * la.transpose()))
}
