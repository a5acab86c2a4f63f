//! Framing a scene for a fixed camera: from a viewing direction, the closest camera that sees
//! every given point inside the image, clear of the HUD band at the top and of a margin all
//! round. The demo frames each scene's bodies, supports, the stylus's reach and the marker
//! this way, so that a tall stand and a low lift are both seen whole and nothing hides under
//! the HUD.

use crate::rig::devices::fixed_view::look_at;
use ar_calibration::intrinsics::CameraIntrinsics;
use nalgebra::{Isometry3, Point2, Point3, Vector3};

/// The part of the image a framed scene must stay in, pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImageRegion {
    /// Left edge.
    pub left_px: f64,
    /// Top edge (below the HUD band).
    pub top_px: f64,
    /// Right edge.
    pub right_px: f64,
    /// Bottom edge.
    pub bottom_px: f64,
}

impl ImageRegion {
    /// The whole image of `intrinsics` less `margin_px` all round and `top_band_px` at the top.
    pub fn below_band(intrinsics: &CameraIntrinsics, top_band_px: f64, margin_px: f64) -> Self {
        Self {
            left_px: margin_px,
            top_px: top_band_px + margin_px,
            right_px: f64::from(intrinsics.image_width) - margin_px,
            bottom_px: f64::from(intrinsics.image_height) - margin_px,
        }
    }

    /// Whether `p` lies inside.
    pub fn contains(&self, p: &Point2<f64>) -> bool {
        (self.left_px..=self.right_px).contains(&p.x)
            && (self.top_px..=self.bottom_px).contains(&p.y)
    }

    fn centre(&self) -> Point2<f64> {
        Point2::new(
            0.5 * (self.left_px + self.right_px),
            0.5 * (self.top_px + self.bottom_px),
        )
    }
}

/// The image box of `points` seen from `camera_from_world`; `None` if a point is behind the
/// camera (or too close to it).
fn image_box(
    intrinsics: &CameraIntrinsics,
    camera_from_world: &Isometry3<f64>,
    points: &[Point3<f64>],
) -> Option<(Point2<f64>, Point2<f64>)> {
    let mut lo = Point2::new(f64::INFINITY, f64::INFINITY);
    let mut hi = Point2::new(f64::NEG_INFINITY, f64::NEG_INFINITY);
    for p in points {
        let c = camera_from_world * p;
        if c.z < 0.05 {
            return None;
        }
        let q = intrinsics.project(&c)?;
        lo = lo.inf(&q);
        hi = hi.sup(&q);
    }
    Some((lo, hi))
}

/// The camera at `distance_m` from the points' centre along `toward_eye`, turned so that the
/// points' image box is centred in `region`; with whether the box fits in it.
fn centred_view(
    intrinsics: &CameraIntrinsics,
    points: &[Point3<f64>],
    centre: &Point3<f64>,
    toward_eye: &Vector3<f64>,
    distance_m: f64,
    region: &ImageRegion,
) -> Option<(Isometry3<f64>, bool)> {
    let eye = centre + toward_eye * distance_m;
    let mut target = *centre;
    let mut pose = look_at(eye, target)?;
    // Turning the camera moves the image box the other way; a few corrections converge
    // (each one is exact to first order).
    for _ in 0..6 {
        let (lo, hi) = image_box(intrinsics, &pose, points)?;
        let off = nalgebra::center(&lo, &hi) - region.centre();
        let depth = (pose * target).z;
        let world_from_camera = pose.inverse();
        let right = world_from_camera * Vector3::x();
        let down = world_from_camera * Vector3::y();
        target += right * (off.x * depth / intrinsics.fx) + down * (off.y * depth / intrinsics.fy);
        pose = look_at(eye, target)?;
    }
    let (lo, hi) = image_box(intrinsics, &pose, points)?;
    Some((pose, region.contains(&lo) && region.contains(&hi)))
}

/// `camera_from_world` (OpenCV axes, world z up in the image) of the closest camera looking
/// along −`toward_eye` that sees every point of `points` inside `region`, the points' image
/// centred in it; `None` when no camera within 20 m does (or there are no points).
pub fn frame_points(
    intrinsics: &CameraIntrinsics,
    points: &[Point3<f64>],
    toward_eye: &Vector3<f64>,
    region: &ImageRegion,
) -> Option<Isometry3<f64>> {
    let first = points.first()?;
    let (lo, hi) = points
        .iter()
        .fold((*first, *first), |(lo, hi), p| (lo.inf(p), hi.sup(p)));
    let centre = nalgebra::center(&lo, &hi);
    let toward_eye = toward_eye.try_normalize(1e-12)?;
    let fits = |d: f64| centred_view(intrinsics, points, &centre, &toward_eye, d, region);
    let (mut near, mut far) = (0.05, 20.0);
    if !fits(far)?.1 {
        return None;
    }
    // Closer cameras see the points larger; bisect for the closest that still fits.
    for _ in 0..40 {
        let mid = 0.5 * (near + far);
        match fits(mid) {
            Some((_, true)) => far = mid,
            _ => near = mid,
        }
    }
    fits(far).map(|(pose, _)| pose)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tower() -> Vec<Point3<f64>> {
        vec![
            Point3::new(-0.05, -0.05, 0.0),
            Point3::new(0.05, 0.05, 0.0),
            Point3::new(0.0, 0.0, 0.7),
            Point3::new(0.1, 0.2, 0.3),
        ]
    }

    #[test]
    fn a_framed_scene_fills_the_region_below_the_band_and_touches_its_edge() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let region = ImageRegion::below_band(&cam, 100.0, 10.0);
        let pose = frame_points(&cam, &tower(), &Vector3::new(0.2, -1.0, 0.3), &region).unwrap();
        let (lo, hi) = image_box(&cam, &pose, &tower()).unwrap();
        assert!(region.contains(&lo) && region.contains(&hi), "{lo} {hi}");
        // The tower is tall: it spans the region's height to within a pixel (closest camera).
        assert!((lo.y - region.top_px).abs() < 1.0, "{lo}");
        assert!((hi.y - region.bottom_px).abs() < 1.0, "{hi}");
        // Centred across.
        assert!((lo.x + hi.x - 640.0).abs() < 1.0, "{lo} {hi}");
        // World up is up in the image.
        let base = cam.project(&(pose * Point3::origin())).unwrap();
        let top = cam.project(&(pose * Point3::new(0.0, 0.0, 0.7))).unwrap();
        assert!(top.y < base.y);
    }

    #[test]
    fn nothing_to_frame_or_a_vertical_view_gives_no_camera() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let region = ImageRegion::below_band(&cam, 100.0, 10.0);
        assert!(frame_points(&cam, &[], &Vector3::y(), &region).is_none());
        assert!(frame_points(&cam, &tower(), &Vector3::z(), &region).is_none());
    }
}
