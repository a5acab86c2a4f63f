//! The rig steps a scene at the scene's own step (`[solver] dt_secs`), not at a step of its
//! own: `ten_pendula_fine` (h = 5 ms) runs on the rig 200 steps per second, its trace, events
//! and recording count in 5 ms steps and the recording replays bit for bit; the stylus spring
//! drags it within the solver's limits at that step; a scene swapped in with another step (the
//! sandbox's next scene) is paced at its own from then on; a step the real-time clock cannot
//! pace is refused with the reason.

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_dynamics::scene::resolve_scene;
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::interaction::SpringAttachment;
use ar_multibody::rig::devices::fixed_view::{look_at, FixedViewCamera};
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::record::replay::replay;
use ar_multibody::rig::record::session_log::{read_inputs, SessionInfo, SessionRecorder};
use ar_multibody::rig::threads::solver_commands::SolverCommand;
use ar_multibody::rig::{
    DisplayLoopConfig, Rig, RigDevices, RigError, RigSimulation, RunSummary, SolverConfig,
    SolverSummary, StopFlag, StopReason,
};
use nalgebra::{Isometry3, Point3};
use std::path::Path;
use std::time::Duration;

/// The fine scene's step, seconds.
const FINE_H: f64 = 0.005;

/// These tests run in real time, one at a time (two cores: parallel runs would starve the
/// solver thread they measure).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn camera() -> (CameraIntrinsics, FixedViewCamera) {
    let intrinsics = CameraIntrinsics::ideal(320, 240, 300.0);
    let camera_from_world =
        look_at(Point3::new(0.0, -0.9, 0.4), Point3::new(0.0, 0.0, 0.3)).expect("a valid view");
    let camera = FixedViewCamera::new(&intrinsics, camera_from_world, 0.08, 25.0);
    (intrinsics, camera)
}

/// Runs `simulation` on the rig (a fixed camera, no arm, no microphone) for `run`, with
/// `commands` (if any) and a recorder (if any).
fn run_rig(
    simulation: RigSimulation,
    recorder: Option<SessionRecorder>,
    commands: Option<crossbeam_channel::Receiver<SolverCommand>>,
    run: Duration,
) -> Result<RunSummary, RigError> {
    let (intrinsics, camera) = camera();
    // The renderer first: the solver's clock starts with the rig, the run's with the display
    // loop, and the two should start together.
    let mut compositor = Compositor::headless(CompositorConfig::monitor(intrinsics)).unwrap();
    let rig = Rig::start_commanded(
        RigDevices {
            camera: Box::new(camera),
            arm: None,
            mic: None,
            simulation,
        },
        SolverConfig::default(),
        recorder,
        commands,
        StopFlag::new(),
    )?;
    rig.run(
        &mut compositor,
        None,
        &DisplayLoopConfig {
            max_duration: Some(run),
            ..DisplayLoopConfig::default()
        },
    )
}

/// The trace's times, consecutive differences between `from_s` and `to_s` (simulated).
fn trace_steps(s: &SolverSummary, from_s: f64, to_s: f64) -> Vec<f64> {
    let times: Vec<f64> = s
        .trace
        .iter()
        .map(|r| r.sim_time_s)
        .filter(|t| (from_s..=to_s).contains(t))
        .collect();
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

fn assert_all_near(steps: &[f64], h: f64, what: &str) {
    assert!(!steps.is_empty(), "{what}: no steps");
    for d in steps {
        assert!((d - h).abs() < 1e-9, "{what}: a step of {d} s, not {h} s");
    }
}

/// The lines of a scene file that say something (no comments, no blank lines).
fn scene_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_fine_scene_is_the_ten_pendula_at_half_the_step() {
    let plain = scene_lines(&resolve_scene("ten_pendula"));
    let fine = scene_lines(&resolve_scene("ten_pendula_fine"));
    assert_eq!(plain.len(), fine.len());
    let differing: Vec<_> = plain.iter().zip(&fine).filter(|(a, b)| a != b).collect();
    assert_eq!(
        differing,
        [(&"dt_secs = 0.01".to_owned(), &"dt_secs = 0.005".to_owned())]
    );
}

#[test]
fn a_scene_runs_on_the_rig_at_its_own_step_and_its_recording_replays() {
    let _serial = serial();
    let path = resolve_scene("ten_pendula_fine");
    let simulation = load_simulation(&path, Method::Default).unwrap().simulation;
    assert_eq!(simulation.dt_secs(), FINE_H);
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    let info = SessionInfo::new(
        "ten_pendula_fine",
        Method::Default.name(),
        simulation.dt_secs(),
        &Isometry3::identity(),
    );
    let recorder = SessionRecorder::create(&session, &path, &info).unwrap();
    let summary = run_rig(simulation, Some(recorder), None, Duration::from_secs(3)).unwrap();

    let s = &summary.solver;
    let wall_s = summary.display.wall_s;
    eprintln!(
        "{} steps (+{} dropped) of {} s in {wall_s:.2} s, rtf {:.3}",
        s.steps, s.skipped_steps, s.dt_secs, s.real_time_factor
    );
    assert_eq!(summary.display.stop_reason, StopReason::Done);
    assert_eq!(s.dt_secs, FINE_H);
    // Real time at 5 ms: the steps owed over the run are its wall time over h (the solver
    // thread starts a little before the display loop and stops a little after it).
    let owed = (s.steps + s.skipped_steps) as f64;
    assert!(
        (owed * FINE_H - wall_s).abs() < 0.25,
        "{owed} steps of 5 ms in {wall_s:.2} s"
    );
    assert!(s.real_time_factor > 0.9, "rtf {}", s.real_time_factor);
    // The trace counts in 5 ms steps from the first one.
    assert!((s.trace[0].sim_time_s - FINE_H).abs() < 1e-12);
    assert_all_near(&trace_steps(s, 0.0, f64::INFINITY), FINE_H, "trace");
    let last = s.trace.last().unwrap().sim_time_s;
    assert!((last - s.steps as f64 * FINE_H).abs() < 1e-9, "{last}");

    // The recording says so, counts in the same steps, and replays bit for bit.
    assert_eq!(SessionInfo::read(&session).unwrap().dt_secs, FINE_H);
    let rows = read_inputs(&session).unwrap();
    assert_eq!(rows.len() as u64, s.recorded_steps);
    assert_eq!(s.recorded_steps, s.steps);
    for w in rows.windows(2) {
        assert!((w[1].t_s - w[0].t_s - FINE_H).abs() < 1e-9, "{:?}", w[1]);
    }
    let outcome = replay(&session, &tmp.path().join("replayed"), |scene, info| {
        let method = Method::from_name(&info.method).unwrap();
        load_simulation(scene, method)
            .map(|l| l.simulation)
            .map_err(|e| e.0)
    })
    .unwrap();
    assert_eq!(outcome.difference, None);
    assert_eq!(outcome.steps, s.steps);
}

#[test]
fn a_scene_swapped_in_with_another_step_is_paced_at_its_own() {
    let _serial = serial();
    let plain = load_simulation(&resolve_scene("ten_pendula"), Method::Default).unwrap();
    let fine = load_simulation(&resolve_scene("ten_pendula_fine"), Method::Default).unwrap();
    let (commands_tx, commands_rx) = crossbeam_channel::bounded(4);
    let swap = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        commands_tx
            .send(SolverCommand::Replace(Box::new(fine.simulation), None))
            .unwrap();
        // The sender stays until the run ends, as the sandbox's does.
        std::thread::sleep(Duration::from_millis(2000));
    });
    let summary = run_rig(
        plain.simulation,
        None,
        Some(commands_rx),
        Duration::from_secs(3),
    )
    .unwrap();
    swap.join().unwrap();

    let s = &summary.solver;
    let swapped_at = s
        .events
        .iter()
        .find(|(_, m)| m.starts_with("scene ten_pendula_fine loaded"))
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("never swapped: {:?}", s.events));
    eprintln!(
        "swapped at t = {swapped_at} s; {} steps, rtf {:.3}",
        s.steps, s.real_time_factor
    );
    assert_eq!(s.dt_secs, FINE_H);
    // 10 ms steps up to the swap, 5 ms steps after it, and no jump in time between.
    assert_all_near(&trace_steps(s, 0.0, swapped_at), 0.01, "before the swap");
    assert_all_near(
        &trace_steps(s, swapped_at, f64::INFINITY),
        FINE_H,
        "after the swap",
    );
    assert!(
        s.trace
            .iter()
            .any(|r| (r.sim_time_s - swapped_at).abs() < 1e-9),
        "a row at the swap"
    );
    // Still real time over the whole run.
    assert!(s.real_time_factor > 0.9, "rtf {}", s.real_time_factor);
}

/// The stylus spring drags the fine chain's tip through the rig's simulation interface, step
/// by step as the solver thread steps it (deterministic, unlike a real-time run): 10 cm
/// sideways and 5 cm up over 1.5 s, then held, in 5 ms steps.
#[test]
fn the_stylus_spring_drags_the_fine_chain_within_the_solver_limits() {
    let mut sim = load_simulation(&resolve_scene("ten_pendula_fine"), Method::Default)
        .unwrap()
        .simulation;
    let grab = sim.grab_points()[0];
    let drag_in_world = nalgebra::Vector3::new(0.10, 0.0, 0.05);
    let (mut max_psi_m, mut max_tip_error_m, mut max_drift_j) = (0.0f64, 0.0f64, 0.0f64);
    let steps = (2.0 / FINE_H).round() as usize;
    for k in 0..steps {
        let t = k as f64 * FINE_H;
        let target_in_world = grab.point_in_world + drag_in_world * (t / 1.5).min(1.0);
        let spring = SpringAttachment {
            body: grab.body,
            point_in_body: grab.point_in_body,
            target_in_world,
        };
        sim.set_stylus_tip(Some(target_in_world));
        sim.step(Some(&spring), 0.0).unwrap();
        let d = sim.diagnostics();
        max_psi_m = max_psi_m.max(d.psi_norm_m);
        max_drift_j = max_drift_j.max(d.energy_drift_j.abs());
        let p = sim.point_in_world(grab.body, &grab.point_in_body).unwrap();
        if t > 0.3 {
            max_tip_error_m = max_tip_error_m.max((p - target_in_world).norm());
        }
    }
    let energy_error = max_drift_j / sim.diagnostics().energy_reference_j;
    eprintln!(
        "{steps} steps: max |psi| {max_psi_m:.3e} m, tip error {:.3} mm, energy error {energy_error:.2e}",
        max_tip_error_m * 1e3
    );
    // Within 10× of what is achieved (1.19e-8 m, 0.161 mm, 1.55e-6; at 10 ms the chain
    // reaches 1.94e-8 m, 0.162 mm, 8.4e-6).
    assert!(max_psi_m < 1.2e-7, "max |psi| {max_psi_m}");
    assert!(max_tip_error_m < 1.6e-3, "tip error {max_tip_error_m}");
    assert!(energy_error < 1.6e-5, "energy error {energy_error}");
}

#[test]
fn a_step_the_rig_cannot_pace_is_refused_with_the_reason() {
    let _serial = serial();
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(resolve_scene("ten_pendula")).unwrap();
    let scene = |name: &str, dt: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text.replace("dt_secs = 0.01", dt)).unwrap();
        path
    };
    // Loading for the rig says so before anything starts.
    let coarse = scene("coarse.toml", "dt_secs = 2.0");
    let err = load_simulation(&coarse, Method::Default)
        .err()
        .expect("a 2 s step is refused")
        .to_string();
    assert!(
        err.contains("[solver] dt_secs") && err.contains("h = 2 s") && err.contains("1 s"),
        "{err}"
    );
    // A simulation built otherwise stops the rig with the solver thread's reason.
    let tiny = scene("tiny.toml", "dt_secs = 1e-9");
    let simulation = RigSimulation::load(&tiny, ar_multibody::rig::method::Method::Default)
        .expect("the scene itself is valid");
    match run_rig(simulation, None, None, Duration::from_secs(10)) {
        Err(RigError::WorkerFailed { worker, message }) => {
            assert_eq!(worker, "solver");
            assert!(message.contains("the rig paces steps of"), "{message}");
        }
        other => panic!("expected the solver to refuse the step, got {other:?}"),
    }
}
