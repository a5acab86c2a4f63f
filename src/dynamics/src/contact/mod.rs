//! Contact: materials, static geometry, detection through parry (the narrow phase) and the
//! active-set solve of unilateral rows with Coulomb friction (the stages that use them are in
//! `crate::solver::contact`).
//!
//! # Model
//! - Every body with a shape collides unless its scene table says `collide = false`; bodies
//!   joined by a joint never collide with each other. `[[plane]]` (a half-space; `normal`
//!   points to the free side) and `[[static]]` (a fixed shape) are geometry of the ground.
//! - Materials: `friction = μ` (default 0.5), `restitution = e` (default 0). A pair's friction
//!   is √(μ₁ μ₂) (a frictionless plane makes every contact on it frictionless) and its
//!   restitution the larger of the two.
//! - Contact is on in a scene when it declares a `[contact]` table, a `[[plane]]` or a
//!   `[[static]]`, or when one of its bodies sets `friction`, `restitution` or `collide`
//!   (a body that names a contact field expects contact; none is silently off); scenes
//!   without any of them step exactly as before (their golden hashes hold).
//!
//! # Detection
//! Shapes are parry's (`Ball`, `Cuboid`, `Capsule`, `Cylinder`, `HalfSpace`, `ConvexPolyhedron`
//! for a convex, its hull built once when the model is made; a cylinder or a
//! capsule lies along the body z axis as in [`crate::model::shape`]). Candidate pairs come from
//! parry's bounding-volume hierarchy over the colliders' bounding boxes (planes pair with
//! everything), taken in collider order (deterministic) and tested by bounding spheres,
//! then `contact_manifolds` of parry's default dispatcher gives the manifold (up to four
//! points on a box face) with a prediction distance: the contact margin plus what the pair
//! can close in one step, so that a contact is a row before it touches (speculative contact).
//!
//! # Solve (see [`lcp`])
//! Unilateral normal rows (impulse ≥ 0) and Coulomb friction with an isotropic cone: a
//! contact sticks (two tangent equality rows) while its friction impulse lies in the cone
//! μ λₙ, otherwise it slides with the friction impulse μ λₙ opposite the sliding direction
//! (the slip at the start of the step; on the step it starts to slide, the direction of the
//! sticking impulse).
//! The active set is found as Jonquet et al.'s "right" algorithm (Alg. 3): the handled set
//! starts empty every step; solve; insert every detected contact whose violation tendency is
//! negative (its row velocity below the one that closes its gap at the end of the step);
//! repeat until no insertion. `platt` and `tendency` ([`InequalityMethod`]) are the paper's
//! Alg. 1 and 2, which keep the handled set across steps, for teaching and as tests that the
//! corner example discriminates.
//! With joints, `right` solves the contacts through the mechanism instead ([`through_joints`]:
//! the joints eliminated exactly, the contacts' complementarity problem by projected
//! Gauss–Seidel), since a chain lying on the desk makes the coupled system too redundant for
//! the active set to settle. Without joints and with more than [`DENSE_MAX_CONTACTS`]
//! contacts (a pile), or with the kinematic stylus tip in a contact (the dense active set
//! meets its infinite mass with equalities it cannot hold together), `right` solves the same
//! complementarity problem by projected Gauss–Seidel on the bodies' velocities
//! ([`sparse_pgs`]), warm-started from the last step.

mod broad_phase;
pub mod convex;
pub mod geometry;
pub mod impact;
pub mod lcp;
mod narrow_phase;
pub mod sparse_pgs;
pub mod spin;
mod sweep_focus;
pub mod through_joints;
pub mod through_soft_rows;

use nalgebra::{Isometry3, Vector3};

use crate::error::SimError;
use crate::model::body::BodyId;

pub use geometry::{Collider, ColliderShape};

/// Default friction coefficient of a body, plane or static shape.
pub const DEFAULT_FRICTION: f64 = 0.5;
/// Default restitution of a body, plane or static shape.
pub const DEFAULT_RESTITUTION: f64 = 0.0;
/// Default contact margin (m): contacts are rows this far before they touch.
pub const DEFAULT_MARGIN_M: f64 = 1.0e-3;
/// Default normal approach speed above which a contact (or a joint limit) is an impact with
/// restitution (m/s, or rad/s for an angle limit).
pub const DEFAULT_IMPACT_SPEED_M_PER_S: f64 = 1.0e-3;
/// Without joints, the contact rows of a step with at most this many contacts are solved by
/// Alg. 3's dense active set, and with more (or with the pushing tip in one of them) by
/// sparse projected Gauss–Seidel ([`sparse_pgs`]).
pub const DENSE_MAX_CONTACTS: usize = 64;

/// Surface properties.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Material {
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Newton restitution coefficient 0 ≤ e ≤ 1.
    pub restitution: f64,
    /// Spin (torsional) friction (m ≥ 0): the friction torque about the contact normal is
    /// bounded by this times the normal force, as MuJoCo's `condim = 4` (its second
    /// `friction` entry). A point contact has none (0, the default): a sphere spinning
    /// about the normal on it spins on. For a Hertzian patch of radius a it is
    /// (3π/16) μ a (Lubkin's torsion of elastic spheres).
    pub spin_friction_m: f64,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            friction: DEFAULT_FRICTION,
            restitution: DEFAULT_RESTITUTION,
            spin_friction_m: 0.0,
        }
    }
}

impl Material {
    /// A pair's material: friction √(μ₁ μ₂), restitution max(e₁, e₂), spin friction
    /// max(s₁, s₂) (as MuJoCo mixes its friction: a body's contact patch twists on a rigid
    /// desk as on its like).
    pub fn pair(&self, other: &Material) -> Material {
        Material {
            friction: (self.friction * other.friction).sqrt(),
            restitution: self.restitution.max(other.restitution),
            spin_friction_m: self.spin_friction_m.max(other.spin_friction_m),
        }
    }

    /// Checks the ranges (μ ≥ 0 finite, 0 ≤ e ≤ 1, spin friction ≥ 0 finite).
    pub fn validate(&self, name: &str) -> Result<(), SimError> {
        let bad = |reason: String| SimError::BadContact {
            name: name.to_owned(),
            reason,
        };
        if !(self.friction >= 0.0 && self.friction.is_finite()) {
            return Err(bad(format!("friction must be ≥ 0, got {}", self.friction)));
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return Err(bad(format!(
                "restitution must be in [0, 1], got {}",
                self.restitution
            )));
        }
        if !(self.spin_friction_m >= 0.0 && self.spin_friction_m.is_finite()) {
            return Err(bad(format!(
                "spin_friction_m must be ≥ 0, got {}",
                self.spin_friction_m
            )));
        }
        Ok(())
    }
}

/// How the handled set of unilateral rows is found (Jonquet et al., Alg. 1–3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InequalityMethod {
    /// Alg. 3, "the right algorithm": the handled set starts empty every step and grows by
    /// the rows whose violation tendency is negative until nothing is inserted (with a
    /// safeguard: a handled row whose impulse comes out negative is released and the loop
    /// goes on). Penetration left by the step (impacts) is projected away.
    #[default]
    Right,
    /// Alg. 1, Platt's: the handled set is kept across steps; a row leaves it when its
    /// impulse is ≤ 0 and enters when its constraint is violated at the end of a step. No
    /// projection (the paper's failure shows as penetration).
    Platt,
    /// Alg. 2, the violation-tendency algorithm: like Platt's, but a row enters when its
    /// violation tendency at the end of the step is negative. No projection.
    Tendency,
}

impl InequalityMethod {
    /// Parses `right`, `platt` or `tendency`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "right" => Some(Self::Right),
            "platt" => Some(Self::Platt),
            "tendency" => Some(Self::Tendency),
            _ => None,
        }
    }

    /// The name `parse` accepts.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Right => "right",
            Self::Platt => "platt",
            Self::Tendency => "tendency",
        }
    }
}

/// Everything the contact stages read: colliders, pairs that never collide, the margin and
/// the inequality method.
#[derive(Clone, Debug)]
pub struct ContactModel {
    /// Colliders: the bodies' shapes (scene order), then static shapes, then planes.
    pub colliders: Vec<Collider>,
    /// Body pairs (smaller index first, sorted) that never collide: those joined by a joint.
    pub excluded_pairs: Vec<(BodyId, BodyId)>,
    /// Contact margin (m).
    pub margin_m: f64,
    /// Active-set algorithm.
    pub method: InequalityMethod,
    /// Normal approach speed above which a contact is an impact with restitution (m/s).
    pub impact_speed_m_per_s: f64,
    /// The stylus tip pushes (a kinematic sphere of this radius at the tip, moving with the
    /// tip's velocity), if set; [`crate::Simulation::set_contact_model`] adds its collider.
    pub stylus_tip_radius_m: Option<f64>,
    /// The pseudo-body index of the stylus tip (the number of bodies), once added.
    pub tip_body: Option<BodyId>,
    /// The most contact points one detection keeps; a step that finds more fails
    /// ([`geometry::MAX_CONTACT_POINTS`] by default).
    pub max_points: usize,
    /// Islands at rest fall asleep (`[contact] sleep`, default true; see
    /// `crate::simulation`'s sleep module).
    pub sleep: bool,
    /// The precision setting (`[contact] tolerance_m`): the penetration a step's contact
    /// solve may leave (m). The sparse sweeps stop once their row-velocity residual is under
    /// `tolerance_m / h`, and the projection once the deepest penetration is under
    /// `tolerance_m`. `None`: the sweeps aim at [`through_joints::RESIDUAL_TOLERANCE_M_PER_S`]
    /// and the projection at h times what they leave, at most the solver's position
    /// tolerance (about 1e-7 m on the pile). Within [`TOLERANCE_RANGE_M`].
    pub tolerance_m: Option<f64>,
    /// Threads the narrow phase may use (`[contact] threads`, default [`DEFAULT_THREADS`]);
    /// the results are the same bits whatever the number (see `narrow_phase`).
    pub threads: usize,
}

/// The narrow phase's threads by default: the two cores of the lab's machines.
pub const DEFAULT_THREADS: usize = 2;

/// The most threads `[contact] threads` may ask for.
pub const MAX_THREADS: usize = 64;

/// The range `[contact] tolerance_m` may take (m): no finer than the projection's own floor
/// (1e-10 m), no coarser than the default contact margin (a contact sunk deeper than the
/// margin could be missed by the rows of the next step).
pub const TOLERANCE_RANGE_M: (f64, f64) = (1.0e-10, 1.0e-3);

impl ContactModel {
    /// A model with no colliders yet.
    pub fn new(margin_m: f64, method: InequalityMethod) -> Self {
        Self {
            colliders: Vec::new(),
            excluded_pairs: Vec::new(),
            margin_m,
            method,
            impact_speed_m_per_s: DEFAULT_IMPACT_SPEED_M_PER_S,
            stylus_tip_radius_m: None,
            tip_body: None,
            max_points: geometry::MAX_CONTACT_POINTS,
            sleep: true,
            tolerance_m: None,
            threads: DEFAULT_THREADS,
        }
    }

    /// Whether the pair of bodies may collide.
    pub fn pair_allowed(&self, a: BodyId, b: BodyId) -> bool {
        let fixed = |x: BodyId| x == crate::model::body::GROUND || Some(x) == self.tip_body;
        if a == b || (fixed(a) && fixed(b)) {
            return false;
        }
        let key = (a.min(b), a.max(b));
        self.excluded_pairs.binary_search(&key).is_err()
    }

    /// Adds a collider for a shape at `body_from_shape` on `body` (0: static geometry).
    pub fn add(
        &mut self,
        name: impl Into<String>,
        body: BodyId,
        shape: ColliderShape,
        body_from_shape: Isometry3<f64>,
        material: Material,
    ) {
        self.colliders.push(Collider {
            name: name.into(),
            body,
            shape,
            body_from_shape,
            material,
        });
    }

    /// Adds a plane through `point` with `normal` pointing to the free side (any length > 0).
    pub fn add_plane(
        &mut self,
        name: impl Into<String>,
        normal: Vector3<f64>,
        point: Vector3<f64>,
        material: Material,
    ) -> Result<(), SimError> {
        let name = name.into();
        // Scaled first: a normal of [0, 0, 1e300] overflowed its norm and became zero.
        let Some(n) = crate::scene::checker::unit_direction(normal) else {
            return Err(SimError::BadContact {
                name,
                reason: "plane normal must be finite and not zero".to_owned(),
            });
        };
        self.add(
            name,
            crate::model::body::GROUND,
            ColliderShape::Plane { normal: n },
            Isometry3::translation(point.x, point.y, point.z),
            material,
        );
        Ok(())
    }
}

/// One contact point of a step (world frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactPoint {
    /// Colliders (indices into [`ContactModel::colliders`]) and the point's index in their
    /// manifold: the contact's identity from step to step.
    pub collider1: usize,
    pub collider2: usize,
    pub index: usize,
    /// Bodies of the two colliders.
    pub body1: BodyId,
    pub body2: BodyId,
    /// Points on the surfaces of shape 1 and shape 2 (m).
    pub point1: Vector3<f64>,
    pub point2: Vector3<f64>,
    /// Unit normal from shape 1 to shape 2.
    pub normal: Vector3<f64>,
    /// Signed distance along the normal (m; negative when penetrating).
    pub gap_m: f64,
    /// The pair's material.
    pub material: Material,
}

impl ContactPoint {
    /// The identity of the point (for the handled set kept by Alg. 1 and 2).
    pub fn key(&self) -> (usize, usize, usize) {
        (self.collider1, self.collider2, self.index)
    }
}

/// What a step reports per contact point (the rows of `simulate --contacts`).
#[derive(Clone, Debug, PartialEq)]
pub struct ContactReport {
    /// Collider names.
    pub shape1: usize,
    pub shape2: usize,
    /// Midpoint of the two surface points at the start of the step (m).
    pub point_in_world: Vector3<f64>,
    /// Unit normal from shape 1 to shape 2.
    pub normal: Vector3<f64>,
    /// Gap at the end of the step (m; negative when penetrating).
    pub gap_m: f64,
    /// Normal force (N): normal impulse / h, ≥ 0 (impact impulses included).
    pub normal_force_n: f64,
    /// Magnitude of the friction force (N).
    pub friction_force_n: f64,
}
