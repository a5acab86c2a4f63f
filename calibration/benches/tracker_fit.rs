//! How long the tracker calibration takes for the 8 cube corners: the whole `calibrate`
//! (checks, both fits, report) and each fit alone. Run with
//! `cargo bench -p ar-calibration --bench tracker_fit`.

use ar_calibration::fit_report::calibrate;
use ar_calibration::rigid_fit::{fit_pinv_qr, fit_svd};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::{Isometry3, Point3, Vector3};
use std::hint::black_box;
use std::time::Duration;

fn cube_pairs() -> (Vec<Point3<f64>>, Vec<Point3<f64>>) {
    let truth = Isometry3::new(
        Vector3::new(-0.15, -0.05, -0.05),
        Vector3::new(0.01, -0.008, 0.35),
    );
    let mut world = Vec::new();
    for &x in &[0.07, 0.15] {
        for &y in &[-0.04, 0.04] {
            for &z in &[0.0, 0.08] {
                world.push(Point3::new(x, y, z));
            }
        }
    }
    // Deterministic ±0.2 mm perturbations so that the fits do real work.
    let arm = world
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            truth.inverse() * w + Vector3::new(0.0002 * s, -0.0001 * s, 0.00015)
        })
        .collect();
    (world, arm)
}

fn bench(c: &mut Criterion) {
    let (world, arm) = cube_pairs();
    let mut g = c.benchmark_group("tracker_fit_8_points");
    g.warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    g.bench_function("calibrate", |b| {
        b.iter(|| calibrate(black_box(&world), black_box(&arm)))
    });
    g.bench_function("pinv_qr", |b| {
        b.iter(|| fit_pinv_qr(black_box(&world), black_box(&arm)))
    });
    g.bench_function("svd", |b| {
        b.iter(|| fit_svd(black_box(&world), black_box(&arm)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
