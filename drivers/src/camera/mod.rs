//! Camera sources: OpenCV capture (device, video file, image folder) and a synthetic camera.
//!
//! Every source implements [`CameraSource`]: [`CameraSource::next_frame`] returns the next
//! [`Frame`] (a BGR8 `Mat` with a monotonic timestamp and a sequence number), `Ok(None)` at the
//! end of a finite stream (video file, image folder, synthetic frame budget), or an error that
//! says what failed and whether retrying can help.
//!
//! - [`OpenCvCamera`]: a live device (`--device 0` or `/dev/video2`), a video file or a folder
//!   of images, through OpenCV's `VideoCapture` / `imread`. A device is opened with a requested
//!   size and rate; the actual ones are reported by [`OpenCvCamera::actual`]. A device that
//!   stops delivering frames is reopened (a few attempts) before an error is returned.
//! - [`SyntheticCamera`]: renders the real printed marker from `assets/markers/` on a textured
//!   desk through the pinhole + distortion model of a [`CameraIntrinsics`] file, with blur and
//!   seeded sensor noise, along a scripted hand-held path ([`CameraPath`]); each frame carries
//!   its ground-truth `camera_from_world`. It runs at a real-time rate or as fast as possible.
//! - [`VideoRecorder`]: writes frames to an MJPG AVI with OpenCV's `VideoWriter`.
//!
//! World frame = marker frame: origin at the marker centre, x along the printed top edge, y up
//! the page, z out of the paper toward the camera. Camera axes are OpenCV's (x right, y down,
//! z forward); pixel (0, 0)'s centre is at image coordinates (0, 0).
//!
//! [`CameraIntrinsics`]: ar_calibration::intrinsics::CameraIntrinsics

mod capture;
mod live_replay;
mod path;
mod printed;
mod recorder;
mod render;
mod synthetic;

pub use capture::{CaptureActual, CaptureRequest, CaptureTarget, OpenCvCamera};
pub use live_replay::{LiveReplay, Opener};
pub use path::{look_at, CameraPath};
pub use printed::{
    chessboard_sheet, default_chessboard_sheet, default_marker_sheet, encode_png_300dpi,
    grid_board_card, marker_sheet, write_assets, CardTexture, ChessboardSheet, MarkerSheet,
    MARKER_PNG, MARKER_SHEET_DPI, PRINTED_MARKER_SIDE_M,
};
pub use recorder::VideoRecorder;
pub use render::{desk_texture, PlaneRenderer};
pub use synthetic::{Pacing, SyntheticCamera, SyntheticConfig};

use nalgebra::Isometry3;
use std::path::PathBuf;
use std::time::Instant;

/// One camera image.
#[derive(Debug)]
pub struct Frame {
    /// When the image was captured (monotonic).
    pub t: Instant,
    /// Frame number from the start of the stream, counting from 0.
    pub seq: u64,
    /// The image, 8-bit BGR (`CV_8UC3`).
    pub image: opencv::core::Mat,
    /// The true camera pose, when the source knows it (synthetic camera, recorded truth).
    pub camera_from_world_truth: Option<Isometry3<f64>>,
}

/// A stream of camera frames.
pub trait CameraSource: Send {
    /// The next frame; `Ok(None)` when a finite stream has ended.
    fn next_frame(&mut self) -> Result<Option<Frame>, CameraError>;

    /// A short human-readable description (device, file, size, rate).
    fn describe(&self) -> String;
}

/// What went wrong with a camera source.
#[derive(Debug, thiserror::Error)]
pub enum CameraError {
    /// The device could not be opened: absent, busy or not a camera. Retrying helps only after
    /// plugging it in or closing the program that holds it.
    #[error("camera device {device} could not be opened (not connected, busy, or not a video device; see `ls /dev/video*`)")]
    DeviceNotFound {
        /// The device as given (index or path).
        device: String,
    },
    /// The device delivered no frame even after reopening it.
    #[error("camera device {device} stopped delivering frames after {attempts} reopen attempts")]
    DeviceLost {
        /// The device as given.
        device: String,
        /// How many times it was reopened.
        attempts: u32,
    },
    /// A video file could not be opened or decoded.
    #[error("video file {path}: {problem}")]
    VideoUnreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A video file stopped decoding before the frame count its header announces: it is
    /// truncated or corrupted, and the frames around the damage may be wrong too.
    #[error("video file {path}: decoding stopped after {decoded} of the {announced} frames its header announces (the file is truncated or corrupted; poses from its last frames are suspect)")]
    VideoEndedEarly {
        /// The file.
        path: PathBuf,
        /// Frames decoded.
        decoded: u64,
        /// Frames the container announces.
        announced: u64,
    },
    /// An image folder is missing, empty or holds an unreadable image.
    #[error("image folder {path}: {problem}")]
    Folder {
        /// The folder or the offending image in it.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A video file could not be written.
    #[error("writing video {path}: {problem}")]
    VideoWrite {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The synthetic camera was configured with values it cannot render.
    #[error("synthetic camera: {0}")]
    SyntheticConfig(String),
    /// An OpenCV call failed; `context` says which.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

/// Attaches a context to an OpenCV error.
pub(crate) fn cv_ctx<T>(r: opencv::Result<T>, context: &str) -> Result<T, CameraError> {
    r.map_err(|source| CameraError::OpenCv {
        context: context.to_owned(),
        source,
    })
}
