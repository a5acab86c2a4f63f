//! The rope generator: `elements` nodes at equal arc length along a path between two end
//! points, each joined to the next.
//!
//! A rope as long as the distance of its ends lies on the straight segment. A longer rope
//! (`length_m`) starts as a symmetric V: two straight legs of length L/2 from the ends to a
//! vertex on the chord's perpendicular bisector, displaced from the chord's midpoint by
//! √((L/2)² − (D/2)²) along `sag_direction` (gravity's part perpendicular to the chord, in
//! the scene). Every connection has the rest length L/(n − 1), the arc length between
//! neighbours, so a rope released from the V sags to its hanging shape.

use nalgebra::Vector3;

use super::{Connection, Network};

/// The most elements a rope may have (as many as a cloth's or a lattice's nodes), checked
/// before anything is allocated: `elements = 1000000000` asked for 24 GB and aborted.
pub const MAX_ELEMENTS: usize = 100_000;

/// Why a rope cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RopeError {
    /// Fewer than two elements.
    #[error("a rope needs at least 2 elements, got {0}")]
    TooFewElements(usize),
    /// More than [`MAX_ELEMENTS`] elements.
    #[error("{0} elements, over the limit of {MAX_ELEMENTS}")]
    TooMany(usize),
    /// Ends that coincide.
    #[error("the two ends coincide")]
    SameEnds,
    /// A rope shorter than the distance between its ends.
    #[error("length {length_m} m is shorter than the distance {distance_m} m between the ends")]
    TooShort {
        /// The rope's length (m).
        length_m: f64,
        /// The ends' distance (m).
        distance_m: f64,
    },
}

/// A rope of `elements` nodes from `end1` to `end2` of length `length_m` (the ends' distance
/// if `None`), sagging along `sag_direction` (any vector not parallel to the chord; its part
/// perpendicular to the chord is used, any perpendicular if it has none).
pub fn rope(
    end1_in_world_m: Vector3<f64>,
    end2_in_world_m: Vector3<f64>,
    elements: usize,
    length_m: Option<f64>,
    sag_direction: Vector3<f64>,
) -> Result<Network, RopeError> {
    if elements < 2 {
        return Err(RopeError::TooFewElements(elements));
    }
    if elements > MAX_ELEMENTS {
        return Err(RopeError::TooMany(elements));
    }
    let chord = end2_in_world_m - end1_in_world_m;
    let distance_m = chord.norm();
    if distance_m < 1e-12 {
        return Err(RopeError::SameEnds);
    }
    let length_m = length_m.unwrap_or(distance_m);
    if length_m < distance_m {
        return Err(RopeError::TooShort {
            length_m,
            distance_m,
        });
    }
    let along = chord / distance_m;
    let mut across = sag_direction - along * along.dot(&sag_direction);
    if across.norm() < 1e-9 * sag_direction.norm().max(1.0) {
        let helper = if along.x.abs() < 0.6 {
            Vector3::x()
        } else {
            Vector3::y()
        };
        across = helper - along * along.dot(&helper);
    }
    let depth_m = (0.25 * length_m * length_m - 0.25 * distance_m * distance_m)
        .max(0.0)
        .sqrt();
    let vertex = (end1_in_world_m + end2_in_world_m) * 0.5 + across.normalize() * depth_m;
    let half = 0.5 * length_m;
    let segment_m = length_m / (elements - 1) as f64;
    let nodes_in_world_m = (0..elements)
        .map(|i| {
            let s = i as f64 * segment_m;
            if i + 1 == elements {
                end2_in_world_m
            } else if s <= half {
                end1_in_world_m + (vertex - end1_in_world_m) * (s / half)
            } else {
                vertex + (end2_in_world_m - vertex) * ((s - half) / half)
            }
        })
        .collect();
    let connections = (0..elements - 1)
        .map(|i| Connection {
            node1: i,
            node2: i + 1,
            rest_length_m: segment_m,
        })
        .collect();
    Ok(Network {
        nodes_in_world_m,
        connections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_longer_rope_starts_as_a_v_with_its_length_and_equal_spacing() {
        let (a, b) = (Vector3::new(0.0, 0.0, 1.0), Vector3::new(0.6, 0.0, 1.0));
        let net = rope(a, b, 11, Some(1.0), Vector3::new(0.0, 0.0, -9.81)).unwrap();
        assert_eq!(net.nodes_in_world_m[0], a);
        assert_eq!(net.nodes_in_world_m[10], b);
        // The vertex is 0.4 m below the chord (legs of 0.5 m over half a chord of 0.3 m).
        assert!((net.nodes_in_world_m[5] - Vector3::new(0.3, 0.0, 0.6)).norm() < 1e-12);
        for c in &net.connections {
            assert!((c.rest_length_m - 0.1).abs() < 1e-15);
            let d = net.nodes_in_world_m[c.node2] - net.nodes_in_world_m[c.node1];
            assert!((d.norm() - 0.1).abs() < 1e-12, "{}", d.norm());
        }
    }

    #[test]
    fn a_rope_shorter_than_its_ends_distance_is_refused() {
        let e = rope(Vector3::zeros(), Vector3::x(), 3, Some(0.5), -Vector3::z());
        assert!(matches!(e, Err(RopeError::TooShort { .. })));
        assert_eq!(
            rope(Vector3::zeros(), Vector3::x(), 1, None, -Vector3::z()),
            Err(RopeError::TooFewElements(1))
        );
    }
}
