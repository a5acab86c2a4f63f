//! Visual shapes of bodies: what the compositor draws and what the wind uses for faces.
//!
//! Shapes have no role in the dynamics (mass and inertia are given separately in the scene),
//! so a body may look like a capsule while its inertia is that of a thin rod.

use serde::Deserialize;

/// A body's visual shape, centred on the body frame's origin. Elongated shapes (cylinder,
/// capsule) lie along the body frame's z axis.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
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
        }
    }
}
