//! Criterion benchmarks: one solver step of each scene in a representative state.
//!
//! - `ten_pendula/step_dragged`: the chain clipped to the stylus and held 10 cm to the side
//!   and 5 cm up (the state of acceptance run 1 during its hold).
//! - `ten_pendula/step_swinging`: the free chain after release.
//! - `cross_lift/step_lifted`: the lift clipped and held 5 cm up.
//! - `block_cholesky/factor_chain` and `block_cholesky/solve_chain`: the coupled system's
//!   factorisation and one solve alone, on a ten-pendula-like chain of blocks (a ball joint's
//!   3 rows, nine hinges' 5, the stylus's 3). These run on the lanes the CPU has (AVX2 or
//!   portable); `AR_MULTIBODY_NO_AVX2=1` times the portable ones.
//!
//! The steps timed are those of the first second (100 steps) after the named state, from a
//! copy of it that is renewed outside the timing: stepping one simulation on and on would
//! measure wherever the motion drifts to in the thousands of simulated seconds criterion runs
//! (the free chain ends up in a violent chaotic swing whose steps are split), not that state.
//!
//! Run: `cargo bench -p ar-dynamics --bench solver` (release profile).

use std::path::Path;

use ar_dynamics::linalg::block_cholesky::{BlockCholesky, Lanes, ZERO};
use ar_dynamics::SceneSimulation;
use ar_dynamics::{run_scripted, Scene, Simulation, StylusScript, StylusSpring};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

fn scripted_state(scene: &str, script: &str, secs: f64) -> Simulation {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let scene = Scene::load(root.join(scene)).expect("scene");
    let text = std::fs::read_to_string(root.join(script)).expect("script");
    let script = StylusScript::parse(&text).expect("script parses");
    let mut sim = SceneSimulation::from(scene.build().expect("builds"));
    run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        secs,
        |_| 0.0,
        |_| {},
    )
    .expect("run");
    sim.into_default().expect("the default method")
}

/// Time of `iters` steps, each within the first [`STEPS_PER_COPY`] steps of a copy of `state`.
fn steps_from(state: &Simulation, iters: u64) -> Duration {
    let mut sim = state.clone();
    let mut total = Duration::ZERO;
    for i in 0..iters {
        if i > 0 && i % STEPS_PER_COPY == 0 {
            sim = state.clone();
        }
        let start = Instant::now();
        sim.step().expect("step");
        total += start.elapsed();
    }
    total
}

/// Time of `iters` runs of `op`, each on a fresh copy of `input` (made outside the timing).
fn each_on_a_copy<T: Clone>(input: &T, iters: u64, mut op: impl FnMut(&mut T)) -> Duration {
    let mut work = input.clone();
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        work.clone_from(input);
        let start = Instant::now();
        op(std::hint::black_box(&mut work));
        total += start.elapsed();
    }
    total
}

/// Steps timed from one copy of a state before it is renewed (1 s of motion).
const STEPS_PER_COPY: u64 = 100;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ten_pendula");
    let sim = scripted_state(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        3.5,
    );
    group.bench_function("step_dragged", |b| {
        b.iter_custom(|iters| steps_from(&sim, iters))
    });
    let sim = scripted_state(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        5.0,
    );
    group.bench_function("step_swinging", |b| {
        b.iter_custom(|iters| steps_from(&sim, iters))
    });
    group.finish();

    let mut group = c.benchmark_group("cross_lift");
    let sim = scripted_state(
        "assets/scenes/cross_lift.toml",
        "assets/scripts/cross_lift_lift.csv",
        3.0,
    );
    group.bench_function("step_lifted", |b| {
        b.iter_custom(|iters| steps_from(&sim, iters))
    });
    group.finish();

    let mut group = c.benchmark_group("block_cholesky");
    let (matrix, rhs) = chain_system();
    group.bench_function("factor_chain", |b| {
        b.iter_custom(|iters| {
            each_on_a_copy(&matrix, iters, |m| {
                m.factor(1e-6).expect("SPD");
            })
        })
    });
    let mut factored = matrix.clone();
    factored.factor(1e-6).expect("SPD");
    group.bench_function("solve_chain", |b| {
        b.iter_custom(|iters| each_on_a_copy(&rhs, iters, |x| factored.solve(x)))
    });
    group.finish();
}

/// A block system shaped like the ten pendula's with the stylus clipped: a chain of block rows
/// of 3, 5 (nine times) and 3 rows, each coupled to the one before, diagonally dominant (so
/// positive definite), with a right-hand side.
fn chain_system() -> (BlockCholesky, Vec<Lanes>) {
    let sizes = [3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 3];
    let first = |i: usize| i.saturating_sub(1);
    let mut state = 7_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    let mut m = BlockCholesky::with_capacity(sizes.len(), 2 * sizes.len() - 1);
    m.begin(
        sizes.len(),
        |i, add| {
            if i > 0 {
                add(i - 1)
            }
        },
        |i| sizes[i],
    );
    for (i, &rows) in sizes.iter().enumerate() {
        for (j, &rows_j) in sizes.iter().enumerate().take(i + 1).skip(first(i)) {
            let block = m.block_mut(i, j);
            *block = ZERO;
            // Off-diagonal blocks go in transposed: rows of block j, columns of block i.
            for row in block.iter_mut().take(rows_j) {
                for x in row.iter_mut().take(rows) {
                    *x = 0.1 * next();
                }
            }
            if j == i {
                // Symmetric, diagonally dominant, with unit padding rows.
                let lower = *block;
                for (r, row) in block.iter_mut().enumerate() {
                    for (c, x) in row.iter_mut().enumerate().skip(r + 1) {
                        *x = lower[c][r];
                    }
                    row[r] = if r < rows { 10.0 } else { 1.0 };
                }
            }
        }
    }
    let rhs = sizes
        .iter()
        .map(|&rows| std::array::from_fn(|r| if r < rows { next() } else { 0.0 }))
        .collect();
    (m, rhs)
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
