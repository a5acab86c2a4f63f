//! Pivot calibration of a tracked tool's tip: the user turns the stylus about a fixed point
//! (its tip in a dimple) and every sample i gives the stylus orientation `R_i` and the tracked
//! point `p_i` (the arm's built-in tip), both in the arm's base frame. The true tip, `t_tip` in
//! the stylus frame, stays on the pivot `p_pivot`:
//!
//! ```text
//! R_i · t_tip + p_i = p_pivot   ⇔   [R_i | −I] · [t_tip; p_pivot] = −p_i
//! ```
//!
//! Stacked over all samples this is a linear least-squares problem in six unknowns, solved
//! here by SVD. The singular values also say whether the motion determines the solution: a
//! turn about one axis leaves the tip and the pivot free to slide together along that axis
//! (the matrix is rank 5), which a span check alone does not catch. So the fit refuses motions
//! that turn the stylus too little ([`PivotLimits::min_span_rad`], measured as the largest
//! angle between a sample's orientation and the mean orientation) and systems whose condition
//! number is too large ([`PivotLimits::max_condition`]).

use nalgebra::{DMatrix, DVector, Matrix3, Point3, Quaternion, UnitQuaternion, Vector3};

/// One reading of the stylus during the pivot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PivotSample {
    /// Stylus orientation in the arm's base frame (`R_i`).
    pub arm_from_stylus: UnitQuaternion<f64>,
    /// The point the arm reports as its tip, arm base frame, metres (`p_i`).
    pub tip_in_arm: Point3<f64>,
}

/// What a pivot motion must satisfy to be fitted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PivotLimits {
    /// Fewest samples (a few seconds of streaming give thousands).
    pub min_samples: usize,
    /// Smallest accepted span: the largest angle between a sample's orientation and the mean
    /// orientation, rad.
    pub min_span_rad: f64,
    /// Largest accepted condition number σ_max/σ_min of the stacked system.
    pub max_condition: f64,
    /// Largest RMS residual a fit may have and still be written (the tip slipped in the
    /// dimple, or the arm's kinematics are off), metres.
    pub max_rms_m: f64,
}

impl Default for PivotLimits {
    fn default() -> Self {
        Self {
            min_samples: 30,
            min_span_rad: 15f64.to_radians(),
            // A cone of 15° half-angle gives about 10; a turn about one axis gives thousands
            // (it is singular but for the encoders' quantisation).
            max_condition: 100.0,
            // Five times the arm's 0.2 mm precision.
            max_rms_m: 1e-3,
        }
    }
}

/// Why a pivot motion could not be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PivotError {
    /// Too few samples were recorded.
    #[error("only {got} samples were recorded (at least {needed} are needed): hold the pedal while pivoting for a few seconds")]
    TooFewSamples {
        /// Samples given.
        got: usize,
        /// Samples needed.
        needed: usize,
    },
    /// A sample had a NaN or infinite coordinate.
    #[error("sample {index} has a non-finite coordinate")]
    NonFinite {
        /// 0-based index of the sample.
        index: usize,
    },
    /// The stylus did not turn enough.
    #[error("the stylus turned at most {span_deg:.1}° from its mean orientation, under the {min_deg:.0}° needed: tilt it further around the dimple, at least {min_deg:.0}° each way")]
    TooLittleMotion {
        /// The measured span, degrees.
        span_deg: f64,
        /// The required span, degrees.
        min_deg: f64,
    },
    /// The motion does not determine the tip (e.g. turning about a single axis).
    #[error("the motion does not determine the tip: the system is ill-conditioned (condition number {condition:.0} over {max:.0}), as when the stylus turns about one axis only; tilt it in two directions, e.g. trace a cone around the dimple")]
    IllConditioned {
        /// σ_max/σ_min of the stacked system (infinite if singular).
        condition: f64,
        /// The accepted maximum.
        max: f64,
    },
}

/// The result of a pivot calibration.
#[derive(Debug, Clone, PartialEq)]
pub struct PivotFit {
    /// The tip in the stylus frame, relative to the arm's built-in tip, metres.
    pub tip_in_stylus: Vector3<f64>,
    /// The fixed point the stylus turned about, arm base frame, metres.
    pub pivot_in_arm: Point3<f64>,
    /// RMS over the samples of |R_i · t_tip + p_i − p_pivot|, metres.
    pub rms_m: f64,
    /// Largest distance of a sample's tip from the pivot, metres.
    pub max_residual_m: f64,
    /// Largest angle between a sample's orientation and the mean orientation, rad.
    pub span_rad: f64,
    /// σ_max/σ_min of the stacked system.
    pub condition: f64,
    /// Samples fitted.
    pub samples: usize,
}

impl PivotFit {
    /// Checks the residual against `limits`: a fit over the limit means the tip did not stay
    /// on one point; the error says so in words.
    pub fn check(&self, limits: &PivotLimits) -> Result<(), String> {
        if self.rms_m > limits.max_rms_m {
            return Err(format!(
                "the RMS residual {:.3} mm is over {:.3} mm: the tip did not stay on one point \
                 (keep it in the dimple while pivoting)",
                self.rms_m * 1e3,
                limits.max_rms_m * 1e3
            ));
        }
        Ok(())
    }
}

/// The mean orientation (the normalised sum of the quaternions, each on the first one's
/// hemisphere) and the largest angle of a sample from it.
pub fn orientation_span(orientations: &[UnitQuaternion<f64>]) -> (UnitQuaternion<f64>, f64) {
    let Some(first) = orientations.first() else {
        return (UnitQuaternion::identity(), 0.0);
    };
    let mut sum = Quaternion::new(0.0, 0.0, 0.0, 0.0);
    for q in orientations {
        let q = q.quaternion();
        sum += if q.dot(first.quaternion()) < 0.0 {
            -*q
        } else {
            *q
        };
    }
    let mean = UnitQuaternion::try_new(sum, 1e-12).unwrap_or(*first);
    let span = orientations
        .iter()
        .map(|q| q.angle_to(&mean))
        .fold(0.0, f64::max);
    (mean, span)
}

/// Fits the tip and the pivot to the samples (see the module docs), refusing motions that do
/// not determine them.
pub fn fit_pivot(samples: &[PivotSample], limits: &PivotLimits) -> Result<PivotFit, PivotError> {
    if samples.len() < limits.min_samples.max(2) {
        return Err(PivotError::TooFewSamples {
            got: samples.len(),
            needed: limits.min_samples.max(2),
        });
    }
    if let Some(index) = samples.iter().position(|s| {
        !(s.tip_in_arm.coords.iter().all(|v| v.is_finite())
            && s.arm_from_stylus.coords.iter().all(|v| v.is_finite()))
    }) {
        return Err(PivotError::NonFinite { index });
    }
    let orientations: Vec<_> = samples.iter().map(|s| s.arm_from_stylus).collect();
    let (_, span_rad) = orientation_span(&orientations);
    if span_rad < limits.min_span_rad {
        return Err(PivotError::TooLittleMotion {
            span_deg: span_rad.to_degrees(),
            min_deg: limits.min_span_rad.to_degrees(),
        });
    }
    // The tracked points are centred first: the pivot is then solved as an offset from their
    // mean, which keeps the columns of similar size whatever the arm's reach.
    let centre = samples
        .iter()
        .fold(Vector3::zeros(), |acc, s| acc + s.tip_in_arm.coords)
        / samples.len() as f64;
    let n = samples.len();
    let mut a = DMatrix::<f64>::zeros(3 * n, 6);
    let mut b = DVector::<f64>::zeros(3 * n);
    for (i, s) in samples.iter().enumerate() {
        let r = s.arm_from_stylus.to_rotation_matrix();
        a.view_mut((3 * i, 0), (3, 3)).copy_from(r.matrix());
        a.view_mut((3 * i, 3), (3, 3))
            .copy_from(&(-Matrix3::<f64>::identity()));
        b.rows_mut(3 * i, 3)
            .copy_from(&(centre - s.tip_in_arm.coords));
    }
    let svd = a.svd(true, true);
    let sigma = &svd.singular_values;
    let (hi, lo) = (sigma.max(), sigma.min());
    let condition = if lo > 0.0 { hi / lo } else { f64::INFINITY };
    if condition.is_nan() || condition > limits.max_condition {
        return Err(PivotError::IllConditioned {
            condition,
            max: limits.max_condition,
        });
    }
    let x = svd.solve(&b, 0.0).map_err(|_| PivotError::IllConditioned {
        condition,
        max: limits.max_condition,
    })?;
    let tip_in_stylus = Vector3::new(x[0], x[1], x[2]);
    let pivot_in_arm = Point3::from(centre + Vector3::new(x[3], x[4], x[5]));
    let (sum_sq, max_residual_m) = samples.iter().fold((0.0, 0.0f64), |(sum, max), s| {
        let r =
            (s.arm_from_stylus * tip_in_stylus + s.tip_in_arm.coords - pivot_in_arm.coords).norm();
        (sum + r * r, max.max(r))
    });
    Ok(PivotFit {
        tip_in_stylus,
        pivot_in_arm,
        rms_m: (sum_sq / n as f64).sqrt(),
        max_residual_m,
        span_rad,
        condition,
        samples: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples of a stylus whose tip `t` sits on `pivot`, at the given orientations: the
    /// tracked point is then exactly `pivot − R·t`.
    fn exact(t: Vector3<f64>, pivot: Point3<f64>, rs: &[UnitQuaternion<f64>]) -> Vec<PivotSample> {
        rs.iter()
            .map(|r| PivotSample {
                arm_from_stylus: *r,
                tip_in_arm: pivot - r * t,
            })
            .collect()
    }

    /// A cone of half-angle `deg` about a tilted axis, traced `n` times around.
    fn cone(deg: f64, n: usize) -> Vec<UnitQuaternion<f64>> {
        let base = UnitQuaternion::from_euler_angles(0.3, -1.1, 0.7);
        (0..n)
            .map(|k| {
                let phi = k as f64 / n as f64 * std::f64::consts::TAU;
                let axis = Vector3::new(phi.cos(), phi.sin(), 0.0);
                base * UnitQuaternion::from_scaled_axis(axis * deg.to_radians())
            })
            .collect()
    }

    #[test]
    fn a_closed_form_case_is_recovered_exactly() {
        // Four orientations: the identity and quarter turns about x, y and z. With t = (a, b,
        // c) and the pivot P, the tracked points are P − t, P − Rx·t, … and the solution is
        // unique; the fit must reproduce it to rounding.
        let t = Vector3::new(0.01, -0.02, 0.09);
        let pivot = Point3::new(0.25, 0.05, 0.1);
        let h = std::f64::consts::FRAC_PI_2;
        let mut rs = vec![UnitQuaternion::identity()];
        for axis in [Vector3::x_axis(), Vector3::y_axis(), Vector3::z_axis()] {
            rs.push(UnitQuaternion::from_axis_angle(&axis, h));
            rs.push(UnitQuaternion::from_axis_angle(&axis, -h));
        }
        let limits = PivotLimits {
            min_samples: 7,
            ..PivotLimits::default()
        };
        let fit = fit_pivot(&exact(t, pivot, &rs), &limits).expect("well posed");
        assert!((fit.tip_in_stylus - t).norm() < 1e-14, "{fit:?}");
        assert!((fit.pivot_in_arm - pivot).norm() < 1e-14, "{fit:?}");
        assert!(fit.rms_m < 1e-14 && fit.max_residual_m < 1e-14, "{fit:?}");
        assert_eq!(fit.samples, 7);
        assert!(fit.check(&limits).is_ok());
    }

    #[test]
    fn a_cone_of_twenty_degrees_is_fitted_and_its_span_measured() {
        let t = Vector3::new(-0.04, 0.03, 0.1);
        let pivot = Point3::new(0.2, -0.1, 0.05);
        let fit = fit_pivot(&exact(t, pivot, &cone(20.0, 100)), &PivotLimits::default())
            .expect("a cone determines the tip");
        assert!((fit.tip_in_stylus - t).norm() < 1e-12, "{fit:?}");
        assert!((fit.pivot_in_arm - pivot).norm() < 1e-12, "{fit:?}");
        assert!((fit.span_rad.to_degrees() - 20.0).abs() < 0.1, "{fit:?}");
        assert!(fit.condition < 20.0, "{fit:?}");
    }

    #[test]
    fn a_small_motion_is_refused_with_its_span() {
        let samples = exact(Vector3::z() * 0.1, Point3::origin(), &cone(10.0, 100));
        let e = fit_pivot(&samples, &PivotLimits::default()).expect_err("10° < 15°");
        match e {
            PivotError::TooLittleMotion { span_deg, min_deg } => {
                assert!(
                    (span_deg - 10.0).abs() < 0.1 && (min_deg - 15.0).abs() < 1e-9,
                    "{e}"
                )
            }
            other => panic!("{other}"),
        }
        assert!(e.to_string().contains("under the 15° needed"), "{e}");
    }

    #[test]
    fn a_turn_about_one_axis_is_ill_conditioned() {
        // 40° each way about the x axis only: the tip and the pivot may slide together along
        // x, so the stacked system is singular however large the span.
        let rs: Vec<_> = (0..81)
            .map(|k| UnitQuaternion::from_axis_angle(&Vector3::x_axis(), (k as f64 - 40.0) / 57.3))
            .collect();
        let e = fit_pivot(
            &exact(Vector3::new(0.02, 0.0, 0.1), Point3::origin(), &rs),
            &PivotLimits::default(),
        )
        .expect_err("singular");
        assert!(matches!(e, PivotError::IllConditioned { .. }), "{e}");
        assert!(e.to_string().contains("ill-conditioned"), "{e}");
    }

    #[test]
    fn a_slipping_tip_fails_the_residual_check() {
        let mut samples = exact(Vector3::z() * 0.1, Point3::origin(), &cone(25.0, 60));
        for (k, s) in samples.iter_mut().enumerate() {
            // ±3 mm of slip, alternating.
            s.tip_in_arm.x += if k % 2 == 0 { 0.003 } else { -0.003 };
        }
        let fit = fit_pivot(&samples, &PivotLimits::default()).expect("fits");
        let e = fit.check(&PivotLimits::default()).expect_err("3 mm RMS");
        assert!(e.contains("did not stay on one point"), "{e}");
    }

    #[test]
    fn too_few_samples_are_refused() {
        let samples = exact(Vector3::z() * 0.1, Point3::origin(), &cone(25.0, 10));
        assert_eq!(
            fit_pivot(&samples, &PivotLimits::default()),
            Err(PivotError::TooFewSamples {
                got: 10,
                needed: 30
            })
        );
    }
}
