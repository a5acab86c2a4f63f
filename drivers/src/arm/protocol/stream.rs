//! Streaming (`CF`) and reading data packets: the parser, the plausibility filter and the
//! counters of a [`Session`].

use super::{read_some, ProtocolError, Session};
use crate::arm::codec::{DataCommand, DataPacket, PacketParser, CMD_MOTION};
use crate::arm::plausibility::{ArmCounters, PlausibilityFilter, PlausibilityLimits};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

impl<P: Read + Write> Session<P> {
    /// Sets the limits of the plausibility filter used from the next `start_streaming`.
    pub fn set_limits(&mut self, limits: PlausibilityLimits) {
        self.limits = limits;
    }

    /// Everything counted about the data stream since the session started.
    pub fn counters(&self) -> ArmCounters {
        let mut c = self.retired;
        c.add(&self.current_counters());
        c
    }

    pub(super) fn current_counters(&self) -> ArmCounters {
        let p = self.parser.stats();
        let (passed, rejected) = self
            .filter
            .as_ref()
            .map(|f| (f.passed(), f.rejected()))
            .unwrap_or_default();
        ArmCounters {
            headers: p.headers,
            framed: p.packets,
            passed,
            rejected,
            truncated: p.truncated,
            misframed: p.misframed,
            discarded: p.discarded,
            bytes_skipped: p.bytes_skipped,
        }
    }

    /// Replaces the parser (and filter), keeping their counts.
    pub(super) fn new_parser(&mut self, cmd: DataCommand, filtered: bool) {
        if let Some(f) = self.filter.as_mut() {
            f.reset();
        }
        let c = self.current_counters();
        self.retired.add(&c);
        self.parser = PacketParser::new(cmd);
        self.anomalies_seen = 0;
        self.filter = if filtered {
            self.max_values
                .map(|m| PlausibilityFilter::new(m, self.limits))
        } else {
            None
        };
    }

    pub(super) fn anomalies(&self) -> u64 {
        let s = self.parser.stats();
        s.truncated + s.misframed + s.discarded + s.bytes_skipped
    }

    /// `CF`: streams `cmd` packets at a fixed rate (all thresholds zero), at most one per
    /// `min_delay_ticks` (~1.1 ms ticks; the line rate is the other limit).
    pub fn start_streaming(
        &mut self,
        cmd: DataCommand,
        min_delay_ticks: u16,
    ) -> Result<(), ProtocolError> {
        let mut out = vec![CMD_MOTION];
        out.extend(min_delay_ticks.to_be_bytes());
        out.push(cmd.byte());
        out.push(0); // button mask
        out.extend([0u8; 8]); // analog thresholds
        for _ in 0..cmd.encoder_count() {
            out.extend([0u8; 2]);
        }
        self.new_parser(cmd, true);
        if self.filter.is_none() {
            log::warn!("arm: streaming without the arm's ranges (no C6 read): packets unfiltered");
        }
        self.command_with_echo(&out, "CF")?;
        self.streaming = true;
        Ok(())
    }

    /// Stops streaming: sends `0x00` and drains the input.
    pub fn stop_streaming(&mut self) -> Result<(), ProtocolError> {
        self.send(&[0x00])?;
        self.streaming = false;
        self.drain(Duration::from_millis(30), Duration::from_millis(500))
    }

    /// Forgets the stream after a failure (silence, lost port) without talking to the arm:
    /// packets in flight are counted as unconfirmed.
    pub fn abandon_stream(&mut self) {
        self.streaming = false;
        self.parser.reset();
        if let Some(f) = self.filter.as_mut() {
            f.reset();
        }
    }

    /// Whether `CF` streaming is on.
    pub fn is_streaming(&self) -> bool {
        self.streaming
    }

    /// Reads what arrives until a plausible packet is passed on or `timeout` passes
    /// (`Ok(None)`). Packets are held until two successors confirm them (see
    /// `plausibility`); refused ones are counted in [`Self::counters`].
    pub fn next_packet(&mut self, timeout: Duration) -> Result<Option<DataPacket>, ProtocolError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Some((p, offset)) = self.receive(left, false)? else {
                return Ok(None);
            };
            let anomalies = self.anomalies();
            let Some(filter) = self.filter.as_mut() else {
                return Ok(Some(p));
            };
            if anomalies != self.anomalies_seen {
                // Bytes were lost or added since the last packet: its neighbours are unknown.
                filter.reset();
                self.anomalies_seen = anomalies;
            }
            if let Some(located) = filter.push(p, offset) {
                return Ok(Some(located.packet));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    /// Reads what arrives until a packet is framed or `timeout` passes, without the
    /// plausibility filter (what the driver did before it had one; for diagnostics).
    pub fn next_raw_packet(
        &mut self,
        timeout: Duration,
    ) -> Result<Option<DataPacket>, ProtocolError> {
        Ok(self.receive(timeout, false)?.map(|(p, _)| p))
    }

    /// Reads until the parser frames a packet or `timeout` passes; returns it with the byte
    /// offset of its header. With `eager`, a complete packet at the end of what has arrived is
    /// accepted at once (a query's answer is the only packet to come).
    pub(super) fn receive(
        &mut self,
        timeout: Duration,
        eager: bool,
    ) -> Result<Option<(DataPacket, u64)>, ProtocolError> {
        let deadline = Instant::now() + timeout;
        let len = self.parser.command().packet_len() as u64;
        let mut read_once = false;
        loop {
            // Bytes left over from the previous read come first, so no packet is lost.
            while self.rx_pos < self.rx_len {
                let b = self.read_buf[self.rx_pos];
                self.rx_pos += 1;
                let at = self.fed;
                self.fed += 1;
                if let Some(p) = self.parser.push_byte(b) {
                    // Accepted on the next header, the byte at `at`.
                    return Ok(Some((p, at.saturating_sub(len))));
                }
            }
            if eager {
                if let Some(p) = self.parser.flush_idle() {
                    return Ok(Some((p, self.fed.saturating_sub(len))));
                }
            }
            if read_once && Instant::now() >= deadline {
                return Ok(None);
            }
            read_once = true;
            let n = read_some(&mut self.port, &mut self.read_buf)?;
            self.rx_pos = 0;
            self.rx_len = n;
            if n == 0 {
                if let Some(p) = self.parser.flush_idle() {
                    return Ok(Some((p, self.fed.saturating_sub(len))));
                }
            }
        }
    }
}
