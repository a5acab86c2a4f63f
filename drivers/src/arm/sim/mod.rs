//! The simulated arm: a complete MicroScribe-class device speaking HCI on a pseudo-terminal,
//! so that the real serial driver is what talks to it.
//!
//! - [`device`]: the protocol state machine (autobaud, identity, parameters, data, streaming).
//! - [`motion`]: motion scripts (joint angles or tip positions over time, CSV).
//! - [`control`]: the live feed (tip targets by inverse kinematics, joint angles, buttons).
//! - [`faults`]: garbage, dropped bytes, truncated packets, bit flips, substituted bytes,
//!   header-like noise, out-of-range counts, silence, hang-up.
//! - [`pivot`]: a simulated user's pivot about a dimple (for `calibrate tip`).
//! - `server`: the pty thread, pacing at the line rate.
//!
//! ```no_run
//! use ar_drivers::arm::{SimulatedArm, SimArmConfig};
//! let sim = SimulatedArm::spawn(SimArmConfig::default()).expect("pty");
//! println!("arm on {}", sim.port_path().display());
//! sim.control().set_tip_target(nalgebra::Point3::new(0.25, 0.05, 0.10)).expect("reachable");
//! sim.control().click(0x01); // right pedal
//! ```

pub mod control;
pub mod device;
pub mod faults;
pub mod motion;
pub mod pivot;
mod server;

pub use control::SimArmControl;
pub use device::{DeviceIdentity, PoseReading};
pub use faults::Fault;
pub use motion::{MotionError, MotionScript};
pub use pivot::{pivot_script, PivotMotion, PivotScriptError};

use crate::arm::params::DhParams;
use crossbeam_channel::Sender;
use nalgebra::{Point3, UnitQuaternion};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A comfortable pose to start in: the stylus tip about 21 cm in front of the base, 5 cm above
/// the desk (what an arm at rest in its home cradle reports is up to its firmware).
pub const REST_POSE_RAD: [f64; 6] = [0.0, 0.7, -1.1, 0.0, 0.9, 0.0];

/// Settings of a simulated arm.
#[derive(Debug, Clone)]
pub struct SimArmConfig {
    /// What the arm reports (default: the real 3DX of the protocol notes).
    pub device: DeviceIdentity,
    /// Also create (and move after a hang-up) a symlink to the pty here.
    pub link: Option<PathBuf>,
    /// Joint angles at power-up (rad).
    pub initial_angles_rad: [f64; 6],
    /// A script to play from the start (live control can take over any time).
    pub motion: Option<MotionScript>,
    /// Seed for the fault generator (garbage bytes, drop positions).
    pub seed: u64,
    /// How many sent packets to keep as ground truth (0 = none).
    pub truth_capacity: usize,
    /// Shortest press a release waits for (see [`SimArmControl`]).
    pub min_press: Duration,
}

impl Default for SimArmConfig {
    fn default() -> Self {
        Self {
            device: DeviceIdentity::default(),
            link: None,
            initial_angles_rad: REST_POSE_RAD,
            motion: None,
            seed: 0x05EE_DA53,
            truth_capacity: 20_000,
            min_press: Duration::from_millis(50),
        }
    }
}

/// A data packet the simulated arm sent: the ground truth for the driver's samples. Packets
/// sent intact are in [`SimArmHandle::sent_samples`]; those a fault corrupted (bit flips,
/// substitutions, out-of-range counts, dropped or truncated bytes) in
/// [`SimArmHandle::tampered_samples`], with what they should have said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SentSample {
    /// Index among intact packets sent since the arm started (for a tampered packet: the index
    /// the next intact packet gets).
    pub index: u64,
    /// When it went on the line.
    pub t: Instant,
    /// The timer in the packet.
    pub timer_ticks: Option<u16>,
    /// Encoder counts.
    pub counts: [u16; 6],
    /// Joint angles the counts encode (rad).
    pub joint_angles_rad: [f64; 6],
    /// Tip of those angles with the arm's own parameters (m, point tip).
    pub tip_in_arm: Point3<f64>,
    /// Stylus orientation of those angles.
    pub arm_from_stylus: UnitQuaternion<f64>,
    /// Buttons in the packet.
    pub buttons: u8,
}

/// What the simulated arm is doing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStatus {
    /// Agreed rate (`None` while autobauding).
    pub baud: Option<u32>,
    /// `CF` streaming on.
    pub streaming: bool,
    /// Intact data packets sent.
    pub packets_sent: u64,
    /// Hang-ups performed.
    pub hangups: u32,
    /// Bytes equal to a data-packet header put on the line with data packets (real headers,
    /// header-like noise, garbage that happens to match): what a driver's header count must
    /// equal when nothing was lost in between.
    pub data_headers_sent: u64,
}

/// Starts simulated arms.
#[derive(Debug)]
pub struct SimulatedArm;

/// Handle of a running simulated arm; dropping it stops the arm and removes the link.
#[derive(Debug)]
pub struct SimArmHandle {
    pty_path: Arc<Mutex<PathBuf>>,
    link: Option<PathBuf>,
    control: SimArmControl,
    faults: Sender<Fault>,
    truth: Arc<Mutex<VecDeque<SentSample>>>,
    tampered: Arc<Mutex<VecDeque<SentSample>>>,
    status: Arc<Mutex<SimStatus>>,
    dh: DhParams,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SimulatedArm {
    /// Opens a pty and starts serving the arm on a thread named `sim-arm`.
    pub fn spawn(config: SimArmConfig) -> std::io::Result<SimArmHandle> {
        let (master, slave, path) = server::new_pty()?;
        if let Some(link) = &config.link {
            server::relink(link, &path)?;
        }
        let dh = DhParams::from_raw(&config.device.raw_dh);
        let max_values = config.device.max_values;
        let control =
            SimArmControl::new(dh, max_values, config.initial_angles_rad, config.min_press);
        if let Some(script) = config.motion.clone() {
            control.play(script);
        }
        let (fault_tx, fault_rx) = crossbeam_channel::unbounded();
        let pty_path = Arc::new(Mutex::new(path));
        let truth = Arc::new(Mutex::new(VecDeque::new()));
        let tampered = Arc::new(Mutex::new(VecDeque::new()));
        let status = Arc::new(Mutex::new(SimStatus::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let now = Instant::now();
        let srv = server::Server {
            device: device::Device::new(config.device.clone(), now),
            control: control.clone(),
            dh,
            max_encoder: max_values.encoder_max,
            faults: fault_rx,
            stop: stop.clone(),
            master,
            slave,
            pty_path: pty_path.clone(),
            link: config.link.clone(),
            truth: truth.clone(),
            truth_capacity: config.truth_capacity,
            status: status.clone(),
            rng: server::Server::new_rng(config.seed),
            line_free_at: now,
            garbage_pending: 0,
            drop_pending: 0,
            truncate_pending: 0,
            flip_pending: 0,
            substitute_pending: 0,
            noise_pending: 0,
            range_pending: 0,
            tampered: tampered.clone(),
            silent_until: None,
            mute_data: false,
            sent_index: 0,
            phantoms_sent: 0,
        };
        let thread = std::thread::Builder::new()
            .name("sim-arm".into())
            .spawn(move || srv.run())?;
        Ok(SimArmHandle {
            pty_path,
            link: config.link,
            control,
            faults: fault_tx,
            truth,
            tampered,
            status,
            dh,
            stop,
            thread: Some(thread),
        })
    }
}

impl SimArmHandle {
    /// The path a driver should open: the link if one was asked for, else the pty.
    pub fn port_path(&self) -> PathBuf {
        self.link.clone().unwrap_or_else(|| self.pty_path())
    }

    /// The current pty (changes after a hang-up).
    pub fn pty_path(&self) -> PathBuf {
        self.pty_path.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// The link path, if any.
    pub fn link_path(&self) -> Option<&Path> {
        self.link.as_deref()
    }

    /// Live control (cloneable; usable from any thread).
    pub fn control(&self) -> SimArmControl {
        self.control.clone()
    }

    /// The arm's own kinematic parameters (point tip).
    pub fn dh(&self) -> &DhParams {
        &self.dh
    }

    /// Injects a fault.
    pub fn inject(&self, fault: Fault) {
        // The server owns the receiver until the handle drops; a send cannot fail before that.
        let _ = self.faults.send(fault);
    }

    /// The ground truth kept so far (oldest first), without removing it.
    pub fn sent_samples(&self) -> Vec<SentSample> {
        self.truth
            .lock()
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The truth of the packets a fault corrupted (what they should have said), oldest first.
    pub fn tampered_samples(&self) -> Vec<SentSample> {
        self.tampered
            .lock()
            .map(|t| t.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Removes and returns the ground truth kept so far.
    pub fn take_sent_samples(&self) -> Vec<SentSample> {
        self.truth
            .lock()
            .map(|mut t| t.drain(..).collect())
            .unwrap_or_default()
    }

    /// What the arm is doing.
    pub fn status(&self) -> SimStatus {
        self.status.lock().map(|s| *s).unwrap_or_default()
    }
}

impl Drop for SimArmHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
