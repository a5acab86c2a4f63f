//! A body's `[[body.visual]]` tables: what is drawn instead of its `shape` (see
//! [`crate::model::visual`]). Each names exactly one of `shape` (a primitive) or `mesh` (a file,
//! relative to the scene file's folder), with an optional `scale` (meshes), placement in the
//! body frame and colour:
//!
//! ```toml
//! [[body.visual]]
//! mesh = "meshes/link1.dae"            # or: shape = { kind = "box", size_m = [0.1, 0.1, 0.2] }
//! scale = [0.001, 0.001, 0.001]        # optional, meshes only: a mesh in millimetres
//! position_in_body_m = [0.0, 0.0, 0.0] # optional: the visual frame in the body frame
//! rotation_in_body_rad = [0.0, 0.0, 0.0]
//! color_rgba = [0.8, 0.8, 0.8, 1.0]    # optional, linear 0..1 (three values: opaque)
//! ```
//!
//! The mesh file must exist when the scene is loaded (the error names the path tried); its
//! content is read by the compositor that draws it.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use nalgebra::{Isometry3, Translation3};
use serde::Deserialize;
use toml::Spanned;

use super::checker::{rotation, Checker};
use crate::error::SceneError;
use crate::model::shape::Shape;
use crate::model::visual::{Visual, VisualGeometry};

/// Most visuals one body may have.
pub const MAX_VISUALS_PER_BODY: usize = 256;

/// A `[[body.visual]]` table as parsed.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VisualDef {
    #[serde(default)]
    shape: Option<Spanned<Shape>>,
    #[serde(default)]
    mesh: Option<Spanned<String>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    scale: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    position_in_body_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    rotation_in_body_rad: Option<Spanned<[f64; 3]>>,
    #[serde(default)]
    color_rgba: Option<Spanned<Vec<f64>>>,
}

/// The visuals of body `i` (its tables `defs`); `body_span` locates the body for the messages
/// about a table that names neither a shape nor a mesh.
pub(super) fn visuals(
    ck: &Checker,
    i: usize,
    defs: &[VisualDef],
    body_span: Range<usize>,
) -> Result<Arc<[Visual]>, SceneError> {
    if defs.len() > MAX_VISUALS_PER_BODY {
        return Err(ck.err(
            body_span,
            format!("body[{i}].visual"),
            format!(
                "{} visuals, over the limit of {MAX_VISUALS_PER_BODY} per body",
                defs.len()
            ),
        ));
    }
    defs.iter()
        .enumerate()
        .map(|(j, d)| visual(ck, &format!("body[{i}].visual[{j}]"), d, body_span.clone()))
        .collect()
}

fn visual(
    ck: &Checker,
    at: &str,
    d: &VisualDef,
    body_span: Range<usize>,
) -> Result<Visual, SceneError> {
    let f = |name: &str| format!("{at}.{name}");
    let geometry = match (&d.shape, &d.mesh) {
        (Some(shape), None) => {
            if let Some(scale) = &d.scale {
                return Err(ck.err(
                    scale.span(),
                    f("scale"),
                    "only a mesh is scaled: give the shape's sizes instead",
                ));
            }
            if let Some((field, message)) = shape.get_ref().problem() {
                return Err(ck.err(shape.span(), f(&format!("shape.{field}")), message));
            }
            VisualGeometry::Shape(shape.get_ref().clone())
        }
        (None, Some(mesh)) => VisualGeometry::Mesh {
            path: mesh_path(ck, mesh, &f("mesh"))?,
            scale: match &d.scale {
                None => [1.0; 3],
                Some(s) => {
                    let v = ck.finite3(s, &f("scale"))?;
                    if v.iter().any(|&x| x == 0.0) {
                        return Err(ck.err(s.span(), f("scale"), "a scale must not be zero"));
                    }
                    v.into()
                }
            },
        },
        (Some(shape), Some(_)) => {
            return Err(ck.err(
                shape.span(),
                at,
                "a visual is either a `shape` or a `mesh`, not both",
            ))
        }
        (None, None) => return Err(ck.err(body_span, at, "a visual needs a `shape` or a `mesh`")),
    };
    let position = d
        .position_in_body_m
        .as_ref()
        .map(|p| ck.finite3(p, &f("position_in_body_m")))
        .transpose()?
        .unwrap_or_default();
    let rotation_rad = d
        .rotation_in_body_rad
        .as_ref()
        .map(|r| ck.rotation3(r, &f("rotation_in_body_rad")))
        .transpose()?;
    let rgba = d
        .color_rgba
        .as_ref()
        .map(|c| colour(ck, c, &f("color_rgba")))
        .transpose()?;
    Ok(Visual {
        geometry,
        body_from_visual: Isometry3::from_parts(
            Translation3::from(position),
            rotation(rotation_rad.map(Into::into)),
        ),
        rgba,
    })
}

/// The mesh file, resolved against the scene file's folder, which must be a regular file now.
fn mesh_path(ck: &Checker, mesh: &Spanned<String>, field: &str) -> Result<PathBuf, SceneError> {
    let given = PathBuf::from(mesh.get_ref());
    if given.as_os_str().is_empty() {
        return Err(ck.err(mesh.span(), field, "the mesh file's path is empty"));
    }
    let path = if given.is_absolute() {
        given
    } else {
        ck.path
            .parent()
            .map_or_else(|| given.clone(), |dir| dir.join(&given))
    };
    match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => Ok(path),
        Ok(_) => Err(ck.err(
            mesh.span(),
            field,
            format!("{} is not a regular file", path.display()),
        )),
        Err(e) => Err(ck.err(
            mesh.span(),
            field,
            format!("cannot read the mesh file {}: {e}", path.display()),
        )),
    }
}

/// Three or four components in 0..=1 (three: opaque).
fn colour(ck: &Checker, c: &Spanned<Vec<f64>>, field: &str) -> Result<[f64; 4], SceneError> {
    let v = c.get_ref();
    let rgba = match v[..] {
        [r, g, b] => [r, g, b, 1.0],
        [r, g, b, a] => [r, g, b, a],
        _ => {
            return Err(ck.err(
                c.span(),
                field,
                format!(
                    "a colour has 3 or 4 components (RGB or RGBA), got {}",
                    v.len()
                ),
            ))
        }
    };
    if rgba.iter().all(|x| (0.0..=1.0).contains(x)) {
        Ok(rgba)
    } else {
        Err(ck.err(c.span(), field, "each component must lie in 0..1"))
    }
}
