//! A `[[deformable]]` table's generator fields: which belong to which `kind`, and the
//! generator ([`crate::deformable`]'s rope, lattice or cloth) they run, with each bad
//! value reported at its field.

use std::ops::Range;

use toml::Spanned;

use super::DeformableDef;
use crate::deformable::cloth::{cloth, ClothError, Shear};
use crate::deformable::lattice::{lattice, Face};
use crate::deformable::rope::{rope, RopeError};
use crate::deformable::Network;
use crate::error::SceneError;
use crate::model::body::{Body, BodyId, GROUND};
use crate::scene::checker::Checker;
use nalgebra::Vector3;

/// The kinds, as the error for an unknown one lists them.
const KINDS: &str = "rope, lattice or cloth";

/// Runs the table's generator; returns the network and its pins (node, body it is pinned to).
pub(super) fn generate(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    bodies: &[Body],
    gravity_in_world: Vector3<f64>,
) -> Result<(Network, Vec<(usize, BodyId)>), SceneError> {
    let kind = d.kind.get_ref().as_str();
    if !["rope", "lattice", "cloth"].contains(&kind) {
        return Err(ck.err(
            d.kind.span(),
            f("kind"),
            format!("`{kind}`: expected {KINDS}"),
        ));
    }
    refuse_other_kinds(ck, d, f)?;
    let missing = |field: &str| {
        ck.err(
            d.kind.span(),
            f(field),
            format!("kind = \"{kind}\" needs `{field}`"),
        )
    };
    match kind {
        "rope" => generate_rope(ck, d, f, &missing, bodies, gravity_in_world),
        "lattice" => generate_lattice(ck, d, f, &missing),
        _ => generate_cloth(ck, d, f, &missing),
    }
}

/// The `kind = "rope"` generator: its pins join an end to a body.
fn generate_rope(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    missing: &dyn Fn(&str) -> SceneError,
    bodies: &[Body],
    gravity_in_world: Vector3<f64>,
) -> Result<(Network, Vec<(usize, BodyId)>), SceneError> {
    let e1 = d.end1_m.as_ref().ok_or_else(|| missing("end1_m"))?;
    let e2 = d.end2_m.as_ref().ok_or_else(|| missing("end2_m"))?;
    let count = d.elements.as_ref().ok_or_else(|| missing("elements"))?;
    let end1 = ck.finite3(e1, &f("end1_m"))?;
    let end2 = ck.finite3(e2, &f("end2_m"))?;
    let length = d
        .length_m
        .as_ref()
        .map(|l| ck.positive(l, &f("length_m")))
        .transpose()?;
    let net = rope(end1, end2, *count.get_ref(), length, gravity_in_world).map_err(|e| {
        let (span, field) = match e {
            RopeError::TooFewElements(_) | RopeError::TooMany(_) => (count.span(), "elements"),
            RopeError::SameEnds => (e2.span(), "end2_m"),
            RopeError::TooShort { .. } => (
                d.length_m.as_ref().map_or(e2.span(), Spanned::span),
                "length_m",
            ),
        };
        ck.err(span, f(field), e.to_string())
    })?;
    let last = net.nodes_in_world_m.len() - 1;
    let mut pins = Vec::new();
    for (pin, node, field) in [(&d.pin1, 0, "pin1"), (&d.pin2, last, "pin2")] {
        if let Some(p) = pin {
            pins.push((node, ck.body(bodies, p, &f(field))?));
        }
    }
    Ok((net, pins))
}

/// The `kind = "lattice"` generator: a clamped face is pinned to the ground.
fn generate_lattice(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    missing: &dyn Fn(&str) -> SceneError,
) -> Result<(Network, Vec<(usize, BodyId)>), SceneError> {
    let o = d.origin_m.as_ref().ok_or_else(|| missing("origin_m"))?;
    let s = d.size_m.as_ref().ok_or_else(|| missing("size_m"))?;
    let sp = d.spacing_m.as_ref().ok_or_else(|| missing("spacing_m"))?;
    let origin = ck.finite3(o, &f("origin_m"))?;
    let size = ck.finite3(s, &f("size_m"))?;
    if size.iter().any(|&x| x < 0.0) {
        return Err(ck.err(s.span(), f("size_m"), "sizes must be zero or positive"));
    }
    let spacing = ck.positive(sp, &f("spacing_m"))?;
    let clamp = d
        .clamp
        .as_ref()
        .map(|c| {
            Face::parse(c.get_ref()).ok_or_else(|| {
                ck.err(
                    c.span(),
                    f("clamp"),
                    format!("`{}`: expected x-, x+, y-, y+, z- or z+", c.get_ref()),
                )
            })
        })
        .transpose()?;
    let braced = d.diagonal_bracing.as_ref().is_some_and(|b| *b.get_ref());
    let (net, clamped) = lattice(origin, size, spacing, braced, clamp)
        .map_err(|e| ck.err(s.span(), f("size_m"), e.to_string()))?;
    Ok((net, clamped.into_iter().map(|n| (n, GROUND)).collect()))
}

/// The `kind = "cloth"` generator.
fn generate_cloth(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    missing: &dyn Fn(&str) -> SceneError,
) -> Result<(Network, Vec<(usize, BodyId)>), SceneError> {
    let c = d.corner_m.as_ref().ok_or_else(|| missing("corner_m"))?;
    let e1 = d.edge1_m.as_ref().ok_or_else(|| missing("edge1_m"))?;
    let e2 = d.edge2_m.as_ref().ok_or_else(|| missing("edge2_m"))?;
    let n = d.nodes.as_ref().ok_or_else(|| missing("nodes"))?;
    let corner = ck.finite3(c, &f("corner_m"))?;
    let edge1 = ck.finite3(e1, &f("edge1_m"))?;
    let edge2 = ck.finite3(e2, &f("edge2_m"))?;
    let pair = |v: &[usize], span: Range<usize>, field: &str| -> Result<[usize; 2], SceneError> {
        <[usize; 2]>::try_from(v).map_err(|_| {
            ck.err(
                span,
                f(field),
                format!(
                    "expected 2 numbers [along edge1, along edge2], found {}",
                    v.len()
                ),
            )
        })
    };
    let nodes = pair(n.get_ref(), n.span(), "nodes")?;
    let shear = match &d.shear {
        None => Shear::One,
        Some(s) => Shear::parse(s.get_ref()).ok_or_else(|| {
            ck.err(
                s.span(),
                f("shear"),
                format!("`{}`: expected none, one or both", s.get_ref()),
            )
        })?,
    };
    let bend = d.bend.as_ref().is_some_and(|b| *b.get_ref());
    let pinned = match &d.pinned_nodes {
        None => Vec::new(),
        Some(p) => p
            .get_ref()
            .iter()
            .map(|ij| pair(ij, p.span(), "pinned_nodes"))
            .collect::<Result<Vec<_>, _>>()?,
    };
    let (net, pins) = cloth(corner, edge1, edge2, nodes, shear, bend, &pinned).map_err(|e| {
        let (span, field) = match e {
            ClothError::TooFewNodes(..) | ClothError::TooMany(_) => (n.span(), "nodes"),
            ClothError::Degenerate(_) => (e2.span(), "edge2_m"),
            ClothError::PinOutside(..) => (
                d.pinned_nodes.as_ref().map_or(n.span(), Spanned::span),
                "pinned_nodes",
            ),
        };
        ck.err(span, f(field), e.to_string())
    })?;
    Ok((net, pins.into_iter().map(|p| (p, GROUND)).collect()))
}

/// The field that sets how many elements the table makes (its span and name): a rope's
/// `elements`, a cloth's `nodes`, a lattice's `spacing_m`.
pub(super) fn count_field(d: &DeformableDef) -> (Range<usize>, &'static str) {
    let (span, field) = match d.kind.get_ref().as_str() {
        "rope" => (d.elements.as_ref().map(Spanned::span), "elements"),
        "cloth" => (d.nodes.as_ref().map(Spanned::span), "nodes"),
        _ => (d.spacing_m.as_ref().map(Spanned::span), "spacing_m"),
    };
    (span.unwrap_or_else(|| d.kind.span()), field)
}

/// Refuses a field of another kind than the table's (a lattice's `spacing_m` in a rope).
fn refuse_other_kinds(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
) -> Result<(), SceneError> {
    fn at<T>(v: &Option<Spanned<T>>) -> Option<Range<usize>> {
        v.as_ref().map(Spanned::span)
    }
    let owned = [
        ("end1_m", at(&d.end1_m), "rope"),
        ("end2_m", at(&d.end2_m), "rope"),
        ("elements", at(&d.elements), "rope"),
        ("length_m", at(&d.length_m), "rope"),
        ("pin1", at(&d.pin1), "rope"),
        ("pin2", at(&d.pin2), "rope"),
        ("origin_m", at(&d.origin_m), "lattice"),
        ("size_m", at(&d.size_m), "lattice"),
        ("spacing_m", at(&d.spacing_m), "lattice"),
        ("diagonal_bracing", at(&d.diagonal_bracing), "lattice"),
        ("clamp", at(&d.clamp), "lattice"),
        ("corner_m", at(&d.corner_m), "cloth"),
        ("edge1_m", at(&d.edge1_m), "cloth"),
        ("edge2_m", at(&d.edge2_m), "cloth"),
        ("nodes", at(&d.nodes), "cloth"),
        ("shear", at(&d.shear), "cloth"),
        ("bend", at(&d.bend), "cloth"),
        ("pinned_nodes", at(&d.pinned_nodes), "cloth"),
    ];
    let kind = d.kind.get_ref();
    match owned
        .into_iter()
        .find(|(_, span, owner)| span.is_some() && owner != kind)
    {
        Some((field, Some(span), owner)) => Err(ck.err(
            span,
            f(field),
            format!("`{field}` belongs to kind = \"{owner}\", not \"{kind}\""),
        )),
        _ => Ok(()),
    }
}
