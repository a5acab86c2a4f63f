//! Solver parameters: the method, the time step, the tolerances and the iteration caps.

use crate::error::SimError;

/// How the joint impulses of one linearisation are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverMethod {
    /// The paper's sequential impulses: Gauss–Seidel sweeps, each joint solving its own
    /// block, with over-relaxation `relaxation`. Cheap per sweep, but on long chains it
    /// needs hundreds of sweeps for ‖ψ‖ < 1e-6 m (measured: 0.986 error reduction per sweep
    /// on the ten pendula).
    GaussSeidel,
    /// The same per-joint rows and soft rows, coupled in one Cholesky factorisation of
    /// J M⁻¹ Jᵀ (+ the soft terms), each diagonal entry raised by 1e-6 of itself so that
    /// redundant constraints keep bounded impulses; the outer Newton iterations remove the
    /// small error this causes.
    Direct,
}

/// Solver parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParams {
    /// Fixed time step h (s).
    pub dt_secs: f64,
    /// Cap on velocity Gauss–Seidel sweeps per step.
    pub max_iterations: usize,
    /// Baumgarte factor β of Eq. 27, 0 ≤ β ≤ 1 (1 closes the position error in one step; 0
    /// leaves it to the position pass).
    pub beta: f64,
    /// Sweeps stop when every row-velocity correction is below this (m/s or rad/s).
    pub velocity_tolerance: f64,
    /// The position pass runs when ‖ψ‖ exceeds this after integration (m).
    pub position_tolerance_m: f64,
    /// Cap on position-correction sweeps per step.
    pub max_position_iterations: usize,
    /// Re-evaluations of the midpoint rows per step at most (0: rows from the first
    /// prediction only — faster, but the exact-work identities then hold only approximately).
    pub max_row_refreshes: usize,
    /// Over-relaxation factor of the joint updates (1 = plain Gauss–Seidel).
    pub relaxation: f64,
    /// How each linearisation is solved.
    pub method: SolverMethod,
    /// Alternate the sweep direction (forward, backward, ...): symmetric Gauss–Seidel,
    /// which carries information along chains in both directions in every pair of sweeps.
    pub symmetric_sweeps: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            dt_secs: 0.01,
            max_iterations: 100,
            beta: 1.0,
            velocity_tolerance: 1.0e-6,
            position_tolerance_m: 1.0e-7,
            max_position_iterations: 50,
            max_row_refreshes: 10,
            relaxation: 1.6,
            symmetric_sweeps: false,
            method: SolverMethod::Direct,
        }
    }
}

impl SolverParams {
    /// Checks that every parameter is usable.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |field: &'static str, value: f64| SimError::BadParameter { field, value };
        if !(self.dt_secs > 0.0 && self.dt_secs.is_finite()) {
            return Err(bad("dt_secs", self.dt_secs));
        }
        if self.max_iterations == 0 {
            return Err(bad("max_iterations", 0.0));
        }
        if !(self.beta >= 0.0 && self.beta <= 1.0) {
            return Err(bad("beta", self.beta));
        }
        if self.velocity_tolerance.is_nan() || self.velocity_tolerance <= 0.0 {
            return Err(bad("velocity_tolerance", self.velocity_tolerance));
        }
        if self.position_tolerance_m.is_nan() || self.position_tolerance_m <= 0.0 {
            return Err(bad("position_tolerance_m", self.position_tolerance_m));
        }
        Ok(())
    }
}
