//! `calibrate tip`: pivot calibration of the stylus tip with the simulated arm and user. Hidden
//! tips 40–120 mm from the built-in tip, in several directions, are recovered within the arm's
//! 0.2 mm and the pivot within 0.3 mm; a motion under 15° is refused with the reason; a better
//! tip file at --out is kept unless --force; and `arm probe --tip` and the rig then report the
//! true tip's path.

use ar_drivers::arm::kinematics::{angles_to_counts, counts_to_angles, tip_in_arm};
use ar_drivers::arm::sim::{pivot_script, PivotMotion, REST_POSE_RAD};
use ar_drivers::arm::{
    DhParams, MaxValues, RawDhParams, SimArmConfig, SimArmControl, SimulatedArm, TipCorrection,
};
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::display::frame_control::{FrameControl, FrameDecision, ShownView};
use ar_multibody::rig::{ArmLink, DisplayLoopConfig, SimSnapshot};
use kiss3d::event::WindowEvent;
use nalgebra::{Point3, Vector3};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

#[path = "support/arm_rig.rs"]
mod arm_rig;
use arm_rig::{start_ten_pendula, ArmRig};

fn calibrate_tip(out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["calibrate", "tip", "--simulate-user", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .expect("calibrate tip")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The number after `label` in `line` (e.g. "off by 0.012 mm" → 0.012).
fn number_after(line: &str, label: &str) -> f64 {
    let rest = &line[line
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} in {line:?}"))
        + label.len()..];
    rest.split_whitespace()
        .next()
        .and_then(|w| w.trim_end_matches(',').parse().ok())
        .unwrap_or_else(|| panic!("a number after {label:?} in {line:?}"))
}

fn arm_dh() -> DhParams {
    DhParams::from_raw(&RawDhParams::microscribe_3dx())
}

#[test]
fn hidden_tips_in_several_directions_are_recovered_within_the_arm_precision() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 40 to 120 mm from the built-in tip: along the stylus, backwards, sideways, diagonally.
    for (k, mm) in ["0,0,120", "0,0,-100", "80,-20,0", "-60,60,-40", "0,-40,0"]
        .iter()
        .enumerate()
    {
        let out = dir.path().join(format!("tip{k}.toml"));
        let run = calibrate_tip(&out, &["--true-tip-mm", mm]);
        let stdout = text(&run.stdout);
        assert!(
            run.status.success(),
            "{mm}: {stdout}\n{}",
            text(&run.stderr)
        );
        let line = stdout
            .lines()
            .find(|l| l.starts_with("against the hidden tip"))
            .unwrap_or_else(|| panic!("{mm}: {stdout}"));
        let tip_off_mm = number_after(line, "the tip is off by");
        let pivot_off_mm = number_after(line, "the pivot by");
        assert!(tip_off_mm <= 0.2, "{mm}: {line}");
        assert!(pivot_off_mm <= 0.3, "{mm}: {line}");
        // The residual is reported next to the arm's precision.
        assert!(
            stdout.contains("RMS residual") && stdout.contains("the arm's 0.2 mm precision"),
            "{stdout}"
        );
        // The file holds the tip: read back, it puts the tip where the hidden one is.
        let truth: Vec<f64> = mm
            .split(',')
            .map(|v| v.parse::<f64>().unwrap() * 1e-3)
            .collect();
        let truth = Vector3::new(truth[0], truth[1], truth[2]);
        let file = TipCorrection::load(&out).expect("the tip file loads");
        let error = (file.tip_in_stylus(&arm_dh()) - truth).norm();
        assert!(error <= 2e-4, "{mm}: {error} m off in {}", out.display());
        assert!(file.rms_mm.is_some_and(|r| r < 1.0), "{file:?}");
        assert!(file.span_deg.is_some_and(|s| s >= 15.0), "{file:?}");
    }
}

#[test]
fn a_motion_under_fifteen_degrees_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("tip.toml");
    let run = calibrate_tip(&out, &["--simulate-swing-deg", "8"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tip calibration refused; nothing written")
            && stderr.contains("from its mean orientation, under the 15° needed"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_better_or_hand_made_tip_file_is_kept_unless_forced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("tip.toml");
    let aside = dir.path().join("tip.new.toml");
    let better = "name = \"pivot\"\nd5_delta_m = 0.09\nrms_mm = 0.001\n";
    std::fs::write(&out, better).unwrap();
    let run = calibrate_tip(&out, &[]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kept, it holds a better calibration (RMS 0.001 mm)")
            && stderr.contains("tip.new.toml instead; --force replaces the file"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), better, "unchanged");
    assert!(
        TipCorrection::load(&aside).is_ok(),
        "the new fit is beside it"
    );

    // A ball tip written by hand has no RMS to compare: kept too.
    let ball = "name = \"ball\"\nd5_delta_m = 0.0061468\n";
    std::fs::write(&out, ball).unwrap();
    let run = calibrate_tip(&out, &[]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("kept, it is a tip correction made by hand (no RMS to compare)"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), ball, "unchanged");

    let run = calibrate_tip(&out, &["--force"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("which was a tip correction made by hand (--force)"),
        "{}",
        text(&run.stderr)
    );
    assert!(TipCorrection::load(&out).unwrap().rms_mm.is_some());
}

#[test]
fn arm_probe_with_the_calibrated_tip_follows_the_true_tip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tip_file = dir.path().join("tip.toml");
    let true_tip = Vector3::new(0.03, -0.04, 0.09);
    let run = calibrate_tip(&tip_file, &["--true-tip-mm", "30,-40,90"]);
    assert!(run.status.success(), "{}", text(&run.stderr));

    // An arm whose stylus (with that tip) swings about its built-in tip, looping: the true
    // tip draws a path.
    let dh = arm_dh();
    let (mut script, _) = pivot_script(
        &dh,
        &REST_POSE_RAD,
        &PivotMotion {
            tip_in_stylus: Vector3::zeros(),
            swing_rad: 0.5,
            duration_s: 2.0,
        },
    )
    .expect("a swing about the built-in tip");
    script.looping = true;
    let link = dir.path().join("arm");
    let _sim = SimulatedArm::spawn(SimArmConfig {
        link: Some(link.clone()),
        motion: Some(script),
        ..SimArmConfig::default()
    })
    .expect("simulated arm");
    let csv = dir.path().join("rows.csv");
    let probe = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["arm", "probe", "--count", "1500", "--port"])
        .arg(&link)
        .arg("--tip")
        .arg(&tip_file)
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("arm probe");
    assert!(probe.status.success(), "{}", text(&probe.stderr));

    // Each row's tip against the true tip of that row's joint angles.
    let real = dh.with_tip(&TipCorrection::from_tip_in_stylus(&dh, &true_tip).unwrap());
    let rows = std::fs::read_to_string(&csv).unwrap();
    let (mut worst_m, mut lo, mut hi) =
        (0.0f64, Vector3::repeat(f64::MAX), Vector3::repeat(f64::MIN));
    let mut n = 0;
    for line in rows.lines().skip(1) {
        let v: Vec<f64> = line.split(',').map(|f| f.parse().unwrap()).collect();
        let q = [v[1], v[2], v[3], v[4], v[5], 0.0];
        let truth = ar_drivers::arm::kinematics::tip_in_arm(&real, &q);
        worst_m = worst_m.max((Point3::new(v[6], v[7], v[8]) - truth).norm());
        lo = lo.inf(&truth.coords);
        hi = hi.sup(&truth.coords);
        n += 1;
    }
    assert_eq!(n, 1500);
    assert!((hi - lo).norm() > 0.02, "the true tip moves: {:?}", hi - lo);
    assert!(worst_m <= 2e-4, "probe's tip {worst_m} m from the true tip");
}

#[test]
fn a_bad_tip_file_is_named_before_anything_connects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("tip.toml");
    std::fs::write(&bad, "d5_delta_m = 2.0\n").unwrap();
    for args in [
        vec!["arm", "probe", "--port", "/nonexistent/arm", "--tip"],
        vec![
            "calibrate",
            "tracker",
            "--arm",
            "/nonexistent/arm",
            "--out",
            "/nonexistent/t.toml",
            "--tip",
        ],
    ] {
        let run = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
            .args(&args)
            .arg(&bad)
            .output()
            .expect("run");
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("tip corrections {}", bad.display()))
                && stderr.contains("d5_delta_m = 2 is not a plausible correction"),
            "{args:?}: {stderr}"
        );
    }
}

/// Poses of the rig test: the rest pose and two with the wrist turned.
const RIG_POSES: [[f64; 6]; 3] = [
    REST_POSE_RAD,
    [0.2, 0.6, -1.0, 0.4, 0.6, 0.0],
    [-0.2, 0.8, -1.2, -0.3, 1.1, 0.0],
];

/// Holds the simulated arm still at each of [`RIG_POSES`] in turn and, once the rig's tip has
/// stopped moving, notes the tip and the drawn arm's end (world frame).
struct PoseWalker {
    control: SimArmControl,
    pose: Option<usize>,
    last_tip: Option<Point3<f64>>,
    still_frames: u32,
    seen: Vec<(Point3<f64>, Point3<f64>)>,
}

impl FrameControl for PoseWalker {
    fn before_frame(
        &mut self,
        _events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        _shown: &ShownView<'_>,
        _config: &mut DisplayLoopConfig,
    ) -> FrameDecision {
        let streaming = snapshot.is_some_and(|s| s.arm_status == Some(ArmLink::Streaming));
        let tip = snapshot.and_then(|s| s.stylus_tip_in_world.zip(s.arm_linkage_in_world));
        match (self.pose, tip) {
            (None, _) if streaming => {
                self.pose = Some(0);
                self.control.set_joint_angles(RIG_POSES[0]);
            }
            (Some(k), Some((tip, linkage))) => {
                let still = self.last_tip.is_some_and(|t| (t - tip).norm() < 1e-12);
                self.still_frames = if still { self.still_frames + 1 } else { 0 };
                self.last_tip = Some(tip);
                if self.still_frames >= 5 && self.seen.len() == k {
                    self.seen.push((tip, linkage[linkage.len() - 1]));
                    if k + 1 < RIG_POSES.len() {
                        self.pose = Some(k + 1);
                        self.control.set_joint_angles(RIG_POSES[k + 1]);
                        self.still_frames = 0;
                    }
                }
            }
            _ => {}
        }
        FrameDecision {
            hud_lines: Vec::new(),
            quit: self.seen.len() == RIG_POSES.len(),
        }
    }
}

#[test]
fn the_rig_with_the_calibrated_tip_puts_the_stylus_on_the_true_tip() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tip_file = dir.path().join("tip.toml");
    let true_tip = Vector3::new(-0.06, 0.06, -0.04);
    let run = calibrate_tip(&tip_file, &["--true-tip-mm", "-60,60,-40"]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let tip = TipCorrection::load(&tip_file).expect("the calibrated tip");

    let ArmRig {
        arm,
        rig,
        world_from_arm,
        intrinsics,
        ..
    } = start_ten_pendula(tip);
    let mut walker = PoseWalker {
        control: arm.control(),
        pose: None,
        last_tip: None,
        still_frames: 0,
        seen: Vec::new(),
    };
    let mut compositor = Compositor::headless(CompositorConfig::monitor(intrinsics)).unwrap();
    rig.run_controlled(
        &mut compositor,
        None,
        &DisplayLoopConfig {
            max_duration: Some(Duration::from_secs(90)),
            ..DisplayLoopConfig::default()
        },
        Some(&mut walker),
    )
    .unwrap();
    assert_eq!(walker.seen.len(), RIG_POSES.len(), "every pose was seen");

    // The true tip at each pose: the arm's encoder counts, the stylus with the hidden tip.
    let dh = arm_dh();
    let real = dh.with_tip(&TipCorrection::from_tip_in_stylus(&dh, &true_tip).unwrap());
    let max = MaxValues::microscribe_3dx().encoder_max;
    for (q, (tip, drawn_end)) in RIG_POSES.iter().zip(&walker.seen) {
        let truth =
            world_from_arm * tip_in_arm(&real, &counts_to_angles(&angles_to_counts(q, &max), &max));
        assert!(
            (tip - truth).norm() <= 2e-4,
            "{q:?}: {} m off",
            (tip - truth).norm()
        );
        assert!(
            (drawn_end - tip).norm() < 1e-9,
            "the drawn arm ends on the tip"
        );
    }
}
