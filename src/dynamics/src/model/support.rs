//! Supports: the stands, posts, beams, base plates, nails and threads a mechanism hangs from or
//! stands on, as a scene file draws them (`[[support]]` tables). They are visual only: the
//! solver never sees them (a body is held by its joints to the ground, whatever is drawn), so
//! adding or moving a support cannot change a simulation.

use nalgebra::{Point3, Vector3};

/// The geometry of one support, world (marker) frame, metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SupportShape {
    /// A round bar between two points: a post, a beam, a nail.
    Rod {
        /// One end.
        from_in_world: Point3<f64>,
        /// The other end.
        to_in_world: Point3<f64>,
        /// Radius, metres.
        radius_m: f64,
    },
    /// An axis-aligned box: a base plate, a rail, a block.
    Box {
        /// Its centre.
        center_in_world: Point3<f64>,
        /// Full extents along world x, y, z.
        size_m: Vector3<f64>,
    },
    /// A thin line between two points (drawn a few pixels wide): a thread, a ceiling line.
    Line {
        /// One end.
        from_in_world: Point3<f64>,
        /// The other end.
        to_in_world: Point3<f64>,
    },
}

/// One named support.
#[derive(Debug, Clone, PartialEq)]
pub struct Support {
    /// Its name in the scene file.
    pub name: String,
    /// Its geometry.
    pub shape: SupportShape,
}

impl SupportShape {
    /// The lowest world z the support reaches, metres.
    pub fn lowest_z_m(&self) -> f64 {
        match *self {
            SupportShape::Rod {
                from_in_world,
                to_in_world,
                radius_m,
            } => {
                let axis = (to_in_world - from_in_world).normalize();
                // The circular end faces reach down by r·sin(angle between axis and z).
                from_in_world.z.min(to_in_world.z) - radius_m * (1.0 - axis.z * axis.z).sqrt()
            }
            SupportShape::Box {
                center_in_world,
                size_m,
            } => center_in_world.z - 0.5 * size_m.z,
            SupportShape::Line {
                from_in_world,
                to_in_world,
            } => from_in_world.z.min(to_in_world.z),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rod_lying_on_the_desk_reaches_its_radius_below_its_axis() {
        let rod = SupportShape::Rod {
            from_in_world: Point3::new(0.0, 0.0, 0.005),
            to_in_world: Point3::new(0.3, 0.0, 0.005),
            radius_m: 0.005,
        };
        assert!(rod.lowest_z_m().abs() < 1e-15);
        let post = SupportShape::Rod {
            from_in_world: Point3::new(0.0, 0.0, 0.0),
            to_in_world: Point3::new(0.0, 0.0, 0.6),
            radius_m: 0.01,
        };
        assert_eq!(post.lowest_z_m(), 0.0);
        let plate = SupportShape::Box {
            center_in_world: Point3::new(0.0, 0.0, 0.003),
            size_m: Vector3::new(0.1, 0.1, 0.006),
        };
        assert!(plate.lowest_z_m().abs() < 1e-15);
        let thread = SupportShape::Line {
            from_in_world: Point3::new(0.0, 0.0, 0.7),
            to_in_world: Point3::new(0.0, 0.0, 0.62),
        };
        assert_eq!(thread.lowest_z_m(), 0.62);
    }
}
