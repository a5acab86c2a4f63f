//! The multibody solver: bodies, joints, force elements, the step, diagnostics, scene files.
//!
//! No threads, no I/O besides [`Scene::load`], no OpenCV or kiss3d. The method is the
//! sequential-impulse scheme of Mariti & Valentini (see [`solver`] for the stage order,
//! [`state::diagnostics`] for the energy bookkeeping).
//!
//! # Using it
//! ```no_run
//! use ar_dynamics::{model::stylus, Scene};
//! use nalgebra::{Point3, Vector3};
//!
//! let scene = Scene::load("assets/scenes/ten_pendula.toml")?;
//! let mut sim = scene.build()?;
//! // Clip the stylus to the first grab point and pull it slowly along +x.
//! sim.attach_stylus_to_grab_point(0, stylus::DEFAULT_STIFFNESS_N_PER_M, stylus::DEFAULT_DAMPING_N_S_PER_M)?;
//! let start = sim.grab_point_in_world(0).unwrap();
//! for n in 0..100 {
//!     let t = n as f64 * sim.dt_secs();
//!     sim.set_stylus_target(start + Vector3::new(0.05 * t, 0.0, 0.0), Vector3::new(0.05, 0.0, 0.0));
//!     sim.apply_external_force(3, Vector3::new(0.01, 0.0, 0.0), Point3::origin()); // e.g. wind
//!     sim.step()?;
//!     let d = sim.diagnostics();
//!     println!("{:.2} s: |psi| = {:.2e} m, E error = {:.3} %", d.time_secs, d.constraint_norm_m, 100.0 * d.energy_error_rel);
//! }
//! sim.detach_stylus();
//! for (joint, reaction) in sim.joints().iter().zip(sim.joint_reactions()) {
//!     println!("{}: {:?} N", joint.name, reaction.force_in_world);
//! }
//! for body in sim.bodies().iter().skip(1) {
//!     let _pose = body.world_from_body(); // Isometry3<f64>, and body.shape for drawing
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Stable API (used by the rig, the compositor and the wind)
//! - [`Scene::load`] → [`Scene::build`] / [`Scene::build_with`] → [`Simulation`].
//! - [`Simulation::step`] with the fixed `dt_secs` of [`SolverParams`].
//! - Bodies: [`Simulation::bodies`] ([`Body::world_from_body`], [`Body::shape`]),
//!   [`Simulation::body_id`], [`Simulation::body_pose`]. Body 0 is the ground.
//! - Stylus: [`Simulation::attach_stylus`] / [`Simulation::attach_stylus_to_grab_point`],
//!   [`Simulation::set_stylus_target`], [`Simulation::detach_stylus`],
//!   [`Simulation::stylus_point_in_world`], [`Simulation::grab_points`],
//!   [`Simulation::grab_point_in_world`].
//! - [`Simulation::apply_external_force`]: a force at a point for the next step; its work is
//!   booked as external work in the energy balance.
//! - [`Simulation::add_force_element`] ([`ForceElement`], a scene's `[[force]]` tables): a
//!   constant or sinusoidal force or torque that acts in every step, its work booked the same
//!   way; [`Simulation::force_elements`].
//! - [`Simulation::diagnostics`] ([`StepDiagnostics`]), [`Simulation::joint_reactions`]
//!   ([`JointReaction`], same order as [`Simulation::joints`], whose `name` is the joint name).

pub mod articulated;
pub mod contact;
pub mod deformable;
pub mod drive;
pub mod error;
pub mod linalg;
pub mod model;
pub mod scene;
pub mod simulation;
pub mod solver;
pub mod state;
pub mod wind;

pub use deformable::Fracture;
pub use drive::script::{ScriptError, ScriptFrame, StylusScript};
pub use drive::scripted::{run_scripted, run_scripted_with, RunSummary, ScriptedSim, StylusSpring};
pub use error::{SceneError, SimError};
pub use model::body::{Body, BodyId, GROUND};
pub use model::force::{ForceAxes, ForceElement, ForceKind};
pub use model::grab::GrabPoint;
pub use model::joint::{Joint, JointKind};
pub use model::shape::Shape;
pub use model::spring::Spring;
pub use model::stylus::{StylusAttachment, StylusTarget};
pub use model::support::{Support, SupportShape};
pub use model::Model;
pub use scene::Scene;
pub use simulation::Simulation;
pub use solver::{
    ElementResidual, FailureCause, JointReaction, SolverMethod, SolverParams, StepFailure,
};
pub use state::diagnostics::StepDiagnostics;
