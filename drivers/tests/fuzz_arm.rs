//! Fuzz harness for the arm's packet decoder, plausibility filter and configuration blocks
//! (proptest). A short run is part of `make test`; `make fuzz-arm` runs it long:
//! `AR_FUZZ_ARM_CASES=N` sets the cases per property (default 256).
//!
//! Properties:
//! - any bytes: no panic; every packet passed on appears verbatim in the input and is within
//!   the announced ranges; the counters account for every header;
//! - a clean stream of smooth motion passes whole (but the two packets at each end, which
//!   lack neighbours);
//! - the same stream with same-length corruption (bit flips, substituted bytes, out-of-range
//!   bits): every packet passed on is within one count per joint of the packet that was sent
//!   at that offset, with its buttons;
//! - `C6` and `C0` payloads of any bytes and length: no panic; a refusal names its block.

use ar_drivers::arm::codec::{DataCommand, DataPacket, PacketParser};
use ar_drivers::arm::plausibility::{PlausibilityFilter, PlausibilityLimits};
use ar_drivers::arm::{MaxValues, RawDhParams};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("AR_FUZZ_ARM_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

const CMD: DataCommand = DataCommand::SIX_WITH_TIMER;

/// Runs bytes through the parser and the filter as the session does; returns the packets
/// passed on with their offsets, the parser and the filter.
fn decode(bytes: &[u8]) -> (Vec<(DataPacket, u64)>, PacketParser, PlausibilityFilter) {
    let mut parser = PacketParser::new(CMD);
    let mut filter = PlausibilityFilter::new(
        MaxValues::microscribe_3dx(),
        PlausibilityLimits::streaming(),
    );
    let len = CMD.packet_len() as u64;
    let mut anomalies = 0;
    let mut out = Vec::new();
    let mut feed = |p: DataPacket,
                    at: u64,
                    parser: &PacketParser,
                    filter: &mut PlausibilityFilter,
                    out: &mut Vec<_>| {
        let s = parser.stats();
        let a = s.truncated + s.misframed + s.discarded + s.bytes_skipped;
        if a != anomalies {
            filter.reset();
            anomalies = a;
        }
        if let Some(l) = filter.push(p, at) {
            out.push((l.packet, l.offset));
        }
    };
    for (i, &b) in bytes.iter().enumerate() {
        if let Some(p) = parser.push_byte(b) {
            feed(
                p,
                (i as u64).saturating_sub(len),
                &parser,
                &mut filter,
                &mut out,
            );
        }
    }
    if let Some(p) = parser.flush_idle() {
        let at = (bytes.len() as u64).saturating_sub(len);
        feed(p, at, &parser, &mut filter, &mut out);
    }
    filter.reset();
    (out, parser, filter)
}

/// A clean stream: constant joint velocities (fractional counts per packet), timer steps of
/// 1 or 2 ticks as at 115200 baud, buttons held.
fn smooth_stream() -> impl Strategy<Value = Vec<DataPacket>> {
    (
        proptest::array::uniform5(0.0f64..1.0),
        proptest::array::uniform5(-3.0f64..3.0),
        0u16..0x4000,
        0u8..4,
        8usize..40,
    )
        .prop_map(|(start, vel, t0, buttons, n)| {
            let max = MaxValues::microscribe_3dx().encoder_max;
            (0..n)
                .map(|k| {
                    let mut counts = [0u16; 7];
                    for j in 0..5 {
                        let m = f64::from(max[j]) + 1.0;
                        let x = (start[j] * m + vel[j] * k as f64).rem_euclid(m);
                        counts[j] = (x.round() as u32 % (u32::from(max[j]) + 1)) as u16;
                    }
                    DataPacket {
                        command: CMD,
                        buttons,
                        timer_ticks: Some(((u32::from(t0) + k as u32 * 5 / 4) % 0x4000) as u16),
                        counts,
                    }
                })
                .collect()
        })
}

fn encode(packets: &[DataPacket]) -> Vec<u8> {
    packets.iter().flat_map(|p| p.encode()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 512, ..ProptestConfig::default() })]

    #[test]
    fn any_bytes_no_panic_verbatim_in_range_and_accounted(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        headers in proptest::collection::vec(0usize..600, 0..20),
    ) {
        // Plant headers so that random bytes form packets often.
        let mut bytes = bytes;
        for h in headers {
            if h < bytes.len() {
                bytes[h] = CMD.header();
            }
        }
        let (passed, parser, filter) = decode(&bytes);
        let check = PlausibilityFilter::new(MaxValues::microscribe_3dx(), PlausibilityLimits::streaming());
        for (p, at) in &passed {
            let enc = p.encode();
            let at = *at as usize;
            prop_assert_eq!(&bytes[at..at + enc.len()], enc.as_slice(), "at byte {}", at);
            prop_assert!(check.in_range(p));
        }
        let s = parser.stats();
        let partial = u64::from(parser.partial_len() > 0 || parser.has_pending());
        prop_assert_eq!(s.headers, s.packets + s.truncated + s.misframed + s.discarded + partial);
        prop_assert_eq!(s.packets, filter.passed() + filter.rejected().total());
    }

    #[test]
    fn a_clean_smooth_stream_passes_but_its_ends(packets in smooth_stream()) {
        let (passed, _, filter) = decode(&encode(&packets));
        prop_assert_eq!(passed.len(), packets.len() - 4, "{}", filter.rejected());
        for (p, at) in &passed {
            prop_assert_eq!(*p, packets[*at as usize / CMD.packet_len()]);
        }
    }

    #[test]
    fn same_length_corruption_passes_at_most_one_count_per_joint(
        packets in smooth_stream(),
        flips in proptest::collection::vec((any::<usize>(), 0u8..7, any::<bool>(), 0u8..0x80), 1..12),
    ) {
        let clean = encode(&packets);
        let mut bytes = clean.clone();
        let n = CMD.packet_len();
        for (at, bit, substitute, value) in flips {
            let i = at % bytes.len();
            if i.is_multiple_of(n) {
                continue; // headers keep bit 7: that is framing, covered above
            }
            if substitute { bytes[i] = value } else { bytes[i] ^= 1 << bit }
        }
        let (passed, _, _) = decode(&bytes);
        let max = MaxValues::microscribe_3dx().encoder_max;
        for (p, at) in &passed {
            let truth = packets[*at as usize / n];
            prop_assert_eq!(p.buttons, truth.buttons);
            for (j, &mx) in max.iter().enumerate() {
                let m = i32::from(mx) + 1;
                let d = (i32::from(p.counts[j]) - i32::from(truth.counts[j])).rem_euclid(m.max(1));
                let d = d.min(m - d);
                prop_assert!(d <= 1, "joint {} off by {} counts at byte {}: {:?} vs {:?}", j, d, at, p, truth);
            }
        }
    }

    #[test]
    fn configuration_blocks_of_any_bytes_are_decoded_or_refused_by_name(
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        match MaxValues::decode(&bytes).and_then(|m| m.validate().map(|()| m)) {
            Ok(m) => prop_assert!(m.joint_count() >= 5),
            Err(e) => prop_assert!(e.to_string().contains("C6"), "{}", e),
        }
        let mut c0 = bytes.clone();
        if let Some(first) = c0.first_mut() {
            *first = 36;
        }
        match RawDhParams::decode_c0(&c0).and_then(|r| r.validate().map(|()| r)) {
            Ok(r) => prop_assert!(r.a.iter().chain(&r.d).all(|v| v.unsigned_abs() <= 32_000)),
            Err(e) => prop_assert!(e.to_string().contains("C0"), "{}", e),
        }
    }
}
