//! The `[[deformable]]` tables: a generator ([`crate::deformable`]) makes the nodes and
//! connections, this module turns them into element bodies (appended after the `[[body]]`
//! tables and a mobile's parts), springs, ball joints for pinned nodes, and the element pairs
//! that must not collide. Its `generators` submodule checks the kind's fields and runs the
//! generator.
//!
//! ```toml
//! [[deformable]]
//! name = "rope"                  # elements `rope.e0`.., connections `rope.c0`.., pins `rope.pin0`..
//! kind = "rope"                  # rope | lattice | cloth
//! mass_kg = 0.1                  # total, shared equally by the elements
//! element_radius_m = 0.005       # each element a sphere (inertia 2/5 m r², contact shape)
//! stiffness_n_per_m = 2000.0     # of every connection
//! damping_n_s_per_m = 0.05       # of every connection (default 0)
//! drag_n_s_per_m = 0.002         # drag −c v on every element (default 0; h c/m ≤ 1 required)
//! fracture_extension_m = 0.002   # a connection breaks beyond this extension (default never)
//! # kind = "rope":
//! end1_m = [0.0, 0.0, 0.5]
//! end2_m = [0.4, 0.0, 0.5]
//! elements = 41                  # at least 2
//! length_m = 0.6                 # default: the ends' distance (then straight)
//! pin1 = "ground"                # joins element 0 to this body by a ball joint (default: free)
//! pin2 = "ground"                # the same for the last element
//! # kind = "lattice":
//! origin_m = [0.0, 0.0, 0.3]     # the box's minimum corner
//! size_m = [0.4, 0.04, 0.04]
//! spacing_m = 0.02
//! diagonal_bracing = true        # both diagonals of every cell face (default false)
//! clamp = "x-"                   # pins the nodes of this face to the ground (default none)
//! # kind = "cloth":
//! corner_m = [-0.1, -0.1, 0.2]   # node [0, 0]
//! edge1_m = [0.2, 0.0, 0.0]      # from the corner to node [n1 - 1, 0]
//! edge2_m = [0.0, 0.2, 0.0]      # from the corner to node [0, n2 - 1]
//! nodes = [21, 21]               # n1, n2: at least 2 each
//! shear = "one"                  # none | one | both diagonals per cell (default one)
//! bend = false                   # skip-one connections along both directions (default false)
//! pinned_nodes = [[0, 0]]        # grid nodes [i, j] pinned to the ground (default none)
//! [[deformable.rigid_group]]     # any number; see `super::rigid_groups`
//! name = "tip"
//! ```

use std::collections::HashSet;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use toml::Spanned;

use super::checker::{name_problem, Checker};
use crate::deformable::{sphere_inertia_kg_m2, Network};
use crate::error::SceneError;
use crate::model::body::{Body, BodyId};
use crate::model::joint::{Joint, JointKind};
use crate::model::shape::Shape;
use crate::model::spring::Spring;

mod generators;

/// A `[[deformable]]` table (see the module docs).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeformableDef {
    name: Spanned<String>,
    kind: Spanned<String>,
    mass_kg: Spanned<f64>,
    element_radius_m: Spanned<f64>,
    stiffness_n_per_m: Spanned<f64>,
    damping_n_s_per_m: Option<Spanned<f64>>,
    drag_n_s_per_m: Option<Spanned<f64>>,
    fracture_extension_m: Option<Spanned<f64>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    end1_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    end2_m: Option<Spanned<[f64; 3]>>,
    elements: Option<Spanned<usize>>,
    length_m: Option<Spanned<f64>>,
    pin1: Option<Spanned<String>>,
    pin2: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    origin_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    size_m: Option<Spanned<[f64; 3]>>,
    spacing_m: Option<Spanned<f64>>,
    diagonal_bracing: Option<Spanned<bool>>,
    clamp: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    corner_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    edge1_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    edge2_m: Option<Spanned<[f64; 3]>>,
    nodes: Option<Spanned<Vec<usize>>>,
    shear: Option<Spanned<String>>,
    bend: Option<Spanned<bool>>,
    pinned_nodes: Option<Spanned<Vec<Vec<usize>>>>,
    #[serde(default)]
    rigid_group: Vec<super::rigid_groups::RigidGroupDef>,
}

/// What the `[[deformable]]` tables add besides their element bodies.
#[derive(Default)]
pub(super) struct Expanded {
    pub(super) springs: Vec<Spring>,
    pub(super) joints: Vec<Joint>,
    /// Connected element pairs (smaller id first): they never collide.
    pub(super) excluded_pairs: Vec<(BodyId, BodyId)>,
    /// The `[[deformable.rigid_group]]` tables' groups.
    pub(super) rigid_groups: Vec<crate::deformable::RigidGroup>,
}

/// Appends the elements of every `[[deformable]]` table to `bodies` and returns their
/// connections, pins and excluded pairs. `gravity` gives a rope its sag direction.
pub(super) fn expand(
    ck: &Checker,
    defs: &[DeformableDef],
    bodies: &mut Vec<Body>,
    gravity_in_world: Vector3<f64>,
    dt_secs: f64,
) -> Result<Expanded, SceneError> {
    let mut out = Expanded::default();
    let mut names: HashSet<&str> = HashSet::new();
    // Every body's name, kept up to date as elements are added (not rebuilt per table).
    let mut taken: HashSet<String> = bodies.iter().map(|b| b.name.clone()).collect();
    for (i, d) in defs.iter().enumerate() {
        let f = |name: &str| format!("deformable[{i}].{name}");
        ck.name(&d.name, f("name"), "deformable", &["ground"], &mut names)?;
        let (network, pins) = generators::generate(ck, d, &f, bodies, gravity_in_world)?;
        // Each generator is bounded; together with the bodies before them, the elements must
        // stay within the scene's limit too (the ground is not counted).
        let (span, field) = generators::count_field(d);
        let elements = network.nodes_in_world_m.len();
        ck.count(
            span,
            f(field),
            (bodies.len() - 1).saturating_add(elements),
            super::MAX_BODIES,
            &format!("bodies with these {elements} elements"),
        )?;
        let material = Material::of(ck, d, &f, network.nodes_in_world_m.len(), dt_secs)?;
        let first = bodies.len();
        let name = d.name.get_ref();
        add_elements(ck, d, &f, &network, &material, bodies, &mut taken)?;
        add_connections(name, first, &network, &material, &mut out);
        exclude_overlapping(ck, d, &f, first, &network, material.radius, &mut out)?;
        out.rigid_groups.extend(super::rigid_groups::rigid_groups(
            ck,
            i,
            name,
            &d.rigid_group,
            first,
            &network.nodes_in_world_m,
        )?);
        add_pins(name, first, pins, bodies, &mut out.joints);
    }
    Ok(out)
}

/// A table's element and connection properties, checked.
struct Material {
    element_mass: f64,
    radius: f64,
    stiffness: f64,
    damping: f64,
    drag: f64,
    fracture: Option<f64>,
}

impl Material {
    /// The properties of table `d` for `elements` elements; the drag must stay well inside
    /// its bound at `dt_secs`.
    fn of(
        ck: &Checker,
        d: &DeformableDef,
        f: &dyn Fn(&str) -> String,
        elements: usize,
        dt_secs: f64,
    ) -> Result<Self, SceneError> {
        let mass = ck.positive(&d.mass_kg, &f("mass_kg"))?;
        let radius = ck.positive(&d.element_radius_m, &f("element_radius_m"))?;
        let stiffness = ck.non_negative(&d.stiffness_n_per_m, &f("stiffness_n_per_m"))?;
        let opt = |v: &Option<Spanned<f64>>, field: &str| {
            v.as_ref()
                .map(|v| ck.non_negative(v, &f(field)))
                .transpose()
        };
        let damping = opt(&d.damping_n_s_per_m, "damping_n_s_per_m")?.unwrap_or(0.0);
        let drag = opt(&d.drag_n_s_per_m, "drag_n_s_per_m")?.unwrap_or(0.0);
        let fracture = d
            .fracture_extension_m
            .as_ref()
            .map(|v| ck.positive(v, &f("fracture_extension_m")))
            .transpose()?;
        let element_mass = mass / elements as f64;
        // The drag is explicit (see `Body::drag_n_s_per_m`): keep it well inside its bound.
        if let Some(v) = &d.drag_n_s_per_m {
            if drag * dt_secs / element_mass > 1.0 {
                return Err(ck.err(
                    v.span(),
                    f("drag_n_s_per_m"),
                    format!(
                        "h c / m = {:.3} > 1 for elements of {element_mass:e} kg at h = {dt_secs} s \
                         (the explicit drag would overshoot): use at most {:e} N·s/m",
                        drag * dt_secs / element_mass,
                        element_mass / dt_secs
                    ),
                ));
            }
        }
        Ok(Self {
            element_mass,
            radius,
            stiffness,
            damping,
            drag,
            fracture,
        })
    }
}

/// The network's nodes as element bodies `<name>.e<n>` appended to `bodies`, whose names
/// must be new (not in `taken`, the bodies' names, to which they are added) and valid.
fn add_elements(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    network: &Network,
    m: &Material,
    bodies: &mut Vec<Body>,
    taken: &mut HashSet<String>,
) -> Result<(), SceneError> {
    let name = d.name.get_ref();
    let clash = network
        .nodes_in_world_m
        .iter()
        .enumerate()
        .map(|(n, _)| format!("{name}.e{n}"))
        .find(|e| taken.contains(e));
    if let Some(e) = clash {
        return Err(ck.err(
            d.name.span(),
            f("name"),
            format!("its element name `{e}` is already a body's name"),
        ));
    }
    for (n, p) in network.nodes_in_world_m.iter().enumerate() {
        let element_name = format!("{name}.e{n}");
        if let Some(problem) = name_problem(&element_name, "body", &["ground"]) {
            return Err(ck.err(d.name.span(), f("name"), problem));
        }
        let mut body = Body::new(
            element_name,
            m.element_mass,
            sphere_inertia_kg_m2(m.element_mass, m.radius),
            UnitQuaternion::identity(),
            Isometry3::from_parts(Translation3::from(*p), UnitQuaternion::identity()),
            Some(Shape::Sphere { radius_m: m.radius }),
        );
        body.drag_n_s_per_m = m.drag;
        taken.insert(body.name.clone());
        bodies.push(body);
    }
    Ok(())
}

/// The network's connections as springs `<name>.c<n>` between the elements from `first` on,
/// each pair excluded from collision.
fn add_connections(name: &str, first: BodyId, network: &Network, m: &Material, out: &mut Expanded) {
    for (n, c) in network.connections.iter().enumerate() {
        let (b1, b2) = (first + c.node1, first + c.node2);
        out.springs.push(Spring {
            name: format!("{name}.c{n}"),
            body1: b1,
            body2: b2,
            point1_in_body1: Vector3::zeros(),
            point2_in_body2: Vector3::zeros(),
            rest_length_m: c.rest_length_m,
            stiffness_n_per_m: m.stiffness,
            damping_n_s_per_m: m.damping,
            fracture_extension_m: m.fracture,
            broken: false,
        });
        out.excluded_pairs.push((b1.min(b2), b1.max(b2)));
    }
}

/// Elements (from `first` on) that overlap at rest never collide with each other; a radius
/// so large that each element overlaps dozens of others is refused.
fn exclude_overlapping(
    ck: &Checker,
    d: &DeformableDef,
    f: &dyn Fn(&str) -> String,
    first: BodyId,
    network: &Network,
    radius_m: f64,
    out: &mut Expanded,
) -> Result<(), SceneError> {
    use crate::deformable::overlap::{overlapping_pairs, MAX_OVERLAPS_PER_ELEMENT};
    let Some(pairs) = overlapping_pairs(&network.nodes_in_world_m, radius_m) else {
        let span = d.element_radius_m.span();
        return Err(ck.err(
            span,
            f("element_radius_m"),
            format!(
                "elements of {radius_m} m radius overlap more than {MAX_OVERLAPS_PER_ELEMENT} \
                 others each at rest: the radius is far larger than the spacing of the nodes"
            ),
        ));
    };
    out.excluded_pairs
        .extend(pairs.into_iter().map(|(i, j)| (first + i, first + j)));
    Ok(())
}

/// Ball joints `<name>.pin<n>` from each pinned node (an element from `first` on) to the
/// body it is pinned to, at the element's centre.
fn add_pins(
    name: &str,
    first: BodyId,
    pins: Vec<(usize, BodyId)>,
    bodies: &[Body],
    joints: &mut Vec<Joint>,
) {
    for (n, (node, to)) in pins.into_iter().enumerate() {
        let element = first + node;
        let anchor = bodies[to]
            .world_from_body()
            .inverse_transform_point(&bodies[element].position_in_world.into())
            .coords;
        joints.push(Joint::new(
            format!("{name}.pin{n}"),
            JointKind::Ball,
            bodies,
            to,
            element,
            anchor,
            Vector3::zeros(),
            Vector3::x(),
            Vector3::x(),
        ));
    }
}
