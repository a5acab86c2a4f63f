//! The primal solve against the dual block factor on the same network: two factorisations
//! of the same linear systems (one in the bodies' velocities, one in the rows' impulses),
//! each stage driven to the same tolerance, must give the same motion.

use super::direct::DirectSolver;
use crate::sim::{Scene, Simulation};

/// A 12 × 12 curtain (144 elements, 385 connections) on three hooks, 0.3 m square.
fn curtain() -> Simulation {
    Scene::parse(
        r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]
[[deformable]]
name = "curtain"
kind = "cloth"
mass_kg = 0.05
element_radius_m = 0.003
stiffness_n_per_m = 200.0
damping_n_s_per_m = 0.001
corner_m = [-0.15, 0.0, 0.5]
edge1_m = [0.3, 0.0, 0.0]
edge2_m = [0.0, 0.0, -0.3]
nodes = [12, 12]
pinned_nodes = [[0, 0], [6, 0], [11, 0]]
"#,
        "curtain.toml",
    )
    .expect("test scene")
    .build()
    .expect("builds")
}

#[test]
fn the_primal_and_the_dual_solve_give_the_same_motion() {
    let mut primal = curtain();
    assert!(
        primal.solver.direct.primal.is_some(),
        "a mesh this size takes the primal solve"
    );
    let mut dual = curtain();
    dual.solver.direct = DirectSolver::with_primal(
        &dual.model.bodies,
        &dual.model.joints,
        &dual.model.springs,
        false,
    )
    .expect("dual factor");
    assert!(dual.solver.direct.primal.is_none());
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
