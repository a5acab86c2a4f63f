//! The camera file: pinhole intrinsics and Brown–Conrady distortion, as TOML.
//!
//! ```toml
//! image_width = 640
//! image_height = 480
//! fx = 600.0          # pixels
//! fy = 600.0
//! cx = 320.0
//! cy = 240.0
//! dist = [0.0, 0.0, 0.0, 0.0, 0.0]   # k1, k2, p1, p2, k3 (OpenCV order)
//! rms_px = 0.21       # RMS reprojection error of the calibration; optional
//! ```
//! Axes are OpenCV's: x right, y down, z forward.
//!
//! A file is checked when it is read: each side at most [`MAX_IMAGE_SIDE_PX`] (larger images
//! are refused before anything allocates a frame), a field of view within
//! [`FIELD_OF_VIEW_DEG`] along each axis (a focal length of 1e300 px or 1e-3 px is a typo, not
//! a lens), square-ish pixels (`fy / fx` within [`PIXEL_ASPECT`]), the principal point inside
//! the image, finite distortion.

use nalgebra::{Matrix3, Point2, Point3};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The largest image side a camera file may declare, pixels (16K; the largest sensors that
/// stream video are 8K).
pub const MAX_IMAGE_SIDE_PX: u32 = 16_384;
/// The field of view a camera file may imply along each axis, degrees: from a long telephoto
/// lens to a wide fisheye's usable pinhole part.
pub const FIELD_OF_VIEW_DEG: std::ops::RangeInclusive<f64> = 1.0..=170.0;
/// The ratio `fy / fx` a camera file may declare (1 for square pixels).
pub const PIXEL_ASPECT: std::ops::RangeInclusive<f64> = 0.5..=2.0;

/// Pinhole intrinsics with OpenCV's 5-coefficient distortion model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraIntrinsics {
    /// Image width in pixels.
    pub image_width: u32,
    /// Image height in pixels.
    pub image_height: u32,
    /// Focal length along x, pixels.
    pub fx: f64,
    /// Focal length along y, pixels.
    pub fy: f64,
    /// Principal point x, pixels.
    pub cx: f64,
    /// Principal point y, pixels.
    pub cy: f64,
    /// Distortion coefficients `[k1, k2, p1, p2, k3]`.
    #[serde(default)]
    pub dist: [f64; 5],
    /// RMS reprojection error of the calibration that produced this file, pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rms_px: Option<f64>,
}

/// What was wrong with a camera file.
#[derive(Debug, thiserror::Error)]
pub enum IntrinsicsError {
    /// The file could not be read or written.
    #[error("camera file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML did not parse or a field is missing or misspelt (the message has line and column).
    #[error("camera file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line, column and field.
        message: String,
    },
    /// A field parsed but its value makes no sense.
    #[error("camera file {path}: field `{field}`: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

impl CameraIntrinsics {
    /// An ideal camera with no distortion and the principal point at the image centre.
    pub fn ideal(image_width: u32, image_height: u32, f_px: f64) -> Self {
        Self {
            image_width,
            image_height,
            fx: f_px,
            fy: f_px,
            cx: image_width as f64 / 2.0,
            cy: image_height as f64 / 2.0,
            dist: [0.0; 5],
            rms_px: None,
        }
    }

    /// The 3×3 camera matrix K.
    pub fn camera_matrix(&self) -> Matrix3<f64> {
        Matrix3::new(self.fx, 0.0, self.cx, 0.0, self.fy, self.cy, 0.0, 0.0, 1.0)
    }

    /// Projects a point in camera coordinates to pixels, with distortion (OpenCV's model,
    /// the same as `projectPoints`). `None` for points at or behind the camera plane.
    pub fn project(&self, p_in_camera: &Point3<f64>) -> Option<Point2<f64>> {
        if p_in_camera.z <= 0.0 {
            return None;
        }
        let x = p_in_camera.x / p_in_camera.z;
        let y = p_in_camera.y / p_in_camera.z;
        let [k1, k2, p1, p2, k3] = self.dist;
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
        let xd = x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
        Some(Point2::new(self.fx * xd + self.cx, self.fy * yd + self.cy))
    }

    /// Inverts [`Self::project`]: the normalised image coordinates `(x/z, y/z)` of the ray
    /// seen at `pixel`, by fixed-point iteration on OpenCV's distortion model. `None` when the
    /// iteration does not reproduce the pixel to 1e-6 px (far outside the calibrated field,
    /// where the distortion polynomial folds over).
    pub fn undistort_pixel(&self, pixel: &Point2<f64>) -> Option<Point2<f64>> {
        let xd = (pixel.x - self.cx) / self.fx;
        let yd = (pixel.y - self.cy) / self.fy;
        let [k1, k2, p1, p2, k3] = self.dist;
        let (mut x, mut y) = (xd, yd);
        for _ in 0..200 {
            let r2 = x * x + y * y;
            let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
            if radial.abs() < 1e-9 {
                return None;
            }
            let dx = 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x);
            let dy = p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y;
            let (nx, ny) = ((xd - dx) / radial, (yd - dy) / radial);
            let step = (nx - x).abs() + (ny - y).abs();
            (x, y) = (nx, ny);
            if step < 1e-15 {
                break;
            }
        }
        let back = self.project(&Point3::new(x, y, 1.0))?;
        ((back - pixel).norm() < 1e-6).then(|| Point2::new(x, y))
    }

    /// Parses a camera file's text; `path` only names the file in errors.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self, IntrinsicsError> {
        let cam: Self = toml::from_str(text).map_err(|e| IntrinsicsError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        cam.validate(path)?;
        Ok(cam)
    }

    /// Reads and validates a camera file.
    pub fn load(path: &Path) -> Result<Self, IntrinsicsError> {
        let text = ar_io::input_file::read_text(path).map_err(|source| IntrinsicsError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_str(&text, path)
    }

    /// Writes the camera file atomically.
    pub fn save(&self, path: &Path) -> Result<(), IntrinsicsError> {
        self.validate(path)?;
        let text = toml::to_string_pretty(self).map_err(|e| IntrinsicsError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let text = format!(
            "# Camera intrinsics (pixels) and distortion [k1, k2, p1, p2, k3], OpenCV axes.\n{text}"
        );
        ar_io::atomic_write::write_atomic(path, text.as_bytes()).map_err(|source| {
            IntrinsicsError::Io {
                path: path.to_owned(),
                source,
            }
        })
    }

    fn validate(&self, path: &Path) -> Result<(), IntrinsicsError> {
        let bad = |field: &'static str, problem: String| {
            Err(IntrinsicsError::Invalid {
                path: path.to_owned(),
                field,
                problem,
            })
        };
        for (field, side) in [
            ("image_width", self.image_width),
            ("image_height", self.image_height),
        ] {
            if !(1..=MAX_IMAGE_SIDE_PX).contains(&side) {
                return bad(
                    field,
                    format!("{side} px: must be between 1 and {MAX_IMAGE_SIDE_PX} px"),
                );
            }
        }
        for (field, v, side) in [
            ("fx", self.fx, self.image_width),
            ("fy", self.fy, self.image_height),
        ] {
            // 1e300 written out is three hundred digits.
            let shown = if (1e-3..1e7).contains(&v.abs()) {
                format!("{v}")
            } else {
                format!("{v:e}")
            };
            if !(v.is_finite() && v > 0.0) {
                return bad(
                    field,
                    format!("must be a positive number of pixels, got {shown}"),
                );
            }
            let fov_deg = 2.0 * (side as f64 / (2.0 * v)).atan().to_degrees();
            if !FIELD_OF_VIEW_DEG.contains(&fov_deg) {
                return bad(
                    field,
                    format!(
                        "{shown} px gives a field of view of {fov_deg:.3}° over {side} px; a camera's \
                         lies within {}° to {}° (is the focal length in pixels, not mm?)",
                        FIELD_OF_VIEW_DEG.start(),
                        FIELD_OF_VIEW_DEG.end()
                    ),
                );
            }
        }
        let aspect = self.fy / self.fx;
        if !PIXEL_ASPECT.contains(&aspect) {
            return bad(
                "fy",
                format!(
                    "fy / fx = {aspect:.3}: pixels that far from square are a typo (allowed {} to {})",
                    PIXEL_ASPECT.start(),
                    PIXEL_ASPECT.end()
                ),
            );
        }
        if !(self.cx.is_finite() && (0.0..=self.image_width as f64).contains(&self.cx)) {
            return bad("cx", format!("{} is outside the image width", self.cx));
        }
        if !(self.cy.is_finite() && (0.0..=self.image_height as f64).contains(&self.cy)) {
            return bad("cy", format!("{} is outside the image height", self.cy));
        }
        if self.dist.iter().any(|d| !d.is_finite()) {
            return bad("dist", "coefficients must be finite".into());
        }
        if let Some(rms) = self.rms_px {
            if !(rms.is_finite() && rms >= 0.0) {
                return bad(
                    "rms_px",
                    format!("must be a non-negative number, got {rms}"),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("camera.toml");
        let mut cam = CameraIntrinsics::ideal(640, 480, 600.0);
        cam.dist = [0.1, -0.2, 0.001, -0.002, 0.05];
        cam.rms_px = Some(0.3);
        cam.save(&p).unwrap();
        assert_eq!(CameraIntrinsics::load(&p).unwrap(), cam);
    }

    #[test]
    fn hand_written_file_without_rms_loads() {
        let text = "image_width = 640\nimage_height = 480\nfx = 500.0\nfy = 500.0\ncx = 320.0\ncy = 240.0\ndist = [0.0, 0.0, 0.0, 0.0, 0.0]\n";
        let cam = CameraIntrinsics::from_toml_str(text, Path::new("c.toml")).unwrap();
        assert_eq!(cam.rms_px, None);
    }

    #[test]
    fn misspelt_field_names_line_and_field() {
        let text = "image_width = 640\nimage_height = 480\nfxx = 500.0\nfy = 500.0\ncx = 320.0\ncy = 240.0\n";
        let err = CameraIntrinsics::from_toml_str(text, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("c.toml") && err.contains("line 3") && err.contains("fxx"),
            "{err}"
        );
    }

    #[test]
    fn negative_focal_length_is_rejected_by_field() {
        let text = "image_width = 640\nimage_height = 480\nfx = -5.0\nfy = 500.0\ncx = 320.0\ncy = 240.0\n";
        let err = CameraIntrinsics::from_toml_str(text, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`fx`"), "{err}");
    }

    /// Absurd values that parse are refused by field before a frame is allocated: a huge
    /// image (640 GB for the synthetic camera), focal lengths of 1e300 px or 1e-3 px, and
    /// strongly non-square pixels.
    #[test]
    fn absurd_sizes_and_focal_lengths_are_refused_by_field() {
        let file = |w: u32, h: u32, fx: f64, fy: f64| {
            format!(
                "image_width = {w}\nimage_height = {h}\nfx = {fx:e}\nfy = {fy:e}\ncx = {}\ncy = {}\n",
                w / 2,
                h / 2
            )
        };
        for (text, field) in [
            (file(100_000, 100_000, 5e4, 5e4), "`image_width`"),
            (file(640, 100_000, 500.0, 500.0), "`image_height`"),
            (file(640, 480, 1e300, 1e300), "`fx`"),
            (file(640, 480, 1e-3, 1e-3), "`fx`"),
            (file(640, 480, 500.0, 1e300), "`fy`"),
            (file(640, 480, 500.0, 1500.0), "`fy`"),
        ] {
            let err = CameraIntrinsics::from_toml_str(&text, Path::new("c.toml"))
                .expect_err(&text)
                .to_string();
            assert!(
                err.contains(field) && err.contains("c.toml") && err.len() < 300,
                "{text}: {err}"
            );
        }
        // The limits themselves: a 16K sensor, a 1.8° telephoto and a 160° wide angle load.
        for text in [
            file(16_384, 16_384, 8000.0, 8000.0),
            file(640, 480, 20_000.0, 20_000.0),
            file(640, 480, 57.0, 57.0),
        ] {
            CameraIntrinsics::from_toml_str(&text, Path::new("c.toml")).expect(&text);
        }
    }

    #[test]
    fn undistort_pixel_inverts_project_with_distortion() {
        let mut cam = CameraIntrinsics::ideal(640, 480, 600.0);
        cam.dist = [-0.12, 0.05, 0.0005, -0.0003, 0.0];
        for (x, y) in [(0.0, 0.0), (0.3, -0.2), (-0.5, 0.38), (0.53, 0.4)] {
            let px = cam.project(&Point3::new(x, y, 1.0)).unwrap();
            let back = cam.undistort_pixel(&px).unwrap();
            assert!(
                (back.x - x).abs() < 1e-9 && (back.y - y).abs() < 1e-9,
                "{x},{y}: {back}"
            );
        }
    }

    #[test]
    fn projection_matches_pinhole_without_distortion() {
        let cam = CameraIntrinsics::ideal(640, 480, 500.0);
        let p = cam.project(&Point3::new(0.1, -0.05, 1.0)).unwrap();
        assert!((p.x - 370.0).abs() < 1e-12 && (p.y - 215.0).abs() < 1e-12);
        assert!(cam.project(&Point3::new(0.0, 0.0, -1.0)).is_none());
    }
}
