//! A simulation that blows up inside the running rig: the solver thread reports the failure
//! and stops stepping (it neither spins on NaN nor takes the rig down), and the HUD says
//! "solver failed" with the reason, naming the time and the body.

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::fixed_view::{look_at, FixedViewCamera};
use ar_multibody::rig::RigSimulation;
use ar_multibody::rig::{DisplayLoopConfig, Rig, RigDevices, SolverConfig, StopFlag, StopReason};
use nalgebra::Point3;
use std::time::Duration;

/// A ball in a gravity of 1e300 m/s²: its first step overflows the kinetic energy.
const EXPLODING_SCENE: &str = r#"
gravity_m_per_s2 = [0.0, 0.0, -1.0e300]

[[body]]
name = "ball"
mass_kg = 0.1
inertia_kg_m2 = [1.0e-5, 1.0e-5, 1.0e-5]
position_m = [0.0, 0.0, 0.5]
shape = { kind = "sphere", radius_m = 0.01 }
"#;

/// CPU time (user + system) of this process's thread called `name`, in clock ticks.
fn thread_cpu_ticks(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        if comm.trim() != name {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
        // Fields after the parenthesised name: state is field 3, utime 14, stime 15.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        return Some(utime + stime);
    }
    None
}

#[test]
fn an_exploding_scene_stops_the_solver_and_the_hud_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exploding.toml");
    std::fs::write(&path, EXPLODING_SCENE).unwrap();
    let simulation = RigSimulation::load(&path, ar_multibody::rig::method::Method::Default)
        .expect("the scene loads and builds");

    let intrinsics = CameraIntrinsics::ideal(320, 240, 300.0);
    let camera_from_world =
        look_at(Point3::new(0.0, -0.8, 0.5), Point3::new(0.0, 0.0, 0.3)).expect("a valid view");
    let camera = FixedViewCamera::new(&intrinsics, camera_from_world, 0.08, 25.0);
    let stop = StopFlag::new();
    let rig = Rig::start(
        RigDevices {
            camera: Box::new(camera),
            arm: None,
            mic: None,
            simulation,
        },
        SolverConfig::default(),
        stop.clone(),
    )
    .unwrap();
    // The solver thread's CPU time while it waits after the failure (a thread stepping or
    // spinning would use most of a core over the second measured).
    let probe = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(500));
        let before = thread_cpu_ticks("solver");
        std::thread::sleep(Duration::from_millis(1000));
        before.zip(thread_cpu_ticks("solver"))
    });
    let mut compositor = Compositor::headless(CompositorConfig::monitor(intrinsics)).unwrap();
    let summary = rig
        .run(
            &mut compositor,
            None,
            &DisplayLoopConfig {
                max_duration: Some(Duration::from_secs(2)),
                ..DisplayLoopConfig::default()
            },
        )
        .expect("a failed simulation does not take the rig down");
    let (before, after) = probe
        .join()
        .unwrap()
        .expect("the solver thread was alive while the rig ran");

    let d = &summary.display;
    assert_eq!(d.stop_reason, StopReason::Done, "{summary:#?}");
    assert!(d.workers_lost.is_empty(), "{:?}", d.workers_lost);
    let error = summary
        .solver
        .error
        .as_deref()
        .expect("the failure is reported");
    assert!(
        error.contains("from t = 0.000000 s to 0.010000 s"),
        "{error}"
    );
    assert!(error.contains("body `ball`"), "{error}");
    // The failed step is the first one; none after it.
    assert_eq!(summary.solver.steps, 0);
    assert!(
        d.events.iter().any(|e| e.contains("solver failed")),
        "{:?}",
        d.events
    );
    assert_eq!(
        d.last_hud_lines.first().map(String::as_str),
        Some(format!("solver failed: {error}").as_str()),
        "{:?}",
        d.last_hud_lines
    );
    // Clock ticks are usually 10 ms: at most 0.1 s of CPU in the second after the failure.
    assert!(
        after - before <= 10,
        "the solver thread used {} ticks of CPU after failing",
        after - before
    );
}
