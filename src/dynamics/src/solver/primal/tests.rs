//! The primal solve against the dual block factor on the same network: two factorisations
//! of the same linear systems (one in the bodies' velocities, one in the rows' impulses),
//! each stage driven to the same tolerance, must give the same motion.

use nalgebra::{Point3, Vector3};

use super::PrimalSolve;
use crate::model::stylus::StylusAttachment;
use crate::solver::direct::DirectSolver;
use crate::solver::LinearSolve;
use crate::{Scene, Simulation};

/// A 12 × 12 curtain (144 elements, 385 connections) on three hooks, 0.3 m square, of
/// elements of this radius (m).
fn curtain(element_radius_m: f64) -> Simulation {
    Scene::parse(
        &format!(
            r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]
[[deformable]]
name = "curtain"
kind = "cloth"
mass_kg = 0.05
element_radius_m = {element_radius_m}
stiffness_n_per_m = 200.0
damping_n_s_per_m = 0.001
corner_m = [-0.15, 0.0, 0.5]
edge1_m = [0.3, 0.0, 0.0]
edge2_m = [0.0, 0.0, -0.3]
nodes = [12, 12]
pinned_nodes = [[0, 0], [6, 0], [11, 0]]
"#
        ),
        "curtain.toml",
    )
    .expect("test scene")
    .build()
    .expect("builds")
}

/// The curtain solved in the bodies' velocities and the same curtain with the dual factor.
fn primal_and_dual(element_radius_m: f64) -> (Simulation, Simulation) {
    let primal = curtain(element_radius_m);
    assert!(
        primal.solver.direct.primal.is_some(),
        "a mesh this size takes the primal solve"
    );
    let mut dual = curtain(element_radius_m);
    dual.solver.direct = DirectSolver::with_primal(
        &dual.model.bodies,
        &dual.model.joints,
        &dual.model.springs,
        false,
    )
    .expect("dual factor");
    dual.solver.linear = LinearSolve::Blocks;
    assert!(dual.solver.direct.primal.is_none());
    (primal, dual)
}

#[test]
fn the_primal_and_the_dual_solve_give_the_same_motion() {
    let (mut primal, mut dual) = primal_and_dual(0.003);
    let mut largest_m = 0.0_f64;
    let mut drift_j = 0.0_f64;
    for _ in 0..50 {
        primal.step().expect("primal step");
        dual.step().expect("dual step");
        for (a, b) in primal.bodies().iter().zip(dual.bodies()) {
            largest_m = largest_m.max((a.position_in_world - b.position_in_world).norm());
        }
        assert_eq!(primal.diagnostics().substeps, 1, "no split step");
        assert_eq!(dual.diagnostics().substeps, 1, "no split step");
        drift_j = drift_j.max(primal.diagnostics().energy_drift_j.abs());
    }
    println!("largest difference of an element's position over 0.5 s: {largest_m:.3e} m");
    assert!(largest_m < 3e-8, "{largest_m:.3e} m");
    let reference_j = primal.diagnostics().energy_reference_j;
    println!(
        "largest energy drift of the primal run: {drift_j:.3e} J of E_ref {reference_j:.3e} J"
    );
    assert!(drift_j < 2e-9, "{drift_j:.3e} J");
}

/// The stylus clipped 1.1 mm off the centre of an element and pulled sideways: the element's
/// angular velocities, condensed out of H (no connection reaches them), answer the stylus as
/// in the same solve with every angular velocity kept in H.
#[test]
fn a_stylus_clipped_off_an_elements_centre_moves_the_condensed_curtain_as_the_full_one() {
    let mut condensed = curtain(0.012);
    let mut full = curtain(0.012);
    let primal = PrimalSolve::uncondensed(
        &full.model.bodies,
        &full.model.joints,
        &full.model.springs,
        full.model.joints.iter().map(|j| j.rows()).sum(),
    )
    .expect("a curtain's factor fits");
    let direct = &mut full.solver.direct;
    let (n_condensed, n_full) = (
        direct.primal.as_ref().expect("primal").velocities(),
        primal.velocities(),
    );
    assert!(
        n_condensed < n_full,
        "{n_condensed} < {n_full} velocities in H"
    );
    direct.primal = Some(primal);
    let body = condensed.body_id("curtain.e138").expect("a hem element");
    let attachment = StylusAttachment {
        body,
        point_in_body: Vector3::new(0.001, 0.0, -0.0005),
        stiffness_n_per_m: 2.0,
        damping_n_s_per_m: 0.01,
    };
    let start = condensed.bodies()[body].position_in_world;
    let mut largest_m = 0.0_f64;
    let mut turned_rad_per_s = 0.0_f64;
    for sim in [&mut condensed, &mut full] {
        sim.attach_stylus(attachment).expect("clips");
    }
    for k in 0..40 {
        let velocity = Vector3::new(0.05, 0.02, 0.0);
        let target = Point3::from(start + velocity * (0.01 * k as f64));
        for sim in [&mut condensed, &mut full] {
            sim.set_stylus_target(target, velocity);
            sim.step().expect("step");
        }
        assert_eq!(
            condensed.diagnostics().substeps,
            full.diagnostics().substeps,
            "the same sub-steps"
        );
        for (a, b) in condensed.bodies().iter().zip(full.bodies()) {
            largest_m = largest_m.max((a.position_in_world - b.position_in_world).norm());
        }
        turned_rad_per_s =
            turned_rad_per_s.max(condensed.bodies()[body].angular_velocity_in_world.norm());
    }
    println!(
        "largest difference over 0.4 s of pulling: {largest_m:.3e} m; the clipped element turns \
         at up to {turned_rad_per_s:.3} rad/s"
    );
    assert!(
        turned_rad_per_s > 1.0,
        "the off-centre pull turns the element"
    );
    assert!(largest_m < 1e-12, "{largest_m:.3e} m");
}

/// The springs' turning stiffness (see `primal_turning`): with it each step's Newton
/// iteration is the Newton iteration of the rows' dependence too, and the settled curtain's
/// steps need fewer solves for the same tolerance and the same motion.
#[test]
fn the_turning_stiffness_saves_solves_and_keeps_the_motion() {
    let mut turning = curtain(0.003);
    let mut plain = curtain(0.003);
    let direct = &mut plain.solver.direct;
    let primal = direct.primal.take().expect("primal");
    direct.primal = Some(primal.without_turning());
    let (mut solves_turning, mut solves_plain) = (0, 0);
    let mut largest_m = 0.0_f64;
    for k in 0..200 {
        turning.step().expect("step");
        plain.step().expect("step");
        for sim in [&turning, &plain] {
            assert_eq!(sim.diagnostics().substeps, 1, "no split step");
        }
        for (a, b) in turning.bodies().iter().zip(plain.bodies()) {
            largest_m = largest_m.max((a.position_in_world - b.position_in_world).norm());
        }
        // (The first second lets the release from the flat pose settle.)
        if k >= 100 {
            solves_turning += turning.diagnostics().iterations;
            solves_plain += plain.diagnostics().iterations;
        }
    }
    println!(
        "solves over the second second: {solves_turning} with the turning stiffness, \
         {solves_plain} without; largest difference of an element's position {largest_m:.3e} m"
    );
    assert!(
        solves_turning * 20 <= solves_plain * 17,
        "{solves_turning} against {solves_plain}"
    );
    assert!(largest_m < 1e-7, "{largest_m:.3e} m");
}
