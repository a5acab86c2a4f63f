//! Where the synthetic camera is at each instant: a fixed pose or a gentle hand-held wander.

use nalgebra::{Isometry3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::f64::consts::PI;

/// The synthetic camera's trajectory, a pure function of time (seeded, so reproducible).
#[derive(Debug, Clone, PartialEq)]
pub enum CameraPath {
    /// The camera stays at one pose.
    Static {
        /// The pose, OpenCV camera axes.
        camera_from_world: Isometry3<f64>,
    },
    /// A person holding the camera and looking at the marker: distance, off-axis angle and
    /// azimuth drift slowly through their ranges, with a little roll, aim offset and hand
    /// tremor. Phases come from the seed.
    Wander {
        /// Closest and farthest distance from the aim point to the camera, metres.
        distance_m: (f64, f64),
        /// Largest angle between the marker normal and the direction to the camera, radians.
        max_off_axis_rad: f64,
        /// Largest roll about the viewing axis, radians.
        max_roll_rad: f64,
        /// Largest offset of the aim point from the marker centre, metres.
        max_aim_offset_m: f64,
        /// Amplitude of the hand tremor (position metres, rotation radians).
        tremor: (f64, f64),
        /// Seed of the phases.
        seed: u64,
    },
}

impl CameraPath {
    /// The acceptance envelope: 0.3–0.8 m, up to 50° off-axis, ±15° roll, 1 mm / 0.1° tremor.
    pub fn hand_held(seed: u64) -> Self {
        Self::Wander {
            distance_m: (0.3, 0.8),
            max_off_axis_rad: 50f64.to_radians(),
            max_roll_rad: 15f64.to_radians(),
            max_aim_offset_m: 0.015,
            tremor: (0.001, 0.1f64.to_radians()),
            seed,
        }
    }

    /// A camera at `distance_m` from the marker centre, `off_axis_rad` from its normal,
    /// looking at the centre (the image's down direction points toward the camera's side).
    pub fn looking_at_marker(distance_m: f64, off_axis_rad: f64, azimuth_rad: f64) -> Self {
        Self::Static {
            camera_from_world: look_at(
                distance_m,
                off_axis_rad,
                azimuth_rad,
                0.0,
                Point3::origin(),
            ),
        }
    }

    /// The pose at `t_secs` after the start.
    pub fn camera_from_world(&self, t_secs: f64) -> Isometry3<f64> {
        match self {
            Self::Static { camera_from_world } => *camera_from_world,
            Self::Wander {
                distance_m,
                max_off_axis_rad,
                max_roll_rad,
                max_aim_offset_m,
                tremor,
                seed,
            } => {
                let mut rng = ChaCha8Rng::seed_from_u64(*seed);
                let mut ph = [0.0f64; 12];
                for p in &mut ph {
                    *p = rng.random::<f64>() * 2.0 * PI;
                }
                let wave = |period_s: f64, phase: f64| (2.0 * PI * t_secs / period_s + phase).sin();
                let (d0, d1) = *distance_m;
                // Incommensurate periods so that the whole envelope gets covered.
                let d = 0.5 * (d0 + d1) + 0.5 * (d1 - d0) * wave(23.0, ph[0]);
                let off_axis = 0.5 * max_off_axis_rad * (1.0 + wave(17.0, ph[1]));
                let azimuth = ph[2] + 2.0 * PI * t_secs / 31.0;
                let roll = max_roll_rad * wave(13.0, ph[3]);
                let aim = Point3::new(
                    max_aim_offset_m * wave(11.0, ph[4]),
                    max_aim_offset_m * wave(7.3, ph[5]),
                    0.0,
                );
                let base = look_at(d, off_axis, azimuth, roll, aim);
                let (tp, tr) = *tremor;
                let shake_t = Vector3::new(
                    tp * wave(0.53, ph[6]),
                    tp * wave(0.71, ph[7]),
                    tp * wave(0.37, ph[8]),
                );
                let shake_r = Vector3::new(
                    tr * wave(0.61, ph[9]),
                    tr * wave(0.43, ph[10]),
                    tr * wave(0.89, ph[11]),
                );
                let shake = Isometry3::from_parts(
                    Translation3::from(shake_t),
                    UnitQuaternion::new(shake_r),
                );
                shake * base
            }
        }
    }
}

/// camera_from_world for a camera at spherical position (`d` metres, `off_axis` from the
/// world z axis, `azimuth` about it, radians) around `aim`, looking at `aim`, rolled by `roll`
/// about its viewing axis; image "down" points toward the camera's side of the desk.
pub fn look_at(d: f64, off_axis: f64, azimuth: f64, roll: f64, aim: Point3<f64>) -> Isometry3<f64> {
    let dir_to_camera = Vector3::new(
        off_axis.sin() * azimuth.cos(),
        off_axis.sin() * azimuth.sin(),
        off_axis.cos(),
    );
    let eye = aim + d * dir_to_camera;
    let z_c = -dir_to_camera;
    // Image "down" points horizontally toward the camera's side of the desk, as when a person
    // looks down at a sheet in front of them; this stays defined when looking straight down.
    let hint = Vector3::new(azimuth.cos(), azimuth.sin(), 0.0);
    let y_c = (hint - hint.dot(&z_c) * z_c).normalize();
    let x_c = y_c.cross(&z_c);
    let world_from_camera_rot = Rotation3::from_basis_unchecked(&[x_c, y_c, z_c])
        * Rotation3::from_axis_angle(&Vector3::z_axis(), roll);
    let world_from_camera = Isometry3::from_parts(
        Translation3::from(eye.coords),
        UnitQuaternion::from_rotation_matrix(&world_from_camera_rot),
    );
    world_from_camera.inverse()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_look_at_puts_the_marker_on_the_optical_axis_at_distance() {
        let path = CameraPath::looking_at_marker(0.5, 0.6, 1.0);
        let p = path.camera_from_world(3.0) * Point3::origin();
        assert!(p.x.abs() < 1e-12 && p.y.abs() < 1e-12 && (p.z - 0.5).abs() < 1e-12);
        // The marker normal (+z world) points back toward the camera, tilted by the off-axis angle.
        let n = path.camera_from_world(0.0) * Vector3::z();
        assert!((n.dot(&-Vector3::z()) - 0.6f64.cos()).abs() < 1e-12);
    }

    #[test]
    fn wander_stays_inside_its_envelope_and_is_reproducible() {
        let path = CameraPath::hand_held(7);
        for i in 0..2000 {
            let t = i as f64 * 0.05;
            let cfw = path.camera_from_world(t);
            let eye = cfw.inverse() * Point3::origin();
            let d = eye.coords.norm();
            assert!((0.28..0.83).contains(&d), "distance {d} at {t}");
            let off = (eye.z / d).acos();
            assert!(off < 51f64.to_radians(), "off-axis {off} at {t}");
        }
        assert_eq!(
            CameraPath::hand_held(7).camera_from_world(1.234),
            path.camera_from_world(1.234)
        );
    }
}
