//! Driving a simulation from a stylus script: the loop behind `simulate`, the demo and the
//! acceptance tests, with the run's summary metrics and the CSV row format.

use std::io;
use std::io::Write;

use ar_io::csv_write::{CsvWriter, Row};

use nalgebra::{Isometry3, Point3, Vector3};

use super::script::StylusScript;
use crate::error::SimError;
use crate::model::grab::GrabPoint;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::simulation::Simulation;
use crate::StepDiagnostics;

/// What the scripted loop needs from a simulation: both methods' simulations (the default
/// method's [`Simulation`] and the articulated method's) have these calls.
pub trait ScriptedSim {
    /// Why a step or a clip failed.
    type Error;
    /// The error for a script on a scene without grab point `index`.
    fn unknown_grab_point(index: usize) -> Self::Error;
    /// Step length (s).
    fn dt_secs(&self) -> f64;
    /// Simulated time (s).
    fn time_secs(&self) -> f64;
    /// Where grab point `index` is now, if the scene has it.
    fn grab_point_in_world(&self, index: usize) -> Option<Point3<f64>>;
    /// The scene's grab points.
    fn grab_points(&self) -> &[GrabPoint];
    /// Clips the stylus spring.
    fn attach_stylus(&mut self, attachment: StylusAttachment) -> Result<(), Self::Error>;
    /// Releases it.
    fn detach_stylus(&mut self);
    /// Whether the stylus is clipped.
    fn is_clipped(&self) -> bool;
    /// Sets the stylus tip for the next step.
    fn set_stylus_target(
        &mut self,
        position_in_world: Point3<f64>,
        velocity_in_world: Vector3<f64>,
    );
    /// The stylus tip the next step uses.
    fn stylus_target(&self) -> Option<&StylusTarget>;
    /// The clipped body point (world), while clipped.
    fn stylus_point_in_world(&self) -> Option<Point3<f64>>;
    /// One step.
    fn step(&mut self) -> Result<(), Self::Error>;
    /// The last step's diagnostics.
    fn diagnostics(&self) -> &StepDiagnostics;
}

/// Implements [`ScriptedSim`] for a simulation type whose own calls have the trait's names
/// (`dt_secs`, `grab_points`, `attach_stylus`, `step`, …, and `stylus_attachment`): both
/// methods' simulations. `$unknown` makes the error for a missing grab point from its index.
macro_rules! scripted_sim_by_its_own_calls {
    ($sim:ty, $error:ty, $unknown:expr) => {
        impl $crate::drive::scripted::ScriptedSim for $sim {
            type Error = $error;
            fn unknown_grab_point(index: usize) -> $error {
                $unknown(index)
            }
            fn dt_secs(&self) -> f64 {
                <$sim>::dt_secs(self)
            }
            fn time_secs(&self) -> f64 {
                <$sim>::time_secs(self)
            }
            fn grab_point_in_world(&self, index: usize) -> Option<nalgebra::Point3<f64>> {
                <$sim>::grab_point_in_world(self, index)
            }
            fn grab_points(&self) -> &[$crate::GrabPoint] {
                <$sim>::grab_points(self)
            }
            fn attach_stylus(
                &mut self,
                attachment: $crate::model::stylus::StylusAttachment,
            ) -> Result<(), $error> {
                <$sim>::attach_stylus(self, attachment)
            }
            fn detach_stylus(&mut self) {
                <$sim>::detach_stylus(self)
            }
            fn is_clipped(&self) -> bool {
                self.stylus_attachment().is_some()
            }
            fn set_stylus_target(
                &mut self,
                position_in_world: nalgebra::Point3<f64>,
                velocity_in_world: nalgebra::Vector3<f64>,
            ) {
                <$sim>::set_stylus_target(self, position_in_world, velocity_in_world)
            }
            fn stylus_target(&self) -> Option<&$crate::model::stylus::StylusTarget> {
                <$sim>::stylus_target(self)
            }
            fn stylus_point_in_world(&self) -> Option<nalgebra::Point3<f64>> {
                <$sim>::stylus_point_in_world(self)
            }
            fn step(&mut self) -> Result<(), $error> {
                <$sim>::step(self)
            }
            fn diagnostics(&self) -> &$crate::StepDiagnostics {
                <$sim>::diagnostics(self)
            }
        }
    };
}
pub(crate) use scripted_sim_by_its_own_calls;

scripted_sim_by_its_own_calls!(Simulation, SimError, |index| SimError::UnknownGrabPoint {
    index
});

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
/// and calls `on_step` after every step. Time of step n is n·h (no accumulated rounding).
pub fn run_scripted<S: ScriptedSim>(
    sim: &mut S,
    script: Option<&StylusScript>,
    spring: StylusSpring,
    duration_secs: f64,
    on_step: impl FnMut(&S),
) -> Result<RunSummary, S::Error> {
    run_scripted_with(sim, script, spring, duration_secs, |_| {}, on_step)
}

/// [`run_scripted`] with `before_step` called just before every step, e.g. to apply the
/// wind's forces for that step.
pub fn run_scripted_with<S: ScriptedSim>(
    sim: &mut S,
    script: Option<&StylusScript>,
    spring: StylusSpring,
    duration_secs: f64,
    mut before_step: impl FnMut(&mut S),
    mut on_step: impl FnMut(&S),
) -> Result<RunSummary, S::Error> {
    let h = sim.dt_secs();
    let steps = (duration_secs / h).round().max(0.0) as usize;
    let origin = sim.grab_point_in_world(0).unwrap_or_else(Point3::origin);
    let grab = match script {
        Some(_) => {
            let g = sim
                .grab_points()
                .first()
                .ok_or_else(|| S::unknown_grab_point(0))?;
            Some(StylusAttachment::at_grab_point(
                g,
                spring.stiffness_n_per_m,
                spring.damping_n_s_per_m,
            ))
        }
        None => None,
    };
    let mut summary = RunSummary::default();
    let mut clipped_at: Option<f64> = None;
    let mut released = false;
    let mut dissipated_j = sim.diagnostics().dissipated_j;
    for n in 0..steps {
        let t = n as f64 * h;
        if let Some(script) = script {
            let sample = script.sample(t, &origin);
            sim.set_stylus_target(sample.position_in_world, sample.velocity_in_world);
            match (sample.grab, sim.is_clipped()) {
                (true, false) => {
                    if let Some(attachment) = grab {
                        sim.attach_stylus(attachment)?;
                    }
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
        if d.dissipated_j < dissipated_j {
            summary.dissipation_reversed_j += dissipated_j - d.dissipated_j;
            summary.dissipation_reversed_steps += 1;
        }
        dissipated_j = d.dissipated_j;
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
    // The solver's own clock, so that the summary's time is the CSV's last `t_s`.
    summary.simulated_secs = sim.time_secs();
    summary.energy_reference_j = sim.diagnostics().energy_reference_j;
    summary.max_abs_energy_error_rel = summary.max_abs_energy_drift_j / summary.energy_reference_j;
    Ok(summary)
}

/// Decimals of the `t_s` columns: the time is printed rounded to 1 ns. The solver's time is
/// n·h accumulated step by step (0.49000000000000027 after 49 steps of 0.01 s), which would
/// otherwise show its last-bit rounding; 1 ns is far below any step the solver is run with.
pub const TIME_DECIMALS: usize = 9;

/// The columns of `simulate --csv` before the per-joint reaction columns (all of them for
/// the articulated method, which has no reactions).
pub const MAIN_CSV_COLUMNS: [&str; 16] = [
    "t_s",
    "constraint_norm_m",
    "kinetic_j",
    "potential_j",
    "elastic_j",
    "user_work_j",
    "external_work_j",
    "dissipated_j",
    "energy_error_rel",
    "clipped",
    "stylus_x",
    "stylus_y",
    "stylus_z",
    "grab_x",
    "grab_y",
    "grab_z",
];

/// The CSV header of `simulate --csv` for this simulation's joints. The columns are
/// documented in `simulate --help` and the manual's `commands` page (`src/manual/commands.md`).
pub fn csv_header(sim: &Simulation) -> Vec<String> {
    let mut columns: Vec<String> = MAIN_CSV_COLUMNS.map(String::from).into();
    for j in sim.joints() {
        for column in ["fx", "fy", "fz", "tx", "ty", "tz"] {
            columns.push(format!("{}_{column}", j.name));
        }
    }
    columns
}

/// Adds the [`MAIN_CSV_COLUMNS`] of a step to `row`: the diagnostics, the stylus tip the
/// solver uses and the first grab point (NaN where there is none).
pub fn main_csv_fields<'a, W: Write>(
    row: Row<'a, W>,
    d: &StepDiagnostics,
    tip_in_world: [f64; 3],
    grab_in_world: [f64; 3],
) -> Row<'a, W> {
    row.fixed(d.time_secs, TIME_DECIMALS)
        .values([
            d.constraint_norm_m,
            d.kinetic_j,
            d.potential_j,
            d.elastic_j,
            d.user_work_j,
            d.external_work_j,
            d.dissipated_j,
            d.energy_error_rel,
        ])
        .value(u8::from(d.clipped))
        .values(tip_in_world)
        .values(grab_in_world)
}

/// Writes the CSV row of the last step. `t_s` has [`TIME_DECIMALS`] decimals; every other
/// number uses Rust's shortest round-trip formatting, so equal rows mean bit-identical values.
/// The stylus columns hold the tip the solver uses (NaN when none was ever set); the grab
/// columns the first grab point's world position (NaN if the scene has none); per joint, the
/// reaction force (N) and moment (N·m) on its second body, world axes.
pub fn csv_row<W: Write>(sim: &Simulation, out: &mut CsvWriter<W>) -> io::Result<()> {
    let d = sim.diagnostics();
    let tip: [f64; 3] = sim
        .stylus_target()
        .map_or([f64::NAN; 3], |t| t.position_in_world.coords.into());
    let grab: [f64; 3] = sim
        .grab_point_in_world(0)
        .map_or([f64::NAN; 3], |p| p.coords.into());
    let mut row = main_csv_fields(out.row(), d, tip, grab);
    for r in sim.joint_reactions() {
        let (f, m) = (r.force_in_world, r.torque_in_world);
        row = row.values([f.x, f.y, f.z, m.x, m.y, m.z]);
    }
    row.end()
}

/// The header of `simulate --poses`: one row per dynamic body and written step, world frame;
/// the position and velocity are those of the body frame's origin, which is the centre of
/// mass.
pub const POSES_CSV_HEADER: [&str; 15] = [
    "t_s",
    "body",
    "x_m",
    "y_m",
    "z_m",
    "qw",
    "qx",
    "qy",
    "qz",
    "vx_m_per_s",
    "vy_m_per_s",
    "vz_m_per_s",
    "wx_rad_per_s",
    "wy_rad_per_s",
    "wz_rad_per_s",
];

/// Writes one `simulate --poses` row per dynamic body (in scene order) for the last step:
/// time ([`TIME_DECIMALS`] decimals), body name, position of the centre of mass (m), the unit
/// quaternion `world_from_body` (w, x, y, z), velocity of the centre of mass (m/s) and angular
/// velocity (rad/s), all in world axes, numbers in Rust's shortest round-trip formatting.
pub fn poses_csv_rows<W: Write>(sim: &Simulation, out: &mut CsvWriter<W>) -> io::Result<()> {
    let t = sim.diagnostics().time_secs;
    for b in sim.bodies().iter().filter(|b| b.is_dynamic()) {
        let pose = Isometry3::from_parts(b.position_in_world.into(), b.world_from_body_rotation);
        let velocity = (b.linear_velocity_in_world, b.angular_velocity_in_world);
        pose_csv_row(out, t, &b.name, &pose, velocity)?;
    }
    Ok(())
}

/// Writes one row of the [`POSES_CSV_HEADER`] columns: a body's centre-of-mass pose
/// (`world_from_body`) and its velocity (m/s) and angular velocity (rad/s) in world axes.
pub fn pose_csv_row<W: Write>(
    out: &mut CsvWriter<W>,
    t_secs: f64,
    name: &str,
    world_from_body: &Isometry3<f64>,
    (v, w): (Vector3<f64>, Vector3<f64>),
) -> io::Result<()> {
    let (x, q) = (world_from_body.translation.vector, world_from_body.rotation);
    out.row()
        .fixed(t_secs, TIME_DECIMALS)
        .text(name)
        .values([x.x, x.y, x.z, q.w, q.i, q.j, q.k])
        .values([v.x, v.y, v.z, w.x, w.y, w.z])
        .end()
}
