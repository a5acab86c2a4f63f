//! The rig config file for `ar-multibody run --config RIG.toml`: which real devices to open,
//! the calibration files, the scene and the display. Relative paths are relative to the config
//! file's folder. See `assets/rig.example.toml` for a documented example.

use ar_drivers::camera::CaptureTarget;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// What was wrong with a rig config.
#[derive(Debug, thiserror::Error)]
pub enum RigConfigError {
    /// The file could not be read.
    #[error("rig config {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML did not parse or a field is missing or unknown (the message has the line).
    #[error("rig config {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message with line, column and field.
        message: String,
    },
    /// A value parsed but makes no sense.
    #[error("rig config {path}: field `{field}`: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The field, as `section.key`.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// The camera section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CameraSection {
    /// OpenCV capture index (`0`), a device path (`/dev/video2`), or a recording played as
    /// the camera: a video file or a folder of images (relative to the config's folder); see
    /// [`CameraSection::capture_target`].
    pub device: String,
    /// The camera file (intrinsics and distortion) from `calibrate camera`.
    pub camera_file: PathBuf,
    /// Printed marker side length, metres (measure the print).
    pub marker_length_m: f64,
}

/// The arm section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArmSection {
    /// Serial port (`/dev/ttyUSB0`) or `auto` to probe the machine's ports.
    pub port: String,
    /// The tracker file (`world_from_arm`) from `calibrate tracker`.
    pub tracker_file: PathBuf,
    /// The stylus tip from `calibrate tip` (absent: the arm's built-in point tip).
    #[serde(default)]
    pub tip: Option<PathBuf>,
    /// Button bits that clip: 1 = right / single pedal, 2 = left pedal.
    #[serde(default = "default_button_mask")]
    pub button_mask: u8,
    /// Grab radius, millimetres.
    #[serde(default = "default_grab_radius_mm")]
    pub grab_radius_mm: f64,
    /// Whether `run` stops when the arm's port is missing at the start (`true`) or says so
    /// and runs on without the arm (`false`, the default).
    #[serde(default)]
    pub required: bool,
}

/// Whether a camera `device` names a live device: a capture index or a path under `/dev`.
fn names_a_live_device(device: &str) -> bool {
    device.chars().all(|c| c.is_ascii_digit()) || Path::new(device).starts_with("/dev")
}

impl CameraSection {
    /// What `device` names: a capture index or a path under `/dev` is a live device; an
    /// existing folder is an image folder and an existing file a video, played as the camera.
    /// Anything else is passed to OpenCV as a device (which names it if it cannot open it).
    pub fn capture_target(&self) -> CaptureTarget {
        let d = self.device.as_str();
        let path = Path::new(d);
        if names_a_live_device(d) {
            CaptureTarget::Device(d.to_owned())
        } else if path.is_dir() {
            CaptureTarget::Folder(path.to_owned())
        } else if path.is_file() {
            CaptureTarget::Video(path.to_owned())
        } else {
            CaptureTarget::Device(d.to_owned())
        }
    }
}

/// The microphone section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MicSection {
    /// `default`, `none`, `synthetic` (seeded breaths), or the name of an input device.
    pub device: String,
}

/// Display modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DisplayMode {
    /// One view in a window.
    Monitor,
    /// Side-by-side stereo for a video see-through HMD.
    Hmd,
}

/// The display section.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DisplaySection {
    /// `monitor` or `hmd`.
    pub mode: DisplayMode,
    /// Interpupillary distance for `hmd`, millimetres.
    #[serde(default = "default_ipd_mm")]
    pub ipd_mm: f64,
    /// Per-eye width for `hmd`, pixels.
    #[serde(default = "default_eye_width")]
    pub eye_width: u32,
    /// Per-eye height for `hmd`, pixels.
    #[serde(default = "default_eye_height")]
    pub eye_height: u32,
    /// Render off-screen and write numbered PNG files here instead of opening a window.
    #[serde(default)]
    pub headless_out: Option<PathBuf>,
    /// The virtual bodies cast soft shadows on the desk (`false` for slow machines).
    #[serde(default = "default_shadows")]
    pub shadows: bool,
}

/// A whole rig config.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RigConfig {
    /// The scene file to simulate.
    pub scene: PathBuf,
    /// Camera and marker.
    pub camera: CameraSection,
    /// Digitizer arm (optional: without it nothing is grabbed).
    pub arm: Option<ArmSection>,
    /// Microphone (optional: no wind without it).
    pub mic: Option<MicSection>,
    /// Display.
    pub display: DisplaySection,
}

fn default_button_mask() -> u8 {
    1
}
fn default_grab_radius_mm() -> f64 {
    15.0
}
fn default_shadows() -> bool {
    true
}
fn default_ipd_mm() -> f64 {
    64.0
}
fn default_eye_width() -> u32 {
    800
}
fn default_eye_height() -> u32 {
    600
}

impl RigConfig {
    /// Reads, validates and resolves a rig config (relative paths against its folder).
    pub fn load(path: &Path) -> Result<Self, RigConfigError> {
        let text = ar_io::input_file::read_text(path).map_err(|source| RigConfigError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses config text; `path` names the file in errors and anchors relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Self, RigConfigError> {
        let mut cfg: Self = toml::from_str(text).map_err(|e| RigConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let invalid = |field: &'static str, problem: String| {
            Err(RigConfigError::Invalid {
                path: path.to_owned(),
                field,
                problem,
            })
        };
        if !(cfg.camera.marker_length_m.is_finite() && cfg.camera.marker_length_m > 0.0) {
            return invalid(
                "camera.marker_length_m",
                format!(
                    "must be a positive length in metres, got {}",
                    cfg.camera.marker_length_m
                ),
            );
        }
        if let Some(arm) = &cfg.arm {
            if arm.button_mask == 0 {
                return invalid(
                    "arm.button_mask",
                    "no button selected (use 1, 2 or 3)".into(),
                );
            }
            if !(arm.grab_radius_mm.is_finite() && arm.grab_radius_mm > 0.0) {
                return invalid(
                    "arm.grab_radius_mm",
                    format!("must be positive, got {}", arm.grab_radius_mm),
                );
            }
        }
        if !(cfg.display.ipd_mm.is_finite() && (40.0..=80.0).contains(&cfg.display.ipd_mm)) {
            return invalid(
                "display.ipd_mm",
                format!("{} mm is not a human IPD (40–80 mm)", cfg.display.ipd_mm),
            );
        }
        if cfg.display.eye_width == 0 || cfg.display.eye_height == 0 {
            return invalid("display.eye_width", "eye size must be positive".into());
        }
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        resolve(&mut cfg.scene);
        resolve(&mut cfg.camera.camera_file);
        if let Some(arm) = cfg.arm.as_mut() {
            resolve(&mut arm.tracker_file);
            if let Some(tip) = arm.tip.as_mut() {
                resolve(tip);
            }
        }
        // A recording named by a relative path is found next to the config, like the files.
        let device = Path::new(&cfg.camera.device);
        if !names_a_live_device(&cfg.camera.device) && device.is_relative() {
            let beside = base.join(device);
            if beside.exists() {
                cfg.camera.device = beside.to_string_lossy().into_owned();
            }
        }
        if let Some(out) = cfg.display.headless_out.as_mut() {
            resolve(out);
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../assets/rig.example.toml");

    #[test]
    fn the_example_config_parses_and_resolves_paths() {
        let cfg = RigConfig::parse(EXAMPLE, Path::new("/etc/rig/rig.toml")).unwrap();
        assert!(cfg.camera.camera_file.starts_with("/etc/rig"));
        assert_eq!(cfg.display.mode, DisplayMode::Monitor);
        assert_eq!((cfg.display.eye_width, cfg.display.eye_height), (800, 600));
        assert!(cfg.display.shadows);
        let arm = cfg.arm.unwrap();
        assert_eq!(arm.grab_radius_mm, 15.0);
        assert_eq!(arm.tip, None, "the example uses the arm's own tip");
        let with_tip = EXAMPLE.replace("# tip = \"tip.toml\"", "tip = \"tip.toml\"");
        let cfg = RigConfig::parse(&with_tip, Path::new("/etc/rig/rig.toml")).unwrap();
        assert_eq!(
            cfg.arm.and_then(|a| a.tip),
            Some(PathBuf::from("/etc/rig/tip.toml"))
        );
        assert!(!arm.required);
        assert_eq!(
            cfg.camera.capture_target(),
            CaptureTarget::Device("0".into())
        );
    }

    #[test]
    fn the_arm_is_optional_and_a_recording_can_be_the_camera() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("desk.avi"), b"").unwrap();
        std::fs::create_dir(dir.path().join("frames")).unwrap();
        let start = EXAMPLE.find("[arm]").unwrap();
        let end = EXAMPLE.find("[mic]").unwrap();
        let without_arm = format!("{}{}", &EXAMPLE[..start], &EXAMPLE[end..]);
        let rig = dir.path().join("rig.toml");
        let with = |device: &str| {
            let text = without_arm.replace("device = \"0\"", &format!("device = \"{device}\""));
            RigConfig::parse(&text, &rig).unwrap()
        };
        let cfg = with("desk.avi");
        assert!(cfg.arm.is_none());
        assert_eq!(
            cfg.camera.capture_target(),
            CaptureTarget::Video(dir.path().join("desk.avi"))
        );
        assert_eq!(
            with("frames").camera.capture_target(),
            CaptureTarget::Folder(dir.path().join("frames"))
        );
        assert_eq!(
            with("/dev/video2").camera.capture_target(),
            CaptureTarget::Device("/dev/video2".into())
        );
    }

    #[test]
    fn a_misspelt_key_names_the_line_and_key() {
        let text = EXAMPLE.replace("marker_length_m", "marker_length");
        let err = RigConfig::parse(&text, Path::new("rig.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rig.toml") && err.contains("marker_length") && err.contains("line"),
            "{err}"
        );
    }

    #[test]
    fn shadows_are_on_unless_the_display_turns_them_off() {
        let parse = |text: &str| RigConfig::parse(text, Path::new("rig.toml")).unwrap();
        let off = EXAMPLE.replace("shadows = true", "shadows = false");
        assert!(!parse(&off).display.shadows);
        let unsaid = EXAMPLE.replace("shadows = true", "");
        assert!(parse(&unsaid).display.shadows);
        let err = RigConfig::parse(
            &EXAMPLE.replace("shadows = true", "shadows = \"no\""),
            Path::new("rig.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("rig.toml") && err.contains("shadows"), "{err}");
    }

    #[test]
    fn an_implausible_ipd_is_rejected_by_field() {
        let text = EXAMPLE.replace("ipd_mm = 64.0", "ipd_mm = 640.0");
        let err = RigConfig::parse(&text, Path::new("rig.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("display.ipd_mm"), "{err}");
    }
}
