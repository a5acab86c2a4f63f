//! What a run leaves behind to be read again: the recorded session (`--record`), its replay
//! through the same simulation, and the account of the wind the microphone made.
//!
//! - [`session_log`]: a recorded session's folder, its description and solver log.
//! - [`recorder`]: recording a session as the solver steps, never overwriting anything.
//! - [`inputs_csv`]: the per-step inputs, written and streamed back.
//! - [`session_end`]: the end marker that states the step count and the files' sizes.
//! - [`replay`]: replaying a recorded session, compared bit for bit ([`compare`]).
//! - [`wind_log`]: what the microphone's wind did, for the demo's summary.

pub mod compare;
pub mod inputs_csv;
pub mod recorder;
pub mod replay;
pub mod session_end;
pub mod session_log;
pub mod wind_log;
