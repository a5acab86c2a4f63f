//! Part of the rig's acceptance 5 (no memory growth): rewriting the video texture and rendering
//! a moving overlay every frame does not grow the process.
//!
//! This is its own test binary on purpose: resident memory is a per-process figure, and in a
//! binary whose other tests run on parallel threads their allocations would be counted here
//! too (a CI run once saw +13.6 MB that way).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::{
    Compositor, CompositorConfig, FrameInput, Overlay, Shading, ShapeInstance, VideoImage,
    VisualShape,
};
use ar_multibody::rig::devices::fixed_view::look_at;
use ar_multibody::rig::display::memory::rss_bytes;
use nalgebra::{Isometry3, Point3, Vector3};

/// A demo-like overlay: ten lit boxes (a chain), flat grab markers, the stylus tip and the
/// spring, all moving a little every frame.
fn overlay_at(frame: u32) -> Overlay {
    let wobble = 0.002 * (frame as f64 * 0.3).sin();
    let mut o = Overlay::default();
    for k in 0..10 {
        o.shapes.push(ShapeInstance {
            shape: VisualShape::Box {
                size_m: Vector3::new(0.01, 0.01, 0.04),
            },
            world_from_shape: Isometry3::translation(
                wobble * k as f64,
                0.0,
                0.45 - 0.04 * k as f64,
            ),
            color: [0.8, 0.3, 0.2],
            shading: Shading::Lit,
        });
    }
    o.push_marker(Point3::new(0.0, 0.0, 0.05), 0.005, [0.2, 0.8, 1.0]);
    o.stylus_tip_in_world = Some(Point3::new(0.05, wobble, 0.1));
    o.spring_in_world = Some((Point3::new(0.05, wobble, 0.1), Point3::new(0.0, 0.0, 0.08)));
    o
}

#[test]
fn sixty_frames_with_video_uploads_and_a_moving_overlay_do_not_grow_memory() {
    let cam = CameraIntrinsics::ideal(640, 480, 610.0);
    let mut c = Compositor::headless(CompositorConfig::monitor(cam)).unwrap();
    let camera_from_world = look_at(Point3::new(0.0, -0.6, 0.4), Point3::new(0.0, 0.0, 0.25));
    let rss_mb = || rss_bytes().expect("/proc/self/status") as f64 / 1e6;
    let mut at_frame_10 = 0.0;
    for i in 0..60u8 {
        // A different image every frame, so that every upload really rewrites the texture.
        let rgb = vec![i; 640 * 480 * 3];
        let overlay = overlay_at(u32::from(i));
        c.render(&FrameInput {
            video: Some(VideoImage {
                width: 640,
                height: 480,
                rgb: &rgb,
            }),
            camera_from_world,
            overlay: &overlay,
            hud_lines: &[
                format!("frame {i}"),
                format!("latency {:.1} ms", 20.0 + f64::from(i)),
            ],
        })
        .unwrap();
        if i == 10 {
            // The first frames build pipelines, glyph caches and staging memory.
            at_frame_10 = rss_mb();
        }
    }
    let at_frame_60 = rss_mb();
    eprintln!("RSS at frame 10: {at_frame_10:.1} MB, at frame 60: {at_frame_60:.1} MB");
    // kiss3d's PBR material grew by ~6 MB per drawn object per frame on lavapipe (a shader
    // recompiled at every draw): this overlay would have added gigabytes.
    assert!(
        at_frame_60 - at_frame_10 < 5.0,
        "grew {:.1} MB in 50 frames",
        at_frame_60 - at_frame_10
    );
}
