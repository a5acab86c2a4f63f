//! Sub-step splitting: a step that did not converge is taken back and the same interval is
//! covered by 2, 4, … up to [`MAX_STEP_SPLITS`] shorter steps.
//!
//! That happens when the user yanks the stylus so hard within one step that the rows at the
//! start and end poses differ too much for the midpoint linearisation; a shorter step is then
//! the correct answer, not a bigger impulse.

use nalgebra::{UnitQuaternion, Vector3};

use super::failure::{FailureCause, StepFailure};
use super::Step;
use crate::model::body::Body;
use crate::model::stylus::StylusTarget;
use crate::state::diagnostics::{EnergyLedger, StepDiagnostics};

/// A step is split when its residuals exceed their tolerances by more than this factor.
const REJECT_RESIDUAL_FACTOR: f64 = 100.0;
/// The most sub-steps a rejected step is split into.
pub const MAX_STEP_SPLITS: usize = 16;

/// The moving part of a body's state, kept to retry a rejected step.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyState {
    position_in_world: Vector3<f64>,
    world_from_body_rotation: UnitQuaternion<f64>,
    linear_velocity_in_world: Vector3<f64>,
    angular_velocity_in_world: Vector3<f64>,
}

impl BodyState {
    fn of(b: &Body) -> Self {
        Self {
            position_in_world: b.position_in_world,
            world_from_body_rotation: b.world_from_body_rotation,
            linear_velocity_in_world: b.linear_velocity_in_world,
            angular_velocity_in_world: b.angular_velocity_in_world,
        }
    }

    fn restore(&self, b: &mut Body) {
        b.position_in_world = self.position_in_world;
        b.world_from_body_rotation = self.world_from_body_rotation;
        b.linear_velocity_in_world = self.linear_velocity_in_world;
        b.angular_velocity_in_world = self.angular_velocity_in_world;
    }
}

impl Step<'_> {
    /// Advances by one step of the context's h, splitting it when it does not converge (see
    /// the module docs and [`StepDiagnostics::substeps`]). The queued external loads apply
    /// in every sub-step and are cleared at the end.
    ///
    /// A step that still fails split into [`MAX_STEP_SPLITS`] sub-steps, or whose state is
    /// not finite, is not kept: the state before it is restored (so the simulated time stays
    /// that of the last step taken) and the failure says when, why and where.
    pub(crate) fn run(&mut self) -> Result<(), StepFailure> {
        let h = self.ctx.h;
        let last_diagnostics = self.s.diagnostics;
        self.s.saved_state.clear();
        self.s
            .saved_state
            .extend(self.bodies.iter().map(BodyState::of));
        let saved = (self.s.ledger, self.stylus_target, self.s.time_secs);
        self.s.contact.overflow = None;
        self.advance();
        let mut substeps = 1;
        // Splitting does not bring the contacts within their memory: fail at once.
        let mut accepted = self.step_accepted() || self.s.contact.overflow.is_some();
        // Sub-steps at the deepest split whose row refreshes did not converge although their
        // state is finite and their joints closed: kept (the time then stays right) and
        // reported in the diagnostics.
        let mut unconverged = false;
        while !accepted && substeps < MAX_STEP_SPLITS {
            substeps *= 2;
            self.restore_start(saved);
            (accepted, unconverged) = self.take_substeps(h, substeps);
        }
        self.s.diagnostics.substeps = substeps;
        self.s.diagnostics.unconverged = unconverged;
        let result = if accepted && self.state_finite() && self.s.contact.overflow.is_none() {
            Ok(())
        } else {
            let failure = self.failure(substeps, last_diagnostics.constraint_norm_m, saved.2);
            self.restore_start(saved);
            self.s.newton.nothing_carries_over();
            self.s.diagnostics = last_diagnostics;
            Err(failure)
        };
        for (f, t) in self
            .s
            .loads
            .force
            .iter_mut()
            .zip(self.s.loads.torque.iter_mut())
        {
            *f = Vector3::zeros();
            *t = Vector3::zeros();
        }
        result
    }

    /// Puts the bodies, the energy ledger, the stylus tip and the time back where the step
    /// started.
    fn restore_start(&mut self, saved: (EnergyLedger, Option<StylusTarget>, f64)) {
        for (b, st) in self.bodies.iter_mut().zip(&self.s.saved_state) {
            st.restore(b);
        }
        // The bodies are back where the step started, no longer on its prediction.
        self.s.versions.prediction.advance();
        (self.s.ledger, self.stylus_target, self.s.time_secs) = saved;
    }

    /// Covers the step of length `h` by `substeps` equal sub-steps, summing their solver
    /// figures into the diagnostics. Returns whether every sub-step was accepted, and
    /// whether some were kept unconverged at the deepest split.
    fn take_substeps(&mut self, h: f64, substeps: usize) -> (bool, bool) {
        self.ctx.h = h / substeps as f64;
        let deepest = substeps == MAX_STEP_SPLITS;
        let mut total = StepDiagnostics::default();
        let (mut accepted, mut unconverged) = (true, false);
        for _ in 0..substeps {
            // A step that needed splitting is in a violent phase; there the plain iteration
            // from the free motion converged better than the Newton gain and the guess
            // carried over from the previous sub-step (measured: 21 against 36 solves per step
            // over the ten pendula's chaotic swing).
            self.s.newton.nothing_carries_over();
            self.advance();
            total.iterations += self.s.diagnostics.iterations;
            total.factorisations += self.s.diagnostics.factorisations;
            total.position_iterations += self.s.diagnostics.position_iterations;
            total.velocity_residual = total
                .velocity_residual
                .max(self.s.diagnostics.velocity_residual);
            if !self.step_accepted() {
                if deepest && self.step_usable() {
                    unconverged = true;
                } else {
                    accepted = false;
                    break;
                }
            }
        }
        self.ctx.h = h;
        self.s.diagnostics.iterations = total.iterations;
        self.s.diagnostics.factorisations = total.factorisations;
        self.s.diagnostics.position_iterations = total.position_iterations;
        self.s.diagnostics.velocity_residual = total.velocity_residual;
        (accepted, unconverged)
    }

    /// Whether every body's pose and velocities and every figure of the diagnostics are
    /// finite.
    fn state_finite(&self) -> bool {
        self.bodies.iter().all(Body::state_is_finite) && self.s.diagnostics.non_finite().is_none()
    }

    /// Describes the failed (sub-)step that the state now ends with.
    fn failure(&mut self, substeps: usize, last_finite_psi: f64, time_secs: f64) -> StepFailure {
        let d = self.s.diagnostics;
        // A step whose contacts overflowed was abandoned where it stood: say that first.
        let cause = match (self.s.contact.overflow.clone(), self.first_non_finite()) {
            (Some(overflow), _) => overflow,
            (None, Some(what)) => FailureCause::NonFinite { what },
            (None, None) => FailureCause::NotConverged {
                substeps,
                velocity_residual: d.velocity_residual,
                velocity_tolerance: self.ctx.velocity_tolerance,
                constraint_norm_m: d.constraint_norm_m,
                position_tolerance_m: self.ctx.position_tolerance_m,
            },
        };
        StepFailure {
            time_secs,
            dt_secs: self.ctx.h,
            cause,
            worst_elements: self.worst_elements(),
            last_finite_constraint_norm_m: last_finite_psi,
        }
    }

    /// Whether the last (sub-)step converged: finite, the nonlinear velocity residual within
    /// [`REJECT_RESIDUAL_FACTOR`] of its tolerance and ‖ψ‖ within that factor of the
    /// position tolerance.
    fn step_accepted(&self) -> bool {
        let d = &self.s.diagnostics;
        let f = REJECT_RESIDUAL_FACTOR;
        // The last row refresh's velocity change measures how far the velocities are from
        // the discrete equations of motion with the end-pose rows; when refreshing diverged
        // the step may close the joints and still gain energy.
        let rows_converged = self.ctx.max_row_refreshes == 0
            || d.row_refresh_change <= f * self.ctx.velocity_tolerance;
        d.kinetic_j.is_finite()
            && d.constraint_norm_m.is_finite()
            && d.velocity_residual <= f * self.ctx.velocity_tolerance
            && d.constraint_norm_m <= f * self.ctx.position_tolerance_m
            && rows_converged
    }

    /// Whether the last (sub-)step is finite with its velocity residual and ‖ψ‖ within
    /// [`REJECT_RESIDUAL_FACTOR`] of their tolerances: usable although its row refreshes may
    /// not have converged (its energy balance is then only approximate).
    fn step_usable(&self) -> bool {
        let d = &self.s.diagnostics;
        let f = REJECT_RESIDUAL_FACTOR;
        d.kinetic_j.is_finite()
            && d.constraint_norm_m.is_finite()
            && d.velocity_residual <= f * self.ctx.velocity_tolerance
            && d.constraint_norm_m <= f * self.ctx.position_tolerance_m
            && self.state_finite()
    }
}
