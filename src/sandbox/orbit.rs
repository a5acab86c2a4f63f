//! The sandbox's view: a camera orbiting a pivot point (yaw about the world's z, pitch above
//! the desk, distance), panned in its image plane and zoomed toward the pivot. It starts where
//! the demo's camera looks from, so a scene first appears as it does in the demo.

use crate::rig::devices::fixed_view::look_at;
use nalgebra::{Isometry3, Point3, Vector3};

/// Radians of orbit per pixel of pointer travel: a drag across a 640 px view turns the scene
/// about half a turn (3.2 rad).
pub const ORBIT_RAD_PER_PX: f64 = 0.005;
/// Distance factor per wheel notch toward the pivot.
pub const ZOOM_PER_NOTCH: f64 = 0.9;
/// Closest and farthest the camera comes to the pivot, metres.
pub const DISTANCE_RANGE_M: (f64, f64) = (0.1, 5.0);
/// Steepest view above or below the desk, radians: `look_at` has no horizon straight down.
pub const MAX_PITCH_RAD: f64 = 1.45;

/// A camera looking at a pivot from a direction and a distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OrbitView {
    /// The point looked at, world frame (m).
    pub pivot_in_world: Point3<f64>,
    /// Direction of the eye from the pivot about the world's z, from +x (rad).
    pub yaw_rad: f64,
    /// Elevation of the eye above the pivot's horizontal plane (rad).
    pub pitch_rad: f64,
    /// Eye to pivot, metres.
    pub distance_m: f64,
}

impl OrbitView {
    /// The orbit whose camera is `camera_from_world` (OpenCV axes, no roll, as `look_at`
    /// makes it), pivoting about the point `pivot_depth_m` ahead on its optical axis.
    pub fn from_camera(camera_from_world: &Isometry3<f64>, pivot_depth_m: f64) -> Self {
        let world_from_camera = camera_from_world.inverse();
        let eye = Point3::from(world_from_camera.translation.vector);
        let forward = world_from_camera.rotation * Vector3::z();
        let pivot_in_world = eye + forward * pivot_depth_m;
        let back = -forward;
        Self {
            pivot_in_world,
            yaw_rad: back.y.atan2(back.x),
            pitch_rad: back.z.clamp(-1.0, 1.0).asin(),
            distance_m: pivot_depth_m,
        }
    }

    /// The eye (the camera's centre), world frame.
    pub fn eye_in_world(&self) -> Point3<f64> {
        let (sy, cy) = self.yaw_rad.sin_cos();
        let (sp, cp) = self.pitch_rad.sin_cos();
        self.pivot_in_world + Vector3::new(cp * cy, cp * sy, sp) * self.distance_m
    }

    /// The camera's pose, OpenCV axes (x right, y down, z forward).
    pub fn camera_from_world(&self) -> Isometry3<f64> {
        // The pitch is kept off the poles, so there is always a horizon.
        look_at(self.eye_in_world(), self.pivot_in_world).unwrap_or_else(Isometry3::identity)
    }

    /// Turns the eye about the pivot as a pointer dragged by (dx, dy) pixels turns it: right
    /// turns the scene to the right (the eye to the left), down raises the eye.
    pub fn orbit(&mut self, dx_px: f64, dy_px: f64) {
        self.yaw_rad -= dx_px * ORBIT_RAD_PER_PX;
        self.pitch_rad =
            (self.pitch_rad + dy_px * ORBIT_RAD_PER_PX).clamp(-MAX_PITCH_RAD, MAX_PITCH_RAD);
    }

    /// Moves the view in its image plane so that the pivot's depth follows the pointer: a
    /// drag of (dx, dy) pixels with focal length `focal_px` moves the scene by as much.
    pub fn pan(&mut self, dx_px: f64, dy_px: f64, focal_px: f64) {
        let world_from_camera = self.camera_from_world().inverse();
        let right = world_from_camera.rotation * Vector3::x();
        let down = world_from_camera.rotation * Vector3::y();
        let m_per_px = self.distance_m / focal_px;
        self.pivot_in_world -= (right * dx_px + down * dy_px) * m_per_px;
    }

    /// Moves the eye toward the pivot (positive notches) or away, within [`DISTANCE_RANGE_M`].
    pub fn zoom(&mut self, notches: f64) {
        let (near, far) = DISTANCE_RANGE_M;
        self.distance_m = (self.distance_m * ZOOM_PER_NOTCH.powf(notches)).clamp(near, far);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ar_calibration::intrinsics::CameraIntrinsics;

    #[test]
    fn an_orbit_from_a_look_at_camera_is_that_camera() {
        let eye = Point3::new(0.2, -0.9, 0.6);
        let target = Point3::new(0.0, 0.05, 0.3);
        let camera = look_at(eye, target).unwrap();
        let orbit = OrbitView::from_camera(&camera, (target - eye).norm());
        assert!((orbit.eye_in_world() - eye).norm() < 1e-12);
        assert!((orbit.pivot_in_world - target).norm() < 1e-12);
        let again = orbit.camera_from_world();
        assert!((again.to_homogeneous() - camera.to_homogeneous()).norm() < 1e-12);
    }

    #[test]
    fn a_pan_moves_the_pivot_with_the_pointer_at_its_depth() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let mut orbit = OrbitView {
            pivot_in_world: Point3::new(0.0, 0.0, 0.3),
            yaw_rad: -1.2,
            pitch_rad: 0.3,
            distance_m: 0.9,
        };
        let fixed_point = orbit.pivot_in_world;
        let before = cam
            .project(&(orbit.camera_from_world() * fixed_point))
            .unwrap();
        orbit.pan(40.0, -25.0, cam.fx);
        let after = cam
            .project(&(orbit.camera_from_world() * fixed_point))
            .unwrap();
        assert!(
            ((after.x - before.x) - 40.0).abs() < 1e-9,
            "{before} {after}"
        );
        assert!(
            ((after.y - before.y) + 25.0).abs() < 1e-9,
            "{before} {after}"
        );
    }

    #[test]
    fn orbit_and_zoom_keep_the_pivot_centred_and_within_bounds() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let mut orbit = OrbitView {
            pivot_in_world: Point3::new(0.1, 0.0, 0.3),
            yaw_rad: 0.0,
            pitch_rad: 0.2,
            distance_m: 1.0,
        };
        orbit.orbit(100.0, 10_000.0);
        assert_eq!(orbit.pitch_rad, MAX_PITCH_RAD);
        assert!((orbit.yaw_rad + 0.5).abs() < 1e-12);
        orbit.zoom(2.0);
        assert!((orbit.distance_m - 0.81).abs() < 1e-12);
        orbit.zoom(-100.0);
        assert_eq!(orbit.distance_m, DISTANCE_RANGE_M.1);
        let p = cam
            .project(&(orbit.camera_from_world() * orbit.pivot_in_world))
            .unwrap();
        assert!(
            (p.x - cam.cx).abs() < 1e-9 && (p.y - cam.cy).abs() < 1e-9,
            "{p}"
        );
    }
}
