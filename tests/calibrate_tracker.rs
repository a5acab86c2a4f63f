//! End-to-end tests of `ar-multibody calibrate tracker`: the CSV path, and the guided
//! procedure against the simulated arm on a pseudo-terminal with the simulated user.

use ar_calibration::tracker_file::TrackerCalibration;
use nalgebra::{Isometry3, Point3, Vector3};
use std::path::Path;
use std::process::{Command, Output};

fn ar_multibody(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run ar-multibody")
}

fn cube_corners() -> Vec<Point3<f64>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/calibration/cube_80mm.toml");
    ar_calibration::calibration_object::CalibrationObject::load(&path)
        .expect("shipped cube")
        .positions()
}

fn write_pairs(path: &Path, truth: &Isometry3<f64>, offsets: &[(usize, Vector3<f64>)]) {
    let mut text = String::from("world_x,world_y,world_z,arm_x,arm_y,arm_z\n");
    for (i, w) in cube_corners().iter().enumerate() {
        let mut a = truth.inverse() * w;
        for (j, off) in offsets {
            if *j == i {
                a += off;
            }
        }
        text.push_str(&format!(
            "{},{},{},{},{},{}\n",
            w.x, w.y, w.z, a.x, a.y, a.z
        ));
    }
    std::fs::write(path, text).expect("write pairs");
}

#[test]
fn pairs_csv_gives_the_transform_and_an_atomic_file() {
    let dir = tempfile::tempdir().unwrap();
    let truth = Isometry3::new(
        Vector3::new(-0.2, 0.1, -0.05),
        Vector3::new(0.01, -0.02, 0.6),
    );
    let pairs = dir.path().join("pairs.csv");
    // Small, non-degenerate "hand noise" so that the two fits differ.
    let noise: Vec<_> = (0..8)
        .map(|i| {
            (
                i,
                Vector3::new(0.0001, -0.0001, 0.00005) * if i % 2 == 0 { 1.0 } else { -1.0 },
            )
        })
        .collect();
    write_pairs(&pairs, &truth, &noise);
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--pairs",
        pairs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("svd fit chosen") || stdout.contains("pinv+qr fit chosen"),
        "{stdout}"
    );
    assert!(
        stdout.contains("residuals (mm)") && stdout.contains("RMS"),
        "{stdout}"
    );
    let file = TrackerCalibration::load(&out).unwrap();
    let rot_err = file
        .world_from_arm
        .rotation
        .angle_to(&truth.rotation)
        .to_degrees();
    let trans_err_mm =
        (file.world_from_arm.translation.vector - truth.translation.vector).norm() * 1e3;
    assert!(
        rot_err < 0.2 && trans_err_mm < 0.5,
        "{rot_err} deg, {trans_err_mm} mm"
    );
    assert!(file.rms_mm > 0.0 && file.rms_mm < 0.3, "{}", file.rms_mm);
    // Nothing but the output file and the input are left in the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn pairs_csv_flags_a_5_mm_mispick_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let truth = Isometry3::new(Vector3::new(0.3, 0.0, 0.0), Vector3::new(0.0, 0.0, 1.0));
    let pairs = dir.path().join("pairs.csv");
    write_pairs(&pairs, &truth, &[(4, Vector3::new(0.0, 0.003, 0.004))]);
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--pairs",
        pairs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("likely mis-picks") && stdout.contains("point 5 (line 6)"),
        "{stdout}"
    );
}

#[test]
fn bad_csv_names_line_and_column_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.csv");
    std::fs::write(
        &pairs,
        "world_x,world_y,world_z,arm_x,arm_y,arm_z\n0,0,0,0,0,0\n0.1,0,0,0.1,0,0,\n",
    )
    .unwrap();
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--pairs",
        pairs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("line 3: 7 columns"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn coplanar_pairs_are_refused_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.csv");
    // The four top corners of the cube: coplanar.
    let mut text = String::from("world_x,world_y,world_z,arm_x,arm_y,arm_z\n");
    for w in &cube_corners()[..4] {
        text.push_str(&format!(
            "{},{},{},{},{},{}\n",
            w.x,
            w.y,
            w.z,
            w.x + 0.5,
            w.y,
            w.z
        ));
    }
    std::fs::write(&pairs, text).unwrap();
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--pairs",
        pairs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(stderr.contains("coplanar"), "{stderr}");
    assert!(!out.exists());
}

/// A plausible desk set-up within the simulated arm's reach: the arm base 16 cm left of and
/// 5 cm below the marker, turned 20° about z and tilted slightly.
fn hidden_world_from_arm() -> Isometry3<f64> {
    Isometry3::new(
        Vector3::new(-0.15, -0.05, -0.05),
        Vector3::new(0.01, -0.008, 20f64.to_radians()),
    )
}

fn write_hidden(path: &Path, world_from_arm: &Isometry3<f64>) {
    TrackerCalibration {
        world_from_arm: *world_from_arm,
        rms_mm: 0.0,
        fit: None,
        points: None,
    }
    .save(path)
    .expect("write hidden transform");
}

/// Acceptance 3 of issue 5: the guided procedure against the simulated arm on a pty, with the
/// simulated user, finishes unattended and its file reproduces the hidden transform.
#[test]
fn simulated_user_on_a_pty_reproduces_the_hidden_transform() {
    let dir = tempfile::tempdir().unwrap();
    let hidden_path = dir.path().join("hidden.toml");
    let hidden = hidden_world_from_arm();
    write_hidden(&hidden_path, &hidden);
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--simulate-user",
        hidden_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--seed",
        "11",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("simulated arm on /dev/pts/"), "{stdout}");
    assert!(
        stdout.contains("touch point 3/8: top back right corner, then press the pedal"),
        "{stdout}"
    );
    let file = TrackerCalibration::load(&out).unwrap();
    let corners = cube_corners();
    let sum: f64 = corners
        .iter()
        .map(|w| (file.world_from_arm * (hidden.inverse() * w) - w).norm_squared())
        .sum();
    let rms_mm = (sum / corners.len() as f64).sqrt() * 1e3;
    let angle_deg = file
        .world_from_arm
        .rotation
        .angle_to(&hidden.rotation)
        .to_degrees();
    assert!(rms_mm <= 0.4, "{rms_mm} mm RMS on the true corners");
    assert!(angle_deg <= 0.35, "{angle_deg} deg");
    assert!(file.rms_mm > 0.0 && file.rms_mm < 1.0, "{}", file.rms_mm);
    assert_eq!(file.points, Some(8));
}

#[test]
fn an_unreachable_hidden_transform_is_refused_before_touching() {
    let dir = tempfile::tempdir().unwrap();
    let hidden_path = dir.path().join("hidden.toml");
    write_hidden(
        &hidden_path,
        &Isometry3::new(Vector3::new(5.0, 0.0, 0.0), Vector3::zeros()),
    );
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--simulate-user",
        hidden_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success());
    assert!(
        stderr.contains("out of the simulated arm's reach"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// Acceptance 2 end to end: a slipped touch (5 mm) is flagged, asked again, and the final
/// file is as good as a clean run.
#[test]
fn a_slipped_touch_is_flagged_and_picked_again() {
    let dir = tempfile::tempdir().unwrap();
    let hidden_path = dir.path().join("hidden.toml");
    let hidden = hidden_world_from_arm();
    write_hidden(&hidden_path, &hidden);
    let out = dir.path().join("tracker.toml");
    let run = ar_multibody(&[
        "calibrate",
        "tracker",
        "--simulate-user",
        hidden_path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--simulate-slip",
        "6",
    ]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(
        stdout.contains("likely mis-picks (residual > 3× median and > 1 mm): point 6"),
        "{stdout}"
    );
    assert!(
        stdout.contains("touch point 6/8 again: bottom front right corner, then press the pedal"),
        "{stdout}"
    );
    let file = TrackerCalibration::load(&out).unwrap();
    assert!(file.rms_mm < 0.6, "{}", file.rms_mm);
    let angle_deg = file
        .world_from_arm
        .rotation
        .angle_to(&hidden.rotation)
        .to_degrees();
    assert!(angle_deg <= 0.35, "{angle_deg} deg");
}

/// An interrupted run (Ctrl-C in the middle of picking) keeps the previous file intact and
/// leaves no temporary file behind.
#[test]
fn ctrl_c_mid_session_leaves_the_old_file_untouched() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let hidden_path = dir.path().join("hidden.toml");
    write_hidden(&hidden_path, &hidden_world_from_arm());
    let out = dir.path().join("tracker.toml");
    std::fs::write(&out, "previous calibration\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args([
            "calibrate",
            "tracker",
            "--simulate-user",
            hidden_path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .env("RUST_BACKTRACE", "0")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start ar-multibody");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.expect("utf-8 output");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("touch point 3/8") {
            break;
        }
    }
    assert!(seen.contains("touch point 3/8"), "{seen}");
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(!status.success(), "{seen}{}", rest.join("\n"));
    assert!(
        stderr.contains("cancelled") && stderr.contains("nothing written"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "previous calibration\n"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}
