//! Mesh visuals as the compositor draws them: a mesh file's triangles (read once, when the
//! scene is loaded, by [`ar_import::mesh::load`]) turned into f32 vertex, normal and index
//! buffers, one per part with the part's colour from the file's material, and the points the
//! shadow and the view framing need (the convex hull's vertices, the bounding box).
//!
//! A [`SharedMesh`] is shared by every frame's overlay (an `Arc`), and compares by identity:
//! the scene graph keys its nodes on it, so a mesh is uploaded to the GPU once per scene, not
//! once per frame, and comparing two overlays never walks the triangles.

use ar_import::mesh::{MeshPart, TriMesh};
use ar_import::Location;
use nalgebra::{Point3, Vector3};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One part of a drawn mesh: its own vertex buffer and colour.
#[derive(Clone, Debug, Default)]
pub struct MeshGeometryPart {
    /// Vertex positions in the mesh frame (m, after the visual's scale).
    pub positions_m: Vec<[f32; 3]>,
    /// Unit vertex normals: the area-weighted mean of the triangles that share the vertex
    /// (those meeting within [`CREASE_ANGLE_RAD`] of each other; see `drawn_part`).
    pub normals: Vec<[f32; 3]>,
    /// Triangles as indices into `positions_m`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
    /// The file material's diffuse colour (RGBA, 0..1), when it gives one.
    pub rgba: Option<[f32; 4]>,
}

/// A mesh visual's geometry, ready to draw (see the module docs).
#[derive(Clone, Default)]
pub struct MeshGeometry {
    /// The file it was read from (for messages and `Debug`).
    pub path: PathBuf,
    /// The parts, each drawn in its colour.
    pub parts: Vec<MeshGeometryPart>,
    /// Points whose convex hull is the mesh's (the 3-D convex hull's vertices; every vertex
    /// when the mesh is flat): what its shadow on the desk is the projection of.
    pub hull_points_m: Vec<Point3<f64>>,
    /// Lower corner of the bounding box, mesh frame (m).
    pub min_m: Point3<f64>,
    /// Upper corner of the bounding box, mesh frame (m).
    pub max_m: Point3<f64>,
}

impl fmt::Debug for MeshGeometry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MeshGeometry")
            .field("path", &self.path)
            .field("parts", &self.parts.len())
            .field("triangles", &self.triangle_count())
            .finish()
    }
}

/// Why a mesh visual could not be loaded (the message names the path and the cause).
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct MeshLoadError(#[from] ar_import::ImportError);

impl MeshGeometry {
    /// Reads the mesh file at `path` (STL, OBJ or DAE), scaled per axis by `scale`.
    pub fn load(path: &Path, scale: [f64; 3]) -> Result<Self, MeshLoadError> {
        let at = Location {
            file: path.to_owned(),
            line: 0,
        };
        let mesh = ar_import::mesh::load(path, &Vector3::from(scale), &at)?;
        let hull = ar_import::mesh::convex_hull(&mesh, path, &at).ok();
        Ok(Self::new(path, &mesh, hull.as_ref()))
    }

    /// The drawn geometry of `mesh`, read from `path`; `hull` is its convex hull when it has
    /// one (every vertex stands in for it otherwise).
    pub fn new(path: &Path, mesh: &TriMesh, hull: Option<&MeshPart>) -> Self {
        let parts: Vec<MeshGeometryPart> = mesh.parts.iter().map(drawn_part).collect();
        let hull_points_m: Vec<Point3<f64>> = match hull {
            Some(h) => h.vertices_m.clone(),
            None => mesh.vertices().copied().collect(),
        };
        let mut min_m = Point3::origin();
        let mut max_m = Point3::origin();
        if let Some(first) = hull_points_m.first() {
            min_m = *first;
            max_m = *first;
            for p in &hull_points_m {
                min_m = min_m.inf(p);
                max_m = max_m.sup(p);
            }
        }
        Self {
            path: path.to_owned(),
            parts,
            hull_points_m,
            min_m,
            max_m,
        }
    }

    /// How many triangles the parts hold together.
    pub fn triangle_count(&self) -> usize {
        self.parts.iter().map(|p| p.triangles.len()).sum()
    }
}

/// Where two triangles meeting at a vertex share its normal (a smooth surface) rather than
/// keep their own (an edge): at most this angle between them, 30° as in CAD viewers.
pub const CREASE_ANGLE_RAD: f64 = std::f64::consts::PI / 6.0;

/// A vertex being built: its position, the area-weighted sum of its triangles' normals, and
/// the first triangle's unit normal, which later triangles are compared with.
struct Corner {
    index: u32,
    normal_sum: Vector3<f64>,
    first_unit_normal: Vector3<f64>,
}

/// One part's f32 buffers. Corners at one position are welded into one vertex where their
/// triangles meet within [`CREASE_ANGLE_RAD`] (a curved surface shades smoothly) and kept
/// apart across sharper edges. Files often give each triangle its own three vertices (the
/// Panda's DAE meshes do): welding also draws them with about a third of the vertices.
fn drawn_part(part: &MeshPart) -> MeshGeometryPart {
    let cos_crease = CREASE_ANGLE_RAD.cos();
    let mut at_position: HashMap<[u64; 3], Vec<Corner>> = HashMap::new();
    let mut positions = Vec::new();
    let mut triangles = Vec::with_capacity(part.triangles.len());
    for tri in &part.triangles {
        let [pa, pb, pc] = tri.map(|i| part.vertices_m[i as usize]);
        // Twice the triangle's area along its normal: larger triangles weigh more.
        let area_normal = (pb - pa).cross(&(pc - pa));
        let unit = area_normal
            .try_normalize(1e-300)
            .unwrap_or_else(Vector3::zeros);
        let welded = tri.map(|i| {
            let p = part.vertices_m[i as usize];
            let corners = at_position
                .entry(p.coords.map(f64::to_bits).into())
                .or_default();
            let near = corners
                .iter_mut()
                .find(|c| c.first_unit_normal.dot(&unit) >= cos_crease);
            match near {
                Some(c) => {
                    c.normal_sum += area_normal;
                    c.index
                }
                None => {
                    let index = positions.len() as u32;
                    positions.push(p);
                    corners.push(Corner {
                        index,
                        normal_sum: area_normal,
                        first_unit_normal: unit,
                    });
                    index
                }
            }
        });
        triangles.push(welded);
    }
    let mut normals = vec![[0.0f32, 0.0, 1.0]; positions.len()];
    for c in at_position.values().flatten() {
        let n = c
            .normal_sum
            .try_normalize(1e-300)
            .unwrap_or_else(Vector3::z);
        normals[c.index as usize] = [n.x as f32, n.y as f32, n.z as f32];
    }
    MeshGeometryPart {
        positions_m: positions
            .iter()
            .map(|v| [v.x as f32, v.y as f32, v.z as f32])
            .collect(),
        normals,
        triangles,
        rgba: part.rgba.map(|c| c.map(|x| x as f32)),
    }
}

/// A mesh shared by every frame's overlay, equal only to itself (see the module docs).
#[derive(Clone, Debug)]
pub struct SharedMesh(pub Arc<MeshGeometry>);

impl SharedMesh {
    /// Shares `geometry`.
    pub fn new(geometry: MeshGeometry) -> Self {
        Self(Arc::new(geometry))
    }

    /// An id for this mesh, the same for every clone (the shared data's address).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

impl PartialEq for SharedMesh {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for SharedMesh {
    type Target = MeshGeometry;

    fn deref(&self) -> &MeshGeometry {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetrahedron() -> TriMesh {
        TriMesh {
            parts: vec![MeshPart {
                vertices_m: vec![
                    Point3::new(0.0, 0.0, 0.0),
                    Point3::new(1.0, 0.0, 0.0),
                    Point3::new(0.0, 1.0, 0.0),
                    Point3::new(0.0, 0.0, 1.0),
                ],
                triangles: vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]],
                rgba: Some([0.5, 0.25, 1.0, 1.0]),
            }],
        }
    }

    #[test]
    fn sharp_edges_keep_their_faces_normals_and_the_box_bounds_the_vertices() {
        let g = MeshGeometry::new(Path::new("t.obj"), &tetrahedron(), None);
        assert_eq!(g.triangle_count(), 4);
        assert_eq!(g.parts[0].rgba, Some([0.5, 0.25, 1.0, 1.0]));
        // Every edge is sharper than the crease: each face has its own three vertices, whose
        // normals are the face's, pointing out of the solid.
        let p = &g.parts[0];
        assert_eq!(p.positions_m.len(), 12);
        let outward = Vector3::repeat(1.0).normalize();
        let slanted = p.triangles[3].map(|i| Vector3::from(p.normals[i as usize].map(f64::from)));
        assert!(
            slanted.iter().all(|n| (n - outward).norm() < 1e-6),
            "{slanted:?}"
        );
        assert_eq!(g.min_m, Point3::origin());
        assert_eq!(g.max_m, Point3::new(1.0, 1.0, 1.0));
        assert_eq!(g.hull_points_m.len(), 4);
    }

    /// Two triangles folded by 10° along their shared edge, given with their own vertices each
    /// (as files do): welded into four vertices, the edge's two with the mean normal.
    #[test]
    fn a_shallow_fold_is_welded_and_shaded_smoothly() {
        let fold = 10f64.to_radians();
        let tip = Point3::new(1.0, fold.cos(), fold.sin());
        let vertices_m = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, -1.0, 0.0),
            Point3::new(0.0, 0.0, 0.0),
            tip,
            Point3::new(1.0, 0.0, 0.0),
        ];
        let mesh = TriMesh {
            parts: vec![MeshPart {
                vertices_m,
                triangles: vec![[0, 2, 1], [3, 5, 4]],
                rgba: None,
            }],
        };
        let g = MeshGeometry::new(Path::new("fold.stl"), &mesh, None);
        let p = &g.parts[0];
        assert_eq!(p.positions_m.len(), 4);
        assert_eq!(p.triangles[0][0], p.triangles[1][0], "the origin is shared");
        let n = Vector3::from(p.normals[p.triangles[0][0] as usize].map(f64::from));
        // Both faces have equal areas: the mean normal is halfway, 5° off +z.
        assert!((n.z - (0.5 * fold).cos()).abs() < 1e-6, "{n:?}");
    }

    #[test]
    fn shared_meshes_are_equal_only_to_their_clones() {
        let a = SharedMesh::new(MeshGeometry::new(Path::new("t"), &tetrahedron(), None));
        let b = SharedMesh::new(MeshGeometry::new(Path::new("t"), &tetrahedron(), None));
        assert_eq!(a, a.clone());
        assert_eq!(a.id(), a.clone().id());
        assert_ne!(a, b);
    }
}
