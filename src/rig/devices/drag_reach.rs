//! Which way the demo's drag goes up or down, so that it stays within the mechanism's reach.
//!
//! The demo drags a grab point 10 cm toward the marker's centre and 5 cm up
//! ([`super::demo_world::demo_drag_in_world`]): the shipped scenes hang from supports, and a
//! hanging chain pulled up slackens. A mechanism that stands straight up under its grab point
//! (a robot arm at its upright zero pose, such as the shipped `ar6` on the desk) is at its full
//! reach upward instead: pulled up and sideways it cannot follow, the stylus spring stretches
//! (issue 43: 60 mm of tip error and a 560 N spring) and the straight chain is singular. For
//! such a column the drag goes 5 cm down instead, which bends it at its joints.

use crate::rig::RigSimulation;
use nalgebra::{Point3, Vector3};

/// How far a body's centre may be off the vertical through the grab point for the bodies to
/// count as a column standing under it, metres.
pub const COLUMN_TOLERANCE_M: f64 = 1e-3;

/// True when the scene's bodies (at least two) stand in a straight column under
/// `grab_in_world`: every centre within [`COLUMN_TOLERANCE_M`] of the vertical through it and
/// below it.
pub fn stands_straight_under(sim: &RigSimulation, grab_in_world: &Point3<f64>) -> bool {
    let bodies = sim.bodies();
    bodies.len() >= 2
        && bodies.iter().all(|b| {
            let c = b.world_from_body.translation.vector;
            let off = Vector3::new(c.x - grab_in_world.x, c.y - grab_in_world.y, 0.0);
            off.norm() <= COLUMN_TOLERANCE_M && c.z < grab_in_world.z
        })
}

/// The demo's drag from `grab_in_world` in `sim`: `base_drag_in_world` as it is, or with its
/// vertical part turned downward for a column standing under the grab point (see the module
/// docs).
pub fn drag_within_reach(
    sim: &RigSimulation,
    grab_in_world: &Point3<f64>,
    base_drag_in_world: Vector3<f64>,
) -> Vector3<f64> {
    if stands_straight_under(sim, grab_in_world) {
        Vector3::new(
            base_drag_in_world.x,
            base_drag_in_world.y,
            -base_drag_in_world.z.abs(),
        )
    } else {
        base_drag_in_world
    }
}

/// The note the demo prints for a column standing under its grab point: which grab point the
/// user drags, and why down; `None` for every other scene (their drag is as it always was).
pub fn column_note(sim: &RigSimulation, drag_in_world: &Vector3<f64>) -> Option<String> {
    let grab = sim.grab_points().into_iter().next()?;
    if !stands_straight_under(sim, &grab.point_in_world) {
        return None;
    }
    let name = sim
        .inner()
        .grab_points()
        .first()
        .map_or("?", |g| g.name.as_str())
        .to_owned();
    let body = sim
        .bodies()
        .into_iter()
        .find(|b| b.body == grab.body)
        .map_or_else(|| "?".to_owned(), |b| b.name.to_string());
    Some(format!(
        "drag: the user clips grab point {name} (body {body}) and drags it {:.0} cm sideways \
         and {:.0} cm down: the bodies stand straight up under it, at their full reach upward",
        1e2 * drag_in_world.xy().norm(),
        -1e2 * drag_in_world.z
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::method::Method;
    use ar_dynamics::scene::{resolve_scene, shipped_scene_names};

    #[test]
    fn the_upright_ar6_is_dragged_down_and_every_shipped_scene_as_before() {
        let ar6 = RigSimulation::load(&resolve_scene("ar6"), Method::Default).unwrap();
        let flange = ar6.grab_points()[0].point_in_world;
        assert!(stands_straight_under(&ar6, &flange));
        let drag = drag_within_reach(&ar6, &flange, Vector3::new(0.1, 0.0, 0.05));
        assert_eq!(drag, Vector3::new(0.1, 0.0, -0.05));
        let note = column_note(&ar6, &drag).unwrap();
        assert!(
            note.contains("grab point tool_flange (body wrist_3)")
                && note.contains("10 cm sideways and 5 cm down"),
            "{note}"
        );
        let names = shipped_scene_names();
        assert!(names.len() >= 20, "{names:?}");
        for name in names {
            let sim = RigSimulation::load(&resolve_scene(&name), Method::Default).unwrap();
            let Some(g) = sim.grab_points().into_iter().next() else {
                continue;
            };
            let up = Vector3::new(0.1, 0.0, 0.05);
            assert_eq!(drag_within_reach(&sim, &g.point_in_world, up), up, "{name}");
            assert_eq!(column_note(&sim, &up), None, "{name}");
        }
    }
}
