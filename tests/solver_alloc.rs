//! Proves that a solver step allocates nothing: a counting global allocator watches
//! steps of each scene (a chain, a closed-loop mechanism, a 1024-element curtain), clipped
//! and free.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use ar_multibody::sim::Scene;
use nalgebra::{Point3, Vector3};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the thread under test is counted: the test harness's main thread does its own
    // bookkeeping (the running-test table) right after it starts the test thread, and under
    // load that landed inside the counted steps now and then.
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Counts an allocation made on a counted thread.
fn count() {
    if COUNTED.with(|c| c.get()) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards every call unchanged to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_step_allocates_nothing() {
    COUNTED.with(|c| c.set(true));
    for scene in [
        "assets/scenes/ten_pendula.toml",
        "assets/scenes/cross_lift.toml",
        // 1024 elements and 2945 connections: the primal solve (faer's sparse Cholesky).
        "assets/scenes/curtain.toml",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(scene);
        let mut sim = Scene::load(&path).expect("scene").build().expect("builds");
        let start = sim.grab_point_in_world(0).expect("grab point");
        sim.attach_stylus_to_grab_point(0, 1e4, 15.0).expect("clip");
        let before = ALLOCATIONS.load(Ordering::Relaxed);
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
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(
            after - before,
            0,
            "{scene}: {} allocations in 40 steps",
            after - before
        );
    }
}
