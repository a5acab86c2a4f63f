//! What a running simulation shows, as neutral data: its bodies (shape and pose), its joint
//! reactions and the supports its scene draws. The rig's simulation interface returns these and the solver thread publishes
//! them; the compositor turns them into its drawables and chooses how they look (colours,
//! arrow scale). Nothing here knows about drawing (a mesh visual's triangles, read once at load,
//! are data the compositor shares, not drawing state), and nothing here is solver state.

use std::sync::Arc;

use nalgebra::{Isometry3, Point3, Vector3};

use crate::compositor::mesh::SharedMesh;

pub use ar_dynamics::{Shape, Support, SupportShape};

/// One body to show: which body, what it looks like, and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyView {
    /// The body's index in its simulation (in the solver library, 0 is the ground, which has
    /// no shape). Stable over a run: the compositor keys a body's colour on it.
    pub body: usize,
    /// The body's name from the scene file (shared: snapshots are cloned every frame).
    pub name: Arc<str>,
    /// Its visual shape, centred on the body frame's origin (elongated shapes along z).
    pub shape: Shape,
    /// The body pose `world_from_body` (world = marker frame, metres).
    pub world_from_body: Isometry3<f64>,
    /// What is drawn instead of `shape` when not empty (the scene's `[[body.visual]]` tables;
    /// shared, like the name).
    pub visuals: Arc<[ar_dynamics::model::visual::Visual]>,
    /// The loaded geometry of each visual that is a mesh, in the order of `visuals` (`None`
    /// for a primitive), read once when the scene was loaded; empty when its meshes were not
    /// loaded, and then the body's `shape` stands in for its mesh visuals.
    pub meshes: Arc<[Option<SharedMesh>]>,
}

/// A deformable body's rigid group (see [`ar_dynamics::deformable::rigid_group`]) and whether
/// it is rigid now: what the sandbox's `G` key toggles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RigidGroupView {
    /// The group's name, `<deformable>.<group>` (shared: snapshots are cloned every frame).
    pub name: Arc<str>,
    /// Rigid now (true) or deformable.
    pub rigid: bool,
}

/// The reaction force of one joint on its second body, or a contact's normal force (see
/// [`crate::rig::RigSimulation::contacts`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReactionView {
    /// Where it acts: the joint's anchor on its second body, world frame (m).
    pub point_in_world: Point3<f64>,
    /// The force, world frame (N).
    pub force_in_world: Vector3<f64>,
}
