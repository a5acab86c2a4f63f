//! Joint limits in the default method (issue 42, acceptance 4), against closed forms written
//! here apart from the solver: a hinge pendulum swung into its upper limit and a slider on a
//! 30° incline driven into its end, each with `limit_restitution` 0 (stops at the limit and
//! rests there under the static torque or force) and 1 (leaves at the speed it came with);
//! the limit impulse of the impact step is I Δω (m Δv) less gravity's; bad limits are
//! refused with the file, line and field; the articulated method refuses scene limits.

use ar_dynamics::drive::csv::csv_header;
use ar_dynamics::{Method, Scene, SceneSimulation};

const G: f64 = 9.81;
/// The pendulum: 1 kg at L = 0.5 m from a pivot at the origin, about the y axis, released
/// horizontally; I about its centre 0.01 kg m² about y.
const M_BOB: f64 = 1.0;
const L: f64 = 0.5;
const I_C: f64 = 0.01;
/// The hinge's upper limit (rad): gravity still pushes the bob into it there.
const HI_RAD: f64 = 1.0;
/// The slider: 2 kg on a prismatic joint along s = (cos 30°, 0, −sin 30°), downhill.
const M_SLIDER: f64 = 2.0;
const HI_M: f64 = 0.2;

fn hinge_scene(h: f64, extra: &str) -> String {
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -{G}]\n[solver]\ndt_secs = {h}\n\
         [[body]]\nname = \"bob\"\nmass_kg = {M_BOB}\ninertia_kg_m2 = [{I_C}, {I_C}, {I_C}]\n\
         position_m = [{L}, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.05 }}\n\
         [[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\nbody2 = \"bob\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.0]\naxis_in_world = [0.0, 1.0, 0.0]\n{extra}\n"
    )
}

fn slider_scene(h: f64, extra: &str) -> String {
    let a = 30f64.to_radians();
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -{G}]\n[solver]\ndt_secs = {h}\n\
         [[body]]\nname = \"block\"\nmass_kg = {M_SLIDER}\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
         position_m = [0.0, 0.0, 0.0]\nshape = {{ kind = \"box\", size_m = [0.1, 0.1, 0.1] }}\n\
         [[joint]]\nname = \"rail\"\nkind = \"prismatic\"\nbody1 = \"ground\"\nbody2 = \"block\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.0]\naxis_in_world = [{:?}, 0.0, {:?}]\n{extra}\n",
        a.cos(),
        -a.sin()
    )
}

/// One step's state: the coordinate and its rate at the end of the step, and the limit
/// force of the step.
#[derive(Clone, Copy, Debug)]
struct Sample {
    q: f64,
    rate: f64,
    force: f64,
}

/// Runs `steps` steps; `coordinate` reads (q, q̇) from the simulation; the limit force is
/// the joint's angle (0) or travel (1) entry. The first sample is the initial state.
fn run(
    text: &str,
    steps: usize,
    entry: usize,
    coordinate: impl Fn(&ar_dynamics::Simulation) -> (f64, f64),
) -> (Vec<Sample>, ar_dynamics::Simulation) {
    let mut sim = Scene::parse(text, "limits.toml").unwrap().build().unwrap();
    let (q, rate) = coordinate(&sim);
    let mut out = vec![Sample {
        q,
        rate,
        force: 0.0,
    }];
    for _ in 0..steps {
        sim.step().unwrap();
        let (q, rate) = coordinate(&sim);
        let force = sim.joint_limit_forces()[0][entry];
        out.push(Sample { q, rate, force });
    }
    (out, sim)
}

/// The pendulum's angle about +y (downwards from the horizontal) and its rate, read from the
/// bob's position and angular velocity.
fn pendulum(sim: &ar_dynamics::Simulation) -> (f64, f64) {
    let b = &sim.bodies()[sim.body_id("bob").unwrap()];
    let x = b.position_in_world;
    ((-x.z).atan2(x.x), b.angular_velocity_in_world.y)
}

/// The slider's travel down the incline and its rate.
fn slider(sim: &ar_dynamics::Simulation) -> (f64, f64) {
    let a = 30f64.to_radians();
    let s = nalgebra::Vector3::new(a.cos(), 0.0, -a.sin());
    let b = &sim.bodies()[sim.body_id("block").unwrap()];
    (
        b.position_in_world.dot(&s),
        b.linear_velocity_in_world.dot(&s),
    )
}

/// The first step with a limit force (the impact), as the index of its end sample.
fn impact_step(trace: &[Sample]) -> usize {
    trace
        .iter()
        .position(|s| s.force != 0.0)
        .expect("no limit force")
}

/// Pivot inertia and gravity's torque about +y at angle θ (closed forms).
fn pivot_inertia() -> f64 {
    I_C + M_BOB * L * L
}
fn gravity_torque(theta: f64) -> f64 {
    M_BOB * G * L * theta.cos()
}

#[test]
fn a_hinge_with_restitution_0_stops_at_its_limit_and_rests_on_it() {
    for (h, steps) in [(0.01, 200), (0.001, 2000)] {
        let text = hinge_scene(h, "limits_rad = [-0.5, 1.0]");
        let (trace, sim) = run(&text, steps, 0, pendulum);
        let overshoot = trace.iter().map(|s| s.q - HI_RAD).fold(f64::MIN, f64::max);
        let last = trace.last().unwrap();
        println!(
            "hinge e=0, h {h}: overshoot {overshoot:e} rad, end θ − hi {:e}, ω {:e}, torque {} (static {})",
            last.q - HI_RAD,
            last.rate,
            last.force,
            -gravity_torque(HI_RAD)
        );
        assert!(overshoot <= 1e-7, "h {h}: overshoot {overshoot:e}");
        assert!((last.q - HI_RAD).abs() <= 1e-7 && last.rate.abs() <= 1e-6);
        // At rest on the limit the limit holds gravity's torque about the pivot; to O(h²):
        // the hinge's midpoint rows were made for the turn the limit then stops (4e-4 at
        // h = 0.01 s, 4e-6 at 0.001 s).
        let rel = (last.force + gravity_torque(HI_RAD)).abs() / gravity_torque(HI_RAD);
        assert!(rel <= 10.0 * h * h, "static torque rel. error {rel:e}");
        // The impact step's angular impulse about the pivot: I Δω less gravity's.
        let k = impact_step(&trace);
        let (a, b) = (trace[k - 1], trace[k]);
        let expected = pivot_inertia() * (b.rate - a.rate) - gravity_torque(0.5 * (a.q + b.q)) * h;
        let got = b.force * h;
        println!("  impact impulse {got:e} N·m·s, I Δω − τ_g h = {expected:e}");
        assert!(
            (got - expected).abs() <= 1e-3 * expected.abs(),
            "{got} {expected}"
        );
        // Arriving at the limit (θ within one step of it) with the energy's speed.
        let free = (2.0 * M_BOB * G * L * a.q.sin() / pivot_inertia()).sqrt();
        assert!((a.rate - free).abs() <= 1e-3 * free, "{} {free}", a.rate);
        assert!(sim.diagnostics().energy_error_rel.abs() < 1e-3);
    }
}

#[test]
fn a_hinge_with_restitution_1_leaves_its_limit_at_the_same_speed() {
    for (h, steps) in [(0.01, 60), (0.001, 600)] {
        let text = hinge_scene(h, "limits_rad = [-0.5, 1.0]\nlimit_restitution = 1.0");
        let (trace, sim) = run(&text, steps, 0, pendulum);
        let overshoot = trace.iter().map(|s| s.q - HI_RAD).fold(f64::MIN, f64::max);
        let k = impact_step(&trace);
        let (a, b) = (trace[k - 1], trace[k]);
        println!(
            "hinge e=1, h {h}: overshoot {overshoot:e}, ω in {} out {}, energy error {:e}",
            a.rate,
            b.rate,
            sim.diagnostics().energy_error_rel
        );
        assert!(overshoot <= 1e-7, "overshoot {overshoot:e}");
        // The rate just after the impact: the step's end rate less what gravity added in it.
        let out = b.rate - gravity_torque(0.5 * (a.q + b.q)) * h / pivot_inertia();
        println!("  rate after the impact {out}");
        assert!(out < 0.0);
        assert!(
            (out.abs() - a.rate).abs() <= 0.01 * a.rate,
            "{} {out}",
            a.rate
        );
        let expected = pivot_inertia() * (b.rate - a.rate) - gravity_torque(0.5 * (a.q + b.q)) * h;
        let got = b.force * h;
        assert!(
            (got - expected).abs() <= 1e-3 * expected.abs(),
            "{got} {expected}"
        );
        // An elastic limit keeps the energy.
        assert!(sim.diagnostics().energy_error_rel.abs() < 1e-3);
    }
}

#[test]
fn a_slider_with_restitution_0_stops_at_its_limit_and_rests_on_it() {
    let a_slope = G * 30f64.to_radians().sin();
    for (h, steps) in [(0.01, 100), (0.001, 1000)] {
        let (trace, _) = run(&slider_scene(h, "limits_m = [-0.1, 0.2]"), steps, 1, slider);
        let overshoot = trace.iter().map(|s| s.q - HI_M).fold(f64::MIN, f64::max);
        let last = trace.last().unwrap();
        println!(
            "slider e=0, h {h}: overshoot {overshoot:e} m, end d − hi {:e}, v {:e}, force {}",
            last.q - HI_M,
            last.rate,
            last.force
        );
        assert!(overshoot <= 1e-7, "overshoot {overshoot:e}");
        assert!((last.q - HI_M).abs() <= 1e-7 && last.rate.abs() <= 1e-6);
        let rel = (last.force + M_SLIDER * a_slope).abs() / (M_SLIDER * a_slope);
        assert!(rel <= 1e-6, "static force rel. error {rel:e}");
        let k = impact_step(&trace);
        let (a, b) = (trace[k - 1], trace[k]);
        let expected = M_SLIDER * (b.rate - a.rate) - M_SLIDER * a_slope * h;
        assert!((b.force * h - expected).abs() <= 1e-6 * expected.abs());
        // Arriving with the speed of the fall along the incline: v² = 2 a d.
        let free = (2.0 * a_slope * a.q).sqrt();
        assert!((a.rate - free).abs() <= 1e-6 * free, "{} {free}", a.rate);
    }
}

#[test]
fn a_slider_with_restitution_1_leaves_its_limit_at_the_same_speed() {
    let a_slope = G * 30f64.to_radians().sin();
    for (h, steps) in [(0.01, 40), (0.001, 400)] {
        let text = slider_scene(h, "limits_m = [-0.1, 0.2]\nlimit_restitution = 1.0");
        let (trace, _) = run(&text, steps, 1, slider);
        let overshoot = trace.iter().map(|s| s.q - HI_M).fold(f64::MIN, f64::max);
        let k = impact_step(&trace);
        let (a, b) = (trace[k - 1], trace[k]);
        println!(
            "slider e=1, h {h}: overshoot {overshoot:e}, v in {} out {}",
            a.rate, b.rate
        );
        assert!(overshoot <= 1e-7);
        let out = b.rate - a_slope * h;
        assert!(out < 0.0);
        assert!(
            (out.abs() - a.rate).abs() <= 0.01 * a.rate,
            "{} {out}",
            a.rate
        );
        let expected = M_SLIDER * (b.rate - a.rate) - M_SLIDER * a_slope * h;
        assert!((b.force * h - expected).abs() <= 1e-6 * expected.abs());
    }
}

#[test]
fn the_csv_reports_each_limited_coordinate_after_the_reactions() {
    let scene = Scene::parse(&hinge_scene(0.01, "limits_rad = [-0.5, 1.0]"), "l.toml").unwrap();
    let sim = SceneSimulation::build(&scene, Method::Default).unwrap();
    let header = csv_header(&sim);
    assert_eq!(header.last().unwrap(), "pivot_limit_n_m");
    assert_eq!(header[header.len() - 2], "pivot_tz");
    let scene = Scene::parse(&slider_scene(0.01, "limits_m = [-0.1, 0.2]"), "l.toml").unwrap();
    let sim = SceneSimulation::build(&scene, Method::Default).unwrap();
    assert_eq!(csv_header(&sim).last().unwrap(), "rail_limit_n");
    // A row holds the step's limit torque in the last column, as the simulation reports it.
    let scene = Scene::parse(&hinge_scene(0.01, "limits_rad = [-0.5, 1.0]"), "l.toml").unwrap();
    let mut sim = SceneSimulation::build(&scene, Method::Default).unwrap();
    let mut out = ar_io::csv_write::CsvWriter::new(Vec::new());
    for _ in 0..100 {
        sim.step(&Default::default()).unwrap();
    }
    ar_dynamics::drive::csv::csv_row(&sim, &mut out).unwrap();
    let text = String::from_utf8(out.into_inner().unwrap()).unwrap();
    let last: f64 = text.trim_end().rsplit(',').next().unwrap().parse().unwrap();
    let torque = sim.as_default().unwrap().joint_limit_forces()[0][0];
    assert!(torque < -2.0, "{torque}");
    assert_eq!(last.to_bits(), torque.to_bits());
    assert_eq!(text.trim_end().split(',').count(), csv_header(&sim).len());
    // Without limits: no column, and no limit forces.
    let scene = Scene::parse(&hinge_scene(0.01, ""), "l.toml").unwrap();
    let mut sim = SceneSimulation::build(&scene, Method::Default).unwrap();
    assert_eq!(csv_header(&sim).last().unwrap(), "pivot_tz");
    sim.step(&Default::default()).unwrap();
    assert!(sim.as_default().unwrap().joint_limit_forces().is_empty());
}

/// The error of a scene whose pendulum's joint table ends with `extra`.
fn refusal(extra: &str) -> String {
    let text = hinge_scene(0.01, extra);
    Scene::parse(&text, "limits.toml")
        .err()
        .unwrap()
        .to_string()
}

#[test]
fn bad_limits_are_refused_with_file_line_and_field() {
    // The joint table's fields start on line 13 of the scene text; `extra` is line 19.
    let cases = [
        (
            "limits_rad = [1.0, -0.5]",
            "joint[0].limits_rad",
            "lower end is above",
        ),
        ("limits_rad = [nan, 1.0]", "joint[0].limits_rad", "finite"),
        ("limits_rad = [-0.5, inf]", "joint[0].limits_rad", "finite"),
        (
            "limits_rad = [0.1, 1.0]",
            "joint[0].limits_rad",
            "initial pose",
        ),
        ("limits_rad = [-0.5, 3.5]", "joint[0].limits_rad", "(−π, π)"),
        (
            "limits_rad = [-0.5, 0.5, 1.0]",
            "joint[0].limits_rad",
            "two numbers",
        ),
        ("limits_m = [-0.1, 0.1]", "joint[0].limits_m", "no travel"),
        (
            "limit_restitution = 0.5",
            "joint[0].limit_restitution",
            "nothing to act on",
        ),
        (
            "limits_rad = [-0.5, 1.0]\nlimit_restitution = 1.5",
            "joint[0].limit_restitution",
            "[0, 1]",
        ),
    ];
    for (extra, field, why) in cases {
        let e = refusal(extra);
        println!("{e}");
        assert!(e.contains("limits.toml:"), "{e}");
        assert!(e.contains(field) && e.contains(why), "{extra}: {e}");
    }
    let line = refusal("limits_rad = [1.0, -0.5]");
    let expected_line = hinge_scene(0.01, "")
        .lines()
        .position(|l| l.starts_with("axis_in_world"))
        .unwrap()
        + 2;
    assert!(
        line.contains(&format!("limits.toml:{expected_line}:")),
        "{line}"
    );
    // A ball joint has nothing to limit.
    let ball = hinge_scene(0.01, "limits_rad = [-0.5, 1.0]")
        .replace("kind = \"hinge\"", "kind = \"ball\"")
        .replace("axis_in_world = [0.0, 1.0, 0.0]\n", "");
    let e = Scene::parse(&ball, "limits.toml")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("joint[0].limits_rad") && e.contains("ball joint has no angle"),
        "{e}"
    );
    // A slider takes `limits_m` only.
    let e = Scene::parse(
        &slider_scene(0.01, "limits_rad = [-0.5, 1.0]"),
        "limits.toml",
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("joint[0].limits_rad") && e.contains("prismatic joint has no angle"),
        "{e}"
    );
}

#[test]
fn the_articulated_method_refuses_scene_limits_by_name() {
    let scene = Scene::parse(&hinge_scene(0.01, "limits_rad = [-0.5, 1.0]"), "l.toml").unwrap();
    let e = SceneSimulation::build(&scene, Method::RIG_ARTICULATED)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("pivot") && e.contains("limits_rad") && e.contains("default method"),
        "{e}"
    );
}

#[test]
fn a_limited_pendulum_beside_a_ball_on_the_desk_keeps_both_right() {
    // The desk's contacts come first in the contact solve and the limit rows after them
    // (the ball must not fall asleep: its contacts would then leave the solve).
    let ball = "[contact]\nsleep = false\n[[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\npoint_in_world_m = [0.0, 0.0, -1.0]\n\
        [[body]]\nname = \"ball\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.001, 0.001, 0.001]\n\
        position_m = [2.0, 0.0, -0.95]\nshape = { kind = \"sphere\", radius_m = 0.05 }\n";
    let text = format!("{}{ball}", hinge_scene(0.01, "limits_rad = [-0.5, 1.0]"));
    let (trace, sim) = run(&text, 200, 0, pendulum);
    let overshoot = trace.iter().map(|s| s.q - HI_RAD).fold(f64::MIN, f64::max);
    let last = trace.last().unwrap();
    assert!(!sim.contact_report().is_empty());
    assert!(
        overshoot <= 1e-7 && (last.q - HI_RAD).abs() <= 1e-7,
        "{overshoot:e}"
    );
    let rel = (last.force + gravity_torque(HI_RAD)).abs() / gravity_torque(HI_RAD);
    assert!(rel <= 1e-3, "{rel:e}");
    let b = &sim.bodies()[sim.body_id("ball").unwrap()];
    assert!(b.linear_velocity_in_world.norm() < 1e-9 && sim.max_penetration_m() < 1e-7);
}

#[test]
fn a_slot_takes_both_limits_and_reports_both() {
    let text = slider_scene(0.01, "limits_m = [-0.1, 0.2]\nlimits_rad = [-0.3, 0.3]")
        .replace("kind = \"prismatic\"", "kind = \"slot\"")
        .replace(
            "axis_in_world = [",
            "hinge_axis_in_world = [0.0, 1.0, 0.0]\naxis_in_world = [",
        );
    let scene = Scene::parse(&text, "slot.toml").unwrap();
    let mut sim = SceneSimulation::build(&scene, Method::Default).unwrap();
    let header = csv_header(&sim);
    assert_eq!(
        &header[header.len() - 2..],
        ["rail_limit_n_m", "rail_limit_n"]
    );
    for _ in 0..100 {
        sim.step(&Default::default()).unwrap();
    }
    // The block slid down to its end and rests there (its centre on the axis: no turn).
    let (d, v) = slider(sim.as_default().unwrap());
    assert!((d - HI_M).abs() <= 1e-7 && v.abs() <= 1e-6, "{d} {v}");
    let [torque, force] = sim.as_default().unwrap().joint_limit_forces()[0];
    let static_force = M_SLIDER * G * 30f64.to_radians().sin();
    assert!(torque.abs() < 1e-9 && (force + static_force).abs() <= 1e-6 * static_force);
}

/// The double pendulum's step (s).
const H_DOUBLE: f64 = 0.01;

/// A double pendulum (two 1 kg links, 0.5 m apart, released horizontally) whose second hinge
/// is limited to ±0.3 rad with restitution `e`, at step `h`. (Without the limits in the
/// position correction, the joints' projection pushed the resting elbow 2.5e-7 rad past.)
fn double_pendulum(e: f64, h: f64) -> String {
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -{G}]\n[solver]\ndt_secs = {h:?}\n\
         [[body]]\nname = \"a\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
         position_m = [0.5, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.05 }}\n\
         [[body]]\nname = \"b\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
         position_m = [1.0, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.05 }}\n\
         [[joint]]\nname = \"shoulder\"\nkind = \"hinge\"\nbody1 = \"ground\"\nbody2 = \"a\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.0]\naxis_in_world = [0.0, 1.0, 0.0]\n\
         [[joint]]\nname = \"elbow\"\nkind = \"hinge\"\nbody1 = \"a\"\nbody2 = \"b\"\n\
         anchor_in_world_m = [0.5, 0.0, 0.0]\naxis_in_world = [0.0, 1.0, 0.0]\n\
         limits_rad = [-0.3, 0.3]\nlimit_restitution = {e:?}\n"
    )
}

#[test]
fn a_limit_between_two_moving_links_holds_their_relative_angle() {
    for e in [0.0, 1.0] {
        let mut sim = Scene::parse(&double_pendulum(e, H_DOUBLE), "double.toml")
            .unwrap()
            .build()
            .unwrap();
        let (a, b) = (sim.body_id("a").unwrap(), sim.body_id("b").unwrap());
        let (mut worst, mut touched) = (0.0f64, 0);
        for _ in 0..400 {
            sim.step().unwrap();
            // The links' relative turn about y, from their orientations alone.
            let q = sim.bodies()[a].world_from_body_rotation.inverse()
                * sim.bodies()[b].world_from_body_rotation;
            let angle = 2.0 * q.coords.y.atan2(q.coords.w);
            worst = worst.max(angle.abs() - 0.3);
            touched += usize::from(sim.joint_limit_forces()[1][0] != 0.0);
        }
        let drift = sim.diagnostics().energy_error_rel;
        println!("double pendulum e = {e}: overshoot {worst:e} rad, {touched} steps on the limit, energy error {drift:e}");
        assert!(touched > 0 && worst <= 1e-7, "{worst:e}");
        assert!(drift.abs() < 1e-3, "{drift:e}");
    }
}
