//! Driving a simulation from a stylus script: the loop behind `simulate`, the demo and the
//! acceptance tests, with the run's summary metrics and the CSV row format.

use std::fmt::Write as _;

use nalgebra::Point3;

use super::error::SimError;
use super::script::StylusScript;
use super::simulation::Simulation;

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
            stiffness_n_per_m: super::stylus::DEFAULT_STIFFNESS_N_PER_M,
            damping_n_s_per_m: super::stylus::DEFAULT_DAMPING_N_S_PER_M,
        }
    }
}

/// What a scripted run measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Steps taken.
    pub steps: usize,
    /// Simulated time (s).
    pub simulated_secs: f64,
    /// Largest ‖ψ‖ over the run (m).
    pub max_constraint_norm_m: f64,
    /// Largest ‖ψ‖ after the last release (m); 0 if never released.
    pub max_constraint_norm_after_release_m: f64,
    /// Largest |energy drift| over the run / E_ref at the end of the run (the reference is a
    /// property of the whole run: see [`super::diagnostics`]).
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
}

/// Steps `sim` for `duration_secs`, following `script` (if any) with the first grab point,
/// and calls `on_step` after every step. Time of step n is n·h (no accumulated rounding).
pub fn run_scripted(
    sim: &mut Simulation,
    script: Option<&StylusScript>,
    spring: StylusSpring,
    duration_secs: f64,
    on_step: impl FnMut(&Simulation),
) -> Result<RunSummary, SimError> {
    run_scripted_with(sim, script, spring, duration_secs, |_| {}, on_step)
}

/// [`run_scripted`] with `before_step` called just before every step, e.g. to apply the
/// wind's forces for that step.
pub fn run_scripted_with(
    sim: &mut Simulation,
    script: Option<&StylusScript>,
    spring: StylusSpring,
    duration_secs: f64,
    mut before_step: impl FnMut(&mut Simulation),
    mut on_step: impl FnMut(&Simulation),
) -> Result<RunSummary, SimError> {
    let h = sim.dt_secs();
    let steps = (duration_secs / h).round().max(0.0) as usize;
    let origin = sim.grab_point_in_world(0).unwrap_or_else(Point3::origin);
    if script.is_some() && sim.grab_points().is_empty() {
        return Err(SimError::UnknownGrabPoint { index: 0 });
    }
    let mut summary = RunSummary::default();
    let mut clipped_at: Option<f64> = None;
    let mut released = false;
    for n in 0..steps {
        let t = n as f64 * h;
        if let Some(script) = script {
            let sample = script.sample(t, &origin);
            sim.set_stylus_target(sample.position_in_world, sample.velocity_in_world);
            match (sample.grab, sim.stylus_attachment().is_some()) {
                (true, false) => {
                    sim.attach_stylus_to_grab_point(
                        0,
                        spring.stiffness_n_per_m,
                        spring.damping_n_s_per_m,
                    )?;
                    clipped_at = Some(t);
                    released = false;
                    summary.max_constraint_norm_after_release_m = 0.0;
                }
                (false, true) => {
                    sim.detach_stylus();
                    clipped_at = None;
                    released = true;
                }
                _ => {}
            }
        }
        before_step(sim);
        sim.step()?;
        let d = *sim.diagnostics();
        summary.max_constraint_norm_m = summary.max_constraint_norm_m.max(d.constraint_norm_m);
        if released {
            summary.max_constraint_norm_after_release_m = summary
                .max_constraint_norm_after_release_m
                .max(d.constraint_norm_m);
        }
        summary.max_abs_energy_drift_j = summary.max_abs_energy_drift_j.max(d.energy_drift_j.abs());
        summary.max_iterations = summary.max_iterations.max(d.iterations);
        summary.total_iterations += d.iterations as u64;
        summary.total_factorisations += d.factorisations as u64;
        if d.position_iterations > 0 {
            summary.position_pass_steps += 1;
        }
        if d.substeps > 1 {
            summary.split_steps += 1;
        }
        if let (Some(t0), Some(p), Some(tip)) =
            (clipped_at, sim.stylus_point_in_world(), sim.stylus_target())
        {
            if d.time_secs >= t0 + SETTLE_SECS - 1e-9 {
                summary.max_grab_distance_m = summary
                    .max_grab_distance_m
                    .max((p - tip.position_in_world).norm());
            }
        }
        on_step(sim);
    }
    summary.steps = steps;
    summary.simulated_secs = sim.time_secs();
    summary.energy_reference_j = sim.diagnostics().energy_reference_j;
    summary.max_abs_energy_error_rel = summary.max_abs_energy_drift_j / summary.energy_reference_j;
    Ok(summary)
}

/// The CSV header of `simulate --csv` for this simulation's joints.
pub fn csv_header(sim: &Simulation) -> String {
    let mut s = String::from(
        "t,constraint_norm_m,kinetic_j,potential_j,elastic_j,user_work_j,dissipated_j,\
         energy_error_rel,clipped,stylus_x,stylus_y,stylus_z,grab_x,grab_y,grab_z",
    );
    for j in sim.joints() {
        let _ = write!(s, ",{0}_fx,{0}_fy,{0}_fz", j.name);
    }
    s
}

/// Appends the CSV row of the last step to `out` (no newline). Numbers use Rust's shortest
/// round-trip formatting, so equal rows mean bit-identical values. The stylus columns hold
/// the tip the solver uses (NaN when none was ever set); the grab columns the first grab
/// point's world position (NaN if the scene has none).
pub fn csv_row(sim: &Simulation, out: &mut String) {
    let d = sim.diagnostics();
    let tip = sim
        .stylus_target()
        .map_or([f64::NAN; 3], |t| t.position_in_world.coords.into());
    let grab = sim
        .grab_point_in_world(0)
        .map_or([f64::NAN; 3], |p| p.coords.into());
    let _ = write!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        d.time_secs,
        d.constraint_norm_m,
        d.kinetic_j,
        d.potential_j,
        d.elastic_j,
        d.user_work_j,
        d.dissipated_j,
        d.energy_error_rel,
        u8::from(d.clipped),
        tip[0],
        tip[1],
        tip[2],
        grab[0],
        grab[1],
        grab[2]
    );
    for r in sim.joint_reactions() {
        let f = r.force_in_world;
        let _ = write!(out, ",{},{},{}", f.x, f.y, f.z);
    }
}
