//! The marker tracker: ArUco detection with sub-pixel corners, camera pose by solvePnP
//! (IPPE_SQUARE for one marker, IPPE for a grid board) refined by Levenberg–Marquardt, the
//! reprojection error, holding the last pose for a while when the marker is lost, and one-euro
//! smoothing.

use super::config::TrackerConfig;
use super::edge_refine::{refine_corners, GrayView};
use super::one_euro::PoseSmoother;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::camera::Frame;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector2, Vector3};
use opencv::core::{Mat, Point2f, Point3f, Ptr, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{aruco, calib3d, imgproc};
use std::time::Instant;

/// The camera pose found in one frame.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerPose {
    /// Capture time of the frame.
    pub t: Instant,
    /// Sequence number of the frame.
    pub frame_seq: u64,
    /// The camera pose (smoothed when smoothing is on), OpenCV camera axes.
    pub camera_from_world: Isometry3<f64>,
    /// The unsmoothed pose solvePnP found in this frame.
    pub camera_from_world_raw: Isometry3<f64>,
    /// RMS distance between the detected corners and the raw pose's reprojection, pixels.
    pub reprojection_error_px: f64,
    /// Marker corners used (4 per marker).
    pub corners_used: usize,
}

/// What the tracker says about one frame.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkerObservation {
    /// The marker was found in this frame.
    Detected(MarkerPose),
    /// Not found in this frame; the last pose is repeated because it is younger than the hold
    /// time. `pose.frame_seq` and `pose.t` are those of the frame it was found in.
    Held {
        /// The last detected pose.
        pose: MarkerPose,
        /// Time since that pose, seconds.
        age_secs: f64,
    },
    /// Not found, and no recent pose to hold.
    NotDetected {
        /// Capture time of the frame.
        t: Instant,
        /// Sequence number of the frame.
        frame_seq: u64,
    },
}

impl MarkerObservation {
    /// The pose to draw with (detected or held), if any.
    pub fn pose(&self) -> Option<&MarkerPose> {
        match self {
            Self::Detected(p) | Self::Held { pose: p, .. } => Some(p),
            Self::NotDetected { .. } => None,
        }
    }

    /// The pose only if it was detected in this very frame.
    pub fn detected(&self) -> Option<&MarkerPose> {
        match self {
            Self::Detected(p) => Some(p),
            _ => None,
        }
    }
}

/// What went wrong in the tracker (not "marker not found", which is an observation).
#[derive(Debug, thiserror::Error)]
pub enum TrackingError {
    /// The configuration cannot work.
    #[error("tracker configuration: {0}")]
    Config(String),
    /// The frame is not what the tracker expects.
    #[error("frame {seq}: {problem}")]
    BadFrame {
        /// Frame sequence number.
        seq: u64,
        /// What is wrong.
        problem: String,
    },
    /// An OpenCV call failed.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: &'static str,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

fn cv<T>(r: opencv::Result<T>, context: &'static str) -> Result<T, TrackingError> {
    r.map_err(|source| TrackingError::OpenCv { context, source })
}

/// Finds the marker (or board) in frames and estimates `camera_from_world`.
pub struct MarkerTracker {
    config: TrackerConfig,
    intrinsics: CameraIntrinsics,
    dictionary: Ptr<aruco::Dictionary>,
    parameters: Ptr<aruco::DetectorParameters>,
    camera_matrix: Mat,
    dist_coeffs: Mat,
    /// Object points (world frame) of each marker id's four corners, OpenCV corner order.
    marker_corners_in_world: Vec<(i32, [Point3<f64>; 4])>,
    smoother: Option<PoseSmoother>,
    last: Option<MarkerPose>,
    /// Where to look first in the next frame (around the last detection).
    search_roi: Option<opencv::core::Rect>,
    gray: Mat,
}

impl std::fmt::Debug for MarkerTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkerTracker")
            .field("config", &self.config)
            .field("intrinsics", &self.intrinsics)
            .finish_non_exhaustive()
    }
}

/// Corners of a square marker of side `l` centred at (`cx`, `cy`) in the z = 0 plane, in
/// OpenCV's order: top-left, top-right, bottom-right, bottom-left (y up the page).
fn square_corners(cx: f64, cy: f64, l: f64) -> [Point3<f64>; 4] {
    let h = l / 2.0;
    [
        Point3::new(cx - h, cy + h, 0.0),
        Point3::new(cx + h, cy + h, 0.0),
        Point3::new(cx + h, cy - h, 0.0),
        Point3::new(cx - h, cy - h, 0.0),
    ]
}

impl MarkerTracker {
    /// A tracker for `config` with the camera `intrinsics`.
    pub fn new(
        config: TrackerConfig,
        intrinsics: &CameraIntrinsics,
    ) -> Result<Self, TrackingError> {
        let dictionary = cv(
            aruco::get_predefined_dictionary_i32(config.dictionary.0),
            "loading the ArUco dictionary",
        )?;
        let n_ids = config.dictionary.marker_count();
        let marker_corners_in_world = match config.board {
            None => {
                if !(0..n_ids).contains(&config.marker_id) {
                    return Err(TrackingError::Config(format!(
                        "marker id {} is not in dictionary {} (ids 0..{})",
                        config.marker_id,
                        config.dictionary.name(),
                        n_ids - 1
                    )));
                }
                if !(config.marker_length_m.is_finite() && config.marker_length_m > 0.0) {
                    return Err(TrackingError::Config(format!(
                        "marker length must be a positive number of metres, got {}",
                        config.marker_length_m
                    )));
                }
                vec![(
                    config.marker_id,
                    square_corners(0.0, 0.0, config.marker_length_m),
                )]
            }
            Some(b) => {
                let (l, s) = (b.marker_length_m, b.separation_m);
                if !(l > 0.0 && s >= 0.0 && b.markers_x > 0 && b.markers_y > 0) {
                    return Err(TrackingError::Config(
                        "grid board needs at least one marker, a positive marker length and a non-negative separation".into(),
                    ));
                }
                let last_id = b.first_id + (b.markers_x * b.markers_y) as i32 - 1;
                if b.first_id < 0 || last_id >= n_ids {
                    return Err(TrackingError::Config(format!(
                        "grid board ids {}..={last_id} do not fit dictionary {}",
                        b.first_id,
                        config.dictionary.name()
                    )));
                }
                let pitch = l + s;
                let w = b.markers_x as f64 * l + (b.markers_x - 1) as f64 * s;
                let h = b.markers_y as f64 * l + (b.markers_y - 1) as f64 * s;
                let mut v = Vec::new();
                for row in 0..b.markers_y {
                    for col in 0..b.markers_x {
                        let cx = -w / 2.0 + l / 2.0 + col as f64 * pitch;
                        let cy = h / 2.0 - l / 2.0 - row as f64 * pitch;
                        let id = b.first_id + (row * b.markers_x + col) as i32;
                        v.push((id, square_corners(cx, cy, l)));
                    }
                }
                v
            }
        };
        let mut parameters = cv(
            aruco::DetectorParameters::create(),
            "creating detector parameters",
        )?;
        // Two adaptive-threshold windows instead of OpenCV's three (3, 13, 23 px): contour
        // tracing of a textured desk dominates detection time, and the 7 and 17 px windows
        // still find the marker from 0.3 to 0.8 m and up to 50° off-axis (tests/tracking.rs).
        parameters.set_adaptive_thresh_win_size_min(7);
        parameters.set_min_marker_perimeter_rate(0.1);
        parameters.set_adaptive_thresh_win_size_max(17);
        parameters.set_adaptive_thresh_win_size_step(10);
        parameters.set_corner_refinement_method(aruco::CORNER_REFINE_SUBPIX);
        parameters.set_corner_refinement_win_size(5);
        parameters.set_corner_refinement_max_iterations(50);
        parameters.set_corner_refinement_min_accuracy(0.01);
        let k = intrinsics.camera_matrix();
        let camera_matrix = cv(
            Mat::from_slice_2d(&[
                [k[(0, 0)], k[(0, 1)], k[(0, 2)]],
                [k[(1, 0)], k[(1, 1)], k[(1, 2)]],
                [k[(2, 0)], k[(2, 1)], k[(2, 2)]],
            ]),
            "camera matrix",
        )?;
        let dist_coeffs = cv(Mat::from_slice_2d(&[intrinsics.dist]), "distortion")?;
        Ok(Self {
            smoother: config.smoothing.map(PoseSmoother::new),
            config,
            intrinsics: intrinsics.clone(),
            dictionary,
            parameters,
            camera_matrix,
            dist_coeffs,
            marker_corners_in_world,
            last: None,
            search_roi: None,
            gray: Mat::default(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &TrackerConfig {
        &self.config
    }

    /// Detects the marker in `frame` and estimates the camera pose.
    pub fn process(&mut self, frame: &Frame) -> Result<MarkerObservation, TrackingError> {
        let (w, h) = (frame.image.cols(), frame.image.rows());
        if (w as u32, h as u32) != (self.intrinsics.image_width, self.intrinsics.image_height) {
            return Err(TrackingError::BadFrame {
                seq: frame.seq,
                problem: format!(
                    "image is {w}x{h} but the camera file is for {}x{}",
                    self.intrinsics.image_width, self.intrinsics.image_height
                ),
            });
        }
        let raw = self.estimate(frame)?;
        Ok(self.finish(frame, raw))
    }

    /// Detection and pose only: `(camera_from_world, reprojection RMS px, corners used)`.
    fn estimate(
        &mut self,
        frame: &Frame,
    ) -> Result<Option<(Isometry3<f64>, f64, usize)>, TrackingError> {
        let gray = match frame.image.channels() {
            1 => frame.image.clone(),
            3 => {
                cv(
                    imgproc::cvt_color(&frame.image, &mut self.gray, imgproc::COLOR_BGR2GRAY, 0),
                    "converting to gray",
                )?;
                self.gray.clone()
            }
            n => {
                return Err(TrackingError::BadFrame {
                    seq: frame.seq,
                    problem: format!("{n} channels; expected BGR or gray"),
                })
            }
        };
        // While tracking one marker, search first around where it was in the last frame:
        // contour tracing over the whole textured scene is most of the detection time.
        let mut found = None;
        if let Some(roi) = self.search_roi.take() {
            let region = cv(Mat::roi(&gray, roi), "cropping the search region")?;
            let (c, ids) = self.detect(&region, (roi.x as f32, roi.y as f32))?;
            if ids.iter().any(|id| id == self.config.marker_id) {
                found = Some((c, ids));
            }
        }
        let (corners, ids) = match found {
            Some(f) => f,
            None => self.detect(&gray, (0.0, 0.0))?,
        };
        let mut object = Vector::<Point3f>::new();
        let mut image = Vector::<Point2f>::new();
        for (i, id) in ids.iter().enumerate() {
            let Some((_, world)) = self.marker_corners_in_world.iter().find(|(m, _)| *m == id)
            else {
                continue;
            };
            let c = cv(corners.get(i), "reading corners")?;
            if c.len() != 4 {
                continue;
            }
            let mut px = [Vector2::zeros(); 4];
            for (k, p) in c.iter().enumerate() {
                px[k] = Vector2::new(p.x as f64, p.y as f64);
            }
            let view = GrayView {
                data: cv(gray.data_bytes(), "reading the gray image")?,
                width: gray.cols() as usize,
                height: gray.rows() as usize,
            };
            if let Some(refined) = refine_corners(&view, &self.intrinsics, &px) {
                px = refined;
            }
            for (p_img, p_world) in px.iter().zip(world) {
                object.push(Point3f::new(p_world.x as f32, p_world.y as f32, 0.0));
                image.push(Point2f::new(p_img.x as f32, p_img.y as f32));
            }
        }
        if object.is_empty() {
            return Ok(None);
        }
        // A marker seen twice (the single-marker mode and two copies in view) is ambiguous:
        // refuse rather than average two different places.
        if self.config.board.is_none() && object.len() != 4 {
            log::debug!(
                "frame {}: marker id seen {} times; ignored",
                frame.seq,
                object.len() / 4
            );
            return Ok(None);
        }
        let method = if self.config.board.is_none() {
            calib3d::SOLVEPNP_IPPE_SQUARE
        } else {
            calib3d::SOLVEPNP_IPPE
        };
        let mut rvec = Mat::default();
        let mut tvec = Mat::default();
        let ok = cv(
            calib3d::solve_pnp(
                &object,
                &image,
                &self.camera_matrix,
                &self.dist_coeffs,
                &mut rvec,
                &mut tvec,
                false,
                method,
            ),
            "solvePnP",
        )?;
        if !ok {
            return Ok(None);
        }
        let criteria = cv(
            TermCriteria::new(
                opencv::core::TermCriteria_COUNT + opencv::core::TermCriteria_EPS,
                30,
                1e-10,
            ),
            "criteria",
        )?;
        cv(
            calib3d::solve_pnp_refine_lm(
                &object,
                &image,
                &self.camera_matrix,
                &self.dist_coeffs,
                &mut rvec,
                &mut tvec,
                criteria,
            ),
            "refining the pose",
        )?;
        let mut reprojected = Vector::<Point2f>::new();
        cv(
            calib3d::project_points(
                &object,
                &rvec,
                &tvec,
                &self.camera_matrix,
                &self.dist_coeffs,
                &mut reprojected,
                &mut opencv::core::no_array(),
                0.0,
            ),
            "reprojecting",
        )?;
        let sum2: f64 = image
            .iter()
            .zip(reprojected.iter())
            .map(|(a, b)| ((a.x - b.x) as f64).powi(2) + ((a.y - b.y) as f64).powi(2))
            .sum();
        let rms = (sum2 / image.len() as f64).sqrt();
        let r = vec3_of(&rvec)?;
        let t = vec3_of(&tvec)?;
        let pose =
            Isometry3::from_parts(Translation3::from(t), UnitQuaternion::from_scaled_axis(r));
        if !(rms.is_finite() && t.iter().all(|v| v.is_finite()) && t.z > 0.0) {
            return Ok(None);
        }
        if rms > self.config.max_reprojection_error_px {
            log::debug!(
                "frame {}: pose rejected, reprojection {rms:.2} px",
                frame.seq
            );
            return Ok(None);
        }
        if self.config.board.is_none() && self.config.search_around_last {
            self.search_roi = search_region(&image, gray.cols(), gray.rows());
        }
        Ok(Some((pose, rms, image.len())))
    }

    fn finish(
        &mut self,
        frame: &Frame,
        raw: Option<(Isometry3<f64>, f64, usize)>,
    ) -> MarkerObservation {
        match raw {
            Some((pose, rms, n)) => {
                let smoothed = match (&mut self.smoother, &self.last) {
                    (Some(s), Some(last)) => {
                        let dt = frame.t.saturating_duration_since(last.t).as_secs_f64();
                        if dt > self.config.hold_secs {
                            s.reset();
                        }
                        s.filter(&pose, dt)
                    }
                    (Some(s), None) => {
                        s.reset();
                        s.filter(&pose, 0.0)
                    }
                    (None, _) => pose,
                };
                let p = MarkerPose {
                    t: frame.t,
                    frame_seq: frame.seq,
                    camera_from_world: smoothed,
                    camera_from_world_raw: pose,
                    reprojection_error_px: rms,
                    corners_used: n,
                };
                self.last = Some(p.clone());
                MarkerObservation::Detected(p)
            }
            None => {
                if let Some(last) = &self.last {
                    let age_secs = frame.t.saturating_duration_since(last.t).as_secs_f64();
                    if age_secs <= self.config.hold_secs {
                        return MarkerObservation::Held {
                            pose: last.clone(),
                            age_secs,
                        };
                    }
                }
                MarkerObservation::NotDetected {
                    t: frame.t,
                    frame_seq: frame.seq,
                }
            }
        }
    }
}

impl MarkerTracker {
    /// ArUco detection in `image`; corners are shifted by `offset` (the crop's origin).
    fn detect(
        &self,
        image: &impl opencv::core::ToInputArray,
        offset: (f32, f32),
    ) -> Result<(Vector<Vector<Point2f>>, Vector<i32>), TrackingError> {
        let mut corners = Vector::<Vector<Point2f>>::new();
        let mut ids = Vector::<i32>::new();
        let mut rejected = Vector::<Vector<Point2f>>::new();
        cv(
            aruco::detect_markers(
                image,
                &self.dictionary,
                &mut corners,
                &mut ids,
                &self.parameters,
                &mut rejected,
            ),
            "detecting markers",
        )?;
        if offset != (0.0, 0.0) {
            let shifted = corners
                .iter()
                .map(|c| {
                    c.iter()
                        .map(|p| Point2f::new(p.x + offset.0, p.y + offset.1))
                        .collect::<Vector<Point2f>>()
                })
                .collect();
            return Ok((shifted, ids));
        }
        Ok((corners, ids))
    }
}

/// The box around `points` grown by half its size (at least 24 px) on each side, clipped to
/// the image: where a marker seen in one frame can be in the next at hand-held speeds.
fn search_region(points: &Vector<Point2f>, width: i32, height: i32) -> Option<opencv::core::Rect> {
    let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for p in points.iter() {
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x);
        y1 = y1.max(p.y);
    }
    let grow = (0.5 * (x1 - x0).max(y1 - y0)).max(24.0);
    let left = ((x0 - grow).floor() as i32).clamp(0, width - 1);
    let top = ((y0 - grow).floor() as i32).clamp(0, height - 1);
    let right = ((x1 + grow).ceil() as i32).clamp(left + 1, width);
    let bottom = ((y1 + grow).ceil() as i32).clamp(top + 1, height);
    Some(opencv::core::Rect::new(
        left,
        top,
        right - left,
        bottom - top,
    ))
}

fn vec3_of(m: &Mat) -> Result<Vector3<f64>, TrackingError> {
    let v = cv(m.data_typed::<f64>(), "reading a pose vector")?;
    if v.len() != 3 {
        return Err(TrackingError::Config(format!(
            "solvePnP returned {} values instead of 3",
            v.len()
        )));
    }
    Ok(Vector3::new(v[0], v[1], v[2]))
}
