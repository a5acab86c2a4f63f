//! The demo's simulated world: the scene's simulation, the synthetic camera with the marker
//! tracker, the simulated arm on a pseudo-terminal (read by the real serial driver) with the
//! scripted user, and the synthetic microphone — everything `demo` needs to start a [`Rig`].
//!
//! [`Rig`]: super::Rig

use super::arm_stylus::{ArmStylus, DEFAULT_BUTTON_MASK};
use super::devices::{CameraTracker, MicDevice, Simulation};
use super::live::RigDevices;
use super::scripted_user::{spawn_scripted_user, UserScript};
use super::solver_worker::SolverConfig;
use super::worker::{StopFlag, Worker, WorkerError};
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::arm::{ArmConfig, PortSpec, SimArmConfig, SimArmHandle, SimulatedArm};
use nalgebra::{Isometry3, Point3, Vector3};

/// What can go wrong while building the demo world.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A piece the demo needs is not available in this build.
    #[error("the demo needs {0}, which this build does not have yet")]
    Missing(&'static str),
    /// The scene could not be loaded or has no grab point.
    #[error("scene {scene}: {message}")]
    Scene {
        /// The scene name or path.
        scene: String,
        /// What is wrong.
        message: String,
    },
    /// A simulated device could not start.
    #[error("{device}: {message}")]
    Device {
        /// Which device.
        device: &'static str,
        /// What failed.
        message: String,
    },
    /// A thread could not start.
    #[error(transparent)]
    Worker(#[from] WorkerError),
}

/// Demo choices.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Scene name in assets/scenes/ or a path.
    pub scene: String,
    /// Run the synthetic microphone.
    pub with_mic: bool,
}

/// The scripted user and the simulated arm it moves; both stop when joined or dropped.
pub struct DemoUser {
    worker: Worker<Result<(), String>>,
    // Kept alive for the whole run: it serves the pty the arm driver reads.
    _arm: SimArmHandle,
}

impl DemoUser {
    /// Stops the scripted user and the simulated arm; returns the user's own error, if any.
    pub fn join(self) -> Result<Result<(), String>, WorkerError> {
        self.worker.join()
    }
}

/// The assembled simulated world, before the rig starts.
pub struct DemoWorld {
    intrinsics: CameraIntrinsics,
    devices: RigDevices,
    solver: SolverConfig,
    user: DemoUser,
    gesture_s: f64,
}

/// Where the demo puts the arm's base relative to the grab point: in front of and below it,
/// so the gesture stays well inside a MicroScribe's reach.
pub fn demo_world_from_arm(grab_in_world: &Point3<f64>) -> Isometry3<f64> {
    let base = grab_in_world - Vector3::new(0.25, 0.0, 0.10);
    Isometry3::translation(base.x, base.y, base.z)
}

impl DemoWorld {
    /// Builds the world for `options`; threads started here stop with `stop`.
    pub fn build(options: &DemoOptions, stop: StopFlag) -> Result<Self, DemoError> {
        let simulation = load_simulation(&options.scene)?;
        let grab = simulation
            .grab_points()
            .first()
            .map(|g| g.point_in_world)
            .ok_or_else(|| DemoError::Scene {
                scene: options.scene.clone(),
                message: "has no grab point for the stylus".into(),
            })?;
        let (camera, intrinsics) = synthetic_camera()?;
        let mic = if options.with_mic {
            Some(synthetic_mic()?)
        } else {
            None
        };
        let world_from_arm = demo_world_from_arm(&grab);
        let arm = SimulatedArm::spawn(SimArmConfig::default()).map_err(|e| DemoError::Device {
            device: "simulated arm",
            message: format!("cannot open a pseudo-terminal: {e}"),
        })?;
        let stylus = ArmStylus::start(
            ArmConfig {
                port: PortSpec::Path(arm.port_path()),
                ..ArmConfig::default()
            },
            DEFAULT_BUTTON_MASK,
        )
        .map_err(|e| DemoError::Device {
            device: "arm driver",
            message: e.to_string(),
        })?;
        let script = UserScript::demo(grab, world_from_arm);
        let gesture_s = script.duration_s();
        let worker = spawn_scripted_user(arm.control(), script, stop)?;
        Ok(Self {
            intrinsics,
            devices: RigDevices {
                camera,
                stylus: Box::new(stylus),
                mic,
                simulation,
            },
            solver: SolverConfig {
                world_from_arm,
                ..SolverConfig::default()
            },
            user: DemoUser { worker, _arm: arm },
            gesture_s,
        })
    }

    /// The camera's intrinsics (the video is undistorted to this K).
    pub fn intrinsics(&self) -> &CameraIntrinsics {
        &self.intrinsics
    }

    /// Length of the scripted gesture, seconds.
    pub fn gesture_duration_s(&self) -> f64 {
        self.gesture_s
    }

    /// The rig's devices, the solver settings and the scripted user.
    pub fn into_parts(self) -> (RigDevices, SolverConfig, DemoUser) {
        (self.devices, self.solver, self.user)
    }
}

fn load_simulation(_scene: &str) -> Result<Box<dyn Simulation>, DemoError> {
    Err(DemoError::Missing(
        "the solver and its scene files (issue 2)",
    ))
}

fn synthetic_camera() -> Result<(Box<dyn CameraTracker>, CameraIntrinsics), DemoError> {
    Err(DemoError::Missing(
        "the synthetic camera and the marker tracker (issue 4)",
    ))
}

fn synthetic_mic() -> Result<Box<dyn MicDevice>, DemoError> {
    Err(DemoError::Missing("the synthetic microphone (issue 7)"))
}
