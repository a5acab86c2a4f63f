//! `arm probe`: streams through the driver's worker (the rig's): it reconnects after silence
//! or an unplug (0.3–1.4 s), passes on only samples that survive the plausibility filters,
//! writes each row to stdout and to `--csv` as it arrives (flushed, so a crash keeps them),
//! ends cleanly on Ctrl-C or SIGTERM, and prints the driver's counters at the end. `--poll`
//! queries one packet at a time instead (no reconnection; a fault ends the run, keeping the
//! rows). The `t_s` column follows the arm's own timer, so that a recording replayed by
//! `simulate --stylus` moves as the hand did, not as promptly as a busy host read the port.

use super::{describe, ProbeArgs};
use anyhow::{bail, Context};
use ar_drivers::arm::codec::{timer_ticks_between, DataCommand, TIMER_TICK_SECS};
use ar_drivers::arm::plausibility::{PlausibilityFilter, PlausibilityLimits};
use ar_drivers::arm::protocol::Session;
use ar_drivers::arm::transport::{auto_detect, candidate_ports, SerialLine};
use ar_drivers::arm::{
    ArmConfig, ArmCounters, ArmParams, ArmStatus, ArmWorker, PortSpec, StylusSample, TipCorrection,
};
use ar_dynamics::drive::script::ARM_PROBE_HEADER;
use ar_io::csv_write::CsvWriter;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set by Ctrl-C (SIGINT) and SIGTERM.
static STOP: AtomicBool = AtomicBool::new(false);

/// Ctrl-C and SIGTERM both end the probe cleanly (rows kept, summary printed, exit 0: a
/// stop is how a probe without `--count` ends); a second one ends it at once.
fn install_stop_handlers() -> anyhow::Result<()> {
    super::super::interrupt::Interrupts::install(|| STOP.store(true, Ordering::SeqCst))?;
    Ok(())
}

/// Where the rows go, as they arrive: stdout, and the CSV file flushed per row.
struct Rows {
    stdout: std::io::Stdout,
    csv: Option<(PathBuf, CsvWriter<std::fs::File>)>,
    /// The last sample's host time, timer ticks and `t_s`.
    clock: Option<(Instant, Option<u16>, f64)>,
    /// The largest value of the arm's timer (from its parameters; 14 bits until they are
    /// known).
    timer_max: u16,
    /// Samples written so far.
    count: usize,
    /// Host time of the first sample (the last one's is in `clock`).
    first_host_time: Option<Instant>,
    /// Arm-timer ticks summed between samples less than [`TIMER_BRIDGE`] apart; `None` once
    /// such a pair came without the timer.
    timer_ticks: Option<u64>,
}

/// Host-clock gaps longer than this are not bridged by the arm's timer (a reconnection
/// restarts it; it wraps after about 18 s).
const TIMER_BRIDGE: Duration = Duration::from_millis(100);

impl Rows {
    fn new(csv: Option<&PathBuf>) -> anyhow::Result<Self> {
        let csv = match csv {
            Some(path) => {
                let file = ar_io::safe_open::create_stream(path)
                    .with_context(|| format!("creating {}", path.display()))?;
                let mut w = CsvWriter::new(file);
                w.write_fields(ARM_PROBE_HEADER.split(','))
                    .and_then(|()| w.flush())
                    .with_context(|| format!("writing {}", path.display()))?;
                Some((path.clone(), w))
            }
            None => None,
        };
        Ok(Self {
            stdout: std::io::stdout(),
            csv,
            clock: None,
            timer_max: 0x3FFF,
            count: 0,
            first_host_time: None,
            timer_ticks: Some(0),
        })
    }

    fn push(&mut self, s: StylusSample) -> anyhow::Result<()> {
        if self.count == 0 {
            writeln!(
                self.stdout,
                "seq t_s theta0..theta4_rad x_m y_m z_m buttons timer"
            )?;
        }
        let t = self.time_of(&s);
        let q = s.joint_angles_rad;
        let (x, y, z) = (s.tip_in_arm.x, s.tip_in_arm.y, s.tip_in_arm.z);
        writeln!(
            self.stdout,
            "{} {t:.6} {:.6} {:.6} {:.6} {:.6} {:.6} {x:.6} {y:.6} {z:.6} {} {}",
            s.seq,
            q[0],
            q[1],
            q[2],
            q[3],
            q[4],
            s.buttons,
            s.device_timer_ticks
                .map_or("-".to_string(), |t| t.to_string())
        )?;
        if let Some((path, w)) = &mut self.csv {
            w.row()
                .fixed(t, 6)
                .values(&q[..5])
                .values([x, y, z])
                .value(s.buttons)
                .end()
                .and_then(|()| w.flush())
                .with_context(|| format!("writing {}", path.display()))?;
        }
        self.count += 1;
        self.first_host_time.get_or_insert(s.t);
        Ok(())
    }

    /// The `t_s` of a sample: the arm's own timer between samples that follow each other
    /// closely, so that the column does not carry the jitter of when this process got to read
    /// the port (a loaded machine reads in bursts); the host's clock across longer gaps.
    fn time_of(&mut self, s: &StylusSample) -> f64 {
        let t = match self.clock {
            None => 0.0,
            Some((host, ticks, t)) => {
                let host_gap = s.t.saturating_duration_since(host);
                let bridged = host_gap < TIMER_BRIDGE;
                match (ticks, s.device_timer_ticks) {
                    (Some(a), Some(b)) if bridged => {
                        let ticks = timer_ticks_between(self.timer_max, a, b);
                        self.timer_ticks = self.timer_ticks.map(|sum| sum + u64::from(ticks));
                        t + f64::from(ticks) * TIMER_TICK_SECS
                    }
                    _ => {
                        if bridged {
                            self.timer_ticks = None;
                        }
                        t + host_gap.as_secs_f64()
                    }
                }
            }
        };
        self.clock = Some((s.t, s.device_timer_ticks, t));
        t
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        self.stdout.flush()?;
        if let Some((path, w)) = &mut self.csv {
            w.get_ref()
                .sync_all()
                .with_context(|| format!("syncing {}", path.display()))?;
            println!("wrote {} samples to {}", self.count, path.display());
        }
        Ok(())
    }
}

pub(super) fn probe(args: ProbeArgs) -> anyhow::Result<()> {
    if !(args.give_up_after.is_finite() && args.give_up_after > 0.0) {
        bail!(
            "--give-up-after {}: expected a positive number of seconds",
            args.give_up_after
        );
    }
    // The tip file first: a bad one is named before anything connects or is written.
    let tip = match &args.tip {
        Some(path) => TipCorrection::load(path)?,
        None => TipCorrection::point(),
    };
    install_stop_handlers()?;
    let mut rows = Rows::new(args.csv.as_ref())?;
    let outcome = if args.poll {
        probe_polled(&args, &tip, &mut rows)
    } else {
        probe_streamed(&args, tip, &mut rows)
    };
    // Rows are kept whatever happened; the summary comes before the error, if any.
    rows.finish()?;
    let (params, counters, fault) = outcome;
    // Only an arm that answered has a rate to report.
    if params.is_some() {
        summarize(&rows, !args.poll);
    }
    if let Some(c) = counters {
        println!("driver: {c}");
    }
    if STOP.load(Ordering::SeqCst) {
        println!("stopped by signal after {} samples", rows.count);
    }
    // The rows are already kept (`wrote … samples` above); the error is the exit status.
    fault.map_or(Ok(()), Err)
}

type ProbeOutcome = (
    Option<ArmParams>,
    Option<ArmCounters>,
    Option<anyhow::Error>,
);

fn done(args: &ProbeArgs, rows: &Rows) -> bool {
    STOP.load(Ordering::SeqCst) || (args.count > 0 && rows.count >= args.count)
}

/// Streams through the worker, which reconnects after silence or an unplug.
fn probe_streamed(args: &ProbeArgs, tip: TipCorrection, rows: &mut Rows) -> ProbeOutcome {
    let port = PortSpec::from_arg(&args.port);
    if let Err(e) = port.check_present() {
        return (None, None, Some(e.into()));
    }
    let worker = match ArmWorker::spawn(ArmConfig {
        port,
        tip,
        channel_capacity: 4096,
        ..ArmConfig::default()
    }) {
        Ok(w) => w,
        Err(e) => {
            return (
                None,
                None,
                Some(anyhow::Error::new(e).context("starting the arm thread")),
            )
        }
    };
    let give_up = Duration::from_secs_f64(args.give_up_after);
    let mut params: Option<ArmParams> = None;
    let mut connected = false;
    let mut last_connected: Option<Instant> = None;
    let mut last_sample = Instant::now();
    let mut refused_before_last_sample = 0;
    let mut last_reason: Option<String> = None;
    let mut fault = None;
    while !done(args, rows) {
        for status in worker.status().try_iter() {
            match status {
                ArmStatus::Connected {
                    port,
                    params: p,
                    baud,
                    ..
                } => {
                    if params.is_none() {
                        print!("{}", describe(&port, &p));
                        let command = DataCommand::SIX_WITH_TIMER;
                        let limit = f64::from(baud) / (10.0 * command.packet_len() as f64);
                        println!(
                            "line: {baud} baud, {}-byte packets (command {:02X}), line limit {limit:.0} packets/s",
                            command.packet_len(),
                            command.byte()
                        );
                    } else {
                        eprintln!("arm: reconnected on {port} at {baud} baud");
                    }
                    rows.timer_max = p.max_values.timer_max;
                    params = Some(*p);
                    connected = true;
                    last_connected = Some(Instant::now());
                }
                ArmStatus::Disconnected { reason } => {
                    if connected {
                        eprintln!("arm: disconnected: {reason}; reconnecting");
                    } else if last_reason.as_deref() != Some(reason.as_str()) {
                        // A refused handshake says why at once, not only under -v; the same
                        // reason again is not repeated at every retry.
                        eprintln!("arm: not connected: {reason}; retrying");
                    }
                    last_reason = Some(reason);
                    connected = false;
                }
                ArmStatus::Reconnecting { .. } => {}
            }
        }
        // Give up only when the worker has nothing queued: a probe that was itself stalled
        // writing its rows (stdout into a pipe nobody reads, a paused terminal) finds the
        // samples that came meanwhile, and must not blame the arm for its own wait.
        match worker.samples().recv_timeout(Duration::from_millis(50)) {
            Ok(s) => {
                last_sample = Instant::now();
                refused_before_last_sample = worker.counters().rejected.total();
                if let Err(e) = rows.push(s) {
                    fault = Some(e);
                    break;
                }
            }
            Err(_) if last_sample.elapsed() > give_up => {
                let counters = worker.counters();
                let why = GiveUp {
                    answering: connected || last_connected.is_some_and(|t| t.elapsed() < give_up),
                    refused: counters.rejected.total() - refused_before_last_sample,
                    counters,
                    last_reason: last_reason.as_deref(),
                };
                fault = Some(why.error(&args.port, args.give_up_after));
                break;
            }
            Err(_) => {}
        }
    }
    let counters = worker.counters();
    drop(worker);
    (params, Some(counters), fault)
}

/// Why a stream gave no sample for `--give-up-after`: no arm answering, an arm whose every
/// packet the filter refused, or one that answers commands but sends no data.
struct GiveUp<'a> {
    /// An arm completed a handshake within the give-up period.
    answering: bool,
    /// Packets refused since the last sample that passed.
    refused: u64,
    counters: ArmCounters,
    last_reason: Option<&'a str>,
}

impl GiveUp<'_> {
    fn error(&self, port: &str, secs: f64) -> anyhow::Error {
        let last = self
            .last_reason
            .map_or(String::new(), |r| format!("; last: {r}"));
        if !self.answering {
            anyhow::anyhow!("no arm connected on {port} for {secs:.1} s (--give-up-after){last}")
        } else if self.refused > 0 {
            anyhow::anyhow!(
                "no sample from the arm on {port} passed the plausibility filter for {secs:.1} s \
                 (--give-up-after): {} packets refused (since the start: {}); the arm sends \
                 values outside what it announced, or the line corrupts them",
                self.refused,
                self.counters.rejected
            )
        } else {
            anyhow::anyhow!(
                "the arm on {port} answers commands but sent no data for {secs:.1} s \
                 (--give-up-after){last}"
            )
        }
    }
}

/// One query per sample on one connection, filtered with the polling limits.
fn probe_polled(args: &ProbeArgs, tip: &TipCorrection, rows: &mut Rows) -> ProbeOutcome {
    const HANDSHAKE_BAUD: u32 = 9_600;
    const MAX_BAUD: u32 = 115_200;
    let mut params = None;
    let mut filter: Option<PlausibilityFilter> = None;
    let mut run = |params: &mut Option<ArmParams>| -> anyhow::Result<()> {
        let path = if args.port == "auto" {
            auto_detect(
                &candidate_ports(),
                HANDSHAKE_BAUD,
                Duration::from_millis(500),
            )?
        } else {
            args.port.clone()
        };
        let line = SerialLine::open(&path, HANDSHAKE_BAUD, Duration::from_millis(5))?;
        let mut session = Session::new(line);
        let rate = session
            .autosync_rates(&[HANDSHAKE_BAUD, MAX_BAUD], Duration::from_secs(3))
            .with_context(|| format!("handshake on {path}"))?;
        let p = session
            .identify(tip)
            .with_context(|| format!("reading the arm's identity and parameters on {path}"))?;
        print!("{}", describe(&path, &p));
        let baud = session
            .negotiate_baud(rate, MAX_BAUD)
            .with_context(|| format!("changing the baud rate on {path}"))?;
        println!("line: {baud} baud, polling");
        let f = filter.insert(PlausibilityFilter::new(
            p.max_values,
            PlausibilityLimits::polling(),
        ));
        rows.timer_max = p.max_values.timer_max;
        *params = Some(p.clone());
        let mut offset = 0u64;
        while !done(args, rows) {
            let packet = session.query(DataCommand::SIX_WITH_TIMER)?;
            offset += 1;
            if let Some(l) = f.push(packet, offset) {
                let seq = rows.count as u64;
                rows.push(StylusSample::from_packet(
                    &l.packet,
                    &p,
                    Instant::now(),
                    seq,
                ))?;
            }
        }
        session.end().ok();
        Ok(())
    };
    let fault = run(&mut params).err();
    let counters = filter.map(|mut f| {
        f.reset();
        ArmCounters {
            framed: f.passed() + f.rejected().total(),
            passed: f.passed(),
            rejected: f.rejected(),
            ..ArmCounters::default()
        }
    });
    (params, counters, fault)
}

/// Sample rate by the host clock and by the arm's timer.
fn summarize(rows: &Rows, streaming: bool) {
    let command = DataCommand::SIX_WITH_TIMER;
    let baud = 115_200.0;
    let limit = baud / (10.0 * command.packet_len() as f64);
    let n = rows.count;
    if let (Some(first), Some((last, _, _))) = (rows.first_host_time, rows.clock) {
        let span = last.duration_since(first).as_secs_f64();
        if n > 1 && span > 0.0 {
            let rate = (n - 1) as f64 / span;
            println!(
                "rate: {n} samples in {span:.3} s = {rate:.1} samples/s ({:.1} % of the {limit:.0}/s line limit at 115200 baud, {})",
                100.0 * rate / limit,
                if streaming { "streaming" } else { "polling" }
            );
        }
    }
    // The device's own clock: independent of how promptly this process read the port. Gaps
    // (a reconnection restarts the arm's timer) are left out.
    if let Some(ticks) = rows.timer_ticks.filter(|&t| t > 0) {
        let secs = ticks as f64 * TIMER_TICK_SECS;
        let rate = (n - 1) as f64 / secs;
        println!(
            "device timer: {ticks} ticks = {secs:.3} s, {rate:.1} samples/s ({:.1} % of the line limit)",
            100.0 * rate / limit
        );
    }
}
