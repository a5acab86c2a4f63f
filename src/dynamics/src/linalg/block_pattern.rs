//! The non-zero block pattern of a Cholesky factor L of a symmetric block matrix A, found
//! from A's pattern by symbolic elimination (row subtrees of the elimination tree, Liu 1986),
//! so that the factor stores only the blocks that can be non-zero.
//!
//! Block row i of L is non-zero at column j < i exactly when A couples i to some k ≤ j whose
//! path up the elimination tree (each column's parent: the first later row at which it is
//! non-zero) passes through j before reaching i. Eliminating a tree mechanism's joints
//! children first creates no fill at all (each joint's remaining neighbours, its parent body's
//! other joints, already couple), so its factor holds as many blocks as the coupled matrix:
//! linear in the number of joints for bounded degree (the virtual-mobile paper's §5); a
//! profile (every block from a row's first non-zero to its diagonal) holds n log n blocks for
//! a balanced mobile instead.

/// No parent (a root of the elimination tree) / no mark.
const NONE: usize = usize::MAX;

/// Scratch of the symbolic elimination, sized once for `capacity` block rows.
#[derive(Clone, Debug)]
pub struct Symbolic {
    parent: Vec<usize>,
    mark: Vec<usize>,
}

impl Symbolic {
    /// Scratch for systems of up to `capacity` block rows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            parent: vec![NONE; capacity],
            mark: vec![NONE; capacity],
        }
    }

    /// The pattern of L for `nb` block rows, where `coupled(i, add)` calls `add(j)` for every
    /// column j < i at which A's block row i is non-zero (in any order; repeats allowed).
    /// Row i's columns go to `cols[offset[i]..offset[i + 1]]`, ascending and ending with i
    /// itself (the diagonal); `offset` needs `nb + 1` entries and `cols` room for the whole
    /// pattern (see [`pattern_blocks`]). Returns the number of blocks, or `None` when `cols`
    /// is too short (nothing else is then valid).
    pub fn factor_pattern(
        &mut self,
        nb: usize,
        coupled: impl Fn(usize, &mut dyn FnMut(usize)),
        offset: &mut [usize],
        cols: &mut [usize],
    ) -> Option<usize> {
        let (parent, mark) = (&mut self.parent[..nb], &mut self.mark[..nb]);
        parent.fill(NONE);
        mark.fill(NONE);
        let mut len = 0usize;
        offset[0] = 0;
        for i in 0..nb {
            let start = len;
            mark[i] = i;
            coupled(i, &mut |j| {
                if j >= i {
                    return;
                }
                // Up the elimination tree from j to i, adding the columns not yet in row i.
                let mut x = j;
                while mark[x] != i {
                    mark[x] = i;
                    if len < cols.len() {
                        cols[len] = x;
                    }
                    len += 1;
                    if parent[x] == NONE {
                        parent[x] = i;
                        break;
                    }
                    x = parent[x];
                }
            });
            if len >= cols.len() {
                return None;
            }
            cols[start..len].sort_unstable();
            cols[len] = i;
            len += 1;
            offset[i + 1] = len;
        }
        Some(len)
    }
}

/// The number of blocks of L's pattern (see [`Symbolic::factor_pattern`]): the storage bound
/// of a factor. Counted without storing the pattern, in O(`nb`) memory.
pub fn pattern_blocks(nb: usize, coupled: impl Fn(usize, &mut dyn FnMut(usize))) -> usize {
    pattern_blocks_within(nb, coupled, usize::MAX).unwrap_or(usize::MAX)
}

/// [`pattern_blocks`], or `None` as soon as the count exceeds `cap`: the count stops there,
/// so that a pattern that fills like a dense matrix (a cloth's springs in file order: 2 × 10⁹
/// blocks) is known to be too large in the time of `cap` blocks and O(`nb`) memory, where
/// storing it first took 4.3 GB and aborted.
pub fn pattern_blocks_within(
    nb: usize,
    coupled: impl Fn(usize, &mut dyn FnMut(usize)),
    cap: usize,
) -> Option<usize> {
    let mut parent = vec![NONE; nb];
    let mut mark = vec![NONE; nb];
    let mut len = 0usize;
    for i in 0..nb {
        mark[i] = i;
        let mut over = false;
        coupled(i, &mut |j| {
            if j >= i || over {
                return;
            }
            // Up the elimination tree from j to i, counting the columns not yet in row i.
            let mut x = j;
            while mark[x] != i {
                mark[x] = i;
                len += 1;
                if len > cap {
                    over = true;
                    return;
                }
                if parent[x] == NONE {
                    parent[x] = i;
                    break;
                }
                x = parent[x];
            }
        });
        // The diagonal block.
        len += 1;
        if over || len > cap {
            return None;
        }
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pattern of L by dense symbolic elimination: eliminating k joins all of its later
    /// neighbours.
    fn dense_pattern(nb: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
        let mut adj = vec![vec![false; nb]; nb];
        for &(a, b) in edges {
            adj[a][b] = true;
            adj[b][a] = true;
        }
        for k in 0..nb {
            let later: Vec<usize> = (k + 1..nb).filter(|&i| adj[k][i]).collect();
            for &a in &later {
                for &b in &later {
                    if a != b {
                        adj[a][b] = true;
                    }
                }
            }
        }
        (0..nb)
            .map(|i| (0..i).filter(|&j| adj[i][j]).chain([i]).collect())
            .collect()
    }

    fn symbolic_pattern(nb: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
        let coupled = |i: usize, add: &mut dyn FnMut(usize)| {
            for &(a, b) in edges {
                if a == i {
                    add(b);
                }
                if b == i {
                    add(a);
                }
            }
        };
        let mut s = Symbolic::with_capacity(nb);
        let mut offset = vec![0; nb + 1];
        let mut cols = vec![0; nb * nb + 1];
        let n = s
            .factor_pattern(nb, coupled, &mut offset, &mut cols)
            .expect("room");
        assert_eq!(n, offset[nb]);
        assert_eq!(pattern_blocks(nb, coupled), n);
        (0..nb)
            .map(|i| cols[offset[i]..offset[i + 1]].to_vec())
            .collect()
    }

    #[test]
    fn the_pattern_is_the_dense_elimination_fill() {
        // A chain, a top-down binary tree of joints (cliques of three per bar), the same
        // children first, and a graph with loops and repeated edges.
        let chain: Vec<(usize, usize)> = (1..12).map(|i| (i - 1, i)).collect();
        let mut top_down = Vec::new();
        for bar in 0..7 {
            // Joint `bar` holds bar `bar`; its children's joints are 2 bar + 1 and 2 bar + 2.
            let (l, r) = (2 * bar + 1, 2 * bar + 2);
            top_down.extend([(bar, l), (bar, r), (l, r)]);
        }
        let children_first: Vec<(usize, usize)> =
            top_down.iter().map(|&(a, b)| (14 - a, 14 - b)).collect();
        let loops = vec![(0, 5), (1, 5), (2, 3), (3, 5), (4, 1), (0, 5), (2, 4)];
        for (nb, edges) in [
            (12, &chain),
            (15, &top_down),
            (15, &children_first),
            (6, &loops),
        ] {
            assert_eq!(symbolic_pattern(nb, edges), dense_pattern(nb, edges));
        }
        // Children first, the tree fills nothing: its 15 diagonal and 21 coupling blocks.
        assert_eq!(
            symbolic_pattern(15, &children_first).concat().len(),
            15 + 21
        );
        assert!(symbolic_pattern(15, &top_down).concat().len() > 15 + 21);
    }

    #[test]
    fn the_count_stops_past_its_cap() {
        // Every block coupled to every earlier one: n (n + 1) / 2 blocks.
        let dense = |i: usize, add: &mut dyn FnMut(usize)| (0..i).for_each(&mut *add);
        assert_eq!(pattern_blocks_within(100, dense, 5050), Some(5050));
        assert_eq!(pattern_blocks_within(100, dense, 5049), None);
        assert_eq!(pattern_blocks(100, dense), 5050);
        // Two million blocks, 2 × 10¹² in the pattern: refused after the cap, at once.
        assert_eq!(pattern_blocks_within(2_000_000, dense, 1_000_000), None);
    }

    #[test]
    fn too_little_room_is_none() {
        let coupled = |i: usize, add: &mut dyn FnMut(usize)| {
            if i > 0 {
                add(i - 1)
            }
        };
        let mut s = Symbolic::with_capacity(4);
        let mut offset = [0; 5];
        assert!(s
            .factor_pattern(4, coupled, &mut offset, &mut [0; 6])
            .is_none());
        assert_eq!(
            s.factor_pattern(4, coupled, &mut offset, &mut [0; 7]),
            Some(7)
        );
    }
}
