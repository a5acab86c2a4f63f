//! Tracking accuracy against ground truth: per-frame pose errors and their summary.
//!
//! Position error is the distance between the estimated and true marker origin in the camera
//! frame (the translation of `camera_from_world`), which is what the overlay depends on;
//! rotation error is the angle of `R_est R_trueᵀ`. The camera-centre error (which adds the
//! lever arm of the rotation error) is reported too.

use nalgebra::Isometry3;

/// Errors of one estimate against its truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseError {
    /// |t_est − t_true|, metres.
    pub position_m: f64,
    /// Angle between the rotations, radians.
    pub rotation_rad: f64,
    /// Distance between the estimated and true camera centres in the world, metres.
    pub camera_centre_m: f64,
}

impl PoseError {
    /// Compares an estimate with the truth.
    pub fn between(estimate: &Isometry3<f64>, truth: &Isometry3<f64>) -> Self {
        let c_est = estimate.inverse().translation.vector;
        let c_true = truth.inverse().translation.vector;
        Self {
            position_m: (estimate.translation.vector - truth.translation.vector).norm(),
            rotation_rad: estimate.rotation.angle_to(&truth.rotation),
            camera_centre_m: (c_est - c_true).norm(),
        }
    }
}

/// Accumulates per-frame results and summarises them.
#[derive(Debug, Clone, Default)]
pub struct AccuracyStats {
    frames: u64,
    errors: Vec<PoseError>,
}

/// The numbers the accuracy command prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccuracySummary {
    /// Frames seen.
    pub frames: u64,
    /// Frames with a detection.
    pub detected: u64,
    /// detected / frames.
    pub detection_rate: f64,
    /// Median position error, metres.
    pub median_position_m: f64,
    /// 95th percentile position error, metres.
    pub p95_position_m: f64,
    /// Median rotation error, radians.
    pub median_rotation_rad: f64,
    /// 95th percentile rotation error, radians.
    pub p95_rotation_rad: f64,
    /// Median camera-centre error, metres.
    pub median_camera_centre_m: f64,
}

impl AccuracyStats {
    /// Records one frame: the estimate (if detected) and the truth.
    pub fn add(&mut self, estimate: Option<&Isometry3<f64>>, truth: &Isometry3<f64>) {
        self.frames += 1;
        if let Some(e) = estimate {
            self.errors.push(PoseError::between(e, truth));
        }
    }

    /// The summary; `None` before any frame.
    pub fn summary(&self) -> Option<AccuracySummary> {
        if self.frames == 0 {
            return None;
        }
        let pick = |f: fn(&PoseError) -> f64, q: f64| {
            let mut v: Vec<f64> = self.errors.iter().map(f).collect();
            quantile(&mut v, q)
        };
        Some(AccuracySummary {
            frames: self.frames,
            detected: self.errors.len() as u64,
            detection_rate: self.errors.len() as f64 / self.frames as f64,
            median_position_m: pick(|e| e.position_m, 0.5),
            p95_position_m: pick(|e| e.position_m, 0.95),
            median_rotation_rad: pick(|e| e.rotation_rad, 0.5),
            p95_rotation_rad: pick(|e| e.rotation_rad, 0.95),
            median_camera_centre_m: pick(|e| e.camera_centre_m, 0.5),
        })
    }
}

/// The `q` quantile (nearest rank) of `v`; NaN for an empty slice.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let idx = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[idx]
}

impl std::fmt::Display for AccuracySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "frames {}  detected {} ({:.2} %)  position error median {:.3} mm (p95 {:.3} mm)  rotation error median {:.3} deg (p95 {:.3} deg)  camera centre error median {:.3} mm",
            self.frames,
            self.detected,
            100.0 * self.detection_rate,
            1e3 * self.median_position_m,
            1e3 * self.p95_position_m,
            self.median_rotation_rad.to_degrees(),
            self.p95_rotation_rad.to_degrees(),
            1e3 * self.median_camera_centre_m
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    #[test]
    fn errors_of_a_known_perturbation() {
        let truth = Isometry3::new(Vector3::new(0.0, 0.0, 0.5), Vector3::zeros());
        let est = Isometry3::new(
            Vector3::new(0.003, 0.004, 0.5),
            Vector3::new(0.0, 0.0, 0.01),
        );
        let e = PoseError::between(&est, &truth);
        assert!((e.position_m - 0.005).abs() < 1e-12);
        assert!((e.rotation_rad - 0.01).abs() < 1e-12);
    }

    #[test]
    fn quantile_is_nearest_rank() {
        let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&mut v, 0.5), 3.0);
        assert_eq!(quantile(&mut v, 1.0), 5.0);
        assert!(quantile(&mut [], 0.5).is_nan());
    }

    #[test]
    fn missed_frames_lower_the_detection_rate() {
        let truth = Isometry3::identity();
        let mut s = AccuracyStats::default();
        s.add(Some(&truth), &truth);
        s.add(None, &truth);
        let sum = s.summary().unwrap();
        assert_eq!((sum.frames, sum.detected), (2, 1));
        assert_eq!(sum.detection_rate, 0.5);
    }
}
