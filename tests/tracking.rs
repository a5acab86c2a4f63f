//! End-to-end tracking tests: the synthetic camera renders the real printed marker and the real
//! detector finds it (acceptance 1, 2, 5 of issue 4 on fewer frames), plus camera calibration
//! from synthetic board views (acceptance 3).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::camera::{
    chessboard_sheet, look_at, CameraPath, CameraSource, CardTexture, Frame, SyntheticCamera,
    SyntheticConfig,
};
use ar_multibody::tracking::{
    AccuracyStats, MarkerObservation, MarkerTracker, PoseError, TrackerConfig,
};
use std::path::Path;

fn synthetic_intrinsics() -> CameraIntrinsics {
    CameraIntrinsics::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/cameras/synthetic_640x480.toml"),
    )
    .unwrap()
}

#[test]
fn static_poses_are_recovered_without_noise() {
    let mut intr = synthetic_intrinsics();
    if std::env::var("DIST0").is_ok() {
        intr.dist = [0.0; 5];
    }
    for (d, off) in [(0.3, 0.0), (0.5, 0.0), (0.5, 0.6), (0.8, 0.8)] {
        let cfg = SyntheticConfig {
            path: CameraPath::looking_at_marker(d, off, 0.3),
            frames: Some(1),
            blur_sigma_px: 0.0,
            noise_sigma_levels: 0.0,
            ..SyntheticConfig::default()
        };
        let mut cam = SyntheticCamera::new(&intr, cfg, 1).unwrap();
        let frame = cam.next_frame().unwrap().unwrap();
        let mut tr = MarkerTracker::new(
            TrackerConfig {
                smoothing: None,
                ..TrackerConfig::default()
            },
            &intr,
        )
        .unwrap();
        let obs = tr.process(&frame).unwrap();
        let p = obs.detected().expect("detected");
        let e = PoseError::between(
            &p.camera_from_world,
            frame.camera_from_world_truth.as_ref().unwrap(),
        );
        let dt = p.camera_from_world.translation.vector
            - frame.camera_from_world_truth.unwrap().translation.vector;
        println!(
            "d {d} off {off}: pos {:.3} mm rot {:.3} deg reproj {:.3} dt {:?}",
            e.position_m * 1e3,
            e.rotation_rad.to_degrees(),
            p.reprojection_error_px,
            dt * 1e3
        );
        // It only printed. Within 10× of what the tracker achieves on these noiseless
        // frames (measured: at most 0.054 mm and 0.015 deg, at 0.8 m and 0.8 m off-axis).
        assert!(e.position_m < 0.55e-3, "d {d} off {off}: {e:?}");
        assert!(e.rotation_rad.to_degrees() < 0.15, "d {d} off {off}: {e:?}");
    }
}

fn tracker_without_smoothing(intr: &CameraIntrinsics) -> MarkerTracker {
    MarkerTracker::new(
        TrackerConfig {
            smoothing: None,
            ..TrackerConfig::default()
        },
        intr,
    )
    .unwrap()
}

/// Acceptance 1 on 200 frames (the command `track --synthetic --frames 1000` prints the full
/// run): 0.3–0.8 m, up to 50° off-axis, blur and noise.
#[test]
fn hand_held_synthetic_camera_meets_the_accuracy_targets() {
    let intr = synthetic_intrinsics();
    let cfg = SyntheticConfig {
        path: CameraPath::hand_held(11),
        // 0.5 s apart, so that 200 frames cover the whole 0.3–0.8 m, 0–50° envelope.
        fps: 2.0,
        frames: Some(200),
        ..SyntheticConfig::default()
    };
    let mut cam = SyntheticCamera::new(&intr, cfg, 11).unwrap();
    let mut tracker = tracker_without_smoothing(&intr);
    let mut stats = AccuracyStats::default();
    let (mut d_min, mut d_max, mut off_max) = (f64::MAX, 0.0f64, 0.0f64);
    while let Some(frame) = cam.next_frame().unwrap() {
        let truth = frame.camera_from_world_truth.unwrap();
        let eye = truth.inverse() * nalgebra::Point3::origin();
        d_min = d_min.min(eye.coords.norm());
        d_max = d_max.max(eye.coords.norm());
        off_max = off_max.max((eye.z / eye.coords.norm()).acos().to_degrees());
        let obs = tracker.process(&frame).unwrap();
        stats.add(obs.detected().map(|p| &p.camera_from_world), &truth);
    }
    let s = stats.summary().unwrap();
    println!("{s}; distance {d_min:.2}..{d_max:.2} m, off-axis up to {off_max:.0} deg");
    assert!(
        d_min < 0.35 && d_max > 0.75 && off_max > 45.0,
        "envelope not covered"
    );
    assert!(s.detection_rate > 0.99, "{s}");
    assert!(s.median_position_m < 2e-3, "{s}");
    assert!(s.median_rotation_rad.to_degrees() < 0.5, "{s}");
}

/// A sheet with no marker on it: the desk and a blank paper.
fn blank_card() -> CardTexture {
    let sheet = opencv::core::Mat::new_rows_cols_with_default(
        300,
        300,
        opencv::core::CV_8UC3,
        opencv::core::Scalar::all(235.0),
    )
    .unwrap();
    CardTexture {
        image: sheet,
        metres_per_px: 0.0005,
        top_left_in_world: nalgebra::Vector2::new(-0.075, 0.075),
    }
}

#[test]
fn lost_marker_is_held_then_reported_not_detected_never_invented() {
    let intr = synthetic_intrinsics();
    let path = CameraPath::looking_at_marker(0.5, 0.4, 1.0);
    let base = SyntheticConfig {
        path: path.clone(),
        frames: Some(1),
        ..SyntheticConfig::default()
    };
    let mut with_marker = SyntheticCamera::new(&intr, base.clone(), 2).unwrap();
    let mut without = SyntheticCamera::new(
        &intr,
        SyntheticConfig {
            card: Some(blank_card()),
            ..base
        },
        2,
    )
    .unwrap();
    let mut tracker = MarkerTracker::new(
        TrackerConfig {
            hold_secs: 0.2,
            ..TrackerConfig::default()
        },
        &intr,
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let frame = |seq: u64, image, dt: f64| Frame {
        t: t0 + std::time::Duration::from_secs_f64(dt),
        seq,
        image,
        camera_from_world_truth: None,
    };
    let seen = tracker
        .process(&frame(0, with_marker.render_at(0.0).unwrap().0, 0.0))
        .unwrap();
    assert!(seen.detected().is_some());
    let held = tracker
        .process(&frame(1, without.render_at(0.0).unwrap().0, 0.1))
        .unwrap();
    match held {
        MarkerObservation::Held { pose, age_secs } => {
            assert_eq!(pose.frame_seq, 0);
            assert!((age_secs - 0.1).abs() < 1e-9);
        }
        other => panic!("expected a held pose, got {other:?}"),
    }
    let lost = tracker
        .process(&frame(2, without.render_at(0.0).unwrap().0, 0.5))
        .unwrap();
    assert!(
        matches!(lost, MarkerObservation::NotDetected { frame_seq: 2, .. }),
        "{lost:?}"
    );
}

/// Acceptance 3: 20 synthetic chessboard views recover fx, fy, cx, cy within 1 %.
#[test]
fn calibration_from_twenty_synthetic_board_views_recovers_the_intrinsics() {
    use ar_calibration::camera_calibration::{
        calibrate, detect_board, BoardSpec, CalibrationOptions,
    };
    let truth = synthetic_intrinsics();
    let board = chessboard_sheet((10, 7), 60, &[]).unwrap();
    let cfg = SyntheticConfig {
        card: Some(board.card(0.025)),
        ..SyntheticConfig::default()
    };
    let mut cam = SyntheticCamera::new(&truth, cfg, 5).unwrap();
    let spec = BoardSpec::DEFAULT;
    let mut views = Vec::new();
    for i in 0..20 {
        let f = i as f64;
        let d = 0.45 + 0.15 * (f * 0.7).sin().abs();
        let off_axis = (5.0 + 40.0 * ((f * 1.3).sin() * 0.5 + 0.5)).to_radians();
        let azimuth = f * 2.4;
        let roll = (20.0 * (f * 0.9).cos()).to_radians();
        let aim = nalgebra::Point3::new(0.02 * (f * 1.7).sin(), 0.02 * (f * 2.3).cos(), 0.0);
        let pose = look_at(d, off_axis, azimuth, roll, aim);
        let img = cam.render_pose(&pose).unwrap();
        if let Some(v) = detect_board(&img, &spec, &format!("view {i}")).unwrap() {
            views.push(v);
        }
    }
    assert_eq!(views.len(), 20, "the board must be found in every view");
    let cal = calibrate(&views, &spec, (640, 480), &CalibrationOptions::default()).unwrap();
    let got = &cal.intrinsics;
    println!(
        "fx {:.3} fy {:.3} cx {:.3} cy {:.3} dist {:?} rms {:?}",
        got.fx, got.fy, got.cx, got.cy, got.dist, got.rms_px
    );
    for (name, g, t) in [
        ("fx", got.fx, truth.fx),
        ("fy", got.fy, truth.fy),
        ("cx", got.cx, truth.cx),
        ("cy", got.cy, truth.cy),
    ] {
        assert!(((g - t) / t).abs() < 0.01, "{name}: {g} vs {t}");
    }
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs the binary and insists it succeeded, showing its stderr when it did not.
fn cli_ok(args: &[&str]) -> std::process::Output {
    let out = cli(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn camera_file() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/cameras/synthetic_640x480.toml")
        .to_string_lossy()
        .into_owned()
}

/// Acceptance 2 on 60 frames: synthetic frames written to MJPG by `--record`, read back by
/// `track --video`, compared with the recorded truth.
#[test]
fn accuracy_holds_through_an_mjpg_video_file() {
    use ar_multibody::tracking::pose_csv::read_truth;
    let dir = tempfile::tempdir().unwrap();
    let avi = dir.path().join("walk.avi");
    cli_ok(&[
        "track",
        "--synthetic",
        "--camera",
        &camera_file(),
        "--frames",
        "60",
        "--fps",
        "2",
        "--seed",
        "4",
        "--record",
        avi.to_str().unwrap(),
    ]);
    let csv = dir.path().join("video.csv");
    let truth_path = dir.path().join("walk.truth.csv");
    cli_ok(&[
        "track",
        "--video",
        avi.to_str().unwrap(),
        "--camera",
        &camera_file(),
        "--truth",
        truth_path.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let truth = read_truth(&truth_path).unwrap();
    assert_eq!(truth.len(), 60);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut stats = AccuracyStats::default();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let frame: u64 = f[0].parse().unwrap();
        let est = (f[2] == "1").then(|| {
            let v: Vec<f64> = f[3..9].iter().map(|s| s.parse().unwrap()).collect();
            nalgebra::Isometry3::new(
                nalgebra::Vector3::new(v[0], v[1], v[2]),
                nalgebra::Vector3::new(v[3], v[4], v[5]),
            )
        });
        stats.add(est.as_ref(), &truth[&frame]);
    }
    let s = stats.summary().unwrap();
    println!("through MJPG: {s}");
    assert_eq!(s.frames, 60);
    assert!(s.detection_rate > 0.99, "{s}");
    assert!(s.median_position_m < 2e-3, "{s}");
    assert!(s.median_rotation_rad.to_degrees() < 0.5, "{s}");
}

#[test]
fn video_without_the_marker_is_not_detected_in_any_frame() {
    use ar_drivers::camera::VideoRecorder;
    let intr = synthetic_intrinsics();
    let cfg = SyntheticConfig {
        card: Some(blank_card()),
        frames: Some(15),
        ..SyntheticConfig::default()
    };
    let mut cam = SyntheticCamera::new(&intr, cfg, 9).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avi = dir.path().join("desk.avi");
    let mut rec = VideoRecorder::create(&avi, 640, 480, 30.0).unwrap();
    while let Some(f) = cam.next_frame().unwrap() {
        rec.write(&f.image).unwrap();
    }
    rec.finish().unwrap();
    let csv = dir.path().join("desk.csv");
    let out = cli_ok(&[
        "track",
        "--video",
        avi.to_str().unwrap(),
        "--camera",
        &camera_file(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("marker not detected in any frame"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 15);
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f[2], "0", "{l}");
        assert!(f[3..10].iter().all(|s| s.is_empty()), "pose invented: {l}");
    }
}

/// A damaged video (here cut at 40 %) used to end quietly at the damage with exit status 0, as
/// if it were the whole recording. Now `track` keeps the rows it has, prints its summary and
/// fails naming the frames decoded and the frames the header announces.
#[test]
fn a_truncated_video_fails_naming_the_frames_it_lost() {
    use ar_drivers::camera::VideoRecorder;
    let intr = synthetic_intrinsics();
    let cfg = SyntheticConfig {
        frames: Some(60),
        ..SyntheticConfig::default()
    };
    let mut cam = SyntheticCamera::new(&intr, cfg, 4).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let avi = dir.path().join("whole.avi");
    let mut rec = VideoRecorder::create(&avi, 640, 480, 30.0).unwrap();
    while let Some(f) = cam.next_frame().unwrap() {
        rec.write(&f.image).unwrap();
    }
    rec.finish().unwrap();
    let bytes = std::fs::read(&avi).unwrap();
    let cut = dir.path().join("cut.avi");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 5]).unwrap();
    let csv = dir.path().join("cut.csv");
    let out = cli(&[
        "track",
        "--video",
        cut.to_str().unwrap(),
        "--camera",
        &camera_file(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert!((1..60).contains(&rows), "{rows} rows");
    assert!(
        err.contains(&format!("decoding stopped after {rows} of the 60 frames"))
            && err.contains("cut.avi"),
        "{err}"
    );
    // The whole file still ends cleanly.
    cli_ok(&[
        "track",
        "--video",
        avi.to_str().unwrap(),
        "--camera",
        &camera_file(),
    ]);
}

#[test]
fn bad_inputs_get_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    // A missing device.
    let out = cli(&[
        "track",
        "--device",
        "/dev/video97",
        "--camera",
        &camera_file(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("camera device /dev/video97 could not be opened"),
        "{err}"
    );
    // A file that is not a video.
    let fake = dir.path().join("notes.avi");
    std::fs::write(&fake, "this is not a video").unwrap();
    let out = cli(&[
        "track",
        "--video",
        fake.to_str().unwrap(),
        "--camera",
        &camera_file(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("video file") && err.contains("notes.avi"),
        "{err}"
    );
    // A video that does not exist.
    let out = cli(&[
        "track",
        "--video",
        "/nonexistent/v.avi",
        "--camera",
        &camera_file(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent/v.avi") && err.contains("No such file"),
        "{err}"
    );
    // A corrupt camera file: the message names the file, the line and the field.
    let cam = dir.path().join("camera.toml");
    std::fs::write(
        &cam,
        "image_width = 640\nimage_height = 480\nfx = \"six hundred\"\n",
    )
    .unwrap();
    let out = cli(&["track", "--synthetic", "--camera", cam.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("camera.toml") && err.contains("line 3") && err.contains("fx"),
        "{err}"
    );
}

#[test]
fn grid_board_is_tracked_with_its_centre_as_world_origin() {
    use ar_drivers::camera::grid_board_card;
    use ar_multibody::tracking::GridBoardConfig;
    let intr = synthetic_intrinsics();
    // 3 x 2 markers of 40 mm, 10 mm apart, ids 0..5.
    let card = grid_board_card(0, (3, 2), 400, 100, 0, 0.04).unwrap();
    let board = GridBoardConfig {
        markers_x: 3,
        markers_y: 2,
        marker_length_m: 0.04,
        separation_m: 0.01,
        first_id: 0,
    };
    let mut tracker = MarkerTracker::new(
        TrackerConfig {
            board: Some(board),
            smoothing: None,
            ..TrackerConfig::default()
        },
        &intr,
    )
    .unwrap();
    for (i, (d, off)) in [(0.4, 0.2), (0.6, 0.7)].into_iter().enumerate() {
        let cfg = SyntheticConfig {
            path: CameraPath::looking_at_marker(d, off, 0.8 + i as f64),
            frames: Some(1),
            card: Some(card.clone()),
            ..SyntheticConfig::default()
        };
        let mut cam = SyntheticCamera::new(&intr, cfg, 6).unwrap();
        let frame = cam.next_frame().unwrap().unwrap();
        let obs = tracker.process(&frame).unwrap();
        let p = obs.detected().expect("board detected");
        assert_eq!(p.corners_used, 24, "all six markers used");
        let e = PoseError::between(
            &p.camera_from_world,
            &frame.camera_from_world_truth.unwrap(),
        );
        println!(
            "board at {d} m: {:.3} mm, {:.3} deg",
            e.position_m * 1e3,
            e.rotation_rad.to_degrees()
        );
        assert!(e.position_m < 0.5e-3 && e.rotation_rad.to_degrees() < 0.1);
    }
}
