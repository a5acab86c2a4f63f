//! Per-step diagnostics and the energy ledger behind the energy-balance error.
//!
//! # Energy balance
//! All energies are evaluated at the end of the step. Because the integrator's impulses do
//! exactly the work that changes the kinetic, gravitational and elastic energy (see
//! [`crate::solver`]), the balance below is zero up to the solver tolerance and the
//! regularisation of redundant joints; what remains is the solver's real error.
//!
//! - `E = kinetic + potential + elastic` (elastic includes the stylus spring while clipped).
//! - `user work` = Σ P_stylus · v_tip over steps (paper Eq. 28 with F = P/h); clipping adds the
//!   spring's initial energy ½k|e|² to the user work, releasing subtracts what it still holds.
//! - `external work` = Σ h (F·v̄ + τ·ω̄) of forces given to `apply_external_force` (wind) and
//!   of the force elements (`add_force_element`, a scene's `[[force]]` tables).
//! - `dissipated` = Σ of what the dampers (scene springs and stylus) take out, from their
//!   share of the converged impulses.
//!   The drag of deformable elements ([`crate::Body::drag_n_s_per_m`]) is booked here too
//!   (negative work).
//! - `fractured` = Σ of the elastic energy ½ k e² that connections held when they broke
//!   ([`crate::deformable::fracture`]): it leaves the elastic energy at the break and is
//!   lost (in a real material to heat and sound), so it is its own line of the balance.
//! - **drift** = E + dissipated + fractured − user work − external work − E(0), in joules: zero up to the
//!   solver tolerance and the regularisation of redundant joints.
//! - **reference energy** E_ref: the largest of the peak kinetic energy, the range (max − min)
//!   of the gravitational energy, the range of the elastic energy, and the largest injected
//!   work |user work| + |external work| seen so far in the run, but at least 1 nJ so that the
//!   ratio is defined at rest. These are the energies the motion actually exchanges: a
//!   relative error against them says how much of the motion's energy the solver lost or
//!   made, whatever the datum of the potential energy or a pre-stress of the springs.
//! - balance error = drift / E_ref.

/// What one step measured. Energies in J, evaluated at the middle of the step (see module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepDiagnostics {
    /// Simulated time at the end of the step (s).
    pub time_secs: f64,
    /// Euclidean norm of all position-level constraint rows after the step (m; angular rows
    /// counted as metres at a 1 m lever arm).
    pub constraint_norm_m: f64,
    /// Kinetic energy (J).
    pub kinetic_j: f64,
    /// Gravitational energy −Σ m g·x (J; zero at the world origin).
    pub potential_j: f64,
    /// Elastic energy of springs and the stylus spring (J).
    pub elastic_j: f64,
    /// User work through the stylus spring since the start (J).
    pub user_work_j: f64,
    /// Work of external forces (wind, force elements) since the start (J).
    pub external_work_j: f64,
    /// Energy dissipated by dampers since the start (J).
    pub dissipated_j: f64,
    /// Elastic energy released by broken connections since the start (J).
    pub fractured_j: f64,
    /// Energy drift E + dissipated + fractured − user work − external work − E(0) (J).
    pub energy_drift_j: f64,
    /// Reference energy E_ref of the balance (J; see the module docs).
    pub energy_reference_j: f64,
    /// Energy drift / E_ref.
    pub energy_error_rel: f64,
    /// Whether the stylus was clipped during the step.
    pub clipped: bool,
    /// Linear solves of the velocity stage (Gauss–Seidel sweeps, or coupled solves).
    pub iterations: usize,
    /// Factorisations of the coupled matrix (direct method; 1 per step when the factor of
    /// the start rows carried the whole step).
    pub factorisations: usize,
    /// Largest row-velocity correction of the last sweep (m/s or rad/s).
    pub velocity_residual: f64,
    /// Position-correction sweeps used (0 when the velocity solve already met the tolerance).
    pub position_iterations: usize,
    /// Sub-steps the step was split into (1 normally; more when the full step did not
    /// converge, see [`crate::Simulation::step`]). Counts above are summed over them.
    pub substeps: usize,
    /// Whether a sub-step of the deepest split kept rows that did not converge (its state is
    /// finite and its joints closed, but the exact-work identities hold only approximately).
    pub unconverged: bool,
    /// How much the last re-evaluation of the midpoint rows changed the velocities (m/s;
    /// angular changes at a 0.1 m lever; infinite when the rows were not re-evaluated), or the
    /// estimate of the next one's change when the refreshes stopped on their contraction rate.
    /// Small means the rows are consistent with the step and the work identities hold.
    pub row_refresh_change: f64,
}

impl StepDiagnostics {
    /// The first figure that is NaN or infinite ("the kinetic energy", …), if any.
    pub fn non_finite(&self) -> Option<&'static str> {
        [
            ("the constraint error |psi|", self.constraint_norm_m),
            ("the kinetic energy", self.kinetic_j),
            ("the potential energy", self.potential_j),
            ("the elastic energy", self.elastic_j),
            ("the user work", self.user_work_j),
            ("the external work", self.external_work_j),
            ("the dissipated energy", self.dissipated_j),
            ("the energy drift", self.energy_drift_j),
            ("the energy balance", self.energy_error_rel),
        ]
        .into_iter()
        .find(|(_, x)| !x.is_finite())
        .map(|(what, _)| what)
    }
}

/// Running totals behind [`StepDiagnostics`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct EnergyLedger {
    /// Total energy at the start of the run.
    pub(crate) initial_j: f64,
    /// Gravitational and elastic energy at the end of the last step.
    pub(crate) potential_end_j: f64,
    pub(crate) elastic_end_j: f64,
    pub(crate) user_work_j: f64,
    pub(crate) external_work_j: f64,
    pub(crate) dissipated_j: f64,
    /// Elastic energy of the connections that broke (J).
    pub(crate) fractured_j: f64,
    /// Peak kinetic energy, and the extremes of the gravitational and elastic energy, seen so
    /// far (J).
    pub(crate) peak_kinetic_j: f64,
    pub(crate) potential_min_j: f64,
    pub(crate) potential_max_j: f64,
    pub(crate) elastic_min_j: f64,
    pub(crate) elastic_max_j: f64,
    /// Largest |user work| + |external work| seen so far (J).
    pub(crate) peak_work_j: f64,
}

impl EnergyLedger {
    /// A ledger whose run starts with these energies.
    pub(crate) fn starting_at(kinetic_j: f64, potential_j: f64, elastic_j: f64) -> Self {
        Self {
            initial_j: kinetic_j + potential_j + elastic_j,
            potential_end_j: potential_j,
            elastic_end_j: elastic_j,
            peak_kinetic_j: kinetic_j,
            potential_min_j: potential_j,
            potential_max_j: potential_j,
            elastic_min_j: elastic_j,
            elastic_max_j: elastic_j,
            ..Self::default()
        }
    }

    /// The reference energy E_ref (see the module docs).
    pub(crate) fn reference_j(&self) -> f64 {
        self.peak_kinetic_j
            .max(self.potential_max_j - self.potential_min_j)
            .max(self.elastic_max_j - self.elastic_min_j)
            .max(self.peak_work_j)
            .max(MIN_REFERENCE_ENERGY_J)
    }
}

/// The smallest reference energy (J).
pub(crate) const MIN_REFERENCE_ENERGY_J: f64 = 1.0e-9;
