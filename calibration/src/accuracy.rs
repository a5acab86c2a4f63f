//! How well an estimated `world_from_arm` reproduces a known true one, measured the way the
//! issue states its accuracy: the RMS distance on the calibration object's true points and the
//! rotation angle between the two. Used wherever the truth is known: the Monte-Carlo accuracy
//! test, the simulated-user runs of `calibrate tracker`, and their end-to-end tests.

use nalgebra::{Isometry3, Point3};

/// The discrepancy between an estimated and a true `world_from_arm`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransformError {
    /// RMS over the points of |est · (truth⁻¹ · p_in_world) − p_in_world|, m (0 for no points).
    pub rms_m: f64,
    /// The angle of the rotation between the two, rad.
    pub angle_rad: f64,
}

/// Compares `est` with `truth` on the true positions `p_in_world`: each point is where the
/// arm would really touch it (`truth⁻¹ · p`), mapped back with `est`.
pub fn transform_error(
    est: &Isometry3<f64>,
    truth: &Isometry3<f64>,
    p_in_world: &[Point3<f64>],
) -> TransformError {
    let arm_from_world = truth.inverse();
    let sum: f64 = p_in_world
        .iter()
        .map(|w| (est * (arm_from_world * w) - w).norm_squared())
        .sum();
    TransformError {
        rms_m: (sum / p_in_world.len().max(1) as f64).sqrt(),
        angle_rad: est.rotation.angle_to(&truth.rotation),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion, Vector3};

    #[test]
    fn identical_transforms_agree_exactly() {
        let t = Isometry3::new(Vector3::new(0.1, -0.2, 0.3), Vector3::new(0.2, 0.1, -0.4));
        let e = transform_error(&t, &t, &[Point3::new(0.04, 0.04, 0.08)]);
        assert!(e.rms_m < 1e-15 && e.angle_rad < 1e-7, "{e:?}");
    }

    #[test]
    fn a_pure_offset_is_its_length_and_no_angle() {
        let truth = Isometry3::new(Vector3::new(0.1, 0.0, 0.0), Vector3::new(0.0, 0.0, 0.5));
        let est = Translation3::new(0.0, 0.003, 0.004) * truth;
        let points = [Point3::origin(), Point3::new(0.08, 0.0, 0.0)];
        let e = transform_error(&est, &truth, &points);
        assert!((e.rms_m - 0.005).abs() < 1e-15, "{e:?}");
        assert!(e.angle_rad < 1e-7, "{e:?}");
    }

    #[test]
    fn a_turn_about_a_point_moves_the_others_by_the_chord() {
        let truth = Isometry3::identity();
        let angle = 0.01f64;
        let est = Isometry3::from_parts(
            Translation3::identity(),
            UnitQuaternion::from_euler_angles(0.0, 0.0, angle),
        );
        // A point 0.1 m from the axis moves by the chord 2·r·sin(θ/2); the origin not at all.
        let points = [Point3::origin(), Point3::new(0.1, 0.0, 0.0)];
        let chord = 2.0 * 0.1 * (angle / 2.0).sin();
        let e = transform_error(&est, &truth, &points);
        assert!((e.rms_m - chord / 2f64.sqrt()).abs() < 1e-15, "{e:?}");
        assert!((e.angle_rad - angle).abs() < 1e-12, "{e:?}");
    }
}
