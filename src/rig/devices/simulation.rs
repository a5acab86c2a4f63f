//! The simulation interface of the solver thread: what it needs from a method's simulation of
//! a scene (implemented over the solver library by [`crate::rig::scene_sim`] and
//! [`crate::rig::articulated_sim`], and by the tests' own small simulations).

use crate::interaction::{GrabPoint, SpringAttachment};
use crate::rig::threads::messages::SimDiagnostics;
use crate::scene_view::{BodyView, ReactionView, RigidGroupView, Support};
use nalgebra::{Isometry3, Point3};
use std::sync::Arc;

/// A simulation failure (the message says what and where, e.g. the time and the body whose
/// state stopped being finite).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("simulation: {0}")]
pub struct SimulationError(pub String);

/// What the solver thread needs from a simulation (implemented over the solver library).
pub trait Simulation: Send {
    /// The fixed step h it advances by, seconds (a scene's `[solver] dt_secs`): the solver
    /// thread paces its steps by it, and times and recordings count in it.
    fn dt_secs(&self) -> f64;
    /// Advances by one step of [`Self::dt_secs`], with the stylus spring while clipped and the
    /// wind level: the microphone's RMS above its noise floor (full scale 1; 0 when silent or
    /// without a microphone), which the scene's wind turns into forces. An error means the
    /// simulation cannot go on (e.g. its state is no longer finite): the solver thread stops
    /// stepping.
    fn step(
        &mut self,
        spring: Option<&SpringAttachment>,
        wind_level: f64,
    ) -> Result<(), SimulationError>;
    /// The stylus tip before the next step (world; `None`: no stylus). A scene whose tip
    /// pushes ([`Self::stylus_tip_radius_m`]) moves its kinematic sphere there while not
    /// clipped; the others ignore it (by default).
    fn set_stylus_tip(&mut self, _tip_in_world: Option<Point3<f64>>) {}
    /// The radius of the pushing stylus tip (m), when the scene's tip pushes the bodies
    /// (`[contact] stylus_tip_radius_m`); `None` by default.
    fn stylus_tip_radius_m(&self) -> Option<f64> {
        None
    }
    /// The camera's pose in the newest tracked frame, for a wind that blows from where the
    /// user looks (nothing by default).
    fn set_viewpoint(&mut self, _world_from_camera: &Isometry3<f64>) {}
    /// The points the stylus may clip to, where they are now.
    fn grab_points(&self) -> Vec<GrabPoint>;
    /// Where a body point is now; `None` for an unknown body.
    fn point_in_world(&self, body: usize, point_in_body: &Point3<f64>) -> Option<Point3<f64>>;
    /// The bodies that have a visual shape, at their current poses.
    fn bodies(&self) -> Vec<BodyView>;
    /// The scene's supports (stands, posts, threads), drawn with the bodies; none by default.
    /// Shared: they never move, and every snapshot carries them.
    fn supports(&self) -> Arc<[Support]> {
        Arc::from(Vec::new())
    }
    /// The scene's name, for the HUD ("scene" by default).
    fn name(&self) -> Arc<str> {
        Arc::from("scene")
    }
    /// Joint reaction forces (none by default).
    fn reactions(&self) -> Vec<ReactionView> {
        Vec::new()
    }
    /// Contact normal forces after the last step, one per contact point, acting on the
    /// contact's second shape (none by default).
    fn contacts(&self) -> Vec<ReactionView> {
        Vec::new()
    }
    /// Diagnostics of the last step.
    fn diagnostics(&self) -> SimDiagnostics;
    /// The rigid groups of the scene's deformable bodies and their state now (none by
    /// default).
    fn rigid_groups(&self) -> Vec<RigidGroupView> {
        Vec::new()
    }
    /// Makes the named rigid group of a deformable body rigid (`true`) or deformable
    /// (`false`) now, conserving momentum; an error names why not (by default: this
    /// simulation has no rigid groups).
    fn set_group_rigid(&mut self, name: &str, _rigid: bool) -> Result<(), SimulationError> {
        Err(SimulationError(format!(
            "no rigid group `{name}`: this simulation has no rigid groups"
        )))
    }
}
