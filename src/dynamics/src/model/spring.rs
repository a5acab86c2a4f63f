//! Linear spring-dampers between two body points.
//!
//! Force along the line of the two points: F = −k (l − l₀) − c l̇. The solver treats each
//! spring as a soft constraint row integrated with the implicit midpoint rule for the elastic
//! part (impulse −h k (eₙ + eₙ₊₁)/2) and implicit Euler for the damper (−h c ėₙ₊₁). This is
//! unconditionally stable (the cross lift's 40 N/mm springs on 0.1 kg links run at h = 0.01 s,
//! where h·ω ≈ 6) and the elastic impulse does exactly −Δ(½ k e²) of work on a straight spring,
//! so the energy bookkeeping of the elastic part is exact; see [`crate::solver`]. A spring with
//! a fracture extension breaks when stretched beyond it ([`crate::deformable::fracture`]).

use nalgebra::Vector3;

use super::body::BodyId;

/// A spring-damper between a point of body 1 and a point of body 2.
#[derive(Clone, Debug)]
pub struct Spring {
    /// Name from the scene file.
    pub name: String,
    /// First body.
    pub body1: BodyId,
    /// Second body.
    pub body2: BodyId,
    /// Attachment point in the frame of body 1 (m).
    pub point1_in_body1: Vector3<f64>,
    /// Attachment point in the frame of body 2 (m).
    pub point2_in_body2: Vector3<f64>,
    /// Rest length (m).
    pub rest_length_m: f64,
    /// Stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Damping (N·s/m).
    pub damping_n_s_per_m: f64,
    /// The spring breaks at the end of the first step whose extension l − l₀ exceeds this
    /// (m); `None`: it never breaks (see [`crate::deformable::fracture`]).
    pub fracture_extension_m: Option<f64>,
    /// Whether it has broken: a broken spring has zero stiffness and damping and acts no
    /// more; the elastic energy it held is booked as fracture loss.
    pub broken: bool,
}

impl Spring {
    /// Whether it is attached at both bodies' centres (every connection of a deformable
    /// body's elements): its rows then have no angular parts, and the solver skips them.
    pub fn at_centres(&self) -> bool {
        self.point1_in_body1 == Vector3::zeros() && self.point2_in_body2 == Vector3::zeros()
    }

    /// The spring's softness over a step of `h` seconds: s = ½h(½hk + c) (kg), as the
    /// stylus's ([`crate::model::stylus::StylusAttachment::step_compliance`]): under the
    /// implicit-midpoint law its impulse changes by −s per unit change of its end rate, so
    /// its row has the compliance 1/s in a coupled solve.
    pub fn step_compliance(&self, h: f64) -> f64 {
        0.5 * h * (0.5 * h * self.stiffness_n_per_m + self.damping_n_s_per_m)
    }

    /// Elastic energy ½ k (l − l₀)² at a given length (J).
    pub fn elastic_energy_j(&self, length_m: f64) -> f64 {
        let e = length_m - self.rest_length_m;
        0.5 * self.stiffness_n_per_m * e * e
    }
}
