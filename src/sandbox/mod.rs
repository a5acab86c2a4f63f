//! `sandbox`: a scene in a window without any device. The mouse orbits, pans and zooms the
//! view and grabs bodies through the stylus spring; keys pause, step, reset, switch the scene,
//! show the forces, switch the rigid groups and blow wind. The input is plain data
//! ([`input`]) turned into view changes and simulation actions by a controller that needs no
//! window ([`controller`]); the window's events are mapped into it ([`window_input`]) and
//! [`session`] runs it on the rig. The same grab works on the live rig ([`live_mouse`], `run`
//! without an arm or with `--mouse`).
//!
//! - [`input`]: what the user does (pointer, wheel, keys) and the HUD's help lines.
//! - [`orbit`]: the orbiting view.
//! - [`pick`]: the viewing ray of a pixel and the body it meets.
//! - [`grab`]: the pointer's grab through the stylus spring and its drag.
//! - [`controller`]: inputs → view and actions.
//! - [`window_input`]: kiss3d window events → inputs, in the view's pixels however the
//!   window is resized.
//! - [`status`]: the session's status lines and the grabbed point's.
//! - [`session`]: the controller on the rig's display loop, with the scenes and the solver's
//!   commands.
//! - [`live_mouse`]: the grab on the live rig, through the registered camera.

pub mod controller;
pub mod grab;
pub mod input;
pub mod live_mouse;
pub mod orbit;
pub mod pick;
pub mod session;
pub mod status;
pub mod window_input;
