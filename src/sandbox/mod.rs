//! `sandbox`: a scene in a window without any device. The mouse orbits, pans and zooms the
//! view and grabs bodies through the stylus spring; keys pause, step, reset, switch the scene,
//! show the forces, switch the rigid groups and blow wind. The input is plain data
//! ([`input`]) turned into view changes and simulation actions by a controller that needs no
//! window ([`controller`]); the window's events are mapped into it ([`window_input`]) and
//! [`session`] runs it on the rig.
//!
//! - [`input`]: what the user does (pointer, wheel, keys) and the HUD's help lines.
//! - [`orbit`]: the orbiting view.
//! - [`pick`]: the viewing ray of a pixel and the body it meets.
//! - [`controller`]: inputs → view and actions.
//! - [`window_input`]: kiss3d window events → inputs.
//! - [`session`]: the controller on the rig's display loop, with the scenes and the solver's
//!   commands.

pub mod controller;
pub mod input;
pub mod orbit;
pub mod pick;
pub mod session;
pub mod window_input;
