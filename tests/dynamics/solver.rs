//! Solver tests: scene files and their errors, physics checks against closed forms, the two
//! scripted acceptance runs of issue 2, and determinism.

use std::path::Path;

use ar_io::csv_write::CsvWriter;

use ar_dynamics::drive::csv as run_csv;
use ar_dynamics::SceneSimulation;
use ar_dynamics::{
    run_scripted, RunSummary, Scene, SceneError, Simulation, StylusScript, StylusSpring,
};
use nalgebra::{Point3, Vector3};

const G: f64 = 9.81;

fn asset(rel: &str) -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(rel)
}

fn scripted_run(scene: &str, script: &str, duration_secs: f64) -> RunSummary {
    let scene = Scene::load(asset(scene)).expect("scene loads");
    let text = std::fs::read_to_string(asset(script)).expect("script readable");
    let script = StylusScript::parse(&text).expect("script parses");
    let mut sim = SceneSimulation::from(scene.build().expect("scene builds"));
    run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        duration_secs,
        |_| 0.0,
        |_| {},
    )
    .expect("run")
}

/// A single rod of length 0.2 m hanging from a hinge about y at the origin.
fn single_pendulum() -> Simulation {
    let text = r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]
[[body]]
name = "rod"
mass_kg = 0.1
inertia_kg_m2 = [3.3333333333333335e-4, 3.3333333333333335e-4, 1.0e-6]
position_m = [0.0, 0.0, -0.1]
shape = { kind = "cylinder", radius_m = 0.005, length_m = 0.2 }
[[joint]]
name = "pivot"
kind = "hinge"
body1 = "ground"
body2 = "rod"
anchor_in_world_m = [0.0, 0.0, 0.0]
axis_in_world = [0.0, 1.0, 0.0]
"#;
    Scene::parse(text, "pendulum.toml")
        .expect("valid")
        .build()
        .expect("builds")
}

/// Gives the single pendulum an angular velocity about y at the bottom.
fn kick(sim: &mut Simulation, omega: f64) {
    let w = Vector3::new(0.0, omega, 0.0);
    let arm = Vector3::new(0.0, 0.0, -0.1);
    sim.set_body_velocity(1, w.cross(&arm), w);
}

// ----- scenes -----

#[test]
fn both_scenes_load_with_the_papers_element_counts() {
    let tp = Scene::load(asset("assets/scenes/ten_pendula.toml")).expect("ten pendula");
    assert_eq!(tp.bodies.len(), 11, "ground + 10 pendula");
    assert_eq!(tp.joints.len(), 10);
    let sim = tp.build().expect("builds");
    let tip = sim.grab_point_in_world(0).expect("grab point");
    assert!((tip - Point3::new(0.0, 0.0, 0.1)).norm() < 1e-12, "{tip}");
    assert!(sim.constraint_norm_m() < 1e-12);

    let cl = Scene::load(asset("assets/scenes/cross_lift.toml")).expect("cross lift");
    assert_eq!(cl.bodies.len(), 12, "ground + 11 bodies");
    let kinds = |k: &str| cl.joints.iter().filter(|j| j.kind.name() == k).count();
    assert_eq!(kinds("hinge"), 16);
    assert_eq!(kinds("slot"), 4);
    assert_eq!(cl.springs.len(), 2);
    assert!(cl.build().expect("builds").constraint_norm_m() < 1e-9);
}

fn scene_error(text: &str) -> String {
    match Scene::parse(text, "bad.toml") {
        Ok(_) => panic!("scene should be rejected:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const ONE_BODY: &str = r#"
[[body]]
name = "b"
mass_kg = 0.1
inertia_kg_m2 = [1e-4, 1e-4, 1e-4]
position_m = [0.0, 0.0, 1.0]
shape = { kind = "sphere", radius_m = 0.01 }
"#;

#[test]
fn unknown_body_is_reported_with_file_line_and_field() {
    let text = format!(
        "{ONE_BODY}\n[[joint]]\nname = \"j\"\nkind = \"ball\"\nbody1 = \"ground\"\nbody2 = \"bb\"\nanchor_in_world_m = [0.0, 0.0, 1.0]\n"
    );
    let e = scene_error(&text);
    assert!(e.starts_with("bad.toml:13:"), "{e}");
    assert!(
        e.contains("joint[0].body2") && e.contains("unknown body `bb`"),
        "{e}"
    );
}

#[test]
fn misspelt_or_missing_fields_are_reported_by_line() {
    let e = scene_error(&ONE_BODY.replace("mass_kg", "mas_kg"));
    assert!(
        e.contains("bad.toml") && e.contains("mas_kg") && e.contains("line 4"),
        "{e}"
    );
    let e = scene_error(&ONE_BODY.replace("position_m = [0.0, 0.0, 1.0]\n", ""));
    assert!(e.contains("position_m"), "{e}");
}

#[test]
fn non_positive_mass_and_inertia_are_rejected() {
    let e = scene_error(&ONE_BODY.replace("mass_kg = 0.1", "mass_kg = 0.0"));
    assert!(
        e.starts_with("bad.toml:4:") && e.contains("body[0].mass_kg"),
        "{e}"
    );
    let e = scene_error(&ONE_BODY.replace("[1e-4, 1e-4, 1e-4]", "[1e-4, -1e-4, 1e-4]"));
    assert!(
        e.starts_with("bad.toml:5:") && e.contains("inertia_kg_m2"),
        "{e}"
    );
}

#[test]
fn anchors_that_do_not_coincide_are_rejected() {
    let ok = format!(
        "{ONE_BODY}\n[[joint]]\nname = \"j\"\nkind = \"ball\"\nbody1 = \"ground\"\nbody2 = \"b\"\nanchor1_in_body_m = [0.0, 0.0, 1.0]\nanchor2_in_body_m = [0.0, 0.0, 0.0]\n"
    );
    assert!(Scene::parse(&ok, "ok.toml").is_ok());
    let bad = ok.replace(
        "anchor2_in_body_m = [0.0, 0.0, 0.0]",
        "anchor2_in_body_m = [0.0, 0.0, 2e-9]",
    );
    let e = scene_error(&bad);
    assert!(
        e.starts_with("bad.toml:15:") && e.contains("anchor2_in_body_m"),
        "{e}"
    );
}

#[test]
fn missing_file_names_the_path() {
    let e = Scene::load("/nonexistent/scene.toml").unwrap_err();
    assert!(matches!(e, SceneError::Io { .. }));
    assert!(e.to_string().contains("/nonexistent/scene.toml"));
}

// ----- physics -----

#[test]
fn compound_pendulum_small_oscillation_period_within_half_a_percent() {
    let mut sim = single_pendulum();
    kick(&mut sim, 0.2); // amplitude ≈ 0.023 rad
    let (m, d, length) = (0.1, 0.1, 0.2);
    let i_pivot = m * length * length / 12.0 + m * d * d;
    let expected = 2.0 * std::f64::consts::PI * (i_pivot / (m * G * d)).sqrt();
    // Upward zero crossings of the angular velocity about y, interpolated linearly.
    let mut crossings = Vec::new();
    let mut prev = sim.bodies()[1].angular_velocity_in_world.y;
    for _ in 0..600 {
        let t0 = sim.time_secs();
        sim.step().expect("step");
        let w = sim.bodies()[1].angular_velocity_in_world.y;
        if prev < 0.0 && w >= 0.0 {
            crossings.push(t0 + sim.dt_secs() * (-prev) / (w - prev));
        }
        prev = w;
    }
    assert!(crossings.len() >= 3, "{crossings:?}");
    let periods = crossings.len() - 1;
    let measured = (crossings[periods] - crossings[0]) / periods as f64;
    let rel = (measured - expected).abs() / expected;
    assert!(
        rel < 0.005,
        "period {measured} s vs {expected} s ({:.3} %)",
        100.0 * rel
    );
}

#[test]
fn hanging_chain_pivot_reaction_equals_total_weight() {
    let mut sim = Scene::load(asset("assets/scenes/ten_pendula.toml"))
        .unwrap()
        .build()
        .unwrap();
    for _ in 0..50 {
        sim.step().expect("step");
    }
    let f = sim.joint_reactions()[0].force_in_world;
    let weight = 10.0 * 0.1 * G;
    assert!(
        (f.z - weight).abs() / weight < 1e-3,
        "pivot reaction {f} N vs {weight} N"
    );
    assert!(f.xy().norm() < 1e-3 * weight, "{f}");
    // Every hinge carries the weight below it.
    for (k, r) in sim.joint_reactions().iter().enumerate() {
        let below = (10 - k) as f64 * 0.1 * G;
        assert!(
            (r.force_in_world.z - below).abs() / below < 1e-3,
            "joint {k}: {r:?}"
        );
    }
}

/// The reaction is the joint's impulse over the step divided by h, so the reference is the
/// mean pivot force over the step, from Newton's law for the centre of mass:
/// mean R = m g + m (v_com(h) − v_com(0)) / h, with the physical pendulum's θ(h), θ'(h)
/// integrated here by RK4 (θ'' = −m g d sin θ / I_pivot) at 1 µs. Near the bottom this is
/// the weight plus the centripetal force, m g + m ω² d, to first order.
#[test]
fn hinge_reaction_at_the_bottom_of_a_swing_is_weight_plus_centripetal_force() {
    let mut sim = single_pendulum();
    let omega = 3.0;
    kick(&mut sim, omega);
    sim.step().expect("step");
    let h = sim.dt_secs();
    let (m, d) = (0.1, 0.1);
    // The scene's inertia about the centre (a 0.2 m rod, m L² / 12), moved to the pivot.
    let i_pivot = m * 0.2 * 0.2 / 12.0 + m * d * d;
    let accel = |theta: f64| -m * G * d * theta.sin() / i_pivot;
    let (mut theta, mut rate) = (0.0f64, omega);
    let n = 10_000;
    let dt = h / n as f64;
    for _ in 0..n {
        let (k1x, k1v) = (rate, accel(theta));
        let (k2x, k2v) = (rate + 0.5 * dt * k1v, accel(theta + 0.5 * dt * k1x));
        let (k3x, k3v) = (rate + 0.5 * dt * k2v, accel(theta + 0.5 * dt * k2x));
        let (k4x, k4v) = (rate + dt * k3v, accel(theta + dt * k3x));
        theta += dt / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
        rate += dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    }
    // The centre of mass at d (sin θ, ·, −cos θ): its vertical velocity is d θ' sin θ, its
    // horizontal one d θ' cos θ (ω0 d at the start).
    let expected_z = m * G + m * d * rate * theta.sin() / h;
    let expected_x_magnitude = m * d * (omega - rate * theta.cos()) / h;
    let f = sim.joint_reactions()[0].force_in_world;
    assert!((expected_z - (m * G + m * omega * omega * d)).abs() < 1e-3 * expected_z);
    let rel_z = (f.z - expected_z).abs() / expected_z;
    let rel_x = (f.x.abs() - expected_x_magnitude).abs() / expected_x_magnitude;
    // The solver gives 9.8e-5 (z) and 1.0e-3 (x): the first-order step's error against RK4.
    assert!(
        rel_z < 3e-4,
        "reaction {f} N vs {expected_z} N vertically ({rel_z:e})"
    );
    assert!(
        rel_x < 3e-3,
        "reaction {f} N vs {expected_x_magnitude} N horizontally ({rel_x:e})"
    );
}

#[test]
fn free_fall_follows_the_parabola_and_conserves_energy() {
    let mut sim = Scene::parse(ONE_BODY, "free.toml")
        .unwrap()
        .build()
        .unwrap();
    sim.set_body_velocity(1, Vector3::new(0.3, 0.0, 1.0), Vector3::new(0.0, 0.0, 2.0));
    for _ in 0..100 {
        sim.step().expect("step");
        assert!(
            sim.diagnostics().energy_error_rel.abs() < 1e-9,
            "{:?}",
            sim.diagnostics()
        );
    }
    let t = sim.time_secs();
    let p = sim.bodies()[1].position_in_world;
    let expected = Vector3::new(0.3 * t, 0.0, 1.0 + t - 0.5 * G * t * t);
    assert!((p - expected).norm() < 1e-9, "{p} vs {expected}");
}

fn spring_scene(stiffness: f64, damping: f64) -> Simulation {
    let text = format!(
        r#"
gravity_m_per_s2 = [0.0, 0.0, 0.0]
{ONE_BODY}
[[spring]]
name = "s"
body1 = "ground"
body2 = "b"
point1_in_world_m = [0.0, 0.0, 0.0]
point2_in_world_m = [0.0, 0.0, 1.0]
rest_length_m = 0.99
stiffness_n_per_m = {stiffness}
damping_n_s_per_m = {damping}
"#
    );
    Scene::parse(&text, "spring.toml").unwrap().build().unwrap()
}

#[test]
fn conservative_spring_oscillator_conserves_energy() {
    // ω h = 0.32: resolved; the implicit-midpoint spring keeps the energy.
    let mut sim = spring_scene(100.0, 0.0);
    let mut worst = 0.0_f64;
    let mut lowest = f64::INFINITY;
    for _ in 0..500 {
        sim.step().expect("step");
        worst = worst.max(sim.diagnostics().energy_error_rel.abs());
        lowest = lowest.min(sim.bodies()[1].position_in_world.z);
    }
    assert!(worst < 1e-6, "energy error {worst}");
    assert!(
        (lowest - 0.98).abs() < 1e-3,
        "the 1 cm stretch swings to 0.98 m, got {lowest}"
    );
}

#[test]
fn stiff_springs_are_stable_at_the_default_step() {
    // 4e4 N/m on 0.1 kg: ω h ≈ 6.3, far beyond explicit stability.
    let mut sim = spring_scene(4.0e4, 20.0);
    for _ in 0..300 {
        sim.step().expect("step");
        let d = sim.diagnostics();
        assert!(d.energy_error_rel.abs() < 1e-6, "{d:?}");
    }
    let z = sim.bodies()[1].position_in_world.z;
    assert!(
        (z - 0.99).abs() < 1e-3,
        "settles near the rest length, z = {z}"
    );
    // The stylus spring at 1e4 N/m pulling a 0.1 kg free body.
    let mut sim = Scene::parse(ONE_BODY, "free.toml")
        .unwrap()
        .build()
        .unwrap();
    sim.set_stylus_target(Point3::new(0.0, 0.0, 1.0), Vector3::zeros());
    sim.attach_stylus_to_grab_point(0, 1e4, 0.0).unwrap_err();
    sim.attach_stylus(ar_dynamics::StylusAttachment {
        body: 1,
        point_in_body: Vector3::new(0.0, 0.0, 0.0),
        stiffness_n_per_m: 1e4,
        damping_n_s_per_m: 0.0,
    })
    .unwrap();
    sim.set_stylus_target(Point3::new(0.02, 0.0, 0.99), Vector3::new(0.1, 0.0, 0.0));
    for _ in 0..300 {
        sim.step().expect("step");
        let d = sim.diagnostics();
        assert!(d.energy_error_rel.abs() < 1e-6, "{d:?}");
        let gap = (sim.stylus_point_in_world().unwrap()
            - sim.stylus_target().unwrap().position_in_world)
            .norm();
        assert!(gap < 0.05, "gap {gap}");
    }
}

// ----- acceptance runs -----

#[test]
fn acceptance_1_ten_pendula_drag() {
    let s = scripted_run(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        14.0,
    );
    eprintln!("{s:?}");
    // Within 10× of what the solver achieves (measured: grab 0.132 mm, |psi| 2.04e-8 m,
    // energy 1.0e-5); the limits were 5 mm, 1e-4 m and 1 %, which a 100–1000× regression
    // passed.
    assert!(s.max_grab_distance_m < 1.3e-3, "{s:?}");
    assert!(s.max_constraint_norm_after_release_m < 2e-7, "{s:?}");
    assert!(s.max_constraint_norm_m < 2e-7, "{s:?}");
    assert!(s.max_abs_energy_error_rel < 1e-4, "{s:?}");
}

#[test]
fn acceptance_2_cross_lift_lift() {
    let s = scripted_run(
        "assets/scenes/cross_lift.toml",
        "assets/scripts/cross_lift_lift.csv",
        10.0,
    );
    eprintln!("{s:?}");
    // Within 10× of what the solver achieves (measured: |psi| 2.35e-8 m, energy 9.8e-8);
    // the limits were 1e-4 m and 2 %.
    assert!(s.max_constraint_norm_after_release_m < 2.5e-7, "{s:?}");
    assert!(s.max_constraint_norm_m < 2.5e-7, "{s:?}");
    assert!(s.max_abs_energy_error_rel < 1e-6, "{s:?}");
}

#[test]
fn two_runs_give_bit_identical_csvs() {
    let csv = || {
        let scene = Scene::load(asset("assets/scenes/ten_pendula.toml")).unwrap();
        let text = std::fs::read_to_string(asset("assets/scripts/ten_pendula_drag.csv")).unwrap();
        let script = StylusScript::parse(&text).unwrap();
        let mut sim = SceneSimulation::from(scene.build().unwrap());
        let mut out = CsvWriter::new(Vec::new());
        out.write_fields(run_csv::csv_header(&sim)).unwrap();
        run_scripted(
            &mut sim,
            Some(&script),
            StylusSpring::default(),
            4.5,
            |_| 0.0,
            |sim| run_csv::csv_row(sim, &mut out).unwrap(),
        )
        .unwrap();
        String::from_utf8(out.into_inner().unwrap()).unwrap()
    };
    let (a, b) = (csv(), csv());
    assert_eq!(a.lines().count(), 451);
    assert!(a == b, "the two CSVs differ");
}

/// Regression: in three-dimensional motion the chain used to gain energy without bound (the
/// world angular velocity was kept while the body, and with it the inertia, turned: +70 % and
/// then NaN within a minute). Dragging the tip out of the hinges' plane and letting the chain
/// swing for 30 s must keep the energy balance and the joints.
#[test]
fn an_out_of_plane_swing_of_the_ten_pendula_keeps_energy_and_joints() {
    let script = StylusScript::parse(
        "t,dx,dy,dz,grab\n0,0,0,0,0\n1,0,0,0,1\n3,0.1,0.06,0.05,1\n4,0.1,0.06,0.05,0\n30,0.1,0.06,0.05,0\n",
    )
    .expect("script parses");
    let scene = Scene::load(asset("assets/scenes/ten_pendula.toml")).expect("scene loads");
    let mut sim = SceneSimulation::from(scene.build().expect("scene builds"));
    let mut max_abs_y = 0.0_f64;
    let s = run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        30.0,
        |_| 0.0,
        |sim| {
            let y = sim.grab_point_in_world(0).map_or(0.0, |p| p.y);
            max_abs_y = max_abs_y.max(y.abs());
        },
    )
    .expect("run");
    assert!(
        max_abs_y > 0.05,
        "the swing left the plane by only {max_abs_y} m"
    );
    assert!(
        s.max_constraint_norm_after_release_m < 1e-6,
        "max |psi| after release {} m",
        s.max_constraint_norm_after_release_m
    );
    assert!(
        s.max_abs_energy_error_rel < 0.01,
        "max |energy error| {}",
        s.max_abs_energy_error_rel
    );
}

/// Regression: after the acceptance drag a long free swing gained energy (16 % after 60 s,
/// then a blow-up) because three row refreshes left the midpoint identities unconverged.
/// The refreshes now converge (Newton gain) and a step whose rows do not is split.
#[test]
fn a_minute_of_free_swing_after_the_drag_keeps_the_energy_balance() {
    let s = scripted_run(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        60.0,
    );
    eprintln!("{s:?}");
    assert!(s.max_constraint_norm_after_release_m < 1e-6, "{s:?}");
    assert!(s.max_abs_energy_error_rel < 1e-3, "{s:?}");
}

/// Clipping and releasing the stylus make the previous step's impulses useless as a guess; the
/// Newton gain then starts from the step's first solve. Without it the plain row refreshes of
/// the release step diverged on a 100-link chain (contraction 0.15, 0.2, then growth) and the
/// step was split. The acceptance drag on the generated 100-link chain, up to 0.5 s after the
/// release (measured: no split step, max |psi| 1.6e-8 m, energy error 2.6e-6 of E_ref).
#[test]
fn the_stylus_release_on_a_100_link_chain_converges_without_splitting() {
    let scene = ar_dynamics::scene::generate::chain_toml(100).expect("chain");
    let mut sim = SceneSimulation::from(
        Scene::parse(&scene, "chain100.toml")
            .and_then(|s| s.build())
            .expect("chain builds"),
    );
    let text = std::fs::read_to_string(asset("assets/scripts/ten_pendula_drag.csv")).unwrap();
    let script = StylusScript::parse(&text).expect("script parses");
    let s = run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        4.5,
        |_| 0.0,
        |_| {},
    )
    .expect("run");
    eprintln!("{s:?}");
    assert_eq!(s.split_steps, 0, "{s:?}");
    assert!(s.max_constraint_norm_m < 2e-7, "{s:?}");
    assert!(s.max_abs_energy_error_rel < 5e-5, "{s:?}");
}

/// Without row refreshes (`--row-refreshes 0`) the rows never turn within a step, so the
/// Newton gain, which anticipates that turning, must stay off: with it the chain blew up.
#[test]
fn without_row_refreshes_the_drag_stays_bounded() {
    let scene = Scene::load(asset("assets/scenes/ten_pendula.toml")).expect("scene loads");
    let mut params = scene.params;
    params.max_row_refreshes = 0;
    let text = std::fs::read_to_string(asset("assets/scripts/ten_pendula_drag.csv")).unwrap();
    let script = StylusScript::parse(&text).expect("script parses");
    let mut sim = SceneSimulation::from(scene.build_with(params).expect("scene builds"));
    let s = run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        14.0,
        |_| 0.0,
        |_| {},
    )
    .expect("run");
    eprintln!("{s:?}");
    assert!(s.max_constraint_norm_m < 1e-6, "{s:?}");
    // Unconverged midpoint identities cost energy accuracy (9.6 % measured), not stability.
    assert!(s.max_abs_energy_error_rel < 0.2, "{s:?}");
}

/// Regression: the steam engines' planar loops have redundant rows (15 loop rows, 6
/// independent), whose null-space impulses grew like 1/ε of the regularisation; row
/// refreshes applied them along turned rows and diverged, and 60 s of either engine split
/// 16–18 % of its steps at 7 solves per step. The regularisation now grows where refreshes
/// diverge. Measured over 20 s: 2 split steps each, 2.6 and 2.3 solves per step, ‖ψ‖ 2e-8 m.
#[test]
fn the_steam_engines_loops_converge_without_splitting() {
    for name in ["steam_engine", "toy_steam_engine"] {
        let mut sim = SceneSimulation::from(
            Scene::load(asset(&format!("assets/scenes/{name}.toml")))
                .expect("scene loads")
                .build()
                .expect("scene builds"),
        );
        let s = run_scripted(
            &mut sim,
            None,
            StylusSpring::default(),
            20.0,
            |_| 0.0,
            |_| {},
        )
        .expect("run");
        let solves_per_step = s.total_iterations as f64 / s.steps as f64;
        assert!(s.split_steps <= 3, "{name}: {s:?}");
        assert!(
            solves_per_step < 3.0,
            "{name}: {solves_per_step} solves per step"
        );
        assert!(s.max_constraint_norm_m < 5e-8, "{name}: {s:?}");
        assert!(s.max_abs_energy_error_rel < 3e-7, "{name}: {s:?}");
    }
}
