//! Microphone: cpal capture and a synthetic microphone, reporting levels for the wind.
//!
//! Every source — a cpal input device ([`MicSource::Default`], [`MicSource::Named`]) or the
//! synthetic microphone ([`MicSource::Synthetic`]: seeded breath bursts or a WAV file) —
//! delivers mono sample chunks to the same level thread (`mic-level`), which cuts them into
//! ~20 ms blocks, computes each block's RMS, tracks the noise floor ([`level`]) and sends a
//! [`MicLevel`] per block on a latest-value channel. [`MicWorker`] owns the threads; dropping
//! it stops and joins them.
//!
//! No sound card is an expected outcome, not a crash: [`MicWorker::spawn`] returns
//! [`MicError::NoInputDevice`] (see [`MicError::is_no_device`]) and the caller runs without
//! wind and says so.
//!
//! ```no_run
//! use ar_drivers::mic::{MicConfig, MicSource, MicWorker, SyntheticMic};
//! let mic = match MicWorker::spawn(MicSource::Default, &MicConfig::default()) {
//!     Ok(mic) => mic,
//!     Err(e) if e.is_no_device() => {
//!         eprintln!("warning: {e}; using the synthetic microphone");
//!         MicWorker::spawn(MicSource::Synthetic(SyntheticMic::breaths(7)), &MicConfig::default())?
//!     }
//!     Err(e) => return Err(e.into()),
//! };
//! let level = mic.levels().recv()?;
//! println!("{:.4} above a floor of {:.4}", level.above_floor(), level.floor);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod capture;
mod cpu_time;
mod error;
pub mod level;
mod synthetic;
mod worker;

pub use cpu_time::thread_cpu_time;
pub use error::MicError;
pub use synthetic::{
    Breath, BreathConfig, BreathGenerator, Pacing, SyntheticMic, SyntheticSignal, WavClip,
};
pub use worker::{MicConfig, MicCpuTime, MicSource, MicWorker};

use std::time::Instant;

/// One block's level: the newest value is what the wind uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicLevel {
    /// When the block's last sample was captured (for a real device: when the backend
    /// handed over the buffer holding it, less the duration of the samples after it).
    pub t: Instant,
    /// RMS of the block, full scale = 1.
    pub rms: f64,
    /// Estimated noise floor (RMS, full scale = 1) at that time.
    pub floor: f64,
}

impl MicLevel {
    /// How far the level is above the noise floor (never negative): the wind's input.
    pub fn above_floor(&self) -> f64 {
        (self.rms - self.floor).max(0.0)
    }
}
