//! Criterion benchmarks of the articulated method (issue 17, acceptance 5): one step of
//!
//! - `articulated/ten_pendula_euler`: ten pendula, semi-implicit Euler, h = 0.01 s;
//! - `articulated/ten_pendula_rk4`: the same with RK4 (four evaluations of the dynamics);
//! - `articulated/chain_1000_euler`: a 1000-link chain (a ball joint, then hinges with
//!   alternating x and y axes), semi-implicit Euler, h = 0.01 s.
//!
//! Each step includes what `simulate` needs per step: the forward dynamics and the energy
//! diagnostics at the new state (a forward kinematics pass there, which the next step's
//! dynamics reuses). The steps timed are those
//! of the first second (100 steps) after a release from a 10° tilt, from a copy renewed
//! outside the timing (as in the `solver` bench).
//!
//! Run: `cargo bench -p ar-dynamics --bench articulated`.

use std::path::Path;
use std::time::{Duration, Instant};

use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator};
use ar_dynamics::{Body, Joint, JointKind, Model, Scene};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::{Isometry3, UnitQuaternion, Vector3};

const STEPS_PER_COPY: u64 = 100;

/// Tilts the tree's first joint (a ball joint) by 10° about y.
fn tilted(mut sim: ArticulatedSim) -> ArticulatedSim {
    let mut q = sim.q().to_vec();
    let half = 0.5 * 10.0_f64.to_radians();
    q[..4].copy_from_slice(&[half.cos(), 0.0, half.sin(), 0.0]);
    let qd = sim.qd().to_vec();
    sim.set_state(&q, &qd);
    sim
}

fn ten_pendula(integrator: Integrator) -> ArticulatedSim {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("assets/scenes/ten_pendula.toml");
    let scene = Scene::load(path).expect("scene");
    let params = ArticulatedParams {
        dt_secs: 0.01,
        integrator,
    };
    tilted(ArticulatedSim::from_scene(&scene, params).expect("tree"))
}

/// A hanging chain of `n` links of 0.05 m (0.1 kg, thin rods), a ball joint at the top and
/// hinges with alternating x and y axes.
fn chain(n: usize) -> ArticulatedSim {
    let len = 0.05;
    let top = n as f64 * len;
    let mut bodies = vec![Body::ground()];
    for i in 0..n {
        let z = top - (i as f64 + 0.5) * len;
        bodies.push(Body::new(
            format!("l{i}"),
            0.1,
            Vector3::new(21e-6, 21e-6, 0.5e-6),
            UnitQuaternion::identity(),
            Isometry3::translation(0.0, 0.0, z),
            None,
        ));
    }
    let half = Vector3::new(0.0, 0.0, 0.5 * len);
    let mut joints = vec![Joint::new(
        "pivot",
        JointKind::Ball,
        &bodies,
        0,
        1,
        Vector3::new(0.0, 0.0, top),
        half,
        Vector3::z(),
        Vector3::z(),
    )];
    for i in 1..n {
        let axis = if i % 2 == 0 {
            Vector3::x()
        } else {
            Vector3::y()
        };
        joints.push(Joint::new(
            format!("h{i}"),
            JointKind::Hinge,
            &bodies,
            i,
            i + 1,
            -half,
            half,
            axis,
            axis,
        ));
    }
    let model = Model::new(
        bodies,
        joints,
        vec![],
        vec![],
        Vector3::new(0.0, 0.0, -9.81),
    )
    .expect("model");
    let params = ArticulatedParams {
        dt_secs: 0.01,
        integrator: Integrator::SemiImplicitEuler,
    };
    tilted(ArticulatedSim::new(&model, params).expect("tree"))
}

/// Time of `iters` steps, each within the first [`STEPS_PER_COPY`] steps of a copy of `state`
/// (the copies are made outside the timing; each run of steps between copies is timed whole).
fn steps_from(state: &ArticulatedSim, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = left.min(STEPS_PER_COPY);
        let mut sim = state.clone();
        let start = Instant::now();
        for _ in 0..batch {
            sim.step().expect("step");
        }
        total += start.elapsed();
        left -= batch;
    }
    total
}

/// The fastest of many 100-step batches, per step (µs): on a machine shared with other jobs
/// the minimum is what the code costs, the mean also measures the neighbours.
fn fastest_batch_us(state: &ArticulatedSim) -> f64 {
    let mut best = f64::INFINITY;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        let mut sim = state.clone();
        let t = Instant::now();
        for _ in 0..STEPS_PER_COPY {
            sim.step().expect("step");
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e6 / STEPS_PER_COPY as f64);
    }
    best
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("articulated");
    for (name, state) in [
        (
            "ten_pendula_euler",
            ten_pendula(Integrator::SemiImplicitEuler),
        ),
        ("ten_pendula_rk4", ten_pendula(Integrator::Rk4)),
        ("chain_1000_euler", chain(1000)),
    ] {
        println!(
            "articulated/{name}: fastest 100-step batch {:.3} us/step",
            fastest_batch_us(&state)
        );
    }
    let euler = ten_pendula(Integrator::SemiImplicitEuler);
    g.bench_function("ten_pendula_euler", |b| {
        b.iter_custom(|iters| steps_from(&euler, iters))
    });
    let rk4 = ten_pendula(Integrator::Rk4);
    g.bench_function("ten_pendula_rk4", |b| {
        b.iter_custom(|iters| steps_from(&rk4, iters))
    });
    let long = chain(1000);
    g.bench_function("chain_1000_euler", |b| {
        b.iter_custom(|iters| steps_from(&long, iters))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
