//! Unit tests of single stages, each run on its own through a step view of a small model,
//! against closed forms written here.

use nalgebra::{Matrix3, Vector3};

use super::energy::Energies;
use super::newton::newton_gain_of;
use crate::state::diagnostics::EnergyLedger;
use crate::{Scene, Simulation};

/// One free 0.2 kg ball at 1 m, and a second one hanging from a ball joint at 0.6 m.
fn two_bodies() -> Simulation {
    Scene::parse(
        r#"
[[body]]
name = "free"
mass_kg = 0.2
inertia_kg_m2 = [1e-4, 2e-4, 3e-4]
position_m = [0.5, 0.0, 1.0]
shape = { kind = "sphere", radius_m = 0.01 }

[[body]]
name = "bob"
mass_kg = 0.1
inertia_kg_m2 = [1e-4, 1e-4, 1e-4]
position_m = [0.0, 0.0, 0.5]
shape = { kind = "sphere", radius_m = 0.01 }

[[joint]]
name = "pivot"
kind = "ball"
body1 = "ground"
body2 = "bob"
anchor_in_world_m = [0.0, 0.0, 0.6]
"#,
        "stages.toml",
    )
    .expect("test scene")
    .build()
    .expect("builds")
}

#[test]
fn free_motion_adds_gravity_and_queued_loads_and_keeps_the_start_state() {
    let mut sim = two_bodies();
    sim.set_body_velocity(1, Vector3::new(1.0, 0.0, 0.0), Vector3::zeros());
    sim.apply_external_force(
        1,
        Vector3::new(0.4, 0.0, 0.0),
        sim.bodies()[1].position_in_world.into(),
    );
    let mut step = sim.step_view();
    let h = step.ctx.h;
    step.free_motion(false);
    // v_free = v + h (g + F/m), exactly as written.
    let expected = Vector3::new(1.0, 0.0, 0.0)
        + (Vector3::new(0.0, 0.0, -9.81) + Vector3::new(0.4, 0.0, 0.0) * (1.0 / 0.2)) * h;
    assert_eq!(step.s.body.v_free[1], expected);
    assert_eq!(step.s.body.v_start[1], Vector3::new(1.0, 0.0, 0.0));
    assert_eq!(step.bodies[1].linear_velocity_in_world, expected);
    // The ground does not move.
    assert_eq!(step.s.body.v_free[0], Vector3::zeros());
}

#[test]
fn the_direct_method_starts_every_step_from_zero_impulses() {
    let mut sim = two_bodies();
    sim.step().expect("step");
    assert!(sim.solver.joint.blocks[0].lambda[..3]
        .iter()
        .any(|l| *l != 0.0));
    let mut step = sim.step_view();
    assert_eq!(step.s.linear, super::LinearSolve::Blocks);
    step.warm_start();
    assert_eq!(step.s.joint.blocks[0].lambda, [0.0; 6]);
}

#[test]
fn the_energy_ledger_takes_the_largest_exchanged_energy_as_reference() {
    let mut ledger = EnergyLedger::starting_at(0.0, 2.0, 0.5);
    // Potential 2.0 → 1.7 (range 0.3), kinetic up to 0.25, no work: reference 0.3.
    let (reference, drift) = ledger.close_step(&Energies {
        kinetic_j: 0.25,
        potential_j: 1.7,
        elastic_j: 0.5,
    });
    assert_eq!(reference, 0.3_f64.max(2.0 - 1.7));
    assert!((drift - (0.25 + 1.7 + 0.5 - 2.5)).abs() < 1e-15);
    // Injected work larger than both: it becomes the reference.
    ledger.user_work_j = 1.0;
    let (reference, _) = ledger.close_step(&Energies {
        kinetic_j: 0.25,
        potential_j: 1.7,
        elastic_j: 0.5,
    });
    assert_eq!(reference, 1.0);
}

#[test]
fn the_newton_gain_is_the_identity_without_turning_and_refused_when_unbounded() {
    let inertia = Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0));
    assert_eq!(
        newton_gain_of(&inertia, &Matrix3::zeros()),
        Some(Matrix3::identity())
    );
    // I − A nearly singular: the gain would amplify A's error, so it is refused.
    assert_eq!(newton_gain_of(&inertia, &(inertia * 0.999)), None);
}

#[test]
fn a_failed_step_restores_the_state_and_names_the_body() {
    let mut sim = two_bodies();
    sim.step().expect("step");
    let before = sim.bodies()[1].position_in_world;
    let t = sim.time_secs();
    sim.set_body_velocity(1, Vector3::new(f64::NAN, 0.0, 0.0), Vector3::zeros());
    let err = sim.step().expect_err("a NaN velocity cannot be stepped");
    let text = err.to_string();
    assert!(text.contains("body `free`"), "{text}");
    assert_eq!(sim.time_secs(), t);
    assert_eq!(sim.bodies()[1].position_in_world, before);
}

#[test]
fn the_fast_finite_check_agrees_with_the_one_that_names_the_part() {
    let sim = two_bodies();
    let mut body = sim.bodies()[1].clone();
    assert!(body.state_is_finite() && body.non_finite_state().is_none());
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for part in 0..4 {
            let mut b = body.clone();
            match part {
                0 => b.position_in_world.y = bad,
                1 => {
                    b.world_from_body_rotation = nalgebra::UnitQuaternion::new_unchecked(
                        nalgebra::Quaternion::new(bad, 0.0, 0.0, 0.0),
                    )
                }
                2 => b.linear_velocity_in_world.z = bad,
                _ => b.angular_velocity_in_world.x = bad,
            }
            assert!(!b.state_is_finite(), "part {part} = {bad}");
            assert!(b.non_finite_state().is_some(), "part {part} = {bad}");
        }
    }
    // Huge but finite numbers are finite (x · 0 does not overflow).
    body.linear_velocity_in_world = Vector3::repeat(f64::MAX);
    assert!(body.state_is_finite());
}

#[test]
fn loops_are_found_in_the_cross_lift_and_not_in_the_trees() {
    let root =
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("assets/scenes");
    for (scene, loops) in [
        ("ten_pendula.toml", false),
        ("steel_fish.toml", false),
        ("cross_lift.toml", true),
    ] {
        let sim = Scene::load(root.join(scene))
            .expect("scene loads")
            .build()
            .expect("builds");
        assert_eq!(
            super::direct::joints_close_a_loop(sim.bodies(), sim.joints()),
            loops,
            "{scene}"
        );
    }
    // In `two_bodies` (0 ground, 1 free, 2 bob) the pivot joins ground and bob; a joint from
    // the free body to the bob keeps a tree, one more from the ground to the free body closes
    // the loop ground–free–bob–ground.
    let sim = two_bodies();
    let pivot = sim.joints()[0].clone();
    let mut joints = vec![pivot.clone()];
    assert!(!super::direct::joints_close_a_loop(sim.bodies(), &joints));
    let mut free_to_bob = pivot.clone();
    (free_to_bob.body1, free_to_bob.body2) = (1, 2);
    joints.push(free_to_bob);
    assert!(!super::direct::joints_close_a_loop(sim.bodies(), &joints));
    let mut ground_to_free = pivot;
    (ground_to_free.body1, ground_to_free.body2) = (0, 1);
    joints.push(ground_to_free);
    assert!(super::direct::joints_close_a_loop(sim.bodies(), &joints));
}
