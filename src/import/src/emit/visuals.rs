//! A body's visuals as `[[body.visual]]` tables: every visual geom of the links merged into the
//! body, placed in the body frame (origin at the centre of mass, axes the top link's), primitives
//! as shapes and meshes by their resolved path and scale, each in the file's colour.

use nalgebra::{Isometry3, Translation3};

use super::bodies::Body;
use super::text::{self, Writer};
use super::tree::Tree;
use crate::model::{GeomShape, Model};

/// Writes the body's visual tables (after every key of the body's own table) and returns the
/// warnings for geoms the scene cannot draw (ellipsoids, planes).
pub(crate) fn write(
    w: &mut Writer,
    model: &Model,
    tree: &Tree,
    b: &Body,
    scale: f64,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let world_from_top = &tree.world_from_link[b.top];
    let body_from_top = Translation3::from(-b.props.com * scale);
    for &l in &b.links {
        let top_from_link = world_from_top.inverse() * tree.world_from_link[l];
        for g in &model.links[l].visuals {
            let entry = match &g.shape {
                GeomShape::Box { size } => Entry::Shape(format!(
                    "{{ kind = \"box\", size_m = {} }}",
                    text::array(&(size * scale))
                )),
                GeomShape::Cylinder { radius, length } => Entry::Shape(format!(
                    "{{ kind = \"cylinder\", radius_m = {:?}, length_m = {:?} }}",
                    radius * scale,
                    length * scale
                )),
                GeomShape::Capsule { radius, length } => Entry::Shape(format!(
                    "{{ kind = \"capsule\", radius_m = {:?}, length_m = {:?} }}",
                    radius * scale,
                    length * scale
                )),
                GeomShape::Sphere { radius } => Entry::Shape(format!(
                    "{{ kind = \"sphere\", radius_m = {:?} }}",
                    radius * scale
                )),
                GeomShape::Mesh {
                    path,
                    scale: mesh_scale,
                } => {
                    // Absolute: the scene resolves a relative path against its own folder.
                    let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                    Entry::Mesh(path.to_string_lossy().into_owned(), mesh_scale * scale)
                }
                GeomShape::Ellipsoid { .. } | GeomShape::Plane => {
                    warnings.push(format!(
                        "{}: link \"{}\": an {} visual is not drawn (the scene's visuals are boxes, \
                         cylinders, capsules, spheres and meshes)",
                        g.at,
                        model.links[l].name,
                        if matches!(g.shape, GeomShape::Plane) { "plane" } else { "ellipsoid" }
                    ));
                    continue;
                }
            };
            // Lengths scale, rotations do not: the top link's frame scaled about its origin.
            let mut top_from_geom: Isometry3<f64> = top_from_link * g.link_from_geom;
            top_from_geom.translation.vector *= scale;
            let body_from_geom = body_from_top * top_from_geom;
            w.table("body.visual");
            match &entry {
                Entry::Shape(shape) => w.raw("shape", shape),
                Entry::Mesh(path, mesh_scale) => {
                    w.string("mesh", path);
                    w.vector("scale", mesh_scale);
                }
            }
            w.vector("position_in_body_m", &body_from_geom.translation.vector);
            w.vector(
                "rotation_in_body_rad",
                &body_from_geom.rotation.scaled_axis(),
            );
            if let Some(rgba) = g.rgba {
                w.array("color_rgba", &rgba);
            }
        }
    }
    warnings
}

/// What a visual table holds.
enum Entry {
    /// A primitive, as the scene's `shape` value.
    Shape(String),
    /// A mesh: its absolute path and scale per axis.
    Mesh(String, nalgebra::Vector3<f64>),
}
