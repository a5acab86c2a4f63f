//! OpenCV capture: a live device, a video file or a folder of images.

use super::{cv_ctx, CameraError, CameraSource, Frame};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to capture from.
#[derive(Debug, Clone, PartialEq)]
pub enum CaptureTarget {
    /// A live camera: an index (`"0"`) or a device path (`"/dev/video2"`).
    Device(String),
    /// A video file (anything OpenCV's backends decode; MJPG AVI is always available).
    Video(PathBuf),
    /// A folder of images (png, jpg, jpeg, bmp, tif, tiff), played in file-name order.
    Folder(PathBuf),
}

/// Size and rate asked of a live device (ignored for files).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CaptureRequest {
    /// Requested width and height, pixels.
    pub size: Option<(u32, u32)>,
    /// Requested frame rate, frames per second.
    pub fps: Option<f64>,
}

/// What the source actually delivers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaptureActual {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// Frame rate the backend reports, frames per second (0 when it does not know).
    pub fps: f64,
}

/// How often a device that stops delivering frames is reopened before giving up.
const REOPEN_ATTEMPTS: u32 = 3;

/// A camera source backed by OpenCV; see [`CaptureTarget`].
pub struct OpenCvCamera {
    target: CaptureTarget,
    request: CaptureRequest,
    cap: Option<videoio::VideoCapture>,
    files: Vec<PathBuf>,
    seq: u64,
    start: Instant,
    actual: CaptureActual,
    /// The frame count a video's container announces, when it announces one.
    announced_frames: Option<u64>,
}

impl std::fmt::Debug for OpenCvCamera {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenCvCamera")
            .field("target", &self.target)
            .field("actual", &self.actual)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff"];

impl OpenCvCamera {
    /// Opens `target`; a device gets `request` applied and its actual size and rate read back.
    pub fn open(target: CaptureTarget, request: CaptureRequest) -> Result<Self, CameraError> {
        let mut cam = Self {
            target,
            request,
            cap: None,
            files: Vec::new(),
            seq: 0,
            start: Instant::now(),
            actual: CaptureActual {
                width: 0,
                height: 0,
                fps: 0.0,
            },
            announced_frames: None,
        };
        match cam.target.clone() {
            CaptureTarget::Device(dev) => {
                let cap = open_device(&dev, &request)?;
                cam.actual = actual_of(&cap)?;
                cam.cap = Some(cap);
            }
            CaptureTarget::Video(path) => {
                let cap = open_video(&path)?;
                cam.actual = actual_of(&cap)?;
                let count = cap.get(videoio::CAP_PROP_FRAME_COUNT).unwrap_or(0.0);
                cam.announced_frames =
                    (count.is_finite() && count >= 1.0).then_some(count.round() as u64);
                cam.cap = Some(cap);
            }
            CaptureTarget::Folder(dir) => {
                cam.files = list_images(&dir)?;
                let first = read_image(&cam.files[0])?;
                cam.actual = CaptureActual {
                    width: first.cols() as u32,
                    height: first.rows() as u32,
                    fps: 0.0,
                };
            }
        }
        Ok(cam)
    }

    /// The size and rate the source delivers (for a device: what the driver granted).
    pub fn actual(&self) -> CaptureActual {
        self.actual
    }

    /// The size and rate that were requested.
    pub fn requested(&self) -> CaptureRequest {
        self.request
    }

    fn read_device(&mut self, dev: &str) -> Result<Mat, CameraError> {
        let mut attempts = 0;
        loop {
            if let Some(cap) = self.cap.as_mut() {
                let mut img = Mat::default();
                if cap.read(&mut img).unwrap_or(false) && !img.empty() {
                    return Ok(img);
                }
            }
            if attempts == REOPEN_ATTEMPTS {
                return Err(CameraError::DeviceLost {
                    device: dev.to_owned(),
                    attempts,
                });
            }
            attempts += 1;
            log::warn!("camera {dev}: no frame; reopening (attempt {attempts}/{REOPEN_ATTEMPTS})");
            self.cap = None;
            std::thread::sleep(Duration::from_millis(200 * attempts as u64));
            if let Ok(cap) = open_device(dev, &self.request) {
                if let Ok(actual) = actual_of(&cap) {
                    self.actual = actual;
                }
                self.cap = Some(cap);
            }
        }
    }
}

fn open_device(dev: &str, request: &CaptureRequest) -> Result<videoio::VideoCapture, CameraError> {
    let not_found = || CameraError::DeviceNotFound {
        device: dev.to_owned(),
    };
    let cap = if let Ok(index) = dev.parse::<i32>() {
        videoio::VideoCapture::new(index, videoio::CAP_ANY)
    } else {
        if !Path::new(dev).exists() {
            return Err(not_found());
        }
        videoio::VideoCapture::from_file(dev, videoio::CAP_V4L2)
    };
    let mut cap = cap.map_err(|_| not_found())?;
    if !cap.is_opened().unwrap_or(false) {
        return Err(not_found());
    }
    if let Some((w, h)) = request.size {
        // The driver picks the nearest mode it supports; `actual_of` reads back what it chose.
        let _ = cap.set(videoio::CAP_PROP_FRAME_WIDTH, w as f64);
        let _ = cap.set(videoio::CAP_PROP_FRAME_HEIGHT, h as f64);
    }
    if let Some(fps) = request.fps {
        let _ = cap.set(videoio::CAP_PROP_FPS, fps);
    }
    Ok(cap)
}

fn open_video(path: &Path) -> Result<videoio::VideoCapture, CameraError> {
    let bad = |problem: String| CameraError::VideoUnreadable {
        path: path.to_owned(),
        problem,
    };
    std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    if path.is_dir() {
        return Err(bad(
            "is a folder (use --images for a folder of images)".into()
        ));
    }
    let cap = videoio::VideoCapture::from_file(path.to_string_lossy().as_ref(), videoio::CAP_ANY)
        .map_err(|e| bad(e.message))?;
    if !cap.is_opened().unwrap_or(false) {
        return Err(bad(
            "not a video that OpenCV can decode (corrupt, truncated or an unknown format)".into(),
        ));
    }
    Ok(cap)
}

fn actual_of(cap: &videoio::VideoCapture) -> Result<CaptureActual, CameraError> {
    Ok(CaptureActual {
        width: cv_ctx(
            cap.get(videoio::CAP_PROP_FRAME_WIDTH),
            "reading the frame width",
        )? as u32,
        height: cv_ctx(
            cap.get(videoio::CAP_PROP_FRAME_HEIGHT),
            "reading the frame height",
        )? as u32,
        fps: cv_ctx(cap.get(videoio::CAP_PROP_FPS), "reading the frame rate")?,
    })
}

fn list_images(dir: &Path) -> Result<Vec<PathBuf>, CameraError> {
    let bad = |problem: String| CameraError::Folder {
        path: dir.to_owned(),
        problem,
    };
    let entries = std::fs::read_dir(dir).map_err(|e| bad(e.to_string()))?;
    let mut files = Vec::new();
    for e in entries {
        let p = e.map_err(|e| bad(e.to_string()))?.path();
        let ext = p
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        if ext.is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.as_str())) {
            files.push(p);
        }
    }
    if files.is_empty() {
        return Err(bad(format!(
            "holds no images (looked for {})",
            IMAGE_EXTENSIONS.join(", ")
        )));
    }
    files.sort();
    Ok(files)
}

fn read_image(path: &Path) -> Result<Mat, CameraError> {
    let img = imgcodecs::imread(path.to_string_lossy().as_ref(), imgcodecs::IMREAD_COLOR)
        .ok()
        .filter(|m| !m.empty());
    img.ok_or_else(|| CameraError::Folder {
        path: path.to_owned(),
        problem: "is not a readable image".into(),
    })
}

/// Converts whatever the backend delivered to 8-bit BGR.
fn to_bgr8(img: Mat) -> Result<Mat, CameraError> {
    match img.channels() {
        3 if img.depth() == opencv::core::CV_8U => Ok(img),
        1 | 4 if img.depth() == opencv::core::CV_8U => {
            let code = if img.channels() == 1 {
                imgproc::COLOR_GRAY2BGR
            } else {
                imgproc::COLOR_BGRA2BGR
            };
            let mut out = Mat::default();
            cv_ctx(
                imgproc::cvt_color(&img, &mut out, code, 0),
                "converting to BGR",
            )?;
            Ok(out)
        }
        n => Err(CameraError::SyntheticConfig(format!(
            "unsupported frame format: {n} channels, depth {}",
            img.depth()
        ))),
    }
}

impl CameraSource for OpenCvCamera {
    fn next_frame(&mut self) -> Result<Option<Frame>, CameraError> {
        let (image, t) = match self.target.clone() {
            CaptureTarget::Device(dev) => {
                let img = self.read_device(&dev)?;
                (img, Instant::now())
            }
            CaptureTarget::Video(path) => {
                let Some(cap) = self.cap.as_mut() else {
                    return Ok(None);
                };
                let mut img = Mat::default();
                let ok = cap.read(&mut img).unwrap_or(false) && !img.empty();
                if !ok {
                    if self.seq == 0 {
                        return Err(CameraError::VideoUnreadable {
                            path,
                            problem: "opened, but no frame could be decoded".into(),
                        });
                    }
                    self.cap = None;
                    // Containers that estimate their count from the duration may be one frame
                    // off; more than that is damage.
                    if let Some(announced) = self.announced_frames {
                        if self.seq + 1 < announced {
                            return Err(CameraError::VideoEndedEarly {
                                path,
                                decoded: self.seq,
                                announced,
                            });
                        }
                    }
                    return Ok(None);
                }
                let pos_ms = cap.get(videoio::CAP_PROP_POS_MSEC).unwrap_or(0.0);
                let t_secs = if pos_ms > 0.0 || self.seq == 0 {
                    pos_ms / 1000.0
                } else {
                    self.seq as f64 / self.actual.fps.max(1.0)
                };
                (img, self.start + Duration::from_secs_f64(t_secs.max(0.0)))
            }
            CaptureTarget::Folder(_) => {
                let Some(path) = self.files.get(self.seq as usize) else {
                    return Ok(None);
                };
                let img = read_image(path)?;
                // Image folders have no clock; number them at a nominal 30 fps.
                (
                    img,
                    self.start + Duration::from_secs_f64(self.seq as f64 / 30.0),
                )
            }
        };
        let frame = Frame {
            t,
            seq: self.seq,
            image: to_bgr8(image)?,
            camera_from_world_truth: None,
        };
        self.seq += 1;
        Ok(Some(frame))
    }

    fn describe(&self) -> String {
        let what = match &self.target {
            CaptureTarget::Device(d) => format!("camera device {d}"),
            CaptureTarget::Video(p) => format!("video {}", p.display()),
            CaptureTarget::Folder(p) => format!("image folder {}", p.display()),
        };
        let mut s = format!(
            "{what}: {}x{} at {:.1} fps",
            self.actual.width, self.actual.height, self.actual.fps
        );
        if let Some(n) = self.announced_frames {
            s += &format!(", {n} frames");
        }
        if let (CaptureTarget::Device(_), Some((w, h))) = (&self.target, self.request.size) {
            s += &format!(" (requested {w}x{h}");
            if let Some(f) = self.request.fps {
                s += &format!(" at {f} fps");
            }
            s += ")";
        }
        s
    }
}
