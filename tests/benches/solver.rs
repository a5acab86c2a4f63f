//! Criterion benchmarks: one solver step of each scene in a representative state.
//!
//! - `ten_pendula/step_dragged`: the chain clipped to the stylus and held 10 cm to the side
//!   and 5 cm up (the state of acceptance run 1 during its hold).
//! - `ten_pendula/step_swinging`: the free chain after release.
//! - `cross_lift/step_lifted`: the lift clipped and held 5 cm up.
//!
//! Run: `cargo bench --bench solver` (release profile).

use std::path::Path;

use ar_multibody::sim::{run_scripted, Scene, Simulation, StylusScript, StylusSpring};
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

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("ten_pendula");
    let mut sim = scripted_state(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        3.5,
    );
    group.bench_function("step_dragged", |b| b.iter(|| sim.step()));
    let mut sim = scripted_state(
        "assets/scenes/ten_pendula.toml",
        "assets/scripts/ten_pendula_drag.csv",
        5.0,
    );
    group.bench_function("step_swinging", |b| b.iter(|| sim.step()));
    group.finish();

    let mut group = c.benchmark_group("cross_lift");
    let mut sim = scripted_state(
        "assets/scenes/cross_lift.toml",
        "assets/scripts/cross_lift_lift.csv",
        3.0,
    );
    group.bench_function("step_lifted", |b| b.iter(|| sim.step()));
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
