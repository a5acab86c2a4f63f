//! Small symmetric positive-definite blocks (at most 6×6) and their Cholesky factors, and the
//! inverse of a symmetric positive-definite 3×3 matrix.
//!
//! Every joint solves its own block `J M⁻¹ Jᵀ δ = r` (paper Eq. 17–23); the block is factored
//! once per step and reused in every Gauss–Seidel sweep, so the factor lives in fixed-size
//! arrays (no allocation) and the decomposition reports failure through `Option` with an
//! explicit relative epsilon instead of producing NaNs.

use nalgebra::{Matrix3, Vector3};

/// The largest number of constraint rows one element contributes (a fixed joint).
pub const MAX_ROWS: usize = 6;

/// A row-major square matrix of up to [`MAX_ROWS`] rows; only the leading `n × n` part is used.
pub type BlockMatrix = [[f64; MAX_ROWS]; MAX_ROWS];

/// A vector of up to [`MAX_ROWS`] entries; only the leading `n` are used.
pub type BlockVector = [f64; MAX_ROWS];

/// The lower-triangular Cholesky factor `L` of an SPD block `A = L Lᵀ`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CholeskyBlock {
    n: usize,
    l: BlockMatrix,
}

// Index loops mirror the textbook Cholesky recurrences; iterator forms obscure them.
#[allow(clippy::needless_range_loop)]
impl CholeskyBlock {
    /// Factors the leading `n × n` block of `a` (only its lower triangle is read).
    ///
    /// Returns `None` when `n` is zero or too large, or when a pivot is not larger than
    /// `rel_eps` times the largest diagonal entry (a singular or indefinite block, or NaN).
    pub fn factor(a: &BlockMatrix, n: usize, rel_eps: f64) -> Option<Self> {
        if n == 0 || n > MAX_ROWS {
            return None;
        }
        let mut max_diag = 0.0_f64;
        for (i, row) in a.iter().enumerate().take(n) {
            max_diag = max_diag.max(row[i]);
        }
        if max_diag.is_nan() || max_diag <= 0.0 {
            return None;
        }
        let eps = rel_eps * max_diag;
        let mut l = [[0.0; MAX_ROWS]; MAX_ROWS];
        for j in 0..n {
            let mut d = a[j][j];
            for k in 0..j {
                d -= l[j][k] * l[j][k];
            }
            if d.is_nan() || d <= eps {
                return None;
            }
            let d = d.sqrt();
            l[j][j] = d;
            for i in (j + 1)..n {
                let mut s = a[i][j];
                for k in 0..j {
                    s -= l[i][k] * l[j][k];
                }
                l[i][j] = s / d;
            }
        }
        Some(Self { n, l })
    }

    /// Number of rows of the factored block.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// Solves `A x = b` in place (`b` becomes `x`); entries past `n` are left alone.
    pub fn solve_in_place(&self, b: &mut BlockVector) {
        let n = self.n;
        for i in 0..n {
            let mut s = b[i];
            for k in 0..i {
                s -= self.l[i][k] * b[k];
            }
            b[i] = s / self.l[i][i];
        }
        for i in (0..n).rev() {
            let mut s = b[i];
            for k in (i + 1)..n {
                s -= self.l[k][i] * b[k];
            }
            b[i] = s / self.l[i][i];
        }
    }
}

/// Whether the symmetric 3×3 matrix `m` is positive definite (Sylvester's criterion on the
/// leading minors; only the lower triangle is read). False for NaN entries.
pub(crate) fn is_positive_definite3(m: &Matrix3<f64>) -> bool {
    positive_definite_determinant3(m).is_some()
}

/// The determinant of the symmetric 3×3 matrix `m` if `m` is positive definite (Sylvester's
/// criterion: the leading minors, the determinant last, are positive).
fn positive_definite_determinant3(m: &Matrix3<f64>) -> Option<f64> {
    let (a, b, c) = (m[(0, 0)], m[(1, 0)], m[(2, 0)]);
    let (d, e, f) = (m[(1, 1)], m[(2, 1)], m[(2, 2)]);
    let det = a * (d * f - e * e) - b * (b * f - c * e) + c * (b * e - c * d);
    (a > 0.0 && a * d - b * b > 0.0 && det > 0.0).then_some(det)
}

/// The inverse of a symmetric positive-definite 3×3 matrix (only the lower triangle is read),
/// or `None` if it is not positive definite. The adjugate over the determinant: cheaper than
/// a general factorisation for the per-body Newton inertia, which is made every step.
pub(crate) fn spd_inverse3(m: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let inv_det = 1.0 / positive_definite_determinant3(m)?;
    let (a, b, c) = (m[(0, 0)], m[(1, 0)], m[(2, 0)]);
    let (d, e, f) = (m[(1, 1)], m[(2, 1)], m[(2, 2)]);
    let c00 = d * f - e * e;
    let c10 = c * e - b * f;
    let c20 = b * e - c * d;
    let c11 = a * f - c * c;
    let c21 = b * c - a * e;
    let c22 = a * d - b * b;
    Some(Matrix3::new(c00, c10, c20, c10, c11, c21, c20, c21, c22) * inv_det)
}

/// m [v]×, with the products by the skew matrix's zeros left out: the same sums, in the same
/// order, as the full product (the coupled matrix makes it for every body at every
/// factorisation).
pub(crate) fn mul_skew(m: &Matrix3<f64>, v: &Vector3<f64>) -> Matrix3<f64> {
    let (x, y, z) = (v.x, v.y, v.z);
    Matrix3::from_fn(|i, j| match j {
        0 => m[(i, 1)] * z + m[(i, 2)] * -y,
        1 => m[(i, 0)] * -z + m[(i, 2)] * x,
        _ => m[(i, 0)] * y + m[(i, 1)] * -x,
    })
}

/// [v]× m, with the products by the skew matrix's zeros left out (see [`mul_skew`]).
pub(crate) fn skew_mul(v: &Vector3<f64>, m: &Matrix3<f64>) -> Matrix3<f64> {
    let (x, y, z) = (v.x, v.y, v.z);
    Matrix3::from_fn(|i, j| match i {
        0 => -z * m[(1, j)] + y * m[(2, j)],
        1 => z * m[(0, j)] + -x * m[(2, j)],
        _ => -y * m[(0, j)] + x * m[(1, j)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_products_equal_the_full_products_bit_for_bit() {
        let m = Matrix3::new(0.3, -1.7, 2.9, 4.1e-3, 5.5, -0.61, 7.25, 1e-9, -3.3);
        let v = Vector3::new(0.123, -4.56, 7.89e-4);
        assert_eq!(mul_skew(&m, &v), m * v.cross_matrix());
        assert_eq!(skew_mul(&v, &m), v.cross_matrix() * m);
    }

    #[test]
    fn solves_a_known_spd_system() {
        let mut a = [[0.0; MAX_ROWS]; MAX_ROWS];
        let m = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] = m[i][j];
            }
        }
        let f = CholeskyBlock::factor(&a, 3, 1e-12).expect("SPD");
        let x_true = [1.0, -2.0, 0.5];
        let mut b = [0.0; MAX_ROWS];
        for i in 0..3 {
            b[i] = (0..3).map(|j| m[i][j] * x_true[j]).sum();
        }
        f.solve_in_place(&mut b);
        for i in 0..3 {
            assert!((b[i] - x_true[i]).abs() < 1e-12, "row {i}: {}", b[i]);
        }
    }

    #[test]
    fn rejects_singular_and_nan_blocks() {
        let mut a = [[0.0; MAX_ROWS]; MAX_ROWS];
        a[0][0] = 1.0;
        a[1][0] = 1.0;
        a[0][1] = 1.0;
        a[1][1] = 1.0;
        assert!(CholeskyBlock::factor(&a, 2, 1e-12).is_none());
        a[1][1] = f64::NAN;
        assert!(CholeskyBlock::factor(&a, 2, 1e-12).is_none());
        assert!(CholeskyBlock::factor(&a, 0, 1e-12).is_none());
    }

    #[test]
    fn spd_inverse3_inverts_and_rejects_indefinite_matrices() {
        let m = Matrix3::new(4.0, 1.0, 0.5, 1.0, 3.0, -0.2, 0.5, -0.2, 2.0);
        let inv = spd_inverse3(&m).expect("positive definite");
        assert!((inv * m - Matrix3::identity()).amax() < 1e-14);
        let indefinite = Matrix3::new(1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0);
        assert!(spd_inverse3(&indefinite).is_none());
        assert!(!is_positive_definite3(&(-Matrix3::<f64>::identity())));
        assert!(!is_positive_definite3(&Matrix3::from_element(f64::NAN)));
    }
}
