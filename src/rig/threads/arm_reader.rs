//! The solver thread's reading of the arm: before every batch of steps it drains the arm
//! driver's channels ([`ArmInputs`]) and keeps the newest stylus sample, the arm's kinematics
//! from its last `Connected`, and the link's state for the HUD ([`ArmLink`]).
//!
//! A disconnect forgets the sample, so the interaction releases a clipped stylus. Samples and
//! status come on two channels, so a sample of the lost connection can still be queued when
//! the disconnect is read: samples stamped before the moment the disconnect was read are
//! ignored (a reconnection takes far longer than one batch, so no new sample is lost to this).

use super::messages::ArmLink;
use crate::interaction::StylusInput;
use crate::rig::devices::arm::ArmInputs;
use ar_drivers::arm::kinematics::{linkage_in_arm, ArmLinkage};
use ar_drivers::arm::{ArmStatus, DhParams, StylusSample};
use crossbeam_channel::TryRecvError;
use nalgebra::Isometry3;
use std::time::Instant;

/// What the solver thread knows of the arm.
pub struct ArmReader {
    inputs: Option<ArmInputs>,
    sample: Option<StylusSample>,
    /// The connected arm's kinematics (with the tip correction), once it has connected.
    dh: Option<DhParams>,
    link: Option<ArmLink>,
    /// When the last disconnect was read: older samples belong to the lost connection.
    lost_at: Option<Instant>,
}

/// A change of the arm's connection worth telling the user.
#[derive(Debug, Clone, PartialEq)]
pub enum ArmEvent {
    /// The arm answered the handshake and streams.
    Connected {
        /// The port.
        port: String,
        /// The line rate, baud.
        baud: u32,
    },
    /// The arm was lost (the driver keeps trying to reconnect); the text says why.
    Lost(String),
}

impl ArmReader {
    /// Reads `inputs`; `None`: a rig without an arm (no stylus, ever).
    pub fn new(inputs: Option<ArmInputs>) -> Self {
        Self {
            inputs,
            sample: None,
            dh: None,
            link: None,
            lost_at: None,
        }
    }

    /// Takes what the driver sent since the last call; returns the connection changes.
    pub fn drain(&mut self) -> Vec<ArmEvent> {
        let mut events = Vec::new();
        let Some(inputs) = &self.inputs else {
            return events;
        };
        // Status first: a disconnect read now also voids the samples queued before it.
        for status in inputs.status.try_iter() {
            match status {
                ArmStatus::Connected {
                    port, baud, params, ..
                } => {
                    self.dh = Some(params.dh);
                    events.push(ArmEvent::Connected { port, baud });
                }
                ArmStatus::Disconnected { reason } => {
                    self.sample = None;
                    self.lost_at = Some(Instant::now());
                    if !matches!(self.link, Some(ArmLink::Lost(_))) {
                        events.push(ArmEvent::Lost(reason.clone()));
                    }
                    self.link = Some(ArmLink::Lost(reason));
                }
                ArmStatus::Reconnecting { .. } => {}
            }
        }
        loop {
            match inputs.samples.try_recv() {
                Ok(s) if self.lost_at.is_some_and(|lost| s.t <= lost) => {}
                Ok(s) => {
                    self.sample = Some(s);
                    self.link = Some(ArmLink::Streaming);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    // The driver's thread is gone: the stylus is as good as unplugged.
                    if self.sample.take().is_some() {
                        let why = "arm thread stopped".to_owned();
                        events.push(ArmEvent::Lost(why.clone()));
                        self.link = Some(ArmLink::Lost(why));
                    }
                    break;
                }
            }
        }
        events
    }

    /// The newest sample as the interaction's input, in the world frame; `None` without a
    /// sample (no arm, not streaming yet, or lost).
    pub fn stylus_input(&self, world_from_arm: &Isometry3<f64>) -> Option<StylusInput> {
        let (s, mask) = (self.sample.as_ref()?, self.inputs.as_ref()?.button_mask);
        Some(StylusInput::from_arm(
            world_from_arm,
            &s.tip_in_arm,
            s.buttons & mask != 0,
        ))
    }

    /// When the newest sample was taken.
    pub fn sampled_at(&self) -> Option<Instant> {
        self.sample.as_ref().map(|s| s.t)
    }

    /// The arm's linkage at the newest sample (base to tip, arm base frame), once the arm
    /// has told its kinematics.
    pub fn linkage_in_arm(&self) -> Option<ArmLinkage> {
        let (dh, s) = (self.dh.as_ref()?, self.sample.as_ref()?);
        Some(linkage_in_arm(dh, &s.joint_angles_rad))
    }

    /// The link's state as last heard (`None`: nothing yet).
    pub fn link(&self) -> Option<&ArmLink> {
        self.link.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ar_drivers::arm::{ArmParams, Identity, MaxValues, RawDhParams, TipCorrection};
    use ar_drivers::latest::{latest_channel, LatestSender};
    use crossbeam_channel::Sender;
    use nalgebra::{Point3, UnitQuaternion};

    fn reader() -> (ArmReader, LatestSender<StylusSample>, Sender<ArmStatus>) {
        let (sample_tx, samples) = latest_channel(8);
        let (status_tx, status) = crossbeam_channel::bounded(16);
        let inputs = ArmInputs {
            samples,
            status,
            button_mask: 0x01,
        };
        (ArmReader::new(Some(inputs)), sample_tx, status_tx)
    }

    fn sample(x_m: f64, buttons: u8) -> StylusSample {
        StylusSample {
            t: Instant::now(),
            seq: 0,
            device_timer_ticks: None,
            counts: [0; 6],
            joint_angles_rad: [0.1, 0.2, 0.3, 0.0, 0.0, 0.0],
            tip_in_arm: Point3::new(x_m, 0.0, 0.0),
            arm_from_stylus: UnitQuaternion::identity(),
            buttons,
        }
    }

    fn connected() -> ArmStatus {
        let raw_dh = RawDhParams::microscribe_3dx();
        let params = ArmParams {
            identity: Identity::microscribe_3dx(),
            max_values: MaxValues::microscribe_3dx(),
            dh: DhParams::from_raw(&raw_dh).with_tip(&TipCorrection::point()),
            raw_dh,
        };
        ArmStatus::Connected {
            port: "/dev/pts/9".into(),
            identity: params.identity.clone(),
            params: Box::new(params),
            baud: 115_200,
        }
    }

    #[test]
    fn without_an_arm_there_is_never_a_stylus() {
        let mut r = ArmReader::new(None);
        assert!(r.drain().is_empty());
        assert!(r.stylus_input(&Isometry3::identity()).is_none());
        assert!(r.link().is_none());
    }

    #[test]
    fn the_newest_sample_is_the_input_and_the_mask_picks_the_button() {
        let (mut r, samples, status) = reader();
        status.send(connected()).unwrap();
        samples.send(sample(0.1, 0x00));
        samples.send(sample(0.2, 0x02));
        let events = r.drain();
        assert_eq!(
            events,
            vec![ArmEvent::Connected {
                port: "/dev/pts/9".into(),
                baud: 115_200
            }]
        );
        let world_from_arm = Isometry3::translation(0.0, 0.0, 1.0);
        let input = r.stylus_input(&world_from_arm).unwrap();
        assert_eq!(input.tip_in_world, Point3::new(0.2, 0.0, 1.0));
        // Bit 1 (the left pedal) is not the stylus button under mask 0x01.
        assert!(!input.button_pressed);
        assert_eq!(r.link(), Some(&ArmLink::Streaming));
        // The kinematics came with the connection: the linkage ends at the tip's joints.
        assert!(r.linkage_in_arm().is_some());
    }

    #[test]
    fn no_linkage_before_the_arm_told_its_kinematics() {
        let (mut r, samples, _status) = reader();
        samples.send(sample(0.1, 0x01));
        r.drain();
        assert!(
            r.stylus_input(&Isometry3::identity())
                .unwrap()
                .button_pressed
        );
        assert!(r.linkage_in_arm().is_none());
    }

    #[test]
    fn a_disconnect_forgets_the_sample_and_voids_the_ones_queued_before_it() {
        let (mut r, samples, status) = reader();
        samples.send(sample(0.1, 0x01));
        r.drain();
        // The last samples of the lost connection are still queued when the disconnect is read.
        samples.send(sample(0.2, 0x01));
        status
            .send(ArmStatus::Disconnected {
                reason: "no data from the arm for 501 ms".into(),
            })
            .unwrap();
        let events = r.drain();
        assert_eq!(
            events,
            vec![ArmEvent::Lost("no data from the arm for 501 ms".into())]
        );
        assert!(r.stylus_input(&Isometry3::identity()).is_none());
        assert!(matches!(r.link(), Some(ArmLink::Lost(why)) if why.contains("501 ms")));
        // Failed reconnection attempts say nothing new.
        status
            .send(ArmStatus::Disconnected {
                reason: "no such port".into(),
            })
            .unwrap();
        assert!(r.drain().is_empty());
        // The reconnected arm's samples come after the disconnect was read.
        status.send(connected()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        samples.send(sample(0.3, 0x00));
        r.drain();
        assert_eq!(r.link(), Some(&ArmLink::Streaming));
        let tip = r.stylus_input(&Isometry3::identity()).unwrap().tip_in_world;
        assert_eq!(tip, Point3::new(0.3, 0.0, 0.0));
    }

    #[test]
    fn a_stopped_driver_thread_counts_as_lost() {
        let (mut r, samples, status) = reader();
        samples.send(sample(0.1, 0x00));
        r.drain();
        drop((samples, status));
        assert_eq!(r.drain(), vec![ArmEvent::Lost("arm thread stopped".into())]);
        assert!(r.stylus_input(&Isometry3::identity()).is_none());
    }
}
