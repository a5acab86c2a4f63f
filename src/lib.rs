//! ar-multibody: the library behind the `ar-multibody` binary.
//!
//! - [`tracking`]: ArUco marker detection and camera pose.
//! - [`interaction`]: stylus → clip / drag / release.
//! - [`rig`]: worker threads, messages, clocks, shutdown.
//! - [`sandbox`]: a scene in a window without devices, driven by the mouse and keys.
//! - [`scene_view`]: what a running simulation shows (bodies, reactions), as neutral data.
//! - [`compositor`]: video background and simulation overlay (kiss3d).
//! - [`scene_load`]: scene files and URDF / MJCF models, loaded the same way by every command.
//! - [`manual`]: the reference manual (commands, scene format, solver, hardware, ...).

pub mod compositor;
pub mod interaction;
pub mod manual;
pub mod rig;
pub mod sandbox;
pub mod scene_load;
pub mod scene_view;
pub mod tracking;
