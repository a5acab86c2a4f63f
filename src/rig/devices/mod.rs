//! What the rig's threads read from: the device interfaces (one trait per kind), the devices
//! behind them (the arm, the microphone, the cameras), and
//! the demo's simulated world with its scripted user.
//!
//! - [`interfaces`]: the device traits the rig runs (re-exported here).
//! - [`arm`]: the arm driver's worker, whose channels the solver thread reads.
//! - [`mic_level`]: the microphone driver as the rig's level source.
//! - [`tracked_camera`]: a camera source with the marker tracker and undistortion.
//! - [`fixed_view`]: a camera stand-in with a fixed, known pose.
//! - [`view_camera`]: a virtual camera that shows the desk and marker from a movable view.
//! - [`view_tee`]: the camera's tracked pose, passed on to the solver (for the wind).
//! - [`demo_world`]: the demo's simulated devices and scripted user.
//! - [`scripted_user`]: the demo's user, moving the simulated arm.
//! - [`drag_reach`]: the demo's drag down, not up, for a mechanism standing straight up.
//! - [`push_gesture`]: the demo's push with the stylus tip, in a scene whose tip pushes.
//! - [`watch_gesture`]: the demo's user in a scene without a grab point, who only watches.

pub mod arm;
pub mod demo_world;
pub mod drag_reach;
pub mod fixed_view;
pub mod interfaces;
pub mod mic_level;
pub mod push_gesture;
pub mod scripted_user;
pub mod tracked_camera;
pub mod view_camera;
pub mod view_tee;
pub mod watch_gesture;

pub use arm::RigArm;
pub use interfaces::{CameraTracker, DeviceError, MicDevice};
