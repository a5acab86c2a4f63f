//! MicroScribe-class digitizer arm: HCI protocol codec, kinematics, serial transport, worker
//! thread, and a simulated arm that speaks the same protocol on a pseudo-terminal.
//!
//! # Using the arm (real or simulated)
//! ```no_run
//! use ar_drivers::arm::{ArmConfig, ArmWorker, ArmStatus, PortSpec};
//! let worker = ArmWorker::spawn(ArmConfig {
//!     port: PortSpec::Path("/dev/ttyUSB0".into()),
//!     ..ArmConfig::default()
//! })
//! .expect("spawn the arm thread");
//! for status in worker.status().try_iter() {
//!     if let ArmStatus::Connected { identity, .. } = status { println!("{identity}"); }
//! }
//! if let Ok(sample) = worker.samples().recv() {
//!     println!("tip {:?} m, buttons {}", sample.tip_in_arm, sample.buttons);
//! }
//! // Dropping the worker stops and joins its thread.
//! ```
//! The worker opens the port (or finds the arm with [`PortSpec::Auto`]), does the handshake
//! (`IMMC`, `BEGIN`, identity, `C6`, `C0`, `D3`), switches to the fastest baud rate, starts
//! streaming (`CF`) and sends one [`StylusSample`] per packet into a latest-value channel: a
//! slow consumer never blocks the reader. When the arm stops answering or the port vanishes it
//! reports [`ArmStatus::Disconnected`] and reconnects with backoff.
//!
//! # The simulated arm
//! [`SimulatedArm::spawn`] serves a complete device on a pty (see [`SimArmHandle::port_path`]),
//! moved by a motion script ([`MotionScript`]) or live ([`SimArmControl`]: tip targets through
//! inverse kinematics, joint angles, buttons), with fault injection ([`Fault`]) and a record
//! of every packet it sent ([`SentSample`], the ground truth).
//!
//! # Modules
//! - [`codec`]: command bytes, data packets, the resynchronising parser.
//! - [`params`]: identity, `C6`, `C0`/`D3` (wire and SI).
//! - [`tip`]: per-tip corrections (ball tip, pivot-calibrated tips) and their file.
//! - [`kinematics`]: counts → angles, modified DH with β, roll/pitch/yaw.
//! - [`ik`]: tip-position inverse kinematics.
//! - [`plausibility`]: the filters that stand in for the missing checksum, and the counters.
//! - [`protocol`]: the host side of the handshake and data exchange over any `Read + Write`.
//! - [`transport`]: opening serial ports, auto-detection.
//! - [`worker`]: the streaming thread with reconnection.
//! - [`sim`]: the simulated arm.

pub mod codec;
pub mod ik;
pub mod kinematics;
pub mod params;
pub mod plausibility;
pub mod protocol;
pub mod sim;
pub mod tip;
pub mod transport;
pub mod worker;

pub use codec::{DataCommand, DataPacket, PacketParser};
pub use params::{ArmParams, DhParams, Identity, MaxValues, RawDhParams, TipCorrection};
pub use plausibility::{ArmCounters, PlausibilityLimits, RejectCounts};
pub use protocol::{ProtocolError, Session};
pub use sim::{
    Fault, MotionScript, SentSample, SimArmConfig, SimArmControl, SimArmHandle, SimulatedArm,
};
pub use transport::{PortSpec, TransportError};
pub use worker::{ArmConfig, ArmStatus, ArmWorker};

use nalgebra::{Point3, UnitQuaternion};
use std::time::Instant;

/// One reading of the stylus.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StylusSample {
    /// Host monotonic time at which the packet was complete.
    pub t: Instant,
    /// Count of samples delivered since the worker started (gaps mean dropped packets or a
    /// reconnection; the latest-value channel may also skip values for a slow consumer).
    pub seq: u64,
    /// The arm's 14-bit timer (~1.111 ms ticks, wraps), if the packet carried it.
    pub device_timer_ticks: Option<u16>,
    /// Raw encoder counts 0–5.
    pub counts: [u16; 6],
    /// Joint angles 0–5 (rad).
    pub joint_angles_rad: [f64; 6],
    /// Stylus tip in the arm's base frame (m).
    pub tip_in_arm: Point3<f64>,
    /// Stylus orientation in the arm's base frame; the stylus points along its z axis.
    pub arm_from_stylus: UnitQuaternion<f64>,
    /// Button bits: bit 0 right/single pedal, bit 1 left pedal.
    pub buttons: u8,
}

impl StylusSample {
    /// Builds a sample from a packet with the arm's parameters.
    pub fn from_packet(packet: &DataPacket, params: &ArmParams, t: Instant, seq: u64) -> Self {
        let mut counts = [0u16; 6];
        for (c, &p) in counts.iter_mut().zip(packet.encoder_counts()) {
            *c = p;
        }
        let joint_angles_rad =
            kinematics::counts_to_angles(packet.encoder_counts(), &params.max_values.encoder_max);
        let pose = kinematics::arm_from_stylus(&params.dh, &joint_angles_rad);
        Self {
            t,
            seq,
            device_timer_ticks: packet.timer_ticks,
            counts,
            joint_angles_rad,
            tip_in_arm: Point3::from(pose.translation.vector),
            arm_from_stylus: pose.rotation,
            buttons: packet.buttons,
        }
    }
}
