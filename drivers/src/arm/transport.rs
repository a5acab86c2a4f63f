//! Serial transport: opening a port for the arm (8N1, no flow control, short read timeout),
//! changing its rate, and finding the arm among the machine's ports by its autosync answer.

use super::protocol::{BaudControl, Session};
use serialport::{DataBits, FlowControl, Parity, SerialPort, StopBits, TTYPort};
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::Duration;

/// Where the arm is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortSpec {
    /// A device path (`/dev/ttyUSB0`, a pty, or a symlink to one).
    Path(PathBuf),
    /// Probe the machine's serial ports for an arm answering the autosync.
    Auto,
}

impl std::fmt::Display for PortSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PortSpec::Path(p) => write!(f, "{}", p.display()),
            PortSpec::Auto => write!(f, "auto"),
        }
    }
}

/// Errors opening or finding a port.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The port could not be opened.
    #[error("cannot open {path}: {source}{hint}")]
    Open {
        /// The port.
        path: String,
        /// The serialport crate's error.
        source: serialport::Error,
        /// A hint for the user (permissions).
        hint: &'static str,
    },
    /// Auto-detection found no arm.
    #[error("no arm answered on any serial port (tried: {tried})")]
    NotFound {
        /// The ports probed, comma-separated.
        tried: String,
    },
    /// The device path does not exist (a typo, or the adapter is not plugged in).
    #[error("{path}: no such device (serial ports here: {ports}; `auto` probes them for an arm)")]
    Missing {
        /// The path given.
        path: String,
        /// The machine's serial ports, comma-separated, or "none".
        ports: String,
    },
}

impl PortSpec {
    /// The port as users write it (config files, `--port`, `--arm`): `auto` probes every
    /// serial port, anything else is a device path.
    pub fn from_arg(port: &str) -> Self {
        if port == "auto" {
            PortSpec::Auto
        } else {
            PortSpec::Path(port.into())
        }
    }

    /// Fails at once when a device path does not exist, naming the serial ports there are:
    /// at the start of a session, waiting for a path that is not there only delays the
    /// message. (Once connected, the worker reconnects to a port that went away.)
    pub fn check_present(&self) -> Result<(), TransportError> {
        match self {
            PortSpec::Path(p) if !p.exists() => {
                let ports = candidate_ports();
                Err(TransportError::Missing {
                    path: p.display().to_string(),
                    ports: if ports.is_empty() {
                        "none".into()
                    } else {
                        ports.join(", ")
                    },
                })
            }
            _ => Ok(()),
        }
    }
}

/// An open serial line to the arm. On drop it releases the exclusive lock explicitly, so that
/// a pty kept open by a simulator can be reopened by a non-root user.
pub struct SerialLine {
    port: TTYPort,
    path: String,
}

impl std::fmt::Debug for SerialLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SerialLine")
            .field("path", &self.path)
            .finish()
    }
}

impl SerialLine {
    /// Opens `path` at `baud`, 8N1, no flow control, with the given read timeout.
    pub fn open(path: &str, baud: u32, read_timeout: Duration) -> Result<Self, TransportError> {
        let port = serialport::new(path, baud)
            .data_bits(DataBits::Eight)
            .parity(Parity::None)
            .stop_bits(StopBits::One)
            .flow_control(FlowControl::None)
            .timeout(read_timeout)
            .open_native()
            .map_err(|source| {
                let hint = match source.kind() {
                    serialport::ErrorKind::Io(io::ErrorKind::PermissionDenied) => {
                        " (add yourself to the 'dialout' group: sudo usermod -aG dialout $USER, then log in again)"
                    }
                    serialport::ErrorKind::NoDevice => " (no such device, or another program has it open)",
                    _ => "",
                };
                TransportError::Open {
                    path: path.to_string(),
                    source,
                    hint,
                }
            })?;
        Ok(Self {
            port,
            path: path.to_string(),
        })
    }

    /// The path this line was opened with.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The host side's current rate.
    pub fn baud(&self) -> io::Result<u32> {
        self.port.baud_rate().map_err(io::Error::from)
    }

    /// Changes the read timeout.
    pub fn set_read_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.port.set_timeout(timeout).map_err(io::Error::from)
    }
}

impl Drop for SerialLine {
    fn drop(&mut self) {
        // Best effort: on a vanished device this fails and does not matter.
        let _ = self.port.set_exclusive(false);
    }
}

impl Read for SerialLine {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.port.read(buf)
    }
}

impl Write for SerialLine {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.port.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        // tcdrain on a pty whose peer is slow can block; the bytes are queued anyway.
        Ok(())
    }
}

impl BaudControl for SerialLine {
    fn set_baud(&mut self, baud: u32) -> io::Result<()> {
        self.port.set_baud_rate(baud).map_err(io::Error::from)
    }
}

/// Ports worth probing: what the OS lists, plus the usual USB-serial and on-board names.
pub fn candidate_ports() -> Vec<String> {
    let mut ports: Vec<String> = serialport::available_ports()
        .map(|v| v.into_iter().map(|p| p.port_name).collect())
        .unwrap_or_default();
    for prefix in ["/dev/ttyUSB", "/dev/ttyACM", "/dev/ttyS"] {
        for i in 0..8 {
            let p = format!("{prefix}{i}");
            if !ports.contains(&p) && std::path::Path::new(&p).exists() {
                ports.push(p);
            }
        }
    }
    ports
}

/// Finds the first port among `candidates` where an arm answers the autosync at `baud`
/// within `budget` per port.
pub fn auto_detect(
    candidates: &[String],
    baud: u32,
    budget: Duration,
) -> Result<String, TransportError> {
    for path in candidates {
        let Ok(line) = SerialLine::open(path, baud, Duration::from_millis(5)) else {
            continue;
        };
        let mut session = Session::new(line);
        // The arm may still be at 115200 from an earlier session.
        if session.autosync_rates(&[baud, 115_200], budget).is_ok() {
            log::info!("arm found on {path}");
            return Ok(path.clone());
        }
    }
    Err(TransportError::NotFound {
        tried: if candidates.is_empty() {
            "none found".into()
        } else {
            candidates.join(", ")
        },
    })
}
