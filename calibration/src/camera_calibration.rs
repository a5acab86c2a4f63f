//! Camera intrinsics calibration from views of a chessboard: detection of the board's inner
//! corners in each image, a check that the views are numerous and varied enough, and OpenCV's
//! `calibrateCamera` (pinhole + k1, k2, p1, p2, k3).
//!
//! A calibration is refused, with a message saying what to do, when there are fewer views than
//! [`CalibrationOptions::min_views`], when fewer than that many are distinct from each other
//! (same place, size and tilt in the image), when too few views are tilted (a face-on board
//! cannot separate the focal length from the distance), or when the result's own uncertainty
//! says the views did not pin the focal length down.

use crate::intrinsics::CameraIntrinsics;
use nalgebra::{Point2, Point3};
use opencv::core::{Mat, Point2f, Point3f, Size, TermCriteria, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// The calibration target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BoardSpec {
    /// A chessboard: inner corners across and down, square side in metres.
    Chessboard {
        /// Inner corners across (squares across − 1).
        inner_cols: u32,
        /// Inner corners down (squares down − 1).
        inner_rows: u32,
        /// Side of a square, metres.
        square_m: f64,
    },
}

impl BoardSpec {
    /// The printed board of `assets/markers/chessboard_9x6_25mm.png`.
    pub const DEFAULT: Self = Self::Chessboard {
        inner_cols: 9,
        inner_rows: 6,
        square_m: 0.025,
    };

    /// Parses `chessboard:COLSxROWS:SQUARE_M` (inner corners, metres), e.g. `chessboard:9x6:0.025`.
    pub fn parse(spec: &str) -> Result<Self, CalibrationError> {
        let bad = |why: &str| {
            CalibrationError::BadBoard(format!(
                "`{spec}`: {why}; expected chessboard:COLSxROWS:SQUARE_M (inner corners, metres), e.g. chessboard:9x6:0.025"
            ))
        };
        let parts: Vec<&str> = spec.split(':').collect();
        match parts.as_slice() {
            ["chessboard", size, square] => {
                let (c, r) = size
                    .split_once(['x', 'X'])
                    .ok_or_else(|| bad("the size needs an x"))?;
                let inner_cols: u32 = c.parse().map_err(|_| bad("bad column count"))?;
                let inner_rows: u32 = r.parse().map_err(|_| bad("bad row count"))?;
                let square_m: f64 = square.parse().map_err(|_| bad("bad square size"))?;
                if inner_cols < 3 || inner_rows < 3 {
                    return Err(bad("at least 3x3 inner corners are needed"));
                }
                if !(square_m > 0.0 && square_m < 1.0) {
                    return Err(bad("the square side is in metres, between 0 and 1"));
                }
                Ok(Self::Chessboard {
                    inner_cols,
                    inner_rows,
                    square_m,
                })
            }
            ["charuco", ..] => Err(bad(
                "ChArUco boards are not supported yet; print the chessboard",
            )),
            _ => Err(bad("unknown board kind")),
        }
    }

    /// The board's corner positions in its own frame (z = 0), in detection order.
    pub fn object_points(&self) -> Vec<Point3<f64>> {
        match *self {
            Self::Chessboard {
                inner_cols,
                inner_rows,
                square_m,
            } => (0..inner_rows)
                .flat_map(|r| {
                    (0..inner_cols)
                        .map(move |c| Point3::new(c as f64 * square_m, r as f64 * square_m, 0.0))
                })
                .collect(),
        }
    }
}

/// One image in which the whole board was found.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardView {
    /// Detected corners, pixels, in [`BoardSpec::object_points`] order.
    pub image_points: Vec<Point2<f64>>,
    /// Where the view came from (file name or frame number), for messages.
    pub label: String,
}

/// Limits on the set of views.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrationOptions {
    /// Fewest distinct views accepted.
    pub min_views: usize,
    /// Fewest views tilted by a noticeable perspective (see [`view_signature`]).
    pub min_tilted_views: usize,
    /// Two views closer than this in every signature component are the same view.
    pub alike_threshold: f64,
    /// Largest accepted standard deviation of fx, fy, cx or cy relative to fx.
    pub max_relative_std: f64,
}

impl Default for CalibrationOptions {
    /// 10 distinct views, 4 of them tilted, views alike within 5 % of the image, parameters
    /// known to 1 %.
    fn default() -> Self {
        Self {
            min_views: 10,
            min_tilted_views: 4,
            alike_threshold: 0.05,
            max_relative_std: 0.01,
        }
    }
}

/// A successful calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraCalibration {
    /// The intrinsics, with `rms_px` set.
    pub intrinsics: CameraIntrinsics,
    /// RMS reprojection error of each view, pixels.
    pub per_view_rms_px: Vec<f64>,
    /// Standard deviations of fx, fy, cx, cy, pixels (from OpenCV's covariance estimate).
    pub std_px: [f64; 4],
    /// Views used.
    pub views: usize,
}

/// Why a calibration failed.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The board description is wrong.
    #[error("board {0}")]
    BadBoard(String),
    /// Not enough views with the whole board.
    #[error("only {found} views show the whole board; at least {needed} are needed (move the board to more places: corners of the image, near and far, tilted)")]
    TooFewViews {
        /// Views given.
        found: usize,
        /// Views needed.
        needed: usize,
    },
    /// Views repeat each other.
    #[error("the views are too alike: {distinct} distinct views of {found}, at least {needed} needed ({hint})")]
    TooAlike {
        /// Distinct views found.
        distinct: usize,
        /// Views given.
        found: usize,
        /// Distinct views needed.
        needed: usize,
        /// What to change.
        hint: String,
    },
    /// The solution is too uncertain.
    #[error("the views do not determine {parameter}: standard deviation {std_px:.2} px ({percent:.2} % of fx); add tilted views from other directions")]
    Uncertain {
        /// The parameter.
        parameter: &'static str,
        /// Its standard deviation, pixels.
        std_px: f64,
        /// Relative to fx, percent.
        percent: f64,
    },
    /// A view's image size differs from the others.
    #[error("view {label} is {got:?} pixels but the others are {expected:?}")]
    SizeMismatch {
        /// The view.
        label: String,
        /// Its size.
        got: (u32, u32),
        /// The others' size.
        expected: (u32, u32),
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

fn cv<T>(r: opencv::Result<T>, context: &'static str) -> Result<T, CalibrationError> {
    r.map_err(|source| CalibrationError::OpenCv { context, source })
}

/// Finds the whole board in `image` (BGR or gray); `None` if it is not entirely visible.
pub fn detect_board(
    image: &Mat,
    spec: &BoardSpec,
    label: &str,
) -> Result<Option<BoardView>, CalibrationError> {
    let gray = if image.channels() == 1 {
        image.clone()
    } else {
        let mut g = Mat::default();
        cv(
            imgproc::cvt_color(image, &mut g, imgproc::COLOR_BGR2GRAY, 0),
            "converting to gray",
        )?;
        g
    };
    match *spec {
        BoardSpec::Chessboard {
            inner_cols,
            inner_rows,
            ..
        } => {
            let pattern = Size::new(inner_cols as i32, inner_rows as i32);
            let mut corners = Vector::<Point2f>::new();
            let found = cv(
                calib3d::find_chessboard_corners_sb(
                    &gray,
                    pattern,
                    &mut corners,
                    calib3d::CALIB_CB_NORMALIZE_IMAGE
                        | calib3d::CALIB_CB_EXHAUSTIVE
                        | calib3d::CALIB_CB_ACCURACY,
                ),
                "finding the chessboard",
            )?;
            if !found || corners.len() != (inner_cols * inner_rows) as usize {
                return Ok(None);
            }
            Ok(Some(BoardView {
                image_points: corners
                    .iter()
                    .map(|p| Point2::new(p.x as f64, p.y as f64))
                    .collect(),
                label: label.to_owned(),
            }))
        }
    }
}

/// Where, how large and how tilted the board looks: centre (x, y) and size as fractions of the
/// image diagonal, and two perspective ratios (difference of opposite sides over their mean;
/// 0 for a face-on board).
pub fn view_signature(view: &BoardView, spec: &BoardSpec, image_size: (u32, u32)) -> [f64; 5] {
    let BoardSpec::Chessboard {
        inner_cols,
        inner_rows,
        ..
    } = *spec;
    let (c, r) = (inner_cols as usize, inner_rows as usize);
    let p = &view.image_points;
    let (tl, tr, bl, br) = (p[0], p[c - 1], p[(r - 1) * c], p[r * c - 1]);
    let diag = ((image_size.0 as f64).powi(2) + (image_size.1 as f64).powi(2)).sqrt();
    let centre = p
        .iter()
        .fold(nalgebra::Vector2::zeros(), |a, q| a + q.coords)
        / p.len() as f64;
    let (top, bottom) = ((tr - tl).norm(), (br - bl).norm());
    let (left, right) = ((bl - tl).norm(), (br - tr).norm());
    let size = (top + bottom + left + right) / 4.0;
    [
        centre.x / diag,
        centre.y / diag,
        size / diag,
        (top - bottom) / (0.5 * (top + bottom)).max(1e-9),
        (left - right) / (0.5 * (left + right)).max(1e-9),
    ]
}

/// Perspective ratio above which a view counts as tilted (≈ 15–20° at arm's length).
const TILTED: f64 = 0.05;

/// Calibrates from `views` of `spec` in images of `image_size`, refusing unsuitable view sets.
pub fn calibrate(
    views: &[BoardView],
    spec: &BoardSpec,
    image_size: (u32, u32),
    options: &CalibrationOptions,
) -> Result<CameraCalibration, CalibrationError> {
    if views.len() < options.min_views {
        return Err(CalibrationError::TooFewViews {
            found: views.len(),
            needed: options.min_views,
        });
    }
    let sigs: Vec<[f64; 5]> = views
        .iter()
        .map(|v| view_signature(v, spec, image_size))
        .collect();
    let mut distinct: Vec<[f64; 5]> = Vec::new();
    for s in &sigs {
        let alike = distinct.iter().any(|d| {
            d.iter()
                .zip(s)
                .all(|(a, b)| (a - b).abs() < options.alike_threshold)
        });
        if !alike {
            distinct.push(*s);
        }
    }
    if distinct.len() < options.min_views {
        return Err(CalibrationError::TooAlike {
            distinct: distinct.len(),
            found: views.len(),
            needed: options.min_views,
            hint: "move or tilt the board between views".into(),
        });
    }
    let tilted = distinct
        .iter()
        .filter(|s| s[3].abs().max(s[4].abs()) > TILTED)
        .count();
    if tilted < options.min_tilted_views {
        return Err(CalibrationError::TooAlike {
            distinct: tilted,
            found: views.len(),
            needed: options.min_tilted_views,
            hint: format!(
                "only {tilted} views are tilted; tilt the board 20–45° toward each side in several views"
            ),
        });
    }

    let object: Vector<Point3f> = spec
        .object_points()
        .iter()
        .map(|p| Point3f::new(p.x as f32, p.y as f32, p.z as f32))
        .collect();
    let mut object_points = Vector::<Vector<Point3f>>::new();
    let mut image_points = Vector::<Vector<Point2f>>::new();
    for v in views {
        object_points.push(object.clone());
        image_points.push(
            v.image_points
                .iter()
                .map(|p| Point2f::new(p.x as f32, p.y as f32))
                .collect(),
        );
    }
    let mut k = Mat::default();
    let mut dist = Mat::default();
    let mut rvecs = Vector::<Mat>::new();
    let mut tvecs = Vector::<Mat>::new();
    let mut std_intr = Mat::default();
    let mut std_extr = Mat::default();
    let mut per_view = Mat::default();
    let criteria = cv(
        TermCriteria::new(
            opencv::core::TermCriteria_COUNT + opencv::core::TermCriteria_EPS,
            100,
            1e-12,
        ),
        "criteria",
    )?;
    let rms = cv(
        calib3d::calibrate_camera_extended(
            &object_points,
            &image_points,
            Size::new(image_size.0 as i32, image_size.1 as i32),
            &mut k,
            &mut dist,
            &mut rvecs,
            &mut tvecs,
            &mut std_intr,
            &mut std_extr,
            &mut per_view,
            0,
            criteria,
        ),
        "calibrating",
    )?;
    let kv = cv(k.data_typed::<f64>(), "reading the camera matrix")?;
    let dv = cv(dist.data_typed::<f64>(), "reading the distortion")?;
    let sv = cv(std_intr.data_typed::<f64>(), "reading the uncertainties")?;
    let pv = cv(per_view.data_typed::<f64>(), "reading per-view errors")?;
    if kv.len() != 9 || dv.len() < 5 || sv.len() < 4 {
        return Err(CalibrationError::OpenCv {
            context: "calibrating",
            source: opencv::Error::new(
                opencv::core::StsBadSize,
                "unexpected result sizes".to_string(),
            ),
        });
    }
    let mut dist5 = [0.0; 5];
    dist5.copy_from_slice(&dv[..5]);
    let intrinsics = CameraIntrinsics {
        image_width: image_size.0,
        image_height: image_size.1,
        fx: kv[0],
        fy: kv[4],
        cx: kv[2],
        cy: kv[5],
        dist: dist5,
        rms_px: Some(rms),
    };
    let std_px = [sv[0], sv[1], sv[2], sv[3]];
    for (name, s) in ["fx", "fy", "cx", "cy"].into_iter().zip(std_px) {
        if !(s.is_finite() && s <= options.max_relative_std * intrinsics.fx) {
            return Err(CalibrationError::Uncertain {
                parameter: name,
                std_px: s,
                percent: 100.0 * s / intrinsics.fx,
            });
        }
    }
    Ok(CameraCalibration {
        intrinsics,
        per_view_rms_px: pv.to_vec(),
        std_px,
        views: views.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_spec_parses_and_explains_mistakes() {
        assert_eq!(
            BoardSpec::parse("chessboard:9x6:0.025").unwrap(),
            BoardSpec::DEFAULT
        );
        let e = BoardSpec::parse("chessboard:9-6:0.025")
            .unwrap_err()
            .to_string();
        assert!(e.contains("9-6") && e.contains("COLSxROWS"), "{e}");
        let e = BoardSpec::parse("chessboard:9x6:25")
            .unwrap_err()
            .to_string();
        assert!(e.contains("metres"), "{e}");
    }

    fn face_on_view(spec: &BoardSpec, offset: f64) -> BoardView {
        BoardView {
            image_points: spec
                .object_points()
                .iter()
                .map(|p| Point2::new(100.0 + offset + 2000.0 * p.x, 100.0 + 2000.0 * p.y))
                .collect(),
            label: format!("{offset}"),
        }
    }

    #[test]
    fn too_few_views_are_refused() {
        let spec = BoardSpec::DEFAULT;
        let views: Vec<_> = (0..3)
            .map(|i| face_on_view(&spec, 50.0 * i as f64))
            .collect();
        let e = calibrate(&views, &spec, (640, 480), &CalibrationOptions::default()).unwrap_err();
        assert!(
            matches!(
                e,
                CalibrationError::TooFewViews {
                    found: 3,
                    needed: 10
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn repeated_and_face_on_views_are_refused_as_too_alike() {
        let spec = BoardSpec::DEFAULT;
        let same: Vec<_> = (0..12)
            .map(|i| face_on_view(&spec, 0.5 * i as f64))
            .collect();
        let e = calibrate(&same, &spec, (640, 480), &CalibrationOptions::default()).unwrap_err();
        assert!(
            matches!(e, CalibrationError::TooAlike { distinct: 1, .. }),
            "{e}"
        );
        // Distinct places but all face-on: still refused, for lack of tilt.
        let spread: Vec<_> = (0..12)
            .map(|i| face_on_view(&spec, 40.0 * i as f64))
            .collect();
        let e = calibrate(&spread, &spec, (1200, 480), &CalibrationOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("tilt"), "{e}");
    }
}
