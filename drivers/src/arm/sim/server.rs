//! The simulated arm's server thread: serves the [`Device`] state machine on the master side
//! of a pseudo-terminal, paces output at the line rate (10 bits per byte), follows the
//! host's baud rate through the shared termios, records what it sent, and injects faults.

use super::control::SimArmControl;
use super::device::{Device, Output};
use super::faults::Fault;
use super::{SentSample, SimStatus};
use crate::arm::kinematics::arm_from_stylus;
use crate::arm::params::DhParams;
use crossbeam_channel::Receiver;
use nalgebra::Point3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serialport::{SerialPort, TTYPort};
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How late the server may fall behind its line schedule and still catch up: a real UART
/// shifts bytes out continuously, so the emulator's own scheduling delays (a few ms on a
/// loaded host) are made up by sending the queued packets back to back, not lost.
const CATCH_UP: Duration = Duration::from_millis(50);

/// Makes a pty pair and returns (master, slave, slave path). Both ends are close-on-exec:
/// the serialport crate opens them without it, and a process spawned while the arm runs (the
/// `arm probe` a test starts, any program of the host) would otherwise keep a copy of the
/// master, so that dropping it at a [`Fault::HangUp`] no longer hangs up the host's side: the
/// host would see a silent line instead of a vanished port, unlike an unplugged adaptor.
pub(crate) fn new_pty() -> io::Result<(TTYPort, TTYPort, PathBuf)> {
    let (master, slave) = TTYPort::pair().map_err(io::Error::from)?;
    set_cloexec(&master)?;
    set_cloexec(&slave)?;
    let path = slave
        .name()
        .map(PathBuf::from)
        .ok_or_else(|| io::Error::other("pty slave has no name"))?;
    Ok((master, slave, path))
}

/// Sets `FD_CLOEXEC` on an open port.
fn set_cloexec(port: &TTYPort) -> io::Result<()> {
    let fd = port.as_raw_fd();
    // SAFETY: fcntl on a descriptor the port owns and keeps open; F_GETFD/F_SETFD only read
    // and set its descriptor flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Points `link` at `target`, atomically (a new symlink renamed over the old one).
pub(crate) fn relink(link: &Path, target: &Path) -> io::Result<()> {
    let tmp = link.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp)?;
    std::fs::rename(&tmp, link)
}

pub(crate) struct Server {
    pub device: Device,
    pub control: SimArmControl,
    pub dh: DhParams,
    pub max_encoder: [u16; 6],
    pub faults: Receiver<Fault>,
    pub stop: Arc<AtomicBool>,
    pub master: TTYPort,
    pub slave: TTYPort,
    pub pty_path: Arc<Mutex<PathBuf>>,
    pub link: Option<PathBuf>,
    pub truth: Arc<Mutex<VecDeque<SentSample>>>,
    pub truth_capacity: usize,
    pub status: Arc<Mutex<SimStatus>>,
    pub rng: ChaCha8Rng,
    pub line_free_at: Instant,
    pub garbage_pending: usize,
    pub drop_pending: u32,
    pub truncate_pending: u32,
    pub flip_pending: u32,
    pub substitute_pending: u32,
    pub noise_pending: u32,
    pub range_pending: u32,
    pub tampered: Arc<Mutex<VecDeque<SentSample>>>,
    pub silent_until: Option<Instant>,
    pub mute_data: bool,
    pub sent_index: u64,
    pub phantoms_sent: u64,
}

impl Server {
    pub(crate) fn new_rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    fn host_baud(&self) -> u32 {
        self.slave.baud_rate().unwrap_or(9_600)
    }

    fn silent(&mut self, now: Instant) -> bool {
        match self.silent_until {
            Some(t) if now < t => true,
            Some(_) => {
                self.silent_until = None;
                false
            }
            None => false,
        }
    }

    pub(crate) fn run(mut self) {
        let mut buf = [0u8; 256];
        while !self.stop.load(Ordering::SeqCst) {
            while let Ok(fault) = self.faults.try_recv() {
                self.apply(fault);
            }
            let now = Instant::now();
            let due = self
                .device
                .next_stream_due()
                .map(|d| d.max(self.line_free_at));
            let wait = due
                .map(|d| d.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(20))
                .min(Duration::from_millis(20));
            let _ = self.master.set_timeout(wait);
            let got = match self.master.read(&mut buf) {
                Ok(n) => n,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut
                            | io::ErrorKind::WouldBlock
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    0
                }
                Err(e) => {
                    log::debug!("simulated arm: reading the pty: {e}");
                    std::thread::sleep(Duration::from_millis(5));
                    0
                }
            };
            let now = Instant::now();
            if got > 0 && !self.silent(now) {
                let host_baud = self.host_baud();
                let control = self.control.clone();
                let out = self
                    .device
                    .on_input(&buf[..got], host_baud, now, || control.reading(now).0);
                self.transmit(out, now);
            }
            let now = Instant::now();
            if let Some(due) = self.device.next_stream_due() {
                let scheduled = due.max(self.line_free_at);
                if scheduled <= now {
                    // The device's own clock follows the line schedule; only when the
                    // emulator fell far behind does it jump to the present.
                    let t = if now - scheduled <= CATCH_UP {
                        scheduled
                    } else {
                        now
                    };
                    let (reading, _) = self.control.reading(t);
                    if let Some(p) = self.device.stream_packet(t, reading) {
                        let out = Output {
                            bytes: p.0.encode(),
                            packet: Some(p),
                        };
                        self.transmit(out, t);
                    }
                }
            }
            self.publish_status();
        }
        if let Some(link) = &self.link {
            let _ = std::fs::remove_file(link);
        }
    }

    /// Applies the pending payload faults to one encoded data packet; true if it changed.
    fn corrupt(&mut self, payload: &mut Vec<u8>) -> bool {
        let n = payload.len();
        if self.drop_pending > 0 {
            self.drop_pending -= 1;
            let i = self.rng.random_range(0..n);
            payload.remove(i);
        } else if self.truncate_pending > 0 {
            self.truncate_pending -= 1;
            let keep = self.rng.random_range(1..n);
            payload.truncate(keep);
        } else if self.flip_pending > 0 {
            self.flip_pending -= 1;
            let original = payload.clone();
            while *payload == original {
                for _ in 0..self.rng.random_range(1..=3) {
                    let i = self.rng.random_range(1..n);
                    payload[i] ^= 1 << self.rng.random_range(0..7);
                }
            }
        } else if self.substitute_pending > 0 {
            self.substitute_pending -= 1;
            let i = self.rng.random_range(1..n);
            let old = payload[i];
            while payload[i] == old {
                payload[i] = self.rng.random_range(0..0x80);
            }
        } else if self.range_pending > 0 {
            self.range_pending -= 1;
            // The encoder counts are the last 12 bytes: (hi, lo) per encoder 0–5.
            let first = n - 12;
            let over: Vec<usize> = (0..6).filter(|&k| self.max_encoder[k] < 0x3FFF).collect();
            let k = over[self.rng.random_range(0..over.len())];
            let extra = !self.max_encoder[k] & 0x3FFF;
            // Set one bit above the encoder's maximum (in the high byte).
            let bits: Vec<u16> = (0..14).filter(|b| extra & (1 << b) != 0).collect();
            let bit = bits[self.rng.random_range(0..bits.len())];
            if bit >= 7 {
                payload[first + 2 * k] |= 1 << (bit - 7);
            } else {
                payload[first + 2 * k + 1] |= 1 << bit;
            }
        } else {
            return false;
        }
        true
    }

    /// Header-like noise before `packet`: alternately a packet's length of random 7-bit bytes
    /// after the header, and a packet with random but in-range buttons, timer and counts.
    fn phantom(&mut self, packet: &crate::arm::codec::DataPacket) -> Vec<u8> {
        self.phantoms_sent += 1;
        let n = packet.command.packet_len();
        if self.phantoms_sent % 2 == 1 {
            let mut out = vec![packet.command.header()];
            out.extend((1..n).map(|_| self.rng.random_range(0..0x80u8)));
            out
        } else {
            let mut p = *packet;
            p.buttons = self.rng.random_range(0..4);
            p.timer_ticks = p.timer_ticks.map(|_| self.rng.random_range(0..0x4000));
            for (k, c) in p.counts.iter_mut().enumerate().take(6) {
                *c = self.rng.random_range(0..=u32::from(self.max_encoder[k])) as u16;
            }
            p.encode()
        }
    }

    fn publish_status(&self) {
        if let Ok(mut s) = self.status.lock() {
            s.baud = self.device.baud();
            s.streaming = self.device.is_streaming();
            s.packets_sent = self.sent_index;
        }
    }

    fn apply(&mut self, fault: Fault) {
        log::info!("simulated arm: fault {fault:?}");
        match fault {
            Fault::Garbage { bytes } => self.garbage_pending += bytes,
            Fault::DropBytes { packets } => self.drop_pending += packets,
            Fault::TruncatePackets { packets } => self.truncate_pending += packets,
            Fault::BitFlips { packets } => self.flip_pending += packets,
            Fault::SubstituteBytes { packets } => self.substitute_pending += packets,
            Fault::HeaderNoise { bursts } => self.noise_pending += bursts,
            Fault::OutOfRangeCounts { packets } => self.range_pending += packets,
            Fault::Silence { duration } => self.silent_until = Some(Instant::now() + duration),
            Fault::MuteData => self.mute_data = true,
            Fault::HangUp => match new_pty() {
                Ok((master, slave, path)) => {
                    // The link, the path and the count move first, so that a host (or a
                    // test) acting at once on the hang-up finds the new port, not the dead one.
                    if let Some(link) = &self.link {
                        if let Err(e) = relink(link, &path) {
                            log::warn!("simulated arm: moving link {}: {e}", link.display());
                        }
                    }
                    if let Ok(mut p) = self.pty_path.lock() {
                        *p = path;
                    }
                    if let Ok(mut s) = self.status.lock() {
                        s.hangups += 1;
                    }
                    self.device.power_cycle(Instant::now());
                    self.line_free_at = Instant::now();
                    // Dropping the old pair hangs up the host's side.
                    self.master = master;
                    self.slave = slave;
                }
                Err(e) => log::warn!("simulated arm: cannot make a new pty after hang-up: {e}"),
            },
        }
    }

    /// Sends `out` (with any pending faults applied), paced at the line rate, and records an
    /// intact data packet as ground truth.
    fn transmit(&mut self, out: Output, now: Instant) {
        if self.silent(now) || out.bytes.is_empty() || (self.mute_data && out.packet.is_some()) {
            return;
        }
        let mut bytes = Vec::with_capacity(out.bytes.len() + self.garbage_pending);
        let mut intact = true;
        if self.garbage_pending > 0 {
            for _ in 0..self.garbage_pending {
                bytes.push(self.rng.random::<u8>());
            }
            self.garbage_pending = 0;
        }
        let mut payload = out.bytes;
        if let Some((packet, _)) = &out.packet {
            if self.noise_pending > 0 {
                self.noise_pending -= 1;
                bytes.extend(self.phantom(packet));
            }
        }
        if out.packet.is_some() && payload.len() > 2 {
            intact = !self.corrupt(&mut payload);
        }
        bytes.extend_from_slice(&payload);
        let baud = self
            .device
            .baud()
            .unwrap_or_else(|| self.host_baud())
            .max(300);
        let byte_time = Duration::from_secs_f64(10.0 / f64::from(baud));
        // The bytes go on the line when it is free (responses queue behind a stream); `now` is
        // the device's time, which for streamed packets follows the line schedule.
        let nominal_start = now.max(self.line_free_at);
        self.line_free_at = nominal_start + byte_time * bytes.len() as u32;
        let wait = nominal_start.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            std::thread::sleep(wait);
        }
        let start = Instant::now();
        let _ = self.master.set_timeout(Duration::ZERO);
        let mut written = 0;
        while written < bytes.len() {
            match self.master.write(&bytes[written..]) {
                Ok(0) => break,
                Ok(n) => written += n,
                // The host is not reading and its buffer is full: the bytes are lost, as on a
                // real line.
                Err(_) => break,
            }
        }
        if let Some(header) = out.packet.map(|(p, _)| p.command.header()) {
            let headers = bytes[..written].iter().filter(|&&b| b == header).count();
            if let Ok(mut s) = self.status.lock() {
                s.data_headers_sent += headers as u64;
            }
        }
        if let Some((packet, reading)) = out.packet {
            self.control.sent(reading.buttons);
            if written == bytes.len() {
                let angles = crate::arm::kinematics::counts_to_angles(
                    packet.encoder_counts(),
                    &self.max_encoder,
                );
                let pose = arm_from_stylus(&self.dh, &angles);
                let sample = SentSample {
                    index: self.sent_index,
                    t: start,
                    timer_ticks: packet.timer_ticks,
                    counts: reading.counts,
                    joint_angles_rad: angles,
                    tip_in_arm: Point3::from(pose.translation.vector),
                    arm_from_stylus: pose.rotation,
                    buttons: packet.buttons,
                };
                let log = if intact {
                    self.sent_index += 1;
                    &self.truth
                } else {
                    &self.tampered
                };
                if self.truth_capacity > 0 {
                    if let Ok(mut t) = log.lock() {
                        if t.len() >= self.truth_capacity {
                            t.pop_front();
                        }
                        t.push_back(sample);
                    }
                }
            }
        }
    }
}
