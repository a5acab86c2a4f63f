//! A hook into the rig's display loop for a user in front of the window (the sandbox): before
//! every frame it gets the window's input events and the newest snapshot, and may change what
//! the frame shows, add HUD lines, or end the run.

use crate::rig::live::DisplayLoopConfig;
use crate::rig::threads::messages::SimSnapshot;
use kiss3d::event::WindowEvent;

/// What the hook decides for one frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameDecision {
    /// Lines shown under the HUD's own.
    pub hud_lines: Vec<String>,
    /// End the run after this frame's inputs (the user asked to quit).
    pub quit: bool,
}

/// Called by the display loop before every frame (on the main thread).
pub trait FrameControl {
    /// Handles `events` (the window's, since the last frame; none off-screen) with the newest
    /// `snapshot`; may change `config` (e.g. show the reaction arrows) for this frame and
    /// the next ones.
    fn before_frame(
        &mut self,
        events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        config: &mut DisplayLoopConfig,
    ) -> FrameDecision;
}
