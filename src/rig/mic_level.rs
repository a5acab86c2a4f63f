//! The microphone as the rig's [`MicDevice`]: wraps the microphone driver's worker
//! (`ar_drivers::mic::MicWorker`: a cpal input or the synthetic microphone) and passes on each
//! block's level above the noise floor, which is what drives the wind.

use super::devices::{DeviceError, MicDevice};
use super::messages::MicLevel;
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
