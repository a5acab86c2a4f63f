//! `simulate`: runs a scene headless as fast as it can, optionally scripted, and prints a
//! summary (model size, steps, wall time, real-time factor, max ‖ψ‖, max |energy error|);
//! streams the per-step CSV and the bodies' poses to files, and draws a plot, on request.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use ar_calibration::tracker_file::TrackerCalibration;
use clap::Args;

use super::numeric_arg;

use super::simulate_contacts::{contact_rows, ContactSummary, CONTACTS_HEADER};
use super::simulate_output::{CsvStream, RunWatch, SharedStreams, COLUMNS_HELP};
use super::simulate_plot::{plot, Series};
use super::simulate_summary::FinishedRun;
use ar_dynamics::articulated::Integrator;
use ar_dynamics::contact::InequalityMethod;
use ar_dynamics::drive::csv as run_csv;
use ar_dynamics::model::stylus;
use ar_dynamics::wind::{LevelSchedule, WindElement, WindSettings};
use ar_dynamics::{
    run_scripted, Scene, SceneSimulation, ScriptFrame, SimError, SolverMethod, SolverParams,
    StylusScript, StylusSpring,
};
use ar_multibody::scene_load::load_scene;

/// Arguments of `simulate`. Numeric flags are checked while the command line is parsed
/// ([`numeric_arg`]), so a bad value is reported as such, not as a problem of the scene.
#[derive(Args, Debug)]
#[command(after_long_help = COLUMNS_HELP)]
pub struct SimulateArgs {
    /// Scene name (a file in assets/scenes/, e.g. ten_pendula) or path to a scene file (TOML),
    /// or a URDF (`.urdf`) or MJCF (`.xml`) model, imported with the default options.
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

/// The method `simulate` runs (the rig's, so that every command names it alike).
pub use ar_multibody::rig::method::Method;

/// The integrator of the articulated method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum IntegratorArg {
    /// Semi-implicit Euler, fixed step h.
    Euler,
    /// Classical Runge–Kutta 4, fixed step h.
    Rk4,
    /// Adaptive Runge–Kutta–Fehlberg 4(5) at --tolerance; rows are still written every h.
    Rk45,
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

/// The method of `--method` and `--integrator`, refusing the flags that set the other
/// method's solver (a flag that does not apply is refused, not ignored).
fn method_of(args: &SimulateArgs) -> Result<ar_dynamics::Method> {
    if args.method == Method::Default {
        return Ok(ar_dynamics::Method::Default);
    }
    for (given, flag) in [
        (args.iterations.is_some(), "--iterations"),
        (args.beta.is_some(), "--beta"),
        (args.row_refreshes.is_some(), "--row-refreshes"),
        (args.gauss_seidel, "--gauss-seidel"),
        (args.inequality_method.is_some(), "--inequality-method"),
        (args.contacts.is_some(), "--contacts"),
    ] {
        if given {
            bail!("{flag} sets the default method's solver; it does not apply to --method articulated");
        }
    }
    let integrator = match args.integrator {
        IntegratorArg::Euler => Integrator::SemiImplicitEuler,
        IntegratorArg::Rk4 => Integrator::Rk4,
        IntegratorArg::Rk45 => Integrator::Rk45 {
            tolerance: args.tolerance,
        },
    };
    Ok(ar_dynamics::Method::Articulated {
        integrator,
        substeps: 1,
    })
}

/// Applies the solver flags (`--dt`, `--iterations`, `--beta`, `--row-refreshes`,
/// `--gauss-seidel`, `--inequality-method`) to the scene's settings.
fn apply_solver_flags(args: &SimulateArgs, scene: &mut Scene) -> Result<()> {
    if let Some(m) = &args.inequality_method {
        let Some(contact) = scene.contact.as_mut() else {
            anyhow::bail!("--inequality-method: scene {} has no contact", args.scene);
        };
        contact.method = InequalityMethod::parse(m).context("--inequality-method")?;
    }
    let params = &mut scene.params;
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
    check_solver_params(params)
}

/// The files a run writes as it goes, opened before it (a bad path shows at once).
struct Outputs {
    /// `--csv`, `--poses`, `--contacts`, in that order.
    streams: SharedStreams,
    series: Option<Series>,
    contact_summary: ContactSummary,
}

impl Outputs {
    fn open(args: &SimulateArgs, sim: &SceneSimulation, streams: SharedStreams) -> Result<Self> {
        let open = |path: &Option<PathBuf>, header: Vec<String>| -> Result<Option<CsvStream>> {
            path.as_ref()
                .map(|p| CsvStream::create(p, header))
                .transpose()
        };
        let names = |h: &[&str]| h.iter().map(|c| c.to_string()).collect();
        *streams.lock() = [
            open(&args.csv, run_csv::csv_header(sim))?,
            open(&args.poses, names(&run_csv::POSES_CSV_HEADER))?,
            open(&args.contacts, names(&CONTACTS_HEADER))?,
        ];
        Ok(Self {
            streams,
            series: args.plot.as_ref().map(|_| Series::default()),
            contact_summary: ContactSummary::default(),
        })
    }

    /// Writes the rows of step `step` (1-based), all under one lock: a signal ends the run
    /// between two steps' rows.
    fn after_step(&mut self, args: &SimulateArgs, sim: &SceneSimulation, step: usize) {
        let mut streams = self.streams.lock();
        let [csv, poses, contacts] = &mut *streams;
        if let Some(out) = csv.as_mut() {
            out.write_rows(|w| run_csv::csv_row(sim, w));
        }
        if let Some(out) = poses
            .as_mut()
            .filter(|_| step.is_multiple_of(args.poses_every))
        {
            out.write_rows(|rows| run_csv::poses_csv_rows(sim, rows));
        }
        if let Some(series) = self.series.as_mut() {
            series.push(sim.diagnostics());
        }
        if let Some(default) = sim.as_default() {
            self.contact_summary.update(default);
            if let Some(out) = contacts.as_mut() {
                out.write_rows(|rows| contact_rows(default, rows));
            }
        }
    }
}

/// Runs the command.
pub fn run(args: SimulateArgs) -> Result<()> {
    super::simulate_output::check_paths(&args)?;
    let streams = SharedStreams::default();
    let mut watch = RunWatch::install(streams.clone())?;
    let method = method_of(&args)?;
    let mut scene = load_scene(&ar_dynamics::scene::resolve_scene(&args.scene))?;
    apply_solver_flags(&args, &mut scene)?;
    let mut wind = wind_of(&args, &scene)?;
    let mut sim = SceneSimulation::build(&scene, method)
        .with_context(|| format!("scene {}", args.scene))?
        .with_wind(wind.as_ref().map(|(_, _, element, _)| element.clone()));
    let script = stylus_script(&args)?;
    let spring = StylusSpring {
        stiffness_n_per_m: args.stylus_stiffness,
        damping_n_s_per_m: args.stylus_damping,
    };
    check_some_step(&args, sim.dt_secs())?;
    let mut outputs = Outputs::open(&args, &sim, streams.clone())?;
    let mut steps_done = 0usize;
    let mut max_psi_m = sim.diagnostics().constraint_norm_m;
    watch.start(planned_steps(&args, sim.dt_secs()));
    let started = Instant::now();
    let schedule = wind.as_ref().map(|(schedule, ..)| schedule.clone());
    let mut max_wind_force_n = 0.0_f64;
    let result = run_scripted(
        &mut sim,
        script.as_ref(),
        spring,
        args.duration,
        |t| schedule.as_ref().map_or(0.0, |s| s.level_at(t)),
        |sim| {
            steps_done += 1;
            max_psi_m = max_psi_m.max(sim.diagnostics().constraint_norm_m);
            if let Some(w) = sim.wind() {
                max_wind_force_n = max_wind_force_n.max(w.last_total_force().norm());
            }
            outputs.after_step(&args, sim, steps_done);
            watch.after_step(steps_done, sim.time_secs());
        },
    );
    watch.finish();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            // The rows up to the failed step are the evidence: flush them.
            let kept = streams.finish_all();
            return Err(anyhow::Error::new(e).context(format!(
                "scene {}: simulation stopped after {steps_done} steps{kept}",
                args.scene
            )));
        }
    };
    let wall_secs = started.elapsed().as_secs_f64();
    let finished = std::mem::take(&mut *streams.lock());
    for stream in finished.into_iter().flatten() {
        stream.finish()?;
    }
    if let (Some(path), Some(series)) = (&args.plot, &outputs.series) {
        plot(path, series).with_context(|| format!("cannot draw plot {}", path.display()))?;
    }
    if let Some(w) = wind.as_mut() {
        w.3 = max_wind_force_n;
    }
    let run = FinishedRun {
        args: &args,
        sim: &sim,
        summary: &summary,
        wall_secs,
        max_psi_m,
        scripted: script.is_some(),
        contacts: &outputs.contact_summary,
        wind: wind.as_ref(),
    };
    run.print(&mut std::io::stdout().lock())?;
    Ok(())
}

/// Refuses a positive `--duration` shorter than half a step: it would take no step and write
/// a header-only CSV, which looks like a run that succeeded.
fn check_some_step(args: &SimulateArgs, dt_secs: f64) -> Result<()> {
    if args.duration > 0.0 && planned_steps(args, dt_secs) == 0 {
        let source = if args.dt.is_some() {
            "--dt"
        } else {
            "the scene's [solver] dt_secs"
        };
        anyhow::bail!(
            "--duration {} s is shorter than half a step (h = {dt_secs} s from {source}), so no \
             step would be taken: give a longer --duration or a shorter --dt",
            args.duration
        );
    }
    Ok(())
}

/// The steps a run of `--duration` at step `dt_secs` plans (for the progress bar).
pub(super) fn planned_steps(args: &SimulateArgs, dt_secs: f64) -> u64 {
    (args.duration / dt_secs).round().max(0.0) as u64
}
