//! ar-calibration: the calibrations that register the virtual scene to the real one.
//!
//! - [`intrinsics`]: the camera file (pinhole intrinsics and distortion), read and written as TOML.
//! - [`atomic_write`]: writes a file so that an interrupted run never leaves half of it.

pub mod atomic_write;
pub mod intrinsics;
