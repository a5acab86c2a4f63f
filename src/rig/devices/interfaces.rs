//! The device interfaces the rig's device threads pull from: one trait per kind, implemented by
//! the real drivers and by the simulated devices alike (chosen at start-up). Every blocking
//! call returns within about 100 ms (a timeout counts as [`DeviceError::Timeout`]), so a worker
//! notices a shutdown promptly. The arm has no trait: its driver runs its own thread, real
//! port or simulated arm alike, and the solver thread reads the driver's channels
//! ([`super::arm`]).

use crate::rig::threads::capture::CaptureCounts;
use crate::rig::threads::messages::{CameraUpdate, MicLevel};
use std::sync::Arc;

/// Why a device call failed, and whether retrying can help.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceError {
    /// Nothing arrived within the call's timeout; try again.
    #[error("timed out")]
    Timeout,
    /// The device went away; retrying (reconnecting) may help.
    #[error("disconnected: {0}")]
    Disconnected(String),
    /// The device cannot be used; retrying will not help.
    #[error("{0}")]
    Fatal(String),
}

/// Camera plus marker tracking: the next captured frame (undistorted) and its pose.
pub trait CameraTracker: Send {
    /// Blocks for the next frame (at the camera's rate).
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError>;

    /// The counts of the capture thread, for a camera read on one
    /// ([`crate::rig::threads::capture`]); the run summary reports them.
    fn capture_counts(&self) -> Option<Arc<CaptureCounts>> {
        None
    }
}

/// The microphone: block levels.
pub trait MicDevice: Send {
    /// Blocks for the next block's level.
    fn next_level(&mut self) -> Result<MicLevel, DeviceError>;
}
