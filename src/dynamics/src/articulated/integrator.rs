//! Time integrators for y' = f(t, y), the state y being the tree's coordinates, velocities
//! and the energy ledger (see [`super::system`]):
//!
//! - semi-implicit (symplectic) Euler: q̇ from the new velocities, with exact rotations for
//!   the quaternions (done by the system, which knows the joints);
//! - classical fourth-order Runge–Kutta, fixed step;
//! - Runge–Kutta–Fehlberg 4(5), adaptive: the difference of its embedded fourth- and
//!   fifth-order solutions estimates the local error, the step is accepted when
//!   max_i |e_i| / (tol · max(1, |y_i|)) ≤ 1 and the next step is
//!   h · clamp(0.9 · err^(−1/5), 0.2, 5). The fifth-order solution is propagated (local
//!   extrapolation, as in Numerical Recipes and the source paper).
//!
//! Quaternions are integrated as four numbers in the Runge–Kutta stages (their rates are
//! ½ Q ⊗ ω) and renormalised after each step. All stage memory is allocated once, in
//! [`RkScratch::new`].

/// Which integrator a system steps with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integrator {
    /// Semi-implicit Euler, fixed step.
    SemiImplicitEuler,
    /// Classical RK4, fixed step.
    Rk4,
    /// Adaptive Runge–Kutta–Fehlberg 4(5) with this error tolerance (relative to
    /// max(1, |y|) per component); the fixed step h is then only where it reports.
    Rk45 {
        /// Local error tolerance per step.
        tolerance: f64,
    },
}

impl Integrator {
    /// Name for messages and the CLI (`euler`, `rk4`, `rk45`).
    pub fn name(&self) -> &'static str {
        match self {
            Integrator::SemiImplicitEuler => "euler",
            Integrator::Rk4 => "rk4",
            Integrator::Rk45 { .. } => "rk45",
        }
    }
}

/// The classical RK4 tableau.
const RK4_A: [&[f64]; 4] = [&[], &[0.5], &[0.0, 0.5], &[0.0, 0.0, 1.0]];
const RK4_B: [f64; 4] = [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0];
const RK4_C: [f64; 4] = [0.0, 0.5, 0.5, 1.0];

/// Fehlberg's 4(5) tableau.
const RKF_A: [&[f64]; 6] = [
    &[],
    &[1.0 / 4.0],
    &[3.0 / 32.0, 9.0 / 32.0],
    &[1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0],
    &[439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0],
    &[
        -8.0 / 27.0,
        2.0,
        -3544.0 / 2565.0,
        1859.0 / 4104.0,
        -11.0 / 40.0,
    ],
];
const RKF_C: [f64; 6] = [0.0, 0.25, 3.0 / 8.0, 12.0 / 13.0, 1.0, 0.5];
/// Fifth-order weights.
const RKF_B5: [f64; 6] = [
    16.0 / 135.0,
    0.0,
    6656.0 / 12825.0,
    28561.0 / 56430.0,
    -9.0 / 50.0,
    2.0 / 55.0,
];
/// Fourth-order weights.
const RKF_B4: [f64; 6] = [
    25.0 / 216.0,
    0.0,
    1408.0 / 2565.0,
    2197.0 / 4104.0,
    -1.0 / 5.0,
    0.0,
];

/// Stage memory of the Runge–Kutta methods for a state of fixed length.
#[derive(Clone, Debug)]
pub struct RkScratch {
    k: Vec<Vec<f64>>,
    y_stage: Vec<f64>,
    /// The last step's error estimate per component (RK45 only).
    err: Vec<f64>,
}

impl RkScratch {
    /// Scratch for states of length `n`.
    pub fn new(n: usize) -> Self {
        Self {
            k: vec![vec![0.0; n]; 6],
            y_stage: vec![0.0; n],
            err: vec![0.0; n],
        }
    }

    fn stages<E>(
        &mut self,
        a: &[&[f64]],
        c: &[f64],
        t: f64,
        y: &[f64],
        h: f64,
        f: &mut impl FnMut(f64, &[f64], &mut [f64]) -> Result<(), E>,
    ) -> Result<(), E> {
        for (s, row) in a.iter().enumerate() {
            self.y_stage.copy_from_slice(y);
            for (j, aj) in row.iter().enumerate() {
                if *aj != 0.0 {
                    let kj = &self.k[j];
                    for (ys, kv) in self.y_stage.iter_mut().zip(kj) {
                        *ys += h * aj * kv;
                    }
                }
            }
            f(t + c[s] * h, &self.y_stage, &mut self.k[s])?;
        }
        Ok(())
    }

    /// One classical RK4 step of size h: y ← y(t + h).
    pub fn rk4_step<E>(
        &mut self,
        t: f64,
        y: &mut [f64],
        h: f64,
        f: &mut impl FnMut(f64, &[f64], &mut [f64]) -> Result<(), E>,
    ) -> Result<(), E> {
        // The tableau has one non-zero a per row: each stage's state is y + (h a) k_previous,
        // one pass, and the first stage is y itself (no copy).
        let n = y.len();
        let (k, y_stage) = (&mut self.k, &mut self.y_stage[..n]);
        f(t, y, &mut k[0])?;
        for s in 1..4 {
            let a = h * RK4_A[s][s - 1];
            let (done, rest) = k.split_at_mut(s);
            for ((ys, yi), kp) in y_stage.iter_mut().zip(y.iter()).zip(&done[s - 1]) {
                *ys = yi + a * kp;
            }
            f(t + RK4_C[s] * h, y_stage, &mut rest[0])?;
        }
        let (k0, k1, k2, k3) = (&k[0][..n], &k[1][..n], &k[2][..n], &k[3][..n]);
        for (i, yi) in y.iter_mut().enumerate() {
            let d = RK4_B[0] * k0[i] + RK4_B[1] * k1[i] + RK4_B[2] * k2[i] + RK4_B[3] * k3[i];
            *yi += h * d;
        }
        Ok(())
    }

    /// One Fehlberg 4(5) trial step of size h: writes the fifth-order solution to `y_new`
    /// and returns the scaled error norm max_i |e_i| / (tol · max(1, |y_i|)).
    pub fn rkf45_trial<E>(
        &mut self,
        t: f64,
        y: &[f64],
        h: f64,
        tolerance: f64,
        y_new: &mut [f64],
        f: &mut impl FnMut(f64, &[f64], &mut [f64]) -> Result<(), E>,
    ) -> Result<f64, E> {
        self.stages(&RKF_A, &RKF_C, t, y, h, f)?;
        let mut norm = 0.0_f64;
        for i in 0..y.len() {
            let (mut d5, mut d4) = (0.0, 0.0);
            for s in 0..6 {
                d5 += RKF_B5[s] * self.k[s][i];
                d4 += RKF_B4[s] * self.k[s][i];
            }
            y_new[i] = y[i] + h * d5;
            let e = h * (d5 - d4);
            self.err[i] = e;
            let scale = tolerance * y[i].abs().max(y_new[i].abs()).max(1.0);
            norm = norm.max(e.abs() / scale);
        }
        Ok(if norm.is_nan() { f64::INFINITY } else { norm })
    }
}

/// The next step size after a trial with scaled error `err` (accepted or not).
pub fn next_step_size(h: f64, err: f64) -> f64 {
    let factor = if err == 0.0 {
        5.0
    } else {
        (0.9 * err.powf(-0.2)).clamp(0.2, 5.0)
    };
    h * factor
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y' = λ y: RK4 is fourth order, RKF45's fifth-order solution is that accurate per step
    /// and its error estimate is of the fourth-order solution's size.
    #[test]
    fn orders_on_exponential_decay() {
        let mut f = |_t: f64, y: &[f64], dy: &mut [f64]| -> Result<(), ()> {
            dy[0] = -2.0 * y[0];
            Ok(())
        };
        let mut s = RkScratch::new(1);
        let err_rk4 = |h: f64, s: &mut RkScratch, f: &mut _| {
            let mut y = [1.0];
            let n = (1.0 / h).round() as usize;
            for i in 0..n {
                s.rk4_step(i as f64 * h, &mut y, h, f).unwrap();
            }
            (y[0] - (-2.0_f64).exp()).abs()
        };
        let (e1, e2) = (err_rk4(0.1, &mut s, &mut f), err_rk4(0.05, &mut s, &mut f));
        let order = (e1 / e2).log2();
        assert!((order - 4.0).abs() < 0.2, "RK4 order {order}");
        let mut y_new = [0.0];
        let h = 0.1;
        let err = s
            .rkf45_trial(0.0, &[1.0], h, 1.0, &mut y_new, &mut f)
            .unwrap();
        // Local error of a fifth-order step ~ (λh)⁶/720 = 9e-8.
        assert!((y_new[0] - (-2.0 * h).exp()).abs() < 2e-7);
        assert!(err > 1e-8 && err < 1e-5, "estimate {err}");
    }

    #[test]
    fn step_size_control_is_bounded() {
        assert_eq!(next_step_size(1.0, 0.0), 5.0);
        assert!((next_step_size(1.0, 1e9) - 0.2).abs() < 1e-15);
        assert!(next_step_size(1.0, 1.0) < 1.0);
    }
}
