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
    /// A parameter is out of range.
    #[error("bad value {value} for {field}")]
    BadParameter {
        /// Parameter name.
        field: &'static str,
        /// The rejected value.
        value: f64,
    },
}
