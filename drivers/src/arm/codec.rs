//! Byte-level HCI codec: command bytes, data-command layout, and the data-packet parser that
//! re-synchronises on the header bit after garbage, dropped bytes or truncated packets.
//!
//! The HCI data packet has no checksum: the header (the command byte with bit 7 set) is the
//! only byte with bit 7 set. The parser therefore accepts a packet only when it is complete,
//! has the exact length the command implies, and is followed by a byte with bit 7 set (the
//! next header) or by silence ([`PacketParser::flush_idle`]); stray 7-bit bytes after a full
//! packet mean the framing was off, so that packet is discarded instead of being trusted.

/// END: returns the arm to autobaud mode. Also the first byte of the host's autosync.
pub const CMD_END: u8 = 0xC5;
/// Change baud rate: followed by one rate code byte.
pub const CMD_SET_BAUD: u8 = 0xC4;
/// Physical (DH) parameters.
pub const CMD_PARAMS: u8 = 0xC0;
/// Home reference (unused by the MicroScribe).
pub const CMD_HOME_REF: u8 = 0xC1;
/// Home: reload the encoder counters with their power-up values.
pub const CMD_HOME: u8 = 0xC2;
/// Maximum values (buttons, timer, analog, encoders).
pub const CMD_MAX_VALUES: u8 = 0xC6;
/// First of the identity string commands (`C8`–`CE`).
pub const CMD_FIRST_STRING: u8 = 0xC8;
/// Last of the identity string commands.
pub const CMD_LAST_STRING: u8 = 0xCE;
/// Respond-to-motion (streaming).
pub const CMD_MOTION: u8 = 0xCF;
/// Insert marker: followed by one byte, both echoed.
pub const CMD_MARKER: u8 = 0xD2;
/// Extended parameters (BETA).
pub const CMD_EXT_PARAMS: u8 = 0xD3;
/// The autobaud/handshake string.
pub const AUTOSYNC: &[u8; 4] = b"IMMC";
/// Sent to open a session.
pub const BEGIN: &[u8; 5] = b"BEGIN";
/// The arm's answer to `BEGIN` (NUL-terminated product id).
pub const BEGIN_REPLY: &[u8; 5] = b"MSCR\0";
/// Length byte of a valid `C0` block.
pub const PARAMS_LEN: u8 = 36;
/// Length byte of a valid `D3` block.
pub const EXT_PARAMS_LEN: u8 = 2;
/// Length of the `C6` payload.
pub const MAX_VALUES_LEN: usize = 24;
/// The only parameter format this driver understands.
pub const PARAM_FORMAT_DH05: &str = "Format DH0.5";
/// Seconds per device timer tick.
pub const TIMER_TICK_SECS: f64 = 1.0 / 900.0;

/// Ticks of the arm's timer from `earlier` to `later`, across its wrap after `timer_max`
/// (the largest value, from the arm's `C6` block).
pub fn timer_ticks_between(timer_max: u16, earlier: u16, later: u16) -> u32 {
    let period = u32::from(timer_max) + 1;
    (u32::from(later) % period + period - u32::from(earlier) % period) % period
}

/// Baud-rate codes of `C4`, fastest first.
pub const BAUD_CODES: [(u32, u8); 7] = [
    (115_200, 0x00),
    (57_600, 0x01),
    (38_400, 0x10),
    (28_800, 0x02),
    (19_200, 0x11),
    (14_400, 0x03),
    (9_600, 0x12),
];

/// The rates at which the arm autobauds, slowest first.
pub const AUTOBAUD_RATES: [u32; 7] = [9_600, 14_400, 19_200, 28_800, 38_400, 57_600, 115_200];

/// The `C4` code for a baud rate, if the arm supports that rate.
pub fn baud_code(baud: u32) -> Option<u8> {
    BAUD_CODES.iter().find(|(b, _)| *b == baud).map(|(_, c)| *c)
}

/// The baud rate a `C4` code selects.
pub fn baud_from_code(code: u8) -> Option<u32> {
    BAUD_CODES.iter().find(|(_, c)| *c == code).map(|(b, _)| *b)
}

/// A standard (data) command byte: which encoders, analog channels and whether the timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataCommand(u8);

impl DataCommand {
    /// Six encoders and the timer (`0x23`): the command this driver uses.
    pub const SIX_WITH_TIMER: DataCommand = DataCommand(0x23);
    /// Six encoders, no timer (`0x03`).
    pub const SIX: DataCommand = DataCommand(0x03);

    /// Interprets a byte as a data command; `None` for configuration bytes (bit 6 set) or a
    /// byte that selects no encoders.
    pub fn from_byte(byte: u8) -> Option<DataCommand> {
        let b = byte & 0x7F;
        if b & 0x40 != 0 || b & 0x03 == 0 {
            return None;
        }
        Some(DataCommand(b))
    }

    /// The command byte as sent by the host.
    pub fn byte(self) -> u8 {
        self.0
    }

    /// The response header: the command with bit 7 set.
    pub fn header(self) -> u8 {
        self.0 | 0x80
    }

    /// Number of encoder values in the response (5, 6 or 7).
    pub fn encoder_count(self) -> usize {
        match self.0 & 0x03 {
            0x01 => 5,
            0x03 => 6,
            _ => 7,
        }
    }

    /// Number of analog values in the response (0, 2, 4 or 8).
    pub fn analog_count(self) -> usize {
        match (self.0 >> 2) & 0x03 {
            0 => 0,
            1 => 2,
            2 => 4,
            _ => 8,
        }
    }

    /// Whether the response carries the timer.
    pub fn has_timer(self) -> bool {
        self.0 & 0x20 != 0
    }

    /// Total response length in bytes, header included.
    pub fn packet_len(self) -> usize {
        let analog = match self.analog_count() {
            0 => 0,
            n => n + 1,
        };
        2 + if self.has_timer() { 2 } else { 0 } + analog + 2 * self.encoder_count()
    }
}

/// The most encoders a data packet can carry.
pub const MAX_ENCODERS: usize = 7;

/// A decoded data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacket {
    /// The data command this packet answers.
    pub command: DataCommand,
    /// Button bits: bit 0 right/single pedal, bit 1 left pedal.
    pub buttons: u8,
    /// The 14-bit device timer, if requested.
    pub timer_ticks: Option<u16>,
    /// Raw 14-bit encoder counts; the first `command.encoder_count()` are valid.
    pub counts: [u16; MAX_ENCODERS],
}

impl DataPacket {
    /// The valid encoder counts.
    pub fn encoder_counts(&self) -> &[u16] {
        &self.counts[..self.command.encoder_count()]
    }

    /// Encodes the packet as the arm sends it. Values are masked to 7/14 bits.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.command.packet_len());
        out.push(self.command.header());
        out.push(self.buttons & 0x7F);
        if self.command.has_timer() {
            push_14bit(&mut out, self.timer_ticks.unwrap_or(0));
        }
        let analog = self.command.analog_count();
        if analog > 0 {
            out.extend(std::iter::repeat_n(0u8, analog + 1));
        }
        for &c in self.encoder_counts() {
            push_14bit(&mut out, c);
        }
        out
    }

    /// Decodes a complete packet; `None` unless `bytes` has exactly the right length, the
    /// right header, and no other byte with bit 7 set.
    pub fn decode(command: DataCommand, bytes: &[u8]) -> Option<DataPacket> {
        if bytes.len() != command.packet_len()
            || bytes[0] != command.header()
            || bytes[1..].iter().any(|b| b & 0x80 != 0)
        {
            return None;
        }
        let mut i = 1;
        let buttons = bytes[i];
        i += 1;
        let timer_ticks = if command.has_timer() {
            i += 2;
            Some(join_14bit(bytes[i - 2], bytes[i - 1]))
        } else {
            None
        };
        let analog = command.analog_count();
        if analog > 0 {
            i += analog + 1;
        }
        let mut counts = [0u16; MAX_ENCODERS];
        for c in counts.iter_mut().take(command.encoder_count()) {
            *c = join_14bit(bytes[i], bytes[i + 1]);
            i += 2;
        }
        Some(DataPacket {
            command,
            buttons,
            timer_ticks,
            counts,
        })
    }
}

fn push_14bit(out: &mut Vec<u8>, value: u16) {
    out.push(((value >> 7) & 0x7F) as u8);
    out.push((value & 0x7F) as u8);
}

fn join_14bit(hi: u8, lo: u8) -> u16 {
    (u16::from(hi & 0x7F) << 7) | u16::from(lo & 0x7F)
}

/// Counters of what the parser had to throw away.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParserStats {
    /// Header bytes seen (each starts a candidate packet).
    pub headers: u64,
    /// Packets accepted.
    pub packets: u64,
    /// Bytes skipped while looking for a header.
    pub bytes_skipped: u64,
    /// Packets started but cut short by a new header (dropped bytes, truncation).
    pub truncated: u64,
    /// Complete packets discarded because stray bytes followed them.
    pub misframed: u64,
    /// Partial or unconfirmed packets forgotten by [`PacketParser::reset`] (a flush).
    pub discarded: u64,
}

/// Incremental parser for a stream of data packets answering one data command.
#[derive(Debug, Clone)]
pub struct PacketParser {
    command: DataCommand,
    buf: Vec<u8>,
    /// A complete packet waiting for proof of framing (the next header, or silence).
    pending: Option<DataPacket>,
    stats: ParserStats,
}

impl PacketParser {
    /// A parser for responses to `command`.
    pub fn new(command: DataCommand) -> Self {
        Self {
            command,
            buf: Vec::with_capacity(command.packet_len()),
            pending: None,
            stats: ParserStats::default(),
        }
    }

    /// The data command whose responses this parser expects.
    pub fn command(&self) -> DataCommand {
        self.command
    }

    /// What has been accepted and discarded so far.
    pub fn stats(&self) -> ParserStats {
        self.stats
    }

    /// Forgets any partial or pending packet (after a flush of the port, for instance).
    pub fn reset(&mut self) {
        if !self.buf.is_empty() || self.pending.is_some() {
            self.stats.discarded += 1;
        }
        self.buf.clear();
        self.pending = None;
    }

    /// Bytes of a partial packet held (0 when between packets).
    pub fn partial_len(&self) -> usize {
        self.buf.len()
    }

    /// Whether a complete packet waits for proof of framing.
    pub fn has_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// Feeds bytes, calling `on_packet` for each accepted packet in order.
    pub fn push(&mut self, bytes: &[u8], mut on_packet: impl FnMut(DataPacket)) {
        for &b in bytes {
            if let Some(p) = self.push_byte(b) {
                on_packet(p);
            }
        }
    }

    /// Feeds one byte; returns a packet when one is accepted.
    pub fn push_byte(&mut self, byte: u8) -> Option<DataPacket> {
        let mut accepted = None;
        if let Some(p) = self.pending.take() {
            if byte & 0x80 != 0 {
                self.stats.packets += 1;
                accepted = Some(p);
            } else {
                self.stats.misframed += 1;
                self.stats.bytes_skipped += 1;
                return None;
            }
        }
        if byte & 0x80 != 0 {
            if !self.buf.is_empty() {
                self.stats.truncated += 1;
                self.buf.clear();
            }
            if byte == self.command.header() {
                self.stats.headers += 1;
                self.buf.push(byte);
            } else {
                self.stats.bytes_skipped += 1;
            }
        } else if self.buf.is_empty() {
            self.stats.bytes_skipped += 1;
        } else {
            self.buf.push(byte);
            if self.buf.len() == self.command.packet_len() {
                self.pending = DataPacket::decode(self.command, &self.buf);
                self.buf.clear();
            }
        }
        accepted
    }

    /// Called when the line has been quiet for a while: a complete packet followed by silence
    /// is accepted.
    pub fn flush_idle(&mut self) -> Option<DataPacket> {
        let p = self.pending.take();
        if p.is_some() {
            self.stats.packets += 1;
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_command_lengths_match_the_spec() {
        assert_eq!(DataCommand::SIX_WITH_TIMER.packet_len(), 16);
        assert_eq!(DataCommand::SIX.packet_len(), 14);
        assert_eq!(
            DataCommand::from_byte(0x21).map(|c| c.packet_len()),
            Some(14)
        );
        assert_eq!(
            DataCommand::from_byte(0x22).map(|c| c.encoder_count()),
            Some(7)
        );
        assert_eq!(DataCommand::from_byte(0xC6), None);
    }

    #[test]
    fn packet_round_trips_and_needs_the_next_header() {
        let p = DataPacket {
            command: DataCommand::SIX_WITH_TIMER,
            buttons: 2,
            timer_ticks: Some(0x3ABC),
            counts: [0, 0x3FFF, 1, 0x1234, 77, 0, 0],
        };
        let bytes = p.encode();
        assert_eq!(bytes.len(), 16);
        let mut parser = PacketParser::new(DataCommand::SIX_WITH_TIMER);
        let mut got = Vec::new();
        parser.push(&bytes, |p| got.push(p));
        assert!(
            got.is_empty(),
            "a packet is held until framing is confirmed"
        );
        parser.push(&bytes[..1], |p| got.push(p));
        assert_eq!(got, vec![p]);
        assert_eq!(parser.flush_idle(), None, "second packet is incomplete");
    }

    #[test]
    fn stray_bytes_after_a_packet_discard_it() {
        let p = DataPacket {
            command: DataCommand::SIX_WITH_TIMER,
            buttons: 0,
            timer_ticks: Some(5),
            counts: [1, 2, 3, 4, 5, 0, 0],
        };
        let mut stream = p.encode();
        stream.insert(5, 0x11); // noise inside: the packet completes one byte early
        stream.extend(p.encode());
        let mut parser = PacketParser::new(DataCommand::SIX_WITH_TIMER);
        let mut got = Vec::new();
        parser.push(&stream, |p| got.push(p));
        got.extend(parser.flush_idle());
        assert_eq!(got, vec![p]);
        assert_eq!(parser.stats().misframed, 1);
    }
}
