//! The mouse's grab through the stylus spring, one implementation for the sandbox and the
//! live rig (`run`): a press picks the body under the pointer in the view the user sees and
//! clips the spring to the picked point; moving the pointer drags the spring's target in the
//! plane through the grabbed point facing the camera (as the camera was at the press), along
//! the viewing ray of the pointer's pixel in the view as it is now.

use super::pick::{pick_body, Pick, ViewRay};
use crate::interaction::SpringAttachment;
use crate::scene_view::BodyView;
use ar_calibration::intrinsics::CameraIntrinsics;
use nalgebra::{Isometry3, Point3, Vector3};

/// A camera the pointer's pixels are seen through: the view's intrinsics (in the view's
/// pixels) and its pose.
#[derive(Debug, Clone, Copy)]
pub struct PointerCamera<'a> {
    /// Intrinsics of the view, pixels of the view (not of the window).
    pub intrinsics: &'a CameraIntrinsics,
    /// The view's pose, OpenCV axes.
    pub camera_from_world: Isometry3<f64>,
}

impl PointerCamera<'_> {
    /// The viewing ray of pixel (`x_px`, `y_px`) of the view.
    pub fn ray(&self, x_px: f64, y_px: f64) -> ViewRay {
        ViewRay::through_pixel(self.intrinsics, &self.camera_from_world, x_px, y_px)
    }
}

/// A body held by the pointer: the spring and the plane its target moves in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrabDrag {
    spring: SpringAttachment,
    plane_normal_in_world: Vector3<f64>,
}

impl GrabDrag {
    /// Picks the body under pixel (`x_px`, `y_px`) of `camera`'s view among `bodies` (as
    /// shown); the pick and the drag that holds it, or `None` when the pointer is on no body.
    pub fn start(
        camera: &PointerCamera<'_>,
        x_px: f64,
        y_px: f64,
        bodies: &[BodyView],
    ) -> Option<(Pick, Self)> {
        let pick = pick_body(&camera.ray(x_px, y_px), bodies, camera.intrinsics.fx)?;
        let forward = camera.camera_from_world.inverse().rotation * Vector3::z();
        let drag = Self {
            spring: SpringAttachment {
                body: pick.body,
                point_in_body: pick.point_in_body,
                target_in_world: pick.point_in_world,
            },
            plane_normal_in_world: forward,
        };
        Some((pick, drag))
    }

    /// The spring now.
    pub fn spring(&self) -> SpringAttachment {
        self.spring
    }

    /// Moves the target to where the ray of pixel (`x_px`, `y_px`) of `camera`'s view meets
    /// the drag plane; the new spring, or `None` (target kept) when the ray misses the plane.
    pub fn follow(
        &mut self,
        camera: &PointerCamera<'_>,
        x_px: f64,
        y_px: f64,
    ) -> Option<SpringAttachment> {
        let plane_point: Point3<f64> = self.spring.target_in_world;
        let target = camera
            .ray(x_px, y_px)
            .meet_plane(&plane_point, &self.plane_normal_in_world)?;
        self.spring.target_in_world = target;
        Some(self.spring)
    }
}
