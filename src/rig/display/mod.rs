//! The display loop's pieces (the loop itself is [`crate::rig::Rig`]'s, on the main thread):
//! what a frame shows for a snapshot, the hook for a user in front of the window, how the demo
//! frames a scene, and what the loop measures and prints at the end.
//!
//! - [`frame_content`]: the overlay and the HUD the display loop shows for a snapshot.
//! - [`frame_control`]: a hook into the display loop for the user in front of the window.
//! - [`framing`]: the closest fixed camera that frames a scene below the HUD.
//! - [`latency`]: per-frame statistics.
//! - [`memory`]: resident memory over a run, and the allocator tuning for long runs.
//! - [`pace`]: when the next frame is drawn (the period, or a new camera frame).
//! - [`priority`]: the drawing threads yield the CPU to the solver (the sandbox).
//! - [`probe`]: whether a window can be opened (a named display whose server answers).
//! - [`display_summary`]: what the display loop measured.
//! - [`report`]: the printed run summary.

pub mod display_summary;
pub mod frame_content;
pub mod frame_control;
pub mod framing;
pub mod latency;
pub mod memory;
pub mod pace;
pub mod priority;
pub mod probe;
pub mod report;
