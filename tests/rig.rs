//! The live rig end to end on simulated devices: the simulated arm on a pseudo-terminal read
//! by the real serial driver, moved by the scripted user; a stand-in camera with a fixed pose;
//! a small scene (one bob on a soft anchor spring) run by the solver;
//! the compositor headless. Checks clip / drag / release, tip tracking, latency, fatal-error
//! reporting, and that no worker thread is left behind.

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::arm::{ArmConfig, PortSpec, SimArmConfig, SimulatedArm};
use ar_dynamics::{Method, Scene, SceneSimulation};
use ar_multibody::compositor::frames::FrameWriter;
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::arm::DEFAULT_BUTTON_MASK;
use ar_multibody::rig::devices::scripted_user::{spawn_scripted_user, UserScript};
use ar_multibody::rig::{
    CameraTracker, CameraUpdate, DeviceError, DisplayLoopConfig, Rig, RigArm, RigDevices, RigError,
    RigSimulation, SolverConfig, StopFlag, StopReason, VideoFrame,
};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[path = "support/demo_run.rs"]
mod demo_run;

/// The bob's mass (kg) and its anchor spring's stiffness (N/m).
const BOB_MASS_KG: f64 = 0.05;
const BOB_ANCHOR_N_PER_M: f64 = 20.0;

/// Where the bob hangs at rest below its anchor: the spring is stretched by m g / k.
fn bob_rest(anchor_in_world: Point3<f64>) -> Point3<f64> {
    anchor_in_world - Vector3::new(0.0, 0.0, BOB_MASS_KG * 9.81 / BOB_ANCHOR_N_PER_M)
}

/// A bob of 50 g (a sphere 12 mm in radius) hanging at rest on a soft spring from an anchor
/// above it, its centre the grab point: a scene of the solver, driven by the rig.
fn bob(anchor_in_world: Point3<f64>) -> RigSimulation {
    let p = bob_rest(anchor_in_world);
    // The spring's fixed end 5 cm above the anchor, its rest length 5 cm: at rest it holds m g.
    let top = anchor_in_world + Vector3::new(0.0, 0.0, 0.05);
    let inertia = 0.4 * BOB_MASS_KG * 0.012 * 0.012;
    let text = format!(
        r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]

[[body]]
name = "bob"
mass_kg = {BOB_MASS_KG}
inertia_kg_m2 = [{inertia:e}, {inertia:e}, {inertia:e}]
position_m = [{px}, {py}, {pz}]
shape = {{ kind = "sphere", radius_m = 0.012 }}

[[spring]]
name = "anchor"
body1 = "ground"
body2 = "bob"
point1_in_world_m = [{tx}, {ty}, {tz}]
point2_in_world_m = [{px}, {py}, {pz}]
rest_length_m = 0.05
stiffness_n_per_m = {BOB_ANCHOR_N_PER_M}
damping_n_s_per_m = 0.02

[[grab]]
name = "bob"
body = "bob"
point_in_world_m = [{px}, {py}, {pz}]
"#,
        px = p.x,
        py = p.y,
        pz = p.z,
        tx = top.x,
        ty = top.y,
        tz = top.z,
    );
    let scene = Scene::parse(&text, "bob.toml").expect("the bob's scene");
    RigSimulation::new(SceneSimulation::build(&scene, Method::Default).expect("builds"))
}

/// A stand-in camera: a grey frame at 25 Hz seen from a fixed pose (the real synthetic camera
/// and tracker are exercised by the tracking tests).
struct FixedCamera {
    frame: Arc<VideoFrame>,
    camera_from_world: Isometry3<f64>,
    next: Instant,
    fail_after: Option<u32>,
    sent: u32,
}

impl FixedCamera {
    fn new(cam: &CameraIntrinsics, fail_after: Option<u32>) -> Self {
        let rot = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -2.2);
        Self {
            frame: Arc::new(VideoFrame {
                width: cam.image_width,
                height: cam.image_height,
                rgb: vec![90; (cam.image_width * cam.image_height * 3) as usize],
            }),
            camera_from_world: Isometry3::from_parts(Translation3::new(0.0, 0.05, 0.55), rot),
            next: Instant::now(),
            fail_after,
            sent: 0,
        }
    }
}

impl CameraTracker for FixedCamera {
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
        if self.fail_after.is_some_and(|n| self.sent >= n) {
            return Err(DeviceError::Fatal("camera unplugged (test)".into()));
        }
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
        }
        self.next += Duration::from_millis(40);
        self.sent += 1;
        Ok(CameraUpdate {
            captured_at: Instant::now(),
            frame: self.frame.clone(),
            camera_from_world: Some(self.camera_from_world),
        })
    }
}

/// The rig tests run one at a time: each is a real-time run, and on two cores parallel
/// software rendering would starve the solver thread they measure.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn small_camera() -> CameraIntrinsics {
    CameraIntrinsics::ideal(320, 240, 300.0)
}

fn thread_names() -> Vec<String> {
    let mut names = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for e in dir.flatten() {
            if let Ok(n) = std::fs::read_to_string(e.path().join("comm")) {
                names.push(n.trim().to_owned());
            }
        }
    }
    names
}

#[test]
fn scripted_user_clips_drags_and_releases_through_the_simulated_arm() {
    let _serial = serial();
    let anchor = Point3::new(0.0, 0.0, 0.25);
    let sim = bob(anchor);
    let grab = bob_rest(anchor);
    // The arm base sits so that the grab point is comfortably inside its reach.
    let world_from_arm = Isometry3::translation(grab.x - 0.25, grab.y, grab.z - 0.10);
    let arm = SimulatedArm::spawn(SimArmConfig::default()).expect("pty for the simulated arm");
    let arm_driver = RigArm::start(
        ArmConfig {
            port: PortSpec::Path(arm.port_path()),
            ..ArmConfig::default()
        },
        DEFAULT_BUTTON_MASK,
    )
    .unwrap();
    let stop = StopFlag::new();
    let script = UserScript::demo(grab, world_from_arm);
    let run_s = script.duration_s() + 1.5;
    let user = spawn_scripted_user(arm, script.clone(), stop.clone()).unwrap();
    let rig = Rig::start(
        RigDevices {
            camera: Box::new(FixedCamera::new(&small_camera(), None)),
            arm: Some(arm_driver),
            mic: None,
            simulation: sim,
        },
        SolverConfig {
            world_from_arm,
            ..SolverConfig::default()
        },
        stop.clone(),
    )
    .unwrap();
    let mut config = CompositorConfig::monitor(small_camera());
    config.show_hud = true;
    let mut compositor = Compositor::headless(config).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut frames = FrameWriter::new(dir.path()).unwrap();
    let summary = rig
        .run(
            &mut compositor,
            Some(&mut frames),
            &DisplayLoopConfig {
                max_duration: Some(Duration::from_secs_f64(run_s)),
                ..DisplayLoopConfig::default()
            },
        )
        .unwrap();
    user.join().unwrap().unwrap();

    let s = &summary.solver;
    let clip_t = s
        .events
        .iter()
        .find(|(_, m)| m.starts_with("clipped"))
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("never clipped; events {:?}", s.events));
    let release_t = s
        .events
        .iter()
        .find(|(_, m)| m == "released")
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("never released; events {:?}", s.events));
    assert!(
        release_t > clip_t + 1.5,
        "clip {clip_t} s, release {release_t} s"
    );
    // While clipped (after 0.3 s to settle), the grabbed point follows the tip within 5 mm.
    let mut worst_m: f64 = 0.0;
    let mut dragged_m: f64 = 0.0;
    let start = s
        .trace
        .iter()
        .find(|r| r.clipped)
        .and_then(|r| r.grab_point_in_world);
    for r in s
        .trace
        .iter()
        .filter(|r| r.clipped && r.sim_time_s > clip_t + 0.3)
    {
        let (tip, p) = (r.tip_in_world.unwrap(), r.grab_point_in_world.unwrap());
        worst_m = worst_m.max((tip - p).norm());
        if let Some(p0) = start {
            dragged_m = dragged_m.max((p - p0).norm());
        }
    }
    eprintln!("clipped at {clip_t:.2} s, released at {release_t:.2} s, worst tip error {:.2} mm, dragged {:.1} cm", worst_m * 1e3, dragged_m * 1e2);
    assert!(
        worst_m < 0.005,
        "tip error {:.2} mm while clipped",
        worst_m * 1e3
    );
    assert!(dragged_m > 0.09, "dragged only {:.1} cm", dragged_m * 1e2);
    // After the release the bob swings freely: it moves back towards its rest point.
    let after: Vec<_> = s
        .trace
        .iter()
        .filter(|r| !r.clipped && r.sim_time_s > release_t)
        .filter_map(|r| r.grab_point_in_world)
        .collect();
    assert!(after.len() > 50);
    let moved = (after[after.len() - 1] - after[0]).norm();
    assert!(
        moved > 0.02,
        "bob moved only {:.1} mm after release",
        moved * 1e3
    );
    // Real time, latency, frames.
    assert!(
        s.real_time_factor > 0.9,
        "real-time factor {}",
        s.real_time_factor
    );
    let d = &summary.display;
    eprintln!(
        "latency {}; render {}; frames {}",
        d.latency.describe(),
        d.render.describe(),
        d.frames
    );
    assert!(d.latency.count() > 10);
    assert_eq!(d.stop_reason, StopReason::Done);
    assert_eq!(frames.count(), d.frames);
    assert!(frames.path_of(0).exists());
    // No worker left behind.
    let names = thread_names();
    for w in ["camera", "arm", "solver", "user"] {
        assert!(
            !names.iter().any(|n| n == w),
            "thread {w} still running: {names:?}"
        );
    }
}

#[test]
fn a_fatal_camera_error_stops_the_rig_and_reaches_the_user() {
    let _serial = serial();
    let stop = StopFlag::new();
    // No arm: the solver thread has no stylus channel to read.
    let rig = Rig::start(
        RigDevices {
            camera: Box::new(FixedCamera::new(&small_camera(), Some(5))),
            arm: None,
            mic: None,
            simulation: bob(Point3::new(0.0, 0.0, 0.2)),
        },
        SolverConfig::default(),
        stop.clone(),
    )
    .unwrap();
    let mut compositor = Compositor::headless(CompositorConfig::monitor(small_camera())).unwrap();
    let started = Instant::now();
    let err = rig
        .run(
            &mut compositor,
            None,
            &DisplayLoopConfig {
                max_duration: Some(Duration::from_secs(10)),
                ..DisplayLoopConfig::default()
            },
        )
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    match &err {
        RigError::WorkerFailed { worker, message } => {
            assert_eq!(worker, "camera");
            assert!(message.contains("unplugged"), "{message}");
        }
        e => panic!("expected a worker failure, got {e}"),
    }
    assert!(stop.is_stopped());
    let names = thread_names();
    for w in ["camera", "arm", "solver"] {
        assert!(
            !names.iter().any(|n| n == w),
            "thread {w} still running: {names:?}"
        );
    }
}

#[test]
fn a_stop_request_like_ctrl_c_ends_the_run_cleanly() {
    let _serial = serial();
    let mut compositor = Compositor::headless(CompositorConfig::monitor(small_camera())).unwrap();
    let stop = StopFlag::new();
    // A simulated arm nobody moves: its driver's thread must stop with the rig too.
    let arm = SimulatedArm::spawn(SimArmConfig::default()).expect("pty for the simulated arm");
    let arm_driver = RigArm::start(
        ArmConfig {
            port: PortSpec::Path(arm.port_path()),
            ..ArmConfig::default()
        },
        DEFAULT_BUTTON_MASK,
    )
    .unwrap();
    let rig = Rig::start(
        RigDevices {
            camera: Box::new(FixedCamera::new(&small_camera(), None)),
            arm: Some(arm_driver),
            mic: None,
            simulation: bob(Point3::new(0.0, 0.0, 0.2)),
        },
        SolverConfig::default(),
        stop.clone(),
    )
    .unwrap();
    let s2 = stop.clone();
    let ctrl_c = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2000));
        s2.stop();
        Instant::now()
    });
    let summary = rig
        .run(&mut compositor, None, &DisplayLoopConfig::default())
        .unwrap();
    let stopped_at = ctrl_c.join().unwrap();
    let shutdown = stopped_at.elapsed();
    assert_eq!(summary.display.stop_reason, StopReason::Interrupted);
    assert!(summary.display.frames >= 1);
    // One frame in flight at most (debug builds render slowly), then every thread joins.
    assert!(
        shutdown < Duration::from_secs(3),
        "shutdown took {shutdown:?}"
    );
    let names = thread_names();
    for w in ["camera", "arm", "solver"] {
        assert!(
            !names.iter().any(|n| n == w),
            "thread {w} still running: {names:?}"
        );
    }
    assert!(
        summary.display.workers_started.iter().any(|w| w == "arm"),
        "{:?}",
        summary.display.workers_started
    );
    // The solver thread heard the driver's connection on its status channel.
    assert!(
        summary
            .solver
            .events
            .iter()
            .any(|(_, m)| m.starts_with("arm connected on")),
        "{:?}",
        summary.solver.events
    );
    assert!(
        summary.solver.steps > 30,
        "solver took {} steps",
        summary.solver.steps
    );
}

/// Acceptance 2: the demo's world (ten pendula from the scene file through the solver library,
/// the simulated arm on a pty moved by the scripted user, the synthetic microphone), headless.
/// The user clips the tip, drags it 10 cm sideways (and 5 cm up) and releases: the tip stays within 5 mm of the
/// stylus while clipped, swings freely afterwards, and ‖ψ‖ and the energy error stay inside
/// the solver issue's limits (‖ψ‖ < 1e-4 m, |energy error| < 1 %).
#[test]
fn ten_pendula_clip_drag_release_on_simulated_devices() {
    let _serial = serial();
    let s = demo_run::demo_run(ar_multibody::rig::method::Method::Default);
    demo_run::assert_demo_limits("default", &s);
}
