//! `<visual>` and `<collision>`: the shape (`box`, `cylinder`, `sphere`, `mesh`), its
//! `<origin>`, and the colour of its `<material>` (inline or by name). Mesh files are found
//! here, so that a missing one fails the import with every path tried: `package://NAME/REST`
//! under each `--package-path` folder, then each `ROS_PACKAGE_PATH` folder (as `DIR/NAME/REST`,
//! or `DIR/REST` for a folder that is the package itself); `file://` paths as they are;
//! relative paths from the URDF file's folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::Vector3;
use roxmltree::Node;

use super::values::Ctx;
use crate::error::ImportError;
use crate::model::{Geom, GeomShape};
use crate::options::ImportOptions;

/// The robot's top-level named materials' colours.
pub(super) fn materials(cx: &Ctx, robot: Node) -> Result<HashMap<String, [f64; 4]>, ImportError> {
    let mut out = HashMap::new();
    for m in robot
        .children()
        .filter(|c| c.is_element() && c.tag_name().name() == "material")
    {
        let name = cx.required(m, "name", "<material>")?;
        if let Some(rgba) = color(cx, m, &format!("material \"{name}\""))? {
            out.insert(name.to_owned(), rgba);
        }
    }
    Ok(out)
}

fn color(cx: &Ctx, material: Node, element: &str) -> Result<Option<[f64; 4]>, ImportError> {
    let Some(c) = cx.child(material, "color") else {
        return Ok(None);
    };
    Ok(cx
        .numbers(c, "rgba", element, 4)?
        .map(|v| [v[0], v[1], v[2], v[3]]))
}

/// A `<visual>` or `<collision>` element.
pub(super) fn geom(
    cx: &Ctx,
    node: Node,
    element: &str,
    materials: &HashMap<String, [f64; 4]>,
    options: &ImportOptions,
) -> Result<Geom, ImportError> {
    let tag = node.tag_name().name();
    let g = cx
        .child(node, "geometry")
        .ok_or_else(|| cx.invalid(node, element.into(), format!("<{tag}> without <geometry>")))?;
    let shape_node = g
        .children()
        .find(Node::is_element)
        .ok_or_else(|| cx.invalid(g, element.into(), "an empty <geometry>"))?;
    let shape = shape(cx, shape_node, element, options)?;
    let rgba = match cx.child(node, "material") {
        Some(m) => match color(cx, m, element)? {
            Some(c) => Some(c),
            None => m.attribute("name").and_then(|n| materials.get(n).copied()),
        },
        None => None,
    };
    for c in node.children().filter(Node::is_element) {
        let t = c.tag_name().name();
        if !matches!(t, "origin" | "geometry" | "material") {
            cx.ignore(c, format!("<{tag}><{t}>"));
        }
    }
    Ok(Geom {
        shape,
        link_from_geom: cx.origin(node, element)?,
        rgba,
        at: cx.at(node),
    })
}

fn shape(
    cx: &Ctx,
    node: Node,
    element: &str,
    options: &ImportOptions,
) -> Result<GeomShape, ImportError> {
    let positive = |attr: &str| -> Result<f64, ImportError> {
        let x = cx.number(node, attr, element)?;
        if x > 0.0 {
            Ok(x)
        } else {
            Err(cx.invalid(
                node,
                element.into(),
                format!(
                    "<{} {attr}=\"{x}\">: must be positive",
                    node.tag_name().name()
                ),
            ))
        }
    };
    Ok(match node.tag_name().name() {
        "box" => {
            let size = cx
                .vector(node, "size", element)?
                .ok_or_else(|| cx.invalid(node, element.into(), "<box> needs `size`"))?;
            if size.iter().any(|&x| x <= 0.0) {
                return Err(cx.invalid(node, element.into(), "<box size>: must be positive"));
            }
            GeomShape::Box { size }
        }
        "cylinder" => GeomShape::Cylinder {
            radius: positive("radius")?,
            length: positive("length")?,
        },
        "capsule" => GeomShape::Capsule {
            radius: positive("radius")?,
            length: positive("length")?,
        },
        "sphere" => GeomShape::Sphere {
            radius: positive("radius")?,
        },
        "mesh" => {
            let name = cx.required(node, "filename", element)?;
            let path = find_mesh(name, cx.path, &options.package_paths).map_err(|tried| {
                cx.invalid(
                    node,
                    element.into(),
                    format!("mesh \"{name}\" not found; tried: {}", tried.join(", ")),
                )
            })?;
            let scale = cx
                .vector(node, "scale", element)?
                .unwrap_or(Vector3::new(1.0, 1.0, 1.0));
            GeomShape::Mesh { path, scale }
        }
        other => {
            return Err(cx.invalid(
                node,
                element.into(),
                format!("unknown geometry <{other}> (box, cylinder, sphere, mesh)"),
            ))
        }
    })
}

/// The mesh file a URDF `filename` names, or the paths tried.
pub(crate) fn find_mesh(
    name: &str,
    urdf: &Path,
    package_paths: &[PathBuf],
) -> Result<PathBuf, Vec<String>> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(rest) = name.strip_prefix("package://") {
        let (package, rel) = rest.split_once('/').unwrap_or((rest, ""));
        let ros: Vec<PathBuf> = std::env::var_os("ROS_PACKAGE_PATH")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        for dir in package_paths.iter().chain(ros.iter()) {
            candidates.push(dir.join(package).join(rel));
            if dir.file_name().is_some_and(|n| n == package) {
                candidates.push(dir.join(rel));
            }
        }
        if candidates.is_empty() {
            return Err(vec![format!(
                "no folder to look in: give --package-path DIR (the folder holding \
                 `{package}`) or set ROS_PACKAGE_PATH"
            )]);
        }
    } else if let Some(abs) = name.strip_prefix("file://") {
        candidates.push(PathBuf::from(abs));
    } else {
        let base = urdf.parent().unwrap_or(Path::new(""));
        candidates.push(base.join(name));
    }
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or_else(|| candidates.iter().map(|p| p.display().to_string()).collect())
}
