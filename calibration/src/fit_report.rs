//! The calibration as the user sees it: both fits on a checked point set, per-point residuals
//! and RMS in millimetres, which fit won, how far the raw pseudo-inverse block was from a
//! rotation, how well the point set conditions the problem, and which points look mis-picked.

use crate::linalg::singular_values;
use crate::point_set::{check_point_set, principal_spread_m, PointSetError};
use crate::rigid_fit::{fit_pinv_qr, fit_svd, homogeneous, FitError, FitMethod, RigidFit};
use nalgebra::{Isometry3, Matrix3, Matrix4, Point3};
use std::fmt;

/// A pair is a likely mis-pick when its residual exceeds this multiple of the median residual…
pub const MISPICK_MEDIAN_FACTOR: f64 = 3.0;
/// …and also exceeds this absolute residual (m), so that a very good fit flags nothing.
pub const MISPICK_MIN_RESIDUAL_M: f64 = 0.001;

/// Touch precision of a MicroScribe-class arm with a careful user, m (σ per axis).
pub const ARM_PRECISION_M: f64 = 0.0002;
/// A fit is written only when its RMS residual is at most this multiple of
/// [`ARM_PRECISION_M`] (25 × 0.2 mm = 5 mm). Good touches give 0.2–0.4 mm; a single 5 mm
/// mis-pick among eight corners gives ~2 mm and is still written (and flagged); mirrored,
/// rescaled or mixed-unit points give tens of millimetres to metres.
pub const MAX_RMS_OVER_PRECISION: f64 = 25.0;
/// The arm points' spread over the world points' spread may differ from 1 by at most this
/// before the fit is refused as a scale (unit or object) mismatch. Touch noise moves it by
/// ~0.3 % on the 80 mm cube, one 5 mm mis-pick by ~1 %.
pub const MAX_SCALE_DEVIATION: f64 = 0.05;

/// The known points of a desk calibration (a cube, a sheet, a few marks round the marker)
/// spread far less than this (m, RMS along their longest principal axis); sets that spread
/// more on both sides are millimetres read as metres.
pub const MAX_DESK_SPREAD_M: f64 = 2.0;
/// A desk digitizer arm reaches ~0.6 to 1.7 m (MicroScribe models); arm points farther than
/// this from the arm's base (its coordinate origin), or a base farther than this from the
/// marker, are not a desk rig's (an offset added to one side, another frame's coordinates),
/// and such a fit is ill-conditioned besides (the homogeneous arm matrix's condition number
/// grows with the distance).
pub const MAX_ARM_DISTANCE_M: f64 = 5.0;

/// Why a computed fit must not be written as the calibration (see [`FitReport::check`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitRejection {
    /// The arm points are ~1000× the world points.
    #[error(
        "the arm points span {ratio:.0}× the known points: they look like millimetres; \
         divide arm_x, arm_y, arm_z by 1000 (both sides must be in metres)"
    )]
    ArmInMillimetres {
        /// Arm spread / world spread.
        ratio: f64,
    },
    /// The world points are ~1000× the arm points.
    #[error(
        "the known points span {:.0}× the arm points: they look like millimetres; \
         divide world_x, world_y, world_z by 1000 (both sides must be in metres)", 1.0 / ratio
    )]
    WorldInMillimetres {
        /// Arm spread / world spread.
        ratio: f64,
    },
    /// Both point sets spread tens of metres at the same scale.
    #[error(
        "both point sets span about {spread_m:.0} m (RMS along their longest axis) at the same \
         scale: they look like millimetres on both sides; divide world_x, world_y, world_z and \
         arm_x, arm_y, arm_z by 1000 (both sides must be in metres)"
    )]
    BothInMillimetres {
        /// The known points' RMS spread along their longest principal axis, m.
        spread_m: f64,
    },
    /// The arm's base would stand implausibly far from the points it touched or the marker.
    #[error(
        "implausible arm base: the fit puts the arm's base {base_from_marker_m:.1} m from the \
         marker and the touched points up to {reach_m:.1} m from the base (a desk digitizer \
         reaches under 2 m; the bound is {MAX_ARM_DISTANCE_M} m), with the arm-point matrix's \
         condition number at {condition:.1e}: the arm coordinates are not the arm's own (an \
         offset added to one side, or another frame's coordinates)"
    )]
    ImplausibleBase {
        /// |world_from_arm's translation|, m.
        base_from_marker_m: f64,
        /// The largest |p_in_arm|, m.
        reach_m: f64,
        /// The homogeneous arm-point matrix's condition number.
        condition: f64,
    },
    /// The raw fit is a reflection: no rotation maps one set onto the other.
    #[error(
        "the arm points are a mirror image of the known points (the raw fit has det < 0; \
         RMS {rms_mm:.1} mm): an axis is flipped or two columns are swapped on one side"
    )]
    Reflection {
        /// RMS residual of the best rotation, mm.
        rms_mm: f64,
    },
    /// The two sets differ in size by more than [`MAX_SCALE_DEVIATION`].
    #[error(
        "the arm points span {ratio:.3}× the known points (more than {:.0} % off): \
         not the same object at the same scale (wrong calibration object, or a unit other \
         than metres)", MAX_SCALE_DEVIATION * 100.0
    )]
    Scale {
        /// Arm spread / world spread.
        ratio: f64,
    },
    /// The residual is over the bound.
    #[error(
        "RMS residual {rms_mm:.2} mm is over the {limit_mm:.1} mm bound \
         ({MAX_RMS_OVER_PRECISION}× the arm's {:.1} mm precision): the points do not fit a \
         rigid motion; measure the flagged points again", ARM_PRECISION_M * 1e3
    )]
    Residual {
        /// RMS residual of the chosen fit, mm.
        rms_mm: f64,
        /// The bound, mm.
        limit_mm: f64,
    },
}

/// Why no calibration could be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    /// The point set cannot determine a transform.
    #[error(transparent)]
    PointSet(#[from] PointSetError),
    /// A fit's decomposition failed.
    #[error(transparent)]
    Fit(#[from] FitError),
}

/// One fit's transform and how well it explains the data.
#[derive(Debug, Clone, PartialEq)]
pub struct FitSummary {
    /// The transform, method and rotation matrix.
    pub fit: RigidFit,
    /// |world_from_arm · p_in_arm − p_in_world| per pair, m.
    pub residuals_m: Vec<f64>,
    /// Root mean square of `residuals_m`, m.
    pub rms_m: f64,
}

impl FitSummary {
    fn new(fit: RigidFit, p_in_world: &[Point3<f64>], p_in_arm: &[Point3<f64>]) -> Self {
        let residuals_m = fit.residuals_m(p_in_world, p_in_arm);
        Self {
            rms_m: rms(&residuals_m),
            residuals_m,
            fit,
        }
    }
}

/// The outcome of a calibration: both fits, the chosen one, diagnostics and mis-pick flags.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// The paper's pseudo-inverse + QR fit.
    pub pinv_qr: FitSummary,
    /// The Kabsch/Umeyama SVD fit.
    pub svd: FitSummary,
    /// The fit with the smaller RMS residual (the SVD fit on a tie).
    pub chosen: FitMethod,
    /// The raw affine `T = [P]_world · pinv([P]_arm)` before the QR correction.
    pub raw_affine: Matrix4<f64>,
    /// ‖AᵀA − I‖_F of T's 3×3 block: 0 for perfect data, grows with noise and mis-picks.
    pub raw_orthogonality_error: f64,
    /// T's 3×3 block had det < 0: the data are mirrored (wrong handedness somewhere).
    pub raw_was_reflection: bool,
    /// σ_max / σ_min of the 4×N homogeneous arm-point matrix that the pseudo-inverse inverts.
    pub arm_matrix_condition: f64,
    /// RMS extent of the known points along their principal axes, m (largest first); the
    /// smallest says how far the set is from coplanar.
    pub world_spread_m: [f64; 3],
    /// 0-based indices of likely mis-picks (residual > 3× median and > 1 mm), worst first.
    pub suspects: Vec<usize>,
    /// RMS distance of the arm points from their centroid over that of the world points:
    /// 1 for the same object in the same unit, ~1000 for arm points in millimetres.
    pub arm_over_world_scale: f64,
    /// The largest distance of an arm point from the arm's base (its origin), m.
    pub arm_reach_m: f64,
}

fn rms(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    (values.iter().map(|v| v * v).sum::<f64>() / values.len() as f64).sqrt()
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// Indices whose residual is over [`MISPICK_MEDIAN_FACTOR`] × the median and over
/// [`MISPICK_MIN_RESIDUAL_M`], worst first.
pub fn mispick_suspects(residuals_m: &[f64]) -> Vec<usize> {
    let threshold = (MISPICK_MEDIAN_FACTOR * median(residuals_m)).max(MISPICK_MIN_RESIDUAL_M);
    let mut out: Vec<usize> = (0..residuals_m.len())
        .filter(|&i| residuals_m[i] > threshold)
        .collect();
    out.sort_by(|&a, &b| residuals_m[b].total_cmp(&residuals_m[a]));
    out
}

/// Checks the point set, runs both fits, chooses the one with the smaller RMS residual and
/// flags likely mis-picks.
pub fn calibrate(
    p_in_world: &[Point3<f64>],
    p_in_arm: &[Point3<f64>],
) -> Result<FitReport, CalibrationError> {
    check_point_set(p_in_world, p_in_arm)?;
    let pq = fit_pinv_qr(p_in_world, p_in_arm)?;
    let svd = FitSummary::new(fit_svd(p_in_world, p_in_arm)?, p_in_world, p_in_arm);
    let pinv_qr = FitSummary::new(pq.fit, p_in_world, p_in_arm);
    let chosen = if pinv_qr.rms_m < svd.rms_m {
        FitMethod::PinvQr
    } else {
        FitMethod::Svd
    };
    let arm_matrix_condition = singular_values(&homogeneous(p_in_arm))
        .and_then(|s| Some(s.first()? / s.last()?))
        .unwrap_or(f64::INFINITY);
    let world_spread_m = principal_spread_m(p_in_world).unwrap_or([0.0; 3]);
    let arm_over_world_scale = centroid_spread_m(p_in_arm) / centroid_spread_m(p_in_world);
    let mut report = FitReport {
        pinv_qr,
        svd,
        chosen,
        raw_affine: pq.raw_affine,
        raw_orthogonality_error: pq.raw_orthogonality_error,
        raw_was_reflection: pq.raw_was_reflection,
        arm_matrix_condition,
        world_spread_m,
        suspects: Vec::new(),
        arm_over_world_scale,
        arm_reach_m: p_in_arm.iter().map(|p| p.coords.norm()).fold(0.0, f64::max),
    };
    report.suspects = mispick_suspects(&report.chosen_fit().residuals_m);
    Ok(report)
}

/// RMS distance of the points from their centroid, m.
fn centroid_spread_m(points: &[Point3<f64>]) -> f64 {
    let n = points.len().max(1) as f64;
    let c = points
        .iter()
        .fold(nalgebra::Vector3::zeros(), |a, p| a + p.coords)
        / n;
    (points
        .iter()
        .map(|p| (p.coords - c).norm_squared())
        .sum::<f64>()
        / n)
        .sqrt()
}

impl FitReport {
    /// Whether the fit may be written as the calibration: the units agree (no ~1000× scale on
    /// one side, no desk-sized set in millimetres on both), the arm's base stands within
    /// [`MAX_ARM_DISTANCE_M`] of the marker and of the points, the data are not mirrored, the two point sets have the same size within
    /// [`MAX_SCALE_DEVIATION`], and the RMS residual is within
    /// [`MAX_RMS_OVER_PRECISION`] × [`ARM_PRECISION_M`]. The first failed check is returned,
    /// most specific cause first.
    pub fn check(&self) -> Result<(), FitRejection> {
        let ratio = self.arm_over_world_scale;
        if (300.0..3000.0).contains(&ratio) {
            return Err(FitRejection::ArmInMillimetres { ratio });
        }
        if ratio > 0.0 && (300.0..3000.0).contains(&(1.0 / ratio)) {
            return Err(FitRejection::WorldInMillimetres { ratio });
        }
        let spread_m = self.world_spread_m[0];
        if spread_m > MAX_DESK_SPREAD_M && (0.5..2.0).contains(&ratio) {
            return Err(FitRejection::BothInMillimetres { spread_m });
        }
        let base_from_marker_m = self.world_from_arm().translation.vector.norm();
        if base_from_marker_m.max(self.arm_reach_m) > MAX_ARM_DISTANCE_M
            || !base_from_marker_m.is_finite()
        {
            return Err(FitRejection::ImplausibleBase {
                base_from_marker_m,
                reach_m: self.arm_reach_m,
                condition: self.arm_matrix_condition,
            });
        }
        if self.raw_was_reflection {
            return Err(FitRejection::Reflection {
                rms_mm: self.rms_mm(),
            });
        }
        // NaN (a degenerate set) fails too.
        if (ratio - 1.0).abs() > MAX_SCALE_DEVIATION || ratio.is_nan() {
            return Err(FitRejection::Scale { ratio });
        }
        let limit_mm = MAX_RMS_OVER_PRECISION * ARM_PRECISION_M * 1e3;
        if self.rms_mm() > limit_mm || self.rms_mm().is_nan() {
            return Err(FitRejection::Residual {
                rms_mm: self.rms_mm(),
                limit_mm,
            });
        }
        Ok(())
    }

    /// The summary of the chosen fit.
    pub fn chosen_fit(&self) -> &FitSummary {
        match self.chosen {
            FitMethod::PinvQr => &self.pinv_qr,
            FitMethod::Svd => &self.svd,
        }
    }

    /// The chosen transform.
    pub fn world_from_arm(&self) -> Isometry3<f64> {
        self.chosen_fit().fit.world_from_arm
    }

    /// The chosen rotation matrix (orthonormal, det +1).
    pub fn rotation(&self) -> Matrix3<f64> {
        self.chosen_fit().fit.rotation
    }

    /// RMS residual of the chosen fit, mm.
    pub fn rms_mm(&self) -> f64 {
        self.chosen_fit().rms_m * 1e3
    }
}

impl fmt::Display for FitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let other = match self.chosen {
            FitMethod::PinvQr => &self.svd,
            FitMethod::Svd => &self.pinv_qr,
        };
        writeln!(
            f,
            "world_from_arm ({} fit chosen: RMS {:.3} mm; {} fit RMS {:.3} mm), metres:",
            self.chosen,
            self.rms_mm(),
            other.fit.method,
            other.rms_m * 1e3
        )?;
        let m = self.world_from_arm().to_homogeneous();
        for r in 0..4 {
            writeln!(
                f,
                "  [{:>13.9}, {:>13.9}, {:>13.9}, {:>13.9}]",
                m[(r, 0)],
                m[(r, 1)],
                m[(r, 2)],
                m[(r, 3)]
            )?;
        }
        writeln!(f, "residuals (mm):")?;
        writeln!(f, "  point   pinv+qr       svd")?;
        for i in 0..self.svd.residuals_m.len() {
            let flag = if self.suspects.contains(&i) {
                "   <- likely mis-pick"
            } else {
                ""
            };
            writeln!(
                f,
                "  {:>5} {:>9.3} {:>9.3}{flag}",
                i + 1,
                self.pinv_qr.residuals_m[i] * 1e3,
                self.svd.residuals_m[i] * 1e3
            )?;
        }
        writeln!(
            f,
            "  RMS   {:>9.3} {:>9.3}",
            self.pinv_qr.rms_m * 1e3,
            self.svd.rms_m * 1e3
        )?;
        writeln!(
            f,
            "raw pinv block: orthogonality error |AᵀA - I| = {:.3e}{}",
            self.raw_orthogonality_error,
            if self.raw_was_reflection {
                " — it is a REFLECTION (det < 0): the data look mirrored"
            } else {
                ""
            }
        )?;
        write!(
            f,
            "conditioning: arm-point matrix condition number {:.1}; known points spread {:.1} / {:.1} / {:.1} mm RMS along their principal axes",
            self.arm_matrix_condition,
            self.world_spread_m[0] * 1e3,
            self.world_spread_m[1] * 1e3,
            self.world_spread_m[2] * 1e3
        )?;
        if !self.suspects.is_empty() {
            let list: Vec<String> = self.suspects.iter().map(|i| (i + 1).to_string()).collect();
            write!(
                f,
                "\nlikely mis-picks (residual > {MISPICK_MEDIAN_FACTOR}× median and > {} mm): point {}",
                MISPICK_MIN_RESIDUAL_M * 1e3,
                list.join(", ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Isometry3, Vector3};

    /// The 80 mm cube's corners and where an arm at a fixed pose touches them (exact).
    fn cube() -> (Vec<Point3<f64>>, Vec<Point3<f64>>) {
        let truth = Isometry3::new(Vector3::new(0.2, -0.1, 0.05), Vector3::new(0.1, 0.2, 0.9));
        let world: Vec<_> = (0..8)
            .map(|i| {
                Point3::new(
                    0.08 * (i & 1) as f64,
                    0.08 * ((i >> 1) & 1) as f64,
                    0.08 * ((i >> 2) & 1) as f64,
                )
            })
            .collect();
        let arm = world.iter().map(|w| truth.inverse() * w).collect();
        (world, arm)
    }

    #[test]
    fn a_good_fit_passes_the_check() {
        let (world, arm) = cube();
        let report = calibrate(&world, &arm).unwrap();
        assert_eq!(report.check(), Ok(()));
        assert!((report.arm_over_world_scale - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mirrored_points_are_refused_as_a_reflection() {
        let (world, arm) = cube();
        let mirrored: Vec<_> = arm.iter().map(|p| Point3::new(-p.x, p.y, p.z)).collect();
        let report = calibrate(&world, &mirrored).unwrap();
        let err = report.check().unwrap_err();
        assert!(matches!(err, FitRejection::Reflection { .. }), "{err}");
        assert!(err.to_string().contains("mirror image"), "{err}");
    }

    #[test]
    fn millimetre_arm_points_are_refused_with_the_fix_named() {
        let (world, arm) = cube();
        let mm: Vec<_> = arm.iter().map(|p| p * 1000.0).collect();
        let err = calibrate(&world, &mm).unwrap().check().unwrap_err();
        assert!(
            matches!(err, FitRejection::ArmInMillimetres { .. }),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("divide arm_x, arm_y, arm_z by 1000"),
            "{err}"
        );
        let mm_world: Vec<_> = world.iter().map(|p| p * 1000.0).collect();
        let err = calibrate(&mm_world, &arm).unwrap().check().unwrap_err();
        assert!(
            matches!(err, FitRejection::WorldInMillimetres { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("divide world_x"), "{err}");
    }

    /// Millimetres on both sides fit a rigid motion at the same scale; with the touch noise
    /// in them (0.2 mm read as 0.2 m) they used to be refused as "do not fit a rigid motion".
    #[test]
    fn millimetres_on_both_sides_are_named_as_millimetres() {
        let (world, arm) = cube();
        let noisy: Vec<_> = arm
            .iter()
            .enumerate()
            .map(|(i, p)| (p + Vector3::new(2e-4, -1e-4, 1.5e-4) * (i % 3) as f64) * 1000.0)
            .collect();
        let mm_world: Vec<_> = world.iter().map(|p| p * 1000.0).collect();
        for arm in [noisy, arm.iter().map(|p| p * 1000.0).collect()] {
            let err = calibrate(&mm_world, &arm).unwrap().check().unwrap_err();
            assert!(
                matches!(err, FitRejection::BothInMillimetres { .. }),
                "{err}"
            );
            let text = err.to_string();
            assert!(text.contains("millimetres on both sides"), "{err}");
            assert!(
                text.contains("divide world_x, world_y, world_z and arm_x"),
                "{err}"
            );
        }
    }

    /// The arm's coordinates 1 km off (the fit itself is exact): refused as implausible, with
    /// the distances and the condition number named.
    #[test]
    fn an_arm_base_a_kilometre_away_is_refused_as_implausible() {
        let (world, arm) = cube();
        let far: Vec<_> = arm
            .iter()
            .map(|p| p + Vector3::new(1000.0, 0.0, 0.0))
            .collect();
        let report = calibrate(&world, &far).unwrap();
        assert!(report.rms_mm() < 1e-3, "{}", report.rms_mm());
        let err = report.check().unwrap_err();
        let FitRejection::ImplausibleBase {
            base_from_marker_m,
            reach_m,
            condition,
        } = err
        else {
            panic!("{err}")
        };
        assert!((base_from_marker_m - 1000.0).abs() < 1.0, "{err}");
        assert!((reach_m - 1000.0).abs() < 1.0, "{err}");
        assert!(condition > 1e4, "{err}");
        assert!(
            err.to_string()
                .starts_with("implausible arm base: the fit puts"),
            "{err}"
        );
        // The same with the offset on the known points' side: the base 1 km from the marker.
        let far_world: Vec<_> = world
            .iter()
            .map(|p| p + Vector3::new(0.0, 1000.0, 0.0))
            .collect();
        let err = calibrate(&far_world, &arm).unwrap().check().unwrap_err();
        assert!(matches!(err, FitRejection::ImplausibleBase { .. }), "{err}");
    }

    #[test]
    fn twice_the_scale_is_refused() {
        let (world, arm) = cube();
        let twice: Vec<_> = arm.iter().map(|p| p * 2.0).collect();
        let err = calibrate(&world, &twice).unwrap().check().unwrap_err();
        assert_eq!(
            err,
            FitRejection::Scale {
                ratio: calibrate(&world, &twice).unwrap().arm_over_world_scale
            }
        );
        assert!(err.to_string().contains("2.000×"), "{err}");
    }

    #[test]
    fn a_residual_over_the_bound_is_refused_and_one_under_passes() {
        let (world, arm) = cube();
        // Alternating ±6 mm along z keeps the scale but cannot be fitted away.
        let shaken: Vec<_> = arm
            .iter()
            .enumerate()
            .map(|(i, p)| p + Vector3::new(0.0, 0.0, if i % 3 == 0 { 0.012 } else { -0.006 }))
            .collect();
        let report = calibrate(&world, &shaken).unwrap();
        let err = report.check().unwrap_err();
        assert!(
            matches!(err, FitRejection::Residual { .. }),
            "{err} {}",
            report.rms_mm()
        );
        // One 5 mm slip among eight corners: flagged, but within the bound.
        let mut slipped = arm.clone();
        slipped[3] += Vector3::new(0.003, 0.0, 0.004);
        let report = calibrate(&world, &slipped).unwrap();
        assert_eq!(report.check(), Ok(()), "RMS {} mm", report.rms_mm());
    }

    #[test]
    fn median_and_mispicks() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        // Over 3× median but under 1 mm: not flagged.
        assert!(mispick_suspects(&[0.0001, 0.0001, 0.0001, 0.0008]).is_empty());
        // Over 1 mm but not over 3× median: not flagged.
        assert!(mispick_suspects(&[0.0009, 0.001, 0.0011, 0.0015]).is_empty());
        assert_eq!(
            mispick_suspects(&[0.0002, 0.004, 0.0003, 0.0002, 0.002]),
            vec![1, 4]
        );
    }
}
