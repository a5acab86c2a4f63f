//! Convex colliders: the hull of a body's `kind = "convex"` points as parry's
//! `ConvexPolyhedron`, built once when the scene's contact model is made (shared by `Arc`, so
//! that cloning a collider does not copy it), and the checks that scene validation runs first.

use std::sync::Arc;

use parry3d_f64::math::Vector;
use parry3d_f64::shape::ConvexPolyhedron;

/// Why a convex's points make no hull: the field (below `shape.`) and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct HullError {
    /// `points_m` or `points_m[i]`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// The fewest points of a convex (a tetrahedron).
pub const MIN_POINTS: usize = 4;

/// The most points of a convex: hulls are built at load, and a mesh of millions of vertices
/// would make loading slow for no gain in contact (its hull has far fewer).
pub const MAX_POINTS: usize = 100_000;

/// Points closer than this fraction of the points' extent to the plane of the others are
/// taken as in that plane (a flat hull has no inside: parry cannot collide it reliably).
const FLAT_FRACTION: f64 = 1.0e-9;

/// The hull of `points_m` (body frame, m), or why there is none: fewer than [`MIN_POINTS`] or
/// more than [`MAX_POINTS`] points, a value that is not finite, all points in one plane (or
/// on one line, or one point), or a hull parry cannot make.
pub fn hull(points_m: &[[f64; 3]]) -> Result<Arc<ConvexPolyhedron>, HullError> {
    let err = |field: String, message: String| HullError { field, message };
    let n = points_m.len();
    if !(MIN_POINTS..=MAX_POINTS).contains(&n) {
        return Err(err(
            "points_m".into(),
            format!("a convex needs {MIN_POINTS} to {MAX_POINTS} points, got {n}"),
        ));
    }
    if let Some(i) = points_m
        .iter()
        .position(|p| p.iter().any(|x| !x.is_finite()))
    {
        return Err(err(
            format!("points_m[{i}]"),
            format!("must be finite, got {:?}", points_m[i]),
        ));
    }
    let points: Vec<Vector> = points_m
        .iter()
        .map(|p| Vector::new(p[0], p[1], p[2]))
        .collect();
    if flat(&points) {
        return Err(err(
            "points_m".into(),
            "the points are all in one plane (a convex needs volume: at least 4 points not \
             in one plane)"
                .into(),
        ));
    }
    ConvexPolyhedron::from_convex_hull(&points)
        .map(Arc::new)
        .ok_or_else(|| {
            err(
                "points_m".into(),
                "parry could not make a convex hull of these points (nearly flat?)".into(),
            )
        })
}

/// Whether the points lie in one plane (within [`FLAT_FRACTION`] of their extent): the
/// largest triangle of a far pair and the point farthest from their line, then the point
/// farthest from its plane.
fn flat(points: &[Vector]) -> bool {
    let a = points[0];
    let far = |from: &dyn Fn(Vector) -> f64| {
        points
            .iter()
            .copied()
            .max_by(|p, q| from(*p).total_cmp(&from(*q)))
            .unwrap_or(a)
    };
    let b = far(&|p| (p - a).length_squared());
    let c = far(&|p| (p - b).length_squared());
    let extent = (c - b).length();
    if extent == 0.0 {
        return true;
    }
    let u = (c - b) / extent;
    let d = far(&|p| (p - b).cross(u).length_squared());
    let normal = (c - b).cross(d - b);
    if normal.length() <= FLAT_FRACTION * extent * extent {
        return true;
    }
    let n = normal.normalize();
    let off_plane = points
        .iter()
        .map(|p| (*p - b).dot(n).abs())
        .fold(0.0, f64::max);
    off_plane <= FLAT_FRACTION * extent
}

/// Radius of a sphere about the body frame's origin that holds the hull.
pub fn bounding_radius_m(hull: &ConvexPolyhedron) -> f64 {
    hull.points().iter().map(|p| p.length()).fold(0.0, f64::max)
}

/// The hull grown by at least `margin_m` on every side: the hull of every vertex moved by
/// ±`margin_m` along each axis (its Minkowski sum with a cube, as a box keeps its square
/// corners). `None` if parry makes no hull of those (it made one of fewer points).
pub fn inflated(hull: &ConvexPolyhedron, margin_m: f64) -> Option<Arc<ConvexPolyhedron>> {
    let mut grown = Vec::with_capacity(hull.points().len() * 8);
    for p in hull.points() {
        for corner in 0..8 {
            let sign = |bit: usize| if corner & bit == 0 { -1.0 } else { 1.0 };
            grown.push(*p + Vector::new(sign(1), sign(2), sign(4)) * margin_m);
        }
    }
    ConvexPolyhedron::from_convex_hull(&grown).map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube() -> Vec<[f64; 3]> {
        (0..8)
            .map(|k| [k & 1, k & 2, k & 4].map(|b| if b == 0 { -0.5 } else { 0.5 }))
            .collect()
    }

    #[test]
    fn a_cube_makes_a_hull_of_its_corners() {
        let h = hull(&cube()).unwrap();
        assert_eq!(h.points().len(), 8);
        assert!((bounding_radius_m(&h) - 0.75f64.sqrt()).abs() < 1e-15);
        let big = inflated(&h, 0.1).unwrap();
        assert!((bounding_radius_m(&big) - (3.0f64 * 0.36).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn flat_and_degenerate_points_are_refused() {
        let square = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
        ];
        assert_eq!(hull(&square).unwrap_err().field, "points_m");
        let line: Vec<[f64; 3]> = (0..5).map(|i| [i as f64, 0.0, 0.0]).collect();
        assert!(hull(&line).unwrap_err().message.contains("one plane"));
        assert!(hull(&[[0.0; 3]; 6])
            .unwrap_err()
            .message
            .contains("one plane"));
        let mut nan = cube();
        nan[5][1] = f64::NAN;
        assert_eq!(hull(&nan).unwrap_err().field, "points_m[5]");
        assert!(hull(&cube()[..3]).unwrap_err().message.contains("got 3"));
    }
}
