//! A camera source with the marker tracker as the rig's [`CameraTracker`]: each frame from an
//! `ar_drivers::camera::CameraSource` (OpenCV capture or the synthetic camera) goes through
//! the ArUco tracker for `camera_from_world`, is converted from BGR to RGB and undistorted
//! (so the compositor can draw the overlay with the pinhole model).
//!
//! The source is read on a capture thread of its own ([`Capture`], "capture"), which keeps
//! only the newest frame: tracking takes the newest frame whenever it is ready for one, and
//! the frames it was too slow for are dropped as stale, so the sensor is never read late and
//! the video shown is never older than one frame plus the tracking.

use super::interfaces::{CameraTracker, DeviceError};
use crate::compositor::undistort::Undistorter;
use crate::rig::threads::capture::Capture;
use crate::rig::threads::messages::{CameraUpdate, VideoFrame};
use crate::tracking::{MarkerTracker, TrackerConfig};
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::camera::{CameraSource, Frame};
use opencv::core::Mat;
use opencv::imgproc;
use opencv::prelude::*;
use std::sync::Arc;
use std::time::Duration;

/// How long [`CameraTracker::next_update`] waits for a frame before reporting a timeout.
const FRAME_WAIT: Duration = Duration::from_millis(100);

/// Camera + tracker + undistortion.
pub struct TrackedCamera {
    capture: Capture<Frame>,
    tracker: MarkerTracker,
    undistorter: Undistorter,
    intrinsics: CameraIntrinsics,
    rgb: Mat,
}

impl TrackedCamera {
    /// Wraps `source` (whose images have `intrinsics`) with a tracker configured by `config`,
    /// and starts reading it on the capture thread.
    pub fn new(
        mut source: Box<dyn CameraSource>,
        intrinsics: &CameraIntrinsics,
        config: TrackerConfig,
    ) -> Result<Self, DeviceError> {
        let tracker = MarkerTracker::new(config, intrinsics)
            .map_err(|e| DeviceError::Fatal(format!("marker tracker: {e}")))?;
        let undistorter = Undistorter::new(intrinsics)
            .map_err(|e| DeviceError::Fatal(format!("undistortion maps: {e}")))?;
        let describe = source.describe();
        let capture = Capture::spawn("capture", move || match source.next_frame() {
            Ok(Some(f)) => Ok(f),
            Ok(None) => Err(DeviceError::Fatal(format!("{describe}: the stream ended"))),
            Err(e) => Err(DeviceError::Disconnected(e.to_string())),
        })
        .map_err(|e| DeviceError::Fatal(e.to_string()))?;
        Ok(Self {
            capture,
            tracker,
            undistorter,
            intrinsics: intrinsics.clone(),
            rgb: Mat::default(),
        })
    }
}

impl CameraTracker for TrackedCamera {
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
        let frame = self.capture.newest(FRAME_WAIT)?;
        let observation = self
            .tracker
            .process(&frame)
            .map_err(|e| DeviceError::Fatal(format!("marker tracker: {e}")))?;
        let camera_from_world = observation.pose().map(|p| p.camera_from_world);
        imgproc::cvt_color_def(&frame.image, &mut self.rgb, imgproc::COLOR_BGR2RGB)
            .map_err(|e| DeviceError::Fatal(format!("colour conversion: {e}")))?;
        let (w, h) = (self.rgb.cols() as u32, self.rgb.rows() as u32);
        if (w, h) != (self.intrinsics.image_width, self.intrinsics.image_height) {
            return Err(DeviceError::Fatal(format!(
                "the camera delivers {w}×{h} px frames but the camera file says {}×{} px",
                self.intrinsics.image_width, self.intrinsics.image_height
            )));
        }
        let bytes = self
            .rgb
            .data_bytes()
            .map_err(|e| DeviceError::Fatal(format!("frame buffer: {e}")))?;
        let mut rgb = Vec::with_capacity(bytes.len());
        self.undistorter
            .undistort_rgb(w, h, bytes, &mut rgb)
            .map_err(|e| DeviceError::Fatal(e.to_string()))?;
        Ok(CameraUpdate {
            captured_at: frame.t,
            frame: Arc::new(VideoFrame {
                width: w,
                height: h,
                rgb,
            }),
            camera_from_world,
        })
    }

    fn capture_counts(&self) -> Option<Arc<crate::rig::threads::capture::CaptureCounts>> {
        Some(self.capture.counts().clone())
    }
}

impl Drop for TrackedCamera {
    fn drop(&mut self) {
        let c = self.capture.counts();
        log::info!(
            "camera: {} frames captured, {} dropped as stale (tracking took the newest)",
            c.captured(),
            c.dropped_stale()
        );
    }
}
