//! Compositor end-to-end on the off-screen surface (Mesa lavapipe): registration of the overlay
//! against OpenCV's `projectPoints` (acceptance 1), exact video pass-through, and the
//! side-by-side stereo disparity (acceptance 3).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::{Compositor, CompositorConfig, FrameInput, Overlay, VideoImage};
use image::RgbImage;
use nalgebra::{Isometry3, Point2, Point3, Vector3};
use opencv::core::{Mat, Point2d, Point3d, Vector};
use opencv::prelude::*;

#[path = "support/ramp_video.rs"]
mod ramp_video;
use ramp_video::ramp_video;

/// `camera_from_world` (OpenCV axes) for a camera at `eye` looking at `target`, world z up.
fn look_at(eye: Point3<f64>, target: Point3<f64>) -> Isometry3<f64> {
    ar_multibody::rig::devices::fixed_view::look_at(eye, target)
        .expect("a camera that is not looking straight down")
}

/// OpenCV's projectPoints for world points seen by `cam` at `camera_from_world`.
fn opencv_project(
    cam: &CameraIntrinsics,
    camera_from_world: &Isometry3<f64>,
    points: &[Point3<f64>],
) -> Vec<Point2<f64>> {
    let object: Vector<Point3d> = points.iter().map(|p| Point3d::new(p.x, p.y, p.z)).collect();
    let r = camera_from_world.rotation.scaled_axis();
    let t = camera_from_world.translation.vector;
    let rvec = Mat::from_slice(&[r.x, r.y, r.z])
        .unwrap()
        .try_clone()
        .unwrap();
    let tvec = Mat::from_slice(&[t.x, t.y, t.z])
        .unwrap()
        .try_clone()
        .unwrap();
    let k = cam.camera_matrix();
    let k_rows = [
        [k[(0, 0)], k[(0, 1)], k[(0, 2)]],
        [k[(1, 0)], k[(1, 1)], k[(1, 2)]],
        [k[(2, 0)], k[(2, 1)], k[(2, 2)]],
    ];
    let k_mat = Mat::from_slice_2d(&k_rows).unwrap();
    let dist = Mat::from_slice(&cam.dist).unwrap().try_clone().unwrap();
    let mut image: Vector<Point2d> = Vector::new();
    opencv::calib3d::project_points_def(&object, &rvec, &tvec, &k_mat, &dist, &mut image).unwrap();
    image.iter().map(|p| Point2::new(p.x, p.y)).collect()
}

/// Brightness-weighted centroid of the pixels within `radius` of `near` whose channel sum
/// exceeds `threshold` (pixel centres at integer coordinates, as in OpenCV).
fn centroid(img: &RgbImage, near: Point2<f64>, radius: i64, threshold: u32) -> Option<Point2<f64>> {
    let (w, h) = img.dimensions();
    let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
    for y in (near.y as i64 - radius).max(0)..(near.y as i64 + radius).min(h as i64) {
        for x in (near.x as i64 - radius).max(0)..(near.x as i64 + radius).min(w as i64) {
            let p = img.get_pixel(x as u32, y as u32).0;
            let s: u32 = p.iter().map(|&c| c as u32).sum();
            if s > threshold {
                let wgt = s as f64;
                sx += wgt * x as f64;
                sy += wgt * y as f64;
                sw += wgt;
            }
        }
    }
    (sw > 0.0).then(|| Point2::new(sx / sw, sy / sw))
}

const MARKER_HALF_M: f64 = 0.05;

/// Marker corners and a pendulum pivot above the marker centre.
fn registration_points() -> Vec<Point3<f64>> {
    vec![
        Point3::new(-MARKER_HALF_M, MARKER_HALF_M, 0.0),
        Point3::new(MARKER_HALF_M, MARKER_HALF_M, 0.0),
        Point3::new(MARKER_HALF_M, -MARKER_HALF_M, 0.0),
        Point3::new(-MARKER_HALF_M, -MARKER_HALF_M, 0.0),
        Point3::new(0.0, 0.0, 0.25),
    ]
}

fn test_camera() -> CameraIntrinsics {
    let mut cam = CameraIntrinsics::ideal(640, 480, 610.0);
    cam.fy = 605.0;
    cam.cx = 322.7;
    cam.cy = 236.4;
    cam
}

fn check_registration(view_size: (u32, u32)) {
    let cam = test_camera();
    let camera_from_world = look_at(Point3::new(0.12, -0.42, 0.38), Point3::new(0.0, 0.0, 0.08));
    let mut config = CompositorConfig::monitor(cam.clone());
    config.view_size_px = view_size;
    config.show_hud = false;
    let mut compositor = Compositor::headless(config).unwrap();
    let points = registration_points();
    let mut overlay = Overlay::default();
    for p in &points {
        overlay.push_marker(*p, 0.003, [1.0, 1.0, 1.0]);
    }
    let img = compositor
        .render(&FrameInput {
            video: None,
            camera_from_world: Some(camera_from_world),
            overlay: &overlay,
            hud_lines: &[],
        })
        .unwrap();
    assert_eq!(img.dimensions(), view_size);
    let expected = opencv_project(&cam, &camera_from_world, &points);
    let sx = view_size.0 as f64 / cam.image_width as f64;
    let sy = view_size.1 as f64 / cam.image_height as f64;
    for (p, e) in points.iter().zip(&expected) {
        // In the rendered view, camera pixel edges scale with the view size.
        let e_view = Point2::new((e.x + 0.5) * sx - 0.5, (e.y + 0.5) * sy - 0.5);
        let c = centroid(&img, e_view, 15, 300)
            .unwrap_or_else(|| panic!("no bright sphere near {e_view} for world point {p}"));
        let err_view = (c - e_view).norm();
        // Compare in camera pixels, the unit of the acceptance limit.
        let err_cam = Vector3::new((c.x - e_view.x) / sx, (c.y - e_view.y) / sy, 0.0).norm();
        assert!(
            err_cam < 1.5,
            "world {p}: rendered at {c}, projectPoints {e_view} ({err_view:.2} view px, {err_cam:.2} camera px)"
        );
        eprintln!("registration {view_size:?}: world {p:?} error {err_cam:.3} camera px");
    }
}

#[test]
fn overlay_points_land_within_1_5_px_of_opencv_project_points() {
    check_registration((640, 480));
}

#[test]
fn overlay_registration_holds_when_the_view_is_resized_to_an_hmd_eye() {
    check_registration((800, 600));
}

#[test]
fn video_background_keeps_its_pixels_and_colours() {
    let cam = test_camera();
    let (w, h) = (cam.image_width, cam.image_height);
    // A smooth colour ramp with a white dot: colours must pass unchanged, the dot must stay put.
    let mut rgb = ramp_video(w, h, 90);
    let dot = (201u32, 133u32);
    for y in dot.1 - 2..=dot.1 + 2 {
        for x in dot.0 - 2..=dot.0 + 2 {
            let i = ((y * w + x) * 3) as usize;
            rgb[i..i + 3].copy_from_slice(&[255, 255, 255]);
        }
    }
    let mut config = CompositorConfig::monitor(cam.clone());
    config.show_hud = false;
    let mut compositor = Compositor::headless(config).unwrap();
    let overlay = Overlay::default();
    let img = compositor
        .render(&FrameInput {
            video: Some(VideoImage {
                width: w,
                height: h,
                rgb: &rgb,
            }),
            camera_from_world: Some(look_at(Point3::new(0.0, -0.4, 0.4), Point3::origin())),
            overlay: &overlay,
            hud_lines: &[],
        })
        .unwrap();
    let mut worst = 0i32;
    for (x, y) in [(3u32, 5u32), (320, 240), (600, 40), (17, 470), (450, 300)] {
        let got = img.get_pixel(x, y).0;
        let i = ((y * w + x) * 3) as usize;
        for c in 0..3 {
            worst = worst.max((got[c] as i32 - rgb[i + c] as i32).abs());
        }
    }
    assert!(worst <= 1, "video colours changed by up to {worst} levels");
    let c = centroid(&img, Point2::new(dot.0 as f64, dot.1 as f64), 6, 700).unwrap();
    assert!(
        (c.x - dot.0 as f64).abs() < 0.25 && (c.y - dot.1 as f64).abs() < 0.25,
        "video dot moved from {dot:?} to {c}"
    );
}

#[test]
fn stereo_marker_centre_shows_the_disparity_f_ipd_over_depth() {
    let cam = test_camera();
    let camera_from_world = look_at(Point3::new(0.05, -0.35, 0.30), Point3::new(0.0, 0.0, 0.0));
    let ipd_m = 0.064;
    let mut config = CompositorConfig::hmd(cam.clone(), (800, 600), ipd_m);
    config.show_hud = false;
    let mut compositor = Compositor::headless(config).unwrap();
    let f_eye = compositor.view_intrinsics().fx;
    let mut overlay = Overlay::default();
    overlay.push_marker(Point3::origin(), 0.003, [1.0, 1.0, 1.0]);
    let img = compositor
        .render(&FrameInput {
            video: None,
            camera_from_world: Some(camera_from_world),
            overlay: &overlay,
            hud_lines: &[],
        })
        .unwrap();
    assert_eq!(img.dimensions(), (1600, 600));
    let depth_m = (camera_from_world * Point3::origin()).z;
    let eye = compositor.view_intrinsics().clone();
    let centre = eye
        .project(&(camera_from_world * Point3::origin()))
        .unwrap();
    let disparity_px = f_eye * ipd_m / depth_m;
    let left = centroid(
        &img,
        centre + Vector3::new(disparity_px / 2.0, 0.0, 0.0).xy(),
        20,
        300,
    )
    .expect("marker centre missing in the left half");
    let right_guess = centre - Vector3::new(disparity_px / 2.0, 0.0, 0.0).xy()
        + Vector3::new(800.0, 0.0, 0.0).xy();
    let right =
        centroid(&img, right_guess, 20, 300).expect("marker centre missing in the right half");
    assert!(left.x < 800.0 && right.x >= 800.0);
    let measured = left.x - (right.x - 800.0);
    eprintln!("stereo: depth {depth_m:.3} m, predicted disparity {disparity_px:.2} px, measured {measured:.2} px");
    assert!(
        (measured - disparity_px).abs() < 1.0,
        "disparity {measured:.2} px, predicted f·IPD/Z = {disparity_px:.2} px"
    );
    assert!(
        (left.y - right.y).abs() < 0.5,
        "vertical disparity {}",
        left.y - right.y
    );
}

#[test]
fn wrong_video_size_is_reported_not_drawn() {
    let cam = test_camera();
    let mut compositor = Compositor::headless(CompositorConfig::monitor(cam)).unwrap();
    let rgb = vec![0u8; 320 * 240 * 3];
    let err = compositor
        .render(&FrameInput {
            video: Some(VideoImage {
                width: 320,
                height: 240,
                rgb: &rgb,
            }),
            camera_from_world: None,
            overlay: &Overlay::default(),
            hud_lines: &[],
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("320×240") && err.contains("640×480"), "{err}");
}

#[test]
fn a_compositor_that_never_rendered_shuts_down_cleanly() {
    // Regression: kiss3d 0.47 panicked in Window::drop (and aborted the process at thread
    // exit) when the window had never drawn anything.
    let c = Compositor::headless(CompositorConfig::monitor(test_camera())).unwrap();
    drop(c);
    assert!(!kiss3d::context::Context::is_initialized());
}
