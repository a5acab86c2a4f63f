//! The microphone as the rig's [`MicDevice`]: wraps the microphone driver's worker
//! (`ar_drivers::mic::MicWorker`: a cpal input or the synthetic microphone) and passes on each
//! block's level above the noise floor, which is what drives the wind.

use super::interfaces::{DeviceError, MicDevice};
use crate::rig::threads::messages::MicLevel;
use ar_drivers::latest::LatestReceiver;
use ar_drivers::mic::{MicConfig, MicError, MicSource, MicWorker};
use crossbeam_channel::RecvTimeoutError;
use std::time::Duration;

/// The microphone driver behind the [`MicDevice`] interface.
pub struct MicLevels {
    // Owns the capture and level threads; dropping it stops them.
    _worker: MicWorker,
    levels: LatestReceiver<ar_drivers::mic::MicLevel>,
}

impl MicLevels {
    /// Starts the microphone driver on `source`. A machine without an input device gives
    /// the driver's [`MicError::NoInputDevice`] (see `MicError::is_no_device`).
    pub fn start(source: MicSource, config: &MicConfig) -> Result<Self, MicError> {
        let worker = MicWorker::spawn(source, config)?;
        let levels = worker.levels();
        Ok(Self {
            _worker: worker,
            levels,
        })
    }
}

/// A microphone the rig can run without: the started device, or why there is none.
pub enum OptionalMic {
    /// The microphone runs.
    Running(MicLevels),
    /// The machine has no such input device: the rig runs without wind; the text says why,
    /// for a warning.
    Absent(String),
}

impl OptionalMic {
    /// The device for [`crate::rig::RigDevices::mic`], or the warning to print when there is none.
    pub fn into_device(self) -> (Option<Box<dyn MicDevice>>, Option<String>) {
        match self {
            Self::Running(m) => (Some(Box::new(m)), None),
            Self::Absent(warning) => (None, Some(warning)),
        }
    }
}

impl MicLevels {
    /// Starts the microphone like [`MicLevels::start`], but a machine without an input device
    /// (no sound card) is not an error: the rig runs without wind and says so. Other failures
    /// (a named device that does not exist, a bad setting, a device that refuses to open)
    /// are still errors.
    pub fn start_optional(source: MicSource, config: &MicConfig) -> Result<OptionalMic, MicError> {
        match Self::start(source, config) {
            Ok(m) => Ok(OptionalMic::Running(m)),
            Err(e) if e.is_no_device() => Ok(OptionalMic::Absent(e.to_string())),
            Err(e) => Err(e),
        }
    }
}

/// A microphone that starts on its first read, so that its clock starts with the rig's `mic`
/// thread rather than when the device was set up: the demo's breaths are timed from the start
/// of the run, however long the compositor took to open. A start-up failure is reported by
/// that first read as a fatal device error.
pub struct DeferredMic {
    pending: Option<(MicSource, MicConfig)>,
    running: Option<MicLevels>,
}

impl DeferredMic {
    /// A microphone on `source` that starts when first read.
    pub fn new(source: MicSource, config: MicConfig) -> Self {
        Self {
            pending: Some((source, config)),
            running: None,
        }
    }
}

impl MicDevice for DeferredMic {
    fn next_level(&mut self) -> Result<MicLevel, DeviceError> {
        if let Some((source, config)) = self.pending.take() {
            let mic = MicLevels::start(source, &config)
                .map_err(|e| DeviceError::Fatal(format!("the microphone did not start: {e}")))?;
            self.running = Some(mic);
        }
        match self.running.as_mut() {
            Some(mic) => mic.next_level(),
            None => Err(DeviceError::Fatal("the microphone did not start".into())),
        }
    }
}

impl MicDevice for MicLevels {
    fn next_level(&mut self) -> Result<MicLevel, DeviceError> {
        match self.levels.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => Ok(MicLevel {
                measured_at: l.t,
                rms: l.above_floor(),
            }),
            Err(RecvTimeoutError::Timeout) => Err(DeviceError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(DeviceError::Fatal(
                "the microphone driver's level thread stopped".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ar_drivers::mic::{BreathConfig, SyntheticMic, SyntheticSignal};

    fn breaths(sample_rate_hz: u32) -> MicSource {
        MicSource::Synthetic(SyntheticMic::from_signal(SyntheticSignal::Breaths(
            BreathConfig {
                sample_rate_hz,
                ..BreathConfig::default()
            },
        )))
    }

    #[test]
    fn a_deferred_mic_starts_on_its_first_read_and_reports_a_bad_start_as_fatal() {
        let mut mic = DeferredMic::new(breaths(16_000), MicConfig::default());
        let level = (0..20).find_map(|_| mic.next_level().ok());
        assert!(level.is_some_and(|l| l.rms >= 0.0), "{level:?}");

        let mut bad = DeferredMic::new(breaths(10), MicConfig::default());
        match bad.next_level() {
            Err(DeviceError::Fatal(m)) => {
                assert!(
                    m.contains("did not start") && m.contains("sample_rate_hz"),
                    "{m}"
                )
            }
            other => panic!("expected a fatal error, got {other:?}"),
        }
        assert!(matches!(bad.next_level(), Err(DeviceError::Fatal(_))));
    }
}
