//! The demo's simulated world: the scene's simulation, the synthetic camera with the marker
//! tracker, the simulated arm on a pseudo-terminal (read by the real serial driver) with the
//! scripted user, and the synthetic microphone — everything `demo` needs to start a [`Rig`].
//!
//! The synthetic microphone blows now and then: seeded breath bursts, the first shortly after
//! the scripted gesture (a breath before it would move the grab point away from the user's
//! reach), then every few seconds. A scene with a `[wind]` table (`steel_fish`) turns them
//! into wind; see [`DemoWorld::notes`].
//!
//! [`Rig`]: super::Rig

use super::arm_stylus::{ArmStylus, DEFAULT_BUTTON_MASK};
use super::devices::{CameraTracker, MicDevice, Simulation};
use super::fixed_view::{look_at, FixedViewCamera};
use super::live::RigDevices;
use super::mic_level::DeferredMic;
use super::scene_sim::{resolve_scene, SceneSimulation};
use super::scripted_user::{spawn_scripted_user_with_progress, UserScript};
use super::solver_worker::SolverConfig;
use super::tracked_camera::TrackedCamera;
use super::wind_log::WindLog;
use super::worker::{StopFlag, Worker, WorkerError};
use crate::tracking::TrackerConfig;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::arm::{ArmConfig, PortSpec, SimArmConfig, SimulatedArm};
use ar_drivers::camera::{CameraPath, Pacing, SyntheticCamera, SyntheticConfig};
use ar_drivers::mic::{BreathConfig, MicConfig, MicSource, SyntheticMic, SyntheticSignal};
use nalgebra::{Isometry3, Point3, Vector3};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// The scripted user, who owns the simulated arm it moves; both stop when joined or dropped.
pub struct DemoUser {
    worker: Worker<Result<(), String>>,
    gesture_done: Arc<AtomicBool>,
}

impl DemoUser {
    /// True once the gesture (reach, clip, drag, release, back off) is over.
    pub fn gesture_done(&self) -> bool {
        self.gesture_done.load(Ordering::Acquire)
    }

    /// True while the user's thread (and with it the simulated arm) runs.
    pub fn is_running(&self) -> bool {
        self.worker.is_running()
    }

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
    camera_kind: &'static str,
    notes: Vec<String>,
    wind_log: Option<WindLog>,
}

/// Seed of the demo's breaths.
pub const DEMO_BREATH_SEED: u64 = 7;

/// Pause between the end of the scripted gesture and the demo's first breath, seconds.
pub const FIRST_BREATH_AFTER_GESTURE_S: f64 = 0.3;

/// The demo's breaths: the synthetic microphone's defaults (60–100 % of RMS 0.2 for 0.6–1.5 s,
/// 3–6 s apart), the first `FIRST_BREATH_AFTER_GESTURE_S` after a gesture of `gesture_s`.
pub fn demo_breaths(gesture_s: f64) -> BreathConfig {
    BreathConfig {
        seed: DEMO_BREATH_SEED,
        first_breath_secs: gesture_s + FIRST_BREATH_AFTER_GESTURE_S,
        ..BreathConfig::default()
    }
}

/// Where the demo puts the arm's base relative to the grab point: in front of and below it,
/// so the gesture stays well inside a MicroScribe's reach.
pub fn demo_world_from_arm(grab_in_world: &Point3<f64>) -> Isometry3<f64> {
    let base = grab_in_world - Vector3::new(0.25, 0.0, 0.10);
    Isometry3::translation(base.x, base.y, base.z)
}

/// The demo's drag: 10 cm along x toward the marker's centre (along +x from a grab point
/// within 1 cm of it), and 5 cm up. The scenes hang around supports near the marker's centre,
/// so pulling a grab point outward can ask for more reach than the mechanism has: pulled 5 cm
/// outward, the Steel Fish's outer tip draws the mobile taut and the solver diverges (the
/// singular straight chain of issue 2), while 10 cm inward stays within 2e-8 m of ‖ψ‖.
pub fn demo_drag_in_world(grab_in_world: &Point3<f64>) -> Vector3<f64> {
    let toward_centre = if grab_in_world.x > 0.01 { -1.0 } else { 1.0 };
    Vector3::new(0.10 * toward_centre, 0.0, 0.05)
}

impl DemoWorld {
    /// Builds the world for `options`; threads started here stop with `stop`.
    pub fn build(options: &DemoOptions, stop: StopFlag) -> Result<Self, DemoError> {
        let (simulation, wind_log) = load_simulation(&options.scene)?;
        let has_wind = wind_log.is_some();
        let grab = simulation
            .grab_points()
            .first()
            .map(|g| g.point_in_world)
            .ok_or_else(|| DemoError::Scene {
                scene: options.scene.clone(),
                message: "has no grab point for the stylus".into(),
            })?;
        let (camera, intrinsics, camera_kind) = synthetic_camera()?;
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
        let script = UserScript {
            drag_in_world: demo_drag_in_world(&grab),
            ..UserScript::demo(grab, world_from_arm)
        };
        let gesture_s = script.duration_s();
        let breaths = demo_breaths(gesture_s);
        let mut notes = Vec::new();
        // The microphone starts with the rig's threads (so does the gesture: the scripted user
        // waits for the arm to stream), so the breaths keep their place after the gesture.
        let mic = if options.with_mic {
            let first = breaths.first_breath_secs;
            let mic = synthetic_mic(breaths);
            notes.push(format!(
                "microphone: synthetic, seeded breaths (the first at {first:.1} s, after the \
                 gesture, then every 3-6 s)"
            ));
            if !has_wind {
                notes.push(format!(
                    "warning: scene {} has no [wind] table: the microphone makes no wind \
                     (try --scene steel_fish)",
                    options.scene
                ));
            }
            Some(mic)
        } else {
            notes.push("warning: no microphone (--no-mic): running without wind".into());
            None
        };
        let gesture_done = Arc::new(AtomicBool::new(false));
        let worker = spawn_scripted_user_with_progress(arm, script, stop, gesture_done.clone())?;
        Ok(Self {
            intrinsics,
            devices: RigDevices {
                camera,
                stylus: Some(Box::new(stylus)),
                mic,
                simulation,
            },
            solver: SolverConfig {
                world_from_arm,
                ..SolverConfig::default()
            },
            user: DemoUser {
                worker,
                gesture_done,
            },
            gesture_s,
            camera_kind,
            notes,
            wind_log: wind_log.filter(|_| options.with_mic),
        })
    }

    /// The camera's intrinsics (the video is undistorted to this K).
    pub fn intrinsics(&self) -> &CameraIntrinsics {
        &self.intrinsics
    }

    /// Which camera the demo uses, for people.
    pub fn camera_kind(&self) -> &'static str {
        self.camera_kind
    }

    /// What the demo's microphone does, and warnings (no microphone, no wind in the scene),
    /// one line each, for people.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The account of the wind the microphone makes, when the scene has wind and the demo a
    /// microphone; read it after the run (`WindLog::describe`).
    pub fn wind_log(&self) -> Option<WindLog> {
        self.wind_log.clone()
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

/// The scene's simulation, and the account of its wind when it has any.
fn load_simulation(scene: &str) -> Result<(Box<dyn Simulation>, Option<WindLog>), DemoError> {
    let path = resolve_scene(scene);
    let sim = SceneSimulation::load(&path).map_err(|e| DemoError::Scene {
        scene: path.display().to_string(),
        message: e.0,
    })?;
    let wind_log = sim.wind().is_some().then(|| sim.wind_log());
    Ok((Box::new(sim), wind_log))
}

/// The demo's camera intrinsics and viewpoint: 640×480, f = 600 px, about a metre from the
/// marker, looking at the middle of the ten-pendula chain.
pub fn demo_camera() -> (CameraIntrinsics, Isometry3<f64>) {
    let intrinsics = CameraIntrinsics::ideal(640, 480, 600.0);
    let camera_from_world = look_at(Point3::new(0.18, -0.95, 0.55), Point3::new(0.0, 0.0, 0.3))
        .unwrap_or_else(Isometry3::identity);
    (intrinsics, camera_from_world)
}

/// Side of the printed marker, metres: the shipped marker's.
pub const DEMO_MARKER_LENGTH_M: f64 = ar_drivers::camera::PRINTED_MARKER_SIDE_M;

fn synthetic_camera() -> Result<(Box<dyn CameraTracker>, CameraIntrinsics, &'static str), DemoError>
{
    let (intrinsics, camera_from_world) = demo_camera();
    let config = SyntheticConfig {
        path: CameraPath::Static { camera_from_world },
        fps: 25.0,
        pacing: Pacing::RealTime,
        frames: None,
        marker_length_m: DEMO_MARKER_LENGTH_M,
        ..SyntheticConfig::default()
    };
    let device = |e: String| DemoError::Device {
        device: "synthetic camera",
        message: e,
    };
    let source = SyntheticCamera::new(&intrinsics, config, 1).map_err(|e| device(e.to_string()))?;
    let tracker = TrackerConfig {
        marker_length_m: DEMO_MARKER_LENGTH_M,
        ..TrackerConfig::default()
    };
    let camera = TrackedCamera::new(Box::new(source), &intrinsics, tracker)
        .map_err(|e| device(e.to_string()))?;
    Ok((
        Box::new(camera),
        intrinsics,
        "synthetic camera (printed marker, blur and noise) tracked by the ArUco tracker",
    ))
}

/// The fixed-view stand-in (known pose, plain desk image), for runs without the tracker.
pub fn fixed_view_camera() -> (Box<dyn CameraTracker>, CameraIntrinsics) {
    let (intrinsics, camera_from_world) = demo_camera();
    let camera = FixedViewCamera::new(&intrinsics, camera_from_world, DEMO_MARKER_LENGTH_M, 25.0);
    (Box::new(camera), intrinsics)
}

fn synthetic_mic(breaths: BreathConfig) -> Box<dyn MicDevice> {
    Box::new(DeferredMic::new(
        MicSource::Synthetic(SyntheticMic::from_signal(SyntheticSignal::Breaths(breaths))),
        MicConfig::default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_blows_after_the_gesture_and_now_and_then() {
        let gesture_s = 5.0;
        let plan = demo_breaths(gesture_s).schedule(gesture_s + 30.0);
        let first = plan.first().expect("at least one breath");
        assert_eq!(first.start_secs, gesture_s + FIRST_BREATH_AFTER_GESTURE_S);
        // At most 6 s of pause plus 1.5 s of breath between starts: 4 more in 30 s.
        assert!(plan.len() >= 5, "{plan:?}");
        for b in &plan {
            assert!((0.12..=0.2).contains(&b.rms), "{b:?}");
        }
    }

    #[test]
    fn the_demo_drags_toward_the_marker_centre() {
        let steel_fish_tip = Point3::new(0.2856, 0.0, 0.53);
        assert_eq!(
            demo_drag_in_world(&steel_fish_tip),
            Vector3::new(-0.10, 0.0, 0.05)
        );
        let ten_pendula_tip = Point3::new(0.0, 0.0, 0.1);
        assert_eq!(
            demo_drag_in_world(&ten_pendula_tip),
            Vector3::new(0.10, 0.0, 0.05)
        );
        assert!(demo_drag_in_world(&Point3::new(-0.2, 0.0, 0.1)).x > 0.0);
    }
}
