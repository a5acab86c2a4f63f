//! Issue 44, acceptance 3: the mouse on the live rig. `run` with a config that has no `[arm]`
//! and a camera without hardware (an image folder of the synthetic desk with the printed
//! marker, seen from a still camera: the recording played as the camera) in a real kiss3d
//! window on a virtual X server, driven by xdotool: a left drag on a pendulum moves it through
//! the stylus spring, picked through the registered camera (the marker's tracked pose); after
//! the window is resized to 1024 × 768 a drag on the other pendulum, at the pixel where the
//! stretched view shows it, moves that one. The session recorded with `--record` shows both
//! drags and replays bit for bit. Skipped, with a line saying so, without Xvfb or xdotool.

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::rig::devices::view_camera::{ViewCamera, ViewHandle};
use ar_multibody::rig::devices::CameraTracker;
use ar_multibody::rig::method::Method;
use ar_multibody::rig::RigSimulation;
use ar_multibody::sandbox::session::initial_view;
use nalgebra::{Isometry3, Point3};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

#[path = "support/xvfb.rs"]
mod xvfb;
use xvfb::{figure_before, stdout_lines, wait_for, Xvfb};

const BIN: &str = env!("CARGO_BIN_EXE_ar-multibody");

/// Two pendula 100 mm long hanging side by side from ball joints, 120 mm apart, above the
/// marker: dragging one leaves the other at rest.
const TWO_PENDULA: &str = r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]

[solver]
dt_secs = 0.01

[[body]]
name = "left"
mass_kg = 0.1
inertia_kg_m2 = [84.0e-6, 84.0e-6, 1.8e-6]
position_m = [-0.06, 0.0, 0.25]
shape = { kind = "capsule", radius_m = 0.006, length_m = 0.088 }

[[body]]
name = "right"
mass_kg = 0.1
inertia_kg_m2 = [84.0e-6, 84.0e-6, 1.8e-6]
position_m = [0.06, 0.0, 0.25]
shape = { kind = "capsule", radius_m = 0.006, length_m = 0.088 }

[[joint]]
name = "left_pivot"
kind = "ball"
body1 = "ground"
body2 = "left"
anchor_in_world_m = [-0.06, 0.0, 0.3]

[[joint]]
name = "right_pivot"
kind = "ball"
body1 = "ground"
body2 = "right"
anchor_in_world_m = [0.06, 0.0, 0.3]
"#;

/// The camera: 640 × 480, f = 600 px, no distortion (the folder's frames are rendered without).
const CAMERA: &str = "image_width = 640\nimage_height = 480\nfx = 600.0\nfy = 600.0\ncx = 319.5\ncy = 239.5\ndist = [0.0, 0.0, 0.0, 0.0, 0.0]\n";

/// Writes the scene, the camera file, a folder of frames of the desk seen from the sandbox's
/// first view of the scene, and a rig config without an arm into `dir`; the camera's pose.
fn lab(dir: &Path) -> (CameraIntrinsics, Isometry3<f64>) {
    std::fs::write(dir.join("two_pendula.toml"), TWO_PENDULA).unwrap();
    std::fs::write(dir.join("camera.toml"), CAMERA).unwrap();
    let intrinsics = CameraIntrinsics::load(&dir.join("camera.toml")).unwrap();
    let sim = RigSimulation::load(&dir.join("two_pendula.toml"), Method::Default).unwrap();
    let camera_from_world = initial_view(&sim).camera_from_world();
    let mut desk = ViewCamera::new(&intrinsics, ViewHandle::new(camera_from_world), 25.0).unwrap();
    let frame = desk.next_update().unwrap().frame;
    let image = image::RgbImage::from_raw(frame.width, frame.height, frame.rgb.clone()).unwrap();
    std::fs::create_dir(dir.join("desk")).unwrap();
    for k in 0..10 {
        image
            .save(dir.join("desk").join(format!("frame_{k:03}.png")))
            .unwrap();
    }
    let config = "scene = \"two_pendula.toml\"\n\n[camera]\ndevice = \"desk\"\ncamera_file = \"camera.toml\"\nmarker_length_m = 0.08\n\n[mic]\ndevice = \"none\"\n\n[display]\nmode = \"monitor\"\n";
    std::fs::write(dir.join("rig.toml"), config).unwrap();
    (intrinsics, camera_from_world)
}

/// The values of `column` of a recorded `solver.csv`.
fn column(solver_csv: &str, name: &str) -> Vec<f64> {
    let mut rows = solver_csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let k = header.iter().position(|h| *h == name).unwrap();
    rows.map(|r| r.split(',').nth(k).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn a_mouse_drag_moves_a_pendulum_on_the_live_rig_also_in_a_resized_window() {
    let Some(x) = Xvfb::start_or_skip(
        "a_mouse_drag_moves_a_pendulum_on_the_live_rig_also_in_a_resized_window",
        "1280x1024x24",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (intrinsics, camera_from_world) = lab(dir.path());
    // A point 30 mm below each pendulum's centre, as the view shows it (pixels of 640 × 480).
    let px = |x_m: f64| {
        intrinsics
            .project(&(camera_from_world * Point3::new(x_m, 0.0, 0.22)))
            .unwrap()
    };
    let (left_px, right_px) = (px(-0.06), px(0.06));
    let record = dir.path().join("session");
    let mut child = x.spawn(
        Command::new(BIN)
            .args(["run", "--config"])
            .arg(dir.path().join("rig.toml"))
            .args(["--duration-s", "600", "--record"])
            .arg(&record),
    );
    let (lines, stderr) = stdout_lines(&mut child, "run");
    wait_for(&lines, "view registered (marker seen)");
    let window = x.window("^ar-multibody$");
    // A left drag from (x, y) by (dx, dy) window pixels, in steps the display loop sees one
    // by one, held 2 s at the end; the line that says where the grabbed point was let go.
    let drag = |name: &str, (x_px, y_px): (f64, f64), (dx, dy): (f64, f64)| {
        let at = |f: f64| x.move_to(&window, x_px + f * dx, y_px + f * dy);
        at(0.0);
        std::thread::sleep(Duration::from_millis(500));
        x.xdotool(&["mousedown", "1"]);
        let grabbed = wait_for(&lines, "grabbed ");
        assert!(grabbed.contains(&format!("grabbed {name} at")), "{grabbed}");
        for k in 1..=8 {
            at(f64::from(k) / 8.0);
            std::thread::sleep(Duration::from_millis(400));
        }
        std::thread::sleep(Duration::from_secs(2));
        x.xdotool(&["mouseup", "1"]);
        wait_for(&lines, &format!("released {name}"))
    };
    // 80 px left at ~0.7 m with f = 600 px: the target moves ~9 cm; the point 80 mm below
    // the pivot swings out toward it.
    let released = drag("left", (left_px.x, left_px.y), (-80.0, -10.0));
    let moved_cm = figure_before(&released, "cm from where it was grabbed");
    assert!(moved_cm > 3.0, "{released}");

    x.xdotool(&["windowsize", &window, "1024", "768"]);
    wait_for(&lines, "window 1024×768 px");
    // The view is stretched by 1.6: pixel edges scale, centre c goes to (c + ½)·1.6 − ½.
    let in_window = |c: f64| (c + 0.5) * 1.6 - 0.5;
    let released = drag(
        "right",
        (in_window(right_px.x), in_window(right_px.y)),
        (128.0, -16.0),
    );
    let moved_cm = figure_before(&released, "cm from where it was grabbed");
    assert!(moved_cm > 3.0, "{released}");
    // SIGTERM ends the run as its end would (summary, recording closed), exit 143.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let end = wait_for(&lines, "at the end: right's grabbed point");
    assert!(end.contains("mm from where it was grabbed"), "{end}");
    let status = child.wait().unwrap();
    let stderr = stderr.recv().unwrap_or_default();
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(stderr.contains("arm: none in the config"), "{stderr}");
    assert!(
        stderr.contains("mouse: a left drag grabs a body"),
        "{stderr}"
    );

    // The recording shows each pendulum dragged the way the mouse went (left, then right),
    // and replays bit for bit.
    let solver = std::fs::read_to_string(record.join("solver.csv")).unwrap();
    let left_x = column(&solver, "left_x_m");
    let right_x = column(&solver, "right_x_m");
    let least = left_x.iter().copied().fold(f64::INFINITY, f64::min);
    let most = right_x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(
        least < left_x[0] - 0.02,
        "left went at most to x = {least} m"
    );
    assert!(
        most > right_x[0] + 0.02,
        "right went at most to x = {most} m"
    );
    let replay = Command::new(BIN)
        .arg("replay")
        .arg(&record)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{said}");
    assert!(said.contains("bit for bit"), "{said}");
}
