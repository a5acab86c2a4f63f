//! Digitizer-arm tests: the packet parser under arbitrary bytes (proptest), and the real
//! serial driver against the simulated arm on a pty
//! (handshake, streaming against ground truth, faults, reconnection). The hardware test runs
//! only when `AR_ARM_PORT` names a port.

use ar_drivers::arm::codec::{DataCommand, DataPacket, PacketParser};
use ar_drivers::arm::kinematics::{counts_to_angles, tip_in_arm};
use ar_drivers::arm::protocol::{BaudControl, Session};
use ar_drivers::arm::transport::SerialLine;
use ar_drivers::arm::{
    ArmConfig, ArmStatus, ArmWorker, Fault, Identity, PortSpec, RawDhParams, SentSample,
    SimArmConfig, SimulatedArm, StylusSample, TipCorrection,
};
use nalgebra::Point3;
use proptest::prelude::*;
use std::collections::HashMap;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------
// The packet parser over arbitrary bytes.

fn packet_strategy() -> impl Strategy<Value = DataPacket> {
    (
        0u8..4,
        0u16..0x4000,
        proptest::array::uniform6(0u16..0x4000),
    )
        .prop_map(|(b, t, c)| DataPacket {
            command: DataCommand::SIX_WITH_TIMER,
            buttons: b,
            timer_ticks: Some(t),
            counts: [c[0], c[1], c[2], c[3], c[4], c[5], 0],
        })
}

fn parse_all(bytes: &[u8]) -> Vec<DataPacket> {
    let mut parser = PacketParser::new(DataCommand::SIX_WITH_TIMER);
    let mut got = Vec::new();
    parser.push(bytes, |p| got.push(p));
    got.extend(parser.flush_idle());
    got
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 256, ..ProptestConfig::default() })]

    /// Any byte stream: no panic, and every accepted packet appears verbatim in the input.
    #[test]
    fn parser_only_accepts_packets_present_in_the_input(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        for p in parse_all(&bytes) {
            let enc = p.encode();
            prop_assert!(bytes.windows(enc.len()).any(|w| w == enc.as_slice()));
        }
    }

    /// Clean packets separated by arbitrary garbage that ends in a byte with bit 7 set (as any
    /// garbage does before a resync point): every clean packet is recovered, in order.
    #[test]
    fn parser_recovers_every_packet_after_garbage(
        packets in proptest::collection::vec(packet_strategy(), 1..12),
        garbage in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 12),
    ) {
        let mut stream = Vec::new();
        for (p, g) in packets.iter().zip(&garbage) {
            stream.extend(g);
            stream.extend(p.encode());
        }
        let got = parse_all(&stream);
        // Garbage made only of 7-bit bytes after a packet discards that packet (misframed), so
        // count the packets that must survive: those followed by a header or a bit-7 byte.
        let mut must = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            let next = garbage.get(i + 1).and_then(|g| g.first()).copied();
            let followed_ok = match next {
                Some(b) => b & 0x80 != 0,
                None => true,
            };
            if followed_ok {
                must.push(*p);
            }
        }
        for p in &must {
            prop_assert!(got.contains(p), "lost {:?}", p);
        }
        for p in &got {
            let enc = p.encode();
            prop_assert!(stream.windows(enc.len()).any(|w| w == enc.as_slice()));
        }
    }

    /// Dropping one byte anywhere in a packet never yields a sample from it.
    #[test]
    fn parser_rejects_packets_with_a_dropped_byte(p in packet_strategy(), q in packet_strategy(), at in 0usize..16) {
        let mut stream = p.encode();
        stream.remove(at);
        stream.extend(q.encode());
        let got = parse_all(&stream);
        prop_assert_eq!(got, vec![q]);
    }
}

// ---------------------------------------------------------------------------------------
// The serial driver against the simulated arm.

fn open_session(path: &str, baud: u32) -> Session<SerialLine> {
    let line = SerialLine::open(path, baud, Duration::from_millis(5)).expect("open pty");
    Session::new(line)
}

/// Ground truth by (timer, counts, buttons): all that a packet carries.
fn truth_index(truth: &[SentSample]) -> HashMap<(Option<u16>, [u16; 6], u8), SentSample> {
    truth
        .iter()
        .map(|s| ((s.timer_ticks, s.counts, s.buttons), *s))
        .collect()
}

fn assert_sample_is_true(
    sample: &StylusSample,
    truth: &HashMap<(Option<u16>, [u16; 6], u8), SentSample>,
) {
    let key = (sample.device_timer_ticks, sample.counts, sample.buttons);
    let t = truth
        .get(&key)
        .unwrap_or_else(|| panic!("sample {} was never sent: {key:?}", sample.seq));
    let err = (sample.tip_in_arm - t.tip_in_arm).norm();
    assert!(err <= 1e-9, "sample {}: tip off by {err:e} m", sample.seq);
    assert!(sample.arm_from_stylus.angle_to(&t.arm_from_stylus) < 1e-9);
}

#[test]
fn handshake_reads_the_3dx_identity_and_parameters_and_streams_the_truth() {
    let sim = SimulatedArm::spawn(SimArmConfig::default()).expect("sim");
    let path = sim.port_path().display().to_string();
    let mut session = open_session(&path, 9_600);
    let params = session
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect("handshake");
    assert_eq!(params.identity, Identity::microscribe_3dx());
    assert_eq!(
        params.raw_dh,
        RawDhParams::microscribe_3dx(),
        "C0 and D3 (beta) arrive intact"
    );
    assert_eq!(
        params.max_values.encoder_max,
        [0x3FFF, 0x3FFF, 0x1FFF, 0x0FFF, 0x0FFF, 0]
    );
    let baud = session.negotiate_baud(9_600, 115_200).expect("C4");
    assert_eq!(baud, 115_200);
    assert_eq!(sim.status().baud, Some(115_200));

    // A polled query first, then streaming, while the live control moves the tip.
    let control = sim.control();
    let q = session.query(DataCommand::SIX_WITH_TIMER).expect("query");
    let angles = counts_to_angles(q.encoder_counts(), &params.max_values.encoder_max);
    let reported = tip_in_arm(&params.dh, &angles);
    assert!((reported - control.reported_tip_in_arm()).norm() < 1e-12);

    session
        .start_streaming(DataCommand::SIX_WITH_TIMER, 1)
        .expect("CF");
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 1000 && start.elapsed() < Duration::from_secs(20) {
        if samples.len() % 50 == 0 {
            let k = samples.len() as f64 / 1000.0;
            control
                .set_tip_target(Point3::new(0.22 + 0.05 * k, -0.05 + 0.1 * k, 0.08))
                .expect("reachable");
        }
        if let Some(p) = session
            .next_packet(Duration::from_millis(100))
            .expect("read")
        {
            let seq = samples.len() as u64;
            samples.push(StylusSample::from_packet(&p, &params, Instant::now(), seq));
        }
    }
    session.stop_streaming().expect("stop");
    assert_eq!(samples.len(), 1000, "streamed packets");
    let truth = sim.sent_samples();
    let index = truth_index(&truth);
    let mut worst = 0.0f64;
    for s in &samples {
        assert_sample_is_true(s, &index);
        let t = &index[&(s.device_timer_ticks, s.counts, s.buttons)];
        worst = worst.max((s.tip_in_arm - t.tip_in_arm).norm());
    }
    let span = samples[999].t.duration_since(samples[0].t).as_secs_f64();
    eprintln!(
        "1000 streamed samples at 115200 baud: worst |tip - truth| = {worst:e} m; {:.0} samples/s on this host",
        999.0 / span
    );
    let distinct: std::collections::HashSet<_> = samples.iter().map(|s| s.counts).collect();
    assert!(
        distinct.len() >= 5,
        "the tip moved: {} poses",
        distinct.len()
    );
    // The parser threw nothing away on a clean line.
    let stats = session.parser().stats();
    assert_eq!((stats.truncated, stats.misframed), (0, 0), "{stats:?}");
}

#[test]
fn data_packets_follow_the_live_tip_target_within_encoder_resolution() {
    let sim = SimulatedArm::spawn(SimArmConfig::default()).expect("sim");
    let control = sim.control();
    let mut session = open_session(&sim.port_path().display().to_string(), 115_200);
    let params = session
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect("handshake");
    for target in [
        Point3::new(0.25, 0.0, 0.05),
        Point3::new(0.18, 0.12, 0.15),
        Point3::new(0.3, -0.1, 0.0),
    ] {
        let q = control.set_tip_target(target).expect("reachable");
        assert!(
            (tip_in_arm(control.dh(), &q) - target).norm() < 1e-9,
            "IK exact"
        );
        let p = session.query(DataCommand::SIX_WITH_TIMER).expect("query");
        let s = StylusSample::from_packet(&p, &params, Instant::now(), 0);
        // 14-bit encoders on links of ~0.25 m: a count is ~0.1 mm at the tip.
        let err = (s.tip_in_arm - target).norm();
        assert!(err < 0.5e-3, "tip {err:e} m from target");
        assert!((s.tip_in_arm - control.reported_tip_in_arm()).norm() < 1e-12);
    }
}

#[test]
fn a_click_is_seen_in_the_stream() {
    let sim = SimulatedArm::spawn(SimArmConfig::default()).expect("sim");
    let mut session = open_session(&sim.port_path().display().to_string(), 115_200);
    let params = session
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect("handshake");
    session
        .start_streaming(DataCommand::SIX_WITH_TIMER, 1)
        .expect("CF");
    sim.control().click(0x01);
    let mut pressed = 0;
    let start = Instant::now();
    let mut released_after = false;
    while !released_after && start.elapsed() < Duration::from_secs(5) {
        if let Some(p) = session
            .next_packet(Duration::from_millis(50))
            .expect("read")
        {
            let s = StylusSample::from_packet(&p, &params, Instant::now(), 0);
            if s.buttons & 1 != 0 {
                pressed += 1;
            } else if pressed > 0 {
                released_after = true;
            }
        }
    }
    assert!(pressed >= 1, "the press reached the host");
    assert!(released_after, "and so did the release");
}

/// Waits for a status matching `pred`, returning everything seen.
fn wait_status(
    worker: &ArmWorker,
    timeout: Duration,
    pred: impl Fn(&ArmStatus) -> bool,
) -> Vec<ArmStatus> {
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < timeout {
        if let Ok(s) = worker.status().recv_timeout(Duration::from_millis(50)) {
            let done = pred(&s);
            seen.push(s);
            if done {
                return seen;
            }
        }
    }
    panic!("status not reached within {timeout:?}; saw {seen:?}");
}

/// Collects `count` samples (waiting at most `timeout`, generous for loaded CI machines).
fn collect(worker: &ArmWorker, count: usize, timeout: Duration) -> Vec<StylusSample> {
    let start = Instant::now();
    let mut out = Vec::new();
    while out.len() < count && start.elapsed() < timeout {
        if let Ok(s) = worker.samples().recv_timeout(Duration::from_millis(20)) {
            out.push(s);
        }
    }
    out
}

#[test]
fn worker_survives_garbage_drops_truncation_silence_and_hang_up() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let script = ar_drivers::arm::MotionScript::parse(
        "t_s,x_m,y_m,z_m,buttons\n0,0.22,-0.05,0.05,0\n1,0.28,0.05,0.10,1\n2,0.22,-0.05,0.05,0\n",
        "test",
    )
    .expect("script");
    let sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        motion: Some(script),
        truth_capacity: 200_000,
        ..SimArmConfig::default()
    })
    .expect("sim");
    let worker = ArmWorker::spawn(ArmConfig {
        port: PortSpec::Path(link.clone()),
        channel_capacity: 100_000,
        ..ArmConfig::default()
    })
    .expect("worker");
    let connected = |s: &ArmStatus| matches!(s, ArmStatus::Connected { .. });
    let seen = wait_status(&worker, Duration::from_secs(10), connected);
    if let Some(ArmStatus::Connected { identity, baud, .. }) = seen.last() {
        assert_eq!(identity.serial, "40937");
        assert_eq!(*baud, 115_200);
    }
    let mut samples = collect(&worker, 200, Duration::from_secs(10));
    assert_eq!(samples.len(), 200, "streaming");

    // Line faults: the stream goes on without reconnecting.
    for fault in [
        Fault::Garbage { bytes: 64 },
        Fault::DropBytes { packets: 20 },
        Fault::TruncatePackets { packets: 20 },
        Fault::Garbage { bytes: 300 },
    ] {
        sim.inject(fault);
        let got = collect(&worker, 200, Duration::from_secs(10));
        assert_eq!(got.len(), 200, "{fault:?}: the stream goes on");
        samples.extend(got);
    }
    assert!(
        worker
            .status()
            .try_iter()
            .all(|s| !matches!(s, ArmStatus::Disconnected { .. })),
        "line noise must not cost the connection"
    );

    // A 2 s silence: reported, then the worker resynchronises.
    sim.inject(Fault::Silence {
        duration: Duration::from_secs(2),
    });
    let seen = wait_status(&worker, Duration::from_secs(3), |s| {
        matches!(s, ArmStatus::Disconnected { .. })
    });
    assert!(seen
        .iter()
        .any(|s| matches!(s, ArmStatus::Disconnected { .. })));
    wait_status(&worker, Duration::from_secs(15), connected);
    samples.extend(collect(&worker, 200, Duration::from_secs(10)));

    // A hang-up: the pty vanishes; the worker reconnects through the moved link.
    let old_pty = sim.pty_path();
    sim.inject(Fault::HangUp);
    wait_status(&worker, Duration::from_secs(3), |s| {
        matches!(s, ArmStatus::Disconnected { .. })
    });
    wait_status(&worker, Duration::from_secs(15), connected);
    assert_ne!(sim.pty_path(), old_pty, "a new pty");
    let after = collect(&worker, 200, Duration::from_secs(10));
    assert_eq!(after.len(), 200, "streaming after the hang-up");
    samples.extend(after);
    drop(worker);

    // No wrong sample: each one is a packet the arm sent intact.
    let index = truth_index(&sim.sent_samples());
    for s in &samples {
        assert_sample_is_true(s, &index);
    }
    for w in samples.windows(2) {
        assert!(w[1].seq > w[0].seq, "seq increases");
    }
    assert!(
        samples.iter().any(|s| s.buttons & 1 != 0),
        "script buttons arrive"
    );
}

/// An unplug reaches the host as one even when a process was started while the arm ran: the
/// simulated arm's pty is close-on-exec, so a child (the `arm probe` a CLI test starts, a
/// shell) holds no copy of its master, and dropping the master at a hang-up makes the host's
/// read fail. A leaked copy once turned every hang-up into a silent line that only the
/// 500 ms silence timeout noticed.
#[test]
fn a_hang_up_reaches_the_host_even_after_a_process_was_spawned() {
    let sim = SimulatedArm::spawn(SimArmConfig::default()).expect("simulated arm");
    let mut child = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("a child process");
    let path = sim.pty_path();
    let mut line = SerialLine::open(
        path.to_str().expect("utf-8"),
        9_600,
        Duration::from_millis(20),
    )
    .expect("open the pty");
    sim.inject(Fault::HangUp);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut buf = [0u8; 64];
    let failed = loop {
        match std::io::Read::read(&mut line, &mut buf) {
            Err(e)
                if !matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                break Some(e)
            }
            _ if Instant::now() > deadline => break None,
            _ => {}
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_ne!(sim.pty_path(), path, "a new pty");
    assert!(
        failed.is_some(),
        "the host's line was still open 10 s after the hang-up"
    );
}

#[test]
fn probing_a_silent_port_reports_no_autosync() {
    // A pty with nobody on the other side.
    let (_master, slave) = serialport::TTYPort::pair().expect("pty");
    let path = serialport::SerialPort::name(&slave).expect("name");
    let mut session = open_session(&path, 9_600);
    let e = session
        .handshake(&TipCorrection::point(), Duration::from_millis(200))
        .expect_err("nobody answers");
    assert!(e.to_string().contains("IMMC"), "{e}");
    let _ = session.port_mut().set_baud(19_200);
}

/// Runs only with a real arm: `AR_ARM_PORT=/dev/ttyUSB0 cargo test -p ar-drivers --test arm -- --ignored`.
#[test]
#[ignore = "needs a real arm: set AR_ARM_PORT"]
fn hardware_arm_handshake_and_stream() {
    let Ok(port) = std::env::var("AR_ARM_PORT") else {
        eprintln!("AR_ARM_PORT not set; skipping");
        return;
    };
    let mut session = open_session(&port, 9_600);
    let params = session
        .handshake(&TipCorrection::point(), Duration::from_secs(3))
        .expect("handshake with the real arm");
    assert_eq!(params.identity.product_id, "MSCR");
    assert_eq!(params.identity.param_format, "Format DH0.5");
    let baud = session.negotiate_baud(9_600, 115_200).expect("C4");
    session
        .start_streaming(DataCommand::SIX_WITH_TIMER, 1)
        .expect("CF");
    let start = Instant::now();
    let mut n = 0;
    let mut reach_ok = true;
    while n < 200 && start.elapsed() < Duration::from_secs(5) {
        if let Some(p) = session
            .next_packet(Duration::from_millis(100))
            .expect("read")
        {
            let s = StylusSample::from_packet(&p, &params, Instant::now(), n);
            reach_ok &= s.tip_in_arm.coords.norm() < 1.0;
            n += 1;
        }
    }
    session.stop_streaming().expect("stop");
    eprintln!(
        "{}: {n} samples at {baud} baud in {:?}",
        params.identity,
        start.elapsed()
    );
    assert_eq!(n, 200);
    assert!(reach_ok, "tips within 1 m of the base");
}
