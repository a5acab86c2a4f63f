//! Stage 4, the velocity stage (Eq. 17–23, 27): outer linearisations about the predicted end
//! pose, each solved by the direct or the Gauss–Seidel method, and row refreshes at the
//! converged prediction until the exact-work identities hold (see [`super`] for the scheme).

use nalgebra::Vector3;

use super::step::VelocityOutcome;
use super::{abs_max, larger, LinearSolve, Step};

/// Lever arm that turns an angular-velocity change into a velocity for the refresh test (m).
const ROW_REFRESH_LEVER_M: f64 = 0.1;
/// Outer linearisations per step at most (the sweep cap applies as well).
const MAX_LINEARISATIONS: usize = 8;
/// A linearisation refactors the coupled matrix when its solve reduced the nonlinear
/// residual by less than this factor.
const CHORD_CONTRACTION: f64 = 0.3;
/// The first row refresh makes the coupled matrix be factored again, from the refreshed rows,
/// when it moved the velocities by more than this (m/s, angular ones times
/// [`ROW_REFRESH_LEVER_M`]). In fast motion (the ten pendula's chaotic swing: 0.1–0.2 m/s) the
/// factor of the first rows then contracts the residual by only ~0.28 per solve, just under
/// [`CHORD_CONTRACTION`], and a step took 6–8 solves. Over 24 runs of 614 s (the stylus at
/// 9970…10085 N/m) refactoring here brought the mean from 11.7 to 9.7 µs per step and the
/// slowest run from 19.5 to 11.6 µs; the energy balance then ends within 0.09–0.36 % of
/// E_ref instead of 0.04–0.18 % (converged to the same tolerance, with fewer solves past
/// it). In the acceptance drag the first refreshes move less (1.01 factorisations per step
/// either way).
const REFACTOR_REFRESH_CHANGE: f64 = 0.03;
/// Linearisations before the last row refresh stop once the residual is below this fraction
/// of the velocity change of the last refresh (or the velocity tolerance, if larger).
const ROUND_TOLERANCE_FRACTION: f64 = 0.01;

/// Where the velocity stage's iteration stands: the solves so far, the nonlinear residual,
/// and the row refreshes with the velocity changes of the last two.
#[derive(Clone, Copy, Debug)]
struct Progress {
    /// Linear solves (coupled solves or sweeps) so far.
    iterations: usize,
    /// The nonlinear residual at the current prediction (m/s).
    residual: f64,
    /// Row refreshes so far.
    refreshes: usize,
    /// The velocity change of the last refresh (m/s), or its estimate once the stopping rule
    /// skipped the next one.
    last_change: f64,
    /// The velocity change of the refresh before it.
    change_before: f64,
    /// The refreshes from which the contraction θ may be measured: a refactor after the first
    /// one makes the second contract far more than the first, and θ from those two would stop
    /// too early.
    theta_refreshes: usize,
}

impl Progress {
    fn start() -> Self {
        Self {
            iterations: 0,
            residual: f64::INFINITY,
            refreshes: 0,
            last_change: f64::INFINITY,
            change_before: f64::INFINITY,
            theta_refreshes: 2,
        }
    }

    /// The stopping rule of simplified Newton iterations (Hairer & Wanner, Solving ODEs II,
    /// IV.8): once two refreshes have shown how fast they contract (θ), the next one's change
    /// is estimated as θ/(1 − θ) times the last; when that is under the tolerance and ψ is
    /// closed, the refresh is not needed (the estimate stands for its change).
    fn next_refresh_unneeded(&mut self, tolerance: f64) -> bool {
        if self.refreshes >= self.theta_refreshes
            && self.residual < tolerance
            && self.last_change < self.change_before
        {
            let theta = self.last_change / self.change_before;
            let estimate = theta / (1.0 - theta) * self.last_change;
            if estimate < tolerance {
                self.last_change = estimate;
                return true;
            }
        }
        false
    }

    /// Records a refresh's velocity change; returns whether it grew (refreshing diverges).
    fn record_refresh(&mut self, change: f64) -> bool {
        let diverging = change > self.last_change;
        self.change_before = self.last_change;
        self.last_change = change;
        diverging
    }
}

impl Step<'_> {
    /// Finds the end velocities: linearisations and row refreshes (see the module docs).
    pub(super) fn velocity_stage(&mut self) -> VelocityOutcome {
        self.velocity_stage_from(false)
    }

    /// The velocity stage; with `warm`, from the impulses the elements already hold (the
    /// coupled solves start from zero impulses otherwise: see `warm_start`).
    pub(super) fn velocity_stage_from(&mut self, warm: bool) -> VelocityOutcome {
        if self.s.linear == LinearSolve::Primal {
            return self.primal_velocity_stage();
        }
        // 4. Sequential impulses, in outer linearisations: each fixes the midpoint rows J̄
        // and the Baumgarte bias from the predicted end pose, then the linear solve finds the
        // impulses; the accumulated impulses are re-applied along the rows (v = v_free + M⁻¹
        // J̄ᵀ λ exactly) and the nonlinear residual is checked.
        let tolerance = self.ctx.velocity_tolerance;
        self.first_rows(warm);
        let mut p = Progress::start();
        loop {
            self.linearisation_rounds(&mut p);
            // Re-evaluate the midpoint rows at the converged prediction, for the exact work
            // identities; stop when they no longer move the velocities, or when refreshing
            // stops converging (light bodies under large impulses), or at the caps.
            if p.next_refresh_unneeded(tolerance)
                || p.refreshes >= self.ctx.max_row_refreshes
                || p.iterations >= self.ctx.max_iterations
            {
                break;
            }
            if self.refresh_round(&mut p) {
                break;
            }
        }
        VelocityOutcome {
            iterations: p.iterations,
            residual: p.residual,
            last_change: p.last_change,
        }
    }

    /// The first rows, at the predicted end pose, and the free motion as the first iterate.
    fn first_rows(&mut self, warm: bool) {
        // (Only with the Newton gain: without it, a guess made the cross lift's plain
        // iteration split 309 of 1000 steps.)
        let guess = self.s.newton.is_on();
        if guess {
            // The first rows are taken at the end pose that the previous step's constraint
            // velocity change predicts (motion is smooth over a step), not at the free
            // motion's: the solve starts from zero impulses all the same, only nearer. Not
            // after a jump in the loads (see `NewtonCarry`), when that guess is off.
            for ((b, dv), (v, w)) in self
                .bodies
                .iter_mut()
                .zip(&self.s.body.constraint_velocity_change)
                .zip(self.s.body.v_free.iter().zip(&self.s.body.w_free))
            {
                if b.is_dynamic() {
                    b.linear_velocity_in_world = v + dv.0;
                    b.angular_velocity_in_world = w + dv.1;
                }
            }
            self.predict_all();
            self.save_velocities();
        }
        self.update_rows();
        self.reset_to_free_motion();
        // (The coupled solve starts from zero impulses, with nothing to apply, unless it
        // continues from a round's: see `coupled`.)
        if self.s.linear == LinearSolve::Sweeps || warm {
            self.apply_accumulated_impulses();
        }
        self.flush_torques(false);
        if guess {
            // The rows belong to the guessed velocities: the Newton iterate is taken from
            // there (see the refresh below).
            self.apply_newton_gain();
        }
        self.predict_all();
    }

    /// Linearisations with the current rows until the nonlinear residual is under the
    /// round's tolerance, or the caps.
    fn linearisation_rounds(&mut self, p: &mut Progress) {
        let tolerance = self.ctx.velocity_tolerance;
        for _outer in 0..MAX_LINEARISATIONS {
            self.linearise();
            loop {
                p.iterations += 1;
                let done = self.solve_linearisation(p.iterations);
                if done || p.iterations >= self.ctx.max_iterations {
                    break;
                }
            }
            self.predict_all();
            let previous = p.residual;
            p.residual = self.nonlinear_residual();
            // Rows that will still be refreshed need not be solved more accurately than the
            // last refresh moved the velocities (inexact Newton): the first rows, from the
            // free-motion prediction, get one solve.
            let round_tolerance = if p.refreshes < self.ctx.max_row_refreshes {
                tolerance.max(ROUND_TOLERANCE_FRACTION * p.last_change)
            } else {
                tolerance
            };
            if p.residual < round_tolerance || p.iterations >= self.ctx.max_iterations {
                break;
            }
            // A factor from rows that have since been refreshed contracts the residual only
            // linearly; when that is slow (the cross lift's closed loops), factor the current
            // rows.
            if p.residual > CHORD_CONTRACTION * previous {
                self.refactor_current_rows();
            }
        }
    }
    /// One linear solve of the current linearisation (sweep `iteration` of the step, or a
    /// coupled solve); returns whether the linearisation is solved.
    fn solve_linearisation(&mut self, iteration: usize) -> bool {
        match self.s.linear {
            LinearSolve::Sweeps => self.sweep(iteration) < 0.25 * self.ctx.velocity_tolerance,
            LinearSolve::Blocks | LinearSolve::Primal => {
                if self.direct_solve().is_none() {
                    // A failed factorisation (NaN state): fall back to sweeps.
                    self.sweep(iteration);
                }
                true
            }
        }
    }

    /// A row refresh and what follows it: the Newton gain, the new prediction, the stopping
    /// tests. Returns whether the stage is done.
    fn refresh_round(&mut self, p: &mut Progress) -> bool {
        let tolerance = self.ctx.velocity_tolerance;
        p.refreshes += 1;
        let change = self.refresh_rows();
        if p.refreshes == 1 && change > REFACTOR_REFRESH_CHANGE {
            self.refactor_current_rows();
            p.theta_refreshes = 3;
        }
        // The refresh is one fixed-point step of ω′ = ω_free + I⁻¹τ(ω′); its Newton step is
        // the gain times its change.
        if p.refreshes == 1 {
            self.newton_at_first_refresh();
        }
        self.apply_newton_gain();
        self.predict_all();
        // (ψ̂ at the new prediction is kept for the next linearisation.)
        p.residual = self.nonlinear_residual();
        let diverging = p.record_refresh(change);
        if change < tolerance && p.residual < tolerance {
            return true;
        }
        if diverging {
            if self.s.newton.is_on() {
                // The Newton inertia from the last step's impulses misleads here (a jump in
                // the loads, or the cross lift's closed loops, whose coupling between bodies it
                // leaves out): go on with the plain iteration and a plain factor, and for the
                // next steps too.
                self.s.newton.back_off();
                self.refactor_current_rows();
            } else {
                // Refreshing diverges here: converge once more with these rows and stop. With
                // loops, the null-space impulses of redundant rows may be the cause: a larger
                // regularisation keeps them smaller from here on.
                p.refreshes = self.ctx.max_row_refreshes;
                self.s.direct.loosen_loop_regularisation();
            }
        }
        false
    }

    /// A row refresh: re-evaluates the rows at the current prediction and re-applies the
    /// impulses along them; returns how much that moved the velocities (m/s, angular ones
    /// times [`ROW_REFRESH_LEVER_M`]).
    pub(super) fn refresh_rows(&mut self) -> f64 {
        self.save_velocities();
        self.update_rows();
        self.reapply_impulses();
        let mut change = 0.0_f64;
        for (snap, b) in self.s.body.velocity_snapshot.iter().zip(self.bodies.iter()) {
            change = larger(change, abs_max(&(b.linear_velocity_in_world - snap.0)));
            change = larger(
                change,
                abs_max(&(b.angular_velocity_in_world - snap.1)) * ROW_REFRESH_LEVER_M,
            );
        }
        change
    }

    /// Evaluates the midpoint rows of every element at the current prediction (before the
    /// first linearisation and at each row refresh); for the sweeps it also factors the
    /// per-element blocks.
    pub(super) fn update_rows(&mut self) {
        self.evaluate_predicted_psi();
        for i in 0..self.joints.len() {
            self.update_joint_rows(i);
        }
        for i in 0..self.springs.len() {
            self.update_spring_row(i);
        }
        self.s.spring_extensions_at = self.s.versions.prediction;
        if self.stylus.is_some() {
            self.update_stylus_arm();
        }
        // The coupled solve does not use the per-element factors: they are made when a
        // sweep or the position pass needs them.
        self.s.versions.rows.advance();
        if self.s.linear == LinearSolve::Sweeps {
            self.ensure_joint_factors();
        }
    }

    /// Linearises every element about the current prediction with the fixed rows: the
    /// joints' Baumgarte bias from the nonlinear ψ̂, the soft rows' extension and rates.
    pub(super) fn linearise(&mut self) {
        let h = self.ctx.h;
        let keep = 1.0 - self.ctx.beta;
        self.evaluate_predicted_psi();
        // The coupled solve takes its joint right-hand sides straight from ψ̂ (the row rates
        // cancel there); only the sweeps need the targets.
        if self.s.linear == LinearSolve::Sweeps {
            for i in 0..self.joints.len() {
                for k in 0..self.joints[i].rows() {
                    let rate = self.joint_row_rate(i, k);
                    let blk = &mut self.s.joint.blocks[i];
                    // ψ̂ moves by (h/2)·ΔJ̄v: the midpoint velocity changes by half as much.
                    blk.bias[k] = rate + 2.0 * blk.closure_error(k, keep) / h;
                }
            }
        }
        for i in 0..self.springs.len() {
            let s = &self.springs[i];
            let (b1, b2) = (s.body1, s.body2);
            let e_pred = self.predicted_extension_m(i);
            let r = &self.s.spring_rows[i];
            let mut u_now = r.row.lin.dot(
                &(self.bodies[b1].linear_velocity_in_world
                    - self.bodies[b2].linear_velocity_in_world),
            );
            let mut u_start = r
                .row
                .lin
                .dot(&(self.s.body.v_start[b1] - self.s.body.v_start[b2]));
            if !s.at_centres() {
                u_now += r.row.ang1.dot(&self.bodies[b1].angular_velocity_in_world)
                    + r.row.ang2.dot(&self.bodies[b2].angular_velocity_in_world);
                u_start += r.row.ang1.dot(&self.s.body.w_start[b1])
                    + r.row.ang2.dot(&self.s.body.w_start[b2]);
            }
            let sr = &mut self.s.spring_rows[i];
            sr.e_end = e_pred;
            sr.u_lin = u_now;
            sr.u_start = u_start;
        }
        self.s.spring_extensions_at = self.s.versions.prediction;
        if let Some(s) = self.stylus {
            let b = &self.bodies[s.body];
            let arm = self.s.stylus_block.arm;
            let pred = &self.s.body.predicted[s.body];
            let tip_end = self.stylus_target.map_or(Vector3::zeros(), |t| {
                t.position_in_world.coords + t.velocity_in_world * h
            });
            let e_pred = pred.x + pred.r * s.point_in_body - tip_end;
            let u_now = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&arm);
            let u_start = self.s.body.v_start[s.body] + self.s.body.w_start[s.body].cross(&arm);
            let blk = &mut self.s.stylus_block;
            blk.e_lin = e_pred;
            blk.u_lin = u_now;
            blk.u_start = u_start;
        }
    }

    /// Largest nonlinear error at the current prediction, as a velocity: joints
    /// |ψ̂ − (1 − β)ψₙ| / h, soft elements the velocity change still owed.
    pub(super) fn nonlinear_residual(&mut self) -> f64 {
        let h = self.ctx.h;
        let keep = 1.0 - self.ctx.beta;
        self.evaluate_predicted_psi();
        // The largest error, then one division (as h > 0, the same as the largest quotient).
        let mut closure = 0.0_f64;
        for blk in &self.s.joint.blocks {
            closure = larger(closure, blk.largest_closure_error(keep));
        }
        let mut residual = closure / h;
        for i in 0..self.springs.len() {
            if let Some(r) = self.spring_residual_velocity(i) {
                residual = residual.max(r);
            }
        }
        residual
    }

    pub(super) fn predict_all(&mut self) {
        let h = self.ctx.h;
        let norms = &mut self.s.body.prediction_norm;
        for (((((p, b), s), v0), w0), n) in self
            .s
            .body
            .predicted
            .iter_mut()
            .zip(self.bodies.iter())
            .zip(&self.s.body.start)
            .zip(&self.s.body.v_start)
            .zip(&self.s.body.w_start)
            .zip(norms.iter_mut())
        {
            // A fixed body's prediction is its start pose, which it already holds.
            *n = if b.is_dynamic() {
                p.set_predicted_unnormalised(s, v0, w0, b, h)
            } else {
                1.0
            };
        }
        for n in norms.iter_mut() {
            *n = 1.0 / n.sqrt();
        }
        for ((p, b), n) in self
            .s
            .body
            .predicted
            .iter_mut()
            .zip(self.bodies.iter())
            .zip(norms.iter())
        {
            if b.is_dynamic() {
                p.finish_predicted(*n);
            }
        }
        self.s.versions.prediction.advance();
    }
}
