//! Per-tip corrections: a ball tip, a longer or a bent stylus moves the tip away from the
//! arm's built-in point tip. The arm's protocol notes express a tip as deltas to the last
//! links' parameters (D5, D4, A5), which the kinematics then apply like any other parameter,
//! so the samples, the drawn linkage and everything downstream use the tip alike.
//!
//! A pivot calibration (`calibrate tip`) measures the tip as an offset in the stylus frame;
//! [`TipCorrection::from_tip_in_stylus`] turns it into the three deltas and
//! [`TipCorrection::tip_in_stylus`] back. The file is TOML:
//! ```toml
//! name = "pivot"
//! d5_delta_m = 0.0061468
//! d4_delta_m = 0.0
//! a5_delta_m = 0.0
//! rms_mm = 0.08      # optional: the pivot fit's RMS residual
//! samples = 3400     # optional: how many samples it was fitted to
//! span_deg = 31.5    # optional: how far the stylus turned during the pivot
//! ```

use super::params::{DhParams, ParamsError};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Per-tip corrections to the stylus link, e.g. from pivot calibration (metres).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TipCorrection {
    /// A label for people.
    #[serde(default)]
    pub name: String,
    /// Added to D5 (m).
    #[serde(default)]
    pub d5_delta_m: f64,
    /// Added to D4 (m).
    #[serde(default)]
    pub d4_delta_m: f64,
    /// Added to A5 (m).
    #[serde(default)]
    pub a5_delta_m: f64,
    /// RMS residual of the pivot calibration that measured the tip (mm); absent in files
    /// made by hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rms_mm: Option<f64>,
    /// How many samples the pivot calibration fitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    /// How far the stylus turned during the pivot (the largest angle from its mean
    /// orientation, degrees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_deg: Option<f64>,
}

/// Below this |sin α₅| a D4 delta barely moves the tip across the stylus: the arm's last twist
/// cannot express an offset sideways (every real MicroScribe has α₅ ≈ −90°).
const MIN_SIN_ALPHA5: f64 = 0.1;

impl TipCorrection {
    /// The point tip: no correction.
    pub fn point() -> Self {
        Self {
            name: "point".into(),
            ..Self::default()
        }
    }

    /// The standard ball tip: +0.242 in on D5.
    pub fn ball() -> Self {
        Self {
            name: "ball".into(),
            d5_delta_m: 0.242 * 0.0254,
            ..Self::default()
        }
    }

    /// The corrections that put the tip at `tip_in_stylus` (metres, the stylus frame of the
    /// arm's own parameters `dh`, relative to the built-in tip). With the stylus roll θ₅ = 0
    /// (a five-encoder arm) the tip of `dh.with_tip(&c)` is then exactly
    /// `T(θ) · tip_in_stylus`: A5 moves it along the stylus frame's x, D5 along z, and D4
    /// along the previous joint's axis, which the twist α₅ turns onto y (and z).
    pub fn from_tip_in_stylus(dh: &DhParams, tip_in_stylus: &Vector3<f64>) -> Result<Self, String> {
        let (s, c) = dh.alpha_rad[5].sin_cos();
        if s.abs() < MIN_SIN_ALPHA5 {
            return Err(format!(
                "the arm's last twist α5 = {:.1}° cannot carry a sideways tip offset",
                dh.alpha_rad[5].to_degrees()
            ));
        }
        let d4 = tip_in_stylus.y / s;
        Ok(Self {
            name: "pivot".into(),
            a5_delta_m: tip_in_stylus.x,
            d4_delta_m: d4,
            d5_delta_m: tip_in_stylus.z - c * d4,
            ..Self::default()
        })
    }

    /// Where these corrections put the tip in the stylus frame of `dh` (with θ₅ = 0), metres:
    /// the inverse of [`Self::from_tip_in_stylus`].
    pub fn tip_in_stylus(&self, dh: &DhParams) -> Vector3<f64> {
        let (s, c) = dh.alpha_rad[5].sin_cos();
        Vector3::new(
            self.a5_delta_m,
            s * self.d4_delta_m,
            c * self.d4_delta_m + self.d5_delta_m,
        )
    }

    /// Reads a TOML tip-correction file.
    pub fn load(path: &Path) -> Result<Self, ParamsError> {
        let text = ar_io::input_file::read_text(path).map_err(|source| ParamsError::TipFileIo {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|message| ParamsError::TipFileSyntax {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses TOML text; the error names the line and field.
    pub fn parse(text: &str) -> Result<Self, String> {
        let tip: Self = toml::from_str(text).map_err(|e| e.to_string().trim_end().to_owned())?;
        for (field, v) in [
            ("d5_delta_m", tip.d5_delta_m),
            ("d4_delta_m", tip.d4_delta_m),
            ("a5_delta_m", tip.a5_delta_m),
        ] {
            if !v.is_finite() || v.abs() > 0.5 {
                return Err(format!(
                    "{field} = {v} is not a plausible correction (|x| ≤ 0.5 m)"
                ));
            }
        }
        if let Some(rms) = tip.rms_mm.filter(|r| !(r.is_finite() && *r >= 0.0)) {
            return Err(format!(
                "rms_mm = {rms} must be a non-negative number of millimetres"
            ));
        }
        Ok(tip)
    }

    /// The file's text: `comment` first (each line as a `#` comment), then the fields in
    /// Rust's shortest round-trip form, so the file holds the values exactly.
    pub fn to_toml_string(&self, comment: &str) -> String {
        let mut s: String = comment.lines().map(|l| format!("# {l}\n")).collect();
        s.push_str(&format!(
            "name = \"{}\"\nd5_delta_m = {:?}\nd4_delta_m = {:?}\na5_delta_m = {:?}\n",
            self.name.escape_default(),
            self.d5_delta_m,
            self.d4_delta_m,
            self.a5_delta_m
        ));
        if let Some(rms) = self.rms_mm {
            s.push_str(&format!("rms_mm = {rms:?}\n"));
        }
        if let Some(n) = self.samples {
            s.push_str(&format!("samples = {n}\n"));
        }
        if let Some(span) = self.span_deg {
            s.push_str(&format!("span_deg = {span:?}\n"));
        }
        s
    }

    /// Writes the file atomically (an interrupted write leaves the old file or the new one).
    pub fn save(&self, path: &Path, comment: &str) -> Result<(), ParamsError> {
        ar_io::atomic_write::write_atomic(path, self.to_toml_string(comment).as_bytes()).map_err(
            |source| ParamsError::TipFileIo {
                path: path.display().to_string(),
                source,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::kinematics::arm_from_stylus;
    use crate::arm::params::RawDhParams;

    #[test]
    fn tip_file_errors_name_the_field() {
        let e = TipCorrection::parse("d5_delta_m = \"x\"").expect_err("string");
        assert!(e.contains("d5_delta_m"), "{e}");
        let e = TipCorrection::parse("d6_delta_m = 0.1").expect_err("unknown");
        assert!(e.contains("d6_delta_m"), "{e}");
        let t = TipCorrection::parse("name = \"ball\"\nd5_delta_m = 0.0061468").expect("valid");
        assert!((t.d5_delta_m - TipCorrection::ball().d5_delta_m).abs() < 1e-7);
        let e = TipCorrection::parse("rms_mm = -1.0").expect_err("negative");
        assert!(e.contains("rms_mm"), "{e}");
    }

    #[test]
    fn an_offset_in_the_stylus_frame_becomes_deltas_that_put_the_tip_there() {
        let dh = DhParams::from_raw(&RawDhParams::microscribe_3dx());
        for t in [
            Vector3::new(0.0, 0.0, 0.1),
            Vector3::new(0.06, -0.05, 0.03),
            Vector3::new(-0.1, 0.07, -0.02),
        ] {
            let c = TipCorrection::from_tip_in_stylus(&dh, &t).expect("α5 ≈ −90°");
            assert!((c.tip_in_stylus(&dh) - t).norm() < 1e-15);
            let with = dh.with_tip(&c);
            for q in [
                [0.0, 0.7, -1.1, 0.0, 0.9, 0.0],
                [0.4, 0.2, -0.6, 1.3, -0.8, 0.0],
            ] {
                let base = arm_from_stylus(&dh, &q);
                let tip = arm_from_stylus(&with, &q);
                let expected = base * nalgebra::Point3::from(t);
                assert!(
                    (tip.translation.vector - expected.coords).norm() < 1e-14,
                    "{t:?} at {q:?}"
                );
                assert!(tip.rotation.angle_to(&base.rotation) < 1e-12);
            }
        }
    }

    #[test]
    fn a_file_round_trips_with_its_fit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("tip.toml");
        let tip = TipCorrection {
            name: "pivot".into(),
            d5_delta_m: 0.0123,
            d4_delta_m: -0.045,
            a5_delta_m: 0.1 / 3.0,
            rms_mm: Some(0.087),
            samples: Some(2500),
            span_deg: Some(31.25),
        };
        tip.save(&path, "pivot calibration\ntip in the stylus frame: …")
            .expect("write");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.starts_with("# pivot calibration\n# tip in"), "{text}");
        assert_eq!(TipCorrection::load(&path).expect("load"), tip);
    }
}
