//! Why a step failed, in terms a user can act on: the time, the cause (a non-finite state, or
//! a step that did not converge even split into the shortest sub-steps), the elements with
//! the largest residuals, and the last finite constraint error.

use std::fmt;

use super::Step;

/// The cause of a failed step.
#[derive(Clone, Debug, PartialEq)]
pub enum FailureCause {
    /// A pose, velocity or impulse became NaN or infinite.
    NonFinite {
        /// What first held a non-finite value, e.g. "body `p3` angular velocity".
        what: String,
    },
    /// Detection found more contact points than it keeps (the scene is flying apart, or far
    /// denser than any desk scene).
    TooManyContacts {
        /// The contact model's `max_points`.
        limit: usize,
    },
    /// The contact solve through the joints (dense) would need more memory than it may take.
    ThroughJointsTooLarge {
        /// Contacts and limit ends in the solve.
        contacts: usize,
        /// What its buffers would need (bytes).
        bytes: usize,
        /// [`crate::contact::through_joints::MAX_DENSE_BYTES`].
        limit: usize,
    },
    /// The step did not converge even when split into the most sub-steps.
    NotConverged {
        /// Sub-steps of the last attempt.
        substeps: usize,
        /// Nonlinear velocity residual of the failing sub-step (m/s) and its tolerance.
        velocity_residual: f64,
        /// The velocity tolerance (m/s).
        velocity_tolerance: f64,
        /// ‖ψ‖ after the failing sub-step (m) and the position tolerance (m).
        constraint_norm_m: f64,
        /// The position tolerance (m).
        position_tolerance_m: f64,
    },
}

/// An element and its residual in the failing sub-step (m/s: a joint's closure error / h, a
/// soft element's velocity change still owed).
#[derive(Clone, Debug, PartialEq)]
pub struct ElementResidual {
    /// "joint `name`", "spring `name`" or "stylus spring".
    pub element: String,
    /// Its residual (m/s; NaN if non-finite).
    pub residual_m_per_s: f64,
}

/// A step the solver could not take. The simulation keeps the state before it.
#[derive(Clone, Debug, PartialEq)]
pub struct StepFailure {
    /// Simulated time at the start of the failed step (s).
    pub time_secs: f64,
    /// Its length (s).
    pub dt_secs: f64,
    /// Why it failed.
    pub cause: FailureCause,
    /// The elements with the largest residuals, largest (or non-finite) first; at most three.
    pub worst_elements: Vec<ElementResidual>,
    /// ‖ψ‖ at the end of the last step that succeeded (m).
    pub last_finite_constraint_norm_m: f64,
}

impl fmt::Display for StepFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the step from t = {:.6} s to {:.6} s failed: ",
            self.time_secs,
            self.time_secs + self.dt_secs
        )?;
        match &self.cause {
            FailureCause::NonFinite { what } => write!(f, "{what} is not finite")?,
            FailureCause::TooManyContacts { limit } => write!(
                f,
                "contact detection found more than {limit} contact points (the scene is flying \
                 apart, or far denser than a desk scene)"
            )?,
            FailureCause::ThroughJointsTooLarge {
                contacts,
                bytes,
                limit,
            } => write!(
                f,
                "the contact solve through the joints would need {} MB for {contacts} contacts \
                 and limit ends, over the limit of {} MB (it is dense over every body of the \
                 scene)",
                bytes / 1_000_000,
                limit / 1_000_000
            )?,
            FailureCause::NotConverged {
                substeps,
                velocity_residual,
                velocity_tolerance,
                constraint_norm_m,
                position_tolerance_m,
            } => write!(
                f,
                "it did not converge even split into {substeps} sub-steps (velocity residual \
                 {velocity_residual:.3e} m/s, tolerance {velocity_tolerance:.1e}; |psi| \
                 {:.3e} m, tolerance {position_tolerance_m:.1e})",
                constraint_norm_m + 0.0
            )?,
        }
        if !self.worst_elements.is_empty() {
            write!(f, "; largest residuals: ")?;
            for (i, e) in self.worst_elements.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{} {:.3e} m/s", e.element, e.residual_m_per_s)?;
            }
        }
        write!(
            f,
            "; last finite |psi| {:.3e} m",
            // (+ 0.0 prints an empty sum's −0 as 0.)
            self.last_finite_constraint_norm_m + 0.0
        )
    }
}

impl Step<'_> {
    /// The first non-finite pose, velocity or impulse, if any.
    pub(super) fn first_non_finite(&self) -> Option<String> {
        for b in self.bodies.iter().filter(|b| b.is_dynamic()) {
            // Finite but huge velocities overflow the kinetic energy first.
            let part = b
                .non_finite_state()
                .or_else(|| (!b.kinetic_energy_j().is_finite()).then_some("kinetic energy"));
            if let Some(what) = part {
                return Some(format!("body `{}` {what}", b.name));
            }
        }
        for (j, blk) in self.joints.iter().zip(&self.s.joint.blocks) {
            if !blk.lambda[..j.rows()].iter().all(|x| x.is_finite()) {
                return Some(format!("the impulse of joint `{}`", j.name));
            }
        }
        for (s, r) in self.springs.iter().zip(&self.s.spring_rows) {
            if !r.lambda.is_finite() {
                return Some(format!("the impulse of spring `{}`", s.name));
            }
        }
        if self.stylus.is_some() && !self.s.stylus_block.lambda.iter().all(|x| x.is_finite()) {
            return Some("the impulse of the stylus spring".to_owned());
        }
        self.s.diagnostics.non_finite().map(str::to_owned)
    }

    /// Every element's residual at the last prediction, largest (NaN first) first, at most
    /// three.
    pub(super) fn worst_elements(&mut self) -> Vec<ElementResidual> {
        let h = self.ctx.h;
        let keep = 1.0 - self.ctx.beta;
        self.evaluate_predicted_psi();
        let mut all: Vec<ElementResidual> = Vec::new();
        for (j, blk) in self.joints.iter().zip(&self.s.joint.blocks) {
            let mut worst = 0.0_f64;
            for k in 0..j.rows() {
                let e = blk.closure_error(k, keep).abs();
                worst = if e.is_nan() { f64::NAN } else { worst.max(e) };
            }
            all.push(ElementResidual {
                element: format!("joint `{}`", j.name),
                residual_m_per_s: worst / h,
            });
        }
        for i in 0..self.springs.len() {
            if let Some(r) = self.spring_residual_velocity(i) {
                all.push(ElementResidual {
                    element: format!("spring `{}`", self.springs[i].name),
                    residual_m_per_s: r,
                });
            }
        }
        let key = |e: &ElementResidual| {
            if e.residual_m_per_s.is_nan() {
                f64::INFINITY
            } else {
                e.residual_m_per_s
            }
        };
        all.sort_by(|a, b| key(b).total_cmp(&key(a)));
        all.truncate(3);
        all.retain(|e| e.residual_m_per_s != 0.0);
        all
    }
}
