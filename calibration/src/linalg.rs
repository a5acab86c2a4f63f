//! The decompositions the paper's fit rests on: a singular value decomposition, the
//! Moore–Penrose pseudo-inverse built on it, and a QR factorisation whose Q is a proper
//! rotation.
//!
//! Every function takes an explicit epsilon or cap and returns `None` instead of an unusable
//! answer, so a caller never has to unwrap a decomposition.
//!
//! The SVD is a one-sided (Hestenes) Jacobi SVD rather than nalgebra's: nalgebra 0.35's
//! implicit-shift SVD returned factors that do not reproduce the matrix for some
//! rank-deficient inputs (found by this module's property test: ‖UΣVᵀ − A‖ = 0.14 for a rank-2
//! 4×7 matrix; upstream dimforge/nalgebra#1172 and #1072 report the same for 3×3 Kabsch
//! matrices with a near-zero singular value). One-sided Jacobi is slower but accurate to
//! rounding for every rank, and the matrices here are at most a few dozen columns.

use nalgebra::{DMatrix, Matrix3};

/// Sweep cap for the Jacobi SVD; it converges quadratically, typically in 5–10 sweeps, so
/// hitting the cap means the input is pathological and `None` is returned instead of a hang.
const JACOBI_MAX_SWEEPS: usize = 60;

/// A thin singular value decomposition `a = u · diag(σ) · vᵀ`, σ in descending order.
#[derive(Debug, Clone, PartialEq)]
pub struct ThinSvd {
    /// m×k, k = min(m, n); orthonormal columns where σ > 0. For σ = 0 the column is
    /// arbitrary (zero when m ≥ n), so only the columns of non-zero σ form a basis.
    pub u: DMatrix<f64>,
    /// The k singular values, largest first, all ≥ 0.
    pub singular_values: Vec<f64>,
    /// n×k; orthonormal columns where σ > 0 (all of them when m ≥ n).
    pub v: DMatrix<f64>,
}

impl ThinSvd {
    /// u · diag(σ) · vᵀ.
    pub fn recompose(&self) -> DMatrix<f64> {
        let mut us = self.u.clone();
        for (j, &s) in self.singular_values.iter().enumerate() {
            us.column_mut(j).scale_mut(s);
        }
        us * self.v.transpose()
    }
}

/// One-sided Jacobi SVD of a matrix with at least as many rows as columns.
fn jacobi_svd_tall(a: &DMatrix<f64>) -> Option<ThinSvd> {
    let (m, n) = a.shape();
    let mut w = a.clone();
    let mut v = DMatrix::<f64>::identity(n, n);
    // Columns whose squared norm is under this are numerically zero: rotating them against
    // each other only shuffles rounding noise and could keep the sweep from terminating.
    let negligible = (f64::EPSILON * a.norm()).powi(2);
    // Two columns count as orthogonal when their cosine is at rounding level for a dot
    // product of m terms: √m ε, as LAPACK's dgesvj. With ε alone, the rounding that a
    // rotation leaves behind can keep a pair above the bar sweep after sweep.
    let orthogonal_cosine = (m as f64).sqrt().max(1.0) * f64::EPSILON;
    let mut converged = false;
    for _ in 0..JACOBI_MAX_SWEEPS {
        let mut rotated = false;
        for p in 0..n {
            for q in p + 1..n {
                let alpha = w.column(p).norm_squared();
                let beta = w.column(q).norm_squared();
                let gamma = w.column(p).dot(&w.column(q));
                if alpha <= negligible || beta <= negligible {
                    continue;
                }
                if gamma.abs() <= orthogonal_cosine * (alpha * beta).sqrt() {
                    continue;
                }
                rotated = true;
                // The rotation that makes columns p and q orthogonal (Rutishauser's formulas).
                let zeta = (beta - alpha) / (2.0 * gamma);
                let t = zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt());
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = c * t;
                for mat in [&mut w, &mut v] {
                    for i in 0..mat.nrows() {
                        let xp = mat[(i, p)];
                        let xq = mat[(i, q)];
                        mat[(i, p)] = c * xp - s * xq;
                        mat[(i, q)] = s * xp + c * xq;
                    }
                }
            }
        }
        if !rotated {
            converged = true;
            break;
        }
    }
    if !converged {
        return None;
    }
    let mut order: Vec<(f64, usize)> = (0..n).map(|j| (w.column(j).norm(), j)).collect();
    order.sort_by(|x, y| y.0.total_cmp(&x.0));
    let mut u = DMatrix::zeros(m, n);
    let mut v_sorted = DMatrix::zeros(n, n);
    let mut singular_values = Vec::with_capacity(n);
    for (k, &(sigma, j)) in order.iter().enumerate() {
        if sigma > 0.0 {
            u.set_column(k, &(w.column(j) / sigma));
        }
        v_sorted.set_column(k, &v.column(j));
        singular_values.push(sigma);
    }
    Some(ThinSvd {
        u,
        singular_values,
        v: v_sorted,
    })
}

/// Thin SVD of any finite matrix. `None` for an empty or non-finite matrix, or if the Jacobi
/// sweeps do not converge within their cap.
pub fn svd(a: &DMatrix<f64>) -> Option<ThinSvd> {
    if a.is_empty() || a.iter().any(|v| !v.is_finite()) {
        return None;
    }
    if a.nrows() >= a.ncols() {
        jacobi_svd_tall(a)
    } else {
        // aᵀ = u σ vᵀ  ⇔  a = v σ uᵀ.
        let t = jacobi_svd_tall(&a.transpose())?;
        Some(ThinSvd {
            u: t.v,
            singular_values: t.singular_values,
            v: t.u,
        })
    }
}

/// The Moore–Penrose pseudo-inverse of `a`, `v · diag(σ⁺) · uᵀ` from its SVD.
///
/// Singular values at or below `rel_eps · σ_max` are treated as zero, which is what makes the
/// result the pseudo-inverse of the numerically-rank-deficient matrix instead of a blow-up.
/// Returns `None` when the SVD fails (empty or non-finite input) or `rel_eps` is negative.
pub fn pseudo_inverse(a: &DMatrix<f64>, rel_eps: f64) -> Option<DMatrix<f64>> {
    if rel_eps.is_nan() || rel_eps < 0.0 {
        return None;
    }
    let d = svd(a)?;
    let sigma_max = d.singular_values.first().copied().unwrap_or(0.0);
    let cutoff = rel_eps * sigma_max;
    let mut v_sigma_plus = d.v.clone();
    for (j, &s) in d.singular_values.iter().enumerate() {
        let inv = if s > cutoff && s > 0.0 { 1.0 / s } else { 0.0 };
        v_sigma_plus.column_mut(j).scale_mut(inv);
    }
    Some(v_sigma_plus * d.u.transpose())
}

/// The singular values of `a` in descending order, or `None` if the SVD fails.
pub fn singular_values(a: &DMatrix<f64>) -> Option<Vec<f64>> {
    Some(svd(a)?.singular_values)
}

/// A QR factorisation `a = q · r` of a 3×3 matrix with `q` a proper rotation.
#[derive(Debug, Clone, PartialEq)]
pub struct ProperQr {
    /// Orthonormal, det = +1.
    pub q: Matrix3<f64>,
    /// Upper triangular; its first two diagonal entries are positive, and the third is
    /// negative exactly when `a` is a reflection (det a < 0).
    pub r: Matrix3<f64>,
    /// Whether `a` had a negative determinant, so that the last sign had to be flipped to
    /// keep `q` a rotation (for a calibration this means mirrored data).
    pub was_reflection: bool,
}

/// Householder QR of `a` with the signs fixed so that `q` is a proper rotation.
///
/// Householder QR leaves the signs of R's diagonal arbitrary; flipping a column of Q together
/// with the matching row of R keeps the product, so the diagonal is made positive (the
/// unique "Gram–Schmidt" Q of a full-rank matrix). If that Q has det −1, `a` itself is a
/// reflection and the last column of Q and row of R are flipped once more. Returns `None`
/// when `a` is not finite or `|r_ii| ≤ rel_eps · ‖a‖_F` for some i (rank-deficient: Q is then
/// not determined by `a`).
pub fn proper_qr(a: &Matrix3<f64>, rel_eps: f64) -> Option<ProperQr> {
    if a.iter().any(|v| !v.is_finite()) || rel_eps.is_nan() || rel_eps < 0.0 {
        return None;
    }
    let scale = a.norm();
    if scale == 0.0 {
        return None;
    }
    let qr = a.qr();
    let mut q = qr.q();
    let mut r = qr.r();
    for i in 0..3 {
        let d = r[(i, i)];
        if d.abs() <= rel_eps * scale {
            return None;
        }
        if d < 0.0 {
            q.column_mut(i).neg_mut();
            r.row_mut(i).neg_mut();
        }
    }
    let was_reflection = q.determinant() < 0.0;
    if was_reflection {
        q.column_mut(2).neg_mut();
        r.row_mut(2).neg_mut();
    }
    Some(ProperQr {
        q,
        r,
        was_reflection,
    })
}

/// ‖mᵀm − I‖_F: how far `m` is from orthonormal (0 for a rotation).
pub fn orthogonality_error(m: &Matrix3<f64>) -> f64 {
    (m.transpose() * m - Matrix3::identity()).norm()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matrix3(values: &[f64]) -> Matrix3<f64> {
        Matrix3::from_row_slice(values)
    }

    /// A random matrix of the given shape and rank (rank ≤ min(rows, cols)), entries O(1).
    fn dmatrix(rows: usize, cols: usize, rank: usize, values: &[f64]) -> DMatrix<f64> {
        let left = DMatrix::from_fn(rows, rank, |i, j| values[(i * rank + j) % values.len()]);
        let right = DMatrix::from_fn(rank, cols, |i, j| {
            values[(7 + i * cols + j * 3) % values.len()] + if i == j { 1.5 } else { 0.0 }
        });
        left * right
    }

    /// Matrices of 1–6 rows, 1–11 columns and any rank from 1 to min(rows, cols).
    fn rank_limited_matrix() -> impl Strategy<Value = DMatrix<f64>> {
        (
            1usize..7,
            1usize..12,
            1usize..7,
            prop::collection::vec(-3.0f64..3.0, 64),
        )
            .prop_map(|(rows, cols, rank_seed, values)| {
                let rank = 1 + rank_seed % rows.min(cols);
                dmatrix(rows, cols, rank, &values)
            })
    }

    /// A 5×2 matrix the property test found (CI, 2026-11-27): its Jacobi sweeps stopped at
    /// the cap because the orthogonality left by a rotation, rounding in a dot product of
    /// five terms, stayed above ε √(αβ).
    #[test]
    fn svd_of_a_found_five_by_two_matrix_converges() {
        let a = DMatrix::from_column_slice(
            5,
            2,
            &[
                -3.0259973065195016,
                1.1368319394472046,
                -2.1693788495853674,
                -3.271378854491733,
                7.948890928185002,
                6.44143112627164,
                -0.5724740393144025,
                12.369679618179532,
                4.300876524477153,
                -10.000714712469714,
            ],
        );
        let d = svd(&a).expect("Jacobi converges");
        assert!((d.recompose() - &a).norm() <= 1e-13 * a.norm());
        assert!(d.u.column(0).dot(&d.u.column(1)).abs() <= 1e-14);
        assert!(d.v.column(0).dot(&d.v.column(1)).abs() <= 1e-15);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn qr_reconstructs_and_q_is_a_rotation(values in prop::collection::vec(-10.0f64..10.0, 9)) {
            let a = matrix3(&values);
            prop_assume!(a.determinant().abs() > 1e-6);
            let f = proper_qr(&a, 1e-12).expect("full-rank matrix");
            let tol = 1e-12 * a.norm().max(1.0);
            prop_assert!((f.q * f.r - a).norm() <= tol, "A != QR: {}", (f.q * f.r - a).norm());
            prop_assert!(orthogonality_error(&f.q) <= 1e-13);
            prop_assert!((f.q.determinant() - 1.0).abs() <= 1e-13);
            for i in 0..3 {
                for j in 0..i {
                    prop_assert!(f.r[(i, j)].abs() <= tol, "R not upper triangular");
                }
            }
            prop_assert!(f.r[(0, 0)] > 0.0 && f.r[(1, 1)] > 0.0);
            prop_assert_eq!(f.was_reflection, a.determinant() < 0.0);
            prop_assert_eq!(f.r[(2, 2)] < 0.0, a.determinant() < 0.0);
        }

        #[test]
        fn qr_of_a_rotation_is_that_rotation(axis in prop::array::uniform3(-1.0f64..1.0), angle in -3.1f64..3.1) {
            let axis = nalgebra::Vector3::from(axis);
            prop_assume!(axis.norm() > 1e-3);
            let rot = nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle);
            let f = proper_qr(rot.matrix(), 1e-12).expect("rotation is full rank");
            prop_assert!((f.q - rot.matrix()).norm() <= 1e-13);
            prop_assert!((f.r - Matrix3::identity()).norm() <= 1e-13);
        }

        #[test]
        fn svd_reconstructs_with_orthonormal_factors(a in rank_limited_matrix()) {
            let d = svd(&a).expect("Jacobi converges");
            let k = a.nrows().min(a.ncols());
            prop_assert_eq!(d.singular_values.len(), k);
            prop_assert!(d.singular_values.windows(2).all(|w| w[0] >= w[1]));
            prop_assert!((d.recompose() - &a).norm() <= 1e-12 * (1.0 + a.norm()));
            // Singular vectors of the (numerically) non-zero singular values are orthonormal.
            let sigma_max = d.singular_values[0];
            let significant = |i: usize| d.singular_values[i] > 1e-8 * sigma_max;
            for j in (0..k).filter(|&j| significant(j)) {
                for i in (0..k).filter(|&i| significant(i)) {
                    let expected = if i == j { 1.0 } else { 0.0 };
                    let uu = d.u.column(i).dot(&d.u.column(j));
                    let vv = d.v.column(i).dot(&d.v.column(j));
                    prop_assert!((uu - expected).abs() <= 1e-9, "uᵀu[{i},{j}] = {uu}");
                    prop_assert!((vv - expected).abs() <= 1e-9, "vᵀv[{i},{j}] = {vv}");
                }
            }
        }

        #[test]
        fn pseudo_inverse_satisfies_the_four_penrose_identities(a in rank_limited_matrix()) {
            let p = pseudo_inverse(&a, 1e-10).expect("SVD converges");
            prop_assert_eq!(p.shape(), (a.ncols(), a.nrows()));
            let tol = 1e-9 * (1.0 + a.norm() * p.norm()).powi(2);
            let ap = &a * &p;
            let pa = &p * &a;
            prop_assert!((&ap * &a - &a).norm() <= tol, "A A+ A != A");
            prop_assert!((&pa * &p - &p).norm() <= tol, "A+ A A+ != A+");
            prop_assert!((ap.transpose() - &ap).norm() <= tol, "A A+ not symmetric");
            prop_assert!((pa.transpose() - &pa).norm() <= tol, "A+ A not symmetric");
        }
    }

    #[test]
    fn pseudo_inverse_of_an_invertible_matrix_is_its_inverse() {
        let a = DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0]);
        let p = pseudo_inverse(&a, 1e-12).unwrap();
        assert!((&a * &p - DMatrix::<f64>::identity(3, 3)).norm() < 1e-13);
    }

    /// The matrix on which nalgebra 0.35's SVD returned wrong factors (‖UΣVᵀ − A‖ = 0.14).
    #[test]
    fn rank_deficient_wide_matrix_with_a_zero_column_decomposes() {
        let a = DMatrix::from_row_slice(2, 4, &[1.0, 2.0, 0.0, -1.0, 2.0, 4.0, -0.0, -2.0]);
        let d = svd(&a).unwrap();
        assert!((d.recompose() - &a).norm() < 1e-14);
        assert!(d.singular_values[1] < 1e-15);
        let p = pseudo_inverse(&a, 1e-12).unwrap();
        assert!((&a * &p * &a - &a).norm() < 1e-14);
    }

    #[test]
    fn pseudo_inverse_refuses_non_finite_input() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0, f64::NAN, 0.0, 1.0]);
        assert!(pseudo_inverse(&a, 1e-12).is_none());
    }

    #[test]
    fn qr_refuses_a_rank_deficient_matrix() {
        let a = matrix3(&[1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.0, 1.0, 1.0]);
        assert!(proper_qr(&a, 1e-12).is_none());
        assert!(proper_qr(&Matrix3::zeros(), 1e-12).is_none());
    }
}
