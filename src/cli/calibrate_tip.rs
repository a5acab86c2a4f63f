//! `calibrate tip`: pivot calibration of the stylus tip. The user puts the tip in a dimple (the
//! calibration sheet has one), holds the pedal and swings the stylus around it for a few
//! seconds, then releases; the fit ([`ar_calibration::pivot`]) gives the tip in the stylus
//! frame and the pivot point, with the RMS residual next to the arm's 0.2 mm precision, and
//! refuses motions that do not determine them (under 15° of turn, or a turn about one axis).
//! The tip is written as a tip-correction file (`ar_drivers::arm::tip`), which `arm probe
//! --tip`, `calibrate tracker --tip` and the rig's `[arm] tip` use.
//!
//! `--simulate-user`: a simulated arm on a pseudo-terminal, read through the real driver as
//! with `--arm`, whose stylus has a hidden tip (`--true-tip-mm`) that a simulated user pivots
//! about a dimple; prints how far the result is from the hidden tip and dimple.

use super::calibrate_tracker::{connect, PEDAL_MASK};
use super::keep_better::{save_keeping_better, Existing, NewFit};
use anyhow::{bail, Context};
use ar_calibration::pivot::{fit_pivot, PivotFit, PivotLimits, PivotSample};
use ar_drivers::arm::sim::{pivot_script, PivotMotion};
use ar_drivers::arm::{
    ArmConfig, ArmStatus, ArmWorker, DhParams, PortSpec, SimArmConfig, SimulatedArm, TipCorrection,
};
use clap::{ArgGroup, Args};
use crossbeam_channel::RecvTimeoutError;
use nalgebra::{Point3, Vector3};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The arm's precision, against which the residual is reported (mm).
const ARM_PRECISION_MM: f64 = 0.2;

/// In unattended runs a missing press means something broke: do not wait ten minutes.
const SIMULATED_PEDAL_TIMEOUT: Duration = Duration::from_secs(20);

/// Samples kept for a slow reader: a few seconds of pivot at the arm's ~700 samples/s are all
/// fitted, none dropped because this thread was late.
const CHANNEL_CAPACITY: usize = 8192;

/// Arguments of `calibrate tip`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["arm", "simulate_user"])))]
pub struct CalibrateTipArgs {
    /// The digitizer arm on this serial port (`auto` probes the machine's ports).
    #[arg(long, value_name = "PORT")]
    arm: Option<String>,
    /// Unattended run: a simulated arm whose stylus has a hidden tip (--true-tip-mm) and a
    /// simulated user who pivots it.
    #[arg(long)]
    simulate_user: bool,
    /// Where to write the tip (TOML, written atomically). A file already there with a better
    /// fit (lower RMS), or one that is not a pivot-calibrated tip, is kept and the new fit goes
    /// to NAME.new.toml beside it, unless --force.
    #[arg(long, value_name = "TIP.toml")]
    out: PathBuf,
    /// Replace the file at --out whatever it holds, and write a fit whose residual is over
    /// 1 mm (with a warning).
    #[arg(long)]
    force: bool,
    /// Give up when no pedal press comes within this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECS")]
    pedal_timeout_secs: f64,
    /// With --simulate-user: the hidden tip in the stylus frame, relative to the arm's
    /// built-in tip, millimetres.
    #[arg(long, value_name = "X,Y,Z", default_value = "30,-40,90", value_parser = parse_mm, allow_hyphen_values = true, requires = "simulate_user")]
    true_tip_mm: Vector3<f64>,
    /// With --simulate-user: how far the simulated user swings the wrist each way (degrees);
    /// under about 12 the stylus turns less than the 15° the fit needs.
    #[arg(
        long,
        value_name = "DEG",
        default_value_t = 35.0,
        requires = "simulate_user"
    )]
    simulate_swing_deg: f64,
    /// With --simulate-user: how long the simulated user pivots (seconds).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 4.0,
        requires = "simulate_user"
    )]
    simulate_secs: f64,
}

/// `X,Y,Z` in millimetres, to metres.
fn parse_mm(text: &str) -> Result<Vector3<f64>, String> {
    let v: Vec<f64> = text
        .split(',')
        .map(|f| f.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{text:?}: expected three numbers X,Y,Z (mm)"))?;
    match v[..] {
        [x, y, z] if v.iter().all(|c| c.is_finite() && c.abs() <= 400.0) => {
            Ok(Vector3::new(x, y, z) * 1e-3)
        }
        _ => Err(format!(
            "{text:?}: expected three numbers X,Y,Z (mm), each within ±400"
        )),
    }
}

/// Runs the command.
pub fn run(args: CalibrateTipArgs) -> anyhow::Result<()> {
    if !(args.pedal_timeout_secs.is_finite() && args.pedal_timeout_secs > 0.0) {
        bail!("--pedal-timeout-secs must be a positive number of seconds");
    }
    if !(args.simulate_secs.is_finite() && (1.0..=60.0).contains(&args.simulate_secs)) {
        bail!("--simulate-secs must be between 1 and 60 seconds");
    }
    if !(args.simulate_swing_deg.is_finite() && (0.0..=60.0).contains(&args.simulate_swing_deg)) {
        bail!("--simulate-swing-deg must be between 0 and 60 degrees");
    }
    let cancelled = Arc::new(AtomicBool::new(false));
    super::interrupt::Interrupts::setting(&cancelled)?;
    match &args.arm {
        Some(port) => run_guided(&args, port, &cancelled),
        None => run_simulated(&args, &cancelled),
    }
}

/// The driver's settings: the built-in point tip, so that the fitted tip is relative to it.
fn arm_config(port: PortSpec) -> ArmConfig {
    ArmConfig {
        port,
        tip: TipCorrection::point(),
        channel_capacity: CHANNEL_CAPACITY,
        ..ArmConfig::default()
    }
}

fn instructions() {
    println!(
        "put the stylus tip in the dimple, press and hold the pedal, and swing the stylus \
         around the dimple for a few seconds (at least 15° each way, in a cone), keeping the \
         tip in it; release the pedal to finish"
    );
}

fn run_guided(args: &CalibrateTipArgs, port: &str, cancelled: &AtomicBool) -> anyhow::Result<()> {
    let (worker, params) = connect(arm_config(PortSpec::from_arg(port)), cancelled)?;
    instructions();
    let samples = record_pivot(
        &worker,
        Duration::from_secs_f64(args.pedal_timeout_secs),
        cancelled,
    )?;
    drop(worker);
    let dh = DhParams::from_raw(&params.raw_dh);
    let fit = fit_and_report(&samples, &dh, params.max_values.encoder_max[5] != 0)?;
    save(args, &fit, &dh)
}

fn run_simulated(args: &CalibrateTipArgs, cancelled: &AtomicBool) -> anyhow::Result<()> {
    let sim = SimulatedArm::spawn(SimArmConfig::default()).context("starting the simulated arm")?;
    let control = sim.control();
    let motion = PivotMotion {
        tip_in_stylus: args.true_tip_mm,
        swing_rad: args.simulate_swing_deg.to_radians(),
        duration_s: args.simulate_secs,
    };
    let (script, dimple) = pivot_script(sim.dh(), &control.joint_angles(), &motion)
        .context("--true-tip-mm: the simulated user cannot pivot this tip")?;
    println!(
        "simulated arm on {}; a simulated user pivots a stylus whose hidden tip is at {} mm in \
         the stylus frame",
        sim.port_path().display(),
        mm(&args.true_tip_mm)
    );
    let (worker, params) = connect(arm_config(PortSpec::Path(sim.port_path())), cancelled)?;
    instructions();
    control.play(script);
    let timeout = Duration::from_secs_f64(args.pedal_timeout_secs).min(SIMULATED_PEDAL_TIMEOUT);
    let samples = record_pivot(&worker, timeout, cancelled)?;
    drop(worker);
    let dh = DhParams::from_raw(&params.raw_dh);
    let fit = fit_and_report(&samples, &dh, false)?;
    let saved = save(args, &fit, &dh);
    // The comparison is shown even when the file stayed: it says how good the fit was.
    println!(
        "against the hidden tip: the tip is off by {:.3} mm, the pivot by {:.3} mm",
        (fit.tip_in_stylus - args.true_tip_mm).norm() * 1e3,
        (fit.pivot_in_arm - dimple).norm() * 1e3
    );
    saved
}

/// Samples while the pedal is held: the press must begin after the prompt (a pedal already
/// down is released first), and its release ends the recording.
fn record_pivot(
    worker: &ArmWorker,
    timeout: Duration,
    cancelled: &AtomicBool,
) -> anyhow::Result<Vec<PivotSample>> {
    let deadline = Instant::now() + timeout;
    let mut armed = false;
    let mut samples: Option<Vec<PivotSample>> = None;
    loop {
        if cancelled.load(Ordering::SeqCst) {
            bail!("cancelled; nothing written");
        }
        for status in worker.status().try_iter() {
            match status {
                ArmStatus::Disconnected { reason } if samples.is_some() => {
                    bail!("the arm disconnected during the pivot ({reason}); nothing written")
                }
                ArmStatus::Disconnected { reason } => {
                    eprintln!("arm disconnected ({reason}); reconnecting ...")
                }
                ArmStatus::Connected { .. } => eprintln!("arm reconnected"),
                ArmStatus::Reconnecting { .. } => {}
            }
        }
        if samples.is_none() && Instant::now() >= deadline {
            bail!(
                "no pedal press within {:.0} s (--pedal-timeout-secs); nothing written",
                timeout.as_secs_f64()
            );
        }
        let sample = match worker.samples().recv_timeout(Duration::from_millis(100)) {
            Ok(sample) => sample,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => bail!("the arm worker ended; nothing written"),
        };
        let down = sample.buttons & PEDAL_MASK != 0;
        let reading = PivotSample {
            arm_from_stylus: sample.arm_from_stylus,
            tip_in_arm: sample.tip_in_arm,
        };
        match (&mut samples, down) {
            (_, false) if !armed => armed = true,
            (None, true) if armed => {
                println!("recording the pivot ...");
                samples = Some(vec![reading]);
            }
            (Some(list), true) => list.push(reading),
            (Some(list), false) => return Ok(std::mem::take(list)),
            _ => {}
        }
    }
}

fn mm(v: &Vector3<f64>) -> String {
    format!("({:.2}, {:.2}, {:.2})", v.x * 1e3, v.y * 1e3, v.z * 1e3)
}

/// Fits the samples and prints the result; a motion that does not determine the tip is
/// refused with the reason. `rolls`: the arm has a stylus-roll encoder, about which a tip
/// off the stylus axis cannot be expressed as corrections of the last links.
fn fit_and_report(samples: &[PivotSample], dh: &DhParams, rolls: bool) -> anyhow::Result<PivotFit> {
    let fit = fit_pivot(samples, &PivotLimits::default())
        .context("tip calibration refused; nothing written")?;
    println!(
        "pivot fit over {} samples: tip at {} mm in the stylus frame ({:.2} mm from the \
         arm's built-in tip), pivot at {} mm in the arm frame",
        fit.samples,
        mm(&fit.tip_in_stylus),
        fit.tip_in_stylus.norm() * 1e3,
        mm(&Point3::from(fit.pivot_in_arm).coords)
    );
    println!(
        "RMS residual {:.3} mm ({} the arm's {ARM_PRECISION_MM} mm precision), largest {:.3} mm; \
         the stylus turned up to {:.1}° from its mean orientation; condition number {:.1}",
        fit.rms_m * 1e3,
        if fit.rms_m * 1e3 <= ARM_PRECISION_MM {
            "within"
        } else {
            "over"
        },
        fit.max_residual_m * 1e3,
        fit.span_rad.to_degrees(),
        fit.condition
    );
    let off_axis = fit.tip_in_stylus.xy().norm();
    if rolls && off_axis > 1e-4 {
        bail!(
            "tip calibration refused; nothing written: the tip is {:.2} mm off the stylus axis \
             and this arm has a stylus-roll encoder, about which such a tip turns",
            off_axis * 1e3
        );
    }
    TipCorrection::from_tip_in_stylus(dh, &fit.tip_in_stylus)
        .map_err(|e| anyhow::anyhow!("tip calibration refused; nothing written: {e}"))?;
    Ok(fit)
}

/// Writes the tip through the calibrations' one path for the file at `--out`.
fn save(args: &CalibrateTipArgs, fit: &PivotFit, dh: &DhParams) -> anyhow::Result<()> {
    let out = args.out.as_path();
    super::keep_better::refuse_unless_forced(fit.check(&PivotLimits::default()), out, args.force)?;
    let tip = TipCorrection {
        rms_mm: Some(fit.rms_m * 1e3),
        samples: Some(fit.samples),
        span_deg: Some(fit.span_rad.to_degrees()),
        ..TipCorrection::from_tip_in_stylus(dh, &fit.tip_in_stylus).map_err(anyhow::Error::msg)?
    };
    let comment = format!(
        "Stylus tip from a pivot calibration (ar-multibody calibrate tip).\n\
         Tip in the stylus frame: {} mm from the arm's built-in tip.\n\
         Pivot in the arm's base frame: {} mm.",
        mm(&fit.tip_in_stylus),
        mm(&fit.pivot_in_arm.coords)
    );
    let new = NewFit {
        out,
        rms_mm: fit.rms_m * 1e3,
        over: format!("over {} samples", fit.samples),
        force: args.force,
    };
    save_keeping_better(
        &new,
        existing_tip(out),
        |path| Ok(tip.save(path, &comment)?),
    )?;
    println!(
        "wrote {} (RMS {:.3} mm over {} samples)",
        out.display(),
        fit.rms_m * 1e3,
        fit.samples
    );
    Ok(())
}

/// What a new tip would replace at `out`: a pivot-calibrated tip is compared by its RMS; a
/// tip made by hand (no RMS) or anything else is kept unless `--force`.
fn existing_tip(out: &Path) -> Existing {
    match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Existing::Nothing,
        _ => match TipCorrection::load(out) {
            Ok(TipCorrection {
                rms_mm: Some(rms_mm),
                ..
            }) => Existing::Calibration { rms_mm },
            Ok(_) => Existing::NotComparable {
                what: "a tip correction made by hand".into(),
                detail: Some("no RMS to compare".into()),
            },
            Err(e) => Existing::NotComparable {
                what: "not a tip calibration".into(),
                detail: Some(e.to_string()),
            },
        },
    }
}
