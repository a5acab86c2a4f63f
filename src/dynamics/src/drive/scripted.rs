//! Driving a simulation from a stylus script: the loop behind `simulate`, the demo's checks
//! and the acceptance tests, with the run's summary metrics. The CSV formats of a run are in
//! [`super::csv`].

use nalgebra::Point3;

use super::script::StylusScript;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::simulation::{SceneSimulation, StepError, StepInput};
use crate::StepDiagnostics;

/// Seconds after clipping before the grab point must follow the stylus closely.
pub const SETTLE_SECS: f64 = 0.2;

/// How the stylus spring of a scripted run is set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusSpring {
    /// Stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Damping (N·s/m).
    pub damping_n_s_per_m: f64,
}

impl Default for StylusSpring {
    fn default() -> Self {
        Self {
            stiffness_n_per_m: crate::model::stylus::DEFAULT_STIFFNESS_N_PER_M,
            damping_n_s_per_m: crate::model::stylus::DEFAULT_DAMPING_N_S_PER_M,
        }
    }
}

/// What a scripted run measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Steps taken.
    pub steps: usize,
    /// Simulated time at the end of the last step (s): the solver's clock
    /// ([`crate::StepDiagnostics::time_secs`]), n·h accumulated, so it may differ from
    /// steps·h in the last bits; 0 when no step was taken.
    pub simulated_secs: f64,
    /// Largest ‖ψ‖ over the run (m).
    pub max_constraint_norm_m: f64,
    /// Largest ‖ψ‖ after the last release (m); 0 if never released.
    pub max_constraint_norm_after_release_m: f64,
    /// Largest |energy drift| over the run / E_ref at the end of the run (the reference is a
    /// property of the whole run: see [`crate::state::diagnostics`]).
    pub max_abs_energy_error_rel: f64,
    /// Largest |energy drift| over the run (J).
    pub max_abs_energy_drift_j: f64,
    /// E_ref at the end of the run (J).
    pub energy_reference_j: f64,
    /// Largest distance between the clipped point and the stylus tip while clipped, from
    /// [`SETTLE_SECS`] after each clip (m).
    pub max_grab_distance_m: f64,
    /// Largest number of velocity sweeps in a step.
    pub max_iterations: usize,
    /// Linear solves (coupled solves or sweeps) over the run.
    pub total_iterations: u64,
    /// Factorisations of the coupled matrix over the run.
    pub total_factorisations: u64,
    /// Steps that needed the position-correction pass.
    pub position_pass_steps: usize,
    /// Steps that did not converge whole and were split into sub-steps.
    pub split_steps: usize,
    /// Energy that the dissipative elements (dampers, contact impulses) gave back over the
    /// run: the sum of the steps' decreases of the dissipated energy (J). Physically 0; the
    /// balance still closes when it is not, as the ledger books it, but the motion then
    /// gained energy that nothing supplied.
    pub dissipation_reversed_j: f64,
    /// Steps in which the dissipated energy decreased.
    pub dissipation_reversed_steps: usize,
}

/// Steps `sim` for `duration_secs`, following `script` (if any) with the first grab point,
/// with the wind level `wind_level(t)` at the simulated time t before each step, and calls
/// `on_step` after every step. Time of step n is n·h (no accumulated rounding).
///
/// # Errors
/// The step that failed ([`StepError`]), or a script on a scene without a grab point.
pub fn run_scripted(
    sim: &mut SceneSimulation,
    script: Option<&StylusScript>,
    spring: StylusSpring,
    duration_secs: f64,
    mut wind_level: impl FnMut(f64) -> f64,
    mut on_step: impl FnMut(&SceneSimulation),
) -> Result<RunSummary, StepError> {
    let h = sim.dt_secs();
    let steps = (duration_secs / h).round().max(0.0) as usize;
    let origin = sim.grab_point_in_world(0).unwrap_or_else(Point3::origin);
    let grab = match script {
        Some(_) => {
            let g = sim
                .grab_points()
                .first()
                .ok_or(StepError::UnknownGrabPoint { index: 0 })?;
            Some(StylusAttachment::at_grab_point(
                g,
                spring.stiffness_n_per_m,
                spring.damping_n_s_per_m,
            ))
        }
        None => None,
    };
    let mut tally = Tally::new(sim.diagnostics().dissipated_j);
    for n in 0..steps {
        let t = n as f64 * h;
        let (clip, tip) = match script {
            Some(script) => {
                let sample = script.sample(t, &origin);
                let tip = StylusTarget {
                    position_in_world: sample.position_in_world,
                    velocity_in_world: sample.velocity_in_world,
                };
                (grab.filter(|_| sample.grab), Some(tip))
            }
            None => (None, None),
        };
        tally.before_step(t, clip.is_some(), sim.clip().is_some());
        let input = StepInput {
            clip,
            tip,
            loads: &[],
            wind_level: wind_level(sim.time_secs()),
        };
        sim.step(&input)?;
        tally.after_step(sim);
        on_step(sim);
    }
    Ok(tally.summary(steps, sim))
}

/// The running figures of a scripted run.
struct Tally {
    summary: RunSummary,
    /// Since when the stylus has been clipped (s).
    clipped_at: Option<f64>,
    /// Whether it has been released since the last clip.
    released: bool,
    /// The dissipated energy after the last step (J).
    dissipated_j: f64,
}

impl Tally {
    fn new(dissipated_j: f64) -> Self {
        Self {
            summary: RunSummary::default(),
            clipped_at: None,
            released: false,
            dissipated_j,
        }
    }

    /// Notes a clip or a release that the step at time `t` makes.
    fn before_step(&mut self, t: f64, clip: bool, clipped: bool) {
        match (clip, clipped) {
            (true, false) => {
                self.clipped_at = Some(t);
                self.released = false;
                self.summary.max_constraint_norm_after_release_m = 0.0;
            }
            (false, true) => {
                self.clipped_at = None;
                self.released = true;
            }
            _ => {}
        }
    }

    /// Takes the step's diagnostics into the summary.
    fn after_step(&mut self, sim: &SceneSimulation) {
        let d = *sim.diagnostics();
        let s = &mut self.summary;
        s.max_constraint_norm_m = s.max_constraint_norm_m.max(d.constraint_norm_m);
        if self.released {
            s.max_constraint_norm_after_release_m = s
                .max_constraint_norm_after_release_m
                .max(d.constraint_norm_m);
        }
        s.max_abs_energy_drift_j = s.max_abs_energy_drift_j.max(d.energy_drift_j.abs());
        if d.dissipated_j < self.dissipated_j {
            s.dissipation_reversed_j += self.dissipated_j - d.dissipated_j;
            s.dissipation_reversed_steps += 1;
        }
        self.dissipated_j = d.dissipated_j;
        s.max_iterations = s.max_iterations.max(d.iterations);
        s.total_iterations += d.iterations as u64;
        s.total_factorisations += d.factorisations as u64;
        if d.position_iterations > 0 {
            s.position_pass_steps += 1;
        }
        if d.substeps > 1 {
            s.split_steps += 1;
        }
        if let (Some(t0), Some(p), Some(tip)) = (
            self.clipped_at,
            sim.stylus_point_in_world(),
            sim.stylus_target(),
        ) {
            if d.time_secs >= t0 + SETTLE_SECS - 1e-9 {
                s.max_grab_distance_m = s
                    .max_grab_distance_m
                    .max((p - tip.position_in_world).norm());
            }
        }
    }

    /// The summary after `steps` steps.
    fn summary(self, steps: usize, sim: &SceneSimulation) -> RunSummary {
        let d: &StepDiagnostics = sim.diagnostics();
        let mut s = self.summary;
        s.steps = steps;
        // The solver's own clock, so that the summary's time is the CSV's last `t_s`.
        s.simulated_secs = sim.time_secs();
        s.energy_reference_j = d.energy_reference_j;
        s.max_abs_energy_error_rel = s.max_abs_energy_drift_j / s.energy_reference_j;
        s
    }
}
