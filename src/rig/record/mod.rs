//! What a run leaves behind to be read again: the recorded session (`--record`), its replay
//! through the same simulation, and the account of the wind the microphone made.
//!
//! - [`session_log`]: a recorded session's solver log: per-step inputs and outputs.
//! - [`replay`]: replaying a recorded session, compared bit for bit.
//! - [`wind_log`]: what the microphone's wind did, for the demo's summary.

pub mod replay;
pub mod session_log;
pub mod wind_log;
