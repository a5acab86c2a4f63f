//! Proves that a solver step allocates nothing: a counting global allocator watches
//! steps of each scene (a chain, a closed-loop mechanism, a 1024-element curtain), clipped
//! and free; and steps with contacts between free bodies (detection, impacts, the dense
//! active set and the projection), once their buffers have grown.

use std::path::Path;

use ar_dynamics::{Scene, Simulation};
use nalgebra::{Point3, Vector3};

#[path = "count_alloc.rs"]
mod count_alloc;

#[global_allocator]
static GLOBAL: count_alloc::Counting = count_alloc::Counting;

/// The scene at `scene` (relative to the crate), built.
fn load(scene: &str) -> Simulation {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(scene);
    Scene::load(&path).expect("scene").build().expect("builds")
}

/// Allocations made by the counted thread while `f` runs.
fn allocations_during(f: impl FnOnce()) -> usize {
    let before = count_alloc::allocations();
    f();
    count_alloc::allocations() - before
}

#[test]
fn a_step_allocates_nothing() {
    count_alloc::count_this_thread();
    for scene in [
        "assets/scenes/ten_pendula.toml",
        "assets/scenes/cross_lift.toml",
        // 1024 elements and 2945 connections: the primal solve (faer's sparse Cholesky).
        "assets/scenes/curtain.toml",
    ] {
        let mut sim = load(scene);
        let start = sim.grab_point_in_world(0).expect("grab point");
        sim.attach_stylus_to_grab_point(0, 1e4, 15.0).expect("clip");
        let allocations = allocations_during(|| {
            for n in 0..20 {
                let t = n as f64 * sim.dt_secs();
                sim.set_stylus_target(
                    start + Vector3::new(0.05 * t, 0.0, 0.02 * t),
                    Vector3::new(0.05, 0.0, 0.02),
                );
                sim.apply_external_force(1, Vector3::new(0.01, 0.0, 0.0), Point3::origin());
                sim.step().expect("step");
            }
            sim.detach_stylus();
            for _ in 0..20 {
                sim.step().expect("step");
            }
        });
        assert_eq!(
            allocations, 0,
            "{scene}: {allocations} allocations in 40 steps"
        );
    }
    // Contacts: a box in a corner, billiard balls, Newton's cradle. The buffers grow in the
    // first steps (as many contacts as the scene makes); from then on nothing is allocated.
    // (Not a scene resting on a plane: parry's half-space generator makes a new point list
    // for every touching pair.) Each with sleeping off, so that its contacts stay in the
    // solve, and as shipped, with sleeping on: bodies falling asleep and waking allocate
    // nothing either.
    for (scene, sleep) in [
        ("assets/scenes/corner.toml", false),
        ("assets/scenes/billiard.toml", false),
        ("assets/scenes/newtons_cradle.toml", false),
        ("assets/scenes/billiard.toml", true),
        ("assets/scenes/newtons_cradle.toml", true),
    ] {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join(scene);
        let mut loaded = Scene::load(&path).expect("scene");
        loaded.contact.as_mut().expect("contact").sleep = sleep;
        let mut sim = loaded.build().expect("builds");
        for _ in 0..20 {
            sim.step().expect("step");
        }
        let mut contact_steps = 0;
        let allocations = allocations_during(|| {
            for _ in 0..100 {
                sim.step().expect("step");
                contact_steps += usize::from(!sim.contact_report().is_empty());
            }
        });
        assert_eq!(
            allocations, 0,
            "{scene}: {allocations} allocations in 100 steps"
        );
        assert!(
            sleep || contact_steps > 50,
            "{scene}: contacts in {contact_steps} of 100 steps"
        );
    }
}
