//! The arm's path through the rig: the simulated arm on a pseudo-terminal, read by the real
//! serial driver on its own thread, whose sample and status channels the solver thread reads
//! directly (no thread of the rig's in between). The stylus clips to the ten pendula's tip,
//! the snapshot carries the arm's linkage from the kinematics the arm told on connecting, and
//! an arm that goes silent while clipped releases the stylus and shows as lost on the HUD.

use ar_drivers::arm::{ArmConfig, Fault, SimArmHandle};
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::arm::DEFAULT_BUTTON_MASK;
use ar_multibody::rig::display::frame_control::{FrameControl, FrameDecision, ShownView};
use ar_multibody::rig::{ArmLink, DisplayLoopConfig, SimSnapshot, StopReason};
use kiss3d::event::WindowEvent;
use nalgebra::Point3;
use std::time::Duration;

#[path = "support/arm_rig.rs"]
mod arm_rig;
use arm_rig::{start_ten_pendula, ArmRig};

/// Where the scripted hand is in its gesture.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    /// Waiting for the arm to stream.
    Connecting,
    /// The tip moved onto the grab point; waiting for the solver to see it there.
    Reaching,
    /// The button pressed; waiting for the clip.
    Pressing,
    /// Clipped, the arm told to go silent; waiting for the solver to lose it.
    Unplugged,
    /// The arm is lost: a few more frames, then quit.
    Lost { frames: u32 },
}

/// The hand: moves the simulated arm from the display loop's hook, as the snapshots say.
struct Hand {
    arm: SimArmHandle,
    grab_in_arm: Point3<f64>,
    grab_in_world: Point3<f64>,
    stage: Stage,
    /// The snapshot's linkage while clipped had one point per joint end.
    linkage_points_while_clipped: Option<usize>,
}

impl FrameControl for Hand {
    fn before_frame(
        &mut self,
        _events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        _shown: &ShownView<'_>,
        _config: &mut DisplayLoopConfig,
    ) -> FrameDecision {
        let Some(s) = snapshot else {
            return FrameDecision::default();
        };
        self.stage = match self.stage {
            Stage::Connecting if s.arm_status == Some(ArmLink::Streaming) => {
                self.arm
                    .control()
                    .set_tip_target(self.grab_in_arm)
                    .expect("the grab point is within the arm's reach");
                Stage::Reaching
            }
            Stage::Reaching
                if s.stylus_tip_in_world
                    .is_some_and(|t| (t - self.grab_in_world).norm() < 0.002) =>
            {
                self.arm.control().press(DEFAULT_BUTTON_MASK);
                Stage::Pressing
            }
            Stage::Pressing if s.grabbed_body.is_some() => {
                self.linkage_points_while_clipped = s.arm_linkage_in_world.map(|l| l.len());
                self.arm.inject(Fault::Silence {
                    duration: Duration::from_secs(60),
                });
                Stage::Unplugged
            }
            Stage::Unplugged if matches!(s.arm_status, Some(ArmLink::Lost(_))) => {
                Stage::Lost { frames: 0 }
            }
            Stage::Lost { frames } => Stage::Lost { frames: frames + 1 },
            stage => stage,
        };
        FrameDecision {
            hud_lines: Vec::new(),
            quit: matches!(self.stage, Stage::Lost { frames } if frames >= 5),
        }
    }
}

#[test]
fn an_arm_lost_while_clipped_releases_the_stylus_and_shows_on_the_hud() {
    let ArmRig {
        arm,
        rig,
        world_from_arm,
        grab_in_world,
        intrinsics,
    } = start_ten_pendula(ArmConfig::default().tip);
    let mut hand = Hand {
        arm,
        grab_in_arm: world_from_arm.inverse() * grab_in_world,
        grab_in_world,
        stage: Stage::Connecting,
        linkage_points_while_clipped: None,
    };
    let mut compositor = Compositor::headless(CompositorConfig::monitor(intrinsics)).unwrap();
    let summary = rig
        .run_controlled(
            &mut compositor,
            None,
            &DisplayLoopConfig {
                max_duration: Some(Duration::from_secs(60)),
                ..DisplayLoopConfig::default()
            },
            Some(&mut hand),
        )
        .unwrap();

    let events = &summary.solver.events;
    eprintln!(
        "events: {events:?}\nhud: {:?}",
        summary.display.last_hud_lines
    );
    assert!(
        matches!(hand.stage, Stage::Lost { .. }),
        "stopped at {:?}; events {events:?}",
        hand.stage
    );
    assert_eq!(summary.display.stop_reason, StopReason::Done);
    // The linkage the compositor draws: the base and two points per joint.
    assert_eq!(hand.linkage_points_while_clipped, Some(13));
    let position = |prefix: &str| {
        events
            .iter()
            .position(|(_, m)| m.starts_with(prefix))
            .unwrap_or_else(|| panic!("no event {prefix:?} in {events:?}"))
    };
    let (connected, clipped) = (position("arm connected on"), position("clipped to body"));
    let (lost, released) = (
        position("arm lost: no data from the arm"),
        position("released: stylus disconnected"),
    );
    assert!(
        connected < clipped && clipped < lost && lost < released,
        "{events:?}"
    );
    // The HUD's device line says the arm is lost, and why.
    let hud = summary.display.last_hud_lines.join("\n");
    assert!(hud.contains("arm: LOST ("), "{hud}");
    assert!(!hud.contains("grabbed: p10"), "{hud}");
    // No worker left behind: the driver's thread stopped with the rig.
    let names: Vec<String> = std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n == "arm" || n == "solver"),
        "{names:?}"
    );
}
