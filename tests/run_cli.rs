//! `run` on what a lab may have (issue 19, acceptance 4): a recording of the desk as the
//! camera and no arm; an arm whose port is missing (named at once, then the run goes on
//! without it, or stops when the config says the arm is required). Headless: the frames go
//! to PNG files. The first run is recorded (`--record`) and replayed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn asset(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .output()
        .expect("runs")
}

/// A 3 s MJPG recording of the synthetic desk with the printed marker, in `dir`.
fn desk_video(dir: &Path) -> PathBuf {
    let avi = dir.join("desk.avi");
    let out = cli(&[
        "track",
        "--synthetic",
        "--camera",
        &asset("assets/cameras/synthetic_640x480.toml"),
        "--frames",
        "45",
        "--fps",
        "15",
        "--seed",
        "3",
        "--record",
        avi.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    avi
}

/// A rig config in `dir` with the recording as the camera, no microphone, headless frames, and
/// `arm` (a whole `[arm]` table, or nothing).
fn rig_config(dir: &Path, arm: &str) -> PathBuf {
    desk_video(dir);
    let text = format!(
        "scene = \"{scene}\"\n\n[camera]\ndevice = \"desk.avi\"\ncamera_file = \"{camera}\"\nmarker_length_m = 0.08\n\n{arm}\n[mic]\ndevice = \"none\"\n\n[display]\nmode = \"monitor\"\nheadless_out = \"frames\"\n",
        scene = asset("assets/scenes/ten_pendula.toml"),
        camera = asset("assets/cameras/synthetic_640x480.toml"),
    );
    let path = dir.join("rig.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn frames_written(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("frames"))
        .map(|d| d.filter(|e| e.is_ok()).count())
        .unwrap_or(0)
}

#[test]
fn a_recording_as_the_camera_and_no_arm_runs() {
    let dir = tempfile::tempdir().unwrap();
    let config = rig_config(dir.path(), "");
    // 4 s: longer than the 3 s recording, which starts over.
    let session = dir.path().join("session");
    let out = cli(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--duration-s",
        "4",
        "--record",
        session.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    // The session replays through the same simulation, bit for bit (issue 19, acceptance 3).
    assert!(stdout.contains("session recorded in"), "{stdout}");
    let replay = cli(&["replay", session.to_str().unwrap()]);
    let replayed = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{replayed}");
    assert!(replayed.contains("bit for bit"), "{replayed}");
    assert!(
        stderr.contains("played at its own rate, looping"),
        "{stderr}"
    );
    assert!(stderr.contains("arm: none in the config"), "{stderr}");
    // The solver ran the whole time, and frames were drawn (a few per second at least: the
    // debug build renders on the CPU beside other tests).
    assert!(stdout.contains("solver: "), "{stdout}");
    assert!(
        frames_written(dir.path()) >= 3,
        "{} frames written",
        frames_written(dir.path())
    );
}

#[test]
fn a_missing_arm_port_is_named_at_once_and_the_run_goes_on_or_stops_as_configured() {
    let dir = tempfile::tempdir().unwrap();
    let arm = |required: bool| {
        format!(
            "[arm]\nport = \"/dev/ttyNOPE7\"\ntracker_file = \"{}\"\nrequired = {required}\n",
            asset("assets/calibration/example_hidden_tracker.toml")
        )
    };
    let config = rig_config(dir.path(), &arm(false));
    let out = cli(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--duration-s",
        "2",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("/dev/ttyNOPE7") && stderr.contains("running without the arm"),
        "{stderr}"
    );
    assert!(frames_written(dir.path()) >= 2);

    let config = rig_config(dir.path(), &arm(true));
    let started = Instant::now();
    let out = cli(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--duration-s",
        "30",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("/dev/ttyNOPE7") && stderr.contains("required = true"),
        "{stderr}"
    );
    // At once: not after a connection timeout, and long before the 30 s asked.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}
