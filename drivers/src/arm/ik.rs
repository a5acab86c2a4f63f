//! Inverse kinematics for the tip position: joint angles that put the stylus tip on a target
//! point, starting from (and staying close to) the current angles.
//!
//! The arm has more joints (5) than a point has coordinates (3), so the solver takes damped
//! least-squares steps (Levenberg–Marquardt, minimum-norm in joint space) from the seed: the
//! arm moves the least it must, as a hand would. Near the solution the damping vanishes and
//! the steps become Gauss–Newton, which converges quadratically to well below 1e-9 m.

use super::kinematics::{tip_and_joint_axes, tip_in_arm};
use super::params::DhParams;
use nalgebra::{Matrix3, Point3, SMatrix, SVector, Vector3};
use std::f64::consts::{PI, TAU};

/// Settings of the solver.
#[derive(Debug, Clone, Copy)]
pub struct IkOptions {
    /// Stop when the tip is this close to the target (m).
    pub tolerance_m: f64,
    /// Give up after this many iterations.
    pub max_iterations: usize,
    /// Largest joint step per iteration (rad), so that far targets are approached smoothly.
    pub max_step_rad: f64,
    /// Smallest determinant accepted when solving the 3×3 normal equations.
    pub epsilon: f64,
    /// A preferred posture: while far from the target, steps in the Jacobian's null space
    /// pull the joints toward it, so that long or looping paths do not drift into odd
    /// configurations (a 5-joint arm has a 2-dimensional family of solutions per point).
    pub rest_rad: Option<[f64; 6]>,
    /// Gain of that pull per iteration (0–1).
    pub rest_gain: f64,
}

impl Default for IkOptions {
    fn default() -> Self {
        Self {
            tolerance_m: 1e-12,
            max_iterations: 200,
            max_step_rad: 0.3,
            epsilon: 1e-30,
            rest_rad: None,
            rest_gain: 0.2,
        }
    }
}

/// Why no joint angles were found.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum IkError {
    /// The target is out of reach (or the solver stalled at a singularity).
    #[error("target ({x_m:.4}, {y_m:.4}, {z_m:.4}) m not reached: {residual_m:.3e} m away after {iterations} iterations")]
    NotReached {
        /// Target x.
        x_m: f64,
        /// Target y.
        y_m: f64,
        /// Target z.
        z_m: f64,
        /// Remaining distance.
        residual_m: f64,
        /// Iterations used.
        iterations: usize,
    },
    /// The target has a NaN or infinite coordinate.
    #[error("target has a non-finite coordinate")]
    NonFinite,
}

/// Solves for joint angles (the first `joint_count` joints move; the others keep their seed
/// values) that put the tip on `target_in_arm`.
pub fn solve_tip(
    dh: &DhParams,
    target_in_arm: &Point3<f64>,
    seed_rad: &[f64; 6],
    joint_count: usize,
    options: &IkOptions,
) -> Result<[f64; 6], IkError> {
    if !target_in_arm.coords.iter().all(|v| v.is_finite()) {
        return Err(IkError::NonFinite);
    }
    let n = joint_count.min(6);
    let mut q = *seed_rad;
    if let Some(rest) = options.rest_rad {
        q = toward_rest(dh, &q, &rest, n, options);
    }
    let mut err = target_in_arm - tip_in_arm(dh, &q);
    let mut lambda = 1e-2;
    let mut iterations = 0;
    while err.norm() > options.tolerance_m && iterations < options.max_iterations {
        iterations += 1;
        let (tip, axes) = tip_and_joint_axes(dh, &q);
        let mut jac = SMatrix::<f64, 3, 6>::zeros();
        for (i, (axis, on_axis)) in axes.iter().enumerate().take(n) {
            jac.set_column(i, &axis.cross(&(tip - on_axis)));
        }
        let jjt: Matrix3<f64> = jac * jac.transpose();
        let mut accepted = false;
        for _ in 0..30 {
            let damped = jjt + Matrix3::identity() * (lambda * lambda);
            if damped.determinant().abs() < options.epsilon {
                lambda *= 10.0;
                continue;
            }
            let Some(chol) = damped.cholesky() else {
                lambda *= 10.0;
                continue;
            };
            let y: Vector3<f64> = chol.solve(&err);
            let mut step = jac.transpose() * y;
            let largest = step.amax();
            if largest > options.max_step_rad {
                step *= options.max_step_rad / largest;
            }
            let mut trial = q;
            for (t, s) in trial.iter_mut().zip(step.iter()).take(n) {
                *t += s;
            }
            let trial_err = target_in_arm - tip_in_arm(dh, &trial);
            if trial_err.norm() < err.norm() {
                q = trial;
                err = trial_err;
                lambda = (lambda * 0.1).max(1e-12);
                accepted = true;
                break;
            }
            lambda *= 10.0;
        }
        if !accepted {
            break;
        }
    }
    if err.norm() > options.tolerance_m.max(1e-10) {
        return Err(IkError::NotReached {
            x_m: target_in_arm.x,
            y_m: target_in_arm.y,
            z_m: target_in_arm.z,
            residual_m: err.norm(),
            iterations,
        });
    }
    Ok(q)
}

/// One step from `q` toward `rest` in the null space of the position Jacobian: the tip
/// stays put to first order (the solver removes the second-order change), the posture moves.
fn toward_rest(
    dh: &DhParams,
    q: &[f64; 6],
    rest: &[f64; 6],
    n: usize,
    options: &IkOptions,
) -> [f64; 6] {
    let (tip, axes) = tip_and_joint_axes(dh, q);
    let mut jac = SMatrix::<f64, 3, 6>::zeros();
    let mut pull = SVector::<f64, 6>::zeros();
    for (i, (axis, on_axis)) in axes.iter().enumerate().take(n) {
        jac.set_column(i, &axis.cross(&(tip - on_axis)));
        let d = (rest[i] - q[i] + PI).rem_euclid(TAU) - PI;
        pull[i] = options.rest_gain.clamp(0.0, 1.0) * d;
    }
    let damped: Matrix3<f64> = jac * jac.transpose() + Matrix3::identity() * 1e-6;
    let Some(chol) = damped.cholesky() else {
        return *q;
    };
    let jp: Vector3<f64> = chol.solve(&(jac * pull));
    let step = pull - jac.transpose() * jp;
    let mut out = *q;
    for (o, s) in out.iter_mut().zip(step.iter()).take(n) {
        *o += s.clamp(-options.max_step_rad, options.max_step_rad);
    }
    out
}
