//! ar-drivers: the devices of ar-multibody, each with a real and a simulated implementation.
//!
//! - [`arm`]: MicroScribe-class digitizer arm (HCI serial protocol), kinematics, simulated arm.
//! - [`camera`]: OpenCV capture and a synthetic camera.
//! - [`mic`]: cpal microphone capture and a synthetic microphone.
//! - [`latest`]: bounded channels with latest-value semantics for device streams.

pub mod arm;
pub mod camera;
pub mod latest;
pub mod mic;
