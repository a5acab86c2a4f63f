//! `simulate`: runs a scene headless as fast as it can, optionally scripted, and prints a
//! summary (steps, wall time, real-time factor, max ‖ψ‖, max |energy error|); writes the
//! per-step CSV and a plot on request.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;

use ar_multibody::sim::wind::{LevelSchedule, WindElement};
use ar_multibody::sim::{
    run_scripted_with, scripted, stylus, Scene, Simulation, SolverMethod, StylusScript,
    StylusSpring,
};

/// Arguments of `simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Scene name (a file in assets/scenes/, e.g. ten_pendula) or path to a scene file (TOML).
    pub scene: String,
    /// Simulated duration (s).
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Time step h (s); default: the scene's `[solver] dt_secs` (0.01).
    #[arg(long)]
    pub dt: Option<f64>,
    /// Cap on velocity Gauss–Seidel sweeps per step (default: the scene's, or 100).
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Baumgarte factor β in (0, 1] (default: the scene's, or 1).
    #[arg(long)]
    pub beta: Option<f64>,
    /// Most re-evaluations of the midpoint rows per step (default 10; a step stops once they
    /// converge, usually after 2 or 3). A step that has not converged within a lower cap is split
    /// into shorter steps, so a lower cap is rarely faster; 0 skips them (fast, but the energy
    /// balance is then off by several per cent).
    #[arg(long)]
    pub row_refreshes: Option<usize>,
    /// Solve with the paper's Gauss–Seidel sweeps instead of the coupled direct solve.
    #[arg(long)]
    pub gauss_seidel: bool,
    /// Stylus script (CSV with header `t,x,y,z,grab` or `t,dx,dy,dz,grab`).
    #[arg(long, value_name = "SCRIPT.csv")]
    pub stylus: Option<PathBuf>,
    /// Stylus spring stiffness (N/m).
    #[arg(long, default_value_t = stylus::DEFAULT_STIFFNESS_N_PER_M)]
    pub stylus_stiffness: f64,
    /// Stylus spring damping (N·s/m).
    #[arg(long, default_value_t = stylus::DEFAULT_DAMPING_N_S_PER_M)]
    pub stylus_damping: f64,
    /// Write one CSV row per step here.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Draw ‖ψ‖ and the energies over time into this PNG.
    #[arg(long, value_name = "OUT.png")]
    pub plot: Option<PathBuf>,
    /// Blow: a constant level (microphone RMS above the floor, e.g. 0.2) or a `t,level` CSV
    /// file; the wind comes from the scene's `[wind]` table (or its defaults).
    #[arg(long, value_name = "LEVEL|FILE.csv")]
    pub wind: Option<String>,
}

/// `--wind LEVEL` or `--wind FILE.csv`.
fn wind_schedule(arg: &str) -> Result<LevelSchedule> {
    match arg.parse::<f64>() {
        Ok(level) if level.is_finite() && level >= 0.0 => Ok(LevelSchedule::Constant(level)),
        Ok(level) => anyhow::bail!("--wind level must be zero or positive, got {level}"),
        Err(_) => Ok(LevelSchedule::load(arg)?),
    }
}

/// Everything the plot needs, one entry per step.
#[derive(Default)]
struct Series {
    t: Vec<f64>,
    psi: Vec<f64>,
    kinetic: Vec<f64>,
    potential: Vec<f64>,
    elastic: Vec<f64>,
    user: Vec<f64>,
    dissipated: Vec<f64>,
    error: Vec<f64>,
}

/// Runs the command.
pub fn run(args: SimulateArgs) -> Result<()> {
    anyhow::ensure!(
        args.duration.is_finite() && args.duration >= 0.0,
        "--duration must be a non-negative number of seconds, got {}",
        args.duration
    );
    let scene = Scene::load(ar_multibody::rig::scene_sim::resolve_scene(&args.scene))?;
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
    let mut sim: Simulation = scene.build_with(params)?;
    let script = match &args.stylus {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read stylus script {}", path.display()))?;
            Some(
                StylusScript::parse(&text)
                    .with_context(|| format!("stylus script {}", path.display()))?,
            )
        }
        None => None,
    };
    let spring = StylusSpring {
        stiffness_n_per_m: args.stylus_stiffness,
        damping_n_s_per_m: args.stylus_damping,
    };

    // Rows are collected in memory and written after the timed loop, so the real-time
    // factor measures the solver, not the disk.
    let mut csv = args.csv.as_ref().map(|_| {
        let mut s = scripted::csv_header(&sim);
        s.push('\n');
        s
    });
    let mut series = Series::default();
    let want_plot = args.plot.is_some();
    let started = Instant::now();
    let mut wind = match &args.wind {
        Some(arg) => {
            let schedule = wind_schedule(arg)?;
            let settings = scene.wind.clone().unwrap_or_default();
            let element = WindElement::from_settings(&settings)
                .with_context(|| format!("scene {}", args.scene))?;
            Some((schedule, settings, element, 0.0_f64))
        }
        None => None,
    };
    let before_step = |sim: &mut Simulation| {
        if let Some((schedule, _, element, max_force)) = wind.as_mut() {
            element.apply(sim, schedule.level_at(sim.time_secs()), 0.0);
            *max_force = max_force.max(element.last_total_force().norm());
        }
    };
    let summary = run_scripted_with(
        &mut sim,
        script.as_ref(),
        spring,
        args.duration,
        before_step,
        |sim| {
            if let Some(out) = csv.as_mut() {
                scripted::csv_row(sim, out);
                out.push('\n');
            }
            if want_plot {
                let d = sim.diagnostics();
                series.t.push(d.time_secs);
                series.psi.push(d.constraint_norm_m);
                series.kinetic.push(d.kinetic_j);
                series.potential.push(d.potential_j);
                series.elastic.push(d.elastic_j);
                series.user.push(d.user_work_j);
                series.dissipated.push(d.dissipated_j);
                series.error.push(d.energy_error_rel);
            }
        },
    )?;
    let wall = started.elapsed().as_secs_f64();

    if let (Some(path), Some(text)) = (&args.csv, &csv) {
        ar_calibration::atomic_write::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write CSV {}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        plot(path, &series).with_context(|| format!("cannot draw plot {}", path.display()))?;
    }

    let mut out = std::io::stdout().lock();
    writeln!(out, "scene              {}", args.scene)?;
    writeln!(
        out,
        "steps              {} (h = {} s, {} s simulated)",
        summary.steps,
        sim.dt_secs(),
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
        writeln!(
            out,
            "max grab distance  {:.3e} m (while clipped, from {} s after clipping)",
            summary.max_grab_distance_m,
            scripted::SETTLE_SECS
        )?;
    }
    writeln!(
        out,
        "max |energy error| {:.4} % ({:.2e}) of E_ref = {:.5} J",
        100.0 * summary.max_abs_energy_error_rel,
        summary.max_abs_energy_error_rel,
        summary.energy_reference_j
    )?;
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
    if let Some((_, settings, _, max_force)) = &wind {
        let [x, y, z] = settings.source_in_world_m;
        let [dx, dy, dz] = settings.direction_in_world;
        writeln!(
            out,
            "wind               from ({x}, {y}, {z}) m along ({dx}, {dy}, {dz}); max total force {max_force:.4} N"
        )?;
    }
    Ok(())
}

fn plot(path: &std::path::Path, s: &Series) -> Result<()> {
    use plotters::prelude::*;
    let root = BitMapBackend::new(path, (1200, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(420);
    let t_end = s.t.last().copied().unwrap_or(1.0).max(1e-9);

    let psi_max = s.psi.iter().copied().fold(1e-12_f64, f64::max) * 2.0;
    let mut chart = ChartBuilder::on(&top)
        .caption("constraint error |psi| (m)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, (1e-12..psi_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()?;
    chart.draw_series(LineSeries::new(
        s.t.iter().zip(&s.psi).map(|(&t, &p)| (t, p.max(1e-12))),
        &RED,
    ))?;

    let p0 = s.potential.first().copied().unwrap_or(0.0);
    let lines: [(&str, Vec<f64>, RGBColor); 5] = [
        ("kinetic", s.kinetic.clone(), BLUE),
        (
            "potential - initial",
            s.potential.iter().map(|p| p - p0).collect(),
            GREEN,
        ),
        ("elastic", s.elastic.clone(), MAGENTA),
        ("user work", s.user.clone(), BLACK),
        ("dissipated", s.dissipated.clone(), CYAN),
    ];
    let (mut lo, mut hi) = (0.0_f64, 1e-9_f64);
    for (_, v, _) in &lines {
        for &x in v {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    let pad = 0.05 * (hi - lo);
    let mut chart = ChartBuilder::on(&bottom)
        .caption("energies (J)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, (lo - pad)..(hi + pad))?;
    chart.configure_mesh().x_desc("t (s)").draw()?;
    for (name, v, color) in lines {
        chart
            .draw_series(LineSeries::new(s.t.iter().copied().zip(v), &color))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
