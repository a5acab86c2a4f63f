//! A dense Cholesky factorisation in caller-owned storage, for the coupled solve of all
//! constraint rows of a step (see [`super::simulation`], `SolverMethod::Direct`).
//!
//! The storage is a row-major `n × n` slice allocated once by the simulation, so a step
//! allocates nothing. Redundant constraints (the cross lift's closed loops) make the system
//! only positive semi-definite; the factorisation therefore adds a tiny relative
//! regularisation to the diagonal, and the solver's outer iterations remove the error this
//! causes. A pivot that is still not positive (NaN, or an indefinite matrix) is reported.

/// Factors the leading `n × n` block of `a` (row-major, stride `n`) in place into its lower
/// Cholesky factor, after scaling every diagonal entry by `1 + regularisation` (a relative,
/// per-row compliance: it keeps the impulses of redundant rows bounded). Returns `None` if
/// a pivot is not positive.
pub fn factor_in_place(a: &mut [f64], n: usize, regularisation: f64) -> Option<()> {
    if a.len() < n * n {
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
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in (j + 1)..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    Some(())
}

/// Solves `L Lᵀ x = b` in place with a factor from [`factor_in_place`].
pub fn solve_in_place(l: &[f64], n: usize, b: &mut [f64]) {
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i * n + k] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in (i + 1)..n {
            s -= l[k * n + i] * b[k];
        }
        b[i] = s / l[i * n + i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_an_spd_system_and_rejects_an_indefinite_one() {
        let m = [4.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 2.0];
        let mut a = m;
        factor_in_place(&mut a, 3, 0.0).expect("SPD");
        let x = [1.0, -1.0, 2.0];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| m[i * 3 + j] * x[j]).sum())
            .collect();
        solve_in_place(&a, 3, &mut b);
        for i in 0..3 {
            assert!((b[i] - x[i]).abs() < 1e-12);
        }
        let mut bad = [1.0, 2.0, 2.0, 1.0];
        assert!(factor_in_place(&mut bad, 2, 0.0).is_none());
    }
}
