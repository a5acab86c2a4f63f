//! `[[support]]` tables: the visual supports of a scene ([`crate::model::support`]), checked like
//! the rest of the file (every error names the file, line, column and field).
//!
//! ```toml
//! [[support]]
//! name = "post"
//! kind = "rod"                  # rod | box | line
//! from_m = [0.0, 0.17, 0.006]   # rod, line: the two ends (world frame, m)
//! to_m = [0.0, 0.17, 0.64]
//! radius_m = 0.006              # rod only
//!
//! [[support]]
//! name = "base"
//! kind = "box"                  # axis-aligned
//! center_m = [0.0, 0.08, 0.003]
//! size_m = [0.12, 0.24, 0.006]  # full extents along world x, y, z
//! ```
//! Supports stand on the desk: no part may reach below the marker plane (z = 0) by more than
//! [`DESK_TOLERANCE_M`].

use std::collections::HashMap;

use nalgebra::{Point3, Vector3};
use serde::Deserialize;
use toml::Spanned;

use super::checker::Checker;
use crate::error::SceneError;
use crate::model::support::{Support, SupportShape};

/// How far below the desk (z = 0) a support may reach, metres.
pub const DESK_TOLERANCE_M: f64 = 1.0e-3;

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(super) enum SupportKindDef {
    Rod,
    Box,
    Line,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SupportDef {
    name: Spanned<String>,
    kind: Spanned<SupportKindDef>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    from_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    to_m: Option<Spanned<[f64; 3]>>,
    #[serde(default)]
    radius_m: Option<Spanned<f64>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    center_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    size_m: Option<Spanned<[f64; 3]>>,
}

/// The supports of a scene, in file order.
pub(super) fn supports(ck: &Checker, defs: &[SupportDef]) -> Result<Vec<Support>, SceneError> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::with_capacity(defs.len());
    for (i, d) in defs.iter().enumerate() {
        let f = |name: &str| format!("support[{i}].{name}");
        if let Some(first) = seen.insert(d.name.get_ref(), i) {
            return Err(ck.err(
                d.name.span(),
                f("name"),
                format!(
                    "`{}` is already the name of support[{first}]",
                    d.name.get_ref()
                ),
            ));
        }
        let shape = shape(ck, d, &f)?;
        let lowest = shape.lowest_z_m();
        if lowest < -DESK_TOLERANCE_M {
            return Err(ck.err(
                d.kind.span(),
                f("kind"),
                format!(
                    "reaches z = {lowest:.4} m, below the desk (the marker plane, z = 0): \
                     a support stands on the desk"
                ),
            ));
        }
        out.push(Support {
            name: d.name.get_ref().clone(),
            shape,
        });
    }
    Ok(out)
}

fn shape(
    ck: &Checker,
    d: &SupportDef,
    f: &dyn Fn(&str) -> String,
) -> Result<SupportShape, SceneError> {
    check_kind_fields(ck, d, f)?;
    Ok(match *d.kind.get_ref() {
        SupportKindDef::Rod => {
            let (from_in_world, to_in_world) = ends(ck, d, f)?;
            let radius_m = match &d.radius_m {
                Some(r) => ck.positive(r, &f("radius_m"))?,
                None => return Err(ck.err(d.kind.span(), f("radius_m"), "missing")),
            };
            SupportShape::Rod {
                from_in_world,
                to_in_world,
                radius_m,
            }
        }
        SupportKindDef::Line => {
            let (from_in_world, to_in_world) = ends(ck, d, f)?;
            SupportShape::Line {
                from_in_world,
                to_in_world,
            }
        }
        SupportKindDef::Box => {
            let center_in_world = point(ck, d, f, &d.center_m, "center_m")?;
            let size_m = match &d.size_m {
                Some(s) => {
                    let v: Vector3<f64> = ck.finite3(s, &f("size_m"))?;
                    if v.iter().any(|&x| x <= 0.0) {
                        return Err(ck.err(s.span(), f("size_m"), "every extent must be positive"));
                    }
                    v
                }
                None => return Err(ck.err(d.kind.span(), f("size_m"), "missing")),
            };
            SupportShape::Box {
                center_in_world,
                size_m,
            }
        }
    })
}

/// Fields of another kind are mistakes (a box's `radius_m` would be silently ignored), and
/// each field of the kind is needed.
fn check_kind_fields(
    ck: &Checker,
    d: &SupportDef,
    f: &dyn Fn(&str) -> String,
) -> Result<(), SceneError> {
    let kind = *d.kind.get_ref();
    let fields: [(&str, Option<std::ops::Range<usize>>, bool); 5] = [
        (
            "from_m",
            d.from_m.as_ref().map(|v| v.span()),
            kind != SupportKindDef::Box,
        ),
        (
            "to_m",
            d.to_m.as_ref().map(|v| v.span()),
            kind != SupportKindDef::Box,
        ),
        (
            "radius_m",
            d.radius_m.as_ref().map(|v| v.span()),
            kind == SupportKindDef::Rod,
        ),
        (
            "center_m",
            d.center_m.as_ref().map(|v| v.span()),
            kind == SupportKindDef::Box,
        ),
        (
            "size_m",
            d.size_m.as_ref().map(|v| v.span()),
            kind == SupportKindDef::Box,
        ),
    ];
    let kind_name = match kind {
        SupportKindDef::Rod => "rod",
        SupportKindDef::Box => "box",
        SupportKindDef::Line => "line",
    };
    let wanted: Vec<&str> = fields.iter().filter(|x| x.2).map(|x| x.0).collect();
    for (name, span, allowed) in &fields {
        let (span, verb) = match (span, allowed) {
            (Some(span), false) => (span.clone(), "has no"),
            (None, true) => (d.kind.span(), "needs"),
            _ => continue,
        };
        return Err(ck.err(
            span,
            f(name),
            format!(
                "a {kind_name} support {verb} {name} (it takes {})",
                wanted.join(", ")
            ),
        ));
    }
    Ok(())
}

/// A point field (world, m), finite.
fn point(
    ck: &Checker,
    d: &SupportDef,
    f: &dyn Fn(&str) -> String,
    v: &Option<Spanned<[f64; 3]>>,
    name: &str,
) -> Result<Point3<f64>, SceneError> {
    match v {
        Some(v) => Ok(Point3::from(ck.finite3(v, &f(name))?)),
        None => Err(ck.err(d.kind.span(), f(name), "missing")),
    }
}

/// A rod's or line's two ends, at least 1 µm apart.
fn ends(
    ck: &Checker,
    d: &SupportDef,
    f: &dyn Fn(&str) -> String,
) -> Result<(Point3<f64>, Point3<f64>), SceneError> {
    let (a, b) = (
        point(ck, d, f, &d.from_m, "from_m")?,
        point(ck, d, f, &d.to_m, "to_m")?,
    );
    if (b - a).norm() < 1e-6 {
        let span = d.to_m.as_ref().map_or(d.kind.span(), |v| v.span());
        return Err(ck.err(span, f("to_m"), "must differ from from_m by at least 1 µm"));
    }
    Ok((a, b))
}
