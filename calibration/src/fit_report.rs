//! The calibration as the user sees it: both fits on a checked point set, per-point residuals
//! and RMS in millimetres, which fit won, how far the raw pseudo-inverse block was from a
//! rotation, how well the point set conditions the problem, and which points look mis-picked.

use crate::linalg::singular_values;
use crate::point_set::{check_point_set, principal_spread_m, PointSetError};
use crate::rigid_fit::{fit_pinv_qr, fit_svd, FitError, FitMethod, RigidFit};
use nalgebra::{DMatrix, Isometry3, Matrix3, Matrix4, Point3};
use std::fmt;

/// A pair is a likely mis-pick when its residual exceeds this multiple of the median residual…
pub const MISPICK_MEDIAN_FACTOR: f64 = 3.0;
/// …and also exceeds this absolute residual (m), so that a very good fit flags nothing.
pub const MISPICK_MIN_RESIDUAL_M: f64 = 0.001;

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
    /// The raw affine T = [P]_world · pinv([P]_arm) before the QR correction.
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
    let arm = DMatrix::from_fn(
        4,
        p_in_arm.len(),
        |r, c| {
            if r < 3 {
                p_in_arm[c][r]
            } else {
                1.0
            }
        },
    );
    let arm_matrix_condition = singular_values(&arm)
        .and_then(|s| Some(s.first()? / s.last()?))
        .unwrap_or(f64::INFINITY);
    let world_spread_m = principal_spread_m(p_in_world).unwrap_or([0.0; 3]);
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
    };
    report.suspects = mispick_suspects(&report.chosen_fit().residuals_m);
    Ok(report)
}

impl FitReport {
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
