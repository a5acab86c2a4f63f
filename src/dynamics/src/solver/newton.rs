//! The Newton gain: each body's (I − A)⁻¹ I, with A = ∂τ/∂ω′ the turning of the midpoint rows
//! under the impulses they carry, which makes the row refreshes a Newton iteration instead of
//! a slowly contracting fixed-point one. [`NewtonGain`] owns the gains, and its state machine
//! ([`NewtonCarry`] between steps, [`NewtonMode`] within one) says when they are used.

use nalgebra::{Matrix3, Vector3};

use super::rows::spring::MIN_SPRING_LENGTH_M;
use super::stamp::Stamp;
use super::Step;
use crate::linalg::block::{is_positive_definite3, skew_mul, spd_inverse3};
use crate::model::joint::cross_cross;

/// Largest entry of a Newton gain (I − A)⁻¹I that is used (see
/// `Step::update_newton_inertia`).
const MAX_NEWTON_GAIN: f64 = 10.0;
/// Steps without the Newton gain after it made a refresh diverge.
pub(super) const NEWTON_BACKOFF_STEPS: usize = 20;

impl Step<'_> {
    /// Sets each body's Newton inertia from the previous step's impulses (the current ones
    /// start at zero and end close to those): the A that step renewed after its first solve
    /// (`Self::renew_newton_gain`), or else A made now at the start poses.
    ///
    /// The midpoint rows turn with the end velocities, so a torque r̄ × F on a body changes
    /// with its own end angular velocity ω′ by A = ∂τ/∂ω′ (the joints'
    /// [`Joint::turning_stiffness`], and the same for springs and the stylus; the gyroscopic
    /// impulse adds (h/2)([Iω̄]× − [ω̄]×I)). The velocities
    /// solve ω′ = ω_free + I⁻¹ τ(ω′): re-evaluating the rows and re-applying the impulses is
    /// a fixed-point iteration that contracts only by ‖I⁻¹A‖, measured 0.25–0.4 on the
    /// swinging ten pendula, where the hanging chain's tension turns the light links' arms.
    /// Left unconverged it does not keep the midpoint identities, and the energy drifted
    /// (16 % after 60 s of free swing). The Newton step (I − A)⁻¹ I applied to the change of
    /// ω, and (I − A)⁻¹ in place of I⁻¹ in the coupled matrix, converges in a few
    /// iterations. A body whose I − A is not safely positive definite (a huge pull on a
    /// light body) keeps the plain iteration and, if that diverges, the step splitting.
    ///
    /// After a jump in the loads (the stylus clipped or released) the last step's impulses do
    /// not estimate this step's, so the step starts without the gain and renews it from its
    /// first solve's impulses at the first refresh ([`NewtonMode::AtFirstRefresh`]). Without it, the plain
    /// iteration diverged on the release step of the 100- and 1000-link chains (contraction
    /// 0.2–0.5, then growth) and the step was split. Sub-steps of a split step keep the plain
    /// iteration (see [`super::split`]).
    pub(super) fn update_newton_inertia(&mut self) {
        let carry = std::mem::replace(&mut self.s.newton.carry, NewtonCarry::Nothing);
        self.s.newton.mode = NewtonMode::Off;
        // Without row refreshes the rows never turn within a step: nothing to anticipate.
        if !self.s.linear.is_coupled() || self.ctx.max_row_refreshes == 0 {
            if let NewtonCarry::BackingOff(steps) = carry {
                self.s.newton.mode = NewtonMode::BackingOff { after: steps };
            }
            return;
        }
        self.s.newton.mode = match carry {
            NewtonCarry::BackingOff(steps) => NewtonMode::BackingOff { after: steps - 1 },
            NewtonCarry::Nothing => NewtonMode::Off,
            NewtonCarry::LoadsJumped => NewtonMode::AtFirstRefresh,
            // The last step renewed A from its first solve's impulses, which differ from its
            // final ones by less than the step-to-step change: starting from that A is as good
            // as making it again (same solves per step, and as many split steps over ten 300 s
            // free swings, 74207 against 67994, within the spread that rounding alone causes)
            // and saves 4 % of a ten-pendula step.
            NewtonCarry::Renewed => {
                if self.s.newton.inertia_of != self.s.newton.turning_version {
                    self.newton_inertia_from_turning();
                }
                NewtonMode::On { renewed: false }
            }
            NewtonCarry::LastImpulses => {
                self.collect_turning_stiffness();
                let gain = self.newton_gain_from_turning();
                let inertia = self.newton_inertia_from_turning();
                if gain || inertia {
                    NewtonMode::On { renewed: false }
                } else {
                    NewtonMode::Off
                }
            }
        };
        if self.s.newton.is_on() {
            // I⁻¹ is this step's.
            self.update_solve_inertia();
        }
    }

    /// At the first row refresh: renews the gain from this step's first solve when it is on,
    /// or starts it from there after a jump in the loads.
    pub(super) fn newton_at_first_refresh(&mut self) {
        match self.s.newton.mode {
            NewtonMode::On { .. } => {
                let renewed = self.renew_newton_gain();
                self.s.newton.mode = NewtonMode::On { renewed };
            }
            NewtonMode::AtFirstRefresh => {
                self.s.newton.mode = if self.renew_newton_gain() {
                    NewtonMode::On { renewed: true }
                } else {
                    NewtonMode::Off
                };
            }
            NewtonMode::Off | NewtonMode::BackingOff { .. } => {}
        }
    }

    /// Sets each body's Newton gain (I − A)⁻¹I from its A (`turning`); a body for which it is
    /// unsafe keeps the identity. Returns whether any body got a gain.
    pub(super) fn newton_gain_from_turning(&mut self) -> bool {
        let mut any = false;
        for (b, body) in self.bodies.iter().enumerate() {
            let a = &self.s.newton.turning[b];
            self.s.newton.gain[b] = Matrix3::identity();
            if !body.is_dynamic() || a.iter().all(|x| *x == 0.0) {
                continue;
            }
            if let Some(g) = newton_gain_of(&self.s.body.inertia[b], a) {
                self.s.newton.gain[b] = g;
                any = true;
            }
        }
        any
    }

    /// Sets each body's coupled-matrix inertia (I − A_sym)⁻¹ from its A (`turning`); a body
    /// for which it is unsafe keeps I⁻¹. Returns whether any body got one.
    pub(super) fn newton_inertia_from_turning(&mut self) -> bool {
        let mut any = false;
        for (b, body) in self.bodies.iter().enumerate() {
            let a = &self.s.newton.turning[b];
            self.s.newton.inv_inertia[b] = self.s.body.inv_inertia[b];
            if !body.is_dynamic() || a.iter().all(|x| *x == 0.0) {
                continue;
            }
            let inertia = self.s.body.inertia[b];
            // The coupled matrix needs a symmetric positive definite I − A: with a margin
            // of 1/4, as A is an estimate; otherwise that body keeps I⁻¹ there (a chord).
            let a_sym = (a + a.transpose()) * 0.5;
            if is_positive_definite3(&(inertia - a_sym * 1.25)) {
                if let Some(w) = spd_inverse3(&(inertia - a_sym)) {
                    self.s.newton.inv_inertia[b] = w;
                    any = true;
                }
            }
        }
        self.s.newton.inertia_of = self.s.newton.turning_version;
        any
    }

    /// Sets `turning` to each body's A = ∂τ/∂ω′ for the impulses the elements hold now, at the
    /// start poses (see [`Self::update_newton_inertia`]).
    pub(super) fn collect_turning_stiffness(&mut self) {
        let h = self.ctx.h;
        self.s.newton.turning_version.advance();
        for a in &mut self.s.newton.turning {
            *a = Matrix3::zeros();
        }
        // The flushes apply a body's torque impulse P as P − φ × P, φ = (h/2) ω̄ (see
        // `reset_to_free_motion`), which adds ∂/∂ω′ = (h/4)[P]×. With the arms' turning,
        // (h/4)([F]×[r]× + [r × F]×) = (h/4)[r]×[F]×: no torque about the arm's own direction,
        // as in the midpoint frame. (Without it the gain expected a thin link to spin about
        // its axis and the refreshes diverged more often.) The springs' and the stylus's terms
        // below are that product.
        let q = 0.25 * h;
        for (j, blk) in self.joints.iter().zip(&self.s.joint.blocks) {
            let (a1, a2) = j.turning_stiffness(&blk.geometry_start, &blk.lambda, h);
            let (mut p1, mut p2) = (Vector3::zeros(), Vector3::zeros());
            for (row, l) in blk.rows[..j.rows()].iter().zip(&blk.lambda) {
                p1 += row.ang1 * *l;
                p2 += row.ang2 * *l;
            }
            // ((p q) as a cross matrix is [p]× q bit for bit, with 3 products instead of 9.)
            self.s.newton.turning[j.body1] += a1 + (p1 * q).cross_matrix();
            self.s.newton.turning[j.body2] += a2 + (p2 * q).cross_matrix();
        }
        // The gyroscopic impulse h (I ω̄) × ω̄, ω̄ = (ω₀ + ω′)/2, at ω̄ ≈ ω₀:
        // A = (h/2)([I ω̄]× − [ω̄]× I).
        for ((a, b), (inertia, w)) in self
            .s
            .newton
            .turning
            .iter_mut()
            .zip(self.bodies.iter())
            .zip(self.s.body.inertia.iter().zip(&self.s.body.w_start))
        {
            if b.is_dynamic() {
                *a += ((inertia * w).cross_matrix() - skew_mul(w, inertia)) * (0.5 * h);
            }
        }
        for (s, r) in self.springs.iter().zip(&self.s.spring_rows) {
            if s.at_centres() {
                // No arms: no torque.
                continue;
            }
            let (p1, p2) = (&self.s.body.start[s.body1], &self.s.body.start[s.body2]);
            let (r1, r2) = (p1.r * s.point1_in_body1, p2.r * s.point2_in_body2);
            let d = (p2.x + r2) - (p1.x + r1);
            let len = d.norm();
            if len < MIN_SPRING_LENGTH_M {
                continue;
            }
            // Force n λ on body 2, −n λ on body 1.
            let f = d * (r.lambda / len);
            self.s.newton.turning[s.body1] -= cross_cross(&r1, &f) * q;
            self.s.newton.turning[s.body2] += cross_cross(&r2, &f) * q;
        }
        if let Some(s) = self.stylus {
            let arm = self.s.body.start[s.body].r * s.point_in_body;
            self.s.newton.turning[s.body] += cross_cross(&arm, &self.s.stylus_block.lambda) * q;
        }
    }

    /// Renews the Newton gain and inertia from this step's impulses, once the first solve has
    /// found them.
    ///
    /// The previous step's impulses estimate A only roughly: on the swinging ten pendula the
    /// joints' impulses change by 4–11 % from one step to the next (neither their trend
    /// 2λₙ₋₁ − λₙ₋₂ nor their mean predicted them better), and the refreshes then contracted by
    /// ~0.03 each; in the chaotic phase of a long free swing the stale gain made most steps
    /// fail to converge and split. With A from the first solve's impulses the refreshes
    /// contract by ~0.005. The current factor keeps the step's first (I − A)⁻¹ (a chord: a
    /// refactorisation costs more than the solves it would save); a refactorisation, when the
    /// chord contracts too slowly, takes the renewed one. The next step starts from this A
    /// too ([`Self::update_newton_inertia`]).
    /// Returns whether any body got a gain.
    pub(super) fn renew_newton_gain(&mut self) -> bool {
        self.collect_turning_stiffness();
        let renewed = self.newton_gain_from_turning();
        self.update_solve_inertia();
        renewed
    }

    /// Replaces each body's angular-velocity change since `velocity_snapshot` by its Newton
    /// change G Δω (see [`Self::update_newton_inertia`]).
    pub(super) fn apply_newton_gain(&mut self) {
        if !self.s.newton.is_on() {
            return;
        }
        for ((b, (_, w0)), g) in self
            .bodies
            .iter_mut()
            .zip(&self.s.body.velocity_snapshot)
            .zip(&self.s.newton.gain)
        {
            if b.is_dynamic() {
                b.angular_velocity_in_world = w0 + g * (b.angular_velocity_in_world - w0);
            }
        }
    }

    /// Sets G I⁻¹ per body from the current Newton gain (see [`Self::flush_torques`]).
    pub(super) fn update_solve_inertia(&mut self) {
        for ((m, g), ii) in self
            .s
            .newton
            .solve_inv_inertia
            .iter_mut()
            .zip(&self.s.newton.gain)
            .zip(&self.s.body.inv_inertia)
        {
            *m = g * ii;
        }
    }
}

/// The Newton gain (I − A)⁻¹ I of a body, if I − A is invertible and the gain bounded (the
/// A it is made from is only an estimate, so a near-singular I − A would amplify its error).
pub(super) fn newton_gain_of(inertia: &Matrix3<f64>, a: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    (inertia - a)
        .try_inverse()
        .map(|inv| inv * inertia)
        // (Not amax: a NaN entry must reject the gain.)
        .filter(|g| g.iter().all(|x| x.abs() <= MAX_NEWTON_GAIN))
}

/// What the next step's Newton gain may start from: the state the gain carries from one step
/// to the next (see [`Step::update_newton_inertia`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NewtonCarry {
    /// Nothing: the first step, the sub-steps of a split step, a step taken back, the step
    /// after the joints changed. The step goes without the gain.
    Nothing,
    /// The last step's impulses estimate this step's: the gain is made from them.
    LastImpulses,
    /// The last step renewed the gain from its first solve's impulses: this step starts
    /// from that gain.
    Renewed,
    /// The loads jumped (the stylus clipped or released, a body's velocity set, a connection
    /// broke): the last impulses do not estimate this step's, so the step starts without the
    /// gain and makes it from its first solve, at its first refresh.
    LoadsJumped,
    /// The gain made a refresh diverge: the next this many (sub-)steps go without it.
    BackingOff(usize),
}

/// The Newton gain within the current step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NewtonMode {
    /// Not used in this step.
    Off,
    /// Not used until the first refresh, which makes it from this step's first solve.
    AtFirstRefresh,
    /// Used; `renewed` once it was made again from this step's first solve with a gain for
    /// some body (the next step then starts from it).
    On {
        /// Whether the first refresh renewed it.
        renewed: bool,
    },
    /// Not used in this step (it misled a refresh), nor in the `after` (sub-)steps after it.
    BackingOff {
        /// Steps still to go without the gain after this one.
        after: usize,
    },
}

/// Each body's Newton gain and inertia, the A they were made from, and the state that says
/// when they are used (see [`Step::update_newton_inertia`]).
#[derive(Clone, Debug)]
pub(crate) struct NewtonGain {
    /// Per body, the inverse of the Newton inertia I − ∂τ/∂ω′ (symmetric part) that the
    /// coupled matrix uses.
    pub(crate) inv_inertia: Vec<Matrix3<f64>>,
    /// Per body, the gain (I − ∂τ/∂ω′)⁻¹ I that turns a plain angular-velocity change into a
    /// Newton one.
    pub(crate) gain: Vec<Matrix3<f64>>,
    /// Per body, A = ∂τ/∂ω′ that the gain and inertia were made from.
    pub(crate) turning: Vec<Matrix3<f64>>,
    /// G I⁻¹ per body: what an impulse's torque does to ω in a solve with the gain.
    pub(crate) solve_inv_inertia: Vec<Matrix3<f64>>,
    /// The version of `turning` (it moves on each time A is collected).
    pub(crate) turning_version: Stamp,
    /// The version of `turning` that `inv_inertia` was made from; an older one is made again
    /// at the next factorisation.
    pub(crate) inertia_of: Stamp,
    /// What the next step starts from.
    pub(crate) carry: NewtonCarry,
    /// The gain in the current step.
    pub(crate) mode: NewtonMode,
}

impl NewtonGain {
    /// Whether the gain is used in the current step.
    pub(crate) fn is_on(&self) -> bool {
        matches!(self.mode, NewtonMode::On { .. })
    }

    /// The loads jumped between steps (see [`NewtonCarry::LoadsJumped`]); a gain that is
    /// backing off stays off.
    pub(crate) fn loads_jumped(&mut self) {
        if !matches!(self.carry, NewtonCarry::BackingOff(_)) {
            self.carry = NewtonCarry::LoadsJumped;
        }
    }

    /// The last (sub-)step's impulses do not estimate the next one's (a split step's
    /// sub-steps, a step taken back): it goes without the gain, unless the loads jumped (it
    /// then starts at its first refresh) or the gain is backing off.
    pub(crate) fn nothing_carries_over(&mut self) {
        if matches!(self.carry, NewtonCarry::LastImpulses | NewtonCarry::Renewed) {
            self.carry = NewtonCarry::Nothing;
        }
    }

    /// A refresh diverged with the gain on: off for this step and the next
    /// [`NEWTON_BACKOFF_STEPS`].
    pub(crate) fn back_off(&mut self) {
        self.mode = NewtonMode::BackingOff {
            after: NEWTON_BACKOFF_STEPS,
        };
    }

    /// At the end of a (sub-)step's velocity stage: what the next one starts from.
    pub(crate) fn end_step(&mut self) {
        self.carry = match self.mode {
            NewtonMode::BackingOff { after } if after > 0 => NewtonCarry::BackingOff(after),
            NewtonMode::On { renewed: true } => NewtonCarry::Renewed,
            _ => NewtonCarry::LastImpulses,
        };
    }

    /// Identity gains for `n` bodies.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            inv_inertia: vec![Matrix3::zeros(); n],
            gain: vec![Matrix3::identity(); n],
            turning: vec![Matrix3::zeros(); n],
            solve_inv_inertia: vec![Matrix3::zeros(); n],
            turning_version: Stamp::FIRST,
            inertia_of: Stamp::FIRST,
            carry: NewtonCarry::Nothing,
            mode: NewtonMode::Off,
        }
    }
}
