//! `calibrate`: groups the camera-intrinsics and the tracker-to-marker calibrations.

use clap::Subcommand;

/// The two calibrations, done in this order on a new set-up.
#[derive(Subcommand, Debug)]
pub enum CalibrateCommand {
    /// Camera intrinsics (fx, fy, cx, cy, distortion) from chessboard or ChArUco views.
    Camera(super::calibrate_camera::CalibrateCameraArgs),
    /// The arm-to-marker transform (world_from_arm) from touched points.
    Tracker(super::calibrate_tracker::CalibrateTrackerArgs),
}

/// Runs the chosen calibration.
pub fn run(cmd: CalibrateCommand) -> anyhow::Result<()> {
    match cmd {
        CalibrateCommand::Camera(args) => super::calibrate_camera::run(args),
        CalibrateCommand::Tracker(args) => super::calibrate_tracker::run(args),
    }
}
