//! The rig's threads and what passes between them: the worker handle and the stop flag every
//! thread shares, the device threads, the solver thread with its real-time clock, trace and
//! command channel, the messages on the channels, and the bounded event log.
//!
//! - [`worker`]: a named thread with its stop flag and join handle; reports to the main thread.
//! - [`device_worker`]: the camera and microphone threads.
//! - [`capture`]: the camera's capture thread, which keeps only the newest frame.
//! - [`arm_reader`]: the solver thread's reading of the arm driver's channels.
//! - [`solver_worker`]: the solver thread and its settings and summary.
//! - [`solver_trace`]: the solver thread's trace, thinned to stay bounded.
//! - [`solver_commands`]: the user's commands to the solver thread (pointer, pause, reset).
//! - [`clock`]: real-time pacing of the fixed-step solver with bounded catch-up.
//! - [`messages`]: what flows between the threads.
//! - [`event_log`]: a session's events (clips, releases, slowdowns), bounded.

pub mod arm_reader;
pub mod capture;
pub mod clock;
pub mod device_worker;
pub mod event_log;
pub mod messages;
pub mod solver_commands;
pub mod solver_trace;
pub mod solver_worker;
pub mod worker;
