//! The spanning tree of a scene's joint graph for MJCF, whose bodies nest: joints MuJoCo can
//! only express as tree joints (prismatic and slot: no equality row lets a point slide) are
//! taken first, then the others in file order; a joint that would close a cycle is a loop,
//! written as `equality` rows. A group of bodies not joined to the ground hangs from its
//! first body, which gets a free joint.

use ar_dynamics::model::joint::JointKind;
use ar_dynamics::scene::Scene;

/// The tree: every body's parent and the joint to it, children in body order.
pub struct SpanningTree {
    /// Per body: (parent body, joint index) in the tree; `None` for the ground and for the
    /// roots of groups that move freely.
    pub parent: Vec<Option<(usize, usize)>>,
    /// Per body: its children in the tree.
    pub children: Vec<Vec<usize>>,
    /// The joints left out of the tree (loops), in file order.
    pub loops: Vec<usize>,
    /// Bodies that hang from nothing (free joints), in body order.
    pub free_roots: Vec<usize>,
}

fn find(set: &mut [usize], mut i: usize) -> usize {
    while set[i] != i {
        set[i] = set[set[i]];
        i = set[i];
    }
    i
}

/// The spanning tree of `scene` (body 0 is the ground).
pub fn spanning_tree(scene: &Scene) -> SpanningTree {
    let n = scene.bodies.len();
    let sliding = |k: &JointKind| matches!(k, JointKind::Prismatic | JointKind::Slot);
    let order = (0..scene.joints.len())
        .filter(|&j| sliding(&scene.joints[j].kind))
        .chain((0..scene.joints.len()).filter(|&j| !sliding(&scene.joints[j].kind)));
    let mut set: Vec<usize> = (0..n).collect();
    let mut in_tree = vec![false; scene.joints.len()];
    let mut adjacent: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for j in order {
        let joint = &scene.joints[j];
        let (a, b) = (find(&mut set, joint.body1), find(&mut set, joint.body2));
        if a != b {
            set[a] = b;
            in_tree[j] = true;
            adjacent[joint.body1].push((joint.body2, j));
            adjacent[joint.body2].push((joint.body1, j));
        }
    }
    let mut parent = vec![None; n];
    let mut children = vec![Vec::new(); n];
    let mut seen = vec![false; n];
    let mut free_roots = Vec::new();
    for root in 0..n {
        if seen[root] {
            continue;
        }
        if root != 0 {
            free_roots.push(root);
        }
        seen[root] = true;
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(b) = queue.pop_front() {
            let mut next: Vec<(usize, usize)> = adjacent[b].clone();
            next.sort_unstable();
            for (c, j) in next {
                if !seen[c] {
                    seen[c] = true;
                    parent[c] = Some((b, j));
                    children[b].push(c);
                    queue.push_back(c);
                }
            }
        }
    }
    SpanningTree {
        parent,
        children,
        loops: (0..scene.joints.len()).filter(|&j| !in_tree[j]).collect(),
        free_roots,
    }
}
