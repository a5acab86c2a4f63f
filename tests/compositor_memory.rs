//! Part of the rig's acceptance 5 (no memory growth): rewriting the video texture and rendering
//! every frame does not grow the process.
//!
//! This is its own test binary on purpose: resident memory is a per-process figure, and in a
//! binary whose other tests run on parallel threads their allocations would be counted here
//! too (a CI run once saw +13.6 MB that way).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::{Compositor, CompositorConfig, FrameInput, Overlay, VideoImage};
use ar_multibody::rig::fixed_view::look_at;
use ar_multibody::rig::live::rss_bytes;
use nalgebra::Point3;

#[test]
fn sixty_frames_with_video_uploads_do_not_grow_memory() {
    let cam = CameraIntrinsics::ideal(640, 480, 610.0);
    let mut c = Compositor::headless(CompositorConfig::monitor(cam)).unwrap();
    let overlay = Overlay::default();
    let camera_from_world = look_at(Point3::new(0.0, -0.4, 0.4), Point3::origin());
    let rss_mb = || rss_bytes().expect("/proc/self/status") as f64 / 1e6;
    let mut at_frame_10 = 0.0;
    for i in 0..60u8 {
        // A different image every frame, so that every upload really rewrites the texture.
        let rgb = vec![i; 640 * 480 * 3];
        c.render(&FrameInput {
            video: Some(VideoImage {
                width: 640,
                height: 480,
                rgb: &rgb,
            }),
            camera_from_world,
            overlay: &overlay,
            hud_lines: &[format!("frame {i}")],
        })
        .unwrap();
        if i == 10 {
            // The first frames build pipelines, glyph caches and staging memory.
            at_frame_10 = rss_mb();
        }
    }
    let at_frame_60 = rss_mb();
    eprintln!("RSS at frame 10: {at_frame_10:.1} MB, at frame 60: {at_frame_60:.1} MB");
    assert!(
        at_frame_60 - at_frame_10 < 5.0,
        "grew {:.1} MB in 50 frames",
        at_frame_60 - at_frame_10
    );
}
