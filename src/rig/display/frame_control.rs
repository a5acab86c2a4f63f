//! A hook into the rig's display loop for a user in front of the window (the sandbox, the
//! mouse on `run`): before every frame it gets the window's input events, the newest snapshot
//! and the view the window shows (the camera the last frame was drawn from), and may change
//! what the frame shows, add HUD lines, or end the run.

use crate::compositor::Compositor;
use crate::rig::live::DisplayLoopConfig;
use crate::rig::threads::messages::{CameraUpdate, SimSnapshot};
use ar_calibration::intrinsics::CameraIntrinsics;
use kiss3d::event::WindowEvent;
use nalgebra::Isometry3;

/// What the hook decides for one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameDecision {
    /// Lines shown under the HUD's own.
    pub hud_lines: Vec<String>,
    /// End the run after this frame's inputs (the user asked to quit).
    pub quit: bool,
}

/// The view the window shows now: the camera the last frame was rendered with, so that a
/// pixel the user points at is looked up in the view they saw (the registered camera on the
/// live rig, the virtual one in the sandbox).
#[derive(Debug, Clone, Copy)]
pub struct ShownView<'a> {
    /// The pinhole intrinsics of the rendered view (the camera's, scaled to the view's size,
    /// [`crate::compositor::Compositor::view_intrinsics`]), in the view's pixels: the window
    /// shows the view stretched to its own size (see [`crate::sandbox::window_input`]).
    pub intrinsics: &'a CameraIntrinsics,
    /// The camera's pose (OpenCV axes) of the last frame shown; `None` before the first one
    /// and while the marker is not seen (the overlay is hidden then).
    pub camera_from_world: Option<Isometry3<f64>>,
}

/// Called by the display loop before every frame (on the main thread).
pub trait FrameControl {
    /// Handles `events` (the window's, since the last frame; none off-screen) with the newest
    /// `snapshot` and the `shown` view; may change `config` (e.g. show the reaction arrows)
    /// for this frame and the next ones.
    fn before_frame(
        &mut self,
        events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        shown: &ShownView<'_>,
        config: &mut DisplayLoopConfig,
    ) -> FrameDecision;
}

impl<'a> ShownView<'a> {
    /// The view `compositor` showed last, drawn from `camera` (the newest camera update it
    /// rendered with).
    pub fn last_frame(compositor: &'a Compositor, camera: Option<&CameraUpdate>) -> Self {
        Self {
            intrinsics: compositor.view_intrinsics(),
            camera_from_world: camera.and_then(|u| u.camera_from_world),
        }
    }
}
