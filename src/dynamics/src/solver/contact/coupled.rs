//! Contacts coupled with the springs: the contact rows and the velocity stage solved to one
//! solution.
//!
//! The velocity stage makes each spring's midpoint impulse −h k (eₙ + eₙ₊₁)/2 − h c ē hold
//! at the end pose it predicts. A contact solve after it moves that end pose, so the impulse
//! no longer matches the spring's end extension, and the difference is work that nothing
//! supplied (on a cloth draped over a box, about a tenth of its energy, and at rest the
//! contacts stretch the sheet slowly).
//!
//! Here the contacts are solved with the springs in them, as Newton iterations on the
//! coupled problem:
//! - The contact solve ([`through_soft_rows`]) takes every spring as a soft
//!   bilateral row, its implicit law linearised at the velocity stage's solution: the row
//!   velocity changes by −ε Δλ under a change Δλ of its impulse, ε = 1/(½ h (½ h k + c)).
//!   So the contacts see the sheet's stiffness (W = J_c P J_cᵀ with the springs' compliance
//!   in P) and find their impulses for the springs' linear response, starting from the
//!   contact impulses already applied. Its matrices are formed in the step's first round
//!   and kept (a chord iteration: the rows move little between rounds, and the rounds'
//!   fixed point does not depend on them).
//! - The contacts' own velocity change then joins the free motion, and the velocity stage
//!   solves the springs' nonlinear laws again with the contact impulses held, from the
//!   last round's impulses (within a step the rows hardly move; `warm_start` explains why
//!   the coupled solve does not carry impulses from step to step).
//! - The rounds end when a contact solve would move the velocities by less than the
//!   velocity tolerance: the contacts' law then holds at the velocity stage's solution, so
//!   the step ends on it and the springs' work identities hold exactly.
//!
//! - A contact solve whose sweeps leave the contact law off by more than
//!   [`MAX_ROUND_RESIDUAL_M_PER_S`] (projected Gauss–Seidel stalls, or diverges, on some
//!   stiff ropes whose contacts press the elements along their connections), or a round that
//!   would move the velocities more than the last one, ends the rounds without its impulses:
//!   the step keeps the last round's, or in the first round solves the contacts after the
//!   velocity stage, as without springs.
//!
//! On the shipped cloth (64 elements, 161 springs, about 30 contacts) the change falls by
//! 10–100 per round and a step takes 5–8 rounds and about 23 linear solves. The contacts'
//! work Σ λ ū is booked once, from the final velocities. The contact solve is dense in the
//! rows (as for joints); a network too large for it keeps the contact solve after the
//! velocity stage ([`Step::couples_contacts`]).

use nalgebra::{Vector2, Vector3};

use super::bilateral::{bilateral_between, push_joint_rows};
use super::row_velocities;
use crate::contact::lcp::ContactImpulse;
use crate::contact::{through_joints, through_soft_rows};
use crate::contact::{InequalityMethod, DEFAULT_IMPACT_SPEED_M_PER_S};
use crate::solver::step::VelocityOutcome;
use crate::solver::Step;

/// Rounds (contact solve, velocity stage) per step at most.
pub(in crate::solver) const MAX_COUPLED_ROUNDS: usize = 20;
/// A round's contact solve that leaves a larger complementarity residual than this (m/s)
/// has not solved the contacts (its sweeps stalled or diverged).
const MAX_ROUND_RESIDUAL_M_PER_S: f64 = 1.0e-3;
/// Lever arm that turns an angular-velocity change into a velocity for the rounds' test (m).
const ROUND_LEVER_M: f64 = 0.1;
/// The most the dense buffers of the coupled contact solve may take (bytes; about 700
/// springs and joint rows): above it the contacts are solved after the velocity stage (the
/// dense factor of K_b would take longer than a step of the interactive scenes).
const MAX_COUPLED_BYTES: usize = 8 << 20;

/// The rounds' scratch.
#[derive(Clone, Debug, Default)]
pub(crate) struct CoupledScratch {
    /// Per contact, the impulse (normal, t₁, t₂) the velocities hold.
    applied: Vec<[f64; 3]>,
    /// The contacts' own velocity change of a round (linear, angular).
    dv: Vec<Vector3<f64>>,
    dw: Vec<Vector3<f64>>,
    /// Rounds of the last step (0 when the contacts were solved after the velocity stage).
    pub(crate) rounds: usize,
}

impl Step<'_> {
    /// Whether the contacts are solved together with the velocity stage: a scene with contact
    /// (the `right` method) and springs, without joint limits (whose impulses accumulate
    /// over the step's stages), whose dense solve fits [`MAX_COUPLED_BYTES`].
    pub(in crate::solver) fn couples_contacts(&self) -> bool {
        let Some(model) = self.contact else {
            return false;
        };
        if self.springs.is_empty() || self.has_limits() || model.method != InequalityMethod::Right {
            return false;
        }
        let joint_rows: usize = self.joints.iter().map(|j| j.rows()).sum();
        through_soft_rows::dense_bytes(joint_rows + self.springs.len(), self.s.contact.points.len())
            <= MAX_COUPLED_BYTES
    }

    /// The contact solves and the velocity stage in rounds (see the module docs); returns the
    /// last velocity stage's outcome, its iterations counting all rounds'.
    pub(in crate::solver) fn coupled_contact_rounds(
        &mut self,
        first: VelocityOutcome,
    ) -> VelocityOutcome {
        let tolerance = self.ctx.velocity_tolerance;
        let h = self.ctx.h;
        let v_imp = self
            .contact
            .map_or(DEFAULT_IMPACT_SPEED_M_PER_S, |m| m.impact_speed_m_per_s);
        let mut scratch = std::mem::take(&mut self.s.contact.coupled);
        scratch.applied.clear();
        scratch
            .applied
            .resize(self.s.contact.points.len(), [0.0; 3]);
        let mut outcome = first;
        let mut iterations = first.iterations;
        let mut rounds = 0;
        let mut sweeps = 0;
        let mut change = 0.0;
        let mut previous = f64::INFINITY;
        while !scratch.applied.is_empty() {
            rounds += 1;
            let Some(stats) =
                self.solve_contacts_with_springs(h, v_imp, &scratch.applied, rounds == 1)
            else {
                // Nothing to solve: no round was needed.
                rounds = 0;
                break;
            };
            sweeps += stats.sweeps;
            let c = &self.s.contact;
            change = self
                .bodies
                .iter()
                .zip(c.delta.v.iter().zip(&c.delta.w))
                .filter(|(b, _)| b.is_dynamic())
                .map(|(_, (v, w))| v.norm() + ROUND_LEVER_M * w.norm())
                .fold(0.0, f64::max);
            // A solve that left the contact law far from holding (its sweeps stalled or
            // diverged), or a round that moved more than the last, ends the rounds without
            // taking its impulses; in the first round the contacts are then solved after the
            // velocity stage, as without springs.
            let failed = !change.is_finite()
                || stats.residual_m_per_s.is_nan()
                || stats.residual_m_per_s > MAX_ROUND_RESIDUAL_M_PER_S
                || change > previous;
            if failed && rounds == 1 {
                scratch.rounds = 0;
                self.s.contact.coupled = scratch;
                self.contact_solve(true);
                return first;
            }
            if failed {
                // The kept impulses are the last round's: its change is the estimate.
                change = previous;
                break;
            }
            if change < tolerance || rounds >= MAX_COUPLED_ROUNDS {
                break;
            }
            previous = change;
            // The contacts' own change (not the springs' response, which the velocity stage
            // solves again) joins the free motion.
            let c = &self.s.contact;
            scratch.dv.clear();
            scratch.dv.resize(c.inv_mass.len(), Vector3::zeros());
            scratch.dw.clear();
            scratch.dw.resize(c.inv_mass.len(), Vector3::zeros());
            for ((k, imp), applied) in c.rows.iter().zip(&c.impulses).zip(&mut scratch.applied) {
                let total = [imp.normal, imp.tangent.x, imp.tangent.y];
                for r in 0..3 {
                    let d = total[r] - applied[r];
                    if d != 0.0 {
                        k.rows[r].apply(d, &c.inv_mass, &mut scratch.dv, &mut scratch.dw);
                    }
                }
                *applied = total;
            }
            for (i, b) in self.bodies.iter().enumerate() {
                if b.is_dynamic() {
                    self.s.body.v_free[i] += scratch.dv[i];
                    self.s.body.w_free[i] += scratch.dw[i];
                }
            }
            // The velocity stage again, from the impulses of the last round (which the
            // velocities hold): the rows have hardly moved since.
            outcome = self.velocity_stage_from(true);
            iterations += outcome.iterations;
        }
        // The velocities hold the applied impulses: those are the step's (their row
        // velocities are filled in by the booking).
        let c = &mut self.s.contact;
        c.impulses.clear();
        c.impulses
            .extend(scratch.applied.iter().map(|a| ContactImpulse {
                handled: a[0] > 0.0,
                normal: a[0],
                tangent: Vector2::new(a[1], a[2]),
                u: [0.0; 3],
                spin: 0.0,
                u_spin: 0.0,
            }));
        if scratch.applied.is_empty() {
            c.rows.clear();
        }
        c.sweeps = sweeps;
        c.velocity_residual_m_per_s = if change < tolerance { 0.0 } else { change };
        c.sparse.remember(&c.points, &c.impulses);
        scratch.rounds = rounds;
        self.s.contact.coupled = scratch;
        self.predict_all();
        self.book_contact_work();
        VelocityOutcome {
            iterations,
            ..outcome
        }
    }

    /// One contact solve with the joints as bilateral rows and the springs as soft ones, from
    /// the velocities now, which hold the impulses `applied`; the first round forms the
    /// solve's matrices, later ones keep them. `None` when no contact is loaded or
    /// approaching (the solve would find zero impulses).
    fn solve_contacts_with_springs(
        &mut self,
        h: f64,
        v_imp: f64,
        applied: &[[f64; 3]],
        first_round: bool,
    ) -> Option<through_joints::SweepStats> {
        let mut now = std::mem::take(&mut self.s.contact.now);
        self.contact_velocities(false, &mut now);
        if first_round {
            let mut start = std::mem::take(&mut self.s.contact.start);
            self.contact_velocities(true, &mut start);
            let c = &mut self.s.contact;
            c.build_rows(&now, &start, h, v_imp);
            c.now = now;
            c.start = start;
            let idle = c.rows.iter().all(|k| k.u0[0] >= k.target);
            if idle {
                return None;
            }
            c.bilateral.clear();
            push_joint_rows(self.joints, &self.s.joint.blocks, &mut c.bilateral);
            for (s, r) in self.springs.iter().zip(&self.s.spring_rows) {
                let soft = s.step_compliance(h);
                if r.active && soft > 0.0 {
                    c.bilateral
                        .push(bilateral_between(s.body1, s.body2, &r.row, 0.0, 1.0 / soft));
                }
            }
            through_soft_rows::prepare(
                &c.rows,
                &c.bilateral,
                &c.inv_mass,
                &mut c.through_soft_rows,
            );
        } else {
            // The rows and their targets are the step's; only the row velocities move.
            let c = &mut self.s.contact;
            for k in &mut c.rows {
                k.u0 = row_velocities(&k.rows, &now.v, &now.w);
            }
            c.now = now;
        }
        let c = &mut self.s.contact;
        Some(through_soft_rows::solve_from(
            &c.rows,
            &c.bilateral,
            &c.inv_mass,
            applied,
            &mut c.through_soft_rows,
            &mut c.impulses,
            &mut c.delta,
        ))
    }

    /// Books the work Σ λ ū of the contacts' impulses, ū from the start and the current
    /// velocities, and the part of it the pushing tip does (the user's).
    fn book_contact_work(&mut self) {
        let mut now = std::mem::take(&mut self.s.contact.now);
        let mut start = std::mem::take(&mut self.s.contact.start);
        self.contact_velocities(false, &mut now);
        self.contact_velocities(true, &mut start);
        let (tip, v_tip) = self.tip_motion();
        let c = &mut self.s.contact;
        for (imp, rows) in c.impulses.iter_mut().zip(&c.rows) {
            imp.u = row_velocities(&rows.rows, &now.v, &now.w);
        }
        let (work, user) = c.impulse_work(&start.v, &start.w, tip, &v_tip);
        self.s.ledger.dissipated_j -= work;
        self.s.ledger.user_work_j += user;
        c.now = now;
        c.start = start;
    }
}
