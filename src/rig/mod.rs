//! The live rig: worker threads, messages, clocks and shutdown.
//!
//! ```text
//!  camera thread ──CameraUpdate (frame + camera_from_world)──▶ compositor (main thread)
//!  arm thread ─────StylusMessage──▶ solver thread ──SimSnapshot──▶ compositor
//!  mic thread ─────MicLevel───────▶ solver thread
//! ```
//! Streams go through bounded latest-value channels (`ar_drivers::latest`): a slow consumer
//! never blocks a producer. Every thread is named and owned by a [`worker::Worker`] handle
//! that stops and joins it on drop. One [`worker::StopFlag`] ends everything: Ctrl-C, window
//! close, the end of a headless run, or a worker's fatal error (reported to the main thread).
//!
//! - [`config`]: the rig config file of `run`.
//! - [`devices`]: the device and simulation traits the rig runs.
//! - [`messages`]: what flows between the threads.
//! - [`clock`]: real-time pacing of the fixed-step solver with bounded catch-up.
//! - [`tracked_camera`]: a camera source with the marker tracker and undistortion.
//! - [`worker`]: thread handles, stop flag, reports.
//! - [`device_worker`], [`solver_worker`]: the threads.
//! - [`arm_stylus`]: the arm driver as the rig's stylus device.
//! - [`mic_level`]: the microphone driver as the rig's level source.
//! - [`scene_sim`]: the solver library behind the simulation interface.
//! - [`articulated_sim`]: the articulated method behind the same interface.
//! - [`scene_common`]: what the two share (stylus end, wind, diagnostics).
//! - [`method`]: which of the two runs a scene, chosen once for `demo` and `run`.
//! - [`wind_log`]: what the microphone's wind did, for the demo's summary.
//! - [`view_tee`]: the camera's tracked pose, passed on to the solver (for the wind).
//! - [`scripted_user`]: the demo's user, moving the simulated arm.
//! - [`demo_world`]: the demo's simulated devices and scripted user.
//! - [`fixed_view`]: a camera stand-in with a fixed, known pose.
//! - [`frame_content`]: the overlay and the HUD the display loop shows for a snapshot.
//! - [`latency`]: per-frame statistics.
//! - [`report`]: the printed run summary.
//! - [`session_log`]: a recorded session's solver log (`--record`): per-step inputs and outputs.
//! - [`replay`]: replaying a recorded session through the same simulation, compared bit for bit.
//! - [`solver_commands`]: the user's commands to the solver thread (pointer, pause, reset).
//! - [`frame_control`]: a hook into the display loop for the user in front of the window.
//! - [`view_camera`]: a virtual camera that shows the desk and marker from a movable view.
//! - [`display_summary`]: what the display loop measured.
//! - [`live`]: [`Rig`], which starts them and runs the compositor loop.

pub mod arm_stylus;
pub mod articulated_sim;
pub mod clock;
pub mod config;
pub mod demo_world;
pub mod device_worker;
pub mod devices;
pub mod display_summary;
pub mod event_log;
pub mod fixed_view;
pub mod frame_content;
pub mod frame_control;
pub mod framing;
pub mod latency;
pub mod live;
pub mod memory;
pub mod messages;
pub mod method;
pub mod mic_level;
pub mod push_gesture;
pub mod replay;
pub mod report;
pub mod scene_common;
pub mod scene_sim;
pub mod scripted_user;
pub mod session_log;
pub mod solver_commands;
pub mod solver_trace;
pub mod solver_worker;
pub mod tracked_camera;
pub mod view_camera;
pub mod view_tee;
pub mod wind_log;
pub mod worker;

pub use devices::{
    CameraTracker, DeviceError, MicDevice, Simulation, SimulationError, StylusDevice,
};
pub use live::{DisplayLoopConfig, Rig, RigDevices, RigError, RunSummary, StopReason};
pub use messages::{
    CameraUpdate, MicLevel, SimDiagnostics, SimSnapshot, StylusMessage, StylusSample, VideoFrame,
};
pub use solver_worker::{SolverConfig, SolverSummary, TraceRow};
pub use worker::{StopFlag, WorkerReport};
