//! Islands and sleeping (issue 42, second bullet): a box dropped on the desk falls asleep
//! exactly [`TIME_TO_SLEEP_SECS`] after it last moved and then holds its pose bit for bit;
//! a sphere dropped on one of four sleeping stacks wakes that stack only; the stylus clipped
//! to a sleeping box wakes it, and so does a load; a swinging pendulum never sleeps; `sleep = false` turns it
//! off; the same run twice is bit-identical.

use ar_dynamics::model::stylus::StylusAttachment;
use ar_dynamics::{Scene, Simulation, SLEEP_SPEED_M_PER_S, TIME_TO_SLEEP_SECS};
use nalgebra::{Point3, Vector3};

const H: f64 = 0.01;
/// The boxes: 30 mm cubes of 30 g (I = m a² / 6), as the pile's.
const BOX: &str = "mass_kg = 0.03\ninertia_kg_m2 = [4.5e-6, 4.5e-6, 4.5e-6]\n\
                   shape = { kind = \"box\", size_m = [0.03, 0.03, 0.03] }\n";
/// A cube's reach: its half diagonal (m).
const BOX_REACH_M: f64 = 0.025980762113533162;

fn build(text: &str) -> Simulation {
    Scene::parse(text, "sleeping.toml")
        .expect("scene parses")
        .build()
        .expect("scene builds")
}

fn desk(contact: &str) -> String {
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n[solver]\ndt_secs = {H}\n{contact}\n\
         [[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\npoint_in_world_m = [0.0, 0.0, 0.0]\n"
    )
}

fn body(name: &str, position: [f64; 3], rest: &str) -> String {
    format!("[[body]]\nname = \"{name}\"\nposition_m = {position:?}\n{rest}")
}

/// Its fastest surface point's speed as the sleep test measures it (m/s).
fn surface_speed(sim: &Simulation, b: usize, reach_m: f64) -> f64 {
    let body = &sim.bodies()[b];
    body.linear_velocity_in_world.norm() + body.angular_velocity_in_world.norm() * reach_m
}

/// Pose and velocity bits of a body.
fn bits(sim: &Simulation, b: usize) -> Vec<u64> {
    let body = &sim.bodies()[b];
    body.position_in_world
        .iter()
        .chain(body.world_from_body_rotation.coords.iter())
        .chain(body.linear_velocity_in_world.iter())
        .chain(body.angular_velocity_in_world.iter())
        .map(|x| x.to_bits())
        .collect()
}

/// A box dropped from 20 mm on the desk, turned a little so that it lands on an edge.
fn dropped_box(contact: &str) -> Simulation {
    build(
        &(desk(contact)
            + &body("box", [0.0, 0.0, 0.035], BOX)
            + "rotation_rad = [0.2, 0.1, 0.0]\n"),
    )
}

#[test]
fn a_box_dropped_on_the_desk_sleeps_after_the_documented_time_and_stays_exactly_still() {
    let mut sim = dropped_box("");
    let b = sim.body_id("box").unwrap();
    let mut last_moving_step = 0;
    let mut asleep_at = None;
    for step in 1..=400 {
        sim.step().unwrap();
        if sim.is_asleep(b) {
            asleep_at = Some(step);
            break;
        }
        if surface_speed(&sim, b, BOX_REACH_M) >= SLEEP_SPEED_M_PER_S {
            last_moving_step = step;
        }
    }
    let asleep_at = asleep_at.expect("the box falls asleep within 4 s");
    assert!(last_moving_step > 10, "the box fell and bounced first");
    let still_steps = (TIME_TO_SLEEP_SECS / H).round() as usize;
    assert_eq!(
        asleep_at,
        last_moving_step + still_steps,
        "asleep {still_steps} steps after it last moved"
    );
    assert_eq!(sim.sleeping_bodies(), 1);
    let kinetic_at_sleep = sim.kinetic_energy_j();
    assert_eq!(kinetic_at_sleep, 0.0, "a sleeping body has no velocity");
    let held = bits(&sim, b);
    let energy_error = sim.diagnostics().energy_drift_j;
    for _ in 0..300 {
        sim.step().unwrap();
        assert!(sim.is_asleep(b));
        assert_eq!(
            bits(&sim, b),
            held,
            "a sleeping body holds its pose bit for bit"
        );
        // Its contacts with the desk are neither detected nor solved.
        assert!(sim.contact_report().is_empty());
        assert_eq!(sim.diagnostics().energy_drift_j, energy_error);
    }
    assert_eq!(sim.most_asleep(), 1);
}

#[test]
fn sleep_false_keeps_every_body_awake() {
    let mut sim = dropped_box("[contact]\nsleep = false\n");
    for _ in 0..300 {
        sim.step().unwrap();
    }
    assert_eq!(sim.most_asleep(), 0);
    assert!(
        !sim.contact_report().is_empty(),
        "the resting box's contacts are solved"
    );
}

/// Four stacks of two boxes resting exactly on each other, 0.3 m apart, and a sphere 3 m
/// above the first stack (it arrives after 0.78 s, when the stacks sleep).
fn stacks_and_sphere() -> Simulation {
    let mut text = desk("");
    for s in 0..4 {
        let x = 0.3 * s as f64;
        text += &body(&format!("low{s}"), [x, 0.0, 0.015], BOX);
        text += &body(&format!("high{s}"), [x, 0.0, 0.045], BOX);
    }
    text += &body(
        "sphere",
        [0.0, 0.0, 3.0],
        "mass_kg = 0.02\ninertia_kg_m2 = [1.8e-6, 1.8e-6, 1.8e-6]\n\
         shape = { kind = \"sphere\", radius_m = 0.015 }\n",
    );
    build(&text)
}

#[test]
fn a_sphere_dropped_on_sleeping_stacks_wakes_only_the_stack_it_touches() {
    let mut sim = stacks_and_sphere();
    let stack = |sim: &Simulation, s: usize| {
        [
            sim.body_id(&format!("low{s}")).unwrap(),
            sim.body_id(&format!("high{s}")).unwrap(),
        ]
    };
    let others: Vec<usize> = (1..4).flat_map(|s| stack(&sim, s)).collect();
    let first = stack(&sim, 0);
    // The stacks fall asleep before the sphere arrives.
    for _ in 0..60 {
        sim.step().unwrap();
    }
    assert_eq!(
        sim.sleeping_bodies(),
        8,
        "the four stacks sleep, the falling sphere does not"
    );
    let held: Vec<Vec<u64>> = others.iter().map(|&b| bits(&sim, b)).collect();
    let mut first_woke = false;
    for _ in 60..200 {
        sim.step().unwrap();
        first_woke |= first.iter().any(|&b| !sim.is_asleep(b));
        for (&b, bits_before) in others.iter().zip(&held) {
            assert!(sim.is_asleep(b), "{} stays asleep", sim.bodies()[b].name);
            assert_eq!(&bits(&sim, b), bits_before);
        }
    }
    assert!(first_woke, "the stack the sphere hit woke");
    let sphere = sim.body_id("sphere").unwrap();
    assert!(
        sim.bodies()[sphere].position_in_world.z < 0.1,
        "the sphere landed on the first stack or beside it"
    );
    let others_asleep = others.iter().filter(|&&b| sim.is_asleep(b)).count();
    assert_eq!(others_asleep, 6);
}

#[test]
fn the_stylus_clipped_to_a_sleeping_box_wakes_it_and_lifts_it() {
    let mut sim = dropped_box("");
    let b = sim.body_id("box").unwrap();
    for _ in 0..300 {
        sim.step().unwrap();
    }
    assert!(sim.is_asleep(b));
    let z0 = sim.bodies()[b].position_in_world.z;
    let top = sim.bodies()[b].position_in_world + Vector3::new(0.0, 0.0, 0.05);
    sim.set_stylus_target(Point3::from(top), Vector3::zeros());
    sim.attach_stylus(StylusAttachment {
        body: b,
        point_in_body: Vector3::zeros(),
        stiffness_n_per_m: 50.0,
        damping_n_s_per_m: 0.5,
    })
    .unwrap();
    sim.step().unwrap();
    assert!(!sim.is_asleep(b), "the stylus woke it");
    for _ in 0..50 {
        sim.step().unwrap();
        assert!(!sim.is_asleep(b), "held by the stylus, it stays awake");
    }
    assert!(
        sim.bodies()[b].position_in_world.z > z0 + 0.01,
        "the stylus lifted it"
    );
}

#[test]
fn a_swinging_pendulum_over_the_desk_never_sleeps() {
    let text = desk("")
        + &body(
            "bob",
            [0.3, 0.0, 0.5],
            "mass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
             shape = { kind = \"sphere\", radius_m = 0.05 }\n",
        )
        + "[[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\nbody2 = \"bob\"\n\
           anchor_in_world_m = [0.0, 0.0, 0.5]\naxis_in_world = [0.0, 1.0, 0.0]\n";
    let mut sim = build(&text);
    let bob = sim.body_id("bob").unwrap();
    let mut turning_points = 0;
    let mut last_vx = 0.0f64;
    for _ in 0..500 {
        sim.step().unwrap();
        assert!(!sim.is_asleep(bob));
        let vx = sim.bodies()[bob].linear_velocity_in_world.x;
        // It passes through rest at each turning point, and swings on.
        if vx.signum() != last_vx.signum() && last_vx != 0.0 {
            turning_points += 1;
        }
        last_vx = vx;
    }
    assert_eq!(sim.most_asleep(), 0);
    assert!(
        turning_points >= 6,
        "{turning_points} turning points in 5 s"
    );
}

#[test]
fn sleeping_runs_are_bit_identical() {
    let run = || {
        let mut sim = stacks_and_sphere();
        let mut out = Vec::new();
        for _ in 0..200 {
            sim.step().unwrap();
            for b in 0..sim.bodies().len() {
                out.extend(bits(&sim, b));
            }
            out.push(sim.sleeping_bodies() as u64);
        }
        out
    };
    assert_eq!(run(), run());
}

/// A load (the wind's path: `apply_external_force`) on a sleeping box wakes it; 0.5 N
/// exceeds its friction μ m g = 0.147 N, so it slides off at once.
#[test]
fn a_load_wakes_a_sleeping_box() {
    let mut sim = dropped_box("");
    let b = sim.body_id("box").unwrap();
    for _ in 0..300 {
        sim.step().unwrap();
    }
    assert!(sim.is_asleep(b));
    let centre = Point3::from(sim.bodies()[b].position_in_world);
    sim.apply_external_force(b, Vector3::new(0.5, 0.0, 0.0), centre);
    sim.step().unwrap();
    assert!(!sim.is_asleep(b), "the load woke it");
    assert!(sim.bodies()[b].linear_velocity_in_world.x > 0.0);
    assert_eq!(sim.sleeping_bodies(), 0);
}
