//! What the display loop shows for the newest solver snapshot: the overlay (the simulation's
//! bodies and reactions through the compositor's own drawing choices, the stylus, the spring,
//! the grab points) and the HUD's numbers.

use super::live::DisplayLoopConfig;
use super::messages::SimSnapshot;
use crate::compositor::{DeviceStatus, HudStats, Overlay};

/// Colour of the grab-point markers while nothing is clipped.
const GRAB_POINT_COLOR: [f32; 3] = [0.2, 0.8, 1.0];
/// Radius of the grab-point markers, metres.
const GRAB_POINT_RADIUS_M: f64 = 0.005;

/// The overlay of one frame (empty before the first snapshot).
pub fn build_overlay(snapshot: Option<&SimSnapshot>, config: &DisplayLoopConfig) -> Overlay {
    let mut overlay = Overlay {
        arrow_m_per_n: config.arrow_m_per_n,
        ..Overlay::default()
    };
    if let Some(s) = snapshot {
        overlay.push_bodies(&s.bodies);
        overlay.stylus_tip_in_world = s.stylus_tip_in_world;
        overlay.spring_in_world = s.spring_in_world;
        if config.show_reactions {
            overlay.push_reactions(&s.reactions);
        }
        if config.show_grab_points && s.spring_in_world.is_none() {
            for p in &s.grab_points_in_world {
                overlay.push_marker(*p, GRAB_POINT_RADIUS_M, GRAB_POINT_COLOR);
            }
        }
    }
    overlay
}

/// The HUD of one frame: the display loop's own figures (frame rate, marker status, latency)
/// and the snapshot's (solver, arm, microphone, a solver failure).
pub fn hud_stats(
    snapshot: Option<&SimSnapshot>,
    fps: f64,
    marker: DeviceStatus,
    latency_ms: Option<f64>,
) -> HudStats {
    HudStats {
        fps,
        solver_real_time_factor: snapshot.map_or(0.0, |s| s.real_time_factor),
        psi_norm_m: snapshot.map_or(0.0, |s| s.diagnostics.psi_norm_m),
        energy_error_rel: snapshot.map_or(0.0, |s| s.diagnostics.energy_error_rel),
        marker,
        arm: match snapshot.and_then(|s| s.arm_status.clone()) {
            Some(s) if s.starts_with("lost") => DeviceStatus::Lost(s),
            Some(_) if snapshot.is_some_and(|s| s.spring_in_world.is_some()) => {
                DeviceStatus::Ok("clipped".into())
            }
            Some(s) => DeviceStatus::Ok(s),
            None => DeviceStatus::Waiting,
        },
        mic: match snapshot.and_then(|s| s.mic_rms) {
            Some(rms) => DeviceStatus::Ok(format!("rms {rms:.3}")),
            None => DeviceStatus::Waiting,
        },
        latency_ms,
        solver_failure: snapshot.and_then(|s| s.solver_failure.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::messages::SimDiagnostics;
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
            }],
            reactions: Vec::new(),
            stylus_tip_in_world: None,
            spring_in_world: None,
            grab_points_in_world: vec![Point3::new(0.0, 0.0, 0.1)],
            diagnostics: SimDiagnostics::default(),
            stylus_sampled_at: None,
            arm_status: None,
            mic_rms: None,
            solver_failure: None,
        }
    }

    #[test]
    fn bodies_come_first_then_the_grab_points() {
        let overlay = build_overlay(Some(&snapshot()), &DisplayLoopConfig::default());
        assert_eq!(overlay.shapes.len(), 2);
        assert_eq!(
            overlay.shapes[0].color,
            crate::compositor::bodies::body_color(1)
        );
        assert_eq!(overlay.shapes[1].color, GRAB_POINT_COLOR);
    }

    #[test]
    fn a_failed_solver_reaches_the_hud_with_its_reason() {
        let mut s = snapshot();
        s.solver_failure = Some("body `p1` has a non-finite position".into());
        let lines = hud_stats(Some(&s), 25.0, DeviceStatus::Waiting, None).lines();
        assert_eq!(
            lines[0],
            "solver failed: body `p1` has a non-finite position"
        );
        let fine = hud_stats(Some(&snapshot()), 25.0, DeviceStatus::Waiting, None).lines();
        assert!(!fine.join("\n").contains("solver failed"));
    }
}
