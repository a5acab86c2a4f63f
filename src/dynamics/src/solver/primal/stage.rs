//! Stage 4 with the primal solve ([`crate::solver::primal`], large spring networks): every solve
//! takes the rows at the current prediction.
//!
//! The direct method's velocity stage (see [`crate::solver::velocity`]) solves several
//! linearisations with the rows held fixed and then re-evaluates them. On a mesh that
//! diverges as soon as the elements move sideways by a fraction of a spacing within a step:
//! a row that no longer points along its predicted ends mispredicts the stiff connections'
//! lengths, and h²k/(4m) (≈ 13 for a 16 × 16 cloth of 0.1 kg with k = 200 N/m) amplifies
//! that into the next iterate. Here each iteration re-evaluates every row at the current
//! prediction, applies the impulses along them (the momentum equations then hold exactly),
//! and solves the spring laws and the joints once. The step ends after such a refresh once
//! the nonlinear residual and the refresh's velocity change are both under the tolerance, so
//! the exact-work identities hold at the end pose as in the other stage.

use crate::solver::step::VelocityOutcome;
use crate::solver::Step;
/// An iteration refactors H when it reduced the larger of the residual and the change by
/// less than this factor (the factor is a chord, kept from earlier steps).
const CHORD_CONTRACTION: f64 = 0.3;

impl Step<'_> {
    /// Finds the end velocities by Newton iterations (see the module docs).
    pub(in crate::solver) fn primal_velocity_stage(&mut self) -> VelocityOutcome {
        let tolerance = self.ctx.velocity_tolerance;
        let mut iterations = 0;
        let mut previous = f64::INFINITY;
        loop {
            // Rows at the current prediction and the impulses along them.
            let change = self.refresh_rows();
            self.predict_all();
            self.linearise();
            let residual = self.nonlinear_residual();
            let converged = residual < tolerance && change < tolerance;
            if converged || iterations >= self.ctx.max_iterations {
                return VelocityOutcome {
                    iterations,
                    residual,
                    last_change: change,
                };
            }
            let size = residual.max(change);
            let primal = self.s.direct.primal.as_mut();
            let without_impulses = primal.as_ref().is_some_and(|p| p.without_impulses());
            if size > CHORD_CONTRACTION * previous || without_impulses {
                self.s.versions.matrix.advance();
            }
            previous = size;
            iterations += 1;
            if let Some(primal) = primal {
                // (A refresh that moved nothing left no momentum: the step's first, from
                // zero impulses.)
                let moved = change != 0.0;
                primal.set_row_lag(
                    moved,
                    self.bodies,
                    &self.s.body.velocity_snapshot,
                    self.springs,
                    &self.s.spring_rows,
                    self.ctx.h,
                );
            }
            self.save_velocities();
            if self.direct_solve().is_none() {
                // A failed factorisation (a NaN state): the step is rejected by its residual.
                return VelocityOutcome {
                    iterations,
                    residual: f64::INFINITY,
                    last_change: f64::INFINITY,
                };
            }
            if let Some(primal) = &self.s.direct.primal {
                primal.set_velocity_change(self.bodies, &self.s.body.velocity_snapshot);
            }
            self.predict_all();
        }
    }
}
