//! Joint limits and joint actuators: generalized forces on the coordinate of a
//! one-degree-of-freedom tree joint (a revolute joint's angle, a prismatic joint's travel),
//! added to the τ the articulated-body algorithm takes.
//!
//! - A limit is the source paper's (after McKenna) exponential limit force with damping,
//!   τ = −b q̇ + k (e^{s(q_lo − q)} − e^{s(q − q_hi)}): a soft stop that grows by e every 1/s
//!   past either end. Its potential energy (k/s)(e^{s(q_lo − q)} + e^{s(q − q_hi)}) is booked
//!   as elastic energy and b q̇² as dissipation in the energy balance.
//! - An actuator is a torque (revolute) or force (prismatic) τ(t) = A s(t), s(t) = 1 when
//!   constant or sin(2π f t + φ), acting between the joint's two links; its power τ q̇ is
//!   booked as external work.
//!
//! They are set by scene joint name through [`super::ArticulatedSim::set_joint_limit`] and
//! [`super::ArticulatedSim::add_joint_actuator`] (scene files have no fields for them yet); a
//! joint that closes a loop or has other than one degree of freedom is refused. q is measured
//! from the scene's initial pose (q = 0 there).

use std::f64::consts::TAU;

use super::error::ArticulatedError;

/// An exponential joint limit with damping (see the module docs). Units follow the joint:
/// rad and N·m for a revolute joint, m and N for a prismatic one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimit {
    /// Lower end q_lo (rad or m) from the initial pose.
    pub lower: f64,
    /// Upper end q_hi (rad or m).
    pub upper: f64,
    /// k: the limit force at either end (N·m or N).
    pub stiffness: f64,
    /// s: the exponential's rate (1/rad or 1/m).
    pub sharpness: f64,
    /// b: the joint's damping (N·m·s/rad or N·s/m), acting everywhere, as in the paper.
    pub damping: f64,
}

/// A joint actuator (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointActuator {
    /// A: the torque (N·m) or force (N) when constant, the amplitude when periodic.
    pub amplitude: f64,
    /// f (Hz): 0 for a constant actuator.
    pub frequency_hz: f64,
    /// φ (rad), unused when constant.
    pub phase_rad: f64,
}

fn bad(field: &'static str, value: f64) -> Result<(), ArticulatedError> {
    Err(ArticulatedError::BadParameter { field, value })
}

impl JointLimit {
    /// Checks the numbers: finite, lower < upper, stiffness and sharpness positive, damping
    /// not negative.
    pub fn validate(&self) -> Result<(), ArticulatedError> {
        if !(self.lower.is_finite() && self.upper.is_finite() && self.lower < self.upper) {
            return bad("limit upper − lower", self.upper - self.lower);
        }
        if !(self.stiffness > 0.0 && self.stiffness.is_finite()) {
            return bad("limit stiffness", self.stiffness);
        }
        if !(self.sharpness > 0.0 && self.sharpness.is_finite()) {
            return bad("limit sharpness", self.sharpness);
        }
        if !(self.damping >= 0.0 && self.damping.is_finite()) {
            return bad("limit damping", self.damping);
        }
        Ok(())
    }

    /// The generalized force at (q, q̇) and the power its damping dissipates (b q̇²).
    pub fn force(&self, q: f64, qd: f64) -> (f64, f64) {
        let (lo, hi) = self.exponentials(q);
        (
            self.stiffness * (lo - hi) - self.damping * qd,
            self.damping * qd * qd,
        )
    }

    /// The limit's potential energy at q (J).
    pub fn energy_j(&self, q: f64) -> f64 {
        let (lo, hi) = self.exponentials(q);
        self.stiffness / self.sharpness * (lo + hi)
    }

    fn exponentials(&self, q: f64) -> (f64, f64) {
        (
            (self.sharpness * (self.lower - q)).exp(),
            (self.sharpness * (q - self.upper)).exp(),
        )
    }
}

impl JointActuator {
    /// Checks the numbers: finite, frequency zero or positive.
    pub fn validate(&self) -> Result<(), ArticulatedError> {
        if !self.amplitude.is_finite() {
            return bad("actuator amplitude", self.amplitude);
        }
        if !(self.frequency_hz >= 0.0 && self.frequency_hz.is_finite()) {
            return bad("actuator frequency_hz", self.frequency_hz);
        }
        if !self.phase_rad.is_finite() {
            return bad("actuator phase_rad", self.phase_rad);
        }
        Ok(())
    }

    /// The torque or force at time t.
    pub fn force(&self, t_secs: f64) -> f64 {
        if self.frequency_hz == 0.0 {
            self.amplitude
        } else {
            self.amplitude * (TAU * self.frequency_hz * t_secs + self.phase_rad).sin()
        }
    }
}

/// The limits and actuators of a tree, each on a one-degree-of-freedom joint: (q index,
/// q̇ index, limit) and (q̇ index, actuator).
#[derive(Clone, Debug, Default)]
pub struct JointForces {
    pub(super) limits: Vec<(usize, usize, JointLimit)>,
    pub(super) actuators: Vec<(usize, JointActuator)>,
    /// Viscous joint dampers from the scene: (q̇ index, b).
    pub(super) dampers: Vec<(usize, f64)>,
}

impl JointForces {
    /// Writes the joint forces at (t, q, q̇) into `tau` (overwritten) and returns (power of
    /// the actuators, power dissipated by the limits' damping and the joint dampers) (W).
    pub fn apply(&self, t_secs: f64, q: &[f64], qd: &[f64], tau: &mut [f64]) -> (f64, f64) {
        tau.fill(0.0);
        let (mut p_ext, mut p_diss) = (0.0, 0.0);
        for &(iq, iv, limit) in &self.limits {
            let (f, d) = limit.force(q[iq], qd[iv]);
            tau[iv] += f;
            p_diss += d;
        }
        for &(iv, b) in &self.dampers {
            tau[iv] -= b * qd[iv];
            p_diss += b * qd[iv] * qd[iv];
        }
        for &(iv, actuator) in &self.actuators {
            let f = actuator.force(t_secs);
            tau[iv] += f;
            p_ext += f * qd[iv];
        }
        (p_ext, p_diss)
    }

    /// The limits' potential energy at q (J).
    pub fn energy_j(&self, q: &[f64]) -> f64 {
        self.limits
            .iter()
            .map(|(iq, _, l)| l.energy_j(q[*iq]))
            .sum()
    }
}
