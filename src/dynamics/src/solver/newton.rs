//! The Newton gain: each body's (I − A)⁻¹ I, with A = ∂τ/∂ω′ the turning of the midpoint rows
//! under the impulses they carry, which makes the row refreshes a Newton iteration instead of
//! a slowly contracting fixed-point one. [`NewtonGain`] owns its state and flags.

use nalgebra::{Matrix3, Vector3};

use super::rows::spring::MIN_SPRING_LENGTH_M;
use super::stamp::Stamp;
use super::SolverMethod;
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
    /// first solve's impulses at the first refresh (`late_start`). Without it, the plain
    /// iteration diverged on the release step of the 100- and 1000-link chains (contraction
    /// 0.2–0.5, then growth) and the step was split. Sub-steps of a split step keep the plain
    /// iteration (see [`super::split`]).
    pub(super) fn update_newton_inertia(&mut self) {
        self.s.newton.active = false;
        self.s.newton.late_start = false;
        let renewed = std::mem::take(&mut self.s.newton.renewed);
        let loads_jumped = std::mem::take(&mut self.s.newton.loads_jumped);
        // Without row refreshes the rows never turn within a step: nothing to anticipate.
        if self.ctx.method != SolverMethod::Direct || self.ctx.max_row_refreshes == 0 {
            return;
        }
        if self.s.newton.backoff_steps > 0 {
            self.s.newton.backoff_steps -= 1;
            return;
        }
        if !self.s.impulses_carry_over {
            self.s.newton.late_start = loads_jumped;
            return;
        }
        // The last step renewed A from its first solve's impulses, which differ from its final
        // ones by less than the step-to-step change: starting from that A is as good as making
        // it again (same solves per step, and as many split steps over ten 300 s free swings,
        // 74207 against 67994, within the spread that rounding alone causes) and saves 4 % of
        // a ten-pendula step.
        if renewed {
            if self.s.newton.inertia_of != self.s.newton.turning_version {
                self.newton_inertia_from_turning();
            }
            self.s.newton.active = true;
        } else {
            self.collect_turning_stiffness();
            let gain = self.newton_gain_from_turning();
            let inertia = self.newton_inertia_from_turning();
            self.s.newton.active = gain || inertia;
        }
        if self.s.newton.active {
            // I⁻¹ is this step's.
            self.update_solve_inertia();
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
    pub(super) fn renew_newton_gain(&mut self) {
        self.collect_turning_stiffness();
        self.s.newton.renewed = self.newton_gain_from_turning();
        self.update_solve_inertia();
    }

    /// Replaces each body's angular-velocity change since `velocity_snapshot` by its Newton
    /// change G Δω (see [`Self::update_newton_inertia`]).
    pub(super) fn apply_newton_gain(&mut self) {
        if !self.s.newton.active {
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

/// Each body's Newton gain and inertia, the A they were made from, and the flags that say
/// which of them are current (see [`Step::update_newton_inertia`]).
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
    /// Whether the gain was renewed in the last step (and can start the next one).
    pub(crate) renewed: bool,
    /// Whether any body has a gain other than the identity this step.
    pub(crate) active: bool,
    /// Steps left in which the gain is not used, after it misled a refresh.
    pub(crate) backoff_steps: usize,
    /// Whether the loads jumped since the last step (the stylus clipped or released, a body's
    /// velocity set): the last step's impulses then do not estimate this step's, but the
    /// first solve's do, so the gain starts at the first refresh (see
    /// [`Step::update_newton_inertia`]).
    pub(crate) loads_jumped: bool,
    /// Whether this step may start the gain at its first refresh.
    pub(crate) late_start: bool,
}

impl NewtonGain {
    /// Identity gains for `n` bodies.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            inv_inertia: vec![Matrix3::zeros(); n],
            gain: vec![Matrix3::identity(); n],
            turning: vec![Matrix3::zeros(); n],
            solve_inv_inertia: vec![Matrix3::zeros(); n],
            turning_version: Stamp::FIRST,
            inertia_of: Stamp::FIRST,
            renewed: false,
            active: false,
            backoff_steps: 0,
            loads_jumped: false,
            late_start: false,
        }
    }
}
