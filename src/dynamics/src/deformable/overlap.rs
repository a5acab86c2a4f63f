//! Elements of one deformable body that overlap at rest.
//!
//! Connected elements never collide (see the module above). Elements closer than a diameter
//! that are not connected (on a fine cloth of thick elements, the second neighbours along
//! each grid line) would start in contact with each other: the contact stage would push
//! them apart at the first step, stretching the sheet and feeding the contacts with the
//! spring energy until the sheet flies apart. A sheet of elements thicker than their spacing
//! is a thick sheet, not one that must resolve contact with itself at that scale: such pairs
//! never collide either, as MuJoCo and Box2D exclude bodies that start interpenetrated by
//! construction. Pairs found with a uniform grid of cells one diameter wide, so the work is
//! linear in the elements.

use std::collections::HashMap;

use nalgebra::Vector3;

/// At most this many overlapping pairs per element (on average) are excluded: more means the
/// radius is far larger than the spacing, and the table is refused instead.
pub const MAX_OVERLAPS_PER_ELEMENT: usize = 64;

/// The pairs `(i, j)`, `i < j`, of nodes closer than `2 radius_m`, sorted; `None` when there
/// are more than [`MAX_OVERLAPS_PER_ELEMENT`] per node on average (the search stops there).
pub fn overlapping_pairs(
    nodes_in_world_m: &[Vector3<f64>],
    radius_m: f64,
) -> Option<Vec<(usize, usize)>> {
    let diameter = 2.0 * radius_m;
    let limit = MAX_OVERLAPS_PER_ELEMENT.saturating_mul(nodes_in_world_m.len());
    let cell_of = |p: &Vector3<f64>| p.map(|x| (x / diameter).floor() as i64);
    let mut cells: HashMap<Vector3<i64>, Vec<usize>> = HashMap::new();
    for (n, p) in nodes_in_world_m.iter().enumerate() {
        cells.entry(cell_of(p)).or_default().push(n);
    }
    let mut pairs = Vec::new();
    for (i, p) in nodes_in_world_m.iter().enumerate() {
        let c = cell_of(p);
        for offset in neighbour_offsets() {
            let Some(others) = cells.get(&(c + offset)) else {
                continue;
            };
            for &j in others.iter().filter(|&&j| j > i) {
                if (nodes_in_world_m[j] - p).norm() < diameter {
                    pairs.push((i, j));
                    if pairs.len() > limit {
                        return None;
                    }
                }
            }
        }
    }
    pairs.sort_unstable();
    Some(pairs)
}

/// The 27 cells around and including a cell.
fn neighbour_offsets() -> impl Iterator<Item = Vector3<i64>> {
    (-1..=1).flat_map(|x| (-1..=1).flat_map(move |y| (-1..=1).map(move |z| Vector3::new(x, y, z))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the all-pairs count on a 12 × 9 grid of spacing 2.4 mm with 3 mm elements: along
    /// a grid line the first and second neighbours overlap (2.4, 4.8 < 6 mm), the third does not.
    #[test]
    fn finds_the_pairs_all_pairs_finds() {
        let nodes: Vec<_> = (0..12)
            .flat_map(|i| (0..9).map(move |j| Vector3::new(i as f64, j as f64, 0.0) * 0.0024))
            .collect();
        let mut expected = Vec::new();
        for i in 0..nodes.len() {
            for j in i + 1..nodes.len() {
                if (nodes[j] - nodes[i]).norm() < 0.006 {
                    expected.push((i, j));
                }
            }
        }
        let pairs = overlapping_pairs(&nodes, 0.003).unwrap();
        assert_eq!(pairs, expected);
        // Node 0's partners: (0,1), (0,2), (1,0), (1,1), (1,2), (2,0), (2,1): 7 of them.
        assert_eq!(pairs.iter().filter(|p| p.0 == 0).count(), 7);
        assert!(overlapping_pairs(&nodes, 0.001).unwrap().is_empty());
    }

    #[test]
    fn a_radius_far_larger_than_the_spacing_is_given_up() {
        let nodes: Vec<_> = (0..200)
            .map(|i| Vector3::new(i as f64 * 1e-3, 0.0, 0.0))
            .collect();
        assert!(overlapping_pairs(&nodes, 0.1).is_none());
    }
}
