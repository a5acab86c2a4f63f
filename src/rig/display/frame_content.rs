//! What the display loop shows for the newest solver snapshot: the overlay (the scene's
//! supports, the simulation's bodies and reactions through the compositor's own drawing choices, the stylus, the spring,
//! the grab points) and the HUD's numbers.

use crate::compositor::arrows::scale_for;
use crate::compositor::{DeviceStatus, HudDiagnostics, HudStats, Overlay};
use crate::rig::live::DisplayLoopConfig;
use crate::rig::threads::messages::{ArmLink, SimSnapshot};
use crate::scene_view::ReactionView;

/// Colour of the grab-point markers while nothing is clipped.
const GRAB_POINT_COLOR: [f32; 3] = [0.2, 0.8, 1.0];
/// Radius of the grab-point markers, metres.
const GRAB_POINT_RADIUS_M: f64 = 0.005;

/// The reaction arrows' scale over a run: the configured one, or else the one chosen from the
/// first non-zero reactions, kept for the rest of the run so that arrows compare across frames.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArrowScale {
    chosen_m_per_n: Option<f64>,
}

impl ArrowScale {
    /// The scale for this frame, metres per newton (0 while nothing sets it).
    pub fn m_per_n(&mut self, fixed: Option<f64>, reactions: &[ReactionView]) -> f64 {
        if let Some(m) = fixed {
            return m;
        }
        if self.chosen_m_per_n.is_none() {
            self.chosen_m_per_n = scale_for(reactions);
        }
        self.chosen_m_per_n.unwrap_or(0.0)
    }
}

/// The overlay of one frame (empty before the first snapshot).
pub fn build_overlay(
    snapshot: Option<&SimSnapshot>,
    config: &DisplayLoopConfig,
    arrow_scale: &mut ArrowScale,
) -> Overlay {
    let mut overlay = Overlay::default();
    if let Some(s) = snapshot {
        if config.show_reactions {
            // A scene without joints scales its arrows by its contacts.
            let forces = if s.reactions.is_empty() {
                &s.contacts
            } else {
                &s.reactions
            };
            overlay.arrow_m_per_n = arrow_scale.m_per_n(config.arrow_m_per_n, forces);
        }
        overlay.push_supports(&s.supports);
        overlay.push_bodies(&s.bodies);
        if let Some(linkage) = &s.arm_linkage_in_world {
            overlay.push_arm_as(linkage, config.arm_look);
        }
        overlay.stylus_tip_in_world = s.stylus_tip_in_world;
        overlay.spring_in_world = s.spring_in_world;
        if config.show_reactions {
            overlay.push_reactions(&s.reactions);
            overlay.push_contacts(&s.contacts);
        }
        if config.show_grab_points && s.spring_in_world.is_none() {
            for p in &s.grab_points_in_world {
                overlay.push_marker(*p, GRAB_POINT_RADIUS_M, GRAB_POINT_COLOR);
            }
        }
    }
    overlay
}

/// The HUD of one frame: the snapshot's mechanics (scene, grab, spring force, energies), the
/// devices (the display loop's marker status, the snapshot's arm and microphone), a solver
/// failure, and — when `show_diagnostics` — the frame rate, solver speed, ‖ψ‖ and latency.
pub fn hud_stats(
    snapshot: Option<&SimSnapshot>,
    fps: f64,
    marker: DeviceStatus,
    latency_ms: Option<f64>,
    show_diagnostics: bool,
) -> HudStats {
    let d = snapshot.map(|s| s.diagnostics).unwrap_or_default();
    HudStats {
        scene: snapshot.map_or_else(String::new, |s| s.scene_name.to_string()),
        sim_time_s: snapshot.map_or(0.0, |s| s.sim_time_s),
        grabbed_body: snapshot.and_then(|s| s.grabbed_body.as_deref().map(str::to_owned)),
        spring_force_n: d.spring_force_n,
        energy_j: d.energy_j,
        kinetic_j: d.kinetic_j,
        user_work_j: d.user_work_j,
        marker,
        arm: match snapshot.and_then(|s| s.arm_status.as_ref()) {
            Some(ArmLink::Lost(why)) => DeviceStatus::Lost(why.clone()),
            Some(ArmLink::Streaming) if snapshot.is_some_and(|s| s.spring_in_world.is_some()) => {
                DeviceStatus::Ok("clipped".into())
            }
            Some(ArmLink::Streaming) => DeviceStatus::Ok("ok".into()),
            None => DeviceStatus::Waiting,
        },
        mic: match snapshot.and_then(|s| s.mic_rms) {
            Some(rms) => DeviceStatus::Ok(format!("rms {rms:.3}")),
            None => DeviceStatus::Waiting,
        },
        solver_failure: snapshot.and_then(|s| s.solver_failure.clone()),
        diagnostics: show_diagnostics.then(|| HudDiagnostics {
            fps,
            solver_real_time_factor: snapshot.map_or(0.0, |s| s.real_time_factor),
            psi_norm_m: d.psi_norm_m,
            energy_error_rel: d.energy_error_rel,
            latency_ms,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::threads::messages::SimDiagnostics;
    use crate::scene_view::{BodyView, Shape};
    use nalgebra::{Isometry3, Point3};
    use std::sync::Arc;

    fn snapshot() -> SimSnapshot {
        SimSnapshot {
            sim_time_s: 1.0,
            real_time_factor: 1.0,
            skipped_steps: 0,
            bodies: vec![BodyView {
                body: 1,
                name: Arc::from("p1"),
                shape: Shape::Sphere { radius_m: 0.01 },
                world_from_body: Isometry3::translation(0.0, 0.0, 0.5),
                visuals: Arc::new([]),
                meshes: Arc::new([]),
            }],
            reactions: Vec::new(),
            contacts: Vec::new(),
            supports: Arc::from(Vec::new()),
            stylus_tip_in_world: None,
            arm_linkage_in_world: None,
            spring_in_world: None,
            grab_points_in_world: vec![Point3::new(0.0, 0.0, 0.1)],
            diagnostics: SimDiagnostics::default(),
            scene_name: Arc::from("test"),
            grabbed_body: None,
            rigid_groups: Vec::new(),
            stylus_sampled_at: None,
            arm_status: None,
            mic_rms: None,
            solver_failure: None,
        }
    }

    #[test]
    fn bodies_come_first_then_the_grab_points() {
        let overlay = build_overlay(
            Some(&snapshot()),
            &DisplayLoopConfig::default(),
            &mut ArrowScale::default(),
        );
        assert_eq!(overlay.shapes.len(), 2);
        assert_eq!(
            overlay.shapes[0].color,
            crate::compositor::bodies::body_color(1)
        );
        assert_eq!(overlay.shapes[1].color, GRAB_POINT_COLOR);
    }

    #[test]
    fn the_arm_is_drawn_or_a_phantom_as_the_display_says() {
        use crate::compositor::arm::ArmLook;
        use crate::compositor::Shading;
        let mut s = snapshot();
        s.arm_linkage_in_world = Some(std::array::from_fn(|i| {
            Point3::new(-0.25 + 0.02 * i as f64, 0.0, 0.1 + 0.01 * i as f64)
        }));
        let shading = |arm_look| {
            let config = DisplayLoopConfig {
                arm_look,
                show_grab_points: false,
                ..DisplayLoopConfig::default()
            };
            let overlay = build_overlay(Some(&s), &config, &mut ArrowScale::default());
            // The body first, then the arm's pedestal, links and joint.
            overlay.shapes[1..]
                .iter()
                .map(|x| x.shading)
                .collect::<Vec<_>>()
        };
        let drawn = shading(ArmLook::Drawn);
        assert!(drawn.len() >= 3 && drawn.iter().all(|&x| x == Shading::Lit));
        let phantom = shading(ArmLook::Phantom);
        assert_eq!(phantom.len(), drawn.len());
        assert!(phantom.iter().all(|&x| x == Shading::Phantom));
    }

    #[test]
    fn contact_forces_are_drawn_with_the_reactions_in_their_own_kind() {
        use crate::compositor::overlay::ForceKind;
        use crate::scene_view::ReactionView;
        let mut s = snapshot();
        let force = |z: f64| ReactionView {
            point_in_world: Point3::new(0.0, 0.0, z),
            force_in_world: nalgebra::Vector3::new(0.0, 0.0, 0.98),
        };
        s.contacts = vec![force(0.0)];
        let shown = DisplayLoopConfig {
            show_reactions: true,
            ..DisplayLoopConfig::default()
        };
        // A scene without joints: the contacts alone set the arrow scale.
        let overlay = build_overlay(Some(&s), &shown, &mut ArrowScale::default());
        assert_eq!(overlay.arrows.len(), 1);
        assert_eq!(overlay.arrows[0].kind, ForceKind::Contact);
        assert!(overlay.arrow_m_per_n > 0.0);
        s.reactions = vec![force(0.5)];
        let overlay = build_overlay(Some(&s), &shown, &mut ArrowScale::default());
        let kinds: Vec<_> = overlay.arrows.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, [ForceKind::JointReaction, ForceKind::Contact]);
        let hidden = build_overlay(
            Some(&s),
            &DisplayLoopConfig {
                show_reactions: false,
                ..shown
            },
            &mut ArrowScale::default(),
        );
        assert!(hidden.arrows.is_empty());
    }

    #[test]
    fn a_failed_solver_reaches_the_hud_with_its_reason() {
        let mut s = snapshot();
        s.solver_failure = Some("body `p1` has a non-finite position".into());
        let lines = hud_stats(Some(&s), 25.0, DeviceStatus::Waiting, None, false).lines();
        assert_eq!(
            lines[0],
            "solver failed: body `p1` has a non-finite position"
        );
        let fine = hud_stats(Some(&snapshot()), 25.0, DeviceStatus::Waiting, None, false).lines();
        assert!(!fine.join("\n").contains("solver failed"));
        assert!(!fine.join("\n").contains("fps"));
        let dev = hud_stats(Some(&snapshot()), 25.0, DeviceStatus::Waiting, None, true).lines();
        assert_eq!(dev[0], "scene: test   t = 1.00 s");
        assert!(dev[4].starts_with("25.0 fps"), "{dev:?}");
    }

    #[test]
    fn the_arm_link_reaches_the_hud_typed() {
        let arm = |link: Option<ArmLink>, clipped: bool| {
            let mut s = snapshot();
            s.arm_status = link;
            if clipped {
                s.spring_in_world = Some((Point3::origin(), Point3::new(0.0, 0.0, 0.1)));
            }
            hud_stats(Some(&s), 25.0, DeviceStatus::Waiting, None, false).arm
        };
        assert_eq!(arm(None, false), DeviceStatus::Waiting);
        assert_eq!(
            arm(Some(ArmLink::Streaming), false),
            DeviceStatus::Ok("ok".into())
        );
        assert_eq!(
            arm(Some(ArmLink::Streaming), true),
            DeviceStatus::Ok("clipped".into())
        );
        assert_eq!(
            arm(Some(ArmLink::Lost("port closed".into())), true),
            DeviceStatus::Lost("port closed".into())
        );
    }
}
