//! The reference manual: everything the README's short guide leaves out, one page per topic.
//!
//! These modules hold no code; `cargo doc --no-deps --open` renders them (the Markdown sources
//! are next to this file, `src/manual/*.md`, readable as they are). Every command also has
//! `ar-multibody <command> --help`.
//!
//! - [`commands`]: `demo`, `run`, `sandbox`, `simulate` (and its CSV columns), `scene`,
//!   `arm simulate`, `arm probe`, `track`, `calibrate camera`, `calibrate tracker`.
//! - [`scene_files`]: the scene format (bodies, joints, springs, grab points, forces, solver).
//! - [`solver`]: how a step is solved, its failures, energy bookkeeping, Gauss–Seidel.
//! - [`contact`]: collisions, friction, restitution, joint limits, the inequality methods.
//! - [`wind_and_mobiles`]: the microphone's wind and the Calder mobiles.
//! - [`articulated`]: the reduced-coordinate method.
//! - [`hardware`]: camera and marker, digitizer arm, calibration order, microphone, HMD.
//! - [`testing`]: the test tiers and hardware tests.
//! - [`performance`]: current figures and the commands that print them.

#[doc = include_str!("commands.md")]
pub mod commands {}

#[doc = include_str!("scene_files.md")]
pub mod scene_files {}

#[doc = include_str!("solver.md")]
pub mod solver {}

#[doc = include_str!("contact.md")]
pub mod contact {}

#[doc = include_str!("wind_and_mobiles.md")]
pub mod wind_and_mobiles {}

#[doc = include_str!("articulated.md")]
pub mod articulated {}

#[doc = include_str!("hardware.md")]
pub mod hardware {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("performance.md")]
pub mod performance {}
