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

use super::keep_better::{save_keeping_better, Existing, NewFit};
use anyhow::{bail, Context};
use ar_calibration::accuracy::transform_error;
use ar_calibration::calibration_object::CalibrationObject;
use ar_calibration::fit_report::{calibrate, FitReport};
use ar_calibration::pairs_csv::load_pairs;
use ar_calibration::pick_session::{
    PickError, PickRequest, PickSession, PickSource, SessionOutcome, SessionUi,
};
use ar_calibration::simulated_user::{SimulatedUser, SimulatedUserPicks, UserTiming};
use ar_calibration::tracker_file::{ExistingCalibration, TrackerCalibration};
use ar_drivers::arm::{
    ArmConfig, ArmParams, ArmStatus, ArmWorker, PortSpec, SimArmConfig, SimulatedArm, TipCorrection,
};
use clap::{ArgGroup, Args};
use crossbeam_channel::RecvTimeoutError;
use nalgebra::{Point3, Vector3};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Either pedal counts (bit 0 right/single pedal, bit 1 left pedal).
pub(super) const PEDAL_MASK: u8 = 0x03;

/// A pick averages the tip over at most this much of the press: long enough to smooth a
/// jittery hand, short enough that a slow release does not drag the point.
const PICK_AVERAGE: Duration = Duration::from_millis(100);

/// How long to wait for the arm's handshake before giving up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A slipped touch of the simulated user: 5 mm off (3 mm sideways, 4 mm up) in the arm frame.
const SLIP_IN_ARM_M: Vector3<f64> = Vector3::new(0.003, 0.0, 0.004);

/// In unattended runs a missing press means something broke: do not wait ten minutes.
const SIMULATED_PICK_TIMEOUT_SECS: f64 = 20.0;

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
    /// The stylus tip from `calibrate tip` (default: the arm's built-in point tip): the
    /// touched points are where this tip is.
    #[arg(long, value_name = "TIP.toml", requires = "arm")]
    tip: Option<PathBuf>,
    /// The calibration object to touch (default: the 80 mm cube of assets/calibration).
    #[arg(long, value_name = "FILE", conflicts_with = "pairs")]
    object: Option<PathBuf>,
    /// Where to write the tracker calibration (TOML, written atomically). A fit that fails the
    /// checks (mirrored points, millimetres for metres, a scale mismatch, an RMS residual over
    /// 5 mm = 25× the arm's 0.2 mm precision) is not written and the old file stays; a fit
    /// worse than the calibration already there goes to NAME.new.toml beside it instead.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Write the fit even when it fails the checks (with a warning naming the failure), or
    /// over a better calibration or a file that is not one.
    #[arg(long)]
    force: bool,
    /// Rounds of re-picking points flagged as likely mis-picks.
    #[arg(long, default_value_t = 2, value_name = "N")]
    repick_rounds: usize,
    /// Give up when no pedal press comes within this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pick_timeout_secs: f64,
    /// Seed of the simulated user's hand noise.
    #[arg(
        long,
        default_value_t = 1,
        value_name = "N",
        requires = "simulate_user"
    )]
    seed: u64,
    /// With --simulate-user: the first touch of point N (1-based; repeatable) slips 5 mm off
    /// the corner, to see the mis-pick flag and the re-pick.
    #[arg(long, value_name = "N", requires = "simulate_user")]
    simulate_slip: Vec<usize>,
}

/// Runs the command.
pub fn run(args: CalibrateTrackerArgs) -> anyhow::Result<()> {
    // `--out` naming an input (`--pairs P --out P`) would replace it with the fit: refused
    // before anything is read or written.
    let inputs: Vec<_> = [
        ("--pairs", &args.pairs),
        ("--object", &args.object),
        ("--simulate-user", &args.simulate_user),
        ("--tip", &args.tip),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.as_deref().map(|p| (flag, p)))
    .collect();
    ar_io::output_target::check_distinct(&inputs, &[("--out", &args.out)])?;
    if let Some(pairs) = &args.pairs {
        return run_pairs(pairs, &args.out, args.force);
    }
    if !(args.pick_timeout_secs.is_finite() && args.pick_timeout_secs > 0.0) {
        bail!("--pick-timeout-secs must be a positive number of seconds");
    }
    let object = match &args.object {
        Some(path) => CalibrationObject::load(path)?,
        None => CalibrationObject::cube_80mm()?,
    };
    let cancelled = Arc::new(AtomicBool::new(false));
    super::interrupt::Interrupts::setting(&cancelled)?;
    match (&args.arm, &args.simulate_user) {
        (Some(port), None) => run_guided(&args, &object, port, cancelled),
        (None, Some(hidden)) => run_simulated(&args, &object, hidden, cancelled),
        _ => bail!("give either --arm PORT or --simulate-user HIDDEN.toml"),
    }
}

/// The driver's settings for the guided procedure: the port and the stylus tip (`--tip`, or
/// the arm's built-in point tip), read before anything connects so that a bad file is named
/// first.
fn arm_config(args: &CalibrateTrackerArgs, port: PortSpec) -> anyhow::Result<ArmConfig> {
    let tip = match &args.tip {
        Some(path) => TipCorrection::load(path)?,
        None => TipCorrection::point(),
    };
    Ok(ArmConfig {
        port,
        tip,
        ..ArmConfig::default()
    })
}

/// Starts the arm worker on `config` and waits for its handshake, reporting failed attempts;
/// gives the worker and the parameters the arm told (also `calibrate tip`'s way in).
pub(super) fn connect(
    config: ArmConfig,
    cancelled: &AtomicBool,
) -> anyhow::Result<(ArmWorker, Box<ArmParams>)> {
    let port = config.port.clone();
    port.check_present()?;
    println!("connecting to the arm on {port} ...");
    let worker = ArmWorker::spawn(config).context("starting the arm worker thread")?;
    let deadline = Instant::now() + CONNECT_TIMEOUT;
    let mut last_problem = String::from("no answer");
    loop {
        if cancelled.load(Ordering::SeqCst) {
            bail!("cancelled before the arm answered; nothing written");
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!(
                "the arm on {port} did not complete the handshake within {} s (last problem: {last_problem})",
                CONNECT_TIMEOUT.as_secs()
            );
        }
        match worker
            .status()
            .recv_timeout(left.min(Duration::from_millis(200)))
        {
            Ok(ArmStatus::Connected {
                identity,
                baud,
                params,
                ..
            }) => {
                println!("connected: {identity} at {baud} Bd");
                return Ok((worker, params));
            }
            Ok(ArmStatus::Disconnected { reason }) => {
                log::info!("arm: {reason}");
                last_problem = reason;
            }
            Ok(ArmStatus::Reconnecting { .. }) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => bail!("the arm worker ended: {last_problem}"),
        }
    }
}

/// Picks from the arm driver: a pick is the stylus tip while a pedal goes down, averaged over
/// the first [`PICK_AVERAGE`] of the press. A press already held when the prompt appears does
/// not count; the pedal must be released first.
struct ArmPicks<'w> {
    worker: &'w ArmWorker,
    timeout: Duration,
    cancelled: Arc<AtomicBool>,
}

impl PickSource for ArmPicks<'_> {
    fn pick(&mut self, _request: &PickRequest) -> Result<Point3<f64>, PickError> {
        let deadline = Instant::now() + self.timeout;
        let mut armed = false;
        let mut press: Option<(Instant, Vector3<f64>, usize)> = None;
        loop {
            if self.cancelled.load(Ordering::SeqCst) {
                return Err(PickError::Cancelled);
            }
            for status in self.worker.status().try_iter() {
                match status {
                    ArmStatus::Disconnected { reason } => {
                        eprintln!("arm disconnected ({reason}); reconnecting ...")
                    }
                    ArmStatus::Connected { .. } => eprintln!("arm reconnected"),
                    ArmStatus::Reconnecting { .. } => {}
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() && press.is_none() {
                return Err(PickError::Timeout {
                    secs: self.timeout.as_secs_f64(),
                });
            }
            let sample = match self
                .worker
                .samples()
                .recv_timeout(left.clamp(Duration::from_millis(1), Duration::from_millis(100)))
            {
                Ok(sample) => sample,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PickError::Disconnected("the arm worker ended".into()))
                }
            };
            let down = sample.buttons & PEDAL_MASK != 0;
            match (&mut press, down) {
                (_, false) if !armed => armed = true,
                (None, true) if armed => press = Some((sample.t, sample.tip_in_arm.coords, 1)),
                (Some((start, sum, n)), true) => {
                    *sum += sample.tip_in_arm.coords;
                    *n += 1;
                    if sample.t.duration_since(*start) >= PICK_AVERAGE {
                        break;
                    }
                }
                (Some(_), false) => break,
                _ => {}
            }
        }
        let (_, sum, n) = press.ok_or(PickError::Cancelled)?;
        Ok(Point3::from(sum / n as f64))
    }
}

/// Prompts and progress on the terminal.
struct ConsoleUi;

impl SessionUi for ConsoleUi {
    fn prompt(&mut self, request: &PickRequest) {
        println!("{}", request.prompt());
    }
    fn picked(&mut self, request: &PickRequest, tip_in_arm: &Point3<f64>) {
        println!(
            "  got point {}/{} at ({:.2}, {:.2}, {:.2}) mm in the arm frame",
            request.index + 1,
            request.total,
            tip_in_arm.x * 1e3,
            tip_in_arm.y * 1e3,
            tip_in_arm.z * 1e3
        );
    }
    fn fitted(&mut self, report: &FitReport, round: usize) {
        println!("fit after round {round}:\n{report}");
    }
    fn message(&mut self, text: &str) {
        println!("{text}");
    }
}

fn introduce(object: &CalibrationObject) {
    println!(
        "calibrating the arm against \"{}\" ({} points)",
        object.name,
        object.points.len()
    );
    if !object.description.is_empty() {
        println!("{}", object.description);
    }
}

fn run_session(
    args: &CalibrateTrackerArgs,
    object: &CalibrationObject,
    source: &mut dyn PickSource,
) -> anyhow::Result<SessionOutcome> {
    let outcome = PickSession::new(object, args.repick_rounds)
        .run(source, &mut ConsoleUi)
        .context("calibration not completed; nothing written")?;
    save(
        &outcome.report,
        outcome.p_in_arm.len(),
        &args.out,
        args.force,
    )?;
    say(&wrote(&outcome.report, outcome.p_in_arm.len(), &args.out))?;
    Ok(outcome)
}

fn run_guided(
    args: &CalibrateTrackerArgs,
    object: &CalibrationObject,
    port: &str,
    cancelled: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let (worker, _) = connect(arm_config(args, PortSpec::from_arg(port))?, &cancelled)?;
    introduce(object);
    let mut source = ArmPicks {
        worker: &worker,
        timeout: Duration::from_secs_f64(args.pick_timeout_secs),
        cancelled,
    };
    run_session(args, object, &mut source)?;
    Ok(())
}

fn run_simulated(
    args: &CalibrateTrackerArgs,
    object: &CalibrationObject,
    hidden_path: &Path,
    cancelled: Arc<AtomicBool>,
) -> anyhow::Result<()> {
    let hidden = TrackerCalibration::load(hidden_path)?.world_from_arm;
    let sim = SimulatedArm::spawn(SimArmConfig::default()).context("starting the simulated arm")?;
    let control = sim.control();
    // Every point must be reachable, or the simulated user would stall mid-session.
    let rest = control.joint_angles();
    for (i, p) in object.points.iter().enumerate() {
        control
            .set_tip_target(hidden.inverse() * p.p_in_world)
            .with_context(|| {
                format!(
                    "{}: point {} ({}) is out of the simulated arm's reach with this world_from_arm",
                    hidden_path.display(),
                    i + 1,
                    p.label
                )
            })?;
    }
    control.set_joint_angles(rest);
    println!(
        "simulated arm on {}; a simulated user touches the points (hidden world_from_arm from {})",
        sim.port_path().display(),
        hidden_path.display()
    );
    let (worker, _) = connect(
        ArmConfig {
            port: PortSpec::Path(sim.port_path()),
            ..ArmConfig::default()
        },
        &cancelled,
    )?;
    introduce(object);
    let user = SimulatedUser::spawn(hidden, args.seed, UserTiming::default(), control)
        .context("starting the simulated user")?;
    let mut source = SimulatedUserPicks::new(
        user,
        ArmPicks {
            worker: &worker,
            timeout: Duration::from_secs_f64(
                args.pick_timeout_secs.min(SIMULATED_PICK_TIMEOUT_SECS),
            ),
            cancelled,
        },
    );
    for &n in &args.simulate_slip {
        if n == 0 || n > object.points.len() {
            bail!(
                "--simulate-slip {n}: the object has points 1 to {}",
                object.points.len()
            );
        }
        source = source.with_slip(n - 1, SLIP_IN_ARM_M);
    }
    let outcome = run_session(args, object, &mut source)?;
    let error = transform_error(
        &outcome.report.world_from_arm(),
        &hidden,
        &object.positions(),
    );
    println!(
        "against the hidden transform: {:.3} mm RMS on the true points, rotation off by {:.3} deg",
        error.rms_m * 1e3,
        error.angle_rad.to_degrees()
    );
    Ok(())
}

/// Checks the fit ([`FitReport::check`]) and writes it atomically; a refused fit is not
/// written (the old file stays) unless `force`, which writes it with a warning. A file
/// already at `out` is replaced only by a fit at least as good, or with `force`: else the
/// new fit goes beside it ([`super::keep_better`]) so that a session's touches are not lost, and the
/// run fails naming both. Prints nothing on success but what it replaced (stderr), so that
/// the file is on disk before any output can fail.
fn save(report: &FitReport, points: usize, out: &Path, force: bool) -> anyhow::Result<()> {
    super::keep_better::refuse_unless_forced(report.check(), out, force)?;
    let file = TrackerCalibration {
        world_from_arm: report.world_from_arm(),
        rms_mm: report.rms_mm(),
        fit: Some(report.chosen.name().to_owned()),
        points: Some(points),
    };
    let existing = match ExistingCalibration::at(out) {
        ExistingCalibration::Nothing => Existing::Nothing,
        ExistingCalibration::Calibration(old) => Existing::Calibration { rms_mm: old.rms_mm },
        ExistingCalibration::Unreadable(e) => Existing::NotComparable {
            what: "not a tracker calibration".into(),
            detail: Some(e.to_string()),
        },
    };
    let fit = NewFit {
        out,
        rms_mm: file.rms_mm,
        over: format!("over {points} points"),
        force,
    };
    save_keeping_better(&fit, existing, |path| Ok(file.save(path)?))
}

fn wrote(report: &FitReport, points: usize, out: &Path) -> String {
    format!(
        "wrote {} ({} fit, RMS {:.3} mm over {points} points)",
        out.display(),
        report.chosen,
        report.rms_mm()
    )
}

/// Prints a line to stdout; a failed write (full disk, closed pipe) is an error, not a panic.
fn say(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}")
        .and_then(|()| stdout.flush())
        .context("writing to standard output")
}

fn run_pairs(path: &Path, out: &Path, force: bool) -> anyhow::Result<()> {
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
    let mut text = report.to_string();
    if !report.suspects.is_empty() {
        let lines: Vec<String> = report
            .suspects
            .iter()
            .map(|&i| format!("point {} (line {})", i + 1, pairs[i].line))
            .collect();
        text.push_str(&format!(
            "\ncheck {}: measure again and re-run",
            lines.join(", ")
        ));
    }
    // Save first: a failing stdout must not lose the calibration. A refused fit still shows
    // its report (on stderr, with the error) so that the user sees why.
    if let Err(e) = save(&report, pairs.len(), out, force) {
        eprintln!("{text}");
        return Err(e);
    }
    say(&text)?;
    say(&wrote(&report, pairs.len(), out))
}
