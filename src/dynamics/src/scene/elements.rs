//! The springs and grab points of a scene, in file order.

use super::checker::Checker;
use super::file::{GrabDef, SpringDef};
use crate::error::SceneError;
use crate::model::body::{Body, GROUND};
use crate::model::grab::GrabPoint;
use crate::model::spring::Spring;

/// The `[[spring]]` tables.
pub(super) fn springs(
    ck: &Checker,
    defs: &[SpringDef],
    bodies: &[Body],
) -> Result<Vec<Spring>, SceneError> {
    let mut springs = Vec::with_capacity(defs.len());
    for (i, s) in defs.iter().enumerate() {
        let f = |name: &str| format!("spring[{i}].{name}");
        let b1 = ck.body(bodies, &s.body1, &f("body1"))?;
        let b2 = ck.body(bodies, &s.body2, &f("body2"))?;
        if b1 == b2 {
            return Err(ck.err(
                s.body2.span(),
                f("body2"),
                "a spring needs two different bodies",
            ));
        }
        let q1 = ck.finite3(&s.point1_in_world_m, &f("point1_in_world_m"))?;
        let q2 = ck.finite3(&s.point2_in_world_m, &f("point2_in_world_m"))?;
        let rest = match &s.rest_length_m {
            Some(r) => ck.non_negative(r, &f("rest_length_m"))?,
            None => (q2 - q1).norm(),
        };
        let damping = match &s.damping_n_s_per_m {
            Some(d) => ck.non_negative(d, &f("damping_n_s_per_m"))?,
            None => 0.0,
        };
        springs.push(Spring {
            name: s.name.get_ref().clone(),
            body1: b1,
            body2: b2,
            point1_in_body1: bodies[b1]
                .world_from_body()
                .inverse_transform_point(&q1.into())
                .coords,
            point2_in_body2: bodies[b2]
                .world_from_body()
                .inverse_transform_point(&q2.into())
                .coords,
            rest_length_m: rest,
            stiffness_n_per_m: ck.non_negative(&s.stiffness_n_per_m, &f("stiffness_n_per_m"))?,
            damping_n_s_per_m: damping,
            fracture_extension_m: None,
            broken: false,
        });
    }
    Ok(springs)
}

/// The `[[grab]]` tables.
pub(super) fn grab_points(
    ck: &Checker,
    defs: &[GrabDef],
    bodies: &[Body],
) -> Result<Vec<GrabPoint>, SceneError> {
    let mut grab_points = Vec::with_capacity(defs.len());
    for (i, g) in defs.iter().enumerate() {
        let f = |name: &str| format!("grab[{i}].{name}");
        let b = ck.body(bodies, &g.body, &f("body"))?;
        if b == GROUND {
            return Err(ck.err(g.body.span(), f("body"), "the ground cannot be grabbed"));
        }
        let p = ck.finite3(&g.point_in_world_m, &f("point_in_world_m"))?;
        grab_points.push(GrabPoint {
            name: g.name.get_ref().clone(),
            body: b,
            point_in_body: bodies[b]
                .world_from_body()
                .inverse_transform_point(&p.into())
                .coords,
        });
    }
    Ok(grab_points)
}
