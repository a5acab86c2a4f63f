//! The wind cone: where the wind blows, and how fast at a given distance.

use nalgebra::{Isometry3, Point3, Unit, Vector3};

/// A cone whose apex lies `l0_m` behind a source disc of radius `r0_m`; the disc is the
/// user's mouth, the axis the direction they blow. Wind exists only inside the cone and in
/// front of the disc; its speed falls as (l0 / l1)² with the distance l1 from the apex.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindCone {
    /// The apex (world frame, m).
    pub apex_in_world: Point3<f64>,
    /// Unit axis, pointing the way the wind blows (world frame).
    pub axis_in_world: Unit<Vector3<f64>>,
    /// Distance from the apex to the source disc (m).
    pub l0_m: f64,
    /// Radius of the source disc (m).
    pub r0_m: f64,
}

/// Why a cone could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConeError {
    /// A length is not positive and finite.
    #[error("wind cone: {field} = {value} must be positive and finite")]
    BadLength {
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// The direction is (nearly) zero or not finite.
    #[error("wind cone: the direction {0:?} has no usable length")]
    BadDirection([f64; 3]),
}

impl WindCone {
    /// A cone whose source disc is centred at `source_in_world` and blows along `direction`
    /// (any length). Directions shorter than `1e-12` are refused.
    pub fn from_source(
        source_in_world: Point3<f64>,
        direction_in_world: Vector3<f64>,
        l0_m: f64,
        r0_m: f64,
    ) -> Result<Self, ConeError> {
        for (field, value) in [("l0_m", l0_m), ("r0_m", r0_m)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(ConeError::BadLength { field, value });
            }
        }
        let axis = if direction_in_world.iter().all(|c| c.is_finite()) {
            Unit::try_new(direction_in_world, 1e-12)
        } else {
            None
        }
        .ok_or(ConeError::BadDirection(direction_in_world.into()))?;
        Ok(Self {
            apex_in_world: source_in_world - axis.into_inner() * l0_m,
            axis_in_world: axis,
            l0_m,
            r0_m,
        })
    }

    /// The user blows from where they look: the source disc at the camera's optical centre,
    /// the axis its viewing direction (+z of an OpenCV camera frame).
    pub fn from_camera(
        world_from_camera: &Isometry3<f64>,
        l0_m: f64,
        r0_m: f64,
    ) -> Result<Self, ConeError> {
        let source = world_from_camera.translation.vector.into();
        let forward = world_from_camera.rotation * Vector3::z();
        Self::from_source(source, forward, l0_m, r0_m)
    }

    /// Centre of the source disc (world, m).
    pub fn source_in_world(&self) -> Point3<f64> {
        self.apex_in_world + self.axis_in_world.into_inner() * self.l0_m
    }

    /// Half the opening angle (rad): tan θ = r0 / l0.
    pub fn half_angle_rad(&self) -> f64 {
        (self.r0_m / self.l0_m).atan()
    }

    /// If `p` is inside the cone and in front of the source disc, its distance l1 from the
    /// apex (m) and the unit wind direction there (radially out of the apex).
    pub fn reach(&self, p_in_world: &Point3<f64>) -> Option<(f64, Unit<Vector3<f64>>)> {
        let d = p_in_world - self.apex_in_world;
        let axial = d.dot(&self.axis_in_world);
        if axial < self.l0_m {
            return None;
        }
        let radial = (d - self.axis_in_world.into_inner() * axial).norm();
        // Inside when radial / axial ≤ r0 / l0, written without division.
        if radial * self.l0_m > self.r0_m * axial {
            return None;
        }
        let (dir, l1) = Unit::try_new_and_get(d, 1e-12)?;
        Some((l1, dir))
    }

    /// Wind speed (m/s) at distance `l1_m` from the apex for source speed `v0_m_per_s`:
    /// v0 (l0 / l1)². Zero closer than the source disc.
    pub fn speed_at(&self, v0_m_per_s: f64, l1_m: f64) -> f64 {
        if l1_m < self.l0_m {
            return 0.0;
        }
        let r = self.l0_m / l1_m;
        v0_m_per_s * r * r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cone() -> WindCone {
        WindCone::from_source(
            Point3::new(1.0, 0.0, 0.0),
            Vector3::new(-2.0, 0.0, 0.0),
            0.1,
            0.05,
        )
        .expect("valid cone")
    }

    #[test]
    fn apex_lies_l0_behind_the_source_disc() {
        let c = cone();
        assert!((c.apex_in_world - Point3::new(1.1, 0.0, 0.0)).norm() < 1e-15);
        assert!((c.source_in_world() - Point3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
        assert!((c.half_angle_rad() - 0.5f64.atan()).abs() < 1e-15);
    }

    #[test]
    fn speed_falls_with_the_square_of_the_distance() {
        let c = cone();
        assert_eq!(c.speed_at(3.0, 0.1), 3.0);
        assert!((c.speed_at(3.0, 0.2) - 0.75).abs() < 1e-15);
        assert!((c.speed_at(3.0, 0.4) - 3.0 / 16.0).abs() < 1e-15);
        assert_eq!(c.speed_at(3.0, 0.05), 0.0);
    }

    #[test]
    fn reach_is_limited_to_the_cone_in_front_of_the_disc() {
        let c = cone();
        // On the axis, 0.5 m in front of the disc: l1 = 0.6.
        let (l1, dir) = c.reach(&Point3::new(0.5, 0.0, 0.0)).expect("on axis");
        assert!((l1 - 0.6).abs() < 1e-12);
        assert!((dir.into_inner() - Vector3::new(-1.0, 0.0, 0.0)).norm() < 1e-12);
        // At axial 0.6 from the apex the cone's radius is 0.3: 0.29 is in, 0.31 out.
        assert!(c.reach(&Point3::new(0.5, 0.29, 0.0)).is_some());
        assert!(c.reach(&Point3::new(0.5, 0.0, -0.31)).is_none());
        // Behind the disc, or behind the user, there is no wind.
        assert!(c.reach(&Point3::new(1.05, 0.0, 0.0)).is_none());
        assert!(c.reach(&Point3::new(2.0, 0.0, 0.0)).is_none());
    }

    #[test]
    fn camera_cone_blows_along_the_optical_axis() {
        // A camera at (0, -1, 0.5) looking along +y (its z axis mapped to world +y).
        let rot = nalgebra::UnitQuaternion::from_axis_angle(
            &Vector3::x_axis(),
            -std::f64::consts::FRAC_PI_2,
        );
        let world_from_camera = Isometry3::from_parts(Vector3::new(0.0, -1.0, 0.5).into(), rot);
        let c = WindCone::from_camera(&world_from_camera, 0.1, 0.05).expect("valid");
        assert!((c.axis_in_world.into_inner() - Vector3::y()).norm() < 1e-12);
        assert!((c.source_in_world() - Point3::new(0.0, -1.0, 0.5)).norm() < 1e-12);
    }

    #[test]
    fn bad_cones_are_refused_with_the_field() {
        let e =
            WindCone::from_source(Point3::origin(), Vector3::x(), 0.0, 0.1).expect_err("l0 = 0");
        assert!(e.to_string().contains("l0_m"), "{e}");
        let e = WindCone::from_source(Point3::origin(), Vector3::zeros(), 0.1, 0.1)
            .expect_err("no axis");
        assert!(matches!(e, ConeError::BadDirection(_)));
    }
}
