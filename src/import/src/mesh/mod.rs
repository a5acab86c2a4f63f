//! Mesh files of visuals and collisions (STL, OBJ, COLLADA/DAE, read by `mesh-loader`): their
//! triangles in metres with each part's colour, the mass properties of the solid they bound
//! (MJCF's inertia from a mesh), and their convex hull (parry), which is what a mesh collides
//! as.
//!
//! A file is read only if it is a regular file of at most [`MAX_MESH_BYTES`]; a file that is
//! missing, not a mesh, or holds no triangle is an error naming its path.

mod mass;

pub use mass::{mass_properties, MassProperties};

use nalgebra::{Point3, Vector3};
use std::path::Path;

use crate::error::{ImportError, Location};

/// The largest mesh file read (256 MiB): far above a robot's visual meshes (the Franka
/// Panda's largest DAE is under 10 MB).
pub const MAX_MESH_BYTES: u64 = 256 << 20;

/// A triangle mesh in metres, in the mesh file's own frame (after the scale).
#[derive(Clone, Debug, Default)]
pub struct TriMesh {
    /// The parts of the file (a DAE's geometries, an OBJ's objects), each with its colour.
    pub parts: Vec<MeshPart>,
}

/// One part of a mesh file.
#[derive(Clone, Debug, Default)]
pub struct MeshPart {
    /// Vertices (m).
    pub vertices_m: Vec<Point3<f64>>,
    /// Triangles, counter-clockwise seen from outside, as indices into `vertices_m`.
    pub triangles: Vec<[u32; 3]>,
    /// The material's diffuse colour (linear RGBA, 0..1), when the file gives one.
    pub rgba: Option<[f64; 4]>,
}

impl TriMesh {
    /// All vertices of all parts.
    pub fn vertices(&self) -> impl Iterator<Item = &Point3<f64>> {
        self.parts.iter().flat_map(|p| p.vertices_m.iter())
    }

    /// How many triangles the parts hold together.
    pub fn triangle_count(&self) -> usize {
        self.parts.iter().map(|p| p.triangles.len()).sum()
    }
}

/// Reads the mesh at `path` (STL, OBJ or DAE by its content and extension), scaled per axis
/// by `scale` (a mesh in millimetres: 0.001). `at` is the element that names the mesh, for
/// messages.
pub fn load(path: &Path, scale: &Vector3<f64>, at: &Location) -> Result<TriMesh, ImportError> {
    let bytes = ar_io::input_file::read_bytes_limited(path, MAX_MESH_BYTES).map_err(|cause| {
        ImportError::Io {
            path: path.to_owned(),
            cause,
        }
    })?;
    let invalid = |message: String| ImportError::Invalid {
        at: at.clone(),
        element: format!("mesh {}", path.display()),
        message,
    };
    let scene = mesh_loader::Loader::with_custom_reader(read_companion)
        .load_from_slice(&bytes, path)
        .map_err(|e| invalid(format!("not a mesh that can be read: {e}")))?;
    let mut mesh = TriMesh::default();
    for m in &scene.meshes {
        if m.faces.is_empty() {
            continue;
        }
        let vertices_m: Vec<Point3<f64>> = m
            .vertices
            .iter()
            .map(|v| {
                Point3::new(
                    f64::from(v[0]) * scale.x,
                    f64::from(v[1]) * scale.y,
                    f64::from(v[2]) * scale.z,
                )
            })
            .collect();
        if let Some(bad) = vertices_m
            .iter()
            .position(|v| !v.coords.iter().all(|c| c.is_finite()))
        {
            return Err(invalid(format!(
                "vertex {bad} of part {:?} is not finite",
                m.name
            )));
        }
        if let Some(bad) = m
            .faces
            .iter()
            .position(|f| f.iter().any(|&i| i as usize >= vertices_m.len()))
        {
            return Err(invalid(format!(
                "triangle {bad} of part {:?} names a vertex past the {} it has",
                m.name,
                vertices_m.len()
            )));
        }
        // A mirroring scale turns the triangles inside out: turn them back.
        let mirrored = scale.x * scale.y * scale.z < 0.0;
        let triangles = m
            .faces
            .iter()
            .map(|&[a, b, c]| if mirrored { [a, c, b] } else { [a, b, c] })
            .collect();
        mesh.parts.push(MeshPart {
            vertices_m,
            triangles,
            rgba: None,
        });
    }
    colour_parts(&scene, &mut mesh);
    if mesh.triangle_count() == 0 {
        return Err(invalid("the file holds no triangle".to_owned()));
    }
    Ok(mesh)
}

/// An OBJ's material library and other files a mesh names, read under the same limit.
fn read_companion(path: &Path) -> std::io::Result<Vec<u8>> {
    ar_io::input_file::read_bytes_limited(path, MAX_MESH_BYTES)
}

/// Each part's diffuse colour: mesh-loader gives materials in the order of the meshes that use
/// them when there is one per mesh (DAE, OBJ); otherwise the parts keep no colour.
fn colour_parts(scene: &mesh_loader::Scene, mesh: &mut TriMesh) {
    if scene.materials.len() != scene.meshes.len() {
        return;
    }
    let kept = scene
        .meshes
        .iter()
        .zip(&scene.materials)
        .filter(|(m, _)| !m.faces.is_empty());
    for (part, (_, material)) in mesh.parts.iter_mut().zip(kept) {
        part.rgba = material.color.diffuse.map(|c| c.map(f64::from));
    }
}

/// The convex hull of the mesh's vertices (parry), what a mesh collides as, as one part with
/// no colour; an error naming the mesh when the vertices span no volume (fewer than four
/// points off one plane).
pub fn convex_hull(mesh: &TriMesh, path: &Path, at: &Location) -> Result<MeshPart, ImportError> {
    let points: Vec<parry3d_f64::math::Vector> = mesh
        .vertices()
        .map(|p| parry3d_f64::math::Vector::new(p.x, p.y, p.z))
        .collect();
    let flat = |why: String| ImportError::Invalid {
        at: at.clone(),
        element: format!("mesh {}", path.display()),
        message: format!(
            "its vertices span no volume ({why}), so it has no convex hull to collide as"
        ),
    };
    let (vertices, triangles) = parry3d_f64::transformation::try_convex_hull(&points)
        .map_err(|e| flat(format!("{e:?}")))?;
    let hull = MeshPart {
        vertices_m: vertices
            .iter()
            .map(|v| Point3::new(v.x, v.y, v.z))
            .collect(),
        triangles,
        rgba: None,
    };
    // parry returns the hull of coplanar points as a flat one: it must enclose a volume.
    let mut solid = TriMesh { parts: vec![hull] };
    mass_properties(&solid).map_err(|_| flat("all on one plane".to_owned()))?;
    Ok(solid.parts.pop().expect("the hull's part"))
}

#[cfg(test)]
mod tests;
