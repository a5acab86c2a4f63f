//! The demo's clip-drag-release on simulated devices, shared by the rig tests (included with
//! `#[path]`): the demo's world (ten pendula, or another scene, from the scene file, the simulated
//! arm on a pty moved by the scripted user, the synthetic microphone), headless, and the
//! limits the default method's demo meets.

use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::demo_world::{DemoOptions, DemoWorld};
use ar_multibody::rig::display::report::InteractionReport;
use ar_multibody::rig::method::Method;
use ar_multibody::rig::{DisplayLoopConfig, Rig, SolverSummary, StopFlag};
use std::time::Duration;

/// Runs the demo's world on the ten pendula with `method` until 2 s after the gesture.
// Not every test that includes this file runs the ten pendula (`tests/rig_push.rs`).
#[allow(dead_code)]
pub fn demo_run(method: Method) -> SolverSummary {
    demo_run_scene("ten_pendula", method)
}

/// Runs the demo's world on `scene` with `method` until 2 s after the gesture.
pub fn demo_run_scene(scene: &str, method: Method) -> SolverSummary {
    let stop = StopFlag::new();
    let world = DemoWorld::build(
        &DemoOptions {
            scene: scene.into(),
            with_mic: true,
            show_diagnostics: false,
            show_reactions: false,
            method,
        },
        stop.clone(),
    )
    .unwrap();
    let mut config = CompositorConfig::monitor(world.intrinsics().clone());
    // A small view at 5 fps leaves the two cores to the solver, which these tests are about.
    config.view_size_px = (320, 240);
    let mut compositor = Compositor::headless(config).unwrap();
    let (devices, solver_config, user) = world.into_parts();
    let rig = Rig::start(devices, solver_config, stop.clone()).unwrap();
    // The gesture's clock starts when the arm streams, which takes a while in a debug build:
    // the run ends 2 s of free swing after the scripted user is done, not at a fixed time.
    let ender = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !user.gesture_done() && user.is_running() && !stop.is_stopped() {
                std::thread::sleep(Duration::from_millis(50));
            }
            std::thread::sleep(Duration::from_secs(2));
            // Worker::join stops the whole rig (the flag is shared).
            user.join()
        })
    };
    let summary = rig
        .run(
            &mut compositor,
            None,
            &DisplayLoopConfig {
                frame_period: Duration::from_millis(200),
                max_duration: Some(Duration::from_secs(90)),
                ..DisplayLoopConfig::default()
            },
        )
        .unwrap();
    ender.join().unwrap().unwrap().unwrap();
    summary.solver
}

/// Checks the demo's limits (the solver issue's: tip within 5 mm of the stylus while
/// clipped, drag > 8 cm, free swing > 2 cm, ‖ψ‖ < 1e-4 m, |energy error| < 1 %) and
/// returns the interaction's figures.
pub fn assert_demo_limits(name: &str, s: &SolverSummary) -> InteractionReport {
    let i = InteractionReport::from_solver(s);
    eprintln!(
        "{name}: {i:?}; steps {} (dropped {}), rtf {:.2}, max |psi| {:.2e} m, max |energy error| {:.3} %",
        s.steps,
        s.skipped_steps,
        s.real_time_factor,
        s.max_psi_norm_m,
        100.0 * s.max_abs_energy_error_rel
    );
    eprintln!("{name} events: {:?}", s.events);
    assert_eq!(s.error, None, "{name}");
    let (clip, release) = (i.clip_s.expect("clipped"), i.release_s.expect("released"));
    assert!(
        release - clip > 1.5,
        "{name}: clip {clip} s, release {release} s"
    );
    assert!(i.max_tip_error_m.unwrap() < 0.005, "{name}: {i:?}");
    assert!(i.drag_m.unwrap() > 0.08, "{name}: {i:?}");
    assert!(
        i.swing_path_after_release_m.unwrap() > 0.02,
        "{name}: {i:?}"
    );
    assert!(
        s.max_psi_norm_m < 1e-4,
        "{name}: max |psi| {} m",
        s.max_psi_norm_m
    );
    assert!(
        s.max_abs_energy_error_rel < 0.01,
        "{name}: energy error {}",
        s.max_abs_energy_error_rel
    );
    i
}
