//! The digitizer arm as the rig's [`StylusDevice`]: wraps the arm driver's worker
//! (`ar_drivers::arm::ArmWorker`, real serial port or the simulated arm's pty alike) and turns
//! its samples and connection events into stylus samples and disconnects. Once the arm has
//! told its kinematics (on connecting), every sample also carries the arm's linkage, so the
//! compositor can draw the arm.

use super::interfaces::{DeviceError, StylusDevice};
use crate::rig::threads::messages::StylusSample;
use ar_drivers::arm::kinematics::linkage_in_arm;
use ar_drivers::arm::{ArmConfig, ArmCounters, ArmStatus, ArmWorker, DhParams};
use crossbeam_channel::select;
use std::time::Duration;

/// Which button bits count as "the" stylus button (bit 0: right / single pedal).
pub const DEFAULT_BUTTON_MASK: u8 = 0x01;

/// The arm driver behind the [`StylusDevice`] interface.
pub struct ArmStylus {
    worker: ArmWorker,
    button_mask: u8,
    poll: Duration,
    /// The connected arm's kinematics (with the tip correction), once it has connected.
    dh: Option<DhParams>,
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
            dh: None,
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
                    linkage_in_arm: self
                        .dh
                        .map(|dh| linkage_in_arm(&dh, &s.joint_angles_rad)),
                }),
                Err(_) => Err(DeviceError::Fatal("the arm driver thread stopped".into())),
            },
            recv(status) -> st => match st {
                Ok(ArmStatus::Disconnected { reason }) => {
                    log::info!("arm stream so far: {}", self.worker.counters());
                    Err(DeviceError::Disconnected(reason))
                }
                Ok(ArmStatus::Connected { port, identity, baud, params }) => {
                    log::info!("arm connected on {port} at {baud} Bd: {identity:?}");
                    self.dh = Some(params.dh);
                    Err(DeviceError::Timeout)
                }
                Ok(ArmStatus::Reconnecting { .. }) => Err(DeviceError::Timeout),
                Err(_) => Err(DeviceError::Fatal("the arm driver thread stopped".into())),
            },
            default(self.poll) => Err(DeviceError::Timeout),
        }
    }
}
