//! The rig with `--method articulated` (issue 17, acceptance 6): the same clip, drag and
//! release as the default method, judged against the default method's own run (a separately
//! written solver, so an independent reference), through the simulation interface the
//! solver thread drives and through the whole demo on simulated devices; the same wind for
//! the same state and level; scenes the method cannot run refused by name.

use ar_dynamics::scene::resolve_scene;
use ar_multibody::interaction::SpringAttachment;
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::RigSimulation;
use nalgebra::{Point3, Vector3};

#[path = "support/demo_run.rs"]
mod demo_run;

/// Simulated step of the rig, seconds.
const H: f64 = 0.01;

/// The tests here run one at a time: the demo is a real-time run, and on two cores a
/// parallel test would starve its solver thread.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a scripted clip-drag-hold-release-swing did, seen through [`Simulation`].
#[derive(Debug)]
struct Gesture {
    /// The grab point at the release, m.
    tip_at_release: Point3<f64>,
    /// The grab point 1 s after the release, m.
    tip_after_swing: Point3<f64>,
    /// Largest tip-to-stylus distance after the first 0.3 s of the clip, m.
    max_tip_error_m: f64,
    /// Energy (kinetic + potential + elastic), user work and spring force just before the
    /// release, J, J, N.
    energy_at_release_j: f64,
    user_work_j: f64,
    spring_force_n: f64,
    /// Energy 1 s after the release, J.
    energy_after_swing_j: f64,
    /// Largest |energy drift| / E_ref over the run, and the largest ‖ψ‖, m.
    max_energy_error: f64,
    max_psi_m: f64,
}

/// The demo's gesture on the ten pendula without devices or threads: clip the tip, drag it
/// 10 cm sideways and 5 cm up over 1.5 s, hold 0.5 s, release, swing 1 s.
fn gesture(method: Method) -> Gesture {
    let mut sim = load_simulation(&resolve_scene("ten_pendula"), method)
        .unwrap()
        .simulation;
    let grab = sim.grab_points()[0];
    let drag = Vector3::new(0.10, 0.0, 0.05);
    let (mut max_tip_error_m, mut max_energy_error, mut max_psi_m) = (0.0_f64, 0.0_f64, 0.0_f64);
    let tip = |sim: &RigSimulation| sim.point_in_world(grab.body, &grab.point_in_body).unwrap();
    let mut track = |sim: &RigSimulation| {
        let d = sim.diagnostics();
        max_energy_error = max_energy_error.max(d.energy_error_rel.abs());
        max_psi_m = max_psi_m.max(d.psi_norm_m);
    };
    for k in 0..200 {
        let t = k as f64 * H;
        let target = grab.point_in_world + drag * (t / 1.5).min(1.0);
        let spring = SpringAttachment {
            body: grab.body,
            point_in_body: grab.point_in_body,
            target_in_world: target,
        };
        sim.step(Some(&spring), 0.0).unwrap();
        track(&sim);
        if t > 0.3 {
            max_tip_error_m = max_tip_error_m.max((tip(&sim) - target).norm());
        }
    }
    let at_release = sim.diagnostics();
    let tip_at_release = tip(&sim);
    for _ in 0..100 {
        sim.step(None, 0.0).unwrap();
        track(&sim);
    }
    Gesture {
        tip_at_release,
        tip_after_swing: tip(&sim),
        max_tip_error_m,
        energy_at_release_j: at_release.energy_j,
        user_work_j: at_release.user_work_j,
        spring_force_n: at_release.spring_force_n,
        energy_after_swing_j: sim.diagnostics().energy_j,
        max_energy_error,
        max_psi_m,
    }
}

/// The clip-drag-release through the simulation interface: the articulated method's figures
/// against the default method's.
#[test]
fn the_drag_through_the_interface_agrees_with_the_default_method() {
    let _serial = serial();
    let default = gesture(Method::Default);
    let articulated = gesture(Method::Articulated);
    eprintln!("default     {default:?}\narticulated {articulated:?}");
    // Achieved: tip errors 0.16 / 0.12 mm, ‖ψ‖ 1.9e-8 / 0 m, energy errors 0.032 / 0.0046 %;
    // tips 1.9e-5 m apart at the release and 1.8 mm after 1 s of free swing; energies
    // 4.3e-5 J apart at the release and 4.7e-5 J after the swing; user work 0.0385 / 0.0390 J
    // (1.3 %); spring force 0.45 / 0.54 N (it rings with the chain). The bounds are about
    // three times these.
    for g in [&default, &articulated] {
        assert!(g.max_tip_error_m < 5e-4, "{g:?}");
        assert!(g.max_psi_m < 1e-6, "{g:?}");
        assert!(g.max_energy_error < 0.001, "{g:?}");
    }
    let tip_apart_m = (articulated.tip_at_release - default.tip_at_release).norm();
    assert!(
        tip_apart_m < 6e-5,
        "tips {tip_apart_m} m apart at the release"
    );
    let swing_apart_m = (articulated.tip_after_swing - default.tip_after_swing).norm();
    assert!(
        swing_apart_m < 5e-3,
        "tips {swing_apart_m} m apart 1 s after"
    );
    let energy_apart_j = (articulated.energy_at_release_j - default.energy_at_release_j).abs();
    assert!(
        energy_apart_j < 1.5e-4,
        "energies {energy_apart_j} J apart at the release"
    );
    let energy_apart_j = (articulated.energy_after_swing_j - default.energy_after_swing_j).abs();
    assert!(
        energy_apart_j < 1.5e-4,
        "energies {energy_apart_j} J apart after the swing"
    );
    let work_rel = (articulated.user_work_j - default.user_work_j).abs() / default.user_work_j;
    assert!(work_rel < 0.04, "user work {work_rel} apart (relative)");
    let force_apart_n = (articulated.spring_force_n - default.spring_force_n).abs();
    assert!(force_apart_n < 0.3, "spring forces {force_apart_n} N apart");
}

/// The grab point's position at the last step the stylus held it.
fn tip_at_release(s: &ar_multibody::rig::SolverSummary) -> Point3<f64> {
    s.trace
        .iter()
        .rev()
        .find(|r| r.clipped)
        .and_then(|r| r.grab_point_in_world)
        .expect("a clipped step with the grab point")
}

/// Acceptance 6: `demo --method articulated` on simulated devices — the scripted user clips
/// the ten pendula's tip, drags it 10 cm sideways and 5 cm up and releases — meets the
/// default method's demo limits (tests/rig.rs: tip within 5 mm of the stylus, drag > 8 cm,
/// free swing > 2 cm, ‖ψ‖ < 1e-4 m, |energy error| < 1 %), and its figures agree with the
/// default method's run of the same gesture.
///
/// Real time, so it needs the release build: in the debug build (the crate at opt-level 1,
/// where nalgebra's generic code is not inlined) one evaluation of the ten pendula's dynamics
/// takes ~0.2 ms on a shared two-core machine and a clipped rig step ~40 of them, so the
/// solver falls behind and drops steps, which compresses the gesture (measured with two
/// steps per rig step: 121 dropped, the release 1.05 s after the clip).
/// `cargo test --release --test rig_articulated`.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "real time: needs the release build (cargo test --release --test rig_articulated)"
)]
fn demo_ten_pendula_clip_drag_release_with_the_articulated_method() {
    let _serial = serial();
    // Each run on a thread of its own: the renderer keeps per-thread state that a second
    // headless compositor on the same thread trips over.
    let runs = [Method::Default, Method::Articulated].map(|m| {
        std::thread::spawn(move || demo_run::demo_run(m))
            .join()
            .unwrap()
    });
    let reports = [
        demo_run::assert_demo_limits("default", &runs[0]),
        demo_run::assert_demo_limits("articulated", &runs[1]),
    ];
    eprintln!(
        "tip at release: default {}, articulated {}",
        tip_at_release(&runs[0]),
        tip_at_release(&runs[1])
    );
    // The same scripted gesture: the same drag, and the tip released at the same place
    // (within the 5 mm the stylus may lead it; the real-time runs differ in timing).
    let drag_apart_m = (reports[0].drag_m.unwrap() - reports[1].drag_m.unwrap()).abs();
    assert!(drag_apart_m < 0.005, "drags {drag_apart_m} m apart");
    let tips_apart_m = (tip_at_release(&runs[0]) - tip_at_release(&runs[1])).norm();
    assert!(
        tips_apart_m < 0.01,
        "tips {tips_apart_m} m apart at the release"
    );
}

/// The wind of the Steel Fish at the same state and level pushes both methods' bodies with
/// the same face forces, and blows the articulated mobile about with its joints exact.
#[test]
fn the_wind_pushes_both_methods_alike() {
    let _serial = serial();
    use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim};
    use ar_dynamics::wind::WindElement;
    use ar_dynamics::{MethodSim, Scene};
    let scene = Scene::load(resolve_scene("steel_fish")).unwrap();
    let settings = scene.wind.clone().expect("steel_fish has a [wind] table");
    let mut default = MethodSim::Default(scene.build().unwrap());
    let mut articulated = MethodSim::Articulated(
        ArticulatedSim::from_scene(&scene, ArticulatedParams::default()).unwrap(),
    );
    let (mut wind_d, mut wind_a) = (
        WindElement::from_settings(&settings).unwrap(),
        WindElement::from_settings(&settings).unwrap(),
    );
    wind_d.apply(&mut default, 0.2, 0.0);
    wind_a.apply(&mut articulated, 0.2, 0.0);
    let (fd, fa) = (wind_d.last_face_forces(), wind_a.last_face_forces());
    assert!(!fd.is_empty());
    assert_eq!(fd.len(), fa.len());
    for (d, a) in fd.iter().zip(fa) {
        assert_eq!(d.body, a.body);
        assert!(
            (d.force_in_world - a.force_in_world).norm() < 1e-9,
            "{d:?} {a:?}"
        );
        assert!(
            (d.point_in_world - a.point_in_world).norm() < 1e-9,
            "{d:?} {a:?}"
        );
    }
    // Through the rig's interface: a breath moves the mobile's first grab point.
    let mut rig = load_simulation(&resolve_scene("steel_fish"), Method::Articulated)
        .unwrap()
        .simulation;
    let start = rig.grab_points()[0].point_in_world;
    for k in 0..60 {
        let level = if (10..40).contains(&k) { 0.2 } else { 0.0 };
        rig.step(None, level).unwrap();
    }
    let moved_m = (rig.grab_points()[0].point_in_world - start).norm();
    assert!(moved_m > 1e-3, "the breath moved the tip only {moved_m} m");
    assert_eq!(rig.diagnostics().psi_norm_m, 0.0, "a tree: exact joints");
}

/// The command failed cleanly, naming the scene and the contacts.
fn assert_refused(out: &std::process::Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("billiard") && stderr.contains("contacts"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn cli(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("runs the binary")
}

/// A scene with contacts cannot run with the articulated method: `demo` and `run` say which
/// scene and why, and exit with an error before any device starts.
#[test]
fn a_scene_the_method_cannot_run_is_refused_by_name() {
    let _serial = serial();
    let err = load_simulation(&resolve_scene("billiard"), Method::Articulated)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("contacts"), "{err}");
    let out = cli(&[
        "demo",
        "--scene",
        "billiard",
        "--method",
        "articulated",
        "--headless",
        "--no-save",
    ]);
    assert_refused(&out);
    let dir = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let config = dir.path().join("rig.toml");
    std::fs::write(
        &config,
        format!(
            "scene = \"{root}/assets/scenes/billiard.toml\"\n\n[camera]\ndevice = \"desk.avi\"\n\
             camera_file = \"{root}/assets/cameras/synthetic_640x480.toml\"\n\
             marker_length_m = 0.08\n\n[mic]\ndevice = \"none\"\n\n[display]\nmode = \"monitor\"\n\
             headless_out = \"frames\"\n"
        ),
    )
    .unwrap();
    let out = cli(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--method",
        "articulated",
    ]);
    assert_refused(&out);
}
