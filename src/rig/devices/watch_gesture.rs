//! The demo in a scene without a grab point (`pile`, `billiard`, `newtons_cradle`, …): there
//! is nothing for the stylus to clip to, so the scripted user holds the stylus still beside
//! the scene, button up, and the demo shows the scene moving on its own (its gravity, its
//! contacts, its initial velocities). The arm stands where it would for a grab point at the
//! bodies' centre ([`scene_centre_in_world`]), so the demo's view frames the scene and the
//! arm as in every other scene.
//!
//! Why not poke such a scene with the tip: the tip only collides in a scene that says so
//! (`[contact] stylus_tip_radius_m`), and no shipped scene without a grab point does; turning
//! it on behind the scene's back would make a recording that `replay` of the scene file
//! could not reproduce.

use super::scripted_user::UserScript;
use crate::rig::RigSimulation;
use nalgebra::{Isometry3, Point3, Vector3};

/// How far from the scene's centre toward the arm the stylus rests, metres (along x).
pub const WATCH_REST_TOWARD_ARM_M: f64 = 0.10;

/// The centre of the box round the moving bodies' origins at the start, world frame; `None`
/// for a scene with no moving body.
pub fn scene_centre_in_world(sim: &RigSimulation) -> Option<Point3<f64>> {
    let bodies = sim.bodies();
    let first = bodies.first()?.world_from_body.translation.vector;
    let (lo, hi) = bodies.iter().fold((first, first), |(lo, hi), b| {
        let p = b.world_from_body.translation.vector;
        (lo.inf(&p), hi.sup(&p))
    });
    Some(Point3::from((lo + hi) * 0.5))
}

/// The scripted user who only watches: the stylus held at rest between the arm's base
/// (`world_from_arm`, placed for a grab point at `centre_in_world`) and the scene, 6 cm in
/// front of the centre and 5 cm above it, button up, for the usual wait before a gesture.
pub fn watch_script(centre_in_world: Point3<f64>, world_from_arm: Isometry3<f64>) -> UserScript {
    let toward_arm = (world_from_arm.translation.vector.x - centre_in_world.x).signum();
    UserScript {
        rest_offset_in_world: Vector3::new(WATCH_REST_TOWARD_ARM_M * toward_arm, -0.06, 0.05),
        clips: false,
        ..UserScript::demo(centre_in_world, world_from_arm)
    }
}

/// The demo's one line on a scene without a grab point.
pub fn watch_note(scene: &str) -> String {
    format!(
        "scene {scene} has no grab point: the scripted user holds the stylus still beside it \
         and the demo shows the scene moving on its own (gravity, contacts, initial velocities)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watcher_rests_between_the_arm_and_the_scene_and_never_presses() {
        let centre = Point3::new(0.0, 0.0, 0.2);
        let world_from_arm = Isometry3::translation(-0.25, 0.0, 0.1);
        let s = watch_script(centre, world_from_arm);
        let rest = centre + Vector3::new(-WATCH_REST_TOWARD_ARM_M, -0.06, 0.05);
        assert_eq!(s.keys().len(), 2);
        assert_eq!(s.duration_s(), s.wait_s);
        for t in [0.0, 0.5 * s.wait_s, s.wait_s, 10.0] {
            let (tip, pressed) = s.at(t);
            assert!(!pressed);
            assert!((tip - rest).norm() < 1e-12, "{tip}");
        }
    }
}
