//! Proves that a step of the articulated method allocates nothing, with each integrator and
//! an external force, and with the stylus clipped (a counting global allocator watches the
//! steps).

use std::path::Path;

use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator};
use ar_dynamics::model::stylus::{
    StylusAttachment, DEFAULT_DAMPING_N_S_PER_M, DEFAULT_STIFFNESS_N_PER_M,
};
use ar_dynamics::Scene;
use nalgebra::{Point3, Vector3};

#[path = "count_alloc.rs"]
mod count_alloc;

#[global_allocator]
static GLOBAL: count_alloc::Counting = count_alloc::Counting;

#[test]
fn an_articulated_step_allocates_nothing() {
    count_alloc::count_this_thread();
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("assets/scenes/ten_pendula.toml");
    let scene = Scene::load(path).expect("scene");
    for integrator in [
        Integrator::SemiImplicitEuler,
        Integrator::Rk4,
        Integrator::Rk45 { tolerance: 1e-8 },
    ] {
        let params = ArticulatedParams {
            dt_secs: 0.01,
            integrator,
        };
        let mut sim = ArticulatedSim::from_scene(&scene, params).expect("tree");
        // The first step may size the load list; count from the second on.
        sim.apply_external_force(3, Vector3::new(0.01, 0.0, 0.0), Point3::origin());
        sim.step().expect("step");
        let before = count_alloc::allocations();
        for _ in 0..50 {
            sim.apply_external_force(3, Vector3::new(0.01, 0.0, 0.0), Point3::origin());
            sim.step().expect("step");
        }
        let after = count_alloc::allocations();
        assert_eq!(after - before, 0, "{} allocated", integrator.name());
    }
    a_clipped_step_allocates_nothing();
}

/// The same with the stylus clipped to the tip and dragged (its Newton iterations and
/// probes integrate the step several times, all in the preallocated scratch). Called from
/// the test above: the allocation counter is global, so the two must not run in parallel.
fn a_clipped_step_allocates_nothing() {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("assets/scenes/ten_pendula.toml");
    let scene = Scene::load(path).expect("scene");
    let params = ArticulatedParams {
        dt_secs: 0.005,
        integrator: Integrator::Rk4,
    };
    let mut sim = ArticulatedSim::from_scene(&scene, params).expect("tree");
    let g = sim.grab_points()[0].clone();
    sim.attach_stylus(StylusAttachment {
        body: g.body,
        point_in_body: g.point_in_body,
        stiffness_n_per_m: DEFAULT_STIFFNESS_N_PER_M,
        damping_n_s_per_m: DEFAULT_DAMPING_N_S_PER_M,
    })
    .expect("clip");
    let tip = sim.grab_point_in_world(0).expect("tip");
    let v = Vector3::new(0.05, 0.0, 0.0);
    sim.set_stylus_target(tip, v);
    sim.apply_external_force(3, Vector3::new(0.01, 0.0, 0.0), Point3::origin());
    sim.step_n(2).expect("step");
    let before = count_alloc::allocations();
    for k in 1..50 {
        sim.set_stylus_target(tip + v * (0.01 * k as f64), v);
        sim.apply_external_force(3, Vector3::new(0.01, 0.0, 0.0), Point3::origin());
        sim.step_n(2).expect("step");
    }
    let after = count_alloc::allocations();
    assert_eq!(after - before, 0, "a clipped step allocated");
}
