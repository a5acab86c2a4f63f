//! The stylus tip pushes (issue 15, acceptance 8): in the shipped `push` scene the tip is a
//! kinematic sphere, and the demo's scripted user pushes the crate with it, button up, before
//! clipping to its handle. Checked through the simulation interface the solver thread drives
//! (the gesture's tip fed step by step, as the rig feeds it) and through the whole demo on
//! simulated devices (the simulated arm on a pty read by the real serial driver). The crate
//! must move by what the gesture says, `PUSH_TRAVEL_M − PUSH_GAP_M` = 5 cm plus the slide
//! v²/(2 μ g) after the tip stops; the user's work must be the desk's friction over that
//! distance; nothing may sink into anything by more than 1e-6 m; and the energy balance must
//! close.

use ar_dynamics::scene::resolve_scene;
use ar_multibody::rig::devices::demo_world::demo_script;
use ar_multibody::rig::devices::push_gesture::{
    pushed_by_m, PUSH_GAP_M, PUSH_SPEED_M_PER_S, PUSH_TRAVEL_M,
};
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::{RigSimulation, SolverSummary};
use nalgebra::Vector3;

#[path = "support/demo_run.rs"]
mod demo_run;

/// The shipped scene's crate and desk: mass (kg), friction of the crate on the desk (both
/// 0.3) and on the tip (√(0.3 × 0.5), the tip's material being the default), half its width
/// along the push (m), and the tip's radius (m).
const CRATE_KG: f64 = 0.4;
const MU: f64 = 0.3;
const MU_TIP: f64 = 0.387_298_334_620_741_7;
const HALF_WIDTH_M: f64 = 0.04;
const TIP_RADIUS_M: f64 = 0.005;
const G: f64 = 9.81;

/// The demo runs one at a time (a real-time run on two cores).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The push's figures as the gesture says they should be: the crate moves `pushed_by_m()`
/// along +x with the tip, then slides on v²/(2 μ g) when the tip stops; the user's work is
/// what the desk's friction takes over that distance (the crate is at rest before and
/// after). The desk carries m g less what the tip's friction holds up, or more what it
/// presses down: a tip pushing with F at mid-height holds a vertical friction f with
/// |f| ≤ μ_tip F (the contact is static and the problem indeterminate, so a solver may pick
/// any share), and F = μ (m g ∓ f), so the work lies between μ m g d / (1 + μ μ_tip) and
/// μ m g d / (1 − μ μ_tip). Returns the distance (m) and the work's bounds (J).
fn expected_push() -> (f64, f64, f64) {
    let v = PUSH_SPEED_M_PER_S;
    let d = pushed_by_m() + v * v / (2.0 * MU * G);
    let w = MU * CRATE_KG * G * d;
    (d, w / (1.0 + MU * MU_TIP), w / (1.0 - MU * MU_TIP))
}

#[test]
fn the_gesture_pushes_by_its_travel_less_the_gap() {
    assert!((pushed_by_m() - (PUSH_TRAVEL_M - PUSH_GAP_M)).abs() < 1e-15);
    let (d, low, high) = expected_push();
    assert!((d - 0.050_425).abs() < 1e-6, "{d}");
    // μ m g d itself.
    let w = high * (1.0 - MU * MU_TIP);
    assert!(
        low < w && w < high && (w - 0.059_36).abs() < 1e-5,
        "{low} {w} {high}"
    );
}

/// The demo's gesture fed to the `push` scene step by step through the rig's simulation
/// interface (the tip as the interaction hands it over, the spring while the button is down):
/// the push moves the crate 5 cm, and then the clip finds the handle where the push left it.
#[test]
fn the_scripted_push_moves_the_crate_through_the_simulation_interface() {
    let path = resolve_scene("push");
    let mut sim = RigSimulation::load(&path, ar_multibody::rig::method::Method::Default).unwrap();
    assert_eq!(sim.stylus_tip_radius_m(), Some(TIP_RADIUS_M));
    let grab = sim.grab_points()[0];
    let script = demo_script(&sim, grab.point_in_world);
    let push = script.push.clone().expect("the push scene's user pushes");
    let push_end_s = script.push_end_s().unwrap();
    let h = sim.dt_secs();
    let handle = |sim: &RigSimulation| sim.point_in_world(grab.body, &grab.point_in_body).unwrap();
    let start = handle(&sim);
    let (mut pen, mut energy, mut work_at_push_end) = (0.0f64, 0.0f64, None);
    let mut k = 0;
    while (k as f64) * h < script.press_at_s() - 0.05 {
        let (tip, button) = script.at(k as f64 * h);
        assert!(!button);
        sim.set_stylus_tip(Some(tip));
        sim.step(None, 0.0).unwrap();
        let d = sim.diagnostics();
        pen = pen.max(d.penetration_m);
        energy = energy.max(d.energy_error_rel.abs());
        k += 1;
        if work_at_push_end.is_none() && k as f64 * h >= push_end_s + 0.2 {
            work_at_push_end = Some(d.user_work_j);
        }
    }
    let moved = handle(&sim) - start;
    let (d, low, high) = expected_push();
    let work = work_at_push_end.unwrap();
    println!(
        "interface push: crate moved {:.3} mm along x ({:.3} mm expected), {:.3e} m across, \
         user work {work:.5} J ({low:.5} to {high:.5} J), max penetration {pen:.2e} m, \
         max |energy error| {energy:.2e}",
        moved.x * 1e3,
        d * 1e3,
        moved.yz().norm()
    );
    assert!((moved.x - d).abs() < 1e-4, "{moved}");
    assert!(moved.yz().norm() < 1e-6, "{moved}");
    assert!(
        low <= work && work <= high,
        "user work {work} J, expected {low} to {high} J"
    );
    assert!(pen <= 1e-6, "penetration {pen} m");
    assert!(energy < 1e-6, "energy error {energy}");
    // The clip's reach goes where the handle went.
    let clip_at = grab.point_in_world + push.grab_moves_by_in_world;
    assert!((handle(&sim) - clip_at).norm() < 1e-3);
}

/// The whole gesture through the same interface, the spring clipped while the button is down:
/// after the push the user lifts the crate 5 cm by its handle, drags it and drops it. The
/// handle stays on the tip (the spring's sag, m g / k = 0.4 mm), the tip never hits the crate
/// it holds, and the user's work is the push's plus the lift's, m g × 5 cm = 0.196 J.
#[test]
fn the_whole_gesture_pushes_lifts_drags_and_drops_the_crate() {
    use ar_multibody::interaction::SpringAttachment;
    let mut sim = RigSimulation::load(
        &resolve_scene("push"),
        ar_multibody::rig::method::Method::Default,
    )
    .unwrap();
    let grab = sim.grab_points()[0];
    let script = demo_script(&sim, grab.point_in_world);
    let h = sim.dt_secs();
    let (mut tip_error_m, mut energy, mut pen, mut clip) = (0.0f64, 0.0f64, 0.0f64, None);
    for k in 0..(script.duration_s() / h).ceil() as usize {
        let t = k as f64 * h;
        let (tip, button) = script.at(t);
        clip = if button {
            clip.or(Some(sim.grab_points()[0]))
        } else {
            None
        };
        let spring = clip.map(|g| SpringAttachment {
            body: g.body,
            point_in_body: g.point_in_body,
            target_in_world: tip,
        });
        sim.set_stylus_tip(Some(tip));
        sim.step(spring.as_ref(), 0.0).unwrap();
        let d = sim.diagnostics();
        energy = energy.max(d.energy_error_rel.abs());
        pen = pen.max(d.penetration_m);
        if let (Some(g), true) = (clip, t > script.press_at_s() + 0.3) {
            let p = sim.point_in_world(g.body, &g.point_in_body).unwrap();
            tip_error_m = tip_error_m.max((p - tip).norm());
        }
    }
    let work = sim.diagnostics().user_work_j;
    let (_, low, high) = expected_push();
    let lift_j = CRATE_KG * G * 0.05;
    println!(
        "whole gesture: max tip error {:.3} mm, user work {work:.4} J ({:.4} to {:.4} J), \
         max penetration {pen:.1e} m, max |energy error| {energy:.1e}",
        tip_error_m * 1e3,
        low + lift_j,
        high + lift_j
    );
    assert!(tip_error_m < 1e-3, "{tip_error_m}");
    assert!(pen <= 1e-6, "{pen}");
    assert!(energy < 1e-4, "{energy}");
    assert!(
        low + 0.98 * lift_j <= work && work <= high + 1.02 * lift_j,
        "user work {work} J"
    );
}

/// A session recorded on the `push` scene holds the pushing tip, so `replay` reproduces the
/// push bit for bit (without the tip in `inputs.csv` the replayed crate would not move).
#[test]
fn a_recorded_push_replays_bit_for_bit() {
    use ar_multibody::rig::record::replay::replay;
    use ar_multibody::rig::record::session_log::{SessionInfo, SessionRecorder};
    let path = resolve_scene("push");
    let mut sim = RigSimulation::load(&path, ar_multibody::rig::method::Method::Default).unwrap();
    let grab = sim.grab_points()[0];
    let script = demo_script(&sim, grab.point_in_world);
    let h = sim.dt_secs();
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("session");
    let info = SessionInfo::new("push", "default", h, &script.world_from_arm);
    let mut recorder = SessionRecorder::create(&session, &path, &info).unwrap();
    let end_s = script.push_end_s().unwrap() + 0.5;
    let steps = (end_s / h).ceil() as u64;
    for k in 0..steps {
        let (tip, _) = script.at(k as f64 * h);
        sim.set_stylus_tip(Some(tip));
        sim.step(None, 0.0).unwrap();
        recorder
            .step((k + 1) as f64 * h, None, Some(tip), 0.0, &sim)
            .unwrap();
    }
    recorder.finish().unwrap();
    let moved_m = sim.point_in_world(grab.body, &grab.point_in_body).unwrap() - grab.point_in_world;
    assert!(moved_m.x > 0.04, "{moved_m}");
    let outcome = replay(&session, &dir.path().join("replayed"), |scene, _| {
        load_simulation(scene, Method::Default)
            .map(|l| l.simulation)
            .map_err(|e| e.0)
    })
    .unwrap();
    assert_eq!(outcome.steps, steps);
    assert_eq!(outcome.difference, None);
}

/// The push before the clip in a run's trace: how far the first grab point moved from the
/// start to the press, the tip's farthest reach along +x while pushing, and the user's work
/// then.
fn push_in_trace(s: &SolverSummary, clip_s: f64) -> (Vector3<f64>, f64, f64) {
    let before: Vec<_> = s
        .trace
        .iter()
        .filter(|r| !r.clipped && r.sim_time_s < clip_s - 0.05)
        .collect();
    let (first, last) = (before.first().unwrap(), before.last().unwrap());
    let moved = last.grab_point_in_world.unwrap() - first.grab_point_in_world.unwrap();
    // While pushing, the tip is below the crate's top (10 cm); later it passes over it.
    let tip_x = before
        .iter()
        .filter_map(|r| r.tip_in_world)
        .filter(|p| p.z < 0.09)
        .map(|p| p.x)
        .fold(f64::NEG_INFINITY, f64::max);
    (moved, tip_x, last.user_work_j)
}

/// The solver library alone: the `push` scene's crate pushed by the tip, once with the tip
/// slowing down smoothly to a stop, once at the gesture's steady 5 cm/s with the ±0.1 mm
/// jitter of an arm's readings. Regression: with the dense active set, a tip slowing down
/// while it pressed on the crate (whose desk friction then sticks) booked 6.7e5 J of user
/// work, balanced by as much dissipation; the tip's contacts are now solved by projected
/// Gauss–Seidel, which keeps every friction impulse in its cone.
#[test]
fn a_push_that_slows_down_or_jitters_keeps_the_energy_balance() {
    use ar_dynamics::Scene;
    use nalgebra::Point3;
    let h = 0.01;
    let (x0, y, z) = (-0.085, 0.09, 0.05);
    let steady = |t: f64| x0 + PUSH_SPEED_M_PER_S * t.min(PUSH_TRAVEL_M / PUSH_SPEED_M_PER_S);
    let smooth = |t: f64| {
        let s = (t / 2.0).clamp(0.0, 1.0);
        x0 + PUSH_TRAVEL_M * s * s * (3.0 - 2.0 * s)
    };
    // The tip's x (m) at a time (s).
    type TipPath<'a> = &'a dyn Fn(f64) -> f64;
    let cases: [(&str, TipPath, f64); 2] =
        [("smooth stop", &smooth, 0.0), ("jitter", &steady, 1e-4)];
    for (name, path, jitter_m) in cases {
        let mut sim = Scene::load(resolve_scene("push")).unwrap().build().unwrap();
        let mut seed = 7u64;
        let mut noise = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            jitter_m * (2.0 * (seed >> 11) as f64 / (1u64 << 53) as f64 - 1.0)
        };
        let mut tip = Point3::new(path(0.0), y, z);
        let mut worst = 0.0f64;
        for k in 1..=300 {
            let next = Point3::new(path(k as f64 * h) + noise(), y + noise(), z + noise());
            sim.set_stylus_target(tip, (next - tip) / h);
            tip = next;
            sim.step().unwrap();
            worst = worst.max(sim.diagnostics().energy_error_rel.abs());
        }
        let work = sim.diagnostics().user_work_j;
        let (_, low, high) = expected_push();
        println!("{name}: max |energy error| {worst:.2e}, user work {work:.5} J");
        // Achieved: 6e-14 for the smooth stop; 1.7e-6 (1e-7 J) with the jitter, whose tip
        // re-enters the crate's face every few steps and is projected out of it.
        assert!(worst < 3e-6, "{name}: energy error {worst}");
        assert!(
            low <= work && work <= 1.1 * high,
            "{name}: user work {work} J"
        );
    }
}

/// Acceptance 8: `demo --scene push` on simulated devices. The scripted user moves the
/// simulated arm (its joints through inverse kinematics, the button), the real serial driver
/// reads it on a pseudo-terminal, and the rig hands the tip to the solver: the tip pushes the
/// crate 5 cm with the button up; then the user clips to the handle where the push left it,
/// drags it and lets go, within the demo's limits.
/// Real time, about 12 s.
#[test]
fn demo_push_scene_pushes_the_crate_then_clips_and_drags_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let s = demo_run::demo_run_scene("push", Method::Default);
    assert_eq!(s.stylus_tip_radius_m, Some(TIP_RADIUS_M));
    let clip_s = s
        .events
        .iter()
        .find(|(_, m)| m.starts_with("clipped"))
        .map_or(f64::INFINITY, |(t, _)| *t);
    let (moved, tip_x, work) = push_in_trace(&s, clip_s);
    let (d, low, high) = expected_push();
    let slide_m = d - pushed_by_m();
    // Where the handle must be if the crate's face ended on the tip's sphere: the arm's own
    // figure, independent of how well it followed the script.
    let start_x = s.trace[0].grab_point_in_world.unwrap().x;
    let against_tip = tip_x + TIP_RADIUS_M + HALF_WIDTH_M - start_x + slide_m;
    println!(
        "demo push: crate moved {:.3} mm along x before the clip ({:.3} mm by the gesture, \
         {:.3} mm by the tip's reach), {:.3} mm across; user work {work:.5} J \
         ({low:.5} to {high:.5} J); max penetration {:.2e} m; max |energy error| {:.3e}",
        moved.x * 1e3,
        d * 1e3,
        against_tip * 1e3,
        moved.yz().norm() * 1e3,
        s.max_penetration_m,
        s.max_abs_energy_error_rel
    );
    demo_run::assert_demo_limits("push", &s);
    // The simulated arm follows the script to a fraction of a millimetre.
    assert!((moved.x - d).abs() < 1e-3, "{moved}");
    // The slide after the tip stops, v²/(2 μ g) = 0.42 mm at the gesture's 5 cm/s, goes with
    // the crate's speed when the tip stops, which the arm's jitter changes by ~1 cm/s (a
    // slide of 0.27 to 0.61 mm), and a late re-contact may push it on: measured 0.04 to
    // 0.7 mm from the tip's figure (a real-time run, on a loaded machine at the top).
    assert!(
        (moved.x - against_tip).abs() < 1e-3,
        "{moved} vs {against_tip}"
    );
    assert!(moved.yz().norm() < 1e-3, "{moved}");
    // The arm's readings jitter by ~0.1 mm, so the tip falls behind the crate and strikes it
    // again step after step: each plastic re-contact takes work a steady push does not
    // (measured 0.077 J against the steady push's 0.060 J).
    assert!(
        low <= work && work <= 1.5 * high,
        "user work {work} J, expected {low} to 1.5 × {high} J"
    );
    assert!(s.max_penetration_m <= 1e-6, "{}", s.max_penetration_m);
    assert!(
        s.max_abs_energy_error_rel < 1e-3,
        "{}",
        s.max_abs_energy_error_rel
    );
}

/// The articulated method has no contacts: it refuses the push scene by name instead of
/// letting the crate fall through the desk.
#[test]
fn the_articulated_method_refuses_the_push_scene() {
    let err = load_simulation(&resolve_scene("push"), Method::Articulated)
        .err()
        .expect("refused");
    assert!(
        err.0.contains("contact") || err.0.contains("plane"),
        "{}",
        err.0
    );
}
