//! Shapes of bodies: what the compositor draws, what the wind uses for faces and what
//! collides (see `crate::contact`).
//!
//! Shapes never set mass or inertia (those are given separately in the scene), so a body may
//! look like a capsule while its inertia is that of a thin rod.

use std::sync::Arc;

use serde::{Deserialize, Deserializer};

/// A body's shape, centred on the body frame's origin (a convex's points are anywhere in the
/// body frame). Elongated shapes (cylinder, capsule) lie along the body frame's z axis.
///
/// Not `Copy` since the convex holds its points (shared: cloning one is cheap).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Shape {
    /// A box with the given full edge lengths along the body x, y and z axes (m).
    Box {
        /// Full edge lengths (m).
        #[serde(deserialize_with = "crate::scene::array3::exact")]
        size_m: [f64; 3],
    },
    /// A cylinder along the body z axis.
    Cylinder {
        /// Radius (m).
        radius_m: f64,
        /// Full length along z (m).
        length_m: f64,
    },
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius_m: f64,
    },
    /// A capsule along the body z axis: a cylinder of `length_m` with hemispherical caps.
    Capsule {
        /// Radius (m).
        radius_m: f64,
        /// Length of the cylindrical part along z, caps excluded (m).
        length_m: f64,
    },
    /// The convex hull of points given in the body frame (the centre of mass frame), e.g. an
    /// imported collision mesh. Checked by [`Shape::convex_problem`] at scene validation.
    Convex {
        /// The points (m, body frame); at least 4, not all in one plane.
        #[serde(deserialize_with = "points")]
        points_m: Arc<[[f64; 3]]>,
    },
}

/// `Arc<[[f64; 3]]>` from a TOML array of 3-number arrays.
fn points<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<[[f64; 3]]>, D::Error> {
    let v = Vec::<Vec<f64>>::deserialize(d)?;
    v.into_iter()
        .map(|p| {
            <[f64; 3]>::try_from(p.as_slice()).map_err(|_| {
                serde::de::Error::custom(format!(
                    "each point is an array of exactly 3 numbers, found {}",
                    p.len()
                ))
            })
        })
        .collect()
}

impl Shape {
    /// The sizes that must be positive, with their field names, for validation.
    pub fn sizes(&self) -> Vec<(&'static str, f64)> {
        match *self {
            Shape::Box { size_m } => vec![
                ("size_m[0]", size_m[0]),
                ("size_m[1]", size_m[1]),
                ("size_m[2]", size_m[2]),
            ],
            Shape::Cylinder { radius_m, length_m } | Shape::Capsule { radius_m, length_m } => {
                vec![("radius_m", radius_m), ("length_m", length_m)]
            }
            Shape::Sphere { radius_m } => vec![("radius_m", radius_m)],
            Shape::Convex { .. } => Vec::new(),
        }
    }

    /// What is wrong with the shape, as (field below `shape.`, message), if anything: a size
    /// that is not positive, or a convex without a hull (see
    /// [`crate::contact::convex::hull`]).
    pub fn problem(&self) -> Option<(String, String)> {
        if let Shape::Convex { points_m } = self {
            return crate::contact::convex::hull(points_m)
                .err()
                .map(|e| (e.field, e.message));
        }
        self.sizes()
            .into_iter()
            .find(|(_, size)| !(*size > 0.0 && size.is_finite()))
            .map(|(field, size)| (field.to_owned(), format!("must be positive, got {size}")))
    }

    /// The box that holds the shape, centred on the body frame's origin (full edge lengths,
    /// m): for a convex, twice the largest |coordinate| of its points along each axis.
    pub fn centred_box_m(&self) -> [f64; 3] {
        match self {
            Shape::Box { size_m } => *size_m,
            Shape::Cylinder { radius_m, length_m } => [2.0 * radius_m, 2.0 * radius_m, *length_m],
            Shape::Sphere { radius_m } => [2.0 * radius_m; 3],
            Shape::Capsule { radius_m, length_m } => {
                [2.0 * radius_m, 2.0 * radius_m, length_m + 2.0 * radius_m]
            }
            Shape::Convex { points_m } => {
                let mut half = [0.0f64; 3];
                for p in points_m.iter() {
                    for k in 0..3 {
                        half[k] = half[k].max(p[k].abs());
                    }
                }
                half.map(|h| 2.0 * h)
            }
        }
    }
}
