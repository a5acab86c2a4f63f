//! How the coupled (direct) system lays out its blocks: the order of the joints' blocks, which
//! is the elimination order of the sparse Cholesky factor, the coupling of the blocks through
//! shared moving bodies, and the storage bound of the factor.
//!
//! The blocks are the joints in [`joint_order`], then the active springs, then the stylus.
//! The joints of a mechanism without loops are numbered children first when that stores fewer
//! blocks than the scene's order: the virtual-mobile paper's §5 ordering (leaves first,
//! eliminated bottom-up), under which a tree's factor has no fill (see
//! [`crate::linalg::block_pattern`]). A chain already has none in the scene's order, which is
//! kept whenever it is as good, so that such scenes give the same results bit for bit.

use std::collections::VecDeque;

use crate::linalg::block_cholesky::{Block, MAX_STORAGE_BYTES};
use crate::linalg::block_pattern::pattern_blocks_within;
use crate::model::body::{Body, BodyId};
use crate::model::joint::Joint;
use crate::model::spring::Spring;

/// For every moving body, the blocks acting on it (compressed rows, ascending), rebuilt
/// without allocating for each factorisation.
#[derive(Clone, Debug, Default)]
pub(crate) struct BodyBlocks {
    start: Vec<usize>,
    cursor: Vec<usize>,
    list: Vec<usize>,
}

impl BodyBlocks {
    /// Room for `n_bodies` bodies and `max_blocks` blocks of two bodies each.
    pub(crate) fn with_capacity(n_bodies: usize, max_blocks: usize) -> Self {
        Self {
            start: vec![0; n_bodies + 1],
            cursor: vec![0; n_bodies],
            list: Vec::with_capacity(2 * max_blocks),
        }
    }

    /// Records the blocks' body pairs (block a acts on `pairs(a)`); fixed bodies couple
    /// nothing and are left out.
    pub(crate) fn build(
        &mut self,
        bodies: &[Body],
        nb: usize,
        pairs: impl Fn(usize) -> [BodyId; 2],
    ) {
        let n = bodies.len();
        self.start.fill(0);
        for a in 0..nb {
            for b in moving(bodies, pairs(a)) {
                self.start[b + 1] += 1;
            }
        }
        for b in 0..n {
            self.start[b + 1] += self.start[b];
        }
        self.cursor.copy_from_slice(&self.start[..n]);
        self.list.clear();
        self.list.resize(self.start[n], 0);
        for a in 0..nb {
            for b in moving(bodies, pairs(a)) {
                self.list[self.cursor[b]] = a;
                self.cursor[b] += 1;
            }
        }
    }

    /// Calls `add(c)` for every block c acting on one of the moving bodies of `pair`.
    pub(crate) fn coupled(&self, bodies: &[Body], pair: [BodyId; 2], add: &mut dyn FnMut(usize)) {
        for b in moving(bodies, pair) {
            for &c in &self.list[self.start[b]..self.start[b + 1]] {
                add(c);
            }
        }
    }
}

/// The moving bodies of a pair (the same body once).
fn moving(bodies: &[Body], [b1, b2]: [BodyId; 2]) -> impl Iterator<Item = BodyId> + '_ {
    [Some(b1), (b2 != b1).then_some(b2)]
        .into_iter()
        .flatten()
        .filter(move |&b| bodies[b].is_dynamic())
}

/// The factor's blocks when the joints come in `order`, then every spring, then the stylus
/// (a full row: it may clip to any body); `usize::MAX` when they are more than `cap`.
fn pattern_with(
    bodies: &[Body],
    joints: &[Joint],
    springs: &[Spring],
    order: &[usize],
    cap: usize,
) -> usize {
    let pairs: Vec<[BodyId; 2]> = order
        .iter()
        .map(|&i| [joints[i].body1, joints[i].body2])
        .chain(springs.iter().map(|s| [s.body1, s.body2]))
        .collect();
    let mut map = BodyBlocks::with_capacity(bodies.len(), pairs.len());
    map.build(bodies, pairs.len(), |a| pairs[a]);
    pattern_blocks_within(
        pairs.len(),
        |a, add| map.coupled(bodies, pairs[a], add),
        cap,
    )
    .map_or(usize::MAX, |elements| {
        elements.saturating_add(pairs.len() + 1)
    })
}

/// The joints children first: by decreasing depth of their deeper body in the joint graph
/// searched breadth first from the fixed bodies (then from any body not reached), ties in the
/// scene's order.
fn children_first(bodies: &[Body], joints: &[Joint]) -> Vec<usize> {
    let n = bodies.len();
    let mut adjacent: Vec<Vec<BodyId>> = vec![Vec::new(); n];
    for j in joints {
        adjacent[j.body1].push(j.body2);
        adjacent[j.body2].push(j.body1);
    }
    let mut depth = vec![usize::MAX; n];
    let mut queue = VecDeque::new();
    let roots = (0..n)
        .filter(|&b| !bodies[b].is_dynamic())
        .chain((0..n).filter(|&b| bodies[b].is_dynamic()));
    for root in roots {
        if depth[root] != usize::MAX {
            continue;
        }
        depth[root] = 0;
        queue.push_back(root);
        while let Some(b) = queue.pop_front() {
            for &c in &adjacent[b] {
                if depth[c] == usize::MAX {
                    depth[c] = if bodies[c].is_dynamic() {
                        depth[b] + 1
                    } else {
                        0
                    };
                    queue.push_back(c);
                }
            }
        }
    }
    let mut order: Vec<usize> = (0..joints.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth[joints[i].body1].max(depth[joints[i].body2])));
    order
}

/// The coupled system's layout for a set of elements.
pub(crate) struct Layout {
    /// The joints' block order (see the module docs).
    pub(crate) joint_order: Vec<usize>,
    /// The most blocks of the coupled system: every joint and spring, and the stylus.
    pub(crate) max_blocks: usize,
    /// A bound on the factor's stored blocks, with every element present (a step with fewer,
    /// a slack spring or no stylus, stores a subset); `usize::MAX` when it is more than
    /// [`pattern_cap`] (it is then too large for the block factor, and counting stopped).
    pub(crate) pattern_blocks: usize,
    /// Whether the joints close a loop (see [`super::joints_close_a_loop`]).
    pub(crate) closes_loop: bool,
}

/// Where counting a factor's pattern stops: past the most blocks that fit in
/// [`MAX_STORAGE_BYTES`] (two blocks and an index each), and past the fill that chooses the
/// primal solve for `max_blocks` elements, so that both decisions are the ones the whole
/// count would give.
fn pattern_cap(max_blocks: usize) -> usize {
    let fit = MAX_STORAGE_BYTES / (2 * std::mem::size_of::<Block>() + std::mem::size_of::<usize>());
    fit.max(crate::solver::primal::PRIMAL_FILL_RATIO.saturating_mul(max_blocks))
        .saturating_add(1)
}

/// The layout of the coupled system of these elements.
pub(crate) fn layout(bodies: &[Body], joints: &[Joint], springs: &[Spring]) -> Layout {
    let scene: Vec<usize> = (0..joints.len()).collect();
    let mut joint_order = scene.clone();
    let max_blocks = joints.len() + springs.len() + 1;
    let cap = pattern_cap(max_blocks);
    let mut pattern_blocks = pattern_with(bodies, joints, springs, &scene, cap);
    let closes_loop = super::joints_close_a_loop(bodies, joints);
    if !closes_loop {
        let tree = children_first(bodies, joints);
        let tree_blocks = pattern_with(bodies, joints, springs, &tree, cap);
        if tree_blocks < pattern_blocks {
            (joint_order, pattern_blocks) = (tree, tree_blocks);
        }
    }
    Layout {
        joint_order,
        max_blocks,
        pattern_blocks,
        closes_loop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::generate::{chain_toml, mobile_toml};
    use crate::Scene;

    fn model(toml: &str) -> crate::Model {
        let sim = Scene::parse(toml, "generated.toml")
            .and_then(|s| s.build())
            .expect("scene");
        sim.model().clone()
    }

    #[test]
    fn chains_keep_the_scene_order_and_mobiles_store_under_three_blocks_per_joint() {
        let m = model(&chain_toml(100).unwrap());
        let order = layout(&m.bodies, &m.joints, &m.springs).joint_order;
        assert!(order.iter().enumerate().all(|(k, &i)| k == i));
        for depth in 4..=9 {
            let m = model(&mobile_toml(depth).unwrap());
            let n = m.joints.len();
            let Layout {
                joint_order: order,
                max_blocks,
                pattern_blocks: bound,
                ..
            } = layout(&m.bodies, &m.joints, &m.springs);
            assert_eq!(max_blocks, n + 1);
            // The elements' blocks, without the stylus's full row.
            let stored = bound - (n + 1);
            assert!(
                stored <= 3 * n,
                "depth {depth}: {stored} blocks for {n} joints"
            );
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert!(sorted.iter().enumerate().all(|(k, &i)| k == i));
        }
    }
}
