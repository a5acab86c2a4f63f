//! The fictitious stylus spring-damper of the paper (Eq. 10).
//!
//! While the user holds a body ("clipped"), a stiff isotropic spring-damper pulls a point of
//! that body toward the stylus tip: F = k (p_tip − p) + c (v_tip − ṗ). The tip moves linearly
//! during a step from the target set before it, with the target velocity. Like the scene's
//! springs it is a soft constraint (midpoint-implicit elastic part, implicit damper), stable
//! for any stiffness at h = 0.01 s (tested with 1e4 N/m on a 0.1 kg body).

use nalgebra::{Point3, Vector3};

use super::body::BodyId;

/// Default stylus stiffness (N/m).
pub const DEFAULT_STIFFNESS_N_PER_M: f64 = 1.0e4;
/// Default stylus damping (N·s/m): about a fifth of critical for a 0.1 kg body at the
/// default stiffness, enough to settle a grab within a few tenths of a second.
pub const DEFAULT_DAMPING_N_S_PER_M: f64 = 15.0;

/// Where and how the stylus is attached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusAttachment {
    /// The clipped body.
    pub body: BodyId,
    /// The clipped point in the body frame (m).
    pub point_in_body: Vector3<f64>,
    /// Spring stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Damping (N·s/m).
    pub damping_n_s_per_m: f64,
}

/// The stylus tip as the solver sees it: position at the start of the next step and its
/// velocity during that step (world frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusTarget {
    /// Tip position (m, world).
    pub position_in_world: Point3<f64>,
    /// Tip velocity (m/s, world).
    pub velocity_in_world: Vector3<f64>,
}
