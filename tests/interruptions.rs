//! Issue 20 items 3 and 6: long runs keep what they have when stopped, and a failing stdout is
//! an error or a quiet end, never a panic.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ar-multibody"));
    c.env("RUST_BACKTRACE", "0");
    c
}

/// `simulate --csv` used to lose the rows still in its buffer on SIGTERM or Ctrl-C (all of
/// them for a short run); now the run stops after the step, flushes, says so, exits 130.
/// Both methods.
#[test]
fn simulate_keeps_its_csv_rows_on_sigterm_and_ctrl_c() {
    let methods = [["--method", "default"], ["--method", "articulated"]];
    for (method, signal) in methods
        .iter()
        .flat_map(|m| [(m, libc::SIGTERM), (m, libc::SIGINT)])
    {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("run.csv");
        let child = bin()
            .args(["simulate", "ten_pendula", "--duration", "1000000", "--csv"])
            .arg(&csv)
            .args(method)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until rows are being written (the file grows past the header).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::fs::metadata(&csv).map_or(0, |m| m.len()) < 100_000 {
            assert!(std::time::Instant::now() < deadline, "no rows written");
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(child.id() as i32, signal) };
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{stderr}");
        let steps: usize = stderr
            .split(" after ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{stderr}"));
        assert!(stderr.contains("rows so far kept in"), "{stderr}");
        let text = std::fs::read_to_string(&csv).unwrap();
        // Every step's row is there, complete: header + one line per step, ending in '\n'.
        assert_eq!(
            text.lines().count(),
            steps + 1,
            "{method:?}, signal {signal}"
        );
        assert!(text.ends_with('\n'));
    }
}

/// `track --print | head` panicked on the broken pipe; now it ends quietly with status 0.
#[test]
fn track_print_into_a_closed_pipe_ends_quietly() {
    let mut child = bin()
        .args([
            "track",
            "--synthetic",
            "--camera",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/assets/cameras/synthetic_640x480.toml"
            ),
            "--print",
            // More lines than a pipe buffer holds (64 KiB, ~80 bytes a line), so that the
            // writes do hit the closed pipe.
            "--frames",
            "3000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("frame 0"), "{first}");
    // The reader is dropped: the pipe is closed.
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Any other stdout failure is one error line and status 1.
#[cfg(target_os = "linux")]
#[test]
fn simulate_into_dev_full_is_an_error_not_a_panic() {
    let out = bin()
        .args(["simulate", "ten_pendula", "--duration", "0.1"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("No space left on device") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// A live `track` ends on Ctrl-C or SIGTERM: it used to die with up to 64 KiB of CSV rows in
/// its buffer and an AVI without its index. Now the rows, a playable recording and the
/// summary are kept, exit 130.
#[test]
fn track_keeps_its_rows_and_recording_on_sigterm_and_ctrl_c() {
    let camera = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/cameras/synthetic_640x480.toml"
    );
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let (csv, avi) = (dir.path().join("t.csv"), dir.path().join("t.avi"));
        let child = bin()
            .args(["track", "--synthetic", "--realtime", "--frames", "100000"])
            .args(["--camera", camera, "--csv"])
            .arg(&csv)
            .arg("--record")
            .arg(&avi)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the recording has frames in it.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::fs::metadata(&avi).map_or(0, |m| m.len()) < 200_000 {
            assert!(std::time::Instant::now() < deadline, "nothing recorded");
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(child.id() as i32, signal) };
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(130), "{stderr}");
        let frames: usize = stderr
            .split("interrupted after ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{stderr}"));
        assert!(
            stdout.contains(&format!("frames {frames}, detected")),
            "{stdout}"
        );
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(text.lines().count(), frames + 1, "signal {signal}");
        assert!(text.ends_with('\n'));
        // The recording plays to its end: every frame decodes against its truth file.
        let replay = bin()
            .args(["track", "--camera", camera, "--video"])
            .arg(&avi)
            .arg("--truth")
            .arg(avi.with_extension("truth.csv"))
            .output()
            .unwrap();
        let replayed = String::from_utf8_lossy(&replay.stdout);
        assert!(
            replay.status.success(),
            "{replayed}\n{}",
            String::from_utf8_lossy(&replay.stderr)
        );
        assert!(
            replayed.contains(&format!("frames {frames}, detected")),
            "{replayed}"
        );
    }
}
