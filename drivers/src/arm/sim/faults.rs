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
    /// The arm neither sends nor hears anything for this long (a loose cable).
    Silence {
        /// How long.
        duration: Duration,
    },
    /// The port disappears (USB adaptor unplugged): the pty is closed and a new one made;
    /// the link path, if any, moves to it. The arm powers up again in autobaud mode.
    HangUp,
}
