//! ar-calibration: the calibrations that register the virtual scene to the real one.
//!
//! - [`intrinsics`]: the camera file (pinhole intrinsics and distortion), read and written as TOML.
//! - [`camera_calibration`]: camera intrinsics from chessboard views, refusing poor view sets.
//! - Tracker-to-marker calibration (`world_from_arm`, Mariti & Valentini Eq. 1–9):
//!   [`linalg`] (pseudo-inverse, proper QR), [`rigid_fit`] (pinv + QR and SVD fits),
//!   [`point_set`] (refusal of degenerate sets), [`fit_report`] (both fits, residuals,
//!   mis-picks, the choice), [`camera_from_arm`] (Eq. 9), [`calibration_object`] (the
//!   touchable objects of assets/calibration), [`tracker_file`] (the `world_from_arm` file),
//!   [`pairs_csv`] (point pairs from CSV), [`pick_session`] (the guided procedure),
//!   [`simulated_user`] (a user who touches the points for unattended runs), [`accuracy`]
//!   (how far an estimate is from a known true transform).
//! - [`pivot`]: pivot calibration of the stylus tip (tip offset and pivot point from a pivoting
//!   motion, with the refusal of motions that do not determine them).

pub mod accuracy;
pub mod calibration_object;
pub mod camera_calibration;
pub mod camera_from_arm;
pub mod fit_report;
pub mod intrinsics;
pub mod linalg;
pub mod pairs_csv;
pub mod pick_session;
pub mod pivot;
pub mod point_set;
pub mod rigid_fit;
pub mod simulated_user;
pub mod tracker_file;
