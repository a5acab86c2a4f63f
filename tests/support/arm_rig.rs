//! The ten pendula on the rig with the simulated arm on a pseudo-terminal, through the real
//! driver, and a fixed synthetic camera: what the arm tests (`tests/rig_arm.rs`,
//! `tests/calibrate_tip.rs`) start from (included with `#[path]`).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::arm::{
    ArmConfig, PortSpec, SimArmConfig, SimArmHandle, SimulatedArm, TipCorrection,
};
use ar_dynamics::scene::resolve_scene;
use ar_multibody::rig::devices::arm::DEFAULT_BUTTON_MASK;
use ar_multibody::rig::devices::demo_world::demo_world_from_arm;
use ar_multibody::rig::devices::fixed_view::{look_at, FixedViewCamera};
use ar_multibody::rig::{Rig, RigArm, RigDevices, RigSimulation, SolverConfig, StopFlag};
use nalgebra::{Isometry3, Point3};

/// A started rig and the simulated arm that drives it.
pub struct ArmRig {
    /// The simulated arm (its control moves the stylus and presses the pedal).
    pub arm: SimArmHandle,
    /// The rig, running.
    pub rig: Rig,
    /// The arm's base in the world, placed as the demo places it for the grab point.
    pub world_from_arm: Isometry3<f64>,
    /// The scene's first grab point (world).
    // Not every test that includes this file clips to it (`tests/calibrate_tip.rs`).
    #[allow(dead_code)]
    pub grab_in_world: Point3<f64>,
    /// The synthetic camera's intrinsics (the compositor's view).
    pub intrinsics: CameraIntrinsics,
}

/// Starts the ten pendula with the simulated arm, whose driver applies `tip`.
pub fn start_ten_pendula(tip: TipCorrection) -> ArmRig {
    let sim = RigSimulation::load(
        &resolve_scene("ten_pendula"),
        ar_multibody::rig::method::Method::Default,
    )
    .unwrap();
    let grab_in_world = sim.grab_points()[0].point_in_world;
    let world_from_arm: Isometry3<f64> = demo_world_from_arm(&grab_in_world);
    let arm = SimulatedArm::spawn(SimArmConfig::default()).expect("pty for the simulated arm");
    let arm_driver = RigArm::start(
        ArmConfig {
            port: PortSpec::Path(arm.port_path()),
            tip,
            ..ArmConfig::default()
        },
        DEFAULT_BUTTON_MASK,
    )
    .unwrap();
    let intrinsics = CameraIntrinsics::ideal(320, 240, 300.0);
    let camera_from_world =
        look_at(Point3::new(0.0, -0.9, 0.4), Point3::new(0.0, 0.0, 0.3)).expect("a valid view");
    let rig = Rig::start(
        RigDevices {
            camera: Box::new(FixedViewCamera::new(
                &intrinsics,
                camera_from_world,
                0.08,
                25.0,
            )),
            arm: Some(arm_driver),
            mic: None,
            simulation: sim,
        },
        SolverConfig {
            world_from_arm,
            ..SolverConfig::default()
        },
        StopFlag::new(),
    )
    .unwrap();
    ArmRig {
        arm,
        rig,
        world_from_arm,
        grab_in_world,
        intrinsics,
    }
}
