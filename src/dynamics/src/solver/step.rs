//! The stage order of one (sub-)step (see the numbered stages in [`super`]): free motion,
//! prepare, warm start, the velocity stage ([`super::velocity`]), integration, position
//! correction, reactions and the energy balance.

use nalgebra::{Matrix3, Vector3};

use super::contact::limits::LIMIT_TOLERANCE;
use super::stamp::Stamp;
use super::{squared_norm, LinearSolve, Step};
use crate::linalg::block::MAX_ROWS;
use crate::model::body::Pose;
use crate::state::diagnostics::StepDiagnostics;

/// What the velocity stage reports to the step's diagnostics.
#[derive(Clone, Copy, Debug)]
pub(super) struct VelocityOutcome {
    /// Linear solves (sweeps or coupled solves).
    pub(super) iterations: usize,
    /// Nonlinear residual at the end (m/s).
    pub(super) residual: f64,
    /// Velocity change of the last row refresh, or its estimate (m/s).
    pub(super) last_change: f64,
}

impl Step<'_> {
    /// One step of length h = `ctx.h` (stages 1–7 of the module docs). External forces stay
    /// queued (a split step applies them in every sub-step).
    pub(super) fn advance(&mut self) {
        // The coupled matrix is factored once per step, from the rows at the start of the
        // velocity stage; the refreshed midpoint rows differ from those by O(h·ω), so the
        // same factor still solves their linearisations as a chord (simplified Newton)
        // iteration, and the nonlinear residual, which uses the current rows, decides
        // convergence; when that contracts too slowly the current rows are factored (see
        // CHORD_CONTRACTION). The block factor is not carried into the next step: with the
        // cross lift's redundant constraints a factor whose near-null space has turned
        // amplifies the residual instead of removing it. Only the primal solve of a spring
        // network, whose matrix is positive definite, may keep its factor (`may_reuse`).
        self.s.versions.matrix.advance();
        self.s.direct.may_reuse = true;
        self.s.direct.factorisations = 0;
        // The last step's final prediction is where the bodies are (see `end_geometry_at`).
        let reuse_end = self.s.joint.end_geometry_at == self.s.versions.prediction
            && self.s.linear.is_coupled()
            && self.contact.is_none()
            && !self.has_limits();
        // (Each contact stage returns at once without contact: see `contact_rows`.)
        self.contact_impacts();
        self.free_motion(reuse_end);
        self.prepare(reuse_end);
        self.update_newton_inertia();
        self.warm_start();
        let mut velocity = self.velocity_stage();
        if self.couples_contacts() {
            velocity = self.coupled_contact_rounds(velocity);
        } else {
            self.contact_solve(true);
        }
        self.integrate_positions();
        self.contact_project_and_report();
        let (norm, position_iterations) = self.position_correction();
        self.compute_reactions();
        self.finish(norm, position_iterations, velocity);
    }

    /// Stage 1, free motion (Eq. 14–16): v += h (g + F/m), ω += h I⁻¹ τ for every dynamic
    /// body, with I the world inertia at the start orientation for the whole step and τ applied
    /// at the midpoint orientation (τ − φ × τ, φ = (h/2) ω from the start velocity); F and τ
    /// are the queued external loads and the force elements at the midpoint time and start
    /// pose.
    pub(super) fn free_motion(&mut self, reuse_end: bool) {
        let h = self.ctx.h;
        self.update_inertia();
        // The force elements' wrench at the midpoint time (second order for a sinusoid) and
        // the start pose, for this (sub-)step only.
        let t_mid_secs = self.s.time_secs + 0.5 * h;
        let loads = &mut self.s.loads;
        loads.element_force.fill(Vector3::zeros());
        loads.element_torque.fill(Vector3::zeros());
        for e in self.force_elements {
            let (f, t) = e.wrench_at(t_mid_secs, &self.bodies[e.body].world_from_body());
            loads.element_force[e.body] += f;
            loads.element_torque[e.body] += t;
        }
        // The medium's drag on bodies that have one (deformable elements), explicit from the
        // start velocity; booked with the force elements' work as external work.
        for (i, b) in self.bodies.iter().enumerate() {
            if b.drag_n_s_per_m > 0.0 && b.is_dynamic() {
                loads.element_force[i] -= b.linear_velocity_in_world * b.drag_n_s_per_m;
            }
        }
        // Joint dampers, explicit from the start state (see `model::damper`).
        loads.damper_force.fill(Vector3::zeros());
        loads.damper_torque.fill(Vector3::zeros());
        for j in self.joints {
            if let Some([w1, w2]) = crate::model::damper::damper_wrenches(j, self.bodies) {
                for (b, (f, t)) in [(j.body1, w1), (j.body2, w2)] {
                    loads.damper_force[b] += f;
                    loads.damper_torque[b] += t;
                }
            }
        }
        for (i, b) in self.bodies.iter_mut().enumerate() {
            if !reuse_end {
                self.s.body.start[i] = Pose::of(b);
            } else if b.is_dynamic() {
                self.s.body.start[i] = self.s.body.predicted[i];
            }
            self.s.body.v_start[i] = b.linear_velocity_in_world;
            self.s.body.w_start[i] = b.angular_velocity_in_world;
            if b.is_dynamic() {
                let loads = &self.s.loads;
                let force = loads.force[i] + loads.element_force[i] + loads.damper_force[i];
                let torque = loads.torque[i] + loads.element_torque[i] + loads.damper_torque[i];
                b.linear_velocity_in_world += (self.gravity_in_world + force * b.inv_mass) * h;
                // The torque acts at the midpoint orientation (see `reset_to_free_motion`),
                // here from the start velocity (the rows' ω̄ is not known yet).
                let half = b.angular_velocity_in_world * (0.5 * h);
                self.s.body.half_turn[i] = half;
                b.angular_velocity_in_world +=
                    self.s.body.inv_inertia[i] * (torque - half.cross(&torque)) * h;
            }
            self.s.body.v_free[i] = b.linear_velocity_in_world;
            self.s.body.w_free[i] = b.angular_velocity_in_world;
        }
    }

    /// World inertia tensors and their inverses at the current orientations.
    pub(super) fn update_inertia(&mut self) {
        for ((m, i), b) in self
            .s
            .body
            .inv_inertia
            .iter_mut()
            .zip(self.s.body.inertia.iter_mut())
            .zip(self.bodies.iter())
        {
            if b.is_dynamic() {
                b.set_inertia_and_inverse_in_world(i, m);
            } else {
                (*i, *m) = (Matrix3::zeros(), Matrix3::zeros());
            }
        }
    }

    /// Stage 2, prepare the blocks at the start poses. The coupled solve starts from zero
    /// impulses and builds its rows at the predicted midpoint, so it needs only ψ here: the
    /// last step's final ψ, when the poses are still those it ended with.
    fn prepare(&mut self, reuse_end: bool) {
        for i in 0..self.joints.len() {
            if reuse_end {
                let blk = &mut self.s.joint.blocks[i];
                blk.geometry_start = blk.geometry_pred;
                blk.psi_start = blk.psi_pred;
            } else if self.s.linear == LinearSolve::Sweeps {
                // The warm start below applies the old impulses along the start-pose rows.
                self.prepare_joint_rows(i);
            } else {
                self.prepare_joint_psi(i);
            }
        }
        if self.stylus.is_some() {
            self.prepare_stylus();
        }
        for i in 0..self.springs.len() {
            self.s.spring_rows[i].e_start = self.spring_length_m(i) - self.springs[i].rest_length_m;
        }
    }

    /// Stage 3, warm start (sweeps only): apply the previous step's impulses along the
    /// start-pose rows and predict the end pose from there. The direct method starts from
    /// zero instead: it needs no warm start, and with redundant constraints (the cross lift)
    /// the impulses would otherwise accumulate components in the null space of Jᵀ, which turn
    /// into velocity kicks once the rows rotate. (Using the old impulses only to predict the
    /// first rows, and solving from zero, made the row refreshes of the free swing stop
    /// converging: energy error 20 % after 8 s.)
    pub(super) fn warm_start(&mut self) {
        if self.s.linear.is_coupled() {
            for blk in &mut self.s.joint.blocks {
                blk.lambda = [0.0; MAX_ROWS];
            }
            for r in &mut self.s.spring_rows {
                r.lambda_last_step = r.lambda;
                r.lambda = 0.0;
            }
            self.s.stylus_block.lambda = Vector3::zeros();
        }
        // The predicted poses still hold the start poses here (they became the poses); the
        // spring rows depend on poses only, so they can be refreshed before any impulse.
        for i in 0..self.springs.len() {
            self.update_spring_row(i);
        }
        if self.s.linear == LinearSolve::Sweeps {
            self.apply_accumulated_impulses();
            self.flush_torques(false);
        }
        // (With the Newton guess, the first prediction is made from the guessed velocities.)
        if !self.s.newton.is_on() {
            self.predict_all();
        }
    }

    /// Stage 5, integrate positions (the predicted poses are exactly the integrated ones).
    /// The velocity stage worked with the inertia of the start orientation R₁, i.e. on the
    /// body-frame rate Ω = R₁ᵀω; the state carried to the next step is that same Ω, so the
    /// world vector turns with the body: ω ← R₂R₁ᵀ ω. Then ½ ωᵀ I(R₂) ω at the end equals the
    /// ½ ωᵀ I(R₁) ω whose change the impulses' work accounts for exactly; leaving ω fixed in
    /// the world instead changed Ω by the step's rotation, a first-order energy error that
    /// grew without bound once the chain swung out of its plane.
    fn integrate_positions(&mut self) {
        self.s.newton.end_step();
        for ((dv, b), (v, w)) in self
            .s
            .body
            .constraint_velocity_change
            .iter_mut()
            .zip(self.bodies.iter())
            .zip(self.s.body.v_free.iter().zip(&self.s.body.w_free))
        {
            *dv = (
                b.linear_velocity_in_world - v,
                b.angular_velocity_in_world - w,
            );
        }
        for (b, p) in self.bodies.iter_mut().zip(&self.s.body.predicted) {
            if b.is_dynamic() {
                let turn = p.q * b.world_from_body_rotation.inverse();
                b.angular_velocity_in_world = turn * b.angular_velocity_in_world;
                b.position_in_world = p.x;
                b.world_from_body_rotation = p.q;
            }
        }
    }

    /// Stage 6, position correction if needed: nonlinear Gauss–Seidel projections of the
    /// poses until ‖ψ‖ is under the tolerance or the cap. Returns ‖ψ‖ (m) and the sweeps.
    fn position_correction(&mut self) -> (f64, usize) {
        // The poses are now exactly the last prediction, whose ψ is usually at hand.
        let mut norm = if self.s.joint.psi_pred_at == self.s.versions.prediction {
            self.joints
                .iter()
                .zip(&self.s.joint.blocks)
                .map(|(j, blk)| squared_norm(j, &blk.psi_pred))
                .sum::<f64>()
                .sqrt()
        } else {
            super::energy::constraint_norm_m(self.bodies, self.joints)
        };
        let mut position_iterations = 0;
        // Joint limits are projected in the same sweeps (0 without limits: the loop is the
        // joints' alone).
        let limited = self.has_limits();
        let mut past_limit = self.limit_violation();
        while (norm > self.ctx.position_tolerance_m || past_limit > LIMIT_TOLERANCE)
            && position_iterations < self.ctx.max_position_iterations
        {
            position_iterations += 1;
            self.ensure_joint_factors();
            for i in 0..self.joints.len() {
                self.project_joint(i);
            }
            // (The joints' projection may itself push a joint past its limit.)
            if limited {
                self.project_limits();
                past_limit = self.limit_violation();
            }
            norm = super::energy::constraint_norm_m(self.bodies, self.joints);
        }
        self.s.joint.end_geometry_at = if position_iterations == 0 {
            self.s.joint.psi_pred_at
        } else {
            Stamp::NEVER
        };
        (norm, position_iterations)
    }

    /// Stage 7: advances the stylus tip, books the work and writes the step's diagnostics.
    fn finish(&mut self, norm: f64, position_iterations: usize, velocity: VelocityOutcome) {
        let h = self.ctx.h;
        if let Some(t) = self.stylus_target.as_mut() {
            t.position_in_world += t.velocity_in_world * h;
        }
        self.book_work(h);
        let energies = self.energies();
        let (reference, drift) = self.s.ledger.close_step(&energies);
        self.s.time_secs += h;
        self.s.diagnostics = StepDiagnostics {
            time_secs: self.s.time_secs,
            constraint_norm_m: norm,
            kinetic_j: energies.kinetic_j,
            potential_j: energies.potential_j,
            elastic_j: energies.elastic_j,
            user_work_j: self.s.ledger.user_work_j,
            external_work_j: self.s.ledger.external_work_j,
            dissipated_j: self.s.ledger.dissipated_j,
            fractured_j: self.s.ledger.fractured_j,
            energy_drift_j: drift,
            energy_reference_j: reference,
            energy_error_rel: drift / reference,
            clipped: self.stylus.is_some(),
            iterations: velocity.iterations,
            factorisations: self.s.direct.factorisations,
            velocity_residual: velocity.residual,
            position_iterations,
            substeps: 1,
            unconverged: false,
            row_refresh_change: velocity.last_change,
        };
    }
}
