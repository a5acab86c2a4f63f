//! `simulate --method articulated`: the scene run by the articulated-body method
//! ([`ar_dynamics::articulated`]) with semi-implicit Euler, RK4 or adaptive RK45, writing the
//! same main CSV columns and poses CSV as the default method, and a summary with the
//! integrator's step counts.
//!
//! `--stylus` and `--wind` drive it through the default method's scripted loop
//! ([`ar_dynamics::run_scripted_with`]): the same script sampling, clip and release, and
//! run summary; the same progress bar and Ctrl-C handling (the rows so far are flushed). Not with this method: the default method's solver flags (`--iterations`,
//! `--beta`, `--row-refreshes`, `--gauss-seidel`); they are refused, not ignored. Joint
//! reactions are not computed, so the CSV has no reaction columns.

use std::io;
use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use ar_io::csv_write::CsvWriter;
use clap::ValueEnum;

use super::simulate::SimulateArgs;
use super::simulate_output::{finish_all, CsvStream, RunWatch};
use super::simulate_plot::{plot, Series};
use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator};
use ar_dynamics::drive::scripted;
use ar_dynamics::{run_scripted_with, Scene};

/// The method `simulate` runs (the rig's, so that every command names it alike).
pub use ar_multibody::rig::method::Method;

/// The integrator of the articulated method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum IntegratorArg {
    /// Semi-implicit Euler, fixed step h.
    Euler,
    /// Classical Runge–Kutta 4, fixed step h.
    Rk4,
    /// Adaptive Runge–Kutta–Fehlberg 4(5) at --tolerance; rows are still written every h.
    Rk45,
}

/// Writes the articulated method's main CSV row: the default method's main columns (its
/// header is cut after `grab_z`), no joint reaction columns.
fn csv_row<W: Write>(sim: &ArticulatedSim, out: &mut CsvWriter<W>) -> io::Result<()> {
    let d = sim.diagnostics();
    let grab: [f64; 3] = sim
        .grab_point_in_world(0)
        .map_or([f64::NAN; 3], |p| p.coords.into());
    let stylus: [f64; 3] = sim
        .stylus_target()
        .map_or([f64::NAN; 3], |t| t.position_in_world.coords.into());
    scripted::main_csv_fields(out.row(), d, stylus, grab).end()
}

fn poses_rows<W: Write>(sim: &ArticulatedSim, out: &mut CsvWriter<W>) -> io::Result<()> {
    let t = sim.diagnostics().time_secs;
    for (id, b) in sim.model().bodies.iter().enumerate() {
        if b.is_dynamic() {
            let pose = sim.body_pose(id);
            scripted::pose_csv_row(out, t, &b.name, &pose, sim.body_velocity(id))?;
        }
    }
    Ok(())
}

/// Runs `simulate` with the articulated method.
pub fn run(args: &SimulateArgs) -> Result<()> {
    for (given, flag) in [
        (args.iterations.is_some(), "--iterations"),
        (args.beta.is_some(), "--beta"),
        (args.row_refreshes.is_some(), "--row-refreshes"),
        (args.gauss_seidel, "--gauss-seidel"),
    ] {
        if given {
            bail!("{flag} sets the default method's solver; it does not apply to --method articulated");
        }
    }
    let scene = Scene::load(ar_multibody::rig::scene_sim::resolve_scene(&args.scene))?;
    let integrator = match args.integrator {
        IntegratorArg::Euler => Integrator::SemiImplicitEuler,
        IntegratorArg::Rk4 => Integrator::Rk4,
        IntegratorArg::Rk45 => Integrator::Rk45 {
            tolerance: args.tolerance,
        },
    };
    let params = ArticulatedParams {
        dt_secs: args.dt.unwrap_or(scene.params.dt_secs),
        integrator,
    };
    let mut sim = ArticulatedSim::from_scene(&scene, params)
        .with_context(|| format!("scene {}", args.scene))?;
    let mut csv = match &args.csv {
        Some(path) => Some(CsvStream::create(path, scripted::MAIN_CSV_COLUMNS)?),
        None => None,
    };
    let mut poses = match &args.poses {
        Some(path) => Some(CsvStream::create(path, scripted::POSES_CSV_HEADER)?),
        None => None,
    };
    let mut series = args.plot.as_ref().map(|_| Series::default());
    let script = super::simulate::stylus_script(args)?;
    let spring = scripted::StylusSpring {
        stiffness_n_per_m: args.stylus_stiffness,
        damping_n_s_per_m: args.stylus_damping,
    };
    let mut wind = super::simulate::wind_of(args, &scene)?;
    let mut max_psi_m = sim.diagnostics().constraint_norm_m;
    let mut steps_done = 0usize;
    let watch = RunWatch::start(super::simulate::planned_steps(args, sim.dt_secs()))?;
    let started = Instant::now();
    let result = run_scripted_with(
        &mut sim,
        script.as_ref(),
        spring,
        args.duration,
        |sim| {
            if let Some((schedule, _, element, max_force)) = wind.as_mut() {
                element.apply(sim, schedule.level_at(sim.time_secs()), 0.0);
                *max_force = max_force.max(element.last_total_force().norm());
            }
        },
        |sim| {
            steps_done += 1;
            max_psi_m = max_psi_m.max(sim.diagnostics().constraint_norm_m);
            if let Some(out) = csv.as_mut() {
                out.write_rows(|w| csv_row(sim, w));
            }
            if let Some(out) = poses
                .as_mut()
                .filter(|_| steps_done.is_multiple_of(args.poses_every))
            {
                out.write_rows(|w| poses_rows(sim, w));
            }
            if let Some(series) = series.as_mut() {
                series.push(sim.diagnostics());
            }
            watch.after_step(steps_done, sim.time_secs(), || [csv.take(), poses.take()]);
        },
    );
    watch.finish();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            // The rows up to the failed step are the evidence: flush them.
            let kept = finish_all([csv.take(), poses.take()]);
            return Err(anyhow::Error::new(e).context(format!(
                "scene {}: simulation stopped after {steps_done} steps{kept}",
                args.scene
            )));
        }
    };
    let (steps, max_drift_j, h) = (summary.steps, summary.max_abs_energy_drift_j, sim.dt_secs());
    let wall = started.elapsed().as_secs_f64();
    csv.map(CsvStream::finish).transpose()?;
    poses.map(CsvStream::finish).transpose()?;
    if let (Some(path), Some(series)) = (&args.plot, &series) {
        plot(path, series).with_context(|| format!("cannot draw plot {}", path.display()))?;
    }

    let tree = sim.tree();
    let stats = sim.stats();
    let d = sim.diagnostics();
    let mut out = std::io::stdout().lock();
    writeln!(out, "scene              {}", args.scene)?;
    writeln!(
        out,
        "method             articulated (reduced coordinates, ABA)"
    )?;
    writeln!(
        out,
        "model              {} links, {} degrees of freedom ({} coordinates)",
        tree.links().len(),
        tree.nv(),
        tree.nq()
    )?;
    let tolerance = match integrator {
        Integrator::Rk45 { tolerance } => format!(", tolerance {tolerance:e}"),
        _ => String::new(),
    };
    writeln!(
        out,
        "steps              {steps} (h = {h} s, {:.*} s simulated)",
        scripted::TIME_DECIMALS,
        sim.time_secs()
    )?;
    writeln!(
        out,
        "integrator         {}{tolerance}: {} accepted, {} rejected steps, {} evaluations",
        integrator.name(),
        stats.accepted_steps,
        stats.rejected_steps,
        stats.evaluations
    )?;
    writeln!(
        out,
        "wall time          {:.4} s ({:.2} us/step)",
        wall,
        1e6 * wall / steps.max(1) as f64
    )?;
    writeln!(
        out,
        "real-time factor   {:.1}",
        sim.time_secs() / wall.max(1e-12)
    )?;
    let loops = sim.loops();
    if loops.is_empty() {
        writeln!(
            out,
            "max |psi|          0 m (a tree: joints exact by construction)"
        )?;
    } else {
        writeln!(
            out,
            "max |psi|          {max_psi_m:.3e} m ({} loop-closing joints, {} rows)",
            loops.joints().len(),
            loops.rows()
        )?;
    }
    writeln!(
        out,
        "max |energy drift| {:.3e} J = {:.4} % of E_ref = {:.5} J",
        max_drift_j,
        100.0 * max_drift_j / d.energy_reference_j,
        d.energy_reference_j
    )?;
    if script.is_some() {
        super::simulate::write_grab_distance(&mut out, &summary)?;
        writeln!(out, "user work          {:.5} J", d.user_work_j)?;
    }
    if let Some(wind) = &wind {
        super::simulate::write_wind(&mut out, wind)?;
        writeln!(out, "; work {:.5} J", d.external_work_j)?;
    }
    Ok(())
}
