//! `arm` subcommands: `arm simulate` serves a simulated MicroScribe on a pseudo-terminal;
//! `arm probe` talks to an arm (real or simulated) through the serial driver, prints what it
//! says about itself, N samples and the measured sample rate.
//!
//! `arm probe` streams through the driver's worker (the rig's): it reconnects after silence or
//! an unplug (0.3–1.4 s), passes on only samples that survive the plausibility filters, writes
//! each row to stdout and to `--csv` as it arrives (flushed, so a crash keeps them), ends
//! cleanly on Ctrl-C or SIGTERM, and prints the driver's counters at the end. `--poll` queries
//! one packet at a time instead (no reconnection; a fault ends the run, keeping the rows).

use anyhow::{bail, Context};
use ar_drivers::arm::codec::baud_code;
use ar_drivers::arm::sim::{DeviceIdentity, REST_POSE_RAD};
use ar_drivers::arm::{ArmParams, Fault, MotionScript, SimArmConfig, SimulatedArm};
use clap::{Args, Subcommand};
use crossbeam_channel::RecvTimeoutError;
use nalgebra::Point3;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod probe;

/// Digitizer-arm tools.
#[derive(Subcommand, Debug)]
pub enum ArmCommand {
    /// Run a simulated arm (HCI protocol) on a pseudo-terminal until Ctrl-C.
    Simulate(SimulateArgs),
    /// Handshake with an arm, print its identity and parameters, N samples and the rate.
    Probe(ProbeArgs),
}

/// Arguments of `arm simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Also make a symlink to the pty here (moved to the new pty after a simulated hang-up).
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,
    /// Motion script (CSV: `t_s,theta0..theta4,buttons` or `t_s,x_m,y_m,z_m,buttons`), looped.
    #[arg(long, value_name = "SCRIPT.csv")]
    pub motion: Option<PathBuf>,
    /// Fastest line rate the simulated arm accepts (an HCI rate: 9600 … 115200).
    #[arg(long, value_name = "B", default_value_t = 115_200)]
    pub baud: u32,
}

/// Arguments of `arm probe`.
#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Serial port of the arm (`auto` probes the machine's ports).
    #[arg(long, value_name = "PATH")]
    pub port: String,
    /// Number of samples to read (0: until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub count: usize,
    /// Stream (`CF`) through the reconnecting worker: the default; kept for old scripts.
    #[arg(long, conflicts_with = "poll")]
    pub stream: bool,
    /// Poll one query per sample instead of streaming (no reconnection: a fault ends the run).
    #[arg(long)]
    pub poll: bool,
    /// Give up when no sample has passed the filter for this long (s): no arm connected, an
    /// arm that sends nothing, or one whose every packet is refused.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub give_up_after: f64,
    /// Write the samples here as CSV, row by row as they arrive.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// The stylus tip from `calibrate tip` (default: the arm's built-in point tip): the x, y,
    /// z columns are where this tip is.
    #[arg(long, value_name = "TIP.toml")]
    pub tip: Option<PathBuf>,
}

/// Runs the chosen arm tool.
pub fn run(cmd: ArmCommand) -> anyhow::Result<()> {
    match cmd {
        ArmCommand::Simulate(args) => simulate(args),
        ArmCommand::Probe(args) => probe::probe(args),
    }
}

const STDIN_HELP: &str =
    "commands on stdin: tip X Y Z | joints A0 A1 A2 A3 A4 | press M | release M | click M | \
garbage N | drop N | truncate N | out-of-range N | silence SECS | mute | hangup";

fn simulate(args: SimulateArgs) -> anyhow::Result<()> {
    if baud_code(args.baud).is_none() {
        bail!(
            "--baud {}: not an HCI rate (9600, 14400, 19200, 28800, 38400, 57600, 115200)",
            args.baud
        );
    }
    let device = DeviceIdentity {
        max_baud: args.baud,
        ..DeviceIdentity::default()
    };
    let motion = match &args.motion {
        Some(path) => {
            let script = MotionScript::load(path)?;
            let dh = ar_drivers::arm::DhParams::from_raw(&device.raw_dh);
            script.validate(&dh, device.max_values.joint_count(), &REST_POSE_RAD)?;
            Some(script)
        }
        None => None,
    };
    let sim = SimulatedArm::spawn(SimArmConfig {
        device,
        link: args.link.clone(),
        motion,
        truth_capacity: 0,
        ..SimArmConfig::default()
    })
    .context("starting the simulated arm")?;
    println!("{}", sim.pty_path().display());
    if let Some(link) = &args.link {
        println!("link {} -> {}", link.display(), sim.pty_path().display());
    }
    eprintln!(
        "simulated MicroScribe 3DX up to {} baud; Ctrl-C to stop; {STDIN_HELP}",
        args.baud
    );
    std::io::stdout().flush().ok();

    let stop = Arc::new(AtomicBool::new(false));
    super::interrupt::Interrupts::setting(&stop)?;
    let (line_tx, line_rx) = crossbeam_channel::unbounded::<String>();
    std::thread::Builder::new()
        .name("sim-arm-stdin".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                if line_tx.send(line).is_err() {
                    break;
                }
            }
        })
        .context("starting the stdin reader")?;
    let mut last_report = Instant::now();
    let mut last_count = 0;
    while !stop.load(Ordering::SeqCst) {
        match line_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => match apply_command(&sim, &line) {
                Ok(msg) => eprintln!("{msg}"),
                Err(e) => eprintln!("{line:?}: {e}; {STDIN_HELP}"),
            },
            Err(RecvTimeoutError::Timeout) => {}
            // stdin ended (`< /dev/null` in the background): the arm runs on until Ctrl-C,
            // waiting instead of asking the closed channel again at once.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(100)),
        }
        if last_report.elapsed() >= Duration::from_secs(5) {
            let s = sim.status();
            let rate = (s.packets_sent - last_count) as f64 / last_report.elapsed().as_secs_f64();
            log::info!(
                "simulated arm: baud {:?}, streaming {}, {} packets ({rate:.0}/s), {} hang-ups",
                s.baud,
                s.streaming,
                s.packets_sent,
                s.hangups
            );
            last_count = s.packets_sent;
            last_report = Instant::now();
        }
    }
    eprintln!("stopping the simulated arm");
    Ok(())
}

fn apply_command(sim: &ar_drivers::arm::SimArmHandle, line: &str) -> anyhow::Result<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let nums = |n: usize| -> anyhow::Result<Vec<f64>> {
        if words.len() != n + 1 {
            bail!("{} takes {n} number(s)", words[0]);
        }
        words[1..]
            .iter()
            .map(|w| {
                w.parse::<f64>()
                    .with_context(|| format!("{w:?} is not a number"))
            })
            .collect()
    };
    let Some(&cmd) = words.first() else {
        return Ok(String::new());
    };
    let control = sim.control();
    Ok(match cmd {
        "tip" => {
            let v = nums(3)?;
            control.set_tip_target(Point3::new(v[0], v[1], v[2]))?;
            format!(
                "tip now {:?} m",
                control.reported_tip_in_arm().coords.as_slice()
            )
        }
        "joints" => {
            let v = nums(5)?;
            control.set_joint_angles([v[0], v[1], v[2], v[3], v[4], 0.0]);
            format!(
                "tip now {:?} m",
                control.reported_tip_in_arm().coords.as_slice()
            )
        }
        "press" | "release" | "click" => {
            let m = nums(1)?[0];
            if !(0.0..=3.0).contains(&m) || m.fract() != 0.0 {
                bail!("button mask {m} is not 0..3");
            }
            let m = m as u8;
            match cmd {
                "press" => control.press(m),
                "release" => control.release(m),
                _ => control.click(m),
            }
            format!("{cmd} {m}")
        }
        "garbage" | "drop" | "truncate" => {
            let n = nums(1)?[0];
            if !(0.0..=100_000.0).contains(&n) {
                bail!("count {n} out of range");
            }
            let fault = match cmd {
                "garbage" => Fault::Garbage { bytes: n as usize },
                "drop" => Fault::DropBytes { packets: n as u32 },
                _ => Fault::TruncatePackets { packets: n as u32 },
            };
            sim.inject(fault);
            format!("injected {fault:?}")
        }
        "silence" => {
            let s = nums(1)?[0];
            if !(0.0..=3600.0).contains(&s) {
                bail!("silence {s} s out of range");
            }
            let fault = Fault::Silence {
                duration: Duration::from_secs_f64(s),
            };
            sim.inject(fault);
            format!("injected {fault:?}")
        }
        "out-of-range" => {
            let n = nums(1)?[0];
            if !(1.0..=1e9).contains(&n) || n.fract() != 0.0 {
                bail!("out-of-range {n}: expected a whole number of packets from 1 to 1e9");
            }
            let fault = Fault::OutOfRangeCounts { packets: n as u32 };
            sim.inject(fault);
            format!("injected {fault:?}")
        }
        "mute" => {
            sim.inject(Fault::MuteData);
            "injected MuteData (commands answered, no data packets from now on)".into()
        }
        "hangup" => {
            sim.inject(Fault::HangUp);
            "injected HangUp (the pty and link change)".into()
        }
        other => bail!("unknown command {other:?}"),
    })
}

/// The identity and kinematic parameters, for people.
pub(crate) fn describe(path: &str, params: &ArmParams) -> String {
    let id = &params.identity;
    let mut s = String::new();
    let _ = writeln!(s, "port: {path}");
    let _ = writeln!(s, "product name: {}", id.product_name);
    let _ = writeln!(s, "product id:   {}", id.product_id);
    let _ = writeln!(s, "model:        {}", id.model);
    let _ = writeln!(s, "serial:       {}", id.serial);
    let _ = writeln!(s, "comment:      {}", id.comment);
    let _ = writeln!(s, "param format: {}", id.param_format);
    let _ = writeln!(s, "firmware:     {}", id.firmware);
    let m = &params.max_values;
    let _ = writeln!(
        s,
        "buttons mask {:#04x}, timer max {}, counts per revolution {:?}",
        m.buttons_mask,
        m.timer_max,
        m.encoder_max
            .map(|x| if x == 0 { 0 } else { u32::from(x) + 1 })
    );
    let _ = writeln!(
        s,
        "link  alpha_deg      a_m        d_m     (raw alpha, a, d)"
    );
    for i in 0..6 {
        let _ = writeln!(
            s,
            "{i}    {:>9.4} {:>10.6} {:>10.6}   ({}, {}, {})",
            params.dh.alpha_rad[i].to_degrees(),
            params.dh.a_m[i],
            params.dh.d_m[i],
            params.raw_dh.alpha[i],
            params.raw_dh.a[i],
            params.raw_dh.d[i]
        );
    }
    let _ = writeln!(
        s,
        "beta {:.4} deg (raw {})",
        params.dh.beta_rad.to_degrees(),
        params.raw_dh.beta
    );
    s
}
