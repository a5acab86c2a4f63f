//! A dense LU factorisation with partial pivoting whose buffers are kept from solve to solve,
//! for the contact solves that run every step (nalgebra's `LU` allocates its matrix and its
//! permutation on each call).
//!
//! The operations and their order are those of nalgebra 0.35's `LU::new` and `LU::solve`
//! (the pivot is the first largest |entry|, the multipliers are scaled by the pivot's
//! reciprocal, each update is y − p·x, the forward substitution has a unit diagonal and the
//! back substitution divides by U's diagonal), so the results are the same to the bit. A
//! column without a nonzero entry is skipped, as there, and a zero on U's diagonal makes the
//! solve fail.

/// An n × n matrix (column-major) factored in place as P A = L U.
#[derive(Clone, Debug, Default)]
pub struct DenseLu {
    dim: usize,
    /// L below the diagonal (its unit diagonal implied), U on and above; column-major.
    lu: Vec<f64>,
    /// The row exchanges (step, pivot row), in the order they were made.
    swaps: Vec<(usize, usize)>,
}

impl DenseLu {
    /// Factors the `dim` × `dim` matrix `a` (column-major, `a[i + j·dim]` = A(i, j)).
    pub fn factor(&mut self, dim: usize, a: &[f64]) {
        self.load(dim, a);
        self.eliminate();
    }

    /// Factors `a` with each diagonal entry raised by `relative` of its magnitude and by
    /// 1e-300 (redundant rows keep bounded solutions; an all-zero row still has a pivot).
    pub fn factor_regularised(&mut self, dim: usize, a: &[f64], relative: f64) {
        self.load(dim, a);
        for i in 0..dim {
            let d = &mut self.lu[i * dim + i];
            *d += relative * d.abs() + 1.0e-300;
        }
        self.eliminate();
    }

    fn load(&mut self, dim: usize, a: &[f64]) {
        assert_eq!(a.len(), dim * dim, "a {dim} × {dim} matrix");
        self.dim = dim;
        self.lu.clear();
        self.lu.extend_from_slice(a);
    }

    /// LU with partial pivoting of the loaded matrix, in place.
    fn eliminate(&mut self) {
        let dim = self.dim;
        self.swaps.clear();
        let lu = &mut self.lu;
        for i in 0..dim {
            let col = i * dim;
            let mut piv = i;
            let mut largest = lu[col + i].abs();
            for r in i + 1..dim {
                let v = lu[col + r].abs();
                if v > largest {
                    largest = v;
                    piv = r;
                }
            }
            let diag = lu[col + piv];
            if diag == 0.0 {
                continue;
            }
            if piv != i {
                self.swaps.push((i, piv));
                for c in 0..=i {
                    lu.swap(c * dim + i, c * dim + piv);
                }
            }
            let inv_diag = 1.0 / diag;
            for r in i + 1..dim {
                lu[col + r] *= inv_diag;
            }
            // Column i's multipliers against each later column (disjoint slices, so the update
            // vectorises).
            let (left, right) = lu.split_at_mut((i + 1) * dim);
            let multipliers = &left[col + i + 1..col + dim];
            for column in right.chunks_exact_mut(dim) {
                if piv != i {
                    column.swap(i, piv);
                }
                let p = column[i];
                for (y, x) in column[i + 1..].iter_mut().zip(multipliers) {
                    *y += -p * x;
                }
            }
        }
    }

    /// Solves A x = b in place (`b` becomes x); false when U has a zero on its diagonal
    /// (`b` is then left part-way).
    pub fn solve_in_place(&self, b: &mut [f64]) -> bool {
        let (dim, lu) = (self.dim, &self.lu);
        assert_eq!(b.len(), dim, "a right-hand side of {dim} entries");
        for &(i, piv) in &self.swaps {
            b.swap(i, piv);
        }
        for i in 0..dim.saturating_sub(1) {
            let (done, rest) = b.split_at_mut(i + 1);
            let coeff = done[i];
            for (y, l) in rest.iter_mut().zip(&lu[i * dim + i + 1..(i + 1) * dim]) {
                *y += -coeff * l;
            }
        }
        for i in (0..dim).rev() {
            let diag = lu[i * dim + i];
            if diag == 0.0 {
                return false;
            }
            let coeff = b[i] / diag;
            b[i] = coeff;
            for (y, u) in b[..i].iter_mut().zip(&lu[i * dim..i * dim + i]) {
                *y += -coeff * u;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::{DMatrix, DVector};

    use super::*;

    /// Bit for bit nalgebra's LU on matrices that need row exchanges, that have a zero column
    /// and that are singular; and the solution of a small system written out by hand.
    #[test]
    fn solves_as_nalgebras_lu_does_to_the_bit() {
        let mut seed = 11u64;
        let mut uniform = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut lu = DenseLu::default();
        for dim in [1usize, 2, 3, 7, 12, 30] {
            for case in 0..3 {
                let mut a = DMatrix::from_fn(dim, dim, |_, _| uniform());
                if case == 1 && dim > 2 {
                    a.column_mut(1).fill(0.0);
                }
                if case == 2 && dim > 1 {
                    let row = a.row(0).into_owned();
                    a.row_mut(dim - 1).copy_from(&row);
                }
                let b = DVector::from_fn(dim, |_, _| uniform());
                let expected = a.clone().lu().solve(&b);
                lu.factor(dim, a.as_slice());
                let mut x = b.as_slice().to_vec();
                let solved = lu.solve_in_place(&mut x);
                assert_eq!(solved, expected.is_some(), "dim {dim}, case {case}");
                if let Some(e) = expected {
                    let same = e.iter().zip(&x).all(|(e, x)| e.to_bits() == x.to_bits());
                    assert!(same, "dim {dim}, case {case}: {x:?} vs {e}");
                }
            }
        }
        // [2 1; 4 3] x = [3; 7]: x = [1; 1] (the second row pivots).
        lu.factor(2, &[2.0, 4.0, 1.0, 3.0]);
        let mut x = [3.0, 7.0];
        assert!(lu.solve_in_place(&mut x));
        assert_eq!(x, [1.0, 1.0]);
    }
}
