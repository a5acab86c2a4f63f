//! The device side of the HCI protocol as a pure state machine (no I/O, no clock of its own):
//! autobaud, `BEGIN`, identity strings, `C0`/`C6`/`D3`, baud change, data queries, `CF`
//! streaming with delay and thresholds, insert marker, password-protected commands (refused).
//!
//! The server feeds it input bytes with the host's current line rate and asks it when the
//! next streamed packet is due; poses come from a callback at the moment a packet is built.

use crate::arm::codec::{
    baud_from_code, DataCommand, DataPacket, AUTOBAUD_RATES, AUTOSYNC, BEGIN, BEGIN_REPLY, CMD_END,
    CMD_EXT_PARAMS, CMD_FIRST_STRING, CMD_HOME, CMD_HOME_REF, CMD_LAST_STRING, CMD_MARKER,
    CMD_MAX_VALUES, CMD_MOTION, CMD_PARAMS, CMD_SET_BAUD, TIMER_TICK_SECS,
};
use crate::arm::params::{Identity, MaxValues, RawDhParams};
use std::time::{Duration, Instant};

/// What the simulated arm says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceIdentity {
    /// Identity strings.
    pub identity: Identity,
    /// `C6` block.
    pub max_values: MaxValues,
    /// `C0`/`D3` parameters.
    pub raw_dh: RawDhParams,
    /// Fastest rate the arm accepts (autobaud and `C4`).
    pub max_baud: u32,
}

impl Default for DeviceIdentity {
    fn default() -> Self {
        Self {
            identity: Identity::microscribe_3dx(),
            max_values: MaxValues::microscribe_3dx(),
            raw_dh: RawDhParams::microscribe_3dx(),
            max_baud: 115_200,
        }
    }
}

/// The encoder counts and buttons at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoseReading {
    /// Counts 0–5.
    pub counts: [u16; 6],
    /// Button bits.
    pub buttons: u8,
}

#[derive(Debug, Clone)]
struct Stream {
    command: DataCommand,
    min_delay: Duration,
    button_mask: u8,
    thresholds: Vec<u16>,
    last_sent_at: Option<Instant>,
    last_sent: Option<PoseReading>,
}

/// The protocol state of the simulated arm.
#[derive(Debug, Clone)]
pub struct Device {
    id: DeviceIdentity,
    /// `None` in autobaud mode; otherwise the agreed line rate.
    baud: Option<u32>,
    input: Vec<u8>,
    stream: Option<Stream>,
    powered_at: Instant,
}

/// Bytes to send and, when a data packet is among them, what it reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    /// Bytes for the host, in order.
    pub bytes: Vec<u8>,
    /// The data packet included in `bytes` (at its end), if any.
    pub packet: Option<(DataPacket, PoseReading)>,
}

impl Device {
    /// A freshly powered arm in autobaud mode.
    pub fn new(id: DeviceIdentity, now: Instant) -> Self {
        Self {
            id,
            baud: None,
            input: Vec::new(),
            stream: None,
            powered_at: now,
        }
    }

    /// The agreed rate, `None` while autobauding.
    pub fn baud(&self) -> Option<u32> {
        self.baud
    }

    /// Whether `CF` streaming is on.
    pub fn is_streaming(&self) -> bool {
        self.stream.is_some()
    }

    /// The 14-bit timer at `now`.
    pub fn timer_ticks(&self, now: Instant) -> u16 {
        let ticks =
            (now.saturating_duration_since(self.powered_at).as_secs_f64() / TIMER_TICK_SECS) as u64;
        (ticks % (u64::from(self.id.max_values.timer_max) + 1)) as u16
    }

    fn accepts_rate(&self, baud: u32) -> bool {
        AUTOBAUD_RATES.contains(&baud) && baud <= self.id.max_baud
    }

    /// Handles bytes from the host, which is running its line at `host_baud`.
    pub fn on_input(
        &mut self,
        bytes: &[u8],
        host_baud: u32,
        now: Instant,
        pose: impl Fn() -> PoseReading,
    ) -> Output {
        let mut out = Output::default();
        match self.baud {
            None if !self.accepts_rate(host_baud) => return out,
            // Bytes at another rate than the arm's arrive as framing errors: nothing usable.
            Some(b) if b != host_baud => return out,
            _ => {}
        }
        self.input.extend_from_slice(bytes);
        loop {
            let consumed = if self.baud.is_none() {
                self.autobaud_step(host_baud, &mut out)
            } else {
                self.command_step(now, &pose, &mut out)
            };
            if consumed == 0 || self.input.is_empty() {
                break;
            }
        }
        out
    }

    /// Scans for `IMMC`; returns bytes consumed.
    fn autobaud_step(&mut self, host_baud: u32, out: &mut Output) -> usize {
        if let Some(pos) = self.input.windows(4).position(|w| w == AUTOSYNC) {
            self.input.drain(..pos + 4);
            out.bytes.extend_from_slice(AUTOSYNC);
            self.baud = Some(host_baud);
            return pos + 4;
        }
        // Keep a tail that could be the start of IMMC.
        let keep = self.input.len().min(3);
        let n = self.input.len() - keep;
        self.input.drain(..n);
        0
    }

    /// Executes the first complete command in the input; returns bytes consumed (0 = wait).
    fn command_step(
        &mut self,
        now: Instant,
        pose: &impl Fn() -> PoseReading,
        out: &mut Output,
    ) -> usize {
        let Some(&b) = self.input.first() else {
            return 0;
        };
        // Any new command byte stops streaming.
        self.stream = None;
        let need = |n: usize, input: &Vec<u8>| input.len() >= n;
        let consumed = match b {
            CMD_END | b'E' => {
                self.baud = None;
                1
            }
            b'B' => {
                if !need(BEGIN.len(), &self.input) {
                    return 0;
                }
                if &self.input[..BEGIN.len()] == BEGIN {
                    out.bytes.extend_from_slice(BEGIN_REPLY);
                    BEGIN.len()
                } else {
                    1
                }
            }
            CMD_PARAMS => {
                out.bytes.push(b);
                out.bytes.extend(self.id.raw_dh.encode_c0());
                1
            }
            CMD_HOME_REF => {
                out.bytes.push(b);
                out.bytes.extend([0u8; 12]);
                1
            }
            CMD_HOME => {
                out.bytes.push(b);
                1
            }
            CMD_MAX_VALUES => {
                out.bytes.push(b);
                out.bytes.extend(self.id.max_values.encode());
                1
            }
            CMD_FIRST_STRING..=CMD_LAST_STRING => {
                out.bytes.push(b);
                let s = self.id.identity.as_array()[usize::from(b - CMD_FIRST_STRING)];
                out.bytes.extend(s.bytes().filter(|&c| c != 0));
                out.bytes.push(0);
                1
            }
            CMD_EXT_PARAMS => {
                if self.id.identity.has_beta() {
                    out.bytes.push(b);
                    out.bytes.extend(self.id.raw_dh.encode_d3());
                }
                1
            }
            CMD_SET_BAUD => {
                if !need(2, &self.input) {
                    return 0;
                }
                if let Some(rate) = baud_from_code(self.input[1]).filter(|&r| r <= self.id.max_baud)
                {
                    // The echo goes out at the old rate; the server sends it before switching.
                    out.bytes.push(CMD_SET_BAUD);
                    self.baud = Some(rate);
                }
                2
            }
            CMD_MARKER => {
                if !need(2, &self.input) {
                    return 0;
                }
                out.bytes.extend_from_slice(&self.input[..2]);
                2
            }
            CMD_MOTION => {
                // CF, delay (2), command, button mask, 8 analog thresholds, then per encoder 2.
                if !need(5, &self.input) {
                    return 0;
                }
                let Some(command) = DataCommand::from_byte(self.input[3]) else {
                    return 5;
                };
                let len = 1 + 2 + 1 + 1 + 8 + 2 * command.encoder_count();
                if !need(len, &self.input) {
                    return 0;
                }
                let a = &self.input;
                let delay_ticks = u16::from_be_bytes([a[1], a[2]]);
                let thresholds = (0..command.encoder_count())
                    .map(|k| u16::from_be_bytes([a[13 + 2 * k], a[14 + 2 * k]]))
                    .collect();
                out.bytes.push(CMD_MOTION);
                self.stream = Some(Stream {
                    command,
                    min_delay: Duration::from_secs_f64(f64::from(delay_ticks) * TIMER_TICK_SECS),
                    button_mask: a[4],
                    thresholds,
                    last_sent_at: None,
                    last_sent: None,
                });
                len
            }
            0xC3 | 0xC7 | 0xD0 | 0xD1 => {
                // Password protected: serial number then NUL. This arm refuses all of them.
                match self.input.iter().position(|&c| c == 0) {
                    Some(pos) => {
                        out.bytes.push(0xFF);
                        pos + 1
                    }
                    None if self.input.len() > 64 => self.input.len(),
                    None => return 0,
                }
            }
            _ => match DataCommand::from_byte(b) {
                Some(cmd) => {
                    let reading = pose();
                    let packet = self.packet(cmd, reading, now);
                    out.bytes.extend(packet.encode());
                    out.packet = Some((packet, reading));
                    1
                }
                None => 1,
            },
        };
        self.input.drain(..consumed.min(self.input.len()));
        consumed
    }

    fn packet(&self, command: DataCommand, reading: PoseReading, now: Instant) -> DataPacket {
        let mut counts = [0u16; 7];
        for (i, c) in counts.iter_mut().enumerate().take(command.encoder_count()) {
            *c = reading.counts.get(i).copied().unwrap_or(0) & 0x3FFF;
        }
        DataPacket {
            command,
            buttons: reading.buttons & self.id.max_values.buttons_mask,
            timer_ticks: command.has_timer().then(|| self.timer_ticks(now)),
            counts,
        }
    }

    /// When streaming, the earliest time the next packet may go out (the server also waits
    /// for the line to be free).
    pub fn next_stream_due(&self) -> Option<Instant> {
        let s = self.stream.as_ref()?;
        Some(match s.last_sent_at {
            Some(t) => t + s.min_delay,
            None => self.powered_at,
        })
    }

    /// Builds the next streamed packet if one is due at `now` and the thresholds say so.
    pub fn stream_packet(
        &mut self,
        now: Instant,
        reading: PoseReading,
    ) -> Option<(DataPacket, PoseReading)> {
        let due = self.next_stream_due()?;
        if now < due {
            return None;
        }
        let s = self.stream.as_ref()?;
        let fixed_rate = s.button_mask == 0 && s.thresholds.iter().all(|&t| t == 0);
        let moved = match s.last_sent {
            None => true,
            Some(last) => {
                (last.buttons ^ reading.buttons) & s.button_mask != 0
                    || s.thresholds.iter().enumerate().any(|(i, &t)| {
                        t > 0 && {
                            let a = i32::from(last.counts.get(i).copied().unwrap_or(0));
                            let b = i32::from(reading.counts.get(i).copied().unwrap_or(0));
                            (a - b).unsigned_abs() >= u32::from(t)
                        }
                    })
            }
        };
        if !fixed_rate && !moved {
            return None;
        }
        let command = s.command;
        let packet = self.packet(command, reading, now);
        if let Some(s) = self.stream.as_mut() {
            s.last_sent_at = Some(now);
            s.last_sent = Some(reading);
        }
        Some((packet, reading))
    }

    /// Back to the power-up state (after a hang-up).
    pub fn power_cycle(&mut self, now: Instant) {
        *self = Device::new(self.id.clone(), now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autobaud_then_strings_and_baud_change() {
        let now = Instant::now();
        let mut d = Device::new(DeviceIdentity::default(), now);
        let pose = PoseReading::default;
        assert!(
            d.on_input(b"\xC5IMMC", 250_000, now, pose).bytes.is_empty(),
            "unsupported rate"
        );
        assert_eq!(d.on_input(b"\xC5IMMC", 9_600, now, pose).bytes, b"IMMC");
        assert_eq!(d.on_input(b"BEGIN", 9_600, now, pose).bytes, b"MSCR\0");
        assert_eq!(d.on_input(&[0xCA], 9_600, now, pose).bytes, b"\xCADX\0");
        assert_eq!(d.on_input(&[0xC4], 9_600, now, pose).bytes, b"");
        assert_eq!(d.on_input(&[0x00], 9_600, now, pose).bytes, b"\xC4");
        assert_eq!(d.baud(), Some(115_200));
        assert!(
            d.on_input(&[0xC9], 9_600, now, pose).bytes.is_empty(),
            "old rate is garbled"
        );
        assert_eq!(d.on_input(&[0xC9], 115_200, now, pose).bytes, b"\xC9MSCR\0");
    }
}
