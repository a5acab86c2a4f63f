//! Passes the camera's pose on to the solver thread: a [`CameraTracker`] that forwards every
//! update of the camera it wraps unchanged and publishes the tracked `world_from_camera` on a
//! latest-value channel, so a wind that follows the camera blows from where the user looks.

use super::interfaces::{CameraTracker, DeviceError};
use crate::rig::threads::messages::CameraUpdate;
use ar_drivers::latest::LatestSender;
use nalgebra::Isometry3;

/// A camera whose tracked poses are also sent to the solver thread.
pub struct ViewTee {
    camera: Box<dyn CameraTracker>,
    poses: LatestSender<Isometry3<f64>>,
}

impl ViewTee {
    /// Wraps `camera`; each frame with a marker pose sends `world_from_camera` to `poses`.
    pub fn new(camera: Box<dyn CameraTracker>, poses: LatestSender<Isometry3<f64>>) -> Self {
        Self { camera, poses }
    }
}

impl CameraTracker for ViewTee {
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
        let update = self.camera.next_update()?;
        if let Some(camera_from_world) = update.camera_from_world {
            // A gone solver thread is the rig shutting down; the camera thread notices that
            // through its own channel.
            let _ = self.poses.send(camera_from_world.inverse());
        }
        Ok(update)
    }

    fn capture_counts(
        &self,
    ) -> Option<std::sync::Arc<crate::rig::threads::capture::CaptureCounts>> {
        self.camera.capture_counts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::threads::messages::VideoFrame;
    use ar_drivers::latest::latest_channel;
    use nalgebra::{Translation3, UnitQuaternion, Vector3};
    use std::sync::Arc;
    use std::time::Instant;

    struct Poses(Vec<Option<Isometry3<f64>>>);

    impl CameraTracker for Poses {
        fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
            let pose = self.0.pop().ok_or(DeviceError::Timeout)?;
            Ok(CameraUpdate {
                captured_at: Instant::now(),
                frame: Arc::new(VideoFrame {
                    width: 1,
                    height: 1,
                    rgb: vec![0; 3],
                }),
                camera_from_world: pose,
            })
        }
    }

    #[test]
    fn tracked_poses_reach_the_solver_as_world_from_camera() {
        let camera_from_world = Isometry3::from_parts(
            Translation3::new(0.1, -0.2, 0.9),
            UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -2.2),
        );
        let (tx, rx) = latest_channel(1);
        // Popped from the back: a frame without the marker, then one with it.
        let mut tee = ViewTee::new(Box::new(Poses(vec![Some(camera_from_world), None])), tx);
        assert!(tee.next_update().unwrap().camera_from_world.is_none());
        assert!(rx.try_recv().is_err(), "no pose without the marker");
        assert_eq!(
            tee.next_update().unwrap().camera_from_world,
            Some(camera_from_world)
        );
        let world_from_camera = rx.try_recv().unwrap();
        assert!(
            (world_from_camera * camera_from_world)
                .translation
                .vector
                .norm()
                < 1e-12
        );
        assert_eq!(tee.next_update().unwrap_err(), DeviceError::Timeout);
    }
}
