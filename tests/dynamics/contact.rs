//! Contact: the acceptance cases of issue 15 against closed forms (corner of Jonquet et al.,
//! incline, bowling ball, Newton's cradle, billiard).

use std::path::Path;

use ar_dynamics::contact::InequalityMethod;
use ar_dynamics::SceneSimulation;
use ar_dynamics::{Scene, Simulation};
use nalgebra::Vector3;

fn scene(name: &str) -> Scene {
    Scene::load(format!(
        "{}/assets/scenes/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    ))
    .unwrap()
}

fn with_method(name: &str, method: InequalityMethod) -> Simulation {
    let mut s = scene(name);
    s.contact.as_mut().unwrap().method = method;
    s.build().unwrap()
}

/// Signed distances of a sphere centre c (radius r) to the corner's planes, minus r:
/// (x − y = 0 plane, y = 0 plane).
fn corner_gaps(c: &Vector3<f64>, r: f64) -> (f64, f64) {
    ((c.x - c.y) / 2f64.sqrt() - r, c.y - r)
}

const R: f64 = 0.05;

#[test]
fn corner_right_algorithm_keeps_both_cases_in_touch() {
    let mut sim = with_method("corner.toml", InequalityMethod::Right);
    let slides = sim.body_id("slides").unwrap();
    let stuck = sim.body_id("stuck").unwrap();
    let x0 = sim.bodies()[slides].position_in_world.x;
    let start_stuck = sim.bodies()[stuck].position_in_world;
    let mut worst_gap = f64::INFINITY;
    let mut worst_x_rel = 0.0f64;
    let mut worst_force = 0.0f64;
    for _ in 0..100 {
        sim.step().unwrap();
        let t = sim.time_secs();
        for b in [slides, stuck] {
            let (g1, g2) = corner_gaps(&sim.bodies()[b].position_in_world, R);
            worst_gap = worst_gap.min(g1).min(g2);
        }
        let x = sim.bodies()[slides].position_in_world.x;
        let exact = x0 + 0.5 * (2.0 / 2.0) * t * t;
        worst_x_rel = worst_x_rel.max(((x - x0) - (exact - x0)).abs() / (exact - x0));
        // The stuck sphere's normal forces: √2 N on x − y = 0 and 3 N on y = 0.
        let mut forces = Vec::new();
        for c in sim.contact_report() {
            let body = sim.model().contact.as_ref().unwrap().colliders[c.shape1].body;
            if body == stuck && c.normal_force_n > 0.0 {
                forces.push((c.shape2, c.normal_force_n));
            }
        }
        forces.sort_by_key(|f| f.0);
        assert_eq!(
            forces.len(),
            2,
            "stuck sphere touches both planes at t = {t}"
        );
        worst_force = worst_force
            .max((forces[0].1 - 3.0).abs())
            .max((forces[1].1 - 2f64.sqrt()).abs());
    }
    let moved = (sim.bodies()[stuck].position_in_world - start_stuck).norm();
    println!("right: min gap {worst_gap:e} m, x(t) rel. error {worst_x_rel:e}, force error {worst_force:e} N, stuck moved {moved:e} m");
    assert!(worst_gap >= -1e-9, "gap {worst_gap}");
    assert!(worst_x_rel < 1e-6, "x(t) relative error {worst_x_rel}");
    assert!(worst_force < 1e-6, "normal forces off by {worst_force} N");
    assert!(moved < 1e-9);
}

fn worst_gaps(method: InequalityMethod) -> ((f64, f64), (f64, f64)) {
    let mut sim = with_method("corner.toml", method);
    let slides = sim.body_id("slides").unwrap();
    let stuck = sim.body_id("stuck").unwrap();
    let mut w = [(f64::INFINITY, f64::INFINITY); 2];
    for _ in 0..10 {
        sim.step().unwrap();
        for (k, b) in [slides, stuck].into_iter().enumerate() {
            let (g1, g2) = corner_gaps(&sim.bodies()[b].position_in_world, R);
            w[k] = (w[k].0.min(g1), w[k].1.min(g2));
        }
    }
    (w[0], w[1])
}

#[test]
fn corner_platt_sinks_the_sliding_sphere_and_tendency_lets_the_stuck_one_cross() {
    let (platt_slides, platt_stuck) = worst_gaps(InequalityMethod::Platt);
    let (tend_slides, tend_stuck) = worst_gaps(InequalityMethod::Tendency);
    println!("platt: slides (g1, g2) {platt_slides:?}, stuck {platt_stuck:?}");
    println!("tendency: slides {tend_slides:?}, stuck {tend_stuck:?}");
    // Platt: the sliding case goes below y = 0 (by ½ (f/m) h² = 2.5e-5 m with h = 0.01 s).
    assert!(platt_slides.1 < -1e-5, "{platt_slides:?}");
    // Tendency: the stuck case crosses x − y = 0.
    assert!(tend_stuck.0 < -1e-5, "{tend_stuck:?}");
    // Each algorithm handles the other case.
    assert!(tend_slides.1 >= -1e-9 && platt_stuck.0 >= -1e-9 && platt_stuck.1 >= -1e-9);
}

#[test]
fn incline_box_stays_when_tan_theta_below_mu_and_slides_with_closed_form_acceleration() {
    let mut sim = scene("incline.toml").build().unwrap();
    let stays = sim.body_id("stays").unwrap();
    let slides = sim.body_id("slides").unwrap();
    let p0 = sim.bodies()[stays].position_in_world;
    let s0 = sim.bodies()[slides].position_in_world;
    let th = 20f64.to_radians();
    let a = 9.81 * (th.sin() - 0.2 * th.cos());
    let downhill = Vector3::new(th.cos(), 0.0, -th.sin());
    let mut worst_move = 0.0f64;
    let mut worst_rel = 0.0f64;
    let mut worst_pen = 0.0f64;
    let steps = 500;
    for _ in 0..steps {
        sim.step().unwrap();
        let t = sim.time_secs();
        worst_move = worst_move.max((sim.bodies()[stays].position_in_world - p0).norm());
        let d = (sim.bodies()[slides].position_in_world - s0).dot(&downhill);
        let exact = 0.5 * a * t * t;
        worst_rel = worst_rel.max((d - exact).abs() / exact);
        worst_pen = worst_pen.max(sim.max_penetration_m());
    }
    println!("incline: stays moved {worst_move:e} m, slide distance rel. error {worst_rel:e}, penetration {worst_pen:e} m");
    assert!(worst_move < 1e-6, "{worst_move}");
    assert!(worst_rel < 0.01, "{worst_rel}");
    assert!(worst_pen < 1e-6, "{worst_pen}");
}

#[test]
fn bowling_ball_ends_rolling_at_five_sevenths_of_its_speed() {
    let mut sim = scene("bowling.toml").build().unwrap();
    let ball = sim.body_id("ball").unwrap();
    let mut worst_pen = 0.0f64;
    for _ in 0..100 {
        sim.step().unwrap();
        worst_pen = worst_pen.max(sim.max_penetration_m());
    }
    let b = &sim.bodies()[ball];
    let v = b.linear_velocity_in_world.x;
    // Rolling: the contact point is at rest, v = ω r.
    let slip = b.linear_velocity_in_world
        + b.angular_velocity_in_world
            .cross(&Vector3::new(0.0, 0.0, -0.1));
    println!(
        "bowling: v = {v} m/s (5/7·3 = {}), slip {:e} m/s, penetration {worst_pen:e} m",
        15.0 / 7.0,
        slip.norm()
    );
    assert!((v - 15.0 / 7.0).abs() / (15.0 / 7.0) < 0.01, "{v}");
    assert!(slip.norm() < 1e-9);
    assert!(worst_pen < 1e-6);
}

#[test]
fn newtons_cradle_passes_the_velocity_to_the_last_ball() {
    let mut sim = scene("newtons_cradle.toml").build().unwrap();
    let ids: Vec<_> = (1..=5)
        .map(|i| sim.body_id(&format!("ball{i}")).unwrap())
        .collect();
    let momentum = |s: &Simulation| -> Vector3<f64> {
        s.bodies()
            .iter()
            .skip(1)
            .map(|b| b.linear_velocity_in_world * b.mass_kg)
            .sum()
    };
    let p0 = momentum(&sim);
    let k0 = sim.kinetic_energy_j();
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let v: Vec<f64> = ids
        .iter()
        .map(|&i| sim.bodies()[i].linear_velocity_in_world.x)
        .collect();
    let dp = (momentum(&sim) - p0).norm();
    let dk = (sim.kinetic_energy_j() - k0).abs() / k0;
    println!("cradle: velocities {v:?}, momentum error {dp:e}, energy error {dk:e}");
    assert!(v[4] >= 0.97, "{v:?}");
    assert!(v[..4].iter().all(|x| x.abs() <= 0.05), "{v:?}");
    assert!(dp < 1e-9 && dk < 0.01);
}

#[test]
fn billiard_break_keeps_gaps_forces_energy_and_momentum() {
    let mut sim = scene("billiard.toml").build().unwrap();
    let planes: Vec<usize> = {
        let m = sim.model().contact.as_ref().unwrap();
        (0..m.colliders.len())
            .filter(|&i| m.colliders[i].body == 0)
            .collect()
    };
    let momentum = |s: &Simulation| -> Vector3<f64> {
        s.bodies()
            .iter()
            .skip(1)
            .map(|b| b.linear_velocity_in_world * b.mass_kg)
            .sum()
    };
    let mut kinetic = sim.kinetic_energy_j();
    let mut p = momentum(&sim);
    let (mut worst_pen, mut worst_rise, mut worst_dp, mut min_force) =
        (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut wall_steps = 0;
    let mut ball_steps = 0;
    let mut asleep = 0;
    let mut sleep_steps = 0;
    for _ in 0..200 {
        sim.step().unwrap();
        // A step in which balls fell asleep took their last velocity (below the sleep
        // speed) away, booked as dissipated: momentum is not kept there.
        let fell_asleep = sim.sleeping_bodies() > asleep;
        asleep = sim.sleeping_bodies();
        sleep_steps += usize::from(fell_asleep);
        worst_pen = worst_pen.max(sim.max_penetration_m());
        let k = sim.kinetic_energy_j();
        worst_rise = worst_rise.max(k - kinetic);
        kinetic = k;
        let report = sim.contact_report();
        min_force = report
            .iter()
            .map(|c| c.normal_force_n)
            .fold(min_force, f64::min);
        let walls = report.iter().any(|c| {
            c.normal_force_n != 0.0 && (planes.contains(&c.shape1) || planes.contains(&c.shape2))
        });
        let balls = report.iter().any(|c| c.normal_force_n > 0.0);
        let q = momentum(&sim);
        if walls {
            wall_steps += 1;
        } else if !fell_asleep {
            if balls {
                ball_steps += 1;
            }
            worst_dp = worst_dp.max((q - p).norm());
        }
        p = q;
    }
    println!(
        "billiard: penetration {worst_pen:e} m, largest kinetic energy rise {worst_rise:e} J, \
         smallest normal force {min_force:e} N, momentum change without wall contact {worst_dp:e} \
         ({ball_steps} steps with ball-ball contact only, {wall_steps} with wall contact, \
         {sleep_steps} in which balls fell asleep), final E_k {kinetic} J"
    );
    assert!(
        wall_steps > 0 && ball_steps > 0,
        "the break reaches the walls"
    );
    assert!(worst_pen <= 1e-6);
    assert!(worst_rise <= 1e-12);
    assert!(min_force >= 0.0);
    assert!(worst_dp <= 1e-9);
}

/// The chain falling onto the desk keeps its joints and its contacts closed together: the
/// projection at the end of each step is one Newton step on the joints' ψ and the contacts'
/// gaps (see `sim::solver::contact_projection`). Measured: ‖ψ‖ ≤ 9.9e-11 m and penetration
/// ≤ 9.0e-11 m over 20 s; before, projecting the contacts and then the joints undid each
/// other and the run stopped at 7.18 s with ‖ψ‖ 1.0e-5 m after the deepest split.
#[test]
fn ten_pendula_desk_keeps_joints_and_contacts_closed_together() {
    let mut sim = scene("ten_pendula_desk.toml").build().unwrap();
    let (mut psi, mut pen, mut touching) = (0.0f64, 0.0f64, 0usize);
    // 1.5 s: the fall, the first strikes (from 0.24 s) and the links settling onto the desk.
    for _ in 0..150 {
        sim.step().unwrap();
        psi = psi.max(sim.diagnostics().constraint_norm_m);
        pen = pen.max(sim.max_penetration_m());
        touching += usize::from(!sim.contact_report().is_empty());
    }
    println!("ten_pendula_desk 1.5 s: max |psi| {psi:e} m, max penetration {pen:e} m, {touching} steps in contact");
    assert!(touching > 100, "the chain reaches the desk");
    assert!(psi <= 1e-9, "|psi| {psi:e} m");
    assert!(pen <= 1e-9, "penetration {pen:e} m");
}

/// Acceptance 6 of issue 15 (the fall): over 20 s ‖ψ‖ and penetration stay under 1e-9 m,
/// the energy balance closes within 1e-3 of E_ref and the dissipation runs backwards by under
/// 1e-4 J in all; the links that reach the desk lie on it at rest while the upper ones still
/// swing from the pivot (no joint damping). Measured: ‖ψ‖ 1.0e-10 m, penetration 1.0e-10 m,
/// balance 5.9e-4 of E_ref, 2.5e-5 J backwards, p8–p10 at z = r within 1.6e-8 m and under
/// 2.1e-6 m/s. With Alg. 3's active set on the coupled contacts and joints instead of the
/// solve through the mechanism, the active set did not settle on the lying chain, and the
/// projection lifted out the penetration that left: the balance drifted by 24 % of E_ref.
#[test]
fn ten_pendula_desk_chain_lies_on_the_desk() {
    let mut sim = scene("ten_pendula_desk.toml").build().unwrap();
    let (mut psi, mut pen, mut energy) = (0.0f64, 0.0f64, 0.0f64);
    let (mut backwards, mut last_dissipated) = (0.0f64, 0.0f64);
    for _ in 0..2000 {
        sim.step().unwrap();
        let d = sim.diagnostics();
        psi = psi.max(d.constraint_norm_m);
        pen = pen.max(sim.max_penetration_m());
        energy = energy.max(d.energy_error_rel.abs());
        backwards += (last_dissipated - d.dissipated_j).max(0.0);
        last_dissipated = d.dissipated_j;
    }
    let (mut height, mut speed) = (0.0f64, 0.0f64);
    for name in ["p8", "p9", "p10"] {
        let b = &sim.bodies()[sim.body_id(name).unwrap()];
        height = height.max((b.position_in_world.z - 0.004).abs());
        speed = speed.max(b.linear_velocity_in_world.norm());
    }
    println!("ten_pendula_desk 20 s: max |psi| {psi:e} m, penetration {pen:e} m, energy error {energy:e}, dissipation backwards {backwards:e} J; p8-p10 off the desk by {height:e} m, speed {speed:e} m/s");
    assert!(
        psi < 1e-9 && pen <= 1e-9,
        "|psi| {psi:e} m, penetration {pen:e} m"
    );
    assert!(energy < 1e-3, "energy error {energy:e}");
    assert!(backwards < 1e-4, "{backwards:e} J backwards");
    assert!(height < 2e-8 && speed < 1e-5, "{height:e} m, {speed:e} m/s");
}

/// Acceptance 6 of issue 15 (the drag): the stylus clips to the tip lying on the desk at 3 s,
/// drags it 10 cm sideways across the desk and releases it at 6 s
/// (`assets/scripts/ten_pendula_desk_drag.csv`). Measured: ‖ψ‖ 1.0e-10 m, penetration
/// 1.0e-10 m, the balance (with the user's work through the spring) within 3.5e-4 of E_ref,
/// 7.5e-4 J backwards, no split step; the tip ends 10.0 cm across.
#[test]
fn ten_pendula_desk_chain_is_dragged_across_the_desk() {
    use ar_dynamics::{run_scripted, StylusScript, StylusSpring};
    let sim = scene("ten_pendula_desk.toml").build().unwrap();
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("assets/scripts/ten_pendula_desk_drag.csv");
    let script = StylusScript::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut pen = 0.0f64;
    let mut sim = SceneSimulation::from(sim);
    let summary = run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        12.0,
        |_| 0.0,
        |s| {
            pen = pen.max(s.max_penetration_m());
        },
    )
    .unwrap();
    let tip_y = sim.grab_point_in_world(0).unwrap().y;
    println!("ten_pendula_desk drag: {summary:?}, penetration {pen:e} m, tip at y = {tip_y} m");
    assert!(
        summary.max_constraint_norm_m < 1e-9 && pen <= 1e-9,
        "{summary:?} {pen:e}"
    );
    assert!(summary.max_abs_energy_error_rel < 1e-3, "{summary:?}");
    assert!(summary.dissipation_reversed_j < 2e-3, "{summary:?}");
    assert_eq!(summary.split_steps, 0);
    assert!(tip_y > 0.07, "the tip is dragged across: y = {tip_y} m");
}

#[test]
fn contact_runs_are_bit_for_bit_deterministic() {
    let run = || {
        let mut sim = scene("billiard.toml").build().unwrap();
        for _ in 0..100 {
            sim.step().unwrap();
        }
        sim.bodies()
            .iter()
            .flat_map(|b| {
                let p = b.position_in_world;
                let q = b.world_from_body_rotation;
                [p.x, p.y, p.z, q.i, q.j, q.k, q.w]
            })
            .map(f64::to_bits)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// One ball above the desk: a scene needs a body (an empty scene is refused).
const BALL: &str = "[[body]]\nname = \"ball\"\nmass_kg = 0.1\ninertia_kg_m2 = [1e-5, 1e-5, 1e-5]\nposition_m = [0.0, 0.0, 0.1]\nshape = { kind = \"sphere\", radius_m = 0.02 }\n\n";

#[test]
fn pair_materials_and_scene_checks() {
    use ar_dynamics::contact::Material;
    let a = Material {
        friction: 0.04,
        restitution: 0.2,
        spin_friction_m: 1e-4,
    };
    let b = Material {
        friction: 1.0,
        restitution: 0.7,
        spin_friction_m: 0.0,
    };
    let p = a.pair(&b);
    assert!((p.friction - 0.2).abs() < 1e-15 && p.restitution == 0.7);
    assert_eq!(p.spin_friction_m, 1e-4);
    let bad = |extra: &str| {
        let text = format!(
            "{BALL}[[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\npoint_in_world_m = [0.0, 0.0, 0.0]\n{extra}"
        );
        Scene::parse(&text, "test.toml")
            .err()
            .map(|e| e.to_string())
    };
    assert!(bad("").is_none());
    assert!(bad("restitution = 1.5").unwrap().contains("restitution"));
    assert!(bad("friction = -1.0").unwrap().contains("friction"));
    let zero = Scene::parse(
        &format!(
            "{BALL}[[plane]]\nname = \"p\"\nnormal = [0.0, 0.0, 0.0]\npoint_in_world_m = [0.0, 0.0, 0.0]\n"
        ),
        "t.toml",
    );
    assert!(zero.unwrap_err().to_string().contains("normal"));
    // No [contact], plane or static: no contact model (the shipped scenes step as before).
    assert!(scene("ten_pendula.toml").contact.is_none());
    assert!(scene("corner.toml").contact.is_some());
}

#[test]
fn the_stylus_tip_pushes_a_box_along_the_desk() {
    let text = r#"
[contact]
stylus_tip_radius_m = 0.01

[[plane]]
name = "desk"
normal = [0.0, 0.0, 1.0]
point_in_world_m = [0.0, 0.0, 0.0]
friction = 0.3

[[body]]
name = "box"
mass_kg = 1.0
inertia_kg_m2 = [0.0016667, 0.0016667, 0.0016667]
position_m = [0.0, 0.0, 0.05]
shape = { kind = "box", size_m = [0.1, 0.1, 0.1] }
friction = 0.3
"#;
    let mut sim = Scene::parse(text, "push.toml").unwrap().build().unwrap();
    // The tip (radius 1 cm) starts 1 cm from the box's −x face at mid-height, moving at +0.1 m/s.
    sim.set_stylus_target(
        nalgebra::Point3::new(-0.07, 0.0, 0.05),
        Vector3::new(0.1, 0.0, 0.0),
    );
    let mut pen = 0.0f64;
    let mut energy = 0.0f64;
    for _ in 0..100 {
        sim.step().unwrap();
        pen = pen.max(sim.max_penetration_m());
        energy = energy.max(sim.diagnostics().energy_error_rel.abs());
    }
    let b = &sim.bodies()[1];
    let moved = b.position_in_world.x;
    println!(
        "push: box moved {moved} m (0.09 expected), v = {:?}, penetration {pen:e} m, energy error {energy:e}, user work {} J",
        b.linear_velocity_in_world, sim.diagnostics().user_work_j
    );
    assert!((moved - 0.09).abs() < 1e-3, "{moved}");
    assert!((b.linear_velocity_in_world.x - 0.1).abs() < 1e-9);
    assert!(pen <= 1e-6);
    assert!(energy < 1e-6);
}

/// Acceptance 7: the pile of `assets/scenes/pile.toml` (288 spheres and cubes dropped into a
/// bin) settles and stays: from 5 s to 6 s the deepest penetration stays within 1e-4 m and
/// the kinetic energy under 1e-6 J, no body leaves the bin, and the energy balance closes
/// within 1 % of E_ref. Achieved: penetration 1e-7 m over the whole run (2.3e-5 m before the
/// stall rule and the linearised projection of issue 42), asleep from before 5 s, balance
/// 0.43 % (0.26 % before the focused sweeps).
#[test]
#[ignore = "release build, ~30 s: cargo test -p ar-dynamics --release --test dynamics contact::pile -- --ignored"]
fn the_pile_settles_and_stays() {
    let mut sim = scene("pile.toml").build().unwrap();
    let h = sim.dt_secs();
    let (mut pen, mut kinetic, mut energy) = (0.0f64, 0.0f64, 0.0f64);
    for k in 1..=600 {
        sim.step().unwrap();
        energy = energy.max(sim.diagnostics().energy_error_rel.abs());
        if k as f64 * h >= 5.0 - 1e-9 {
            pen = pen.max(sim.max_penetration_m());
            kinetic = kinetic.max(sim.kinetic_energy_j());
        }
    }
    let out = sim
        .bodies()
        .iter()
        .filter(|b| b.is_dynamic())
        .filter(|b| {
            let p = b.position_in_world;
            p.x.abs() > 0.15 || p.y.abs() > 0.15 || p.z < 0.0
        })
        .count();
    println!(
        "pile 5-6 s: max penetration {pen:.3e} m, max kinetic energy {kinetic:.3e} J, \
         {out} bodies out of the bin, max |energy error| {energy:.3e}"
    );
    assert!(pen <= 1e-4, "penetration {pen} m");
    assert!(kinetic < 1e-6, "kinetic energy {kinetic} J");
    assert_eq!(out, 0);
    assert!(energy < 0.01, "energy error {energy}");
}
