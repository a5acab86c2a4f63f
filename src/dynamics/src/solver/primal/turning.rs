//! The springs' turning stiffness in the primal solve: a spring's impulse acts along its
//! midpoint row, and the row turns when its end pose moves across it. The velocity stage
//! ([`super::stage`]) re-evaluates every row at each refresh, so without this term
//! each iteration finds the impulses turned by the last one's motion (a lag whose
//! contraction is h² λ/(4 m l) per iteration on a hanging cloth's top row). With it, H is
//! the Newton matrix of the rows' dependence too:
//!
//! ```text
//! H = W⁻¹ + J_Sᵀ D_S⁻¹ J_S + Σ_springs g (I − n nᵀ) ⊗ [[1, −1], [−1, 1]],   g = (h/2) λ/(l₀ + l₁)
//! ```
//!
//! (see [`SoftRow::turning_stiffness`]), and each solve's right-hand side carries the
//! momentum the last refresh left: the rows were taken at the velocities before it, the
//! refresh moved them by δ, and the impulses turned by −g (I − n nᵀ)(δ₁ − δ₂) with that
//! (see [`row_lag`]). Only springs attached at both centres (every element connection) get
//! the term; elsewhere the outer iterations remove what its absence leaves.
//!
//! In compression g < 0. A factor with negative terms is tried first (on a cloth's top edge
//! it is what makes the first solve converge quadratically); if H is then not positive
//! definite, the compressed springs' terms are left out of both H and the lag.

use nalgebra::{Matrix3, Vector3};

use super::pattern::Pattern;
use super::PrimalSolve;
use crate::model::body::Body;
use crate::model::spring::Spring;
use crate::solver::direct::coupled::GlobalBlock;
use crate::solver::rows::spring::SoftRow;

/// What H's turning stiffness is made from: the springs' rows (their impulses) and the step.
#[derive(Clone, Copy, Debug)]
pub(in crate::solver) struct TurningInputs<'a> {
    pub(in crate::solver) spring_rows: &'a [SoftRow],
    pub(in crate::solver) dt_secs: f64,
}

/// The projection across a row with linear part `lin` (any length).
pub(in crate::solver) fn across(lin: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::identity() - lin * lin.transpose() / lin.norm_squared()
}

/// Spring `row`'s turning stiffness (kg) as H takes it: none in compression if
/// `compression` is false.
pub(in crate::solver) fn stiffness(row: &SoftRow, dt_secs: f64, compression: bool) -> f64 {
    let g = row.turning_stiffness(dt_secs);
    if compression {
        g
    } else {
        g.max(0.0)
    }
}

/// Sets `lag` (in H's velocities) to the momentum −K_T δ that the last row refresh left, δ
/// being each body's linear velocity minus its `snapshot` (the velocities whose prediction
/// the rows were taken at).
pub(in crate::solver) fn row_lag(
    lag: &mut [f64],
    pattern: &Pattern,
    bodies: &[Body],
    snapshot: &[(Vector3<f64>, Vector3<f64>)],
    springs: &[Spring],
    turning: TurningInputs<'_>,
    compression: bool,
) {
    let TurningInputs {
        spring_rows,
        dt_secs,
    } = turning;
    lag.fill(0.0);
    let delta = |b: usize| bodies[b].linear_velocity_in_world - snapshot[b].0;
    for (i, (s, r)) in springs.iter().zip(spring_rows).enumerate() {
        if !pattern.lin_only[i] || !r.active || s.body1 == s.body2 {
            continue;
        }
        let g = stiffness(r, dt_secs, compression);
        if g == 0.0 {
            continue;
        }
        let n = r.row.lin;
        let d = delta(s.body1) - delta(s.body2);
        let turned = (d - n * (n.dot(&d) / n.norm_squared())) * g;
        let (f1, f2) = (pattern.first_dof[s.body1], pattern.first_dof[s.body2]);
        if f1 != usize::MAX {
            for q in 0..3 {
                lag[f1 + q] -= turned[q];
            }
        }
        if f2 != usize::MAX {
            for q in 0..3 {
                lag[f2 + q] += turned[q];
            }
        }
    }
}

impl PrimalSolve {
    /// Assembles H from the bodies' weights, the soft blocks and the springs' turning
    /// stiffness, factors it, and makes the hard rows' Schur complement; without the
    /// compressed springs' terms if H is not positive definite with them. `None` if a
    /// factorisation fails (a NaN state).
    pub(crate) fn factor(
        &mut self,
        blocks: &[GlobalBlock],
        bodies: &[Body],
        body_weight: &[Matrix3<f64>],
        spring_rows: &[SoftRow],
        regularisation: f64,
        dt_secs: f64,
    ) -> Option<()> {
        self.without_impulses = spring_rows
            .iter()
            .all(|r| r.lambda == 0.0 && r.lambda_last_step == 0.0);
        let turning = TurningInputs {
            spring_rows,
            dt_secs,
        };
        for compression in [true, false] {
            self.compression = compression;
            if self
                .factor_with(blocks, bodies, body_weight, turning, regularisation)
                .is_some()
            {
                return Some(());
            }
        }
        None
    }

    /// Sets the momentum that the last row refresh left for the next [`Self::solve`] (see
    /// [`super::turning`]): `snapshot` holds the velocities whose prediction the rows
    /// were taken at.
    pub(crate) fn set_row_lag(
        &mut self,
        moved: bool,
        bodies: &[Body],
        snapshot: &[(Vector3<f64>, Vector3<f64>)],
        springs: &[Spring],
        spring_rows: &[SoftRow],
        dt_secs: f64,
    ) {
        if !(self.turning && moved) {
            self.lag.fill(0.0);
            return;
        }
        let compression = self.compression;
        let turning = TurningInputs {
            spring_rows,
            dt_secs,
        };
        row_lag(
            &mut self.lag,
            &self.pattern,
            bodies,
            snapshot,
            springs,
            turning,
            compression,
        );
    }

    /// Whether the last factor had no impulse to take the turning stiffness from (the first
    /// of a run): the next iteration should factor again.
    pub(crate) fn without_impulses(&self) -> bool {
        self.without_impulses
    }

    /// This solve without the springs' turning stiffness (the reference for its tests).
    #[cfg(test)]
    pub(crate) fn without_turning(mut self) -> Self {
        self.turning = false;
        self
    }
}
