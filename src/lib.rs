//! ar-multibody: the library behind the `ar-multibody` binary.
//!
//! - [`sim`]: the sequential-impulse multibody solver (no threads, no I/O).
//! - [`tracking`]: ArUco marker detection and camera pose.
//! - [`interaction`]: stylus → clip / drag / release.
//! - [`rig`]: worker threads, messages, clocks, shutdown.
//! - [`compositor`]: video background and simulation overlay (kiss3d).

pub mod compositor;
pub mod interaction;
pub mod rig;
pub mod sim;
pub mod tracking;
