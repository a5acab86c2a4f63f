//! The articulated-body method: multibody dynamics in reduced (joint) coordinates, the second
//! method next to the maximal-coordinate sequential-impulse solver of [`crate`].
//!
//! Tree joints are exact by construction (no constraint drift in a tree, ψ = 0), and a tree
//! of n links costs O(n) per evaluation of the dynamics. Joints that close kinematic loops are
//! constraint rows on the tree, solved with Lagrange multipliers ([`loops`]). The seed is the structurally recursive
//! forward dynamics of Brandl, Johanni and Otter as presented in the project's fifth source
//! paper, in Featherstone's spatial notation ("Rigid Body Dynamics Algorithms", RBDA).
//!
//! One concept per file:
//! - [`spatial`]: motion and force vectors, cross operators, Plücker transforms in factored
//!   form;
//! - [`inertia`]: rigid and articulated inertias, and moving an articulated inertia to the
//!   parent's frame;
//! - [`joint`]: joint models (revolute, prismatic, spherical, universal, cylindrical, planar,
//!   free, fixed): coordinates, X_J, S, c_J;
//! - [`tree`]: the links, their parents and the layout of q and q̇;
//! - [`aba`]: the articulated-body algorithm (three passes, preallocated scratch);
//! - [`from_model`]: a scene's [`crate::Model`] as a tree (spanning tree of the joint
//!   graph, the joints left over as loop-closing joints, free roots for floating bodies,
//!   initial velocities projected onto the joints);
//! - [`crba`]: the joint-space mass matrix (composite-rigid-body method, world frame);
//! - [`loops`]: loop-closing joints as rows G q̈ = γ, the operational-space solve with an SVD
//!   pseudo-inverse for redundant rows, Baumgarte drift correction, the initial closing;
//! - [`joint_forces`]: joint limits (the paper's exponential limit with damping) and joint
//!   actuators (constant or sinusoidal), as joint forces τ;
//! - [`integrator`]: semi-implicit Euler, RK4, adaptive RK45 (Fehlberg);
//! - `dynamics`: the right-hand side f(t, y): external forces, their power, the ABA;
//! - `stylus`: the user's stylus spring, one implicit impulse per step (the default
//!   method's soft-constraint law; why not a force in every stage is measured there);
//! - [`system`]: [`ArticulatedSim`], the scene simulated by this method, with the default
//!   method's diagnostics (energies, balance; ψ of the loop-closing joints, 0 for trees);
//! - `reference` (tests only): recursive Newton–Euler and the composite-rigid-body method,
//!   written separately, against which the ABA is checked.
//!
//! The rig (`demo`, `run` with `--method articulated`) runs this method through
//! the rig (`ar_multibody::rig`): the stylus spring ([`ArticulatedSim::attach_stylus`]), the
//! wind (as one-step external forces, [`ArticulatedSim::apply_external_force`]), force
//! elements and scene springs are in; scenes with contacts are refused.
//!
//! # Not yet (issue 17)
//! - Scene-file fields for joint limits and actuators (they are set through
//!   [`ArticulatedSim::set_joint_limit`] and [`ArticulatedSim::add_joint_actuator`]); joint
//!   reactions (the rig shows none with this method); `simulate --stylus` and `--wind` with
//!   this method (the rig drives both).
//!
//! # Checks
//! `cargo test --release --lib articulated -- --nocapture` (ABA against CRBA/RNEA, joint
//! models and loop rows against finite differences, RK45 energy, integrator orders),
//! `cargo test -p ar-dynamics --release --test dynamics articulated_vs_default:: -- --nocapture` (the two methods on the
//! same swing and the lowest normal mode),
//! `cargo test -p ar-dynamics --release --test dynamics articulated_loops:: -- --nocapture` (loops: ‖ψ‖ over 60 s,
//! the steam engine's energy balance, the four-bar's period), `cargo bench --bench
//! articulated` (speed).

pub mod aba;
pub mod crba;
mod dynamics;
pub mod error;
pub mod from_model;
pub mod inertia;
pub mod integrator;
pub mod joint;
pub mod joint_forces;
pub mod loops;
#[cfg(test)]
mod reference;
pub mod spatial;
mod stylus;
pub mod system;
#[cfg(test)]
mod system_tests;
pub mod tree;

pub use aba::Workspace;
pub use error::ArticulatedError;
pub use integrator::Integrator;
pub use joint::JointType;
pub use joint_forces::{JointActuator, JointLimit};
pub use spatial::{ArticulatedInertia, Force, Motion, RigidInertia, Transform};
pub use system::{ArticulatedParams, ArticulatedSim, IntegratorStats};
pub use tree::{Link, Tree};
