//! What can go wrong with a microphone, and whether trying again can help.

use std::path::PathBuf;

/// A microphone error. [`MicError::NoInputDevice`] is an expected outcome on machines without
/// a sound card: the rig then runs without wind and says so.
#[derive(Debug, thiserror::Error)]
pub enum MicError {
    /// The audio host has no default input device (no sound card, or none that records).
    #[error("no audio input device: {detail} (the program runs without wind)")]
    NoInputDevice {
        /// Name of the cpal host that was asked.
        host: String,
        /// What the host said, e.g. that it has no default input, or that the default
        /// input (ALSA's `default` PCM without a card behind it) cannot be opened.
        detail: String,
    },
    /// An input device was asked for by name and none has that name.
    #[error("no audio input device named '{name}'; available inputs: {}", if available.is_empty() { "none".to_string() } else { available.join(", ") })]
    DeviceNotFound {
        /// The requested name.
        name: String,
        /// Names of the input devices that do exist.
        available: Vec<String>,
    },
    /// The audio backend failed; `retry_may_help` says whether trying again later can succeed
    /// (a busy or briefly unavailable device) or not (an unsupported configuration).
    #[error("audio backend failed while {during}: {source} ({})", if *retry_may_help { "retrying may help" } else { "retrying will not help" })]
    Backend {
        /// What was being done.
        during: &'static str,
        /// The backend's error.
        source: cpal::Error,
        /// True when the failure may be temporary.
        retry_may_help: bool,
    },
    /// The device delivers a sample format this driver does not convert.
    #[error("audio input device '{device}' delivers unsupported sample format {format}")]
    UnsupportedFormat {
        /// Device name.
        device: String,
        /// The format, as cpal names it.
        format: String,
    },
    /// A WAV file could not be read.
    #[error("cannot read WAV file {}: {source}", path.display())]
    Wav {
        /// The file.
        path: PathBuf,
        /// What hound reported (it names the offending header field or the I/O failure).
        source: hound::Error,
    },
    /// A WAV file was read but is not usable.
    #[error("WAV file {}: {why}", path.display())]
    WavContent {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A configuration value is out of range.
    #[error("invalid microphone setting '{field}': {why}")]
    InvalidConfig {
        /// The setting's name.
        field: &'static str,
        /// Why it was refused.
        why: String,
    },
    /// A worker thread could not be started.
    #[error("cannot start the microphone thread '{thread}': {source}")]
    Spawn {
        /// The thread's name.
        thread: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// The capture stream reported an error while running (e.g. the device was unplugged).
    #[error("audio input stream failed: {source} ({})", if *retry_may_help { "retrying may help" } else { "retrying will not help" })]
    StreamFailed {
        /// The backend's error.
        source: cpal::Error,
        /// True when the failure may be temporary.
        retry_may_help: bool,
    },
}

impl MicError {
    /// Wraps a cpal error, classifying whether a retry can help.
    pub(crate) fn backend(during: &'static str, source: cpal::Error) -> Self {
        let retry_may_help = retry_may_help(&source);
        Self::Backend {
            during,
            source,
            retry_may_help,
        }
    }

    /// True for the "no sound card" outcome, which callers treat as a warning, not a failure.
    pub fn is_no_device(&self) -> bool {
        matches!(self, Self::NoInputDevice { .. })
    }
}

/// Whether a cpal failure may go away by itself.
pub(crate) fn retry_may_help(e: &cpal::Error) -> bool {
    use cpal::ErrorKind as K;
    matches!(
        e.kind(),
        K::DeviceBusy
            | K::DeviceNotAvailable
            | K::DeviceChanged
            | K::StreamInvalidated
            | K::Xrun
            | K::ResourceExhausted
    )
}
