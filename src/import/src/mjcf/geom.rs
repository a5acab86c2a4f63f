//! MJCF `<geom>`s: the shape from `type` and `size` (half sizes and half lengths in MJCF, full
//! ones in the model) or `fromto`, its frame in the body, and what MuJoCo derives the body's
//! inertia from (`mass` or `density`); `<asset><mesh>` files resolved through `meshdir`.

use std::path::PathBuf;

use nalgebra::{Isometry3, Translation3, Vector3};
use roxmltree::Node;

use super::frame::{frame, nonzero, z_axis};
use super::xml::{invalid, location, Attrs};
use super::Reader;
use crate::error::ImportError;
use crate::model::{Geom, GeomShape};

/// Attributes of `<geom>` the reader takes.
const GEOM_KNOWN: [&str; 18] = [
    "name",
    "class",
    "type",
    "size",
    "fromto",
    "pos",
    "quat",
    "axisangle",
    "euler",
    "xyaxes",
    "zaxis",
    "mass",
    "density",
    "rgba",
    "mesh",
    "contype",
    "conaffinity",
    "group",
];

/// Attributes of `<mesh>` the reader takes.
const MESH_KNOWN: [&str; 4] = ["name", "class", "file", "scale"];

/// A geom as read, with what its mass comes from.
#[derive(Clone, Debug)]
pub struct GeomRead {
    /// The shape in the body frame.
    pub geom: Geom,
    /// Its `mass` (kg), when given (it then overrides the density).
    pub mass_kg: Option<f64>,
    /// Its `density` (kg/m³), default 1000.
    pub density_kg_m3: f64,
    /// Whether it collides (`contype` or `conaffinity` not zero).
    pub collides: bool,
}

/// A mesh asset: the file and its scale per axis.
#[derive(Clone, Debug)]
pub struct MeshAsset {
    /// The resolved file.
    pub path: PathBuf,
    /// `scale`.
    pub scale: Vector3<f64>,
}

impl<'a, 'input> Reader<'a, 'input> {
    /// Reads one `<geom>` given in the frame `body_from_frame` of its body.
    pub(super) fn geom(
        &mut self,
        node: Node<'a, 'input>,
        class: &'a str,
        body_from_frame: &Isometry3<f64>,
    ) -> Result<GeomRead, ImportError> {
        let attrs = self.attrs(node, class, "geom")?;
        attrs.note_unknown(&GEOM_KNOWN, &mut self.log);
        let kind = attrs
            .keyword(
                "type",
                &[
                    "sphere",
                    "capsule",
                    "ellipsoid",
                    "box",
                    "cylinder",
                    "plane",
                    "mesh",
                ],
            )?
            .unwrap_or("sphere");
        let size = attrs.between("size", 0, 3)?.unwrap_or_default();
        for (i, s) in size.iter().enumerate() {
            if *s <= 0.0 && kind != "plane" {
                return Err(attrs.bad("size", format!("size {} is {s}, not positive", i + 1)));
            }
        }
        let fromto = attrs.fixed::<6>("fromto")?;
        let (local, half_length) = match (fromto, kind) {
            (Some(ft), "capsule" | "cylinder" | "box" | "ellipsoid") => {
                let (a, b) = (
                    Vector3::new(ft[0], ft[1], ft[2]),
                    Vector3::new(ft[3], ft[4], ft[5]),
                );
                let axis = nonzero(&attrs, "fromto", b - a)?;
                let f = Isometry3::from_parts(Translation3::from((a + b) / 2.0), z_axis(&axis));
                (f, Some((b - a).norm() / 2.0))
            }
            (Some(_), _) => {
                return Err(attrs.bad("fromto", format!("a {kind} cannot be given by `fromto`")))
            }
            (None, _) => (frame(&attrs, &self.compiler)?, None),
        };
        let shape = self.shape(&attrs, kind, &size, half_length)?;
        let mass_kg = match attrs.number("mass")? {
            Some(m) if m < 0.0 => return Err(attrs.bad("mass", format!("{m} is negative"))),
            m => m,
        };
        let density_kg_m3 = attrs.non_negative("density", 1000.0)?;
        let rgba = attrs.fixed::<4>("rgba")?;
        let contype = attrs.number("contype")?.unwrap_or(1.0);
        let conaffinity = attrs.number("conaffinity")?.unwrap_or(1.0);
        Ok(GeomRead {
            geom: Geom {
                shape,
                link_from_geom: body_from_frame * local,
                rgba,
                at: location(self.file, node),
            },
            mass_kg,
            density_kg_m3,
            collides: contype != 0.0 || conaffinity != 0.0,
        })
    }

    /// The shape of a geom of `kind` from its `size` (and the half length `fromto` gave).
    fn shape(
        &self,
        attrs: &Attrs,
        kind: &str,
        size: &[f64],
        half_length: Option<f64>,
    ) -> Result<GeomShape, ImportError> {
        let need = |n: usize| -> Result<(), ImportError> {
            if size.len() < n {
                Err(attrs.bad(
                    "size",
                    format!("a {kind} needs {n} size numbers, {} given", size.len()),
                ))
            } else {
                Ok(())
            }
        };
        Ok(match kind {
            "sphere" => {
                need(1)?;
                GeomShape::Sphere { radius: size[0] }
            }
            "capsule" | "cylinder" => {
                let half = match half_length {
                    Some(h) => {
                        need(1)?;
                        h
                    }
                    None => {
                        need(2)?;
                        size[1]
                    }
                };
                let (radius, length) = (size[0], 2.0 * half);
                if kind == "capsule" {
                    GeomShape::Capsule { radius, length }
                } else {
                    GeomShape::Cylinder { radius, length }
                }
            }
            "ellipsoid" | "box" => {
                let half = match half_length {
                    Some(h) => {
                        need(2)?;
                        Vector3::new(size[0], size[1], h)
                    }
                    None => {
                        need(3)?;
                        Vector3::new(size[0], size[1], size[2])
                    }
                };
                if kind == "box" {
                    GeomShape::Box { size: half * 2.0 }
                } else {
                    GeomShape::Ellipsoid { radii: half }
                }
            }
            "plane" => GeomShape::Plane,
            _ => {
                let name = attrs
                    .get("mesh")
                    .ok_or_else(|| invalid(self.file, attrs.node, "a mesh geom needs `mesh`"))?;
                let asset = self.meshes.get(name).ok_or_else(|| {
                    attrs.bad("mesh", format!("no <mesh name=\"{name}\"> in <asset>"))
                })?;
                GeomShape::Mesh {
                    path: asset.path.clone(),
                    scale: asset.scale,
                }
            }
        })
    }

    /// Reads an `<asset>`: its meshes (by name; the name defaults to the file's stem); the
    /// rest (textures, materials) is listed as ignored.
    pub(super) fn assets(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        for child in node.children().filter(Node::is_element) {
            if child.tag_name().name() != "mesh" {
                let what = format!("asset/{}", child.tag_name().name());
                self.log.note(what, location(self.file, child));
                continue;
            }
            let class = child.attribute("class").unwrap_or(super::defaults::MAIN);
            let attrs = self.attrs(child, class, "mesh")?;
            attrs.note_unknown(&MESH_KNOWN, &mut self.log);
            let file = attrs.get("file").ok_or_else(|| {
                invalid(
                    self.file,
                    child,
                    "a mesh without a `file` (inline vertices) is not read",
                )
            })?;
            let name = match attrs.get("name") {
                Some(n) => n.to_owned(),
                None => std::path::Path::new(file)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            };
            let scale = Vector3::from(attrs.fixed::<3>("scale")?.unwrap_or([1.0; 3]));
            let dir = self.file.parent().unwrap_or(std::path::Path::new(""));
            let dir = match &self.compiler.mesh_dir {
                Some(d) => dir.join(d),
                None => dir.to_owned(),
            };
            let path = dir.join(file);
            if !path.is_file() {
                return Err(attrs.bad(
                    "file",
                    format!("the mesh file {} cannot be found", path.display()),
                ));
            }
            if self
                .meshes
                .insert(name.clone(), MeshAsset { path, scale })
                .is_some()
            {
                return Err(invalid(
                    self.file,
                    child,
                    format!("the mesh `{name}` is defined twice"),
                ));
            }
        }
        Ok(())
    }
}
