//! The cloth generator: a rectangular grid of nodes spanned by two edge vectors from a
//! corner, joined by structural connections along both grid directions, shear connections
//! across the cells and, optionally, bend connections that skip one node (Provot's three
//! kinds).
//!
//! Node (i, j), i < n₁ along `edge1`, j < n₂ along `edge2`, has the index i + n₁ j and lies
//! at corner + edge1 · i/(n₁ − 1) + edge2 · j/(n₂ − 1). Rest lengths are the initial
//! distances, so a cloth starts unstressed. One shear diagonal per cell, (i, j)–(i+1, j+1),
//! is the default: with the structural connections it gives the cloth its in-plane shear
//! stiffness at the fewest connections (a 32 × 32 cloth has 1984 + 961); both diagonals make
//! it isotropic in shear. The edges need not be perpendicular (a parallelogram).

use nalgebra::Vector3;

use super::Network;

/// The most nodes a cloth may have.
pub const MAX_NODES: usize = 100_000;

/// Which diagonals of each grid cell are connected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shear {
    /// None: the cloth has no in-plane shear stiffness.
    None,
    /// One diagonal per cell, (i, j)–(i+1, j+1).
    One,
    /// Both diagonals of every cell.
    Both,
}

impl Shear {
    /// Parses `none`, `one`, `both`.
    pub fn parse(s: &str) -> Option<Shear> {
        match s {
            "none" => Some(Shear::None),
            "one" => Some(Shear::One),
            "both" => Some(Shear::Both),
            _ => None,
        }
    }
}

/// Why a cloth cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClothError {
    /// Fewer than two nodes along an edge.
    #[error("a cloth needs at least 2 nodes along each edge, got {0} × {1}")]
    TooFewNodes(usize, usize),
    /// Too many nodes.
    #[error("{0} nodes, over the limit of {MAX_NODES}")]
    TooMany(usize),
    /// Edges that are zero or parallel.
    #[error("the edges are zero or parallel (|edge1 × edge2| = {0:e} m²): they span no surface")]
    Degenerate(f64),
    /// A pinned node outside the grid.
    #[error("pinned node [{0}, {1}] is outside the {2} × {3} grid")]
    PinOutside(usize, usize, usize, usize),
}

/// A cloth from `corner_m` spanned by `edge1_m` and `edge2_m` with `nodes` = [n₁, n₂] nodes
/// along them; `shear` diagonals and, if `bend`, skip-one connections along both directions.
/// Also returns the indices of the `pinned` grid nodes ([i, j]), in the order given.
pub fn cloth(
    corner_m: Vector3<f64>,
    edge1_m: Vector3<f64>,
    edge2_m: Vector3<f64>,
    nodes: [usize; 2],
    shear: Shear,
    bend: bool,
    pinned: &[[usize; 2]],
) -> Result<(Network, Vec<usize>), ClothError> {
    let [n1, n2] = nodes;
    if n1 < 2 || n2 < 2 {
        return Err(ClothError::TooFewNodes(n1, n2));
    }
    let total = n1.saturating_mul(n2);
    if total > MAX_NODES {
        return Err(ClothError::TooMany(total));
    }
    // Relative to the edges' lengths, so that the check does not depend on the scale; zero
    // edges give 0 ≤ 0.
    let area_m2 = edge1_m.cross(&edge2_m).norm();
    if area_m2 <= 1e-9 * edge1_m.norm() * edge2_m.norm() {
        return Err(ClothError::Degenerate(area_m2));
    }
    let index = |i: usize, j: usize| i + n1 * j;
    let pins = pinned
        .iter()
        .map(|&[i, j]| {
            if i < n1 && j < n2 {
                Ok(index(i, j))
            } else {
                Err(ClothError::PinOutside(i, j, n1, n2))
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (step1, step2) = (edge1_m / (n1 - 1) as f64, edge2_m / (n2 - 1) as f64);
    let mut net = Network::default();
    for j in 0..n2 {
        for i in 0..n1 {
            net.nodes_in_world_m
                .push(corner_m + step1 * i as f64 + step2 * j as f64);
        }
    }
    // Every node to the one `skip` further along each grid direction.
    let along_grid = |net: &mut Network, skip: usize| {
        for j in 0..n2 {
            for i in 0..n1 {
                if i + skip < n1 {
                    net.connect(index(i, j), index(i + skip, j));
                }
                if j + skip < n2 {
                    net.connect(index(i, j), index(i, j + skip));
                }
            }
        }
    };
    along_grid(&mut net, 1);
    if shear != Shear::None {
        for j in 0..n2 - 1 {
            for i in 0..n1 - 1 {
                net.connect(index(i, j), index(i + 1, j + 1));
                if shear == Shear::Both {
                    net.connect(index(i + 1, j), index(i, j + 1));
                }
            }
        }
    }
    if bend {
        along_grid(&mut net, 2);
    }
    Ok((net, pins))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(n: usize, shear: Shear, bend: bool) -> Network {
        cloth(
            Vector3::new(0.0, 0.0, 0.1),
            Vector3::new(0.3, 0.0, 0.0),
            Vector3::new(0.0, 0.3, 0.0),
            [n, n],
            shear,
            bend,
            &[],
        )
        .unwrap()
        .0
    }

    #[test]
    fn a_32_by_32_cloth_has_the_speed_cases_connection_count() {
        let net = square(32, Shear::One, false);
        assert_eq!(net.nodes_in_world_m.len(), 1024);
        // 2 · 32 · 31 structural + 31² shear.
        assert_eq!(net.connections.len(), 1984 + 961);
        assert_eq!(
            square(32, Shear::Both, false).connections.len(),
            1984 + 2 * 961
        );
        // Skip-one: 2 · 32 · 30 more.
        assert_eq!(square(32, Shear::None, true).connections.len(), 1984 + 1920);
    }

    #[test]
    fn rest_lengths_are_the_grid_spacings() {
        let net = square(4, Shear::Both, true);
        let s = 0.1;
        let mut counts = [0usize; 3];
        for c in &net.connections {
            let d = (net.nodes_in_world_m[c.node2] - net.nodes_in_world_m[c.node1]).norm();
            assert!((c.rest_length_m - d).abs() < 1e-15);
            let kind = [s, s * 2f64.sqrt(), 2.0 * s]
                .iter()
                .position(|l| (c.rest_length_m - l).abs() < 1e-12)
                .unwrap_or_else(|| panic!("unexpected rest length {}", c.rest_length_m));
            counts[kind] += 1;
        }
        // 24 structural, 2 · 9 diagonals, 2 · 4 · 2 skip-one.
        assert_eq!(counts, [24, 18, 16]);
        assert!((net.nodes_in_world_m[15] - Vector3::new(0.3, 0.3, 0.1)).norm() < 1e-15);
        assert!((net.nodes_in_world_m[1] - Vector3::new(0.1, 0.0, 0.1)).norm() < 1e-15);
    }

    #[test]
    fn bad_grids_are_refused() {
        let (o, x, y) = (Vector3::zeros(), Vector3::x(), Vector3::y());
        let make = |e2: Vector3<f64>, n: [usize; 2], pins: &[[usize; 2]]| {
            cloth(o, x, e2, n, Shear::One, false, pins).map(|(_, p)| p)
        };
        assert_eq!(make(y, [1, 5], &[]), Err(ClothError::TooFewNodes(1, 5)));
        assert!(matches!(
            make(x * 2.0, [3, 3], &[]),
            Err(ClothError::Degenerate(_))
        ));
        assert!(matches!(
            make(Vector3::zeros(), [3, 3], &[]),
            Err(ClothError::Degenerate(_))
        ));
        assert_eq!(
            make(y, [3, 4], &[[2, 3], [3, 0]]),
            Err(ClothError::PinOutside(3, 0, 3, 4))
        );
        assert_eq!(make(y, [3, 4], &[[2, 3], [0, 0]]), Ok(vec![11, 0]));
        assert_eq!(
            make(y, [1000, 1000], &[]),
            Err(ClothError::TooMany(1_000_000))
        );
        assert_eq!(Shear::parse("two"), None);
    }
}
