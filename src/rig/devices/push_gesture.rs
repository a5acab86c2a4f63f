//! The demo's push with the stylus tip: in a scene whose tip is a kinematic sphere that
//! collides (`[contact] stylus_tip_radius_m`), the scripted user pushes the body of the first
//! grab point before clipping to it — button up, the tip brought down beside the body
//! [`PUSH_GAP_M`] clear of it, then moved [`PUSH_TRAVEL_M`] straight along the drag's
//! horizontal direction at a steady [`PUSH_SPEED_M_PER_S`], so the push shows before the
//! clip-drag-release what the tip alone does.
//!
//! How far the body moves follows from the gesture: the tip meets the body after the gap and
//! carries it to the end of its travel, `PUSH_TRAVEL_M − PUSH_GAP_M` ([`pushed_by_m`]); when
//! the tip stops, the body slides on by v² / (2 μ g) (0.42 mm at 5 cm/s on the `push` scene's
//! μ = 0.3 desk), which the demo's reach for the grab point leaves to the grab radius. That
//! holds while the body does not tip over: the tip pushes at the body's mid-height.
//!
//! Why steady and not with the smooth start and stop of the other moves: the crate then
//! leaves the tip at the push speed when the tip stops, so its slide has the closed form
//! above and the tests can check where it ends.

use super::scripted_user::PushStroke;
use crate::rig::RigSimulation;
use crate::scene_view::Shape;
use nalgebra::{Isometry3, Point3, Vector3};

/// The clearance between the tip's sphere and the body where the push starts, metres.
pub const PUSH_GAP_M: f64 = 0.01;
/// The tip's travel during the push, metres.
pub const PUSH_TRAVEL_M: f64 = 0.06;
/// The tip's steady speed during the push, m/s: a hand's gentle push.
pub const PUSH_SPEED_M_PER_S: f64 = 0.05;
/// How far the tip passes above the body while moving over it, metres.
pub const PUSH_CLEARANCE_M: f64 = 0.02;

/// How far the push moves the body, metres: the travel less the gap.
pub fn pushed_by_m() -> f64 {
    PUSH_TRAVEL_M - PUSH_GAP_M
}

/// The half-extent of `shape` (at `world_from_body`) along the world unit vector `direction`,
/// metres: how far its surface reaches from the body's origin that way.
pub fn half_extent_along_m(
    shape: &Shape,
    world_from_body: &Isometry3<f64>,
    direction: &Vector3<f64>,
) -> f64 {
    let d = world_from_body.rotation.inverse() * direction;
    match *shape {
        Shape::Box { size_m } => (0..3).map(|i| d[i].abs() * 0.5 * size_m[i]).sum(),
        Shape::Sphere { radius_m } => radius_m,
        Shape::Cylinder { radius_m, length_m } => {
            radius_m * d.xy().norm() + d.z.abs() * 0.5 * length_m
        }
        Shape::Capsule { radius_m, length_m } => radius_m + d.z.abs() * 0.5 * length_m,
        // The support of the hull: its farthest point along d.
        Shape::Convex { ref points_m } => points_m
            .iter()
            .map(|p| d.dot(&Vector3::from(*p)))
            .fold(0.0, f64::max),
    }
}

/// The push the demo's user makes on `sim` along the horizontal `direction` (normalised here)
/// before clipping: on the body of the first grab point, at the height of its origin; `None`
/// when the scene's tip does not push, it has no grab point, or that body has no shape to
/// aim at.
pub fn demo_push(sim: &RigSimulation, direction: &Vector3<f64>) -> Option<PushStroke> {
    let tip_radius_m = sim.stylus_tip_radius_m()?;
    let grab = *sim.grab_points().first()?;
    let bodies = sim.bodies();
    let body = bodies.iter().find(|b| b.body == grab.body)?;
    let dir = Vector3::new(direction.x, direction.y, 0.0).try_normalize(1e-9)?;
    let centre = Point3::from(body.world_from_body.translation.vector);
    let behind_m = half_extent_along_m(&body.shape, &body.world_from_body, &(-dir));
    let above_m = half_extent_along_m(&body.shape, &body.world_from_body, &Vector3::z());
    Some(PushStroke {
        start_in_world: centre - dir * (behind_m + tip_radius_m + PUSH_GAP_M),
        travel_in_world: dir * PUSH_TRAVEL_M,
        grab_moves_by_in_world: dir * pushed_by_m(),
        // Over the body's top with the sphere PUSH_CLEARANCE_M clear of it.
        clearance_m: above_m + tip_radius_m + PUSH_CLEARANCE_M,
        back_off_m: 0.02,
        approach_s: 1.0,
        push_s: PUSH_TRAVEL_M / PUSH_SPEED_M_PER_S,
        leave_s: 0.5,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    #[test]
    fn half_extents_of_the_shapes() {
        let id = Isometry3::identity();
        let b = Shape::Box {
            size_m: [0.08, 0.06, 0.1],
        };
        assert!((half_extent_along_m(&b, &id, &Vector3::x()) - 0.04).abs() < 1e-15);
        assert!((half_extent_along_m(&b, &id, &-Vector3::z()) - 0.05).abs() < 1e-15);
        // Turned a quarter about z, its y size faces x.
        let turned = Isometry3::from_parts(
            Default::default(),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2),
        );
        assert!((half_extent_along_m(&b, &turned, &Vector3::x()) - 0.03).abs() < 1e-12);
        let c = Shape::Capsule {
            radius_m: 0.01,
            length_m: 0.04,
        };
        assert!((half_extent_along_m(&c, &id, &Vector3::z()) - 0.03).abs() < 1e-15);
        assert!((half_extent_along_m(&c, &id, &Vector3::x()) - 0.01).abs() < 1e-15);
    }
}
