//! Force elements: a force or a torque on one body, constant or sinusoidal in time, given in
//! world or body axes (a scene's `[[force]]` tables, see the manual's `scene_files` page (`src/manual/scene_files.md`)).
//!
//! The value at time t is
//!
//! ```text
//! value(t) = vector · s(t),   s(t) = 1                      if frequency_hz = 0 (constant)
//!                             s(t) = sin(2π f t + phase)     if frequency_hz = f > 0
//! ```
//!
//! with `vector` in N (a force) or N·m (a torque), in world axes or in body axes (then it
//! turns with the body). A force acts at a point fixed in the body, so besides the force it
//! has the torque r × F about the centre of mass, r the point's world offset from it. A
//! constant part plus an oscillating one are two elements.
//!
//! The solver ([`crate::Simulation::add_force_element`]) evaluates each element once per
//! (sub-)step, at the step's midpoint time and the start pose, and books its work
//! h (F·v̄ + τ·ω̄) as external work in the energy balance.

use nalgebra::{Isometry3, Vector3};

use super::body::BodyId;
use crate::error::SimError;

/// What a force element applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ForceKind {
    /// A force (N), acting at a point fixed in the body (body frame, m; the body frame's
    /// origin is the centre of mass).
    Force {
        /// The point of application in the body frame (m).
        point_in_body: Vector3<f64>,
    },
    /// A pure torque (N·m).
    Torque,
}

/// The axes an element's vector is given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceAxes {
    /// Fixed world axes: the vector keeps its direction whatever the body does.
    World,
    /// The body's axes: the vector turns with the body.
    Body,
}

/// A force or torque on one body, constant or sinusoidal (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct ForceElement {
    /// Name from the scene file.
    pub name: String,
    /// The body it acts on (a dynamic body, not the ground).
    pub body: BodyId,
    /// Force at a body point, or torque.
    pub kind: ForceKind,
    /// Axes of `vector`.
    pub axes: ForceAxes,
    /// Direction and size: N for a force, N·m for a torque; the value when constant, the
    /// amplitude when sinusoidal.
    pub vector: Vector3<f64>,
    /// 0 for a constant element, else the frequency f of sin(2π f t + phase) (Hz).
    pub frequency_hz: f64,
    /// The phase of the sinusoid (rad); unused when `frequency_hz` is 0.
    pub phase_rad: f64,
}

impl ForceElement {
    /// The time factor s(t): 1 for a constant element, sin(2π f t + phase) otherwise.
    pub fn time_factor(&self, t_secs: f64) -> f64 {
        if self.frequency_hz == 0.0 {
            1.0
        } else {
            (std::f64::consts::TAU * self.frequency_hz * t_secs + self.phase_rad).sin()
        }
    }

    /// The element's force (N, world) and its torque about the body's centre of mass (N·m,
    /// world) at time `t_secs` with the body at `world_from_body`.
    pub fn wrench_at(
        &self,
        t_secs: f64,
        world_from_body: &Isometry3<f64>,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let vector_in_world = match self.axes {
            ForceAxes::World => self.vector,
            ForceAxes::Body => world_from_body.rotation * self.vector,
        } * self.time_factor(t_secs);
        match self.kind {
            ForceKind::Force { point_in_body } => {
                // The torque is about the centre of mass, the body frame's origin: only the
                // rotated offset matters, not where the body is.
                let arm_in_world = world_from_body.rotation * point_in_body;
                (vector_in_world, arm_in_world.cross(&vector_in_world))
            }
            ForceKind::Torque => (Vector3::zeros(), vector_in_world),
        }
    }

    /// Checks the numbers: finite vector, point and phase, a frequency that is zero or
    /// positive. (Which body it acts on is the simulation's check.)
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |reason: &str| SimError::BadForceElement {
            name: self.name.clone(),
            reason: reason.to_owned(),
        };
        if !self.vector.iter().all(|x| x.is_finite()) {
            return Err(bad("the vector must be finite"));
        }
        if let ForceKind::Force { point_in_body } = self.kind {
            if !point_in_body.iter().all(|x| x.is_finite()) {
                return Err(bad("the point of application must be finite"));
            }
        }
        if !(self.frequency_hz >= 0.0 && self.frequency_hz.is_finite()) {
            return Err(bad("the frequency must be zero or positive and finite"));
        }
        if !self.phase_rad.is_finite() {
            return Err(bad("the phase must be finite"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};
    use std::f64::consts::{FRAC_PI_2, PI, TAU};

    fn element(kind: ForceKind, axes: ForceAxes, vector: Vector3<f64>) -> ForceElement {
        ForceElement {
            name: "e".to_owned(),
            body: 1,
            kind,
            axes,
            vector,
            frequency_hz: 0.0,
            phase_rad: 0.0,
        }
    }

    fn at_com() -> ForceKind {
        ForceKind::Force {
            point_in_body: Vector3::zeros(),
        }
    }

    /// A pose a quarter turn about z (body x = world y), away from the origin.
    fn quarter_turn() -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::new(1.0, 2.0, 3.0),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), FRAC_PI_2),
        )
    }

    fn assert_close(a: Vector3<f64>, b: Vector3<f64>) {
        assert!((a - b).norm() < 1e-15, "{a} vs {b}");
    }

    #[test]
    fn a_constant_world_force_at_the_centre_of_mass_has_no_torque() {
        let v = Vector3::new(1.0, -2.0, 0.5);
        let e = element(at_com(), ForceAxes::World, v);
        for t in [0.0, 0.37, 12.0] {
            let (f, tau) = e.wrench_at(t, &quarter_turn());
            assert_eq!(f, v);
            assert_eq!(tau, Vector3::zeros());
        }
    }

    #[test]
    fn a_sinusoid_has_its_value_at_known_times() {
        let mut e = element(
            ForceKind::Torque,
            ForceAxes::World,
            Vector3::new(0.0, 0.0, 2.0),
        );
        e.frequency_hz = 2.0;
        e.phase_rad = 0.0;
        let pose = Isometry3::identity();
        // sin(2π·2·t): 0 at t = 0, 1 at t = 1/8, 0 at 1/4, −1 at 3/8.
        for (t, s) in [(0.0, 0.0), (0.125, 1.0), (0.25, 0.0), (0.375, -1.0)] {
            let (f, tau) = e.wrench_at(t, &pose);
            assert_eq!(f, Vector3::zeros());
            assert_close(tau, Vector3::new(0.0, 0.0, 2.0 * s));
        }
        // A phase of π/2 makes it a cosine.
        e.phase_rad = FRAC_PI_2;
        assert_close(e.wrench_at(0.0, &pose).1, Vector3::new(0.0, 0.0, 2.0));
        assert_close(e.wrench_at(0.25, &pose).1, Vector3::new(0.0, 0.0, -2.0));
        let t = 0.3;
        assert!((e.time_factor(t) - (TAU * 2.0 * t + FRAC_PI_2).sin()).abs() < 1e-15);
    }

    #[test]
    fn body_axes_turn_with_the_pose_and_world_axes_do_not() {
        let x = Vector3::x();
        let body = element(at_com(), ForceAxes::Body, x);
        let world = element(at_com(), ForceAxes::World, x);
        assert_close(body.wrench_at(0.0, &quarter_turn()).0, Vector3::y());
        assert_close(world.wrench_at(0.0, &quarter_turn()).0, x);
        let torque = element(ForceKind::Torque, ForceAxes::Body, x);
        assert_close(torque.wrench_at(0.0, &quarter_turn()).1, Vector3::y());
        // Half a turn about z reverses body x.
        let half = Isometry3::rotation(Vector3::z() * PI);
        assert_close(body.wrench_at(0.0, &half).0, -x);
    }

    #[test]
    fn a_force_at_an_offset_point_has_the_torque_r_cross_f() {
        // Point 0.5 m along body x, force along world z: with the quarter turn the arm is
        // 0.5 m along world y, so τ = (0, 0.5, 0) × (0, 0, 3) = (1.5, 0, 0).
        let e = element(
            ForceKind::Force {
                point_in_body: Vector3::new(0.5, 0.0, 0.0),
            },
            ForceAxes::World,
            Vector3::new(0.0, 0.0, 3.0),
        );
        let (f, tau) = e.wrench_at(0.0, &quarter_turn());
        assert_close(f, Vector3::new(0.0, 0.0, 3.0));
        assert_close(tau, Vector3::new(1.5, 0.0, 0.0));
        // The same in body axes: the force (body z = world z here) and the arm both turn.
        let mut body = e.clone();
        body.axes = ForceAxes::Body;
        let (f, tau) = body.wrench_at(0.0, &quarter_turn());
        assert_close(f, Vector3::new(0.0, 0.0, 3.0));
        assert_close(tau, Vector3::new(1.5, 0.0, 0.0));
    }

    #[test]
    fn bad_numbers_are_rejected() {
        let ok = element(at_com(), ForceAxes::World, Vector3::x());
        assert!(ok.validate().is_ok());
        let mut e = ok.clone();
        e.vector.y = f64::NAN;
        assert!(e.validate().is_err());
        let mut e = ok.clone();
        e.frequency_hz = -1.0;
        assert!(e.validate().is_err());
        let mut e = ok.clone();
        e.phase_rad = f64::INFINITY;
        assert!(e.validate().is_err());
        let mut e = ok;
        e.kind = ForceKind::Force {
            point_in_body: Vector3::new(0.0, f64::INFINITY, 0.0),
        };
        assert!(e.validate().is_err());
    }
}
