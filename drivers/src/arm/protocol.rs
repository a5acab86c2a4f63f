//! The host side of the HCI protocol over any `Read + Write` byte stream: autosync, `BEGIN`,
//! identity strings, `C6`/`C0`/`D3`, baud change, data queries and streaming.
//!
//! Streamed packets ([`Session::next_packet`]) pass through the plausibility filter of
//! [`super::plausibility`] (the protocol has no checksum); [`Session::counters`] accounts for
//! every header seen. [`Session::query`] and [`Session::next_raw_packet`] return packets as
//! framed, unfiltered.
//!
//! The stream must have a short read timeout (a few ms to a few tens of ms): reads that time
//! out (`TimedOut`, `WouldBlock`) are how the session notices silence and keeps its deadlines.

use super::codec::{
    DataCommand, DataPacket, PacketParser, AUTOSYNC, BEGIN, BEGIN_REPLY, CMD_END, CMD_EXT_PARAMS,
    CMD_FIRST_STRING, CMD_MAX_VALUES, CMD_PARAMS, CMD_SET_BAUD, EXT_PARAMS_LEN, MAX_VALUES_LEN,
    PARAMS_LEN, PARAM_FORMAT_DH05,
};
use super::params::{
    ArmParams, DhParams, Identity, MaxValues, ParamsError, RawDhParams, TipCorrection,
};
use super::plausibility::{ArmCounters, PlausibilityFilter, PlausibilityLimits};
use std::io::{self, ErrorKind, Read, Write};
use std::time::{Duration, Instant};

mod stream;

/// How long to wait for the answer to a configuration command. Generous: at 9600 baud the
/// 37-byte `C0` block alone takes 39 ms.
pub const ANSWER_TIMEOUT: Duration = Duration::from_millis(400);
/// How long the host keeps trying the autosync before giving up.
pub const AUTOSYNC_BUDGET: Duration = Duration::from_secs(3);
/// Longest identity string accepted.
const MAX_STRING_LEN: usize = 256;

/// What went wrong talking to the arm. `Io` and `Timeout` may go away on retry (the worker
/// reconnects); `Params`/`Unexpected` mean the device is not an arm this driver understands.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The port failed (unplugged, hung up, permission).
    #[error("serial I/O: {0}")]
    Io(#[from] io::Error),
    /// Nothing echoed `IMMC`.
    #[error("no arm answered the IMMC autosync within {budget_ms} ms")]
    NoAutosync {
        /// How long the host tried.
        budget_ms: u128,
    },
    /// The arm did not answer a command in time.
    #[error("arm did not answer {what} within {timeout_ms} ms (got {got:02X?})")]
    Timeout {
        /// Which command.
        what: String,
        /// The wait.
        timeout_ms: u128,
        /// The bytes that did arrive.
        got: Vec<u8>,
    },
    /// The arm answered with something else than the protocol says.
    #[error("unexpected answer to {what}: expected {expected}, got {got:02X?}")]
    Unexpected {
        /// Which command.
        what: String,
        /// What was expected.
        expected: String,
        /// What came.
        got: Vec<u8>,
    },
    /// A configuration block was malformed or the format unsupported.
    #[error("arm parameters: {0}")]
    Params(#[from] ParamsError),
}

impl ProtocolError {
    /// True when retrying (reconnecting) may help: everything but malformed or unsupported
    /// parameters, since line noise can also garble an answer.
    pub fn is_transient(&self) -> bool {
        !matches!(self, ProtocolError::Params(_))
    }
}

/// A port whose line rate can be changed (implemented for serial ports in
/// [`super::transport`]).
pub trait BaudControl {
    /// Sets the host side's baud rate.
    fn set_baud(&mut self, baud: u32) -> io::Result<()>;
    /// Whether the port can run at this rate (the driver asks before `C4`).
    fn supports_baud(&self, baud: u32) -> bool {
        let _ = baud;
        true
    }
}

/// A session with the arm over a byte stream.
#[derive(Debug)]
pub struct Session<P> {
    port: P,
    parser: PacketParser,
    streaming: bool,
    read_buf: Vec<u8>,
    rx_pos: usize,
    rx_len: usize,
    /// Bytes fed to the parser since the session started (data-stream byte offsets;
    /// configuration answers are read directly and not counted).
    fed: u64,
    max_values: Option<MaxValues>,
    limits: PlausibilityLimits,
    filter: Option<PlausibilityFilter>,
    /// Parser anomalies at the last framed packet: a change means a gap in the stream.
    anomalies_seen: u64,
    /// Counters of parsers and filters replaced so far.
    retired: ArmCounters,
}

/// Reads what is there; a timeout is "nothing".
fn read_some<P: Read>(port: &mut P, buf: &mut [u8]) -> io::Result<usize> {
    match port.read(buf) {
        Ok(n) => Ok(n),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::TimedOut | ErrorKind::WouldBlock | ErrorKind::Interrupted
            ) =>
        {
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

impl<P: Read + Write> Session<P> {
    /// Wraps a port. Nothing is sent yet.
    pub fn new(port: P) -> Self {
        Self {
            port,
            parser: PacketParser::new(DataCommand::SIX_WITH_TIMER),
            streaming: false,
            read_buf: vec![0; 512],
            rx_pos: 0,
            rx_len: 0,
            fed: 0,
            max_values: None,
            limits: PlausibilityLimits::streaming(),
            filter: None,
            anomalies_seen: 0,
            retired: ArmCounters::default(),
        }
    }

    /// The port.
    pub fn port_mut(&mut self) -> &mut P {
        &mut self.port
    }

    /// Gives the port back.
    pub fn into_inner(self) -> P {
        self.port
    }

    /// The packet parser (for its statistics).
    pub fn parser(&self) -> &PacketParser {
        &self.parser
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        self.port.write_all(bytes)?;
        self.port.flush()?;
        Ok(())
    }

    /// Reads and discards input until the line has been quiet for `quiet`.
    pub fn drain(&mut self, quiet: Duration, limit: Duration) -> Result<(), ProtocolError> {
        let start = Instant::now();
        let mut last = Instant::now();
        let mut buf = [0u8; 256];
        while last.elapsed() < quiet && start.elapsed() < limit {
            if read_some(&mut self.port, &mut buf)? > 0 {
                last = Instant::now();
            }
        }
        self.parser.reset();
        if let Some(f) = self.filter.as_mut() {
            f.reset();
        }
        self.rx_pos = 0;
        self.rx_len = 0;
        Ok(())
    }

    /// Reads exactly `n` bytes before `deadline`.
    fn read_exact_by(
        &mut self,
        n: usize,
        what: &str,
        timeout: Duration,
    ) -> Result<Vec<u8>, ProtocolError> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::with_capacity(n);
        let mut buf = [0u8; 64];
        while out.len() < n {
            if Instant::now() > deadline {
                return Err(ProtocolError::Timeout {
                    what: what.into(),
                    timeout_ms: timeout.as_millis(),
                    got: out,
                });
            }
            let want = (n - out.len()).min(buf.len());
            let got = read_some(&mut self.port, &mut buf[..want])?;
            out.extend_from_slice(&buf[..got]);
        }
        Ok(out)
    }

    /// Sends a configuration command and checks its echo.
    fn command_with_echo(&mut self, bytes: &[u8], what: &str) -> Result<(), ProtocolError> {
        self.send(bytes)?;
        let echo = self.read_exact_by(1, what, ANSWER_TIMEOUT)?;
        if echo[0] != bytes[0] {
            return Err(ProtocolError::Unexpected {
                what: what.into(),
                expected: format!("echo {:02X}", bytes[0]),
                got: echo,
            });
        }
        Ok(())
    }

    /// Autosync: sends `END` + `IMMC` every ~15 ms until the arm echoes `IMMC` or `budget`
    /// runs out, then drains the input.
    pub fn autosync(&mut self, budget: Duration) -> Result<(), ProtocolError> {
        let start = Instant::now();
        while start.elapsed() < budget {
            if self.autosync_round()? {
                return Ok(());
            }
        }
        Err(ProtocolError::NoAutosync {
            budget_ms: budget.as_millis(),
        })
    }

    /// One `END` + `IMMC` and a short wait for the echo; true when it came (input drained).
    fn autosync_round(&mut self) -> Result<bool, ProtocolError> {
        let mut seen: Vec<u8> = Vec::new();
        let mut buf = [0u8; 64];
        self.streaming = false;
        let mut out = vec![CMD_END];
        out.extend_from_slice(AUTOSYNC);
        self.send(&out)?;
        let round = Instant::now();
        // 9 bytes out and back take ~10 ms at 9600 baud.
        while round.elapsed() < Duration::from_millis(20) {
            let n = read_some(&mut self.port, &mut buf)?;
            seen.extend_from_slice(&buf[..n]);
            if seen.windows(4).any(|w| w == AUTOSYNC) {
                // Earlier attempts may still be echoed: wait for quiet.
                self.drain(Duration::from_millis(40), Duration::from_millis(500))?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `BEGIN` → `MSCR\0`.
    pub fn begin(&mut self) -> Result<(), ProtocolError> {
        self.send(BEGIN)?;
        let got = self.read_exact_by(BEGIN_REPLY.len(), "BEGIN", ANSWER_TIMEOUT)?;
        if got != BEGIN_REPLY {
            return Err(ProtocolError::Unexpected {
                what: "BEGIN".into(),
                expected: "MSCR\\0".into(),
                got,
            });
        }
        Ok(())
    }

    /// One identity string, `C8 + index` (0–6).
    pub fn read_string(&mut self, index: u8) -> Result<String, ProtocolError> {
        let cmd = CMD_FIRST_STRING + index.min(6);
        let what = format!("string {cmd:02X}");
        self.command_with_echo(&[cmd], &what)?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let mut out = Vec::new();
        loop {
            let b =
                self.read_exact_by(1, &what, deadline.saturating_duration_since(Instant::now()))?;
            if b[0] == 0 {
                break;
            }
            out.push(b[0]);
            if out.len() > MAX_STRING_LEN {
                return Err(ProtocolError::Unexpected {
                    what,
                    expected: format!("a NUL within {MAX_STRING_LEN} bytes"),
                    got: out,
                });
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// All seven identity strings.
    pub fn read_identity(&mut self) -> Result<Identity, ProtocolError> {
        let mut id = Identity::default();
        for i in 0..7u8 {
            id.set(usize::from(i), self.read_string(i)?);
        }
        Ok(id)
    }

    /// `C6`.
    pub fn read_max_values(&mut self) -> Result<MaxValues, ProtocolError> {
        self.command_with_echo(&[CMD_MAX_VALUES], "C6")?;
        let payload = self.read_exact_by(MAX_VALUES_LEN, "C6", ANSWER_TIMEOUT)?;
        let values = MaxValues::decode(&payload)?;
        values.validate()?;
        self.max_values = Some(values);
        Ok(values)
    }

    /// `C0`, and `D3` when `with_beta`.
    pub fn read_raw_params(&mut self, with_beta: bool) -> Result<RawDhParams, ProtocolError> {
        self.command_with_echo(&[CMD_PARAMS], "C0")?;
        let len = self.read_exact_by(1, "C0", ANSWER_TIMEOUT)?;
        if len[0] != PARAMS_LEN {
            return Err(ParamsError::BadLength {
                block: "C0",
                expected: usize::from(PARAMS_LEN),
                got: usize::from(len[0]),
            }
            .into());
        }
        let mut payload = len;
        payload.extend(self.read_exact_by(usize::from(PARAMS_LEN), "C0", ANSWER_TIMEOUT)?);
        let mut raw = RawDhParams::decode_c0(&payload)?;
        raw.validate()?;
        if with_beta {
            self.command_with_echo(&[CMD_EXT_PARAMS], "D3")?;
            let len = self.read_exact_by(1, "D3", ANSWER_TIMEOUT)?;
            if len[0] != EXT_PARAMS_LEN {
                return Err(ParamsError::BadLength {
                    block: "D3",
                    expected: usize::from(EXT_PARAMS_LEN),
                    got: usize::from(len[0]),
                }
                .into());
            }
            let mut payload = len;
            payload.extend(self.read_exact_by(
                usize::from(EXT_PARAMS_LEN),
                "D3",
                ANSWER_TIMEOUT,
            )?);
            raw.beta = RawDhParams::decode_d3(&payload)?;
        }
        Ok(raw)
    }

    /// Autosync, `BEGIN`, identity, `C6`, `C0` (+`D3`): everything needed to compute poses.
    pub fn handshake(
        &mut self,
        tip: &TipCorrection,
        autosync_budget: Duration,
    ) -> Result<ArmParams, ProtocolError> {
        self.autosync(autosync_budget)?;
        self.identify(tip)
    }

    /// After a successful autosync: `BEGIN`, identity, `C6`, `C0` (+`D3`).
    pub fn identify(&mut self, tip: &TipCorrection) -> Result<ArmParams, ProtocolError> {
        self.begin()?;
        let identity = self.read_identity()?;
        if identity.param_format != PARAM_FORMAT_DH05 {
            return Err(ParamsError::UnsupportedFormat(identity.param_format).into());
        }
        let max_values = self.read_max_values()?;
        let raw_dh = self.read_raw_params(identity.has_beta())?;
        Ok(ArmParams {
            dh: DhParams::from_raw(&raw_dh).with_tip(tip),
            identity,
            max_values,
            raw_dh,
        })
    }

    /// `C4` + code: asks the arm to switch rates. True if it echoed (and has switched).
    pub fn request_baud(&mut self, code: u8) -> Result<bool, ProtocolError> {
        self.send(&[CMD_SET_BAUD, code])?;
        match self.read_exact_by(1, "C4", Duration::from_millis(150)) {
            Ok(b) if b[0] == CMD_SET_BAUD => Ok(true),
            Ok(_) | Err(ProtocolError::Timeout { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// One data query: sends `cmd`, waits for its packet.
    pub fn query(&mut self, cmd: DataCommand) -> Result<DataPacket, ProtocolError> {
        if self.parser.command() != cmd || self.filter.is_some() {
            self.new_parser(cmd, false);
        }
        self.parser.reset();
        self.send(&[cmd.byte()])?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        while Instant::now() < deadline {
            let timeout = deadline.saturating_duration_since(Instant::now());
            if let Some((p, _)) = self.receive(timeout, true)? {
                return Ok(p);
            }
        }
        Err(ProtocolError::Timeout {
            what: format!("data query {:02X}", cmd.byte()),
            timeout_ms: ANSWER_TIMEOUT.as_millis(),
            got: Vec::new(),
        })
    }

    /// Sends `END`: the arm goes back to autobaud mode.
    pub fn end(&mut self) -> Result<(), ProtocolError> {
        self.send(&[CMD_END])
    }
}

impl<P: Read + Write + BaudControl> Session<P> {
    /// Autosync trying each of `rates` in turn (an arm that was left at a fast rate after a
    /// lost connection only hears that rate until it gets `END`). Returns the rate that worked;
    /// the port is left at it.
    pub fn autosync_rates(
        &mut self,
        rates: &[u32],
        budget: Duration,
    ) -> Result<u32, ProtocolError> {
        let start = Instant::now();
        let rates: Vec<u32> = rates
            .iter()
            .copied()
            .filter(|&r| self.port.supports_baud(r))
            .collect();
        if rates.is_empty() {
            return Err(ProtocolError::NoAutosync { budget_ms: 0 });
        }
        let mut current = None;
        for round in 0.. {
            if start.elapsed() >= budget {
                break;
            }
            let rate = rates[round % rates.len()];
            if current != Some(rate) {
                self.port.set_baud(rate)?;
                current = Some(rate);
            }
            if self.autosync_round()? {
                return Ok(rate);
            }
        }
        Err(ProtocolError::NoAutosync {
            budget_ms: budget.as_millis(),
        })
    }

    /// Switches to the fastest rate ≤ `max_baud` that both the port and the arm accept,
    /// checking the new rate with a `C9` (product id) query. Returns the rate in use.
    pub fn negotiate_baud(
        &mut self,
        current_baud: u32,
        max_baud: u32,
    ) -> Result<u32, ProtocolError> {
        for &(baud, code) in super::codec::BAUD_CODES.iter() {
            if baud > max_baud || baud <= current_baud || !self.port.supports_baud(baud) {
                continue;
            }
            if self.request_baud(code)? {
                self.port.set_baud(baud)?;
                std::thread::sleep(Duration::from_millis(10));
                self.drain(Duration::from_millis(10), Duration::from_millis(100))?;
                let id = self.read_string(1)?;
                if id.is_empty() {
                    return Err(ProtocolError::Unexpected {
                        what: "C9 after baud change".into(),
                        expected: "the product id".into(),
                        got: Vec::new(),
                    });
                }
                return Ok(baud);
            }
        }
        Ok(current_baud)
    }
}
