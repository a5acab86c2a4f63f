//! The digitizer arm as the rig runs it: the arm driver's worker (`ar_drivers::arm::ArmWorker`,
//! real serial port or the simulated arm's pty alike), which reads the arm on its own thread
//! ("arm"), and the driver's two channels, which the solver thread reads directly
//! ([`ArmInputs`]): the latest-value channel of stylus samples and the connection status, whose
//! `Connected` carries the arm's kinematics (what the compositor draws the arm from) and whose
//! `Disconnected` releases a clipped stylus. There is no thread of the rig's own in between.

use super::interfaces::DeviceError;
use ar_drivers::arm::{ArmConfig, ArmStatus, ArmWorker, StylusSample};
use ar_drivers::latest::LatestReceiver;
use crossbeam_channel::Receiver;

/// Which button bits count as "the" stylus button (bit 0: right / single pedal).
pub const DEFAULT_BUTTON_MASK: u8 = 0x01;

/// The rig's arm: the driver's worker and which of its buttons is the stylus button. The rig
/// owns it for the run; dropping it stops and joins the driver's thread.
#[derive(Debug)]
pub struct RigArm {
    worker: ArmWorker,
    button_mask: u8,
}

impl RigArm {
    /// Starts the arm driver on `config`'s port; `button_mask` selects the button bits that
    /// count as the stylus button.
    pub fn start(config: ArmConfig, button_mask: u8) -> Result<Self, DeviceError> {
        let worker = ArmWorker::spawn(config)
            .map_err(|e| DeviceError::Fatal(format!("cannot start the arm driver thread: {e}")))?;
        Ok(Self {
            worker,
            button_mask,
        })
    }

    /// What the solver thread reads: the driver's channels (shared with the worker's handle,
    /// which nobody else reads during a run).
    pub fn inputs(&self) -> ArmInputs {
        ArmInputs {
            samples: self.worker.samples().clone(),
            status: self.worker.status().clone(),
            button_mask: self.button_mask,
        }
    }

    /// True while the driver's thread runs.
    pub fn is_running(&self) -> bool {
        self.worker.is_running()
    }
}

/// The arm driver's channels as the solver thread reads them.
#[derive(Debug, Clone)]
pub struct ArmInputs {
    /// Stylus samples (arm base frame), newest last; the driver drops the oldest for a slow
    /// reader.
    pub samples: LatestReceiver<StylusSample>,
    /// Connection events, in order.
    pub status: Receiver<ArmStatus>,
    /// Which button bits count as the stylus button.
    pub button_mask: u8,
}
