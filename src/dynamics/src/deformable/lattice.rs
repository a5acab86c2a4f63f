//! The lattice generator: a box of nodes on a regular grid, joined along the grid axes, with
//! optional diagonal bracing (both diagonals of every cell face).
//!
//! Along each axis the box of size `size_m` from its minimum corner `origin_m` holds
//! n = round(size / spacing) + 1 nodes (one where the size is zero), so the actual spacing is
//! size / (n − 1) and the box's size is exact. Node (i, j, k) has the index
//! i + nₓ (j + n_y k). Rest lengths are the initial distances.

use nalgebra::Vector3;

use super::Network;

/// Why a lattice cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LatticeError {
    /// Fewer than two nodes in all.
    #[error("the box holds a single node: make a size at least as large as the spacing")]
    SingleNode,
    /// Too many nodes.
    #[error("{0} nodes, over the limit of {MAX_NODES}")]
    TooMany(usize),
}

/// The most nodes a lattice may have.
pub const MAX_NODES: usize = 100_000;

/// A face of the lattice's box: an axis (0 x, 1 y, 2 z) and its minimum or maximum side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face {
    /// 0, 1 or 2.
    pub axis: usize,
    /// The maximum side (true) or the minimum side (false).
    pub max_side: bool,
}

impl Face {
    /// Parses `x-`, `x+`, `y-`, `y+`, `z-`, `z+`.
    pub fn parse(s: &str) -> Option<Face> {
        let mut c = s.chars();
        let axis = match c.next()? {
            'x' => 0,
            'y' => 1,
            'z' => 2,
            _ => return None,
        };
        let max_side = match c.next()? {
            '+' => true,
            '-' => false,
            _ => return None,
        };
        c.next().is_none().then_some(Face { axis, max_side })
    }
}

/// The node counts along x, y, z for a box and a spacing (spacing > 0, sizes ≥ 0).
pub fn node_counts(size_m: Vector3<f64>, spacing_m: f64) -> [usize; 3] {
    // Saturating: a size of 1e300 over a spacing of 1e-300 is usize::MAX nodes, refused as
    // too many, not an overflow.
    size_m
        .map(|s| ((s / spacing_m).round() as usize).saturating_add(1))
        .into()
}

/// A lattice filling the box from `origin_m` of `size_m`, with nodes about `spacing_m`
/// apart, braced or not; also returns the nodes on `clamp` (if given), in index order.
pub fn lattice(
    origin_m: Vector3<f64>,
    size_m: Vector3<f64>,
    spacing_m: f64,
    braced: bool,
    clamp: Option<Face>,
) -> Result<(Network, Vec<usize>), LatticeError> {
    let n = node_counts(size_m, spacing_m);
    let total = n[0].saturating_mul(n[1]).saturating_mul(n[2]);
    if total < 2 {
        return Err(LatticeError::SingleNode);
    }
    if total > MAX_NODES {
        return Err(LatticeError::TooMany(total));
    }
    let step = |a: usize| {
        if n[a] > 1 {
            size_m[a] / (n[a] - 1) as f64
        } else {
            0.0
        }
    };
    let index = |ijk: [usize; 3]| ijk[0] + n[0] * (ijk[1] + n[1] * ijk[2]);
    let mut net = Network::default();
    let mut clamped = Vec::new();
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let ijk = [i, j, k];
                net.nodes_in_world_m.push(
                    origin_m
                        + Vector3::new(i as f64 * step(0), j as f64 * step(1), k as f64 * step(2)),
                );
                if let Some(f) = clamp {
                    let side = if f.max_side { n[f.axis] - 1 } else { 0 };
                    if ijk[f.axis] == side {
                        clamped.push(index(ijk));
                    }
                }
            }
        }
    }
    let shifted = |ijk: [usize; 3], a: usize| {
        let mut s = ijk;
        s[a] += 1;
        s
    };
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let ijk = [i, j, k];
                for a in 0..3 {
                    if ijk[a] + 1 < n[a] {
                        net.connect(index(ijk), index(shifted(ijk, a)));
                    }
                }
                if !braced {
                    continue;
                }
                for (a, b) in [(0, 1), (0, 2), (1, 2)] {
                    if ijk[a] + 1 < n[a] && ijk[b] + 1 < n[b] {
                        let (p_a, p_b) = (shifted(ijk, a), shifted(ijk, b));
                        net.connect(index(ijk), index(shifted(p_a, b)));
                        net.connect(index(p_a), index(p_b));
                    }
                }
            }
        }
    }
    Ok((net, clamped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_braced_cube_cell_has_twelve_edges_and_twelve_face_diagonals() {
        let (net, clamped) = lattice(
            Vector3::zeros(),
            Vector3::repeat(0.1),
            0.1,
            true,
            Face::parse("x-"),
        )
        .unwrap();
        assert_eq!(net.nodes_in_world_m.len(), 8);
        assert_eq!(net.connections.len(), 24);
        let diagonals = net
            .connections
            .iter()
            .filter(|c| (c.rest_length_m - 0.1 * 2f64.sqrt()).abs() < 1e-12)
            .count();
        let lengths: Vec<_> = net
            .connections
            .iter()
            .map(|c| (c.node1, c.node2, c.rest_length_m))
            .collect();
        assert_eq!(diagonals, 12, "{lengths:?}");
        assert_eq!(clamped, vec![0, 2, 4, 6]);
    }

    #[test]
    fn counts_round_the_spacing_and_keep_the_size() {
        let (net, _) = lattice(
            Vector3::zeros(),
            Vector3::new(0.3, 0.0, 0.1),
            0.099,
            false,
            None,
        )
        .unwrap();
        assert_eq!(node_counts(Vector3::new(0.3, 0.0, 0.1), 0.099), [4, 1, 2]);
        assert_eq!(net.nodes_in_world_m.len(), 8);
        assert!((net.nodes_in_world_m[7] - Vector3::new(0.3, 0.0, 0.1)).norm() < 1e-15);
        // 3 + 3 along x, 4 along z.
        assert_eq!(net.connections.len(), 10);
        assert_eq!(Face::parse("q+"), None);
        assert_eq!(Face::parse("z+-"), None);
    }
}
