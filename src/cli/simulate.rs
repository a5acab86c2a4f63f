//! `simulate`: runs a scene headless as fast as it can, optionally scripted, and prints a
//! summary (model size, steps, wall time, real-time factor, max ‖ψ‖, max |energy error|);
//! streams the per-step CSV and the bodies' poses to files, and draws a plot, on request.

use std::io;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use ar_calibration::tracker_file::TrackerCalibration;
use clap::Args;

use super::numeric_arg;

/// Dissipation given back over a run below which the summary does not warn: this fraction of
/// E_ref, or [`DISSIPATION_REVERSED_FLOOR_J`] if larger (the contact ledger's rounding gives
/// back ~1e-12 J over a few hundred steps).
const DISSIPATION_REVERSED_NOTE_REL: f64 = 1.0e-6;
/// See [`DISSIPATION_REVERSED_NOTE_REL`] (J).
const DISSIPATION_REVERSED_FLOOR_J: f64 = 1.0e-9;
use super::simulate_articulated::{IntegratorArg, Method};
use super::simulate_contacts::{contact_rows, ContactSummary, CONTACTS_HEADER};
use super::simulate_output::{finish_all, CsvStream, RunWatch, COLUMNS_HELP};
use super::simulate_plot::{plot, Series};
use ar_dynamics::contact::InequalityMethod;
use ar_dynamics::drive::scripted;
use ar_dynamics::model::stylus;
use ar_dynamics::wind::{LevelSchedule, WindElement, WindSettings};
use ar_dynamics::{
    run_scripted_with, RunSummary, Scene, ScriptFrame, SimError, Simulation, SolverMethod,
    SolverParams, StylusScript, StylusSpring,
};

/// Arguments of `simulate`. Numeric flags are checked while the command line is parsed
/// ([`numeric_arg`]), so a bad value is reported as such, not as a problem of the scene.
#[derive(Args, Debug)]
#[command(after_long_help = COLUMNS_HELP)]
pub struct SimulateArgs {
    /// Scene name (a file in assets/scenes/, e.g. ten_pendula) or path to a scene file (TOML).
    pub scene: String,
    /// Simulated duration (s), zero or more.
    #[arg(long, value_name = "S", default_value_t = 10.0, allow_negative_numbers = true,
          value_parser = numeric_arg::duration_secs)]
    pub duration: f64,
    /// Time step h (s), positive; default: the scene's `[solver] dt_secs` (0.01).
    #[arg(long, value_name = "H", allow_negative_numbers = true,
          value_parser = numeric_arg::positive_secs)]
    pub dt: Option<f64>,
    /// Cap on linear solves (or Gauss–Seidel sweeps) per step, 1 or more (default: the
    /// scene's, or 100).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = numeric_arg::positive_count)]
    pub iterations: Option<usize>,
    /// Baumgarte factor β in [0, 1] (default: the scene's, or 1).
    #[arg(long, value_name = "B", allow_negative_numbers = true,
          value_parser = numeric_arg::unit_interval)]
    pub beta: Option<f64>,
    /// Most re-evaluations of the midpoint rows per step (default 10; a step stops once they
    /// converge, usually after 2 or 3). A step that has not converged within a lower cap is split
    /// into shorter steps, so a lower cap is rarely faster; 0 skips them (fast, but the energy
    /// balance is then off by several per cent).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub row_refreshes: Option<usize>,
    /// Solve with the paper's Gauss–Seidel sweeps instead of the coupled direct solve.
    #[arg(long)]
    pub gauss_seidel: bool,
    /// Stylus script: CSV with header `t_s,x_m,y_m,z_m,grab` (world) or
    /// `t_s,dx_m,dy_m,dz_m,grab` (relative to the first grab point), or the CSV `arm probe
    /// --csv` wrote (arm frame; needs --calibration).
    #[arg(long, value_name = "SCRIPT.csv")]
    pub stylus: Option<PathBuf>,
    /// Tracker calibration (world_from_arm, from `calibrate tracker`) that brings a stylus CSV
    /// recorded by `arm probe` into the world frame.
    #[arg(long, value_name = "TRACKER.toml")]
    pub calibration: Option<PathBuf>,
    /// Stylus spring stiffness (N/m), positive.
    #[arg(long, value_name = "N_PER_M", allow_negative_numbers = true,
          value_parser = numeric_arg::positive,
          default_value_t = stylus::DEFAULT_STIFFNESS_N_PER_M)]
    pub stylus_stiffness: f64,
    /// Stylus spring damping (N·s/m), zero or more.
    #[arg(long, value_name = "N_S_PER_M", allow_negative_numbers = true,
          value_parser = numeric_arg::non_negative,
          default_value_t = stylus::DEFAULT_DAMPING_N_S_PER_M)]
    pub stylus_damping: f64,
    /// Write one CSV row per step here, as the run goes (columns: see --help).
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write the state of every dynamic body here, one row per body and step, as the run goes:
    /// position of the centre of mass (the body frame's origin), orientation, velocities,
    /// world frame (columns: see --help).
    #[arg(long, value_name = "OUT.csv")]
    pub poses: Option<PathBuf>,
    /// Write the poses of every Nth step only (steps N, 2N, ...).
    #[arg(long, value_name = "N", default_value_t = 1, allow_negative_numbers = true,
          value_parser = numeric_arg::positive_count)]
    pub poses_every: usize,
    /// Draw ‖ψ‖ and the energies over time into this PNG.
    #[arg(long, value_name = "OUT.png")]
    pub plot: Option<PathBuf>,
    /// Method: `default` (maximal coordinates, the paper's impulses) or `articulated`
    /// (reduced coordinates, the articulated-body algorithm: exact tree joints, loops closed
    /// by constraint rows; --stylus and --wind as for the default, no reaction columns in the CSV).
    #[arg(long, value_enum, default_value_t = Method::Default)]
    pub method: Method,
    /// Integrator of `--method articulated`: euler (semi-implicit), rk4, or rk45 (adaptive,
    /// Fehlberg, at --tolerance; rows are still written every h).
    #[arg(long, value_enum, default_value_t = IntegratorArg::Euler)]
    pub integrator: IntegratorArg,
    /// Local error tolerance of `--integrator rk45` (relative to max(1, |y|) per coordinate).
    #[arg(long, value_name = "TOL", default_value_t = 1e-8, allow_negative_numbers = true,
          value_parser = numeric_arg::positive)]
    pub tolerance: f64,
    /// Blow: a constant level (microphone RMS above the floor, e.g. 0.2) or a `t_s,level` CSV
    /// file; the wind comes from the scene's `[wind]` table (or its defaults).
    #[arg(long, value_name = "LEVEL|FILE.csv")]
    pub wind: Option<String>,
    /// Write every contact point of every step here (scenes with contact), header
    /// `t_s,shape1,shape2,px_m,py_m,pz_m,nx,ny,nz,gap_m,normal_force_n,friction_force_n`:
    /// the two colliders' names (bodies, `[[static]]`, `[[plane]]`), the point (midway between
    /// the surfaces at the start of the step, m), the unit normal from shape1 to shape2, the gap
    /// at the end of the step (m, negative when penetrating), the normal force and the magnitude
    /// of the friction force (impulse / h, N; impacts included).
    #[arg(long, value_name = "OUT.csv")]
    pub contacts: Option<PathBuf>,
    /// How the active set of contact rows is found: `right` (Jonquet et al.'s Alg. 3, the
    /// default), or the paper's failing `platt` (Alg. 1) and `tendency` (Alg. 2), for teaching.
    #[arg(long, value_name = "right|platt|tendency", value_parser = ["right", "platt", "tendency"])]
    pub inequality_method: Option<String>,
}

/// `--wind LEVEL` or `--wind FILE.csv`.
fn wind_schedule(arg: &str) -> Result<LevelSchedule> {
    match arg.parse::<f64>() {
        Ok(level) if level.is_finite() && level >= 0.0 => Ok(LevelSchedule::Constant(level)),
        Ok(level) => anyhow::bail!("--wind level must be zero or positive, got {level}"),
        Err(_) => Ok(LevelSchedule::load(arg)?),
    }
}

/// The solver's own check of the parameters once the flags are applied. The scene loader has
/// already checked the scene's `[solver]` values, so a refusal here is a flag's: it is named
/// as such rather than reported as a problem of the scene file.
fn check_solver_params(params: &SolverParams) -> Result<()> {
    match params.validate() {
        Ok(()) => Ok(()),
        Err(SimError::BadParameter { field, value }) => {
            let flag = match field {
                "dt_secs" => "--dt",
                "max_iterations" => "--iterations",
                "beta" => "--beta",
                "max_row_refreshes" => "--row-refreshes",
                other => other,
            };
            anyhow::bail!("{flag} {value}: the solver does not accept this value")
        }
        Err(e) => anyhow::bail!("solver parameters: {e}"),
    }
}

/// The stylus script of `--stylus`, in the world frame (an `arm probe` CSV through
/// `--calibration`).
pub(super) fn stylus_script(args: &SimulateArgs) -> Result<Option<StylusScript>> {
    Ok(match &args.stylus {
        Some(path) => {
            let text = ar_io::input_file::read_text(path)
                .with_context(|| format!("cannot read stylus script {}", path.display()))?;
            let script = StylusScript::parse(&text)
                .with_context(|| format!("stylus script {}", path.display()))?;
            match (script.frame(), &args.calibration) {
                (ScriptFrame::Arm, Some(cal)) => {
                    let cal = TrackerCalibration::load(cal)?;
                    Some(script.into_world(&cal.world_from_arm))
                }
                (ScriptFrame::Arm, None) => bail!(
                    "stylus script {}: its tips are in the arm's frame (an `arm probe` CSV); \
                     give the tracker calibration that maps them to the world: --calibration \
                     FILE (written by `calibrate tracker`)",
                    path.display()
                ),
                (_, Some(_)) => bail!(
                    "--calibration applies to a stylus CSV recorded by `arm probe` only; {} is \
                     already in the world frame",
                    path.display()
                ),
                (_, None) => Some(script),
            }
        }
        None => None,
    })
}

/// The wind of `--wind` on the scene's `[wind]` settings: the level schedule, the settings,
/// the force element and the largest total force seen (updated by the run).
pub(super) type WindRun = (LevelSchedule, WindSettings, WindElement, f64);

/// Builds the wind of `--wind`, if given.
pub(super) fn wind_of(args: &SimulateArgs, scene: &Scene) -> Result<Option<WindRun>> {
    Ok(match &args.wind {
        Some(arg) => {
            let schedule = wind_schedule(arg)?;
            let settings = scene.wind.clone().unwrap_or_default();
            let element = WindElement::from_settings(&settings)
                .with_context(|| format!("scene {}", args.scene))?;
            Some((schedule, settings, element, 0.0_f64))
        }
        None => None,
    })
}

/// The summary's line on how closely the grab point followed the stylus.
pub(super) fn write_grab_distance(out: &mut impl Write, summary: &RunSummary) -> io::Result<()> {
    writeln!(
        out,
        "max grab distance  {:.3e} m (while clipped, from {} s after clipping)",
        summary.max_grab_distance_m,
        scripted::SETTLE_SECS
    )
}

/// The summary's wind line, without its line end (a method may add to it).
pub(super) fn write_wind(
    out: &mut impl Write,
    (_, settings, _, max_force): &WindRun,
) -> io::Result<()> {
    let [x, y, z] = settings.source_in_world_m;
    let [dx, dy, dz] = settings.direction_in_world;
    write!(
        out,
        "wind               from ({x}, {y}, {z}) m along ({dx}, {dy}, {dz}); max total force {max_force:.4} N"
    )
}

/// Runs the command.
pub fn run(args: SimulateArgs) -> Result<()> {
    if args.method == Method::Articulated {
        return super::simulate_articulated::run(&args);
    }
    let mut scene = Scene::load(ar_multibody::rig::scene_sim::resolve_scene(&args.scene))?;
    if let Some(m) = &args.inequality_method {
        let Some(contact) = scene.contact.as_mut() else {
            anyhow::bail!("--inequality-method: scene {} has no contact", args.scene);
        };
        contact.method = InequalityMethod::parse(m).context("--inequality-method")?;
    }
    let mut params = scene.params;
    if let Some(dt) = args.dt {
        params.dt_secs = dt;
    }
    if let Some(n) = args.iterations {
        params.max_iterations = n;
    }
    if let Some(b) = args.beta {
        params.beta = b;
    }
    if let Some(r) = args.row_refreshes {
        params.max_row_refreshes = r;
    }
    if args.gauss_seidel {
        params.method = SolverMethod::GaussSeidel;
    }
    check_solver_params(&params)?;
    let mut sim: Simulation = scene.build_with(params)?;
    let script = stylus_script(&args)?;
    let spring = StylusSpring {
        stiffness_n_per_m: args.stylus_stiffness,
        damping_n_s_per_m: args.stylus_damping,
    };
    let mut wind = wind_of(&args, &scene)?;

    // The files are opened before the run (a bad path shows at once) and written as it goes;
    // the real-time factor includes formatting and buffered writing.
    let mut csv = match &args.csv {
        Some(path) => Some(CsvStream::create(path, scripted::csv_header(&sim))?),
        None => None,
    };
    let mut poses = match &args.poses {
        Some(path) => Some(CsvStream::create(path, scripted::POSES_CSV_HEADER)?),
        None => None,
    };
    let mut contacts = match &args.contacts {
        Some(path) => Some(CsvStream::create(path, CONTACTS_HEADER)?),
        None => None,
    };
    let mut contact_summary = ContactSummary::default();
    let mut series = args.plot.as_ref().map(|_| Series::default());
    let mut steps_done = 0usize;
    let before_step = |sim: &mut Simulation| {
        if let Some((schedule, _, element, max_force)) = wind.as_mut() {
            element.apply(sim, schedule.level_at(sim.time_secs()), 0.0);
            *max_force = max_force.max(element.last_total_force().norm());
        }
    };
    let watch = RunWatch::start(planned_steps(&args, sim.dt_secs()))?;
    let started = Instant::now();
    let result = run_scripted_with(
        &mut sim,
        script.as_ref(),
        spring,
        args.duration,
        before_step,
        |sim| {
            steps_done += 1;
            if let Some(out) = csv.as_mut() {
                out.write_rows(|w| scripted::csv_row(sim, w));
            }
            if let Some(out) = poses
                .as_mut()
                .filter(|_| steps_done.is_multiple_of(args.poses_every))
            {
                out.write_rows(|rows| scripted::poses_csv_rows(sim, rows));
            }
            if let Some(series) = series.as_mut() {
                series.push(sim.diagnostics());
            }
            contact_summary.update(sim);
            if let Some(out) = contacts.as_mut() {
                out.write_rows(|rows| contact_rows(sim, rows));
            }
            watch.after_step(steps_done, sim.time_secs(), || {
                [csv.take(), poses.take(), contacts.take()]
            });
        },
    );
    watch.finish();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            // The rows up to the failed step are the evidence: flush them.
            let kept = finish_all([csv.take(), poses.take(), contacts.take()]);
            return Err(anyhow::Error::new(e)
                .context(format!("simulation stopped after {steps_done} steps{kept}")));
        }
    };
    let wall = started.elapsed().as_secs_f64();
    csv.map(CsvStream::finish).transpose()?;
    poses.map(CsvStream::finish).transpose()?;
    contacts.map(CsvStream::finish).transpose()?;
    if let (Some(path), Some(series)) = (&args.plot, &series) {
        plot(path, series).with_context(|| format!("cannot draw plot {}", path.display()))?;
    }

    let joints = sim.joints();
    let constraint_rows: usize = joints.iter().map(|j| j.rows()).sum();
    let dynamic_bodies = sim.bodies().iter().filter(|b| b.is_dynamic()).count();
    let mut out = std::io::stdout().lock();
    writeln!(out, "scene              {}", args.scene)?;
    writeln!(
        out,
        "model              {dynamic_bodies} dynamic bodies, {} joints, {constraint_rows} constraint rows",
        joints.len()
    )?;
    writeln!(
        out,
        "steps              {} (h = {} s, {:.*} s simulated)",
        summary.steps,
        sim.dt_secs(),
        scripted::TIME_DECIMALS,
        summary.simulated_secs
    )?;
    writeln!(
        out,
        "wall time          {:.4} s ({:.2} us/step)",
        wall,
        1e6 * wall / summary.steps.max(1) as f64
    )?;
    writeln!(
        out,
        "real-time factor   {:.1}",
        summary.simulated_secs / wall.max(1e-12)
    )?;
    writeln!(
        out,
        "max |psi|          {:.3e} m",
        summary.max_constraint_norm_m
    )?;
    if script.is_some() {
        writeln!(
            out,
            "max |psi| released {:.3e} m",
            summary.max_constraint_norm_after_release_m
        )?;
        write_grab_distance(&mut out, &summary)?;
    }
    writeln!(
        out,
        "max |energy drift| {:.3e} J = {:.4} % of E_ref = {:.5} J (E_ref: the largest of the \
         peak kinetic energy, the potential and elastic energy ranges and the injected work)",
        summary.max_abs_energy_drift_j,
        100.0 * summary.max_abs_energy_error_rel,
        summary.energy_reference_j
    )?;
    if summary.dissipation_reversed_j
        > (DISSIPATION_REVERSED_NOTE_REL * summary.energy_reference_j)
            .max(DISSIPATION_REVERSED_FLOOR_J)
    {
        writeln!(
            out,
            "warning: dissipation ran backwards in {} steps by {:.3e} J in all: dampers or contact impulses \
             gave energy to the motion (physically they only take it); the balance books it, but the \
             motion gained energy nothing supplied",
            summary.dissipation_reversed_steps, summary.dissipation_reversed_j
        )?;
    }
    writeln!(
        out,
        "solves / sweeps    {:.2} per step, max {}; position pass in {} steps; {} steps split into sub-steps",
        summary.total_iterations as f64 / summary.steps.max(1) as f64,
        summary.max_iterations,
        summary.position_pass_steps,
        summary.split_steps
    )?;
    writeln!(
        out,
        "factorisations     {:.2} per step (coupled matrix)",
        summary.total_factorisations as f64 / summary.steps.max(1) as f64
    )?;
    if let Some(contact) = sim.model().contact.as_ref() {
        writeln!(
            out,
            "contacts           {} method; max penetration {:.3e} m; most loaded points in a step {}, {:.2} per step",
            contact.method.name(),
            contact_summary.max_penetration_m,
            contact_summary.max_points,
            contact_summary.point_steps as f64 / summary.steps.max(1) as f64
        )?;
    }
    if let Some(wind) = &wind {
        write_wind(&mut out, wind)?;
        writeln!(out)?;
    }
    Ok(())
}

/// The steps a run of `--duration` at step `dt_secs` plans (for the progress bar).
pub(super) fn planned_steps(args: &SimulateArgs, dt_secs: f64) -> u64 {
    (args.duration / dt_secs).round().max(0.0) as u64
}
