//! The tracker calibration file: `world_from_arm` as four rows of four numbers (metres) and
//! the fit's `rms_mm`, as TOML, written atomically and read back with errors that name the
//! file, line and field.
//!
//! ```toml
//! # world_from_arm: arm base frame -> marker (world) frame, metres.
//! world_from_arm = [
//!     [0.0, -1.0, 0.0, 0.25],
//!     [1.0, 0.0, 0.0, -0.40],
//!     [0.0, 0.0, 1.0, 0.02],
//!     [0.0, 0.0, 0.0, 1.0],
//! ]
//! rms_mm = 0.17
//! fit = "svd"        # optional: which fit produced it
//! points = 8         # optional: how many touched points
//! ```

use ar_io::atomic_write::write_atomic;
use ar_io::toml_location::line_of;
use nalgebra::{Isometry3, Matrix3, Matrix4, Rotation3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A hand-edited file may round its rotation; beyond this ‖RᵀR − I‖_F it is refused as not
/// a rotation (six decimals give ~1e-6).
pub const ROTATION_TOLERANCE: f64 = 1e-5;

/// The content of a tracker calibration file.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackerCalibration {
    /// Arm base frame → marker (world) frame.
    pub world_from_arm: Isometry3<f64>,
    /// RMS residual of the fit that produced it, mm.
    pub rms_mm: f64,
    /// Which fit produced it (`pinv+qr`, `svd`), if recorded.
    pub fit: Option<String>,
    /// How many point pairs it was fitted to, if recorded.
    pub points: Option<usize>,
}

/// What was wrong with a tracker calibration file.
#[derive(Debug, thiserror::Error)]
pub enum TrackerFileError {
    /// The file could not be read or written.
    #[error("tracker calibration {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML did not parse or a field is missing, misspelt or of the wrong type (the
    /// parser's message has line and column).
    #[error("tracker calibration {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A field parsed but its value is unusable.
    #[error("tracker calibration {path}, line {line}: field `{field}`: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the value.
        line: usize,
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileContent {
    world_from_arm: Spanned<Vec<Spanned<Vec<f64>>>>,
    rms_mm: Spanned<f64>,
    #[serde(default)]
    fit: Option<String>,
    #[serde(default)]
    points: Option<usize>,
}

impl TrackerCalibration {
    /// Parses a tracker file's text; `path` only names the file in errors.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self, TrackerFileError> {
        let content: FileContent = toml::from_str(text).map_err(|e| TrackerFileError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let invalid = |offset: usize, field, problem: String| TrackerFileError::Invalid {
            path: path.to_owned(),
            line: line_of(text, offset),
            field,
            problem,
        };
        let rows = content.world_from_arm.get_ref();
        if rows.len() != 4 {
            return Err(invalid(
                content.world_from_arm.span().start,
                "world_from_arm",
                format!("needs 4 rows of 4 numbers, found {} rows", rows.len()),
            ));
        }
        let mut m = Matrix4::zeros();
        for (r, row) in rows.iter().enumerate() {
            let values = row.get_ref();
            if values.len() != 4 {
                return Err(invalid(
                    row.span().start,
                    "world_from_arm",
                    format!("row {} has {} numbers, needs 4", r + 1, values.len()),
                ));
            }
            for (c, &v) in values.iter().enumerate() {
                if !v.is_finite() {
                    return Err(invalid(
                        row.span().start,
                        "world_from_arm",
                        format!("row {} column {} is not a finite number", r + 1, c + 1),
                    ));
                }
                m[(r, c)] = v;
            }
        }
        let last_row = m.row(3) - Matrix4::<f64>::identity().row(3);
        if last_row.norm() > 1e-9 {
            return Err(invalid(
                rows[3].span().start,
                "world_from_arm",
                "row 4 must be [0, 0, 0, 1] (a rigid transform)".into(),
            ));
        }
        let block: Matrix3<f64> = m.fixed_view::<3, 3>(0, 0).into_owned();
        let ortho = (block.transpose() * block - Matrix3::identity()).norm();
        if ortho > ROTATION_TOLERANCE || block.determinant() <= 0.0 {
            return Err(invalid(
                rows[0].span().start,
                "world_from_arm",
                format!(
                    "the 3×3 block of rows 1–3 is not a rotation (|RᵀR − I| = {ortho:.2e}, det = {:.6})",
                    block.determinant()
                ),
            ));
        }
        if m.fixed_view::<3, 1>(0, 3).norm() > 100.0 {
            return Err(invalid(
                rows[0].span().start,
                "world_from_arm",
                "the translation (column 4) is over 100 m: the file is not in metres".into(),
            ));
        }
        let rms_mm = *content.rms_mm.get_ref();
        if !(rms_mm.is_finite() && rms_mm >= 0.0) {
            return Err(invalid(
                content.rms_mm.span().start,
                "rms_mm",
                format!("must be a non-negative number of millimetres, got {rms_mm}"),
            ));
        }
        // Project the (possibly rounded) block onto the nearest rotation.
        let rotation = Rotation3::from_matrix_eps(&block, 1e-15, 100, Rotation3::identity());
        let translation = Vector3::new(m[(0, 3)], m[(1, 3)], m[(2, 3)]);
        Ok(Self {
            world_from_arm: Isometry3::from_parts(
                Translation3::from(translation),
                UnitQuaternion::from_rotation_matrix(&rotation),
            ),
            rms_mm,
            fit: content.fit,
            points: content.points,
        })
    }

    /// Reads and checks a tracker calibration file.
    pub fn load(path: &Path) -> Result<Self, TrackerFileError> {
        let text = ar_io::input_file::read_text(path).map_err(|source| TrackerFileError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_str(&text, path)
    }

    /// The file's text. Numbers are written in Rust's shortest round-trip form, so the file
    /// holds the matrix exactly; reading it back goes through a quaternion and agrees to ~1e-15.
    pub fn to_toml_string(&self) -> String {
        let m = self.world_from_arm.to_homogeneous();
        let mut s = String::from(
            "# Tracker calibration: world_from_arm maps arm-base-frame points to marker (world)\n\
             # frame points, p_in_world = world_from_arm · p_in_arm; metres. rms_mm is the RMS\n\
             # residual of the fit over the touched points.\nworld_from_arm = [\n",
        );
        for r in 0..4 {
            s.push_str(&format!(
                "    [{:?}, {:?}, {:?}, {:?}],\n",
                m[(r, 0)],
                m[(r, 1)],
                m[(r, 2)],
                m[(r, 3)]
            ));
        }
        s.push_str(&format!("]\nrms_mm = {:?}\n", self.rms_mm));
        if let Some(fit) = &self.fit {
            s.push_str(&format!("fit = \"{}\"\n", fit.escape_default()));
        }
        if let Some(points) = self.points {
            s.push_str(&format!("points = {points}\n"));
        }
        s
    }

    /// Writes the file atomically: an interrupted write leaves the old file or the new one.
    pub fn save(&self, path: &Path) -> Result<(), TrackerFileError> {
        write_atomic(path, self.to_toml_string().as_bytes()).map_err(|source| {
            TrackerFileError::Io {
                path: path.to_owned(),
                source,
            }
        })
    }
}

/// What a new tracker calibration would replace at a path.
#[derive(Debug)]
pub enum ExistingCalibration {
    /// Nothing is there.
    Nothing,
    /// A tracker calibration (its RMS says how good it is).
    Calibration(TrackerCalibration),
    /// Something that is not a readable tracker calibration.
    Unreadable(TrackerFileError),
}

impl ExistingCalibration {
    /// Looks at `path` (without following a link to decide that something is there).
    pub fn at(path: &Path) -> Self {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::Nothing,
            _ => match TrackerCalibration::load(path) {
                Ok(calibration) => Self::Calibration(calibration),
                Err(e) => Self::Unreadable(e),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TrackerCalibration {
        TrackerCalibration {
            world_from_arm: Isometry3::new(
                Vector3::new(0.31, -0.42, 0.05),
                Vector3::new(0.1, -0.2, 2.5),
            ),
            rms_mm: 0.173,
            fit: Some("svd".into()),
            points: Some(8),
        }
    }

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("tracker.toml");
        sample().save(&p).unwrap();
        let back = TrackerCalibration::load(&p).unwrap();
        let err = (back.world_from_arm.to_homogeneous() - sample().world_from_arm.to_homogeneous())
            .norm();
        assert!(err < 1e-14, "{err}");
        assert_eq!(back.rms_mm, 0.173);
        assert_eq!(back.fit.as_deref(), Some("svd"));
        assert_eq!(back.points, Some(8));
    }

    #[test]
    fn the_shipped_example_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../assets/calibration/example_hidden_tracker.toml");
        let t = TrackerCalibration::load(&path).unwrap();
        assert!((t.world_from_arm.rotation.angle() - 20f64.to_radians()).abs() < 1e-12);
        assert_eq!(
            t.world_from_arm.translation.vector,
            Vector3::new(-0.15, -0.05, -0.05)
        );
    }

    #[test]
    fn a_short_row_names_its_line() {
        let text = sample()
            .to_toml_string()
            .replacen(", 0.0, 1.0],", ", 1.0],", 1);
        let err = TrackerCalibration::from_toml_str(&text, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.toml, line 8") && err.contains("row 4 has 3 numbers"),
            "{err}"
        );
    }

    #[test]
    fn a_scaled_block_is_not_a_rotation() {
        let mut bad = sample().world_from_arm.to_homogeneous();
        for r in 0..3 {
            for c in 0..3 {
                bad[(r, c)] *= 1.01;
            }
        }
        let mut text = String::from("world_from_arm = [\n");
        for r in 0..4 {
            text.push_str(&format!(
                "  [{:?}, {:?}, {:?}, {:?}],\n",
                bad[(r, 0)],
                bad[(r, 1)],
                bad[(r, 2)],
                bad[(r, 3)]
            ));
        }
        text.push_str("]\nrms_mm = 0.2\n");
        let err = TrackerCalibration::from_toml_str(&text, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 2") && err.contains("not a rotation"),
            "{err}"
        );
    }

    #[test]
    fn missing_rms_is_a_parse_error_naming_the_field() {
        let text = sample().to_toml_string().replace("rms_mm = 0.173\n", "");
        let err = TrackerCalibration::from_toml_str(&text, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.toml") && err.contains("rms_mm"), "{err}");
    }

    #[test]
    fn six_decimal_hand_copy_loads_as_a_rotation() {
        let m = sample().world_from_arm.to_homogeneous();
        let mut text = String::from("world_from_arm = [\n");
        for r in 0..4 {
            text.push_str(&format!(
                "  [{:.6}, {:.6}, {:.6}, {:.6}],\n",
                m[(r, 0)],
                m[(r, 1)],
                m[(r, 2)],
                m[(r, 3)]
            ));
        }
        text.push_str("]\nrms_mm = 0.2\n");
        let back = TrackerCalibration::from_toml_str(&text, Path::new("t.toml")).unwrap();
        let r = back.world_from_arm.rotation.to_rotation_matrix();
        assert!((r.matrix().transpose() * r.matrix() - Matrix3::identity()).norm() < 1e-12);
        assert!(
            back.world_from_arm
                .rotation
                .angle_to(&sample().world_from_arm.rotation)
                < 1e-5
        );
    }
}
