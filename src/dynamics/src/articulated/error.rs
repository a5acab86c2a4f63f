//! Errors of the articulated method.

use thiserror::Error;

/// The articulated method could not build its tree or take a step.
#[derive(Debug, Error, PartialEq)]
pub enum ArticulatedError {
    /// A link cannot be added as given.
    #[error("link `{link}`: {reason}")]
    BadTree {
        /// The link's name.
        link: String,
        /// What is wrong.
        reason: String,
    },
    /// The scene has something this method does not (yet) handle.
    #[error("the articulated method cannot run this scene: {0}")]
    Unsupported(String),
    /// A joint's articulated inertia S ᵀ I^A S is singular (a massless link, or one whose
    /// motion has no inertia).
    #[error("joint of link `{link}` has a singular articulated inertia SᵀIᴬS")]
    SingularJoint {
        /// The link's name.
        link: String,
    },
    /// The state became NaN or infinite.
    #[error("the state of body `{body}` became non-finite at t = {time_secs} s")]
    NonFinite {
        /// Simulated time (s).
        time_secs: f64,
        /// The first body (link) with a non-finite pose or velocity.
        body: String,
    },
    /// The adaptive integrator could not meet its tolerance.
    #[error(
        "RK45 step size fell to {step_secs:e} s at t = {time_secs} s (tolerance {tolerance:e})"
    )]
    StepTooSmall {
        /// Simulated time (s).
        time_secs: f64,
        /// The step size reached (s).
        step_secs: f64,
        /// The tolerance asked for.
        tolerance: f64,
    },
    /// A loop-closing joint cannot be closed at the scene's initial pose.
    #[error(
        "loop joint `{joint}` cannot be closed at the initial pose: |ψ| = {psi_m:e} m after \
         {iterations} Gauss–Newton iterations"
    )]
    LoopAssembly {
        /// The loop-closing joint with the largest error.
        joint: String,
        /// Its largest |ψ| row (m, or rad for angular rows).
        psi_m: f64,
        /// Iterations made.
        iterations: usize,
    },
    /// A loop-closing joint drifted past the bound the drift correction should keep it in.
    #[error(
        "loop joint `{joint}` drifted open: |ψ| = {psi_m:e} m at t = {time_secs} s \
         (bound {bound_m:e} m; a smaller step or RK45 keeps loops closed)"
    )]
    LoopDrift {
        /// Simulated time (s).
        time_secs: f64,
        /// The loop-closing joint with the largest error.
        joint: String,
        /// Its largest |ψ| row (m, or rad for angular rows).
        psi_m: f64,
        /// The bound (m).
        bound_m: f64,
    },
    /// The loop equations could not be solved (mass matrix not positive definite, SVD not
    /// converged, or loop rows that ask for more than the mechanism can do).
    #[error("loop solve failed at t = {time_secs} s: {reason}")]
    LoopSolve {
        /// Simulated time (s).
        time_secs: f64,
        /// What failed.
        reason: String,
    },
    /// A parameter is out of range.
    #[error("bad value {value} for {field}")]
    BadParameter {
        /// Parameter name.
        field: &'static str,
        /// The rejected value.
        value: f64,
    },
}
