//! The demo's simulated world: the scene's simulation, the synthetic camera with the marker
//! tracker, the simulated arm on a pseudo-terminal (read by the real serial driver) with the
//! scripted user, and the synthetic microphone — everything `demo` needs to start a [`Rig`].
//!
//! The synthetic microphone blows now and then: seeded breath bursts, the first shortly after
//! the scripted gesture (a breath before it would move the grab point away from the user's
//! reach), then every few seconds. A scene with a `[wind]` table (`steel_fish`) turns them
//! into wind; see [`DemoWorld::notes`].
//!
//! In a scene whose stylus tip pushes (`[contact] stylus_tip_radius_m`, e.g. `push`), the
//! scripted user first pushes the grab point's body with the tip, button up, then clips to it
//! where the push left it and drags as in every scene ([`super::push_gesture`]).
//!
//! In a scene without a grab point (`pile`, `billiard`, …) the scripted user holds the stylus
//! still beside the scene and the demo says so in one line: it shows the scene moving on its
//! own ([`super::watch_gesture`]).
//!
//! [`Rig`]: crate::rig::Rig

use super::arm::{RigArm, DEFAULT_BUTTON_MASK};
use super::drag_reach::{column_note, drag_within_reach};
use super::fixed_view::FixedViewCamera;
use super::interfaces::{CameraTracker, MicDevice};
use super::mic_level::DeferredMic;
use super::push_gesture::{demo_push, pushed_by_m};
use super::scripted_user::{spawn_scripted_user_with_progress, UserScript};
use super::tracked_camera::TrackedCamera;
use super::watch_gesture::{scene_centre_in_world, watch_note, watch_script};
use crate::compositor::arrows::MAX_ARROW_M;
use crate::compositor::hud::{hud_line_top_px, HUD_DIAGNOSTIC_LINES, HUD_LINES};
use crate::compositor::renderer::LIGHT_TRAVEL_IN_WORLD;
use crate::compositor::shadow::footprints;
use crate::compositor::Overlay;
use crate::rig::display::framing::{frame_points, ImageRegion};
use crate::rig::live::RigDevices;
use crate::rig::method::{load_simulation, LoadedSimulation, Method};
use crate::rig::record::wind_log::WindLog;
use crate::rig::threads::solver_worker::SolverConfig;
use crate::rig::threads::worker::{StopFlag, Worker, WorkerError};
use crate::rig::RigSimulation;
use crate::tracking::TrackerConfig;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::arm::ik::{solve_tip, IkOptions};
use ar_drivers::arm::kinematics::linkage_in_arm;
use ar_drivers::arm::sim::{DeviceIdentity, REST_POSE_RAD};
use ar_drivers::arm::{ArmConfig, DhParams, PortSpec, SimArmConfig, SimulatedArm};
use ar_drivers::camera::{CameraPath, Pacing, SyntheticCamera, SyntheticConfig};
use ar_drivers::mic::{BreathConfig, MicConfig, MicSource, SyntheticMic, SyntheticSignal};
use ar_dynamics::scene::resolve_scene;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What can go wrong while building the demo world.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// A piece the demo needs is not available in this build.
    #[error("the demo needs {0}, which this build does not have yet")]
    Missing(&'static str),
    /// The scene could not be loaded, has nothing to show, or cannot be framed.
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
    /// The HUD shows the developer's figures (the view keeps their lines clear too).
    pub show_diagnostics: bool,
    /// Reaction arrows are drawn (the view keeps room for them round the joints).
    pub show_reactions: bool,
    /// The simulation method.
    pub method: Method,
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

/// Where the demo puts the arm's base relative to the grab point: 25 cm to its outer side
/// (away from the marker's centre along x, the side the drag of [`demo_drag_in_world`] leaves
/// from) and 10 cm below, facing it, so the gesture stays well inside a MicroScribe's reach
/// and the arm, drawn beside the mechanism, does not hide it. An arm on the +x side is the
/// −x one turned half a turn about z: the same reach, the same postures.
pub fn demo_world_from_arm(grab_in_world: &Point3<f64>) -> Isometry3<f64> {
    let outward = -demo_drag_in_world(grab_in_world).x.signum();
    let base = grab_in_world + Vector3::new(0.25 * outward, 0.0, -0.10);
    let facing = if outward > 0.0 {
        UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::PI)
    } else {
        UnitQuaternion::identity()
    };
    Isometry3::from_parts(Translation3::from(base.coords), facing)
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
        let path = resolve_scene(&options.scene);
        let LoadedSimulation {
            simulation,
            wind_log,
        } = load_simulation(&path, options.method).map_err(|e| DemoError::Scene {
            scene: path.display().to_string(),
            message: e.0,
        })?;
        let has_wind = wind_log.is_some();
        let anchor = demo_anchor(&simulation).ok_or_else(|| DemoError::Scene {
            scene: options.scene.clone(),
            message: "has no moving body to show".into(),
        })?;
        let world_from_arm = demo_world_from_arm(&anchor.point_in_world);
        let view = demo_view(
            &simulation,
            options.show_diagnostics,
            options.show_reactions,
        )
        .ok_or_else(|| DemoError::Scene {
            scene: options.scene.clone(),
            message: "the demo's camera cannot frame it (too large)".into(),
        })?;
        let (camera, intrinsics, camera_kind) = synthetic_camera(&view)?;
        let arm = SimulatedArm::spawn(SimArmConfig::default()).map_err(|e| DemoError::Device {
            device: "simulated arm",
            message: format!("cannot open a pseudo-terminal: {e}"),
        })?;
        let arm_driver = RigArm::start(
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
        let script = anchor.script(&simulation);
        let gesture_s = script.duration_s();
        let breaths = demo_breaths(gesture_s);
        let mut notes: Vec<String> = column_note(&simulation, &script.drag_in_world)
            .into_iter()
            .collect();
        if !anchor.grab {
            notes.push(watch_note(&options.scene));
        } else if let Some(r) = simulation.stylus_tip_radius_m() {
            notes.push(match &script.push {
                Some(_) => format!(
                    "stylus tip: a {:.0} mm sphere that pushes; the user pushes the grab \
                     point's body {:.0} mm with it (button up), then clips to it and drags",
                    2e3 * r,
                    1e3 * pushed_by_m()
                ),
                None => format!(
                    "stylus tip: a {:.0} mm sphere that pushes (the grab point's body has no \
                     shape to push: the user only clips and drags)",
                    2e3 * r
                ),
            });
        }
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
                arm: Some(arm_driver),
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

/// The demo's scripted gesture on `sim`, whose first grab point is at `grab_in_world`: the
/// clip-drag-release of [`UserScript::demo`] with the drag of [`demo_drag_in_world`] (down
/// instead of up for a column standing under the grab point, [`drag_within_reach`]), after a
/// push along the drag's horizontal direction ([`demo_push`]) when the scene's tip pushes.
pub fn demo_script(sim: &RigSimulation, grab_in_world: Point3<f64>) -> UserScript {
    let drag_in_world = drag_within_reach(sim, &grab_in_world, demo_drag_in_world(&grab_in_world));
    UserScript {
        drag_in_world,
        push: demo_push(sim, &drag_in_world),
        ..UserScript::demo(grab_in_world, demo_world_from_arm(&grab_in_world))
    }
}

/// What the demo's user goes for in a scene: its first grab point, or, in a scene without
/// one, the centre of its moving bodies ([`scene_centre_in_world`]), where the user only
/// watches ([`super::watch_gesture`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DemoAnchor {
    /// The grab point or the bodies' centre, world frame; the arm stands by it
    /// ([`demo_world_from_arm`]).
    pub point_in_world: Point3<f64>,
    /// True for a grab point.
    pub grab: bool,
}

impl DemoAnchor {
    /// The scripted user's gesture on `sim` for this anchor.
    pub fn script(&self, sim: &RigSimulation) -> UserScript {
        if self.grab {
            demo_script(sim, self.point_in_world)
        } else {
            let p = self.point_in_world;
            watch_script(p, demo_world_from_arm(&p))
        }
    }
}

/// The demo's anchor in `sim`; `None` for a scene with no grab point and no moving body.
pub fn demo_anchor(sim: &RigSimulation) -> Option<DemoAnchor> {
    match sim.grab_points().first() {
        Some(g) => Some(DemoAnchor {
            point_in_world: g.point_in_world,
            grab: true,
        }),
        None => scene_centre_in_world(sim).map(|point_in_world| DemoAnchor {
            point_in_world,
            grab: false,
        }),
    }
}

/// The demo camera's intrinsics: 640×480, f = 600 px.
pub fn demo_intrinsics() -> CameraIntrinsics {
    CameraIntrinsics::ideal(640, 480, 600.0)
}

/// Direction from a scene's centre toward the demo's camera: in front of the marker (its −y
/// side, where the scripted user stands), a little to the right and above.
pub const DEMO_VIEW_TOWARD_EYE: [f64; 3] = [0.18, -0.95, 0.25];

/// Room left round a framed scene, pixels: for the bodies' swing under the drag and the wind.
pub const DEMO_FRAME_MARGIN_PX: f64 = 24.0;

/// How the demo sees a scene: the camera, where it looks from, and the region of the image the
/// scene is framed in (below the HUD).
#[derive(Debug, Clone)]
pub struct DemoView {
    /// The camera's intrinsics.
    pub intrinsics: CameraIntrinsics,
    /// The camera's pose.
    pub camera_from_world: Isometry3<f64>,
    /// Where the scene must stay in the image.
    pub region: ImageRegion,
}

/// The region of the demo's image a scene is framed in: below the HUD's lines (with the
/// diagnostics' when they are shown) and a margin.
pub fn demo_region(intrinsics: &CameraIntrinsics, show_diagnostics: bool) -> ImageRegion {
    let lines = HUD_LINES
        + if show_diagnostics {
            HUD_DIAGNOSTIC_LINES
        } else {
            0
        };
    let band_px = f64::from(hud_line_top_px(intrinsics.image_height, lines));
    ImageRegion::below_band(intrinsics, band_px, DEMO_FRAME_MARGIN_PX)
}

/// What the demo draws of a scene at the start and at the end of the drag (the bodies where
/// they start, the supports, the arm's stand and links at the grab point and at the end of the
/// drag, the stylus path, and the shadows of all these on the desk; in a scene without a grab
/// point, the arm at the stylus's rest),
/// plus the marker, and with `show_reactions` the room the longest reaction arrow
/// ([`MAX_ARROW_M`]) may take round each joint: the points the demo's camera frames.
pub fn demo_frame_points(sim: &RigSimulation, show_reactions: bool) -> Option<Vec<Point3<f64>>> {
    let anchor = demo_anchor(sim)?;
    let script = anchor.script(sim);
    // Where the tip goes: the push's start and end (if it pushes), the clip and the drag's end;
    // where it rests when the user only watches.
    let mut tips = Vec::new();
    if anchor.grab {
        let mut clip = anchor.point_in_world;
        if let Some(p) = &script.push {
            tips.extend([p.start_in_world, p.start_in_world + p.travel_in_world]);
            clip += p.grab_moves_by_in_world;
        }
        tips.extend([clip, clip + script.drag_in_world]);
    } else {
        tips.push(script.at(0.0).0);
    }
    let world_from_arm = script.world_from_arm;
    let mut overlay = Overlay::default();
    overlay.push_supports(&sim.supports());
    overlay.push_bodies(&sim.bodies());
    let dh =
        DhParams::from_raw(&DeviceIdentity::default().raw_dh).with_tip(&ArmConfig::default().tip);
    let ik = IkOptions {
        rest_rad: Some(REST_POSE_RAD),
        ..IkOptions::default()
    };
    for &tip_in_world in &tips {
        let tip_in_arm = world_from_arm.inverse() * tip_in_world;
        if let Ok(q) = solve_tip(&dh, &tip_in_arm, &REST_POSE_RAD, 6, &ik) {
            overlay.push_arm(&linkage_in_arm(&dh, &q).map(|p| world_from_arm * p));
        }
    }
    let mut points = overlay.hull_points();
    // The shadows on the desk are part of the picture.
    let light = Vector3::from(LIGHT_TRAVEL_IN_WORLD.map(f64::from));
    points.extend(footprints(&overlay, &light).iter().flat_map(|f| {
        f.vertices_in_desk
            .map(|[x, y]| Point3::new(f64::from(x), f64::from(y), 0.0))
    }));
    let half = 0.5 * DEMO_MARKER_LENGTH_M;
    points.extend(
        [(-half, -half), (half, -half), (half, half), (-half, half)]
            .map(|(x, y)| Point3::new(x, y, 0.0)),
    );
    points.extend(tips);
    if show_reactions {
        for r in sim.reactions() {
            for axis in [Vector3::x(), Vector3::y(), Vector3::z()] {
                points.extend([-1.0, 1.0].map(|s| r.point_in_world + axis * (s * MAX_ARROW_M)));
            }
        }
    }
    Some(points)
}

/// The demo's view of a scene: the closest camera from [`DEMO_VIEW_TOWARD_EYE`] that frames
/// [`demo_frame_points`] in [`demo_region`]; `None` for a scene without a moving body or too
/// large to frame.
pub fn demo_view(
    sim: &RigSimulation,
    show_diagnostics: bool,
    show_reactions: bool,
) -> Option<DemoView> {
    let intrinsics = demo_intrinsics();
    let region = demo_region(&intrinsics, show_diagnostics);
    let points = demo_frame_points(sim, show_reactions)?;
    let camera_from_world = frame_points(
        &intrinsics,
        &points,
        &Vector3::from(DEMO_VIEW_TOWARD_EYE),
        &region,
    )?;
    Some(DemoView {
        intrinsics,
        camera_from_world,
        region,
    })
}

/// Side of the printed marker, metres: the shipped marker's.
pub const DEMO_MARKER_LENGTH_M: f64 = ar_drivers::camera::PRINTED_MARKER_SIDE_M;

fn synthetic_camera(
    view: &DemoView,
) -> Result<(Box<dyn CameraTracker>, CameraIntrinsics, &'static str), DemoError> {
    let (intrinsics, camera_from_world) = (view.intrinsics.clone(), view.camera_from_world);
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

/// The fixed-view stand-in (known pose, plain desk image) at the demo's view, for runs
/// without the tracker.
pub fn fixed_view_camera(view: &DemoView) -> (Box<dyn CameraTracker>, CameraIntrinsics) {
    let camera = FixedViewCamera::new(
        &view.intrinsics,
        view.camera_from_world,
        DEMO_MARKER_LENGTH_M,
        25.0,
    );
    (Box::new(camera), view.intrinsics.clone())
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
    fn the_demo_arm_stands_outside_the_grab_point_facing_it() {
        for grab in [Point3::new(0.0, 0.0, 0.1), Point3::new(0.183, 0.0, 0.5)] {
            let world_from_arm = demo_world_from_arm(&grab);
            // The grab point is 25 cm in front of the base (arm +x) and 10 cm above it.
            let grab_in_arm = world_from_arm.inverse() * grab;
            assert!(
                (grab_in_arm - Point3::new(0.25, 0.0, 0.10)).norm() < 1e-12,
                "{grab_in_arm}"
            );
            // On the side away from the marker's centre.
            let base = world_from_arm.translation.vector;
            assert!(base.x.abs() > grab.x.abs() + 0.2, "{base}");
        }
        assert_eq!(
            demo_world_from_arm(&Point3::new(0.0, 0.0, 0.1)),
            Isometry3::translation(-0.25, 0.0, 0.0)
        );
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
