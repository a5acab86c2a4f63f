//! A profile (envelope) Cholesky factorisation in caller-owned storage, for the coupled solve of all
//! constraint rows of a step (see [`super::simulation`], `SolverMethod::Direct`).
//!
//! The storage is a row-major `n × n` slice allocated once by the simulation, so a step
//! allocates nothing. `first[i]` is the first column of row i that may be non-zero (rows of
//! joints that share no moving body do not couple); the factor keeps that envelope, so a
//! chain costs O(n·b²) for bandwidth b instead of O(n³). Redundant constraints (the cross lift's closed loops) make the system
//! only positive semi-definite; the factorisation therefore adds a tiny relative
//! regularisation to the diagonal, and the solver's outer iterations remove the error this
//! causes. A pivot that is still not positive (NaN, or an indefinite matrix) is reported.

/// Dot product of two equally long slices (the inner kernel of the factorisation and the
/// solves; slices rather than indices, so that the loop carries no bounds checks).
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |s, (x, y)| s + x * y)
}

/// Factors the leading `n × n` block of `a` (row-major, stride `n`) in place into its lower
/// Cholesky factor, after scaling every diagonal entry by `1 + regularisation` (a relative,
/// per-row compliance: it keeps the impulses of redundant rows bounded). `inv_diag`
/// receives the reciprocals of the factor's diagonal, so that neither the factorisation's
/// inner loop nor [`solve_in_place`] divides. Returns `None` if a pivot is not positive.
pub fn factor_in_place(
    a: &mut [f64],
    first: &[usize],
    n: usize,
    regularisation: f64,
    inv_diag: &mut [f64],
) -> Option<()> {
    if a.len() < n * n || first.len() < n || inv_diag.len() < n {
        return None;
    }
    if n == 0 {
        return Some(());
    }
    let mut max_diag = 0.0_f64;
    for i in 0..n {
        max_diag = max_diag.max(a[i * n + i]);
    }
    if max_diag.is_nan() || max_diag <= 0.0 {
        return None;
    }
    // Row-oriented (Crout) order: row i needs rows j < i only inside its envelope.
    for i in 0..n {
        let fi = first[i].min(i);
        let (done, rest) = a.split_at_mut(i * n);
        let row_i = &mut rest[..n];
        row_i[i] *= 1.0 + regularisation;
        for j in fi..i {
            let row_j = &done[j * n..j * n + n];
            let fj = first[j].min(j).max(fi);
            let s = row_i[j] - dot(&row_i[fj..j], &row_j[fj..j]);
            row_i[j] = s * inv_diag[j];
        }
        let d = row_i[i] - dot(&row_i[fi..i], &row_i[fi..i]);
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let l = d.sqrt();
        row_i[i] = l;
        inv_diag[i] = 1.0 / l;
    }
    Some(())
}

/// Solves `L Lᵀ x = b` in place with a factor and its `inv_diag` from [`factor_in_place`].
pub fn solve_in_place(l: &[f64], inv_diag: &[f64], first: &[usize], n: usize, b: &mut [f64]) {
    let (l, inv_diag, first, b) = (&l[..n * n], &inv_diag[..n], &first[..n], &mut b[..n]);
    for i in 0..n {
        let row = &l[i * n..i * n + n];
        let fi = first[i].min(i);
        b[i] = (b[i] - dot(&row[fi..i], &b[fi..i])) * inv_diag[i];
    }
    // Back substitution column by column, so that only the envelope is read.
    for i in (0..n).rev() {
        let row = &l[i * n..i * n + n];
        let fi = first[i].min(i);
        let xi = b[i] * inv_diag[i];
        b[i] = xi;
        for (bk, lk) in b[fi..i].iter_mut().zip(&row[fi..i]) {
            *bk -= lk * xi;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_an_spd_system_and_rejects_an_indefinite_one() {
        let m = [4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0];
        let mut a = m;
        let first = [0, 0, 1];
        let mut inv_diag = [0.0; 3];
        factor_in_place(&mut a, &first, 3, 0.0, &mut inv_diag).expect("SPD");
        let x = [1.0, -1.0, 2.0];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| m[i * 3 + j] * x[j]).sum())
            .collect();
        solve_in_place(&a, &inv_diag, &first, 3, &mut b);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-12);
        }
        let mut bad = [1.0, 2.0, 2.0, 1.0];
        assert!(factor_in_place(&mut bad, &[0, 0], 2, 0.0, &mut inv_diag).is_none());
    }
}
