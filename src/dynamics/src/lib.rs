//! ar-dynamics: the multibody dynamics of ar-multibody: the model, the sequential-impulse
//! solver of Mariti & Valentini with its coupled direct solve, contact, deformable bodies,
//! the articulated method in reduced coordinates, scene files, and the scripted loop.
//!
//! No devices, no display (Cargo says so: the crate depends on none of them), and no threads
//! of its own: contact's narrow phase may share a step's work with rayon's pool, with the same
//! bits on any number of threads (`contact::narrow_phase`). Its only I/O is reading scene
//! files and scripts and writing the CSV formats of a run.
//! The layers are folders: [`model`] (what does not change within a run), [`state`] (what a
//! step measures), [`linalg`], [`contact`], [`solver`] (the stages of a step), [`articulated`]
//! (the second method), [`scene`] (files and generators), [`simulation`] (one interface for
//! either method), [`drive`] (scripts, the scripted loop, CSV), [`wind`], [`deformable`].
//! The repository's `src/manual/architecture.md` shows where this crate sits.
//!
//! # Using it
//! A scene is simulated through [`SceneSimulation`]: the method is chosen once, the step is
//! the scene's, and every step takes a [`StepInput`] (the stylus spring and tip, loads, the
//! wind level).
//! ```no_run
//! use ar_dynamics::model::stylus::StylusAttachment;
//! use ar_dynamics::{Method, SceneSimulation, StepInput, StylusTarget};
//! use nalgebra::Vector3;
//!
//! let path = std::path::Path::new("assets/scenes/ten_pendula.toml");
//! let mut sim = SceneSimulation::load(path, Method::Default)?;
//! // Clip the stylus to the first grab point and pull it slowly along +x.
//! let clip = StylusAttachment::at_grab_point(&sim.grab_points()[0], 1.0e4, 15.0);
//! let start = sim.grab_point_in_world(0).unwrap();
//! for n in 0..100 {
//!     let t = n as f64 * sim.dt_secs();
//!     let tip = StylusTarget {
//!         position_in_world: start + Vector3::new(0.05 * t, 0.0, 0.0),
//!         velocity_in_world: Vector3::new(0.05, 0.0, 0.0),
//!     };
//!     let input = StepInput { clip: Some(clip), tip: Some(tip), ..StepInput::default() };
//!     sim.step(&input)?;
//!     let d = sim.diagnostics();
//!     println!("{:.2} s: |psi| = {:.2e} m, E error = {:.3} %", d.time_secs, d.constraint_norm_m, 100.0 * d.energy_error_rel);
//! }
//! for (id, body) in sim.bodies().iter().enumerate().skip(1) {
//!     let _pose = sim.body_pose(id); // Isometry3<f64>, and body.shape for drawing
//!     let _ = body;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The default method's own API (joint reactions, contacts, rigid groups, solver parameters)
//! is [`Simulation`], reached through [`SceneSimulation::method`]; the articulated method's is
//! [`articulated::ArticulatedSim`]. [`Scene::load`] → [`Scene::build`] gives a [`Simulation`]
//! directly, as the tests do.

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
pub use drive::scripted::{run_scripted, RunSummary, StylusSpring};
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
pub use simulation::{
    Method, MethodSim, PointLoad, SceneSimulation, Simulation, StepError, StepInput,
    SLEEP_SPEED_M_PER_S, TIME_TO_SLEEP_SECS,
};
pub use solver::{
    ElementResidual, FailureCause, JointReaction, SolverMethod, SolverParams, StepFailure,
};
pub use state::diagnostics::StepDiagnostics;
