//! The `[[deformable.rigid_group]]` tables: which of a deformable body's elements form a rigid
//! group ([`crate::deformable::rigid_group`]) and when it switches.
//!
//! ```toml
//! [[deformable.rigid_group]]
//! name = "handle"                # the group `<deformable>.handle`
//! elements = [0, 1, 2, 3]        # element indices; or a box of initial element centres:
//! # region_min_m = [0.0, -0.1, 0.0]
//! # region_max_m = [0.1, 0.1, 0.5]
//! rigid_from_s = 0.25            # default 0 (rigid from the start)
//! deformable_from_s = 0.5        # default never
//! ```

use std::collections::HashSet;

use nalgebra::Vector3;
use serde::Deserialize;
use toml::Spanned;

use super::checker::{name_problem, Checker};
use crate::deformable::{GroupSwitch, RigidGroup};
use crate::error::SceneError;
use crate::model::body::BodyId;

/// Element centres may lie this far outside a group's region and still be in it (m).
const REGION_TOLERANCE_M: f64 = 1e-9;

/// A `[[deformable.rigid_group]]` table (see the module docs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RigidGroupDef {
    name: Spanned<String>,
    elements: Option<Spanned<Vec<usize>>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    region_min_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    region_max_m: Option<Spanned<[f64; 3]>>,
    rigid_from_s: Option<Spanned<f64>>,
    deformable_from_s: Option<Spanned<f64>>,
}

/// The rigid groups of deformable `i` (named `deformable`), whose elements are the bodies
/// `first..` at the initial positions `nodes_in_world_m`.
pub(super) fn rigid_groups(
    ck: &Checker,
    i: usize,
    deformable: &str,
    defs: &[RigidGroupDef],
    first: BodyId,
    nodes_in_world_m: &[Vector3<f64>],
) -> Result<Vec<RigidGroup>, SceneError> {
    let mut names: HashSet<&str> = HashSet::new();
    let mut taken: HashSet<usize> = HashSet::new();
    let mut groups = Vec::with_capacity(defs.len());
    for (k, g) in defs.iter().enumerate() {
        let f = |name: &str| format!("deformable[{i}].rigid_group[{k}].{name}");
        ck.name(&g.name, f("name"), "rigid group", &[], &mut names)?;
        let full_name = format!("{deformable}.{}", g.name.get_ref());
        if let Some(problem) = name_problem(&full_name, "rigid group", &[]) {
            return Err(ck.err(g.name.span(), f("name"), problem));
        }
        let (nodes, span, field) = select(ck, g, &f, nodes_in_world_m)?;
        if nodes.len() < 2 {
            return Err(ck.err(
                span,
                f(field),
                format!(
                    "selects {} element(s): a group needs at least two",
                    nodes.len()
                ),
            ));
        }
        if let Some(n) = nodes.iter().find(|n| !taken.insert(**n)) {
            return Err(ck.err(
                span,
                f(field),
                format!("element {n} is already in a rigid group"),
            ));
        }
        let time = |v: &Option<Spanned<f64>>, field: &str| {
            v.as_ref()
                .map(|t| ck.non_negative(t, &f(field)))
                .transpose()
        };
        let rigid_from = time(&g.rigid_from_s, "rigid_from_s")?;
        let deformable_from = time(&g.deformable_from_s, "deformable_from_s")?;
        if let (Some(r), Some(d), Some(span)) = (
            rigid_from,
            deformable_from,
            g.deformable_from_s.as_ref().map(Spanned::span),
        ) {
            if r == d {
                return Err(ck.err(
                    span,
                    f("deformable_from_s"),
                    format!("equals rigid_from_s ({r} s): give the switches different times"),
                ));
            }
        }
        let mut switches = Vec::new();
        // Rigid from the start by default, unless the table makes it deformable from there.
        if rigid_from.is_some() || deformable_from != Some(0.0) {
            switches.push(GroupSwitch {
                time_secs: rigid_from.unwrap_or(0.0),
                rigid: true,
            });
        }
        if let Some(d) = deformable_from {
            switches.push(GroupSwitch {
                time_secs: d,
                rigid: false,
            });
        }
        let elements = nodes.into_iter().map(|n| first + n).collect();
        groups.push(RigidGroup::new(full_name, elements, switches));
    }
    Ok(groups)
}

/// The group's nodes, in index order, with the span and field that selected them.
fn select(
    ck: &Checker,
    g: &RigidGroupDef,
    f: &dyn Fn(&str) -> String,
    nodes_in_world_m: &[Vector3<f64>],
) -> Result<(Vec<usize>, std::ops::Range<usize>, &'static str), SceneError> {
    let n = nodes_in_world_m.len();
    match (&g.elements, &g.region_min_m, &g.region_max_m) {
        (Some(e), None, None) => {
            let mut nodes = e.get_ref().clone();
            if let Some(bad) = nodes.iter().find(|&&x| x >= n) {
                return Err(ck.err(
                    e.span(),
                    f("elements"),
                    format!(
                        "element {bad} does not exist (the body has {n}: 0 to {})",
                        n - 1
                    ),
                ));
            }
            nodes.sort_unstable();
            if let Some(w) = nodes.windows(2).find(|w| w[0] == w[1]) {
                return Err(ck.err(
                    e.span(),
                    f("elements"),
                    format!("element {} is listed twice", w[0]),
                ));
            }
            Ok((nodes, e.span(), "elements"))
        }
        (None, Some(lo), Some(hi)) => {
            let lo_m = ck.finite3(lo, &f("region_min_m"))?;
            let hi_m = ck.finite3(hi, &f("region_max_m"))?;
            if (0..3).any(|a| hi_m[a] < lo_m[a]) {
                return Err(ck.err(
                    hi.span(),
                    f("region_max_m"),
                    "every component must be at least region_min_m's",
                ));
            }
            let inside = |p: &Vector3<f64>| {
                (0..3).all(|a| {
                    p[a] >= lo_m[a] - REGION_TOLERANCE_M && p[a] <= hi_m[a] + REGION_TOLERANCE_M
                })
            };
            let nodes = (0..n).filter(|&k| inside(&nodes_in_world_m[k])).collect();
            Ok((nodes, lo.span(), "region_min_m"))
        }
        (None, None, None) => Ok(((0..n).collect(), g.name.span(), "name")),
        (Some(e), _, _) => Err(ck.err(
            e.span(),
            f("elements"),
            "give `elements` or `region_min_m` and `region_max_m`, not both",
        )),
        (None, lo, hi) => {
            let (span, missing) = match (lo, hi) {
                (Some(lo), None) => (lo.span(), "region_max_m"),
                (None, Some(hi)) => (hi.span(), "region_min_m"),
                _ => unreachable!("both or neither are handled above"),
            };
            Err(ck.err(
                span,
                f(missing),
                "a region needs both `region_min_m` and `region_max_m`",
            ))
        }
    }
}
