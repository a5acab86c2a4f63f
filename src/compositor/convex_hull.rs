//! A convex body shape (`kind = "convex"`) drawn as its hull: the hull's triangles made into a
//! [`SharedMesh`] once per shape and kept, so every frame's overlay shares one mesh (uploaded
//! once) however often the body is drawn.

use super::mesh::{MeshGeometry, SharedMesh};
use ar_import::mesh::{MeshPart, TriMesh};
use ar_import::Location;
use nalgebra::Point3;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The shared points of a convex shape (every snapshot's copy of the shape holds the same).
type Points = Arc<[[f64; 3]]>;

/// Hull meshes by their points' address, with the points kept alive so that the address
/// stays theirs; entries whose shape no scene holds any more go when a new one comes.
static HULLS: Mutex<Vec<(Points, SharedMesh)>> = Mutex::new(Vec::new());

/// The drawn hull of the convex shape with these points, built the first time it is asked
/// for; `None` when the points span no volume (a scene's loader refuses such a shape first).
pub fn hull_mesh(points_m: &Points) -> Option<SharedMesh> {
    let mut hulls = HULLS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, mesh)) = hulls.iter().find(|(p, _)| Arc::ptr_eq(p, points_m)) {
        return Some(mesh.clone());
    }
    hulls.retain(|(p, _)| Arc::strong_count(p) > 1);
    let mesh = SharedMesh::new(build(points_m)?);
    hulls.push((points_m.clone(), mesh.clone()));
    Some(mesh)
}

fn build(points_m: &[[f64; 3]]) -> Option<MeshGeometry> {
    let path = Path::new("convex shape");
    let points = TriMesh {
        parts: vec![MeshPart {
            vertices_m: points_m.iter().map(|&p| Point3::from(p)).collect(),
            ..MeshPart::default()
        }],
    };
    let at = Location {
        file: path.to_owned(),
        line: 0,
    };
    let hull = ar_import::mesh::convex_hull(&points, path, &at).ok()?;
    let solid = TriMesh {
        parts: vec![hull.clone()],
    };
    Some(MeshGeometry::new(path, &solid, Some(&hull)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cube's 8 corners (and a point inside, not on the hull) make 12 triangles spanning
    /// the cube, built once: the same shape gets the same mesh, another shape its own.
    #[test]
    fn a_cube_of_points_is_drawn_as_its_twelve_triangles_once() {
        let mut corners: Vec<[f64; 3]> = (0..8)
            .map(|i| [i & 1, (i >> 1) & 1, (i >> 2) & 1].map(|b| 0.02 * b as f64 - 0.01))
            .collect();
        corners.push([0.0, 0.001, 0.0]);
        let points: Points = corners.into();
        let mesh = hull_mesh(&points).expect("a cube has a hull");
        assert_eq!(mesh.0.triangle_count(), 12);
        assert_eq!(mesh.0.min_m, Point3::new(-0.01, -0.01, -0.01));
        assert_eq!(mesh.0.max_m, Point3::new(0.01, 0.01, 0.01));
        assert_eq!(hull_mesh(&points.clone()), Some(mesh.clone()));
        let other: Points = points.iter().map(|p| p.map(|x| 2.0 * x)).collect();
        assert_ne!(hull_mesh(&other), Some(mesh));
        let flat: Points = vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]].into();
        assert_eq!(hull_mesh(&flat), None);
    }
}
