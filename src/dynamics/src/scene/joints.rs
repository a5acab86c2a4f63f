//! The joints of a scene: the `[[joint]]` tables in file order, then a mobile's ball joints.

use std::collections::{HashMap, HashSet};

use nalgebra::Vector3;

use super::checker::Checker;
use super::file::{JointDef, KindDef};
use super::mobile::MobileLink;
use super::ANCHOR_TOLERANCE_M;
use crate::error::SceneError;
use crate::model::body::{Body, GROUND};
use crate::model::joint::{Joint, JointKind};
use crate::model::limit::JointLimits;

/// The `[[joint]]` tables.
pub(super) fn joints(
    ck: &Checker,
    defs: &[JointDef],
    bodies: &[Body],
) -> Result<Vec<Joint>, SceneError> {
    let mut joints: Vec<Joint> = Vec::with_capacity(defs.len());
    let mut names = std::collections::HashSet::new();
    for (i, j) in defs.iter().enumerate() {
        let f = |name: &str| format!("joint[{i}].{name}");
        let name = j.name.get_ref();
        ck.name(&j.name, f("name"), "joint", &[], &mut names)?;
        let b1 = ck.body(bodies, &j.body1, &f("body1"))?;
        let b2 = ck.body(bodies, &j.body2, &f("body2"))?;
        if b1 == b2 {
            return Err(ck.err(
                j.body2.span(),
                f("body2"),
                "a joint needs two different bodies",
            ));
        }
        let (a1, a2) = anchors(ck, j, &f, &bodies[b1], &bodies[b2])?;
        let kind = match j.kind.get_ref() {
            KindDef::Ball => JointKind::Ball,
            KindDef::Hinge => JointKind::Hinge,
            KindDef::Prismatic => JointKind::Prismatic,
            KindDef::Slot => JointKind::Slot,
            KindDef::Fixed => JointKind::Fixed,
        };
        let (axis, hinge_axis) = axes(ck, j, &f, kind)?;
        let mut joint = Joint::new(name.clone(), kind, bodies, b1, b2, a1, a2, axis, hinge_axis);
        joint.limits = limits(ck, j, &f, kind)?;
        joint.damping = damping(ck, j, &f, kind)?;
        joints.push(joint);
    }
    Ok(joints)
}

/// The joint's viscous damping: `damping_n_m_s_per_rad` on a hinge, `damping_n_s_per_m` on a
/// prismatic joint, not negative; 0 when not given. Another joint kind, or the other unit, is
/// refused with the field.
fn damping(
    ck: &Checker,
    j: &JointDef,
    f: &dyn Fn(&str) -> String,
    kind: JointKind,
) -> Result<f64, SceneError> {
    let given = [
        (
            "damping_n_m_s_per_rad",
            &j.damping_n_m_s_per_rad,
            JointKind::Hinge,
        ),
        (
            "damping_n_s_per_m",
            &j.damping_n_s_per_m,
            JointKind::Prismatic,
        ),
    ];
    let mut damping = 0.0;
    for (field, value, takes) in given {
        let Some(v) = value else { continue };
        if kind != takes {
            return Err(ck.err(
                v.span(),
                f(field),
                format!(
                    "a {} joint has no such damping (`damping_n_m_s_per_rad` is a hinge's, \
                     `damping_n_s_per_m` a prismatic joint's)",
                    kind.name()
                ),
            ));
        }
        damping = ck.non_negative(v, &f(field))?;
    }
    Ok(damping)
}

/// The joint's `limits_rad`, `limits_m` and `limit_restitution` (see
/// [`crate::model::limit`]), checked: two finite numbers lo ≤ 0 ≤ hi on a joint that has the
/// coordinate, a restitution in [0, 1] only with limits.
fn limits(
    ck: &Checker,
    j: &JointDef,
    f: &dyn Fn(&str) -> String,
    kind: JointKind,
) -> Result<JointLimits, SceneError> {
    let pair = |v: &Option<toml::Spanned<Vec<f64>>>, field: &str| match v {
        None => Ok(None),
        Some(v) => match v.get_ref().as_slice() {
            &[lo, hi] => Ok(Some([lo, hi])),
            other => Err(ck.err(
                v.span(),
                f(field),
                format!("expected [lo, hi], two numbers, found {}", other.len()),
            )),
        },
    };
    let mut limits = JointLimits {
        angle_rad: pair(&j.limits_rad, "limits_rad")?,
        travel_m: pair(&j.limits_m, "limits_m")?,
        restitution: 0.0,
    };
    if let Some(e) = &j.limit_restitution {
        if !limits.any() {
            return Err(ck.err(
                e.span(),
                f("limit_restitution"),
                "a restitution without `limits_rad` or `limits_m` has nothing to act on",
            ));
        }
        limits.restitution = *e.get_ref();
    }
    match limits.problem(kind) {
        None => Ok(limits),
        Some((field, why)) => {
            let span = match field {
                "limits_rad" => j.limits_rad.as_ref().map(toml::Spanned::span),
                "limits_m" => j.limits_m.as_ref().map(toml::Spanned::span),
                _ => j.limit_restitution.as_ref().map(toml::Spanned::span),
            };
            Err(ck.err(span.unwrap_or_else(|| j.kind.span()), f(field), why))
        }
    }
}

/// The joint's anchor in each body's frame: from `anchor_in_world_m`, or both given in the
/// bodies, which must meet in the initial pose.
fn anchors(
    ck: &Checker,
    j: &JointDef,
    f: &dyn Fn(&str) -> String,
    body1: &Body,
    body2: &Body,
) -> Result<(Vector3<f64>, Vector3<f64>), SceneError> {
    let (p1, p2) = (body1.world_from_body(), body2.world_from_body());
    match (
        &j.anchor_in_world_m,
        &j.anchor1_in_body_m,
        &j.anchor2_in_body_m,
    ) {
        (Some(a), None, None) => {
            let a = ck.finite3(a, &f("anchor_in_world_m"))?;
            Ok((
                p1.inverse_transform_point(&a.into()).coords,
                p2.inverse_transform_point(&a.into()).coords,
            ))
        }
        (None, Some(a1s), Some(a2s)) => {
            let a1 = ck.finite3(a1s, &f("anchor1_in_body_m"))?;
            let a2 = ck.finite3(a2s, &f("anchor2_in_body_m"))?;
            let gap = (p1.transform_point(&a1.into()) - p2.transform_point(&a2.into())).norm();
            if gap > ANCHOR_TOLERANCE_M {
                return Err(ck.err(
                    a2s.span(),
                    f("anchor2_in_body_m"),
                    format!(
                        "the anchors of `{}` and `{}` are {gap:.3e} m apart in the initial pose (limit {ANCHOR_TOLERANCE_M:e} m)",
                        body1.name, body2.name
                    ),
                ));
            }
            Ok((a1, a2))
        }
        _ => Err(ck.err(
            j.name.span(),
            f("anchor_in_world_m"),
            "give either `anchor_in_world_m` or both `anchor1_in_body_m` and `anchor2_in_body_m`",
        )),
    }
}

/// The joint's axis (hinge, prismatic and slot joints; +z for the others, which have none)
/// and hinge axis (a slot's own; the axis for the others).
fn axes(
    ck: &Checker,
    j: &JointDef,
    f: &dyn Fn(&str) -> String,
    kind: JointKind,
) -> Result<(Vector3<f64>, Vector3<f64>), SceneError> {
    let needs_axis = matches!(
        kind,
        JointKind::Hinge | JointKind::Prismatic | JointKind::Slot
    );
    let axis = match (&j.axis_in_world, needs_axis) {
        (Some(a), true) => ck.unit3(a, &f("axis_in_world"))?,
        (None, true) => {
            return Err(ck.err(
                j.kind.span(),
                f("axis_in_world"),
                format!("a {} joint needs `axis_in_world`", kind.name()),
            ))
        }
        (Some(a), false) => {
            return Err(ck.err(
                a.span(),
                f("axis_in_world"),
                format!("a {} joint has no axis", kind.name()),
            ))
        }
        (None, false) => Vector3::z(),
    };
    let hinge_axis = match (&j.hinge_axis_in_world, kind == JointKind::Slot) {
        (Some(a), true) => ck.unit3(a, &f("hinge_axis_in_world"))?,
        (None, true) => {
            return Err(ck.err(
                j.kind.span(),
                f("hinge_axis_in_world"),
                "a slot joint needs `hinge_axis_in_world`",
            ))
        }
        (Some(a), false) => {
            return Err(ck.err(
                a.span(),
                f("hinge_axis_in_world"),
                "only a slot joint has a hinge axis",
            ))
        }
        (None, false) => axis,
    };
    Ok((axis, hinge_axis))
}

/// Adds a mobile's ball joints to `joints`.
pub(super) fn add_mobile_links(
    ck: &Checker,
    links: &[MobileLink],
    bodies: &[Body],
    joints: &mut Vec<Joint>,
) -> Result<(), SceneError> {
    // Maps, not a search per link: a mobile may have tens of thousands of parts.
    let body_ids: HashMap<&str, usize> = bodies
        .iter()
        .enumerate()
        .map(|(k, b)| (b.name.as_str(), k))
        .collect();
    let mut joint_names: HashSet<String> = joints.iter().map(|j| j.name.clone()).collect();
    for link in links {
        let id = |name: Option<&String>| {
            name.map_or(Some(GROUND), |n| body_ids.get(n.as_str()).copied())
        };
        let (Some(b1), Some(b2)) = (id(link.parent.as_ref()), id(Some(&link.child))) else {
            return Err(ck.err(
                0..0,
                "mobile",
                format!("joint `{}` names a missing body", link.name),
            ));
        };
        if !joint_names.insert(link.name.clone()) {
            return Err(ck.err(
                0..0,
                "mobile",
                format!("joint name `{}` is used twice", link.name),
            ));
        }
        let a = link.anchor_in_world_m.into();
        let a1 = bodies[b1]
            .world_from_body()
            .inverse_transform_point(&a)
            .coords;
        let a2 = bodies[b2]
            .world_from_body()
            .inverse_transform_point(&a)
            .coords;
        joints.push(Joint::new(
            link.name.clone(),
            JointKind::Ball,
            bodies,
            b1,
            b2,
            a1,
            a2,
            Vector3::z(),
            Vector3::z(),
        ));
    }
    Ok(())
}
