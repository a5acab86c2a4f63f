//! Plausibility filters for data packets: what stands in for the checksum the HCI protocol
//! does not have.
//!
//! The MicroScribe HCI data packet carries no checksum or CRC (see the protocol notes): the
//! only structural redundancy is bit 7, set on the header and clear on every data byte. A bit
//! flip or a substituted byte that keeps bit 7 clear, or noise that happens to start with the
//! header byte, therefore yields a packet of the right length that the framing cannot tell
//! from a real one. The filters here reject such packets by physics instead:
//!
//! 1. **Ranges** (each packet on its own): every encoder count within the range the arm
//!    announced in `C6` (a count with bits above `maxᵢ`, or a non-zero count on an absent
//!    encoder, is refused instead of being masked), buttons within the announced button mask,
//!    the timer within its range.
//! 2. **A window of five consecutive packets**: a packet is passed on only when each of the
//!    three triples around it (centred on it, its predecessor and its successor) passes the
//!    checks below. That costs two packet periods of latency (2.8 ms at 115200 baud) and the
//!    two packets on either side of any refusal, and means a fake trajectory would need five
//!    consecutive corrupted packets that agree with each other. Per triple:
//!    - the device timer advances by 1 … `max_gap_ticks` ticks on both sides and, when packets
//!      come at a fixed rate (`CF` streaming), evenly (± `timer_jitter_ticks`);
//!    - no joint moves faster than `max_joint_speed_rad_s` (+ one count) between two packets;
//!    - no joint's count departs from the midpoint of its neighbours by more than encoder
//!      quantisation (one count of second difference) plus what `max_joint_accel_rad_s2`
//!      allows over the packet period: a corruption of one packet is a spike of the second
//!      difference twice its size, so any corruption of two counts or more is refused;
//!    - the buttons equal those of one of the neighbours, and change at most once within the
//!      five packets (a real press or release lasts tens of packets).
//!
//! Any gap in the stream (bytes skipped, a truncated or misframed packet, a reconnection)
//! resets the window: packets are only judged against their true neighbours. So does every
//! refusal: of three packets that disagree, which one is wrong is unknown, and two corrupted
//! packets in a row may agree with each other, so the next packet is not judged against them.
//!
//! What cannot be detected without a checksum: a change of one count on one joint exactly
//! when that joint's count is stepping anyway (`x, x+1, x+1` for the true `x, x, x+1`). Such a
//! sample is one encoder count (the device's resolution, ≤ 0.2 mm at the tip) from the truth.
//! Likewise a flipped button bit in the packet just before or after a real press or release
//! (`x, y, y` for the true `x, x, y`): the edge then comes one packet (under 1.5 ms when
//! streaming) early or late.
//! Nor can a run of five or more consecutive packets corrupted so as to agree with each other
//! (a stuck data line could do it; independent noise practically never): its interior looks
//! like a real motion and only its edges are refused.
//! At slower packet rates (polling, 9600 baud) the acceleration allowance grows with the
//! square of the period and so does the largest corruption that can pass.
//!
//! Every packet given to [`PlausibilityFilter::push`] gets exactly one fate: passed on, or
//! counted in one [`RejectCounts`] field.

use super::codec::DataPacket;
use super::params::MaxValues;
use std::collections::VecDeque;
use std::f64::consts::TAU;

/// Physical limits of the arm and its stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlausibilityLimits {
    /// Fastest a joint can turn by hand (rad/s). A hand-guided MicroScribe stays far below.
    pub max_joint_speed_rad_s: f64,
    /// Largest joint angular acceleration (rad/s²): 100 rad/s² is 3 g at 0.3 m from an axis.
    pub max_joint_accel_rad_s2: f64,
    /// Longest timer step between two consecutive packets (ticks of ~1.111 ms).
    pub max_gap_ticks: u16,
    /// With `Some(j)`, packets come at a fixed rate (streaming): the two timer steps around a
    /// packet may differ by at most `j` ticks. `None` for polling (irregular spacing).
    pub timer_jitter_ticks: Option<u16>,
}

impl PlausibilityLimits {
    /// Limits for `CF` streaming at a fixed rate.
    pub fn streaming() -> Self {
        Self {
            max_joint_speed_rad_s: 20.0,
            max_joint_accel_rad_s2: 100.0,
            max_gap_ticks: 90,
            timer_jitter_ticks: Some(1),
        }
    }

    /// Limits for polled queries (irregular spacing, up to ~1 s apart).
    pub fn polling() -> Self {
        Self {
            max_gap_ticks: 900,
            timer_jitter_ticks: None,
            ..Self::streaming()
        }
    }
}

impl Default for PlausibilityLimits {
    fn default() -> Self {
        Self::streaming()
    }
}

/// Why a packet was not passed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// A count, the buttons or the timer outside the announced ranges.
    OutOfRange,
    /// The timer did not advance plausibly (backwards, a gap, uneven steps while streaming).
    Timer,
    /// A joint moved faster than `max_joint_speed_rad_s`.
    TooFast,
    /// A joint's count is not consistent with its neighbours (a spike).
    Inconsistent,
    /// The buttons differ from both neighbours (a one-packet glitch).
    ButtonGlitch,
    /// The packet could not be judged: its neighbour was lost (a gap, the end of the stream).
    Unconfirmed,
}

/// Packets refused by the plausibility filter, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RejectCounts {
    /// Counts, buttons or timer outside the announced ranges.
    pub out_of_range: u64,
    /// Implausible timer steps.
    pub timer: u64,
    /// A joint faster than physically possible.
    pub too_fast: u64,
    /// A count inconsistent with its neighbours.
    pub inconsistent: u64,
    /// One-packet button glitches.
    pub button_glitch: u64,
    /// Packets whose neighbour was lost, so they could not be confirmed.
    pub unconfirmed: u64,
}

impl RejectCounts {
    /// All packets refused.
    pub fn total(&self) -> u64 {
        self.out_of_range
            + self.timer
            + self.too_fast
            + self.inconsistent
            + self.button_glitch
            + self.unconfirmed
    }

    fn count(&mut self, reason: RejectReason) {
        let c = match reason {
            RejectReason::OutOfRange => &mut self.out_of_range,
            RejectReason::Timer => &mut self.timer,
            RejectReason::TooFast => &mut self.too_fast,
            RejectReason::Inconsistent => &mut self.inconsistent,
            RejectReason::ButtonGlitch => &mut self.button_glitch,
            RejectReason::Unconfirmed => &mut self.unconfirmed,
        };
        *c += 1;
    }

    /// Adds another set of counts (across reconnections).
    pub fn add(&mut self, other: &RejectCounts) {
        self.out_of_range += other.out_of_range;
        self.timer += other.timer;
        self.too_fast += other.too_fast;
        self.inconsistent += other.inconsistent;
        self.button_glitch += other.button_glitch;
        self.unconfirmed += other.unconfirmed;
    }
}

impl std::fmt::Display for RejectCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} rejected (out of range {}, timer {}, too fast {}, inconsistent {}, button glitch {}, unconfirmed {})",
            self.total(),
            self.out_of_range,
            self.timer,
            self.too_fast,
            self.inconsistent,
            self.button_glitch,
            self.unconfirmed
        )
    }
}

/// Everything the driver counts about the data stream of one session (or, summed, of a
/// worker across reconnections). Every header seen ends as exactly one of: passed on,
/// rejected (by reason), truncated, misframed, or still in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArmCounters {
    /// Header bytes seen (real packets and header-like noise).
    pub headers: u64,
    /// Complete packets the framing accepted (before the plausibility filter).
    pub framed: u64,
    /// Packets passed on as samples.
    pub passed: u64,
    /// Packets the plausibility filter refused.
    pub rejected: RejectCounts,
    /// Packets cut short by the next header (dropped bytes, truncation).
    pub truncated: u64,
    /// Complete packets discarded because stray bytes followed them.
    pub misframed: u64,
    /// Partial packets forgotten when the input was flushed (stopping, reconnecting).
    pub discarded: u64,
    /// Bytes skipped while looking for a header.
    pub bytes_skipped: u64,
}

impl ArmCounters {
    /// Adds another session's counts.
    pub fn add(&mut self, o: &ArmCounters) {
        self.headers += o.headers;
        self.framed += o.framed;
        self.passed += o.passed;
        self.rejected.add(&o.rejected);
        self.truncated += o.truncated;
        self.misframed += o.misframed;
        self.discarded += o.discarded;
        self.bytes_skipped += o.bytes_skipped;
    }
}

impl std::fmt::Display for ArmCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} headers, {} packets framed, {} passed, {}; {} truncated, {} misframed, {} discarded, {} bytes skipped",
            self.headers,
            self.framed,
            self.passed,
            self.rejected,
            self.truncated,
            self.misframed,
            self.discarded,
            self.bytes_skipped
        )
    }
}

/// A packet with where it started in the input stream (byte offset of its header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Located {
    /// The packet.
    pub packet: DataPacket,
    /// Byte offset of its header since the session's stream started.
    pub offset: u64,
}

/// Packets judged together: a packet passes once two predecessors and two successors agree.
const WINDOW: usize = 5;

#[derive(Debug, Clone, Copy)]
struct Candidate {
    at: Located,
    judged: bool,
}

/// The filter: feed it every decoded packet in stream order; it passes on the plausible ones,
/// two packets later, and counts the rest.
#[derive(Debug, Clone)]
pub struct PlausibilityFilter {
    max: MaxValues,
    limits: PlausibilityLimits,
    window: VecDeque<Candidate>,
    rejected: RejectCounts,
    passed: u64,
    last_rejection: Option<(RejectReason, u64)>,
}

/// Radians per count of an encoder with maximum `max` (> 0).
fn rad_per_count(max: u16) -> f64 {
    TAU / (f64::from(max) + 1.0)
}

/// `b - a` on a circle of `modulus` values, in (−modulus/2, modulus/2].
fn wrapped_diff(a: u16, b: u16, modulus: u32) -> i64 {
    let m = i64::from(modulus);
    let mut d = (i64::from(b) - i64::from(a)).rem_euclid(m);
    if d > m / 2 {
        d -= m;
    }
    d
}

impl PlausibilityFilter {
    /// A filter for an arm with these announced ranges.
    pub fn new(max: MaxValues, limits: PlausibilityLimits) -> Self {
        Self {
            max,
            limits,
            window: VecDeque::with_capacity(3),
            rejected: RejectCounts::default(),
            passed: 0,
            last_rejection: None,
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> &PlausibilityLimits {
        &self.limits
    }

    /// Packets refused so far.
    pub fn rejected(&self) -> RejectCounts {
        self.rejected
    }

    /// Packets passed on so far.
    pub fn passed(&self) -> u64 {
        self.passed
    }

    /// Packets held, waiting for their successors (0–4).
    pub fn in_flight(&self) -> usize {
        self.window.iter().filter(|c| !c.judged).count()
    }

    /// The last refusal: why, and the byte offset of the refused packet's header.
    pub fn last_rejection(&self) -> Option<(RejectReason, u64)> {
        self.last_rejection
    }

    fn reject(&mut self, reason: RejectReason, offset: u64) {
        self.rejected.count(reason);
        self.last_rejection = Some((reason, offset));
        log::debug!("arm: packet at byte {offset} rejected: {reason:?}");
    }

    /// The stream had a gap (bytes lost, a reconnection, the end): packets waiting for a
    /// successor can no longer be confirmed and are counted as such.
    pub fn reset(&mut self) {
        while let Some(c) = self.window.pop_front() {
            if !c.judged {
                self.reject(RejectReason::Unconfirmed, c.at.offset);
            }
        }
    }

    /// Feeds the next packet of the stream; returns the one two packets back if it is plausible.
    pub fn push(&mut self, packet: DataPacket, offset: u64) -> Option<Located> {
        let at = Located { packet, offset };
        if !self.in_range(&packet) {
            self.reject(RejectReason::OutOfRange, offset);
            self.reset();
            return None;
        }
        self.window.push_back(Candidate { at, judged: false });
        let n = self.window.len();
        if n >= 3 {
            // The triple centred on the packet before the newest.
            let (a, b, c) = (
                self.window[n - 3].at,
                self.window[n - 2].at,
                self.window[n - 1].at,
            );
            if let Err(reason) = self.judge(&a.packet, &b.packet, &c.packet) {
                // Which of the three is wrong is unknown, and two corrupted packets in a row
                // can agree with each other: nothing in the window is trusted any more.
                self.window[n - 2].judged = true;
                self.reject(reason, b.offset);
                self.reset();
                return None;
            }
        }
        if self.window.len() < WINDOW {
            return None;
        }
        // Every triple in the window is consistent: the middle packet is the centre of one
        // and an end of two. A real button press or release lasts tens of packets: two
        // changes within the window are a glitch.
        let mid = WINDOW / 2;
        let changes = (1..WINDOW)
            .filter(|&i| self.window[i].at.packet.buttons != self.window[i - 1].at.packet.buttons)
            .count();
        if changes > 1 {
            self.window[mid].judged = true;
            let offset = self.window[mid].at.offset;
            self.reject(RejectReason::ButtonGlitch, offset);
            self.reset();
            return None;
        }
        self.window[mid].judged = true;
        self.passed += 1;
        let out = self.window[mid].at;
        if let Some(first) = self.window.pop_front() {
            if !first.judged {
                self.reject(RejectReason::Unconfirmed, first.at.offset);
            }
        }
        Some(out)
    }

    /// Checks one packet against the announced ranges.
    pub fn in_range(&self, p: &DataPacket) -> bool {
        if p.buttons & !self.max.buttons_mask != 0 {
            return false;
        }
        if p.timer_ticks.is_some_and(|t| t > self.max.timer_max) {
            return false;
        }
        let counts = p.encoder_counts();
        for (i, &c) in counts.iter().enumerate() {
            let max = self.max.encoder_max.get(i).copied().unwrap_or(0);
            if c & !max != 0 {
                return false;
            }
        }
        // Encoders the arm announces must be in the packet.
        counts.len() >= self.max.joint_count()
    }

    fn judge(&self, a: &DataPacket, b: &DataPacket, c: &DataPacket) -> Result<(), RejectReason> {
        let tick = super::codec::TIMER_TICK_SECS;
        let (dt1, dt2) = match (a.timer_ticks, b.timer_ticks, c.timer_ticks) {
            (Some(ta), Some(tb), Some(tc)) => {
                let d1 = super::codec::timer_ticks_between(self.max.timer_max, ta, tb);
                let d2 = super::codec::timer_ticks_between(self.max.timer_max, tb, tc);
                let gap = u32::from(self.limits.max_gap_ticks);
                if d1 == 0 || d2 == 0 || d1 > gap || d2 > gap {
                    return Err(RejectReason::Timer);
                }
                if let Some(j) = self.limits.timer_jitter_ticks {
                    if d1.abs_diff(d2) > u32::from(j) {
                        return Err(RejectReason::Timer);
                    }
                }
                (f64::from(d1), f64::from(d2))
            }
            // Without a timer, assume the longest gap: only gross errors are caught.
            _ => {
                let g = f64::from(self.limits.max_gap_ticks);
                (g, g)
            }
        };
        if b.buttons != a.buttons && b.buttons != c.buttons {
            return Err(RejectReason::ButtonGlitch);
        }
        // A timer value is the floor of the time: each step may be one tick longer.
        let (s1, s2) = ((dt1 + 1.0) * tick, (dt2 + 1.0) * tick);
        let mean_s = 0.5 * (dt1 + dt2) * tick;
        for (i, &max) in self.max.encoder_max.iter().enumerate() {
            if max == 0 || i >= b.encoder_counts().len() {
                continue;
            }
            let q = rad_per_count(max);
            let modulus = u32::from(max) + 1;
            let d1 = wrapped_diff(a.counts[i], b.counts[i], modulus);
            let d2 = wrapped_diff(b.counts[i], c.counts[i], modulus);
            let v = self.limits.max_joint_speed_rad_s;
            if (d1.unsigned_abs() as f64) > 1.0 + v * s1 / q
                || (d2.unsigned_abs() as f64) > 1.0 + v * s2 / q
            {
                return Err(RejectReason::TooFast);
            }
            // Quantisation gives a second difference of at most one count; acceleration adds
            // α·dt²; uneven spacing (polling) adds velocity × the spacing difference beyond
            // the timer's own one-tick quantisation.
            let accel = self.limits.max_joint_accel_rad_s2 * mean_s * mean_s / q;
            let uneven = ((dt2 - dt1).abs() - 1.0).max(0.0);
            let skew = (d1 + d2).unsigned_abs() as f64 * uneven / (dt1 + dt2);
            let tolerance = 1 + (accel + skew).floor() as u64;
            if (d2 - d1).unsigned_abs() > tolerance {
                return Err(RejectReason::Inconsistent);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::codec::DataCommand;

    fn packet(t: u16, counts: [u16; 5], buttons: u8) -> DataPacket {
        DataPacket {
            command: DataCommand::SIX_WITH_TIMER,
            buttons,
            timer_ticks: Some(t),
            counts: [counts[0], counts[1], counts[2], counts[3], counts[4], 0, 0],
        }
    }

    fn run(packets: &[DataPacket]) -> (Vec<usize>, RejectCounts) {
        let mut f = PlausibilityFilter::new(MaxValues::microscribe_3dx(), Default::default());
        let mut passed = Vec::new();
        for (i, p) in packets.iter().enumerate() {
            if let Some(l) = f.push(*p, i as u64) {
                passed.push(l.offset as usize);
            }
        }
        f.reset();
        assert_eq!(
            passed.len() as u64 + f.rejected().total(),
            packets.len() as u64,
            "every packet has one fate"
        );
        (passed, f.rejected())
    }

    #[test]
    fn a_steady_stream_passes_all_but_its_ends() {
        let ps: Vec<_> = (0..50u16)
            .map(|k| packet(k * 5 / 4, [100 + k / 3, 200, 300, 400, 500], 0))
            .collect();
        let (passed, rej) = run(&ps);
        assert_eq!(passed, (2..48).collect::<Vec<_>>());
        assert_eq!(rej.unconfirmed, 4, "{rej}");
    }

    #[test]
    fn a_one_count_spike_on_a_still_joint_and_a_range_violation_are_refused() {
        let mut ps: Vec<_> = (0..20u16)
            .map(|k| packet(k, [100, 200, 300, 400, 500], 0))
            .collect();
        ps[5].counts[4] = 501;
        ps[12].counts[2] = 0x2000; // joint 2 counts to 0x1FFF
        let (passed, rej) = run(&ps);
        assert_eq!(rej.out_of_range, 1, "{rej}");
        assert_eq!(rej.inconsistent, 1, "the spike: {rej}");
        // The spike is refused when its successor arrives: with it go its predecessor (not
        // yet confirmed), that successor, and the two after it that restart the window;
        // around the range violation, the two before and after; and the two at each end.
        let lost: Vec<usize> = (0..20).filter(|i| !passed.contains(i)).collect();
        assert_eq!(lost, vec![0, 1, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 18, 19]);
    }

    #[test]
    fn wrapping_counts_and_timer_are_continuous() {
        let ps: Vec<_> = (0..10u16)
            .map(|k| {
                packet(
                    (0x3FFC + k) & 0x3FFF,
                    [(0x3FFB + k) & 0x3FFF, 0, 0, 0, 0],
                    0,
                )
            })
            .collect();
        let (passed, _) = run(&ps);
        assert_eq!(passed.len(), 6);
    }
}
