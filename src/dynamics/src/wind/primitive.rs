//! The convex solids the wind sees: what a body's visual shape is, for faces and ray casts.
//!
//! Each primitive is centred on its body frame's origin; cylinder and capsule lie along the
//! body z axis (the scene's shape convention).

/// A convex solid in its body frame. Sizes in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Primitive {
    /// Box with half edge lengths along x, y, z.
    Cuboid {
        /// Half edge lengths (m).
        half_extents_m: [f64; 3],
    },
    /// Capped cylinder along z.
    Cylinder {
        /// Radius (m).
        radius_m: f64,
        /// Half the length along z (m).
        half_length_m: f64,
    },
    /// Sphere.
    Sphere {
        /// Radius (m).
        radius_m: f64,
    },
    /// Cylinder of `half_length_m` along z with hemispherical caps of `radius_m`.
    Capsule {
        /// Radius (m).
        radius_m: f64,
        /// Half the length of the cylindrical part (m).
        half_length_m: f64,
    },
}

impl Primitive {
    /// Radius of the smallest sphere about the body origin that holds the solid (m).
    pub fn bounding_radius_m(&self) -> f64 {
        match *self {
            Primitive::Cuboid {
                half_extents_m: [a, b, c],
            } => (a * a + b * b + c * c).sqrt(),
            Primitive::Cylinder {
                radius_m: r,
                half_length_m: h,
            } => (r * r + h * h).sqrt(),
            Primitive::Sphere { radius_m } => radius_m,
            Primitive::Capsule {
                radius_m: r,
                half_length_m: h,
            } => r + h,
        }
    }

    /// Exact surface area (m²).
    pub fn surface_area_m2(&self) -> f64 {
        use std::f64::consts::PI;
        match *self {
            Primitive::Cuboid {
                half_extents_m: [a, b, c],
            } => 8.0 * (a * b + b * c + c * a),
            Primitive::Cylinder {
                radius_m: r,
                half_length_m: h,
            } => 2.0 * PI * r * 2.0 * h + 2.0 * PI * r * r,
            Primitive::Sphere { radius_m: r } => 4.0 * PI * r * r,
            Primitive::Capsule {
                radius_m: r,
                half_length_m: h,
            } => 2.0 * PI * r * 2.0 * h + 4.0 * PI * r * r,
        }
    }
}

impl From<&crate::Shape> for Primitive {
    fn from(shape: &crate::Shape) -> Self {
        use crate::Shape;
        match *shape {
            Shape::Box { size_m } => Primitive::Cuboid {
                half_extents_m: size_m.map(|s| s / 2.0),
            },
            Shape::Cylinder { radius_m, length_m } => Primitive::Cylinder {
                radius_m,
                half_length_m: length_m / 2.0,
            },
            Shape::Sphere { radius_m } => Primitive::Sphere { radius_m },
            Shape::Capsule { radius_m, length_m } => Primitive::Capsule {
                radius_m,
                half_length_m: length_m / 2.0,
            },
            // An approximation: the wind blows on the box that holds the hull, centred on the
            // body frame's origin (its faces' areas and lever arms; a hull's own faces would
            // need a wind primitive of polygons).
            Shape::Convex { .. } => Primitive::Cuboid {
                half_extents_m: shape.centred_box_m().map(|s| s / 2.0),
            },
        }
    }
}
