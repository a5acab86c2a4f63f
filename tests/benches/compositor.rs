//! Compositor frame cost on the off-screen surface: video upload, overlay, render and
//! read-back, mono 640×480 and side-by-side stereo 2 × 800×600.

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::{Compositor, CompositorConfig, FrameInput, Overlay, VideoImage};
use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use std::time::Duration;

fn overlay() -> Overlay {
    let mut o = Overlay::default();
    for i in 0..10 {
        let z = 0.30 - 0.025 * i as f64;
        o.push_marker(Point3::new(0.0, 0.0, z), 0.008, [0.9, 0.4, 0.2]);
    }
    o.stylus_tip_in_world = Some(Point3::new(0.05, 0.0, 0.1));
    o.spring_in_world = Some((Point3::new(0.05, 0.0, 0.1), Point3::new(0.0, 0.0, 0.08)));
    o
}

fn bench(c: &mut Criterion) {
    let cam = CameraIntrinsics::ideal(640, 480, 600.0);
    let rgb = vec![100u8; 640 * 480 * 3];
    let camera_from_world = Isometry3::from_parts(
        Translation3::new(0.0, 0.05, 0.55),
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -2.2),
    );
    let overlay = overlay();
    let hud = vec!["25.0 fps   solver x1.00 real time   latency 30.0 ms".to_owned()];
    let mut group = c.benchmark_group("compositor");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    // All compositors are made before the first is dropped: kiss3d 0.47 cannot make a new
    // one on a thread whose last one was dropped (its wgpu resources are thread-global).
    let mut compositors: Vec<(&str, Compositor)> = [
        ("mono_640x480", CompositorConfig::monitor(cam.clone())),
        (
            "stereo_2x800x600",
            CompositorConfig::hmd(cam.clone(), (800, 600), 0.064),
        ),
    ]
    .into_iter()
    .map(|(name, config)| {
        (
            name,
            Compositor::headless(config).expect("off-screen surface"),
        )
    })
    .collect();
    for (name, compositor) in &mut compositors {
        group.bench_function(*name, |b| {
            b.iter(|| {
                compositor
                    .render(&FrameInput {
                        video: Some(VideoImage {
                            width: 640,
                            height: 480,
                            rgb: &rgb,
                        }),
                        camera_from_world: Some(camera_from_world),
                        overlay: &overlay,
                        hud_lines: &hud,
                    })
                    .expect("render")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
