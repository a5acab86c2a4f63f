//! What the arm tells about itself: identity strings, maximum values (`C6`) and kinematic
//! parameters (`C0`, `D3`), in wire form and decoded to SI units. Per-tip corrections are in
//! [`super::tip`] (re-exported here).

pub use super::tip::TipCorrection;

use super::codec::{EXT_PARAMS_LEN, MAX_VALUES_LEN, PARAMS_LEN, PARAM_FORMAT_DH05};
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// Metres per thousandth of an inch (the unit of `A` and `D` in `C0`).
pub const METRES_PER_MIL: f64 = 0.0254e-3;

/// Radians per unit of an HCI angle (32768 = 180°).
pub const RAD_PER_ANGLE_UNIT: f64 = PI / 32768.0;

/// Errors decoding configuration blocks or reading a tip-correction file.
#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    /// A block had the wrong length.
    #[error("{block}: expected {expected} bytes, got {got}")]
    BadLength {
        /// Which block (`C0`, `C6`, `D3`).
        block: &'static str,
        /// Expected length.
        expected: usize,
        /// Received length.
        got: usize,
    },
    /// The parameter format string is not one this driver understands.
    #[error(
        "parameter format {0:?} is not {PARAM_FORMAT_DH05:?}; refusing to guess the kinematics"
    )]
    UnsupportedFormat(String),
    /// The arm announced encoder ranges or parameters no real arm has (zero encoders, a range
    /// that is not a power of two, a link longer than a metre): the kinematics would be
    /// garbage, so the handshake refuses them.
    #[error("{block}: {what} (refusing an arm with absurd parameters)")]
    Implausible {
        /// Which block (`C6`, `C0`).
        block: &'static str,
        /// What is wrong, naming the field and byte offset in the block.
        what: String,
    },
    /// A tip-correction file could not be read.
    #[error("reading tip corrections {path}: {source}")]
    TipFileIo {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A tip-correction file is not valid TOML for [`TipCorrection`].
    #[error("tip corrections {path}: {message}")]
    TipFileSyntax {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        message: String,
    },
}

/// The identity strings `C8`–`CE`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// `C8`, e.g. `MicroScribe3D`.
    pub product_name: String,
    /// `C9`, e.g. `MSCR`.
    pub product_id: String,
    /// `CA`, e.g. `DX`.
    pub model: String,
    /// `CB`, e.g. `40937`.
    pub serial: String,
    /// `CC`, e.g. `Standard+Beta`.
    pub comment: String,
    /// `CD`, e.g. `Format DH0.5`.
    pub param_format: String,
    /// `CE`, e.g. `HCI 2.0`.
    pub firmware: String,
}

impl Identity {
    /// The identity of the real MicroScribe 3DX the protocol notes were taken from.
    pub fn microscribe_3dx() -> Self {
        Self {
            product_name: "MicroScribe3D".into(),
            product_id: "MSCR".into(),
            model: "DX".into(),
            serial: "40937".into(),
            comment: "Standard+Beta".into(),
            param_format: PARAM_FORMAT_DH05.into(),
            firmware: "HCI 2.0".into(),
        }
    }

    /// The strings in command order `C8`..`CE`.
    pub fn as_array(&self) -> [&str; 7] {
        [
            &self.product_name,
            &self.product_id,
            &self.model,
            &self.serial,
            &self.comment,
            &self.param_format,
            &self.firmware,
        ]
    }

    /// Sets the string answered to command `C8 + index`.
    pub fn set(&mut self, index: usize, value: String) {
        match index {
            0 => self.product_name = value,
            1 => self.product_id = value,
            2 => self.model = value,
            3 => self.serial = value,
            4 => self.comment = value,
            5 => self.param_format = value,
            _ => self.firmware = value,
        }
    }

    /// True when the comment announces a `D3` BETA block.
    pub fn has_beta(&self) -> bool {
        self.comment.contains("Beta")
    }
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) model {} serial {}, {}, {}, firmware {}",
            self.product_name,
            self.product_id,
            self.model,
            self.serial,
            self.comment,
            self.param_format,
            self.firmware
        )
    }
}

/// The `C6` block: what the arm reports and the encoder ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaxValues {
    /// Mask of supported buttons.
    pub buttons_mask: u8,
    /// Largest timer value.
    pub timer_max: u16,
    /// Analog maxima (unused on the MicroScribe).
    pub analog_max: [u8; 8],
    /// Extra-bits byte.
    pub extra_bits: u8,
    /// Per angle 0–5: counts per revolution − 1 (0 = no such encoder).
    pub encoder_max: [u16; 6],
}

impl MaxValues {
    /// The values of the real 3DX.
    pub fn microscribe_3dx() -> Self {
        Self {
            buttons_mask: 0x03,
            timer_max: 0x3FFF,
            analog_max: [0; 8],
            extra_bits: 0,
            encoder_max: [0x3FFF, 0x3FFF, 0x1FFF, 0x0FFF, 0x0FFF, 0],
        }
    }

    /// Decodes the 24-byte payload.
    pub fn decode(payload: &[u8]) -> Result<Self, ParamsError> {
        if payload.len() != MAX_VALUES_LEN {
            return Err(ParamsError::BadLength {
                block: "C6",
                expected: MAX_VALUES_LEN,
                got: payload.len(),
            });
        }
        let be = |i: usize| u16::from_be_bytes([payload[i], payload[i + 1]]);
        let mut analog_max = [0u8; 8];
        analog_max.copy_from_slice(&payload[3..11]);
        let mut encoder_max = [0u16; 6];
        for (k, m) in encoder_max.iter_mut().enumerate() {
            *m = be(12 + 2 * k);
        }
        Ok(Self {
            buttons_mask: payload[0],
            timer_max: be(1),
            analog_max,
            extra_bits: payload[11],
            encoder_max,
        })
    }

    /// Encodes the 24-byte payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(MAX_VALUES_LEN);
        out.push(self.buttons_mask);
        out.extend(self.timer_max.to_be_bytes());
        out.extend(self.analog_max);
        out.push(self.extra_bits);
        for m in self.encoder_max {
            out.extend(m.to_be_bytes());
        }
        out
    }

    /// Number of encoders the arm has (those with a non-zero maximum).
    pub fn joint_count(&self) -> usize {
        self.encoder_max.iter().filter(|&&m| m != 0).count()
    }

    /// Checks that these are ranges a real HCI arm announces: joints 0–4 present, every
    /// present encoder with 2¹⁰…2¹⁴ counts per revolution (a power of two), angle 5 absent or
    /// likewise, a non-zero timer range. Errors name the field and its offset in the payload.
    pub fn validate(&self) -> Result<(), ParamsError> {
        let bad = |what: String| ParamsError::Implausible { block: "C6", what };
        if self.timer_max == 0 {
            return Err(bad("timer max (bytes 1–2) is 0".into()));
        }
        for (i, &m) in self.encoder_max.iter().enumerate() {
            let offset = 12 + 2 * i;
            if m == 0 {
                if i < 5 {
                    return Err(bad(format!(
                        "encoder {i} (bytes {offset}–{}) has 0 counts per revolution; a \
                         MicroScribe has at least 5 encoders",
                        offset + 1
                    )));
                }
                continue;
            }
            let per_rev = u32::from(m) + 1;
            if !per_rev.is_power_of_two()
                || !(MIN_COUNTS_PER_REV..=MAX_COUNTS_PER_REV).contains(&per_rev)
            {
                return Err(bad(format!(
                    "encoder {i} (bytes {offset}–{}) announces {per_rev} counts per revolution; \
                     expected a power of two from {MIN_COUNTS_PER_REV} to {MAX_COUNTS_PER_REV}",
                    offset + 1
                )));
            }
        }
        Ok(())
    }
}

/// Fewest counts per revolution a plausible arm encoder has.
pub const MIN_COUNTS_PER_REV: u32 = 1 << 10;
/// Most counts per revolution a 14-bit HCI count can carry.
pub const MAX_COUNTS_PER_REV: u32 = 1 << 14;
/// Longest link length or offset (|A|, |D|) accepted from `C0`, in mils (32 in ≈ 0.8 m).
pub const MAX_LINK_MILS: i16 = 32_000;

/// The `C0` and `D3` blocks in wire units: angles with 32768 = 180°, lengths in mils.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDhParams {
    /// ALPHA0–5.
    pub alpha: [i16; 6],
    /// A0–5 (thousandths of an inch).
    pub a: [i16; 6],
    /// D0–5 (thousandths of an inch).
    pub d: [i16; 6],
    /// BETA (0 when the arm has no `D3` block).
    pub beta: i16,
}

impl RawDhParams {
    /// The parameters of the real 3DX.
    pub fn microscribe_3dx() -> Self {
        let w = |x: u16| x as i16;
        Self {
            alpha: [0x0000, 0x3FF5, 0xFFF9, 0x3FE5, 0xC002, 0xC00C].map(w),
            a: [0x0000, 0x03C0, 0x2810, 0x0215, 0xFE6F, 0x018F].map(w),
            d: [0x206C, 0xFC92, 0xFFFD, 0x241C, 0x0140, 0xEB66].map(w),
            beta: 3,
        }
    }

    /// Decodes a `C0` payload (length byte included); BETA is left at 0.
    pub fn decode_c0(payload: &[u8]) -> Result<Self, ParamsError> {
        let expected = 1 + PARAMS_LEN as usize;
        if payload.len() != expected || payload[0] != PARAMS_LEN {
            return Err(ParamsError::BadLength {
                block: "C0",
                expected,
                got: payload.len(),
            });
        }
        let v = |k: usize| i16::from_be_bytes([payload[1 + 2 * k], payload[2 + 2 * k]]);
        let mut p = Self {
            alpha: [0; 6],
            a: [0; 6],
            d: [0; 6],
            beta: 0,
        };
        for i in 0..6 {
            p.alpha[i] = v(i);
            p.a[i] = v(6 + i);
            p.d[i] = v(12 + i);
        }
        Ok(p)
    }

    /// Checks the lengths are those of a desk-sized arm (|A|, |D| ≤ 32 in) and not all zero.
    pub fn validate(&self) -> Result<(), ParamsError> {
        for (name, values, first) in [("A", &self.a, 6), ("D", &self.d, 12)] {
            for (i, &v) in values.iter().enumerate() {
                if v.unsigned_abs() > MAX_LINK_MILS.unsigned_abs() {
                    let offset = 1 + 2 * (first + i);
                    return Err(ParamsError::Implausible {
                        block: "C0",
                        what: format!(
                            "{name}{i} (bytes {offset}–{}) = {v} mils is longer than {:.0} in",
                            offset + 1,
                            f64::from(MAX_LINK_MILS) / 1000.0
                        ),
                    });
                }
            }
        }
        if self.a.iter().chain(&self.d).all(|&v| v == 0) {
            return Err(ParamsError::Implausible {
                block: "C0",
                what: "every link length and offset is 0".into(),
            });
        }
        Ok(())
    }

    /// Encodes the `C0` payload (length byte first).
    pub fn encode_c0(&self) -> Vec<u8> {
        let mut out = vec![PARAMS_LEN];
        for v in self.alpha.iter().chain(&self.a).chain(&self.d) {
            out.extend(v.to_be_bytes());
        }
        out
    }

    /// Decodes a `D3` payload (length byte included) into BETA.
    pub fn decode_d3(payload: &[u8]) -> Result<i16, ParamsError> {
        if payload.len() != 1 + EXT_PARAMS_LEN as usize || payload[0] != EXT_PARAMS_LEN {
            return Err(ParamsError::BadLength {
                block: "D3",
                expected: 1 + EXT_PARAMS_LEN as usize,
                got: payload.len(),
            });
        }
        Ok(i16::from_be_bytes([payload[1], payload[2]]))
    }

    /// Encodes the `D3` payload (length byte first).
    pub fn encode_d3(&self) -> Vec<u8> {
        let mut out = vec![EXT_PARAMS_LEN];
        out.extend(self.beta.to_be_bytes());
        out
    }
}

/// Modified-DH parameters in SI units, ready for [`super::kinematics`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DhParams {
    /// Link twists α₀…α₅ (rad).
    pub alpha_rad: [f64; 6],
    /// Link lengths a₀…a₅ (m).
    pub a_m: [f64; 6],
    /// Link offsets d₀…d₅ (m).
    pub d_m: [f64; 6],
    /// β: the extra rotation about y on link 2 (rad).
    pub beta_rad: f64,
}

impl DhParams {
    /// Converts wire units to SI.
    pub fn from_raw(raw: &RawDhParams) -> Self {
        Self {
            alpha_rad: raw.alpha.map(|v| f64::from(v) * RAD_PER_ANGLE_UNIT),
            a_m: raw.a.map(|v| f64::from(v) * METRES_PER_MIL),
            d_m: raw.d.map(|v| f64::from(v) * METRES_PER_MIL),
            beta_rad: f64::from(raw.beta) * RAD_PER_ANGLE_UNIT,
        }
    }

    /// Applies per-tip corrections (added to d₅, d₄ and a₅).
    pub fn with_tip(mut self, tip: &TipCorrection) -> Self {
        self.d_m[5] += tip.d5_delta_m;
        self.d_m[4] += tip.d4_delta_m;
        self.a_m[5] += tip.a5_delta_m;
        self
    }
}

/// Everything the host needs to turn a data packet into a stylus pose.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmParams {
    /// Identity strings.
    pub identity: Identity,
    /// Maximum values (encoder ranges).
    pub max_values: MaxValues,
    /// Parameters as received.
    pub raw_dh: RawDhParams,
    /// Parameters in SI with the tip correction applied.
    pub dh: DhParams,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_payloads_decode_to_the_doc_values() {
        let c6: Vec<u8> = [
            0x03, 0x3F, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3F, 0xFF, 0x3F, 0xFF, 0x1F, 0xFF, 0x0F,
            0xFF, 0x0F, 0xFF, 0x00, 0x00,
        ]
        .to_vec();
        let m = MaxValues::decode(&c6).expect("24 bytes");
        assert_eq!(m, MaxValues::microscribe_3dx());
        assert_eq!(m.encode(), c6);
        assert_eq!(m.joint_count(), 5);

        let hex = "240000 3FF5 FFF9 3FE5 C002 C00C 0000 03C0 2810 0215 FE6F 018F 206C FC92 FFFD 241C 0140 EB66";
        let digits: String = hex.chars().filter(|c| !c.is_whitespace()).collect();
        let c0: Vec<u8> = (0..digits.len() / 2)
            .map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        let raw = RawDhParams::decode_c0(&c0).expect("37 bytes");
        assert_eq!(raw.d[5], -5274);
        assert_eq!(raw.a[2], 10256);
        assert_eq!(raw.alpha[4], -16382);
        assert_eq!(RawDhParams::decode_d3(&[2, 0, 3]).ok(), Some(3));
        let mut with_beta = raw;
        with_beta.beta = 3;
        assert_eq!(with_beta, RawDhParams::microscribe_3dx());
        assert_eq!(raw.encode_c0(), c0);
    }

    #[test]
    fn short_blocks_are_rejected_with_their_name() {
        let e = MaxValues::decode(&[0; 23]).expect_err("short");
        assert!(e.to_string().contains("C6"), "{e}");
        let e = RawDhParams::decode_c0(&[36; 20]).expect_err("short");
        assert!(e.to_string().contains("C0"), "{e}");
    }

    #[test]
    fn zero_and_absurd_encoder_ranges_are_refused_naming_the_field() {
        assert!(MaxValues::microscribe_3dx().validate().is_ok());
        let mut zero = MaxValues::microscribe_3dx();
        zero.encoder_max = [0; 6];
        let e = zero.validate().expect_err("no encoders");
        assert!(e.to_string().contains("encoder 0 (bytes 12–13)"), "{e}");
        for bad in [0x0123, 0x003F, 0x3FFE] {
            let mut m = MaxValues::microscribe_3dx();
            m.encoder_max[2] = bad;
            let e = m.validate().expect_err("absurd range");
            assert!(e.to_string().contains("encoder 2 (bytes 16–17)"), "{e}");
        }
        let mut six = MaxValues::microscribe_3dx();
        six.encoder_max[5] = 0x0FFF;
        assert!(six.validate().is_ok(), "a sixth encoder is allowed");
        let mut timer = MaxValues::microscribe_3dx();
        timer.timer_max = 0;
        assert!(timer.validate().is_err());
        let mut raw = RawDhParams::microscribe_3dx();
        assert!(raw.validate().is_ok());
        raw.d[3] = i16::MAX;
        let e = raw.validate().expect_err("a 33-inch forearm");
        assert!(e.to_string().contains("D3 (bytes 31–32)"), "{e}");
    }
}
