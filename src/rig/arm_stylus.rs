//! The digitizer arm as the rig's [`StylusDevice`]: wraps the arm driver's worker
//! (`ar_drivers::arm::ArmWorker`, real serial port or the simulated arm's pty alike) and turns
//! its samples and connection events into stylus samples and disconnects.

use super::devices::{DeviceError, StylusDevice};
use super::messages::StylusSample;
use ar_drivers::arm::{ArmConfig, ArmCounters, ArmStatus, ArmWorker};
use crossbeam_channel::select;
use std::time::Duration;

/// Which button bits count as "the" stylus button (bit 0: right / single pedal).
pub const DEFAULT_BUTTON_MASK: u8 = 0x01;

/// The arm driver behind the [`StylusDevice`] interface.
pub struct ArmStylus {
    worker: ArmWorker,
    button_mask: u8,
    poll: Duration,
}

impl ArmStylus {
    /// Starts the arm driver on `config`'s port.
    pub fn start(config: ArmConfig, button_mask: u8) -> Result<Self, DeviceError> {
        let worker = ArmWorker::spawn(config)
            .map_err(|e| DeviceError::Fatal(format!("cannot start the arm driver thread: {e}")))?;
        Ok(Self {
            worker,
            button_mask,
            poll: Duration::from_millis(100),
        })
    }

    /// The driver's stream counters (packets passed, rejected by reason, framing losses),
    /// summed over every connection so far.
    pub fn counters(&self) -> ArmCounters {
        self.worker.counters()
    }
}

impl StylusDevice for ArmStylus {
    fn next_sample(&mut self) -> Result<StylusSample, DeviceError> {
        let samples = self.worker.samples();
        let status = self.worker.status();
        select! {
            recv(**samples) -> s => match s {
                Ok(s) => Ok(StylusSample {
                    sampled_at: s.t,
                    tip_in_arm: s.tip_in_arm,
                    button_pressed: s.buttons & self.button_mask != 0,
                }),
                Err(_) => Err(DeviceError::Fatal("the arm driver thread stopped".into())),
            },
            recv(status) -> st => match st {
                Ok(ArmStatus::Disconnected { reason }) => {
                    log::info!("arm stream so far: {}", self.worker.counters());
                    Err(DeviceError::Disconnected(reason))
                }
                Ok(ArmStatus::Connected { port, identity, baud, .. }) => {
                    log::info!("arm connected on {port} at {baud} Bd: {identity:?}");
                    Err(DeviceError::Timeout)
                }
                Ok(ArmStatus::Reconnecting { .. }) => Err(DeviceError::Timeout),
                Err(_) => Err(DeviceError::Fatal("the arm driver thread stopped".into())),
            },
            default(self.poll) => Err(DeviceError::Timeout),
        }
    }
}
