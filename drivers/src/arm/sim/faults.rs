//! Faults the simulated arm can be told to produce, as a real cable, adaptor or arm would.

use std::time::Duration;

/// A fault to inject into the simulated arm's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Random bytes (any value) on the line between two packets.
    Garbage {
        /// How many bytes.
        bytes: usize,
    },
    /// Each of the next `packets` data packets loses one byte at a random position.
    DropBytes {
        /// Packets affected.
        packets: u32,
    },
    /// Each of the next `packets` data packets is cut short at a random length.
    TruncatePackets {
        /// Packets affected.
        packets: u32,
    },
    /// Each of the next `packets` data packets has one to three bits flipped in its data
    /// bytes (bit 7 stays clear: the framing cannot see it; the length is unchanged).
    BitFlips {
        /// Packets affected.
        packets: u32,
    },
    /// Each of the next `packets` data packets has one data byte replaced by another 7-bit
    /// value (same length, framing intact).
    SubstituteBytes {
        /// Packets affected.
        packets: u32,
    },
    /// Before each of the next `bursts` packets, a phantom packet: the header byte followed by
    /// a packet's length of 7-bit noise; every other phantom has in-range encoder counts,
    /// buttons and timer (noise that looks exactly like a packet).
    HeaderNoise {
        /// Phantoms sent.
        bursts: u32,
    },
    /// Each of the next `packets` data packets has one encoder count outside the range the arm
    /// announced (bits above its maximum set, or a count on the absent sixth encoder).
    OutOfRangeCounts {
        /// Packets affected.
        packets: u32,
    },
    /// The arm neither sends nor hears anything for this long (a loose cable).
    Silence {
        /// How long.
        duration: Duration,
    },
    /// From now on the arm answers every command (handshake, identity, baud rate) but sends no
    /// data packet: firmware stuck in its streaming loop. A reconnect does not cure it.
    MuteData,
    /// The port disappears (USB adaptor unplugged): the pty is closed and a new one made;
    /// the link path, if any, moves to it. The arm powers up again in autobaud mode.
    HangUp,
}
