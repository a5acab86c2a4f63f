//! `calibrate tracker`: the arm-to-marker transform `world_from_arm` (Mariti & Valentini,
//! Eq. 1–9) from touched points, written as a tracker calibration file.
//!
//! Three ways to get the point pairs:
//! - `--pairs PAIRS.csv`: pairs measured elsewhere (header `world_x,world_y,world_z,arm_x,arm_y,arm_z`, m).
//! - `--arm PORT [--object FILE]`: the guided procedure with the digitizer arm.
//! - `--simulate-user HIDDEN.toml [--object FILE]`: starts a simulated arm on a pseudo-terminal,
//!   connects the real driver to it as with `--arm`, and lets a simulated user touch each
//!   requested point (0.2 mm hand noise) as if `HIDDEN.toml` (a tracker file) were the true
//!   `world_from_arm`; prints how well the result reproduces it.

use anyhow::{bail, Context};
use ar_calibration::fit_report::{calibrate, FitReport};
use ar_calibration::pairs_csv::load_pairs;
use ar_calibration::tracker_file::TrackerCalibration;
use clap::{ArgGroup, Args};
use std::path::{Path, PathBuf};

/// Arguments of `calibrate tracker`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["pairs", "arm", "simulate_user"])))]
pub struct CalibrateTrackerArgs {
    /// Fit from a CSV of point pairs (header world_x,world_y,world_z,arm_x,arm_y,arm_z; metres).
    #[arg(long, value_name = "PAIRS.csv")]
    pairs: Option<PathBuf>,
    /// Guided calibration with the digitizer arm on this serial port.
    #[arg(long, value_name = "PORT")]
    arm: Option<String>,
    /// Unattended run: a simulated arm and a simulated user whose true world_from_arm is in
    /// this tracker file.
    #[arg(long, value_name = "HIDDEN.toml")]
    simulate_user: Option<PathBuf>,
    /// The calibration object to touch (default: the 80 mm cube of assets/calibration).
    #[arg(long, value_name = "FILE", conflicts_with = "pairs")]
    object: Option<PathBuf>,
    /// Where to write the tracker calibration (TOML, written atomically).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Rounds of re-picking points flagged as likely mis-picks.
    #[arg(long, default_value_t = 2, value_name = "N")]
    repick_rounds: usize,
    /// Give up when no pedal press comes within this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pick_timeout_secs: f64,
    /// Seed of the simulated user's hand noise.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,
}

/// Runs the command.
pub fn run(args: CalibrateTrackerArgs) -> anyhow::Result<()> {
    if let Some(pairs) = &args.pairs {
        return run_pairs(pairs, &args.out);
    }
    bail!("the guided procedure (--arm, --simulate-user) needs the arm driver (issue 3), not merged yet")
}

fn save(report: &FitReport, points: usize, out: &Path) -> anyhow::Result<()> {
    let file = TrackerCalibration {
        world_from_arm: report.world_from_arm(),
        rms_mm: report.rms_mm(),
        fit: Some(report.chosen.name().to_owned()),
        points: Some(points),
    };
    file.save(out)?;
    println!(
        "wrote {} ({} fit, RMS {:.3} mm over {points} points)",
        out.display(),
        report.chosen,
        report.rms_mm()
    );
    Ok(())
}

fn run_pairs(path: &Path, out: &Path) -> anyhow::Result<()> {
    let pairs = load_pairs(path)?;
    let world: Vec<_> = pairs.iter().map(|p| p.p_in_world).collect();
    let arm: Vec<_> = pairs.iter().map(|p| p.p_in_arm).collect();
    let report = calibrate(&world, &arm).with_context(|| {
        format!(
            "{}: cannot calibrate from these pairs (point k is the k-th data row; the first is on line {})",
            path.display(),
            pairs.first().map_or(2, |p| p.line)
        )
    })?;
    println!("{report}");
    if !report.suspects.is_empty() {
        let lines: Vec<String> = report
            .suspects
            .iter()
            .map(|&i| format!("point {} (line {})", i + 1, pairs[i].line))
            .collect();
        println!("check {}: measure again and re-run", lines.join(", "));
    }
    save(&report, pairs.len(), out)
}
