//! A virtual camera for a session without a camera (the sandbox): it shows the desk with the
//! printed marker lying on it, rendered from wherever the view is now (the synthetic camera's
//! renderer, without its blur and noise), and reports that view as the tracked pose. The
//! compositor then draws the scene over it exactly as it draws it over live video, so a scene
//! looks as it does in AR, and the view reaches the solver (the wind) and a recording the
//! same way a tracked camera's does.

use super::fixed_view::FramePacer;
use super::interfaces::{CameraTracker, DeviceError};
use crate::rig::threads::messages::{CameraUpdate, VideoFrame};
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::camera::{CameraPath, SyntheticCamera, SyntheticConfig, PRINTED_MARKER_SIDE_M};
use nalgebra::Isometry3;
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where the virtual camera looks from; set by whoever moves the view, read every frame.
#[derive(Debug, Clone)]
pub struct ViewHandle(Arc<Mutex<Isometry3<f64>>>);

impl ViewHandle {
    /// A view starting at `camera_from_world` (OpenCV axes).
    pub fn new(camera_from_world: Isometry3<f64>) -> Self {
        Self(Arc::new(Mutex::new(camera_from_world)))
    }

    /// Moves the view.
    pub fn set(&self, camera_from_world: Isometry3<f64>) {
        // A poisoned lock only means a panicking writer; the pose itself is always whole.
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = camera_from_world;
    }

    /// The view now.
    pub fn get(&self) -> Isometry3<f64> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The virtual camera; see the module docs.
pub struct ViewCamera {
    renderer: SyntheticCamera,
    view: ViewHandle,
    shown: Option<(Isometry3<f64>, Arc<VideoFrame>)>,
    pacer: FramePacer,
    rgb: Mat,
}

impl ViewCamera {
    /// A camera with `intrinsics` at `fps` frames per second, following `view`; the marker is
    /// the shipped printed one (80 mm).
    pub fn new(
        intrinsics: &CameraIntrinsics,
        view: ViewHandle,
        fps: f64,
    ) -> Result<Self, DeviceError> {
        let config = SyntheticConfig {
            path: CameraPath::Static {
                camera_from_world: view.get(),
            },
            fps,
            marker_length_m: PRINTED_MARKER_SIDE_M,
            blur_sigma_px: 0.0,
            noise_sigma_levels: 0.0,
            ..SyntheticConfig::default()
        };
        let renderer = SyntheticCamera::new(intrinsics, config, 1)
            .map_err(|e| DeviceError::Fatal(format!("desk renderer: {e}")))?;
        Ok(Self {
            renderer,
            view,
            shown: None,
            pacer: FramePacer::new(fps),
            rgb: Mat::default(),
        })
    }

    fn render(
        &mut self,
        camera_from_world: &Isometry3<f64>,
    ) -> Result<Arc<VideoFrame>, DeviceError> {
        let fatal = |what: &str, e: opencv::Error| DeviceError::Fatal(format!("{what}: {e}"));
        let bgr = self
            .renderer
            .render_pose(camera_from_world)
            .map_err(|e| DeviceError::Fatal(format!("desk renderer: {e}")))?;
        imgproc::cvt_color_def(&bgr, &mut self.rgb, imgproc::COLOR_BGR2RGB)
            .map_err(|e| fatal("colour conversion", e))?;
        let rgb = self
            .rgb
            .data_bytes()
            .map_err(|e| fatal("frame buffer", e))?
            .to_vec();
        Ok(Arc::new(VideoFrame {
            width: self.rgb.cols() as u32,
            height: self.rgb.rows() as u32,
            rgb,
        }))
    }
}

impl CameraTracker for ViewCamera {
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
        self.pacer.wait()?;
        let camera_from_world = self.view.get();
        // The desk is rendered again only when the view moved.
        let frame = match &self.shown {
            Some((pose, frame)) if *pose == camera_from_world => frame.clone(),
            _ => {
                let frame = self.render(&camera_from_world)?;
                self.shown = Some((camera_from_world, frame.clone()));
                frame
            }
        };
        Ok(CameraUpdate {
            captured_at: Instant::now(),
            frame,
            camera_from_world: Some(camera_from_world),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::devices::fixed_view::look_at;
    use nalgebra::Point3;

    /// The marker's centre is black and a point of the desk well beside it is not, in the
    /// frame rendered from a moved view.
    #[test]
    fn the_marker_lies_where_the_view_sees_it() {
        let cam = CameraIntrinsics::ideal(320, 240, 300.0);
        let view = ViewHandle::new(look_at(Point3::new(0.0, -0.5, 0.5), Point3::origin()).unwrap());
        let mut camera = ViewCamera::new(&cam, view.clone(), 25.0).unwrap();
        let moved = look_at(Point3::new(0.3, -0.4, 0.4), Point3::new(0.05, 0.0, 0.0)).unwrap();
        view.set(moved);
        let u = camera.next_update().unwrap();
        assert_eq!(u.camera_from_world, Some(moved));
        let at = |p: Point3<f64>| {
            let px = cam.project(&(moved * p)).unwrap();
            let i = ((px.y.round() as u32 * 320 + px.x.round() as u32) * 3) as usize;
            u.frame.rgb[i..i + 3].to_vec()
        };
        // An ArUco 4×4 marker is 6 cells wide with a black border one cell wide: half a cell
        // in from its left edge is black whatever the id.
        let cell = PRINTED_MARKER_SIDE_M / 6.0;
        let border = at(Point3::new(
            -0.5 * PRINTED_MARKER_SIDE_M + 0.5 * cell,
            0.0,
            0.0,
        ));
        assert!(border.iter().all(|&c| c < 60), "{border:?}");
        let desk = at(Point3::new(0.2, 0.15, 0.0));
        assert!(desk.iter().any(|&c| c > 60), "{desk:?}");
    }
}
