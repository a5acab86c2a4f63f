//! ar-calibration: the calibrations that register the virtual scene to the real one.
//!
//! - [`intrinsics`]: the camera file (pinhole intrinsics and distortion), read and written as TOML.
//! - [`camera_calibration`]: camera intrinsics from chessboard views, refusing poor view sets.
//! - [`atomic_write`]: writes a file so that an interrupted run never leaves half of it.

pub mod atomic_write;
pub mod camera_calibration;
pub mod intrinsics;
