//! `calibrate`: groups the camera-intrinsics, the tracker-to-marker and the stylus-tip
//! calibrations.

use clap::Subcommand;

/// The calibrations, done in this order on a new set-up (the tip only for a tip other than
/// the arm's own point tip, before the tracker).
#[derive(Subcommand, Debug)]
pub enum CalibrateCommand {
    /// Camera intrinsics (fx, fy, cx, cy, distortion) from chessboard or ChArUco views.
    Camera(super::calibrate_camera::CalibrateCameraArgs),
    /// The arm-to-marker transform (world_from_arm) from touched points.
    Tracker(super::calibrate_tracker::CalibrateTrackerArgs),
    /// The stylus tip (a ball tip, a longer or bent stylus) by pivoting it about a dimple.
    Tip(super::calibrate_tip::CalibrateTipArgs),
}

/// Runs the chosen calibration.
pub fn run(cmd: CalibrateCommand) -> anyhow::Result<()> {
    match cmd {
        CalibrateCommand::Camera(args) => super::calibrate_camera::run(args),
        CalibrateCommand::Tracker(args) => super::calibrate_tracker::run(args),
        CalibrateCommand::Tip(args) => super::calibrate_tip::run(args),
    }
}
