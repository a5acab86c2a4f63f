//! `arm probe` against the simulated arm: it reconnects after silence and an unplug, writes
//! its CSV rows as they arrive, ends cleanly on SIGTERM keeping them, and gives up (exit 1,
//! rows kept) when the arm is gone for good.

use ar_drivers::arm::{Fault, SimArmConfig, SimulatedArm};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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
    let child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["arm", "probe", "--count", "0", "--port"])
        .arg(&link)
        .arg("--csv")
        .arg(&csv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arm probe");
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
    // SAFETY: sending a signal to our own child process.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(rc, 0);
    let out = child.wait_with_output().expect("wait");
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
    let child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args([
            "arm",
            "probe",
            "--count",
            "0",
            "--give-up-after",
            "2",
            "--port",
        ])
        .arg(&link)
        .arg("--csv")
        .arg(&csv2)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("arm probe");
    let kept = wait_rows(&csv2, 100, Duration::from_secs(20));
    assert!(kept > 100);
    drop(sim);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no arm connected"), "{stderr}");
    assert!(csv_rows(&csv2) >= kept, "rows kept");
}
