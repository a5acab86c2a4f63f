//! The two rigid fits of `world_from_arm` from touched points: the paper's pseudo-inverse +
//! QR (Mariti & Valentini, Eq. 1–8) and the SVD (Kabsch/Umeyama) least-squares fit.
//!
//! Both take matched points `p_in_world[i] ↔ p_in_arm[i]` and return a proper rigid transform.
//! They do not judge the point set (see [`crate::point_set`]) and do not choose between
//! themselves (see [`crate::fit_report`]); they only refuse to return a transform that their
//! decomposition cannot determine.

use crate::linalg::{orthogonality_error, proper_qr, pseudo_inverse, svd};
use nalgebra::{
    DMatrix, Isometry3, Matrix3, Matrix4, Point3, Rotation3, Translation3, UnitQuaternion, Vector3,
};

/// Relative cut-off for singular values treated as zero in the pseudo-inverse of the 4×N
/// homogeneous arm-point matrix. The point-set checks refuse sets anywhere near this, so it
/// only guards against rounding turning a rank-3 matrix into a huge inverse.
pub const PINV_REL_EPS: f64 = 1e-12;

/// Relative size below which a diagonal entry of R (QR) or a singular value (SVD) means the
/// rotation is not determined by the data.
pub const RANK_REL_EPS: f64 = 1e-9;

/// Which fit produced a transform.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FitMethod {
    /// T = [P]_world · pinv([P]_arm), rotation block made proper by QR, translation re-fitted.
    PinvQr,
    /// Kabsch/Umeyama: rotation from the SVD of the centred cross-covariance, then translation.
    Svd,
}

impl FitMethod {
    /// The short name used in files and printouts (`pinv+qr`, `svd`).
    pub fn name(self) -> &'static str {
        match self {
            FitMethod::PinvQr => "pinv+qr",
            FitMethod::Svd => "svd",
        }
    }
}

impl std::fmt::Display for FitMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a fit could not produce a transform.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The two point lists differ in length.
    #[error("{world} world points but {arm} arm points")]
    LengthMismatch {
        /// Number of world points.
        world: usize,
        /// Number of arm points.
        arm: usize,
    },
    /// Fewer points than the fit needs.
    #[error("{got} point pairs; the fit needs at least {needed}")]
    TooFewPoints {
        /// Number given.
        got: usize,
        /// Minimum.
        needed: usize,
    },
    /// A coordinate is NaN or infinite.
    #[error("point pair {index} has a non-finite coordinate")]
    NonFinite {
        /// 0-based index of the pair.
        index: usize,
    },
    /// The decomposition failed or the data do not determine a rotation.
    #[error("{method} fit: {reason}")]
    Degenerate {
        /// Which fit.
        method: FitMethod,
        /// What the decomposition found.
        reason: &'static str,
    },
}

/// A rigid transform produced by one of the fits.
#[derive(Debug, Clone, PartialEq)]
pub struct RigidFit {
    /// Which fit produced it.
    pub method: FitMethod,
    /// The transform taking arm-frame points to world (marker) frame points.
    pub world_from_arm: Isometry3<f64>,
    /// Its rotation as a matrix exactly as the fit computed it (orthonormal, det +1).
    pub rotation: Matrix3<f64>,
}

impl RigidFit {
    /// Distances |world_from_arm · p_in_arm − p_in_world| for each pair, metres.
    pub fn residuals_m(&self, p_in_world: &[Point3<f64>], p_in_arm: &[Point3<f64>]) -> Vec<f64> {
        p_in_world
            .iter()
            .zip(p_in_arm)
            .map(|(w, a)| (self.world_from_arm * a - w).norm())
            .collect()
    }
}

/// What the pseudo-inverse fit found before the QR correction.
#[derive(Debug, Clone, PartialEq)]
pub struct PinvQrFit {
    /// The proper rigid transform (QR rotation, re-fitted translation).
    pub fit: RigidFit,
    /// The raw least-squares affine T = [P]_world · pinv([P]_arm) (Eq. 7, factors in the
    /// order that makes [P]_world = T · [P]_arm).
    pub raw_affine: Matrix4<f64>,
    /// ‖AᵀA − I‖_F of T's 3×3 block A: how far the raw fit was from a rotation.
    pub raw_orthogonality_error: f64,
    /// The raw block had det < 0 (mirrored data, e.g. a left-handed object file).
    pub raw_was_reflection: bool,
}

fn check_pairs(p_in_world: &[Point3<f64>], p_in_arm: &[Point3<f64>]) -> Result<(), FitError> {
    if p_in_world.len() != p_in_arm.len() {
        return Err(FitError::LengthMismatch {
            world: p_in_world.len(),
            arm: p_in_arm.len(),
        });
    }
    if p_in_world.len() < 4 {
        return Err(FitError::TooFewPoints {
            got: p_in_world.len(),
            needed: 4,
        });
    }
    for (index, (w, a)) in p_in_world.iter().zip(p_in_arm).enumerate() {
        if w.iter().chain(a.iter()).any(|v| !v.is_finite()) {
            return Err(FitError::NonFinite { index });
        }
    }
    Ok(())
}

fn homogeneous(points: &[Point3<f64>]) -> DMatrix<f64> {
    DMatrix::from_fn(
        4,
        points.len(),
        |r, c| {
            if r < 3 {
                points[c][r]
            } else {
                1.0
            }
        },
    )
}

fn centroid(points: &[Point3<f64>]) -> Point3<f64> {
    let sum = points
        .iter()
        .fold(Vector3::zeros(), |acc, p| acc + p.coords);
    Point3::from(sum / points.len() as f64)
}

fn isometry(rotation: &Matrix3<f64>, translation: Vector3<f64>) -> Isometry3<f64> {
    let rot = Rotation3::from_matrix_unchecked(*rotation);
    Isometry3::from_parts(
        Translation3::from(translation),
        UnitQuaternion::from_rotation_matrix(&rot),
    )
}

/// The translation that best maps `p_in_arm` onto `p_in_world` for a fixed rotation
/// (the least-squares optimum is the difference of centroids).
fn refit_translation(
    rotation: &Matrix3<f64>,
    p_in_world: &[Point3<f64>],
    p_in_arm: &[Point3<f64>],
) -> Vector3<f64> {
    centroid(p_in_world).coords - rotation * centroid(p_in_arm).coords
}

/// The paper's fit: solve [P]_world = T · [P]_arm for the 4×4 T in the least-squares sense
/// with the pseudo-inverse, make T's 3×3 block a proper rotation by QR (signs fixed so that
/// det = +1), and re-fit the translation for that rotation.
pub fn fit_pinv_qr(
    p_in_world: &[Point3<f64>],
    p_in_arm: &[Point3<f64>],
) -> Result<PinvQrFit, FitError> {
    check_pairs(p_in_world, p_in_arm)?;
    let degenerate = |reason| FitError::Degenerate {
        method: FitMethod::PinvQr,
        reason,
    };
    let arm = homogeneous(p_in_arm);
    let world = homogeneous(p_in_world);
    let arm_pinv = pseudo_inverse(&arm, PINV_REL_EPS)
        .ok_or(degenerate("the SVD of the arm points did not converge"))?;
    let t = world * arm_pinv;
    let raw_affine = Matrix4::from_fn(|r, c| t[(r, c)]);
    let block: Matrix3<f64> = raw_affine.fixed_view::<3, 3>(0, 0).into_owned();
    let qr = proper_qr(&block, RANK_REL_EPS).ok_or(degenerate(
        "the raw 3×3 block is rank-deficient (points coplanar or collinear in the arm frame)",
    ))?;
    let translation = refit_translation(&qr.q, p_in_world, p_in_arm);
    Ok(PinvQrFit {
        fit: RigidFit {
            method: FitMethod::PinvQr,
            world_from_arm: isometry(&qr.q, translation),
            rotation: qr.q,
        },
        raw_orthogonality_error: orthogonality_error(&block),
        raw_was_reflection: qr.was_reflection,
        raw_affine,
    })
}

/// The Kabsch/Umeyama fit (no scale): the rotation minimising Σ|R a_i + t − w_i|² from the SVD
/// of the centred cross-covariance H = Σ (a_i − ā)(w_i − w̄)ᵀ = U S Vᵀ, R = V diag(1, 1, d) Uᵀ
/// with d = ±1 making det R = +1; then t = w̄ − R ā.
pub fn fit_svd(p_in_world: &[Point3<f64>], p_in_arm: &[Point3<f64>]) -> Result<RigidFit, FitError> {
    check_pairs(p_in_world, p_in_arm)?;
    let degenerate = |reason| FitError::Degenerate {
        method: FitMethod::Svd,
        reason,
    };
    let world_c = centroid(p_in_world);
    let arm_c = centroid(p_in_arm);
    let mut h = Matrix3::zeros();
    for (w, a) in p_in_world.iter().zip(p_in_arm) {
        h += (a - arm_c) * (w - world_c).transpose();
    }
    let d = svd(&DMatrix::from_column_slice(3, 3, h.as_slice())).ok_or(degenerate(
        "the SVD of the cross-covariance did not converge",
    ))?;
    let s = &d.singular_values;
    if s[1].is_nan() || s[1] <= RANK_REL_EPS * s[0] {
        return Err(degenerate(
            "the cross-covariance has rank < 2 (points collinear): the rotation is not determined",
        ));
    }
    // Take the two well-determined singular vector pairs, re-orthonormalised, and complete each
    // basis with a cross product: U and V are then proper rotations even when σ3 ≈ 0
    // (coplanar-ish points), and H = U diag(σ1, σ2, ±σ3) Vᵀ. The optimal proper rotation
    // for this signed SVD is V Uᵀ, which is Kabsch's V diag(1, 1, sign det(V Uᵀ)) Uᵀ.
    let proper_basis = |m: &DMatrix<f64>| -> Option<Matrix3<f64>> {
        let c0 = Vector3::new(m[(0, 0)], m[(1, 0)], m[(2, 0)]).try_normalize(f64::EPSILON)?;
        let c1 = Vector3::new(m[(0, 1)], m[(1, 1)], m[(2, 1)]);
        let c1 = (c1 - c0 * c0.dot(&c1)).try_normalize(f64::EPSILON)?;
        Some(Matrix3::from_columns(&[c0, c1, c0.cross(&c1)]))
    };
    let u = proper_basis(&d.u).ok_or(degenerate("the left singular vectors are degenerate"))?;
    let v = proper_basis(&d.v).ok_or(degenerate("the right singular vectors are degenerate"))?;
    let rotation = v * u.transpose();
    let translation = refit_translation(&rotation, p_in_world, p_in_arm);
    Ok(RigidFit {
        method: FitMethod::Svd,
        world_from_arm: isometry(&rotation, translation),
        rotation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube_corners() -> Vec<Point3<f64>> {
        let mut v = Vec::new();
        for &x in &[0.07, 0.15] {
            for &y in &[-0.04, 0.04] {
                for &z in &[0.0, 0.08] {
                    v.push(Point3::new(x, y, z));
                }
            }
        }
        v
    }

    fn truth() -> Isometry3<f64> {
        Isometry3::new(Vector3::new(0.3, -0.5, 0.1), Vector3::new(0.4, -1.2, 2.0))
    }

    #[test]
    fn both_fits_recover_an_exact_transform() {
        let world = cube_corners();
        let arm: Vec<_> = world.iter().map(|p| truth().inverse() * p).collect();
        let pq = fit_pinv_qr(&world, &arm).unwrap();
        let svd = fit_svd(&world, &arm).unwrap();
        for fit in [&pq.fit, &svd] {
            let err = (fit.world_from_arm.to_homogeneous() - truth().to_homogeneous()).norm();
            assert!(err < 1e-12, "{}: {err}", fit.method);
        }
        assert!(pq.raw_orthogonality_error < 1e-12);
        assert!(!pq.raw_was_reflection);
        let last_row = pq.raw_affine.row(3) - Matrix4::identity().row(3);
        assert!(last_row.norm() < 1e-12);
    }

    #[test]
    fn mirrored_data_are_reported_as_a_reflection_and_still_give_a_rotation() {
        let world = cube_corners();
        let arm: Vec<_> = world
            .iter()
            .map(|p| {
                let q = truth().inverse() * p;
                Point3::new(q.x, q.y, -q.z)
            })
            .collect();
        let pq = fit_pinv_qr(&world, &arm).unwrap();
        assert!(pq.raw_was_reflection);
        assert!((pq.fit.rotation.determinant() - 1.0).abs() < 1e-12);
        let svd = fit_svd(&world, &arm).unwrap();
        assert!((svd.rotation.determinant() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn collinear_points_are_refused_by_both_fits() {
        let world: Vec<_> = (0..5)
            .map(|i| Point3::new(0.01 * i as f64, 0.0, 0.0))
            .collect();
        let arm = world.clone();
        assert!(matches!(
            fit_svd(&world, &arm),
            Err(FitError::Degenerate { .. })
        ));
        assert!(matches!(
            fit_pinv_qr(&world, &arm),
            Err(FitError::Degenerate { .. })
        ));
    }
}
