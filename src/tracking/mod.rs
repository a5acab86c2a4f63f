//! Marker tracking: ArUco detection, camera pose by solvePnP, smoothing.
//!
//! The printed marker defines the world frame (origin at the marker centre, x along the printed
//! top edge, y up the page, z out of the paper toward the camera). For each camera
//! [`Frame`](ar_drivers::camera::Frame), [`MarkerTracker::process`] returns a
//! [`MarkerObservation`]: [`MarkerObservation::Detected`] with a [`MarkerPose`]
//! (`camera_from_world` in OpenCV camera axes, its reprojection error, the frame's time and
//! sequence number), [`MarkerObservation::Held`] (the last pose, younger than
//! [`TrackerConfig::hold_secs`]) or [`MarkerObservation::NotDetected`]. It never invents a pose:
//! a pose is only reported if the configured marker id was decoded and the solved pose
//! reprojects its corners within [`TrackerConfig::max_reprojection_error_px`].
//!
//! ```no_run
//! use ar_multibody::tracking::{MarkerTracker, TrackerConfig};
//! use ar_drivers::camera::{CameraSource, SyntheticCamera, SyntheticConfig};
//! use ar_calibration::intrinsics::CameraIntrinsics;
//! # fn main() -> anyhow::Result<()> {
//! let intr = CameraIntrinsics::load("assets/cameras/synthetic_640x480.toml".as_ref())?;
//! let mut camera = SyntheticCamera::new(&intr, SyntheticConfig::default(), 1)?;
//! let mut tracker = MarkerTracker::new(TrackerConfig::default(), &intr)?;
//! while let Some(frame) = camera.next_frame()? {
//!     if let Some(pose) = tracker.process(&frame)?.pose() {
//!         println!("{}", pose.camera_from_world);
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! - [`config`]: dictionary, id, marker length, grid board, hold time, smoothing.
//! - [`tracker`]: detection and pose.
//! - [`edge_refine`]: unbiased sub-pixel corners from the marker's edges.
//! - [`one_euro`]: the one-euro pose filter.
//! - [`accuracy`]: errors against ground truth.
//! - [`pose_csv`]: the tracker's CSV output and ground-truth files.

pub mod accuracy;
pub mod config;
pub mod edge_refine;
pub mod one_euro;
pub mod pose_csv;
pub mod tracker;

pub use accuracy::{AccuracyStats, AccuracySummary, PoseError};
pub use config::{Dictionary, GridBoardConfig, TrackerConfig};
pub use one_euro::{OneEuroConfig, PoseSmoother};
pub use tracker::{MarkerObservation, MarkerPose, MarkerTracker, TrackingError};
