//! The live rig: the threads, the devices they read, the display loop, and the session's record.
//!
//! ```text
//!  camera thread ──CameraUpdate (frame + camera_from_world)──────────▶ compositor (main thread)
//!        └──────── world_from_camera (view tee) ──────────────────────▶ solver thread
//!  arm thread (the arm driver's own) ──StylusSample──────────────────▶ solver thread
//!        └──────── ArmStatus (connected with the DH parameters, lost) ─▶ solver thread
//!  mic thread ─────MicLevel──────────────────────────────────────────▶ solver thread
//!  sandbox (main thread) ──SolverCommand─────────────────────────────▶ solver thread
//!  solver thread ──SimSnapshot (bodies, arm linkage, HUD figures)────▶ compositor
//! ```
//! Streams go through bounded latest-value channels (`ar_drivers::latest`): a slow consumer
//! never blocks a producer. The arm's status and the user's commands have their own bounded
//! channels, so none is dropped. The solver thread steps the simulation at the simulation's own
//! step ([`RigSimulation::dt_secs`], a scene's `[solver] dt_secs`), in real time. Every thread of
//! the rig is named and owned by a [`threads::worker::Worker`] handle that stops and joins it on
//! drop (the arm driver's by its `ArmWorker`, held in [`RigArm`]). One [`StopFlag`] ends
//! everything: Ctrl-C, window close, the end of a headless run, or a worker's fatal error
//! (reported to the main thread).
//!
//! - [`threads`]: the worker handle and stop flag, the device and solver threads, the clock,
//!   the messages.
//! - [`devices`]: the device and simulation interfaces, the devices behind them, the demo's
//!   simulated world.
//! - [`display`]: the display loop's pieces: overlay and HUD, framing, latency, memory, the
//!   printed summary.
//! - [`record`]: the recorded session, its replay, the wind's account.
//! - [`config`]: the rig config file of `run`.
//! - [`method`]: which method runs a scene, chosen once for `demo`, `run` and `sandbox`.
//! - [`simulation`]: the scene's simulation (either method, `ar_dynamics::SceneSimulation`) as
//!   the rig drives it: the stylus spring and tip, the microphone's wind, the snapshots' data.
//! - [`live`]: [`Rig`], which starts the threads and runs the compositor loop.

pub mod config;
pub mod devices;
pub mod display;
pub mod live;
pub mod method;
pub mod record;
pub mod simulation;
pub mod threads;

pub use devices::{CameraTracker, DeviceError, MicDevice, RigArm};
pub use display::display_summary::DisplaySummary;
pub use live::{DisplayLoopConfig, Rig, RigDevices, RigError, RunSummary, StopReason};
pub use simulation::{RigSimulation, SimulationError};
pub use threads::messages::{
    ArmLink, CameraUpdate, MicLevel, SimDiagnostics, SimSnapshot, VideoFrame,
};
pub use threads::solver_worker::{SolverConfig, SolverSummary, TraceRow};
pub use threads::worker::{StopFlag, WorkerReport};
