//! `arm probe` against the simulated arm: it reconnects after silence and an unplug, writes
//! its CSV rows as they arrive, ends cleanly on SIGTERM keeping them, and gives up (exit 1,
//! rows kept) when the arm is gone for good, but not while it was itself stalled writing its
//! rows.

use ar_drivers::arm::{Fault, SimArmConfig, SimulatedArm};
use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running `arm probe` whose stdout and stderr are read as they come, by two threads. Read
/// only at the end, its stdout pipe fills after about 690 rows (64 KiB) and the probe then
/// waits in its own `write`: no row more reaches the CSV either, which looked like an arm
/// that stopped streaming after a reconnect.
struct Probe {
    child: Child,
    /// `None` while the test holds the probe's stdout unread on purpose.
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: JoinHandle<Vec<u8>>,
}

/// Reads `pipe` to its end on a thread.
fn read_to_end(mut pipe: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = pipe.read_to_end(&mut out);
        out
    })
}

impl Probe {
    /// Starts `arm probe ARGS`, its output read as it comes.
    fn spawn(args: &[&std::ffi::OsStr]) -> Self {
        let mut probe = Self::spawn_with_stdout_unread(args);
        probe.read_stdout();
        probe
    }

    /// Starts `arm probe ARGS` with its stderr read as it comes and its stdout left unread
    /// until [`Self::read_stdout`] (or [`Self::wait`]).
    fn spawn_with_stdout_unread(args: &[&std::ffi::OsStr]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
            .args(["arm", "probe"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("arm probe");
        let stderr = read_to_end(child.stderr.take().expect("stderr"));
        Self {
            child,
            stdout: None,
            stderr,
        }
    }

    /// Starts reading stdout (once).
    fn read_stdout(&mut self) {
        if let Some(pipe) = self.child.stdout.take() {
            self.stdout = Some(read_to_end(pipe));
        }
    }

    /// Bytes written to stdout and not read yet, and the pipe's capacity.
    fn stdout_unread_and_capacity(&self) -> (usize, usize) {
        use std::os::fd::AsRawFd;
        let fd = self
            .child
            .stdout
            .as_ref()
            .expect("stdout unread")
            .as_raw_fd();
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through a valid pointer; F_GETPIPE_SZ reads nothing;
        // both on our end of the child's stdout pipe, open while `self` holds it.
        let (rc, capacity) = unsafe {
            (
                libc::ioctl(fd, libc::FIONREAD, &mut unread),
                libc::fcntl(fd, libc::F_GETPIPE_SZ),
            )
        };
        assert!(rc == 0 && capacity > 0, "ioctl {rc}, capacity {capacity}");
        (unread as usize, capacity as usize)
    }

    /// Sends SIGTERM, unless it has ended already (its exit status then tells why).
    fn terminate(&mut self) {
        if self.has_ended() {
            return;
        }
        // SAFETY: sending a signal to our own child process, not yet reaped.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(rc, 0);
    }

    /// Waits for the end and returns everything it wrote.
    fn wait(mut self) -> Output {
        self.read_stdout();
        let status = self.child.wait().expect("wait");
        Output {
            status,
            stdout: self
                .stdout
                .take()
                .map(|r| r.join().expect("stdout reader"))
                .unwrap_or_default(),
            stderr: self.stderr.join().expect("stderr reader"),
        }
    }

    /// True once the probe has ended.
    fn has_ended(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_some()
    }
}

fn csv_rows(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

fn wait_rows(path: &std::path::Path, more_than: usize, timeout: Duration) -> usize {
    let start = Instant::now();
    loop {
        let n = csv_rows(path);
        if n > more_than || start.elapsed() > timeout {
            return n;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `arm probe --count 0 --give-up-after SECS --port LINK` to its end.
fn probe_until_it_gives_up(link: &std::path::Path, secs: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args([
            "arm",
            "probe",
            "--count",
            "0",
            "--give-up-after",
            secs,
            "--port",
        ])
        .arg(link)
        .output()
        .expect("arm probe")
}

#[test]
fn probe_reconnects_keeps_its_rows_and_ends_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let csv = dir.path().join("rows.csv");
    let sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        ..SimArmConfig::default()
    })
    .expect("simulated arm");
    let mut probe = Probe::spawn(&[
        "--count".as_ref(),
        "0".as_ref(),
        "--port".as_ref(),
        link.as_os_str(),
        "--csv".as_ref(),
        csv.as_os_str(),
    ]);
    // Rows appear while it runs, not only at the end.
    let before_faults = wait_rows(&csv, 200, Duration::from_secs(20));
    assert!(before_faults > 200, "rows as they arrive: {before_faults}");
    sim.inject(Fault::Silence {
        duration: Duration::from_secs(1),
    });
    std::thread::sleep(Duration::from_millis(1500));
    let after_silence = wait_rows(&csv, before_faults + 200, Duration::from_secs(20));
    sim.inject(Fault::HangUp);
    std::thread::sleep(Duration::from_millis(500));
    let after_unplug = wait_rows(&csv, after_silence + 200, Duration::from_secs(20));
    assert!(
        after_unplug > after_silence && after_silence > before_faults,
        "streaming resumed after each fault: {before_faults} → {after_silence} → {after_unplug}"
    );
    probe.terminate();
    let out = probe.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert_eq!(
        stderr.matches("reconnected").count(),
        2,
        "after the silence and the unplug: {stderr}"
    );
    let rows = csv_rows(&csv);
    assert!(
        stdout.contains(&format!("wrote {rows} samples")),
        "every row reported is in the file: {rows}; {stdout}"
    );
    assert!(stdout.contains("stopped by signal"), "{stdout}");
    assert!(stdout.contains("driver: "), "counters printed: {stdout}");

    // Gone for good: gives up, exit 1, rows kept.
    let csv2 = dir.path().join("rows2.csv");
    let probe = Probe::spawn(&[
        "--count".as_ref(),
        "0".as_ref(),
        "--give-up-after".as_ref(),
        "2".as_ref(),
        "--port".as_ref(),
        link.as_os_str(),
        "--csv".as_ref(),
        csv2.as_os_str(),
    ]);
    let kept = wait_rows(&csv2, 100, Duration::from_secs(20));
    assert!(kept > 100);
    drop(sim);
    let out = probe.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no arm connected"), "{stderr}");
    assert!(csv_rows(&csv2) >= kept, "rows kept");
}

/// A probe whose stdout nobody reads for a while (piped into a paused pager) waits in its own
/// `write` once the pipe is full; read again, it goes on with the samples the worker kept
/// meanwhile. It used to give up as soon as it could write again, blaming the arm ("answers
/// commands but sent no data for 1.0 s", exit 1): its give-up clock had run while it was the
/// one waiting. (In the reconnection test above, whose stdout was read only at the end, a
/// SIGTERM racing that check made the probe exit 1 now and then.)
#[test]
fn a_probe_stalled_writing_its_rows_goes_on_without_blaming_the_arm() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let csv = dir.path().join("rows.csv");
    let _sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        ..SimArmConfig::default()
    })
    .expect("simulated arm");
    let mut probe = Probe::spawn_with_stdout_unread(&[
        "--count".as_ref(),
        "0".as_ref(),
        "--give-up-after".as_ref(),
        "1".as_ref(),
        "--port".as_ref(),
        link.as_os_str(),
        "--csv".as_ref(),
        csv.as_os_str(),
    ]);
    // Its stdout pipe fills (the last page may hold less than a whole one: rows do not
    // straddle pages)...
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (unread, capacity) = probe.stdout_unread_and_capacity();
        if unread + 4096 >= capacity {
            break;
        }
        assert!(
            Instant::now() < deadline && !probe.has_ended(),
            "stdout never filled: {unread} of {capacity} bytes"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // ... and then no row reaches the CSV for twice --give-up-after: the probe is waiting.
    let stalled = loop {
        let rows = csv_rows(&csv);
        std::thread::sleep(Duration::from_secs(2));
        if csv_rows(&csv) == rows {
            break rows;
        }
        assert!(Instant::now() < deadline, "the probe never stalled");
    };
    probe.read_stdout();
    let start = Instant::now();
    while csv_rows(&csv) <= stalled + 200
        && !probe.has_ended()
        && start.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    probe.terminate();
    let out = probe.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert!(!stderr.contains("sent no data"), "{stderr}");
    assert!(stdout.contains("stopped by signal"), "{stdout}");
    let rows = csv_rows(&csv);
    assert!(rows > stalled + 200, "rows went on: {stalled} → {rows}");
    assert!(
        stdout.contains(&format!("wrote {rows} samples")),
        "{stdout}"
    );
}

/// An arm that answers the handshake and then sends nothing, or nothing that passes the
/// plausibility filter, once made the probe reconnect forever ("no data ... reconnecting");
/// now it gives up after `--give-up-after` and says which of the two it was.
#[test]
fn a_mute_or_refused_arm_ends_within_give_up_after_with_the_reason() {
    let cases = [
        (
            Fault::MuteData,
            "answers commands but sent no data for 2.0 s",
        ),
        (
            Fault::OutOfRangeCounts { packets: u32::MAX },
            "passed the plausibility filter for 2.0 s (--give-up-after):",
        ),
    ];
    for (fault, expected) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = dir.path().join("arm");
        let sim = SimulatedArm::spawn(SimArmConfig {
            link: Some(link.clone()),
            ..SimArmConfig::default()
        })
        .expect("simulated arm");
        sim.inject(fault);
        let started = Instant::now();
        let out = probe_until_it_gives_up(&link, "2");
        let elapsed = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{fault:?}: {stderr}");
        assert!(stderr.contains(expected), "{fault:?}: {stderr}");
        if matches!(fault, Fault::OutOfRangeCounts { .. }) {
            assert!(stderr.contains("out of range"), "{stderr}");
            assert!(!stderr.contains(": 0 packets refused"), "{stderr}");
        }
        println!("{fault:?}: ended after {elapsed:?}: {}", stderr.trim());
        // It takes 2.15 s here; the margin is for a busy machine, not for a retry loop (which
        // never ended).
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(10),
            "{fault:?}: {elapsed:?}"
        );
    }
}

/// An arm whose handshake is refused (it announces zero encoders) is named with the reason
/// at once, without `-v`, once however often the driver retries, and the probe gives up.
#[test]
fn a_refused_handshake_prints_its_reason_once_without_verbose() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let mut device = ar_drivers::arm::sim::DeviceIdentity::default();
    device.max_values.encoder_max = [0; 6];
    let _sim = SimulatedArm::spawn(SimArmConfig {
        device,
        link: Some(link.clone()),
        ..SimArmConfig::default()
    })
    .expect("simulated arm");
    let out = probe_until_it_gives_up(&link, "3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("arm: not connected:"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("C6: encoder 0"), "{stderr}");
    assert!(stderr.contains("no arm connected on"), "{stderr}");
}

/// What `arm probe --csv` records replays as a stylus script: the simulated arm presses
/// button 1, drags the tip 3 cm sideways and 2 cm up, releases and returns (looped); the
/// probe records 3000 samples (about 4 s), and `simulate --stylus --calibration` drags the
/// ten pendula with them, the calibration putting the first press on the chain's tip.
#[test]
fn a_probe_recording_drives_simulate_through_the_tracker_calibration() {
    use ar_calibration::tracker_file::TrackerCalibration;
    use ar_drivers::arm::MotionScript;
    use nalgebra::{Isometry3, Point3};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let csv = dir.path().join("gesture.csv");
    let motion = MotionScript::parse(
        "t_s,x_m,y_m,z_m,buttons\n\
         0.0,0.20,-0.05,0.02,1\n\
         1.5,0.23,-0.05,0.04,1\n\
         2.0,0.23,-0.05,0.04,0\n\
         3.0,0.20,-0.05,0.02,0\n",
        "gesture",
    )
    .expect("motion");
    let _sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        motion: Some(motion),
        ..SimArmConfig::default()
    })
    .expect("simulated arm");
    let out = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["arm", "probe", "--count", "3000", "--port"])
        .arg(&link)
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("arm probe");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One press, drag and release: the recording up to the first release after a press (a
    // script clips wherever the tip is, and the next press would find the chain swinging).
    let recorded = std::fs::read_to_string(&csv).expect("csv");
    let lines: Vec<&str> = recorded.lines().collect();
    let fields = |k: usize| lines[k].split(',').collect::<Vec<_>>();
    let press = (1..lines.len())
        .find(|&k| fields(k)[9] == "1")
        .expect("the recording holds a press");
    let release = (press..lines.len())
        .find(|&k| fields(k)[9] == "0")
        .expect("the recording holds a release");
    let gesture = dir.path().join("one_press.csv");
    std::fs::write(&gesture, lines[..=release].join("\n")).expect("gesture");
    let number = |k: usize, c: usize| fields(k)[c].parse::<f64>().expect("number");
    let first_press_in_arm = Point3::new(number(press, 6), number(press, 7), number(press, 8));
    let duration = format!("{:.2}", number(release, 0) + 0.5);

    let scene = root.join("assets/scenes/ten_pendula.toml");
    let sim = ar_dynamics::Scene::load(&scene)
        .and_then(|s| s.build())
        .expect("scene");
    let offset = sim.grab_point_in_world(0).expect("grab point") - first_press_in_arm;
    let calibration = dir.path().join("tracker.toml");
    TrackerCalibration {
        world_from_arm: Isometry3::translation(offset.x, offset.y, offset.z),
        rms_mm: 0.2,
        fit: None,
        points: None,
    }
    .save(&calibration)
    .expect("calibration");
    let run = |extra: &[&std::ffi::OsStr]| {
        Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
            .arg("simulate")
            .arg(&scene)
            .args(["--duration", &duration, "--stylus"])
            .arg(&gesture)
            .args(extra)
            .output()
            .expect("simulate")
    };
    let out = run(&["--calibration".as_ref(), calibration.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("{duration}0000000 s simulated")),
        "{stdout}"
    );
    // The chain was dragged: the tip followed the recorded stylus (1.3 mm at most here: the
    // recording carries the arm's sample noise at 700 Hz), and the joints held.
    let figure = |label: &str| -> f64 {
        let line = stdout.lines().find(|l| l.starts_with(label)).expect(label);
        line[label.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let grab = figure("max grab distance");
    println!("replayed recording: max grab distance {grab:.3e} m");
    assert!(grab > 1e-5 && grab < 2.5e-3, "{stdout}");
    assert!(figure("max |psi|") < 1e-7, "{stdout}");
    // Without the calibration the arm-frame tips are refused, with the fix named.
    let out = run(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("arm's frame") && stderr.contains("--calibration"),
        "{stderr}"
    );
}

/// A port path that does not exist is a typo or an unplugged adapter: `arm probe` and
/// `calibrate tracker --arm` say so at once, naming the serial ports there are, instead of
/// waiting for their connection timeouts (10 s and 30 s) first.
#[test]
fn a_missing_port_is_named_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("ttyUSB9");
    let out_toml = dir.path().join("tracker.toml");
    let runs = [
        vec!["arm", "probe", "--port", missing.to_str().unwrap()],
        vec![
            "calibrate",
            "tracker",
            "--arm",
            missing.to_str().unwrap(),
            "--out",
            out_toml.to_str().unwrap(),
        ],
    ];
    for args in runs {
        let out = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{}: no such device (serial ports here:",
                missing.display()
            )),
            "{args:?}: {stderr}"
        );
        assert!(!out_toml.exists());
    }
}

/// Run in the background as the manual says (`< /dev/null`), `arm simulate` idles once stdin
/// has ended: it once asked the closed command channel again at once, forever, and burned a
/// whole core beside the rig it served.
#[test]
fn arm_simulate_with_stdin_closed_idles() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("arm");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["arm", "simulate", "--link", link.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("arm simulate");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !link.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(link.exists(), "the simulator never made its link");
    // CPU time (user + system, clock ticks) the process used over two seconds of idling.
    let cpu_ticks = || -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).expect("stat");
        // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
        let rest = &stat[stat.rfind(')').expect("stat format") + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let before = cpu_ticks();
    std::thread::sleep(Duration::from_secs(2));
    let used = cpu_ticks() - before;
    let _ = child.kill();
    let _ = child.wait();
    // 200 ticks would be a core; an idle simulator with nothing connected needs a few.
    assert!(
        used < 40,
        "arm simulate used {used} ticks (1/100 s) in 2 s while idle"
    );
}
