//! Criterion benchmarks: one solver step of each scene in a representative state.
//!
//! - `ten_pendula/step_dragged`: the chain clipped to the stylus and held 10 cm to the side
//!   and 5 cm up (the state of acceptance run 1 during its hold).
//! - `ten_pendula/step_swinging`: the free chain after release.
//! - `cross_lift/step_lifted`: the lift clipped and held 5 cm up.
//!
//! The steps timed are those of the first second (100 steps) after the named state, from a
//! copy of it that is renewed outside the timing: stepping one simulation on and on would
//! measure wherever the motion drifts to in the thousands of simulated seconds criterion runs
//! (the free chain ends up in a violent chaotic swing whose steps are split), not that state.
//!
//! Run: `cargo bench --bench solver` (release profile).

use std::path::Path;

use ar_multibody::sim::{run_scripted, Scene, Simulation, StylusScript, StylusSpring};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};

fn scripted_state(scene: &str, script: &str, secs: f64) -> Simulation {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let scene = Scene::load(root.join(scene)).expect("scene");
    let text = std::fs::read_to_string(root.join(script)).expect("script");
    let script = StylusScript::parse(&text).expect("script parses");
    let mut sim = scene.build().expect("builds");
    run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        secs,
        |_| {},
    )
    .expect("run");
    sim
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
        sim.step();
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
