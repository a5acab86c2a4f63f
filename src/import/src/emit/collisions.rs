//! `--collisions`: a body's collision geoms as its scene `shape`, the collider (the scene's
//! shape is both what collides and, without visuals, what is drawn).
//!
//! One geom centred on the body frame (the centre of mass) keeps its kind: a sphere, or a
//! cylinder or capsule along the body z axis. Anything else becomes a `convex` of points in
//! the body frame: a box's 8 corners, a mesh's convex hull (parry), and for a round shape off
//! the centre (or tilted) points sampled on its surface, with a warning since their hull lies
//! inside the true surface. Several geoms on one body collide as one hull of all their points
//! (a warning names the links): a scene body has one shape. A body without collision geoms
//! gets `collide = false`. Bodies joined by a joint never collide in a scene, so adjacent
//! (parent–child) links never touch each other.

use nalgebra::{Isometry3, Point3, Translation3, Vector3};

use super::bodies::Body;
use super::text;
use super::tree::Tree;
use crate::error::ImportError;
use crate::mesh;
use crate::model::{Geom, GeomShape, Model};

/// A geom closer than this to the body frame's origin (m, after the scale) is centred on it.
const CENTRED_M: f64 = 1.0e-9;

/// Points around a sampled circle, and circles from pole to pole of a sampled sphere.
const AROUND: usize = 24;
const RINGS: usize = 12;

/// A body's collider as scene text.
pub(crate) struct Collision {
    /// The `shape` value; `None`: the body has no collision geom (write `collide = false`).
    pub shape: Option<String>,
    /// What was approximated or merged, one line each.
    pub warnings: Vec<String>,
}

/// The collider of body `b` from its links' collision geoms (see the module docs).
pub(crate) fn of_body(
    model: &Model,
    tree: &Tree,
    b: &Body,
    scale: f64,
) -> Result<Collision, ImportError> {
    let world_from_top = &tree.world_from_link[b.top];
    let body_from_top = Translation3::from(-b.props.com * scale);
    let mut geoms: Vec<(usize, &Geom, Isometry3<f64>)> = Vec::new();
    for &l in &b.links {
        let top_from_link = world_from_top.inverse() * tree.world_from_link[l];
        for g in &model.links[l].collisions {
            // Lengths scale, rotations do not (as the visuals).
            let mut top_from_geom: Isometry3<f64> = top_from_link * g.link_from_geom;
            top_from_geom.translation.vector *= scale;
            geoms.push((l, g, body_from_top * top_from_geom));
        }
    }
    let mut warnings = Vec::new();
    let shape = match geoms.as_slice() {
        [] => None,
        [(_, g, body_from_geom)] => match exact(&g.shape, body_from_geom, scale) {
            Some(shape) => Some(shape),
            None => convex(model, &geoms, scale, &mut warnings)?,
        },
        _ => {
            let mut links: Vec<&str> = geoms
                .iter()
                .map(|(l, _, _)| model.links[*l].name.as_str())
                .collect();
            links.dedup();
            warnings.push(format!(
                "{}: link \"{}\": {} collision geoms (links {}) collide as one convex hull of \
                 them all (a scene body has one shape)",
                model.links[b.top].at,
                model.links[b.top].name,
                geoms.len(),
                links.join(", ")
            ));
            convex(model, &geoms, scale, &mut warnings)?
        }
    };
    Ok(Collision { shape, warnings })
}

/// The scene shape of one geom when it keeps its kind: a sphere centred on the body frame,
/// a cylinder or capsule centred with its axis along the body z axis.
fn exact(shape: &GeomShape, body_from_geom: &Isometry3<f64>, s: f64) -> Option<String> {
    let centred = body_from_geom.translation.vector.norm() <= CENTRED_M;
    let along_z = (body_from_geom.rotation * Vector3::z()).z.abs() >= 1.0 - 1.0e-12;
    match *shape {
        GeomShape::Sphere { radius } if centred => Some(format!(
            "{{ kind = \"sphere\", radius_m = {:?} }}",
            radius * s
        )),
        GeomShape::Cylinder { radius, length } if centred && along_z => Some(format!(
            "{{ kind = \"cylinder\", radius_m = {:?}, length_m = {:?} }}",
            radius * s,
            length * s
        )),
        GeomShape::Capsule { radius, length } if centred && along_z => Some(format!(
            "{{ kind = \"capsule\", radius_m = {:?}, length_m = {:?} }}",
            radius * s,
            length * s
        )),
        _ => None,
    }
}

/// One convex of every geom's points in the body frame, as the hull's vertices; `None` when
/// no geom has a volume (planes only).
fn convex(
    model: &Model,
    geoms: &[(usize, &Geom, Isometry3<f64>)],
    s: f64,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, ImportError> {
    let mut points: Vec<[f64; 3]> = Vec::new();
    for (l, g, body_from_geom) in geoms {
        let link = &model.links[*l];
        let in_geom = match points_in_geom(g)? {
            Points::Exact(p) => p,
            Points::Sampled(p) => {
                warnings.push(format!(
                    "{}: link \"{}\": a {} collision off the body's centre of mass (or tilted) \
                     collides as the hull of {} points on its surface (a little inside it)",
                    g.at,
                    link.name,
                    kind(&g.shape),
                    p.len()
                ));
                p
            }
            Points::None => {
                warnings.push(format!(
                    "{}: link \"{}\": a plane collision on a moving body is not used (the \
                     desk plane z = 0 is the ground's)",
                    g.at, link.name
                ));
                continue;
            }
        };
        points.extend(in_geom.iter().map(|p| {
            let q = body_from_geom * Point3::from(p.coords * s);
            [q.x, q.y, q.z]
        }));
    }
    if points.is_empty() {
        return Ok(None);
    }
    let (link, at) = (&model.links[geoms[0].0], &geoms[0].1.at);
    let hull = ar_dynamics::contact::convex::hull(&points).map_err(|e| ImportError::Invalid {
        at: at.clone(),
        element: format!("link \"{}\" collision", link.name),
        message: format!("no convex collider: {}", e.message),
    })?;
    let vertices: Vec<String> = hull
        .points()
        .iter()
        .map(|p| text::array(&Vector3::new(p.x, p.y, p.z)))
        .collect();
    Ok(Some(format!(
        "{{ kind = \"convex\", points_m = [{}] }}",
        vertices.join(", ")
    )))
}

/// A geom's points in its own frame (file units).
enum Points {
    /// Its hull exactly (box corners, a mesh's hull).
    Exact(Vec<Point3<f64>>),
    /// Sampled on a round surface.
    Sampled(Vec<Point3<f64>>),
    /// No volume (a plane).
    None,
}

fn points_in_geom(g: &Geom) -> Result<Points, ImportError> {
    let ring = |r: f64, z: f64| {
        (0..AROUND).map(move |k| {
            let a = std::f64::consts::TAU * k as f64 / AROUND as f64;
            Point3::new(r * a.cos(), r * a.sin(), z)
        })
    };
    // Rings from pole to equator of a unit sphere (the equator included, where a sphere is
    // widest), mirrored to the other half; the upper half raised by `lift` and the lower one
    // lowered by it (a capsule's caps).
    let sphere = |lift: f64| -> Vec<Point3<f64>> {
        let mut p = vec![
            Point3::new(0.0, 0.0, 1.0 + lift),
            Point3::new(0.0, 0.0, -1.0 - lift),
        ];
        for i in 1..=RINGS / 2 {
            let polar = std::f64::consts::PI * i as f64 / RINGS as f64;
            let z = polar.cos() + lift;
            p.extend(ring(polar.sin(), z).chain(ring(polar.sin(), -z)));
        }
        p
    };
    Ok(match &g.shape {
        GeomShape::Box { size } => Points::Exact(
            (0..8)
                .map(|k| {
                    let c = |i: usize| if k & (1 << i) == 0 { -0.5 } else { 0.5 };
                    Point3::from(size.component_mul(&Vector3::new(c(0), c(1), c(2))))
                })
                .collect(),
        ),
        GeomShape::Mesh { path, scale } => {
            let m = mesh::load(path, scale, &g.at)?;
            Points::Exact(mesh::convex_hull(&m, path, &g.at)?.vertices_m)
        }
        GeomShape::Sphere { radius } => {
            Points::Sampled(sphere(0.0).iter().map(|p| p * *radius).collect())
        }
        GeomShape::Ellipsoid { radii } => Points::Sampled(
            sphere(0.0)
                .iter()
                .map(|p| Point3::from(p.coords.component_mul(radii)))
                .collect(),
        ),
        GeomShape::Capsule { radius, length } => Points::Sampled(
            sphere(0.5 * length / radius)
                .iter()
                .map(|p| p * *radius)
                .collect(),
        ),
        GeomShape::Cylinder { radius, length } => Points::Sampled(
            ring(*radius, 0.5 * length)
                .chain(ring(*radius, -0.5 * length))
                .collect(),
        ),
        GeomShape::Plane => Points::None,
    })
}

fn kind(shape: &GeomShape) -> &'static str {
    match shape {
        GeomShape::Box { .. } => "box",
        GeomShape::Cylinder { .. } => "cylinder",
        GeomShape::Capsule { .. } => "capsule",
        GeomShape::Sphere { .. } => "sphere",
        GeomShape::Ellipsoid { .. } => "ellipsoid",
        GeomShape::Plane => "plane",
        GeomShape::Mesh { .. } => "mesh",
    }
}
