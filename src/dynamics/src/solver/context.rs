//! The step context: the length h of the (sub-)step being taken and the tolerances, passed to
//! every stage explicitly (a split step takes shorter sub-steps with the same parameters).

use super::SolverParams;

/// What every stage of one (sub-)step reads: its length and the solver's tolerances and caps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StepContext {
    /// Length of this (sub-)step (s).
    pub(crate) h: f64,
    /// Baumgarte factor β of Eq. 27.
    pub(crate) beta: f64,
    /// Row-velocity tolerance (m/s or rad/s).
    pub(crate) velocity_tolerance: f64,
    /// ‖ψ‖ above which the position pass runs (m).
    pub(crate) position_tolerance_m: f64,
    /// Cap on linear solves (sweeps or coupled solves) per step.
    pub(crate) max_iterations: usize,
    /// Cap on position-correction sweeps.
    pub(crate) max_position_iterations: usize,
    /// Cap on row refreshes.
    pub(crate) max_row_refreshes: usize,
    /// Over-relaxation of the sweeps.
    pub(crate) relaxation: f64,
    /// Alternate the sweep direction.
    pub(crate) symmetric_sweeps: bool,
}

impl StepContext {
    /// The context of a full step with these parameters.
    pub(crate) fn new(params: &SolverParams) -> Self {
        Self {
            h: params.dt_secs,
            beta: params.beta,
            velocity_tolerance: params.velocity_tolerance,
            position_tolerance_m: params.position_tolerance_m,
            max_iterations: params.max_iterations,
            max_position_iterations: params.max_position_iterations,
            max_row_refreshes: params.max_row_refreshes,
            relaxation: params.relaxation,
            symmetric_sweeps: params.symmetric_sweeps,
        }
    }
}
