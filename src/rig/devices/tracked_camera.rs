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

#[cfg(test)]
mod tests {
    use super::*;
    use ar_drivers::camera::CameraError;
    use crossbeam_channel::{unbounded, Receiver};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    /// A fake camera that delivers the frame numbers the test releases, each stamped
    /// `seq` ms after `t0`, as plain grey 64×48 images; the stream ends when the gate closes.
    struct GatedCamera {
        gate: Receiver<u64>,
        taken: Arc<AtomicU64>,
        t0: Instant,
    }

    impl CameraSource for GatedCamera {
        fn next_frame(&mut self) -> Result<Option<Frame>, CameraError> {
            let Ok(seq) = self.gate.recv() else {
                return Ok(None);
            };
            let image = Mat::new_rows_cols_with_default(
                48,
                64,
                opencv::core::CV_8UC3,
                opencv::core::Scalar::all(128.0),
            )
            .unwrap();
            self.taken.fetch_add(1, Ordering::AcqRel);
            Ok(Some(Frame {
                t: self.t0 + Duration::from_millis(seq),
                seq,
                image,
                camera_from_world_truth: None,
            }))
        }

        fn describe(&self) -> String {
            "gated test camera".into()
        }
    }

    /// Tracking that takes nothing while 30 frames are captured does not hold the capture
    /// back, and then tracks the newest: the frame shown is the 30th, not the first, so its
    /// age does not grow with the consumer's delay.
    #[test]
    fn a_slow_tracker_gets_the_newest_frame_and_capture_never_waits_for_it() {
        let (gate, gate_rx) = unbounded();
        let taken = Arc::new(AtomicU64::new(0));
        let t0 = Instant::now();
        let source = GatedCamera {
            gate: gate_rx,
            taken: taken.clone(),
            t0,
        };
        let intrinsics = CameraIntrinsics::ideal(64, 48, 60.0);
        let mut camera =
            TrackedCamera::new(Box::new(source), &intrinsics, TrackerConfig::default()).unwrap();
        for seq in 0..30 {
            gate.send(seq).unwrap();
        }
        // A failure guard only: the capture thread takes all 30 without anyone tracking.
        let deadline = Instant::now() + Duration::from_secs(60);
        while taken.load(Ordering::Acquire) < 30 {
            assert!(Instant::now() < deadline, "the capture thread blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
        let update = camera.next_update().unwrap();
        assert_eq!(update.captured_at, t0 + Duration::from_millis(29));
        assert_eq!((update.frame.width, update.frame.height), (64, 48));
        assert!(update.camera_from_world.is_none());
        let counts = camera.capture_counts().unwrap();
        assert_eq!(
            (counts.captured(), counts.dropped_stale(), counts.taken()),
            (30, 29, 1)
        );
        // The end of the stream reaches the tracker as the fatal error it was.
        drop(gate);
        let err = loop {
            match camera.next_update() {
                Err(DeviceError::Timeout) => {}
                other => break other.unwrap_err(),
            }
        };
        assert_eq!(
            err,
            DeviceError::Fatal("gated test camera: the stream ended".into())
        );
    }
}
