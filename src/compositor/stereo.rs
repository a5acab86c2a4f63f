//! Side-by-side stereo for a video see-through head-mounted display.
//!
//! kiss3d 0.47's stereo camera does not set viewports, so each eye is rendered on its own and
//! the two images are placed side by side. Both eyes see the same (mono) video; the overlay is
//! rendered from two virtual eyes `ipd_m` apart along the camera's x axis, centred on the
//! camera, so a point at depth Z appears with a horizontal disparity of f·IPD/Z pixels
//! (left-eye u minus right-eye u).

use image::RgbImage;
use nalgebra::Isometry3;

/// Default interpupillary distance, metres.
pub const DEFAULT_IPD_M: f64 = 0.064;
/// Default per-eye size: the eMagin Z800's 800×600.
pub const DEFAULT_EYE_SIZE_PX: (u32, u32) = (800, 600);

/// Which eye.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eye {
    /// Left eye: shown in the left half.
    Left,
    /// Right eye: shown in the right half.
    Right,
}

/// The eye's frame relative to the camera (OpenCV axes): the left eye sits at x = −IPD/2,
/// so a point's coordinates in it are its camera coordinates plus IPD/2 along x.
pub fn eye_from_camera(eye: Eye, ipd_m: f64) -> Isometry3<f64> {
    let half = 0.5 * ipd_m;
    match eye {
        Eye::Left => Isometry3::translation(half, 0.0, 0.0),
        Eye::Right => Isometry3::translation(-half, 0.0, 0.0),
    }
}

/// Places two equally sized eye images side by side (left | right).
/// Returns `None` when the sizes differ.
pub fn side_by_side(left: &RgbImage, right: &RgbImage) -> Option<RgbImage> {
    if left.dimensions() != right.dimensions() {
        return None;
    }
    let (w, h) = left.dimensions();
    let mut out = RgbImage::new(2 * w, h);
    for (x, y, p) in left.enumerate_pixels() {
        out.put_pixel(x, y, *p);
    }
    for (x, y, p) in right.enumerate_pixels() {
        out.put_pixel(x + w, y, *p);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ar_calibration::intrinsics::CameraIntrinsics;
    use nalgebra::Point3;

    #[test]
    fn eye_offsets_give_the_disparity_f_ipd_over_depth() {
        let cam = CameraIntrinsics::ideal(800, 600, 700.0);
        let p_in_camera = Point3::new(0.02, -0.01, 0.5);
        let ul = cam
            .project(&(eye_from_camera(Eye::Left, 0.064) * p_in_camera))
            .unwrap();
        let ur = cam
            .project(&(eye_from_camera(Eye::Right, 0.064) * p_in_camera))
            .unwrap();
        assert!((ul.x - ur.x - 700.0 * 0.064 / 0.5).abs() < 1e-9);
        assert!((ul.y - ur.y).abs() < 1e-12);
    }

    #[test]
    fn side_by_side_keeps_each_half() {
        let left = RgbImage::from_pixel(3, 2, image::Rgb([1, 2, 3]));
        let right = RgbImage::from_pixel(3, 2, image::Rgb([9, 8, 7]));
        let both = side_by_side(&left, &right).unwrap();
        assert_eq!(both.dimensions(), (6, 2));
        assert_eq!(both.get_pixel(2, 1).0, [1, 2, 3]);
        assert_eq!(both.get_pixel(3, 0).0, [9, 8, 7]);
        assert!(side_by_side(&left, &RgbImage::new(2, 2)).is_none());
    }
}
