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

/// Factors the leading `n × n` block of `a` (row-major, stride `n`) in place into its lower
/// Cholesky factor, after scaling every diagonal entry by `1 + regularisation` (a relative,
/// per-row compliance: it keeps the impulses of redundant rows bounded). Returns `None` if
/// a pivot is not positive.
pub fn factor_in_place(
    a: &mut [f64],
    first: &[usize],
    n: usize,
    regularisation: f64,
) -> Option<()> {
    if a.len() < n * n || first.len() < n {
        return None;
    }
    let mut max_diag = 0.0_f64;
    for i in 0..n {
        max_diag = max_diag.max(a[i * n + i]);
    }
    if max_diag.is_nan() || max_diag <= 0.0 {
        return if n == 0 { Some(()) } else { None };
    }
    for i in 0..n {
        a[i * n + i] *= 1.0 + regularisation;
    }
    // Row-oriented (Crout) order: row i needs rows j < i only inside its envelope.
    for i in 0..n {
        let fi = first[i].min(i);
        for j in fi..i {
            let fj = first[j].min(j).max(fi);
            let mut s = a[i * n + j];
            for k in fj..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / a[j * n + j];
        }
        let mut d = a[i * n + i];
        for k in fi..i {
            d -= a[i * n + k] * a[i * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        a[i * n + i] = d.sqrt();
    }
    Some(())
}

/// Solves `L Lᵀ x = b` in place with a factor from [`factor_in_place`].
pub fn solve_in_place(l: &[f64], first: &[usize], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in first[i].min(i)..i {
            s -= l[i * n + k] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
    // Back substitution column by column, so that only the envelope is read.
    for i in (0..n).rev() {
        b[i] /= l[i * n + i];
        let xi = b[i];
        for k in first[i].min(i)..i {
            b[k] -= l[i * n + k] * xi;
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
        factor_in_place(&mut a, &first, 3, 0.0).expect("SPD");
        let x = [1.0, -1.0, 2.0];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| m[i * 3 + j] * x[j]).sum())
            .collect();
        solve_in_place(&a, &first, 3, &mut b);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-12);
        }
        let mut bad = [1.0, 2.0, 2.0, 1.0];
        assert!(factor_in_place(&mut bad, &[0, 0], 2, 0.0).is_none());
    }
}
