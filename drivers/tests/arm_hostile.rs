//! The serial driver against a hostile simulated arm (the project's own, on a pty): bit flips
//! and substituted bytes in payloads (same length, framing intact: the protocol has no
//! checksum), header-like noise, out-of-range counts, dropped bytes, truncation, garbage,
//! silence and unplugging. Every sample the driver passes on is compared with the truth the
//! simulated arm knows; none may be more than one encoder count off the truth on any joint,
//! and the driver's counters must account for every header that came down the line.
//!
//! One count is the limit of what any filter can tell without a checksum: a corrupted count
//! one off the truth is a step the encoder itself takes when it dithers on a boundary. At
//! full reach one count of the base joint moves the tip by about 0.25 mm, the arm's own
//! resolution; the verdict reports the worst tip error so that it stays visible.
//!
//! `AR_ARM_HOSTILE_PACKETS=N` sets how many packets of each same-length corruption to inject
//! (default 250, one every ~10 packets; `make fuzz-arm` runs 2,000).

use ar_drivers::arm::protocol::Session;
use ar_drivers::arm::transport::SerialLine;
use ar_drivers::arm::{
    ArmConfig, ArmCounters, ArmStatus, ArmWorker, DataPacket, Fault, MotionScript, PortSpec,
    SentSample, SimArmConfig, SimArmHandle, SimulatedArm, StylusSample, TipCorrection,
};
use std::time::{Duration, Instant};

/// Encoder counts a passed-on sample may differ from the truth on any joint (the encoder's
/// quantisation): more is a wrong sample.
const QUANTISATION_COUNTS: u16 = 1;

fn corrupted_per_kind() -> u32 {
    std::env::var("AR_ARM_HOSTILE_PACKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(250)
}

/// A looping tip path through the workspace, ~0.13 m/s, with the pedal held on alternate legs.
fn motion() -> MotionScript {
    let mut script = MotionScript::parse(
        "t_s,x_m,y_m,z_m,buttons\n0,0.22,-0.05,0.05,0\n1,0.28,0.05,0.10,1\n2,0.20,0.06,0.03,0\n3,0.22,-0.05,0.05,0\n",
        "hostile",
    )
    .expect("script");
    script.looping = true;
    script
}

fn spawn_sim(seed: u64) -> SimArmHandle {
    SimulatedArm::spawn(SimArmConfig {
        motion: Some(motion()),
        truth_capacity: 1_000_000,
        seed,
        ..SimArmConfig::default()
    })
    .expect("simulated arm")
}

/// How the passed-on samples compare with the truth.
#[derive(Debug, Default, Clone, Copy)]
struct Verdict {
    samples: usize,
    /// Identical to a packet the arm sent intact.
    exact: usize,
    /// Not identical, but within one count per joint of the truth of the packet it came from,
    /// with its buttons, or with the buttons of the intact packet one timer tick before or
    /// after it (a button edge moved by one packet: see `edge_shifts`).
    near: usize,
    /// Of `near`, the samples whose counts are exact and whose buttons are those of an intact
    /// neighbour packet, not their own: a corrupted button bit next to a real press or release
    /// makes the edge one packet early or late, which no check without a checksum can see
    /// (the plausibility filter's documented limit).
    edge_shifts: usize,
    /// Further than the precision from the truth.
    wrong: usize,
    /// Matching no packet the arm sent around that time.
    phantom: usize,
    worst_m: f64,
    /// The largest count difference on any joint among the samples that were not exact.
    worst_counts: u16,
}

/// Compares every sample with the truth: intact packets first (exact), then the truth of the
/// packet with the same (or, failing that, the nearest) timer sent around the same time.
fn judge(samples: &[StylusSample], sim: &SimArmHandle) -> Verdict {
    let intact = sim.sent_samples();
    let mut by_timer: std::collections::HashMap<u16, Vec<(SentSample, bool)>> =
        std::collections::HashMap::new();
    for (t, is_intact) in intact
        .iter()
        .map(|s| (*s, true))
        .chain(sim.tampered_samples().into_iter().map(|s| (s, false)))
    {
        by_timer
            .entry(t.timer_ticks.unwrap_or(0))
            .or_default()
            .push((t, is_intact));
    }
    let mut v = Verdict {
        samples: samples.len(),
        ..Verdict::default()
    };
    for s in samples {
        let timer = s.device_timer_ticks.unwrap_or(0);
        let mut best: Option<(u16, f64, bool, u16)> = None;
        // The buttons of the intact packets one tick either side, with their counts.
        let mut neighbour_buttons = Vec::new();
        for dtimer in 0..=3u16 {
            let candidates = [timer.wrapping_add(dtimer), timer.wrapping_sub(dtimer)]
                .into_iter()
                .filter_map(|k| by_timer.get(&(k & 0x3FFF)))
                .flatten();
            for (t, is_intact) in candidates {
                let dt = if t.t > s.t { t.t - s.t } else { s.t - t.t };
                if dt >= Duration::from_millis(500) {
                    continue;
                }
                let exact =
                    *is_intact && t.counts == s.counts && t.buttons == s.buttons && dtimer == 0;
                if *is_intact && dtimer == 1 {
                    neighbour_buttons.push(t.buttons);
                }
                let err = (s.tip_in_arm - t.tip_in_arm).norm();
                let counts_off = if t.buttons == s.buttons {
                    (0..6)
                        .map(|j| s.counts[j].abs_diff(t.counts[j]))
                        .max()
                        .unwrap_or(0)
                } else {
                    u16::MAX
                };
                let key = (dtimer, if exact { -1.0 } else { err }, exact, counts_off);
                if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
                    best = Some(key);
                }
            }
        }
        match best {
            None => {
                v.phantom += 1;
                v.wrong += 1;
            }
            Some((_, _, true, _)) => v.exact += 1,
            Some((0, err, false, u16::MAX))
                if err == 0.0 && neighbour_buttons.contains(&s.buttons) =>
            {
                v.near += 1;
                v.edge_shifts += 1;
            }
            Some((_, err, false, counts_off)) => {
                v.worst_m = v.worst_m.max(err);
                v.worst_counts = v.worst_counts.max(counts_off);
                if counts_off > QUANTISATION_COUNTS {
                    v.wrong += 1;
                } else {
                    v.near += 1;
                }
            }
        }
    }
    v
}

fn connect(sim: &SimArmHandle) -> (Session<SerialLine>, ar_drivers::arm::ArmParams) {
    let path = sim.port_path().display().to_string();
    let line = SerialLine::open(&path, 9_600, Duration::from_millis(5)).expect("open pty");
    let mut session = Session::new(line);
    let params = session
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect("handshake");
    let baud = session.negotiate_baud(9_600, 115_200).expect("C4");
    assert_eq!(baud, 115_200);
    session
        .start_streaming(ar_drivers::arm::DataCommand::SIX_WITH_TIMER, 1)
        .expect("CF");
    (session, params)
}

/// Streams while injecting `n` single-packet faults of each kind, one every ~10 packets, then
/// lets the line go quiet and reads the rest. `raw` reads without the plausibility filter
/// (what the driver did before it had one).
fn hostile_run(
    kinds: &[fn() -> Fault],
    n: u32,
    raw: bool,
    seed: u64,
) -> (Verdict, ArmCounters, SimArmHandle) {
    let sim = spawn_sim(seed);
    let (mut session, params) = connect(&sim);
    let mut samples = Vec::new();
    let read = |session: &mut Session<SerialLine>, samples: &mut Vec<StylusSample>| {
        let p: Option<DataPacket> = if raw {
            session.next_raw_packet(Duration::from_millis(2))
        } else {
            session.next_packet(Duration::from_millis(2))
        }
        .expect("read");
        if let Some(p) = p {
            let seq = samples.len() as u64;
            samples.push(StylusSample::from_packet(&p, &params, Instant::now(), seq));
        }
    };
    for kind in kinds {
        let mut injected = 0;
        let mut next = Instant::now();
        while injected < n {
            if Instant::now() >= next {
                sim.inject(kind());
                injected += 1;
                next = Instant::now() + Duration::from_millis(14);
            }
            read(&mut session, &mut samples);
        }
    }
    // Quiet line: everything sent is read, nothing is in flight.
    sim.inject(Fault::Silence {
        duration: Duration::from_secs(30),
    });
    let mut quiet_since = Instant::now();
    let mut last_fed = session.counters();
    while quiet_since.elapsed() < Duration::from_millis(300) {
        read(&mut session, &mut samples);
        let c = session.counters();
        if c != last_fed {
            last_fed = c;
            quiet_since = Instant::now();
        }
    }
    session.abandon_stream();
    let counters = session.counters();
    (judge(&samples, &sim), counters, sim)
}

fn same_length_kinds() -> Vec<fn() -> Fault> {
    vec![
        || Fault::BitFlips { packets: 1 },
        || Fault::SubstituteBytes { packets: 1 },
        || Fault::HeaderNoise { bursts: 1 },
        || Fault::OutOfRangeCounts { packets: 1 },
    ]
}

fn framing_kinds() -> Vec<fn() -> Fault> {
    vec![
        || Fault::DropBytes { packets: 1 },
        || Fault::TruncatePackets { packets: 1 },
        || Fault::Garbage { bytes: 24 },
    ]
}

fn assert_accounted(c: &ArmCounters, sim: &SimArmHandle) {
    assert_eq!(
        c.headers,
        sim.status().data_headers_sent,
        "every header on the line was seen: {c}"
    );
    assert_eq!(
        c.headers,
        c.framed + c.truncated + c.misframed + c.discarded,
        "every header ends framed, truncated, misframed or discarded: {c}"
    );
    assert_eq!(
        c.framed,
        c.passed + c.rejected.total(),
        "every framed packet is passed on or rejected for a reason: {c}"
    );
}

#[test]
fn same_length_corruption_and_header_noise_never_yield_a_wrong_tip() {
    let n = corrupted_per_kind();
    let (v, c, sim) = hostile_run(&same_length_kinds(), n, false, 11);
    let tampered = sim.tampered_samples().len();
    eprintln!(
        "filtered: {n} each of bit flips, substitutions, header noise, out-of-range counts \
         ({tampered} packets corrupted, {} phantoms): {v:?}\n  counters: {c}",
        n
    );
    assert_eq!(v.wrong, 0, "wrong tips: {v:?}");
    assert_eq!(v.phantom, 0, "phantom samples: {v:?}");
    // One count at full reach: 0.25 mm measured in the long run.
    assert!(v.worst_m < 0.4e-3, "{v:?}");
    assert!(v.samples > 3 * tampered, "the stream goes on: {v:?}");
    assert!(c.rejected.out_of_range >= u64::from(n), "{c}");
    assert_accounted(&c, &sim);
}

#[test]
fn framing_faults_never_yield_a_wrong_tip() {
    let n = corrupted_per_kind() / 2;
    let (v, c, sim) = hostile_run(&framing_kinds(), n, false, 12);
    eprintln!("filtered: {n} each of dropped bytes, truncation, garbage: {v:?}\n  counters: {c}");
    assert_eq!(v.wrong, 0, "wrong tips: {v:?}");
    assert!(c.truncated > 0, "{c}");
    assert_accounted(&c, &sim);
}

/// The same hostile line read without the filter: how many wrong tips the driver passed on
/// before it had one. Prints the figures; asserts that the hostile device is hostile enough
/// for the filtered test to mean something.
#[test]
fn without_the_filter_the_same_line_yields_wrong_tips() {
    let n = corrupted_per_kind();
    let (v, c, sim) = hostile_run(&same_length_kinds(), n, true, 11);
    eprintln!(
        "unfiltered (before): {n} each of bit flips, substitutions, header noise, \
         out-of-range counts ({} corrupted): {v:?}\n  counters: {c}",
        sim.tampered_samples().len()
    );
    assert!(v.wrong > usize::try_from(n / 4).unwrap_or(0), "{v:?}");
}

fn wait_for(worker: &ArmWorker, timeout: Duration, pred: impl Fn(&ArmStatus) -> bool) {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Ok(s) = worker.status().recv_timeout(Duration::from_millis(20)) {
            if pred(&s) {
                return;
            }
        }
    }
    panic!("status not reached within {timeout:?}");
}

fn collect(worker: &ArmWorker, out: &mut Vec<StylusSample>, for_: Duration) {
    let start = Instant::now();
    while start.elapsed() < for_ {
        if let Ok(s) = worker.samples().recv_timeout(Duration::from_millis(10)) {
            out.push(s);
        }
    }
}

#[test]
fn the_worker_under_corruption_silence_and_unplug_passes_on_no_wrong_tip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        motion: Some(motion()),
        truth_capacity: 1_000_000,
        seed: 13,
        ..SimArmConfig::default()
    })
    .expect("sim");
    let worker = ArmWorker::spawn(ArmConfig {
        port: PortSpec::Path(link),
        channel_capacity: 1_000_000,
        ..ArmConfig::default()
    })
    .expect("worker");
    let connected = |s: &ArmStatus| matches!(s, ArmStatus::Connected { .. });
    let disconnected = |s: &ArmStatus| matches!(s, ArmStatus::Disconnected { .. });
    wait_for(&worker, Duration::from_secs(10), connected);
    let mut samples = Vec::new();
    for kind in same_length_kinds().into_iter().chain(framing_kinds()) {
        for _ in 0..100 {
            sim.inject(kind());
            collect(&worker, &mut samples, Duration::from_millis(6));
        }
    }
    sim.inject(Fault::Silence {
        duration: Duration::from_secs(1),
    });
    wait_for(&worker, Duration::from_secs(3), disconnected);
    let t = Instant::now();
    wait_for(&worker, Duration::from_secs(10), connected);
    eprintln!(
        "reconnected {:?} after the silence was noticed",
        t.elapsed()
    );
    collect(&worker, &mut samples, Duration::from_millis(300));
    sim.inject(Fault::HangUp);
    wait_for(&worker, Duration::from_secs(3), disconnected);
    let t = Instant::now();
    wait_for(&worker, Duration::from_secs(10), connected);
    eprintln!("reconnected {:?} after the unplug was noticed", t.elapsed());
    for _ in 0..100 {
        sim.inject(Fault::BitFlips { packets: 1 });
        collect(&worker, &mut samples, Duration::from_millis(6));
    }
    let counters = worker.counters();
    drop(worker);
    let v = judge(&samples, &sim);
    eprintln!("worker: {v:?}\n  counters: {counters}");
    assert_eq!(v.wrong, 0, "{v:?}");
    assert!(v.samples > 1000, "{v:?}");
    // Samples still in the channel when the counters were read are not collected.
    let passed = usize::try_from(counters.passed).unwrap_or(usize::MAX);
    assert!(
        passed >= v.samples && passed <= v.samples + 100,
        "{counters}"
    );
    assert!(counters.rejected.total() >= 300, "{counters}");
}

#[test]
fn an_arm_announcing_zero_encoders_is_refused_at_the_handshake() {
    let mut device = ar_drivers::arm::sim::DeviceIdentity::default();
    device.max_values.encoder_max = [0; 6];
    let sim = SimulatedArm::spawn(SimArmConfig {
        device,
        ..SimArmConfig::default()
    })
    .expect("sim");
    let path = sim.port_path().display().to_string();
    let line = SerialLine::open(&path, 9_600, Duration::from_millis(5)).expect("open pty");
    let e = Session::new(line)
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect_err("zero encoders");
    assert!(!e.is_transient(), "retrying cannot help: {e}");
    assert!(e.to_string().contains("C6: encoder 0"), "{e}");
}
