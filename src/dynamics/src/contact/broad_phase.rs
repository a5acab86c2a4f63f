//! The broad phase of contact detection: the pairs of colliders whose bounding boxes (each
//! collider's bounding sphere grown by its body's reach) overlap, from parry's
//! bounding-volume hierarchy, which is refitted to the moved boxes rather than rebuilt; and
//! every plane with every other collider. The pairs come out in collider order, once each.

use nalgebra::Isometry3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use super::geometry::glam;
use super::ContactModel;
use crate::model::body::BodyId;

/// The broad phase's buffers, kept from call to call (no allocation once grown).
#[derive(Clone, Default)]
pub(super) struct BroadPhase {
    /// Collider indices of the planes and of the bounded colliders (the hierarchy's leaves,
    /// numbered in this order).
    planes: Vec<usize>,
    finite: Vec<usize>,
    /// Candidate pairs (i < j) as `i << 32 | j`: sorted as one integer, the quickest way to
    /// the collider order.
    pub(super) pairs: Vec<u64>,
    /// The pair matrix's bits (row i, column j) that put `pairs` in order (see `sort_pairs`).
    pair_bits: Vec<u64>,
    bvh: Bvh,
    bvh_workspace: BvhWorkspace,
}

impl BroadPhase {
    /// The candidate pairs of the colliders at world poses `world` with bounding radii
    /// `radius` (infinite for a plane), in collider order without repeats, into `self.pairs`.
    pub(super) fn find(
        &mut self,
        model: &ContactModel,
        reach_m: impl Fn(BodyId) -> f64,
        world: &[Isometry3<f64>],
        radius: &[f64],
    ) {
        self.candidate_pairs(model, reach_m, world, radius);
        sort_pairs(radius.len(), &mut self.pairs, &mut self.pair_bits);
    }

    /// Pairs of colliders (i < j, in no particular order, maybe repeated) whose bounding
    /// boxes, the bounding spheres grown by their bodies' reach, overlap; and every plane with
    /// every other collider: into `self.pairs`.
    fn candidate_pairs(
        &mut self,
        model: &ContactModel,
        reach_m: impl Fn(BodyId) -> f64,
        world: &[Isometry3<f64>],
        radius: &[f64],
    ) {
        let BroadPhase {
            planes,
            finite,
            pairs,
            bvh,
            bvh_workspace,
            ..
        } = self;
        planes.clear();
        finite.clear();
        for (i, r) in radius.iter().enumerate() {
            if r.is_finite() {
                finite.push(i);
            } else {
                planes.push(i);
            }
        }
        pairs.clear();
        for &p in planes.iter() {
            pairs.extend(
                (0..radius.len())
                    .filter(|&i| i != p)
                    .map(|i| pack(i.min(p), i.max(p))),
            );
        }
        // Leaves are numbered 0.. in `finite` (parry's builder assumes so for one or two leaves).
        // The pairs of overlapping leaves do not depend on the tree's shape, so the tree of the
        // last call is reused: its leaves moved to the new boxes.
        if bvh.leaf_count() as usize == finite.len() {
            for (leaf, &i) in finite.iter().enumerate() {
                let bounds = leaf_box(model, &reach_m, world, radius, i);
                bvh.insert_or_update_partially(bounds, leaf as u32, 0.0);
            }
            // Refitted, and a twentieth of it rebuilt at a time (as rapier does), not rebuilt
            // whole: that took a tenth of a falling pile's step.
            bvh.refit(bvh_workspace);
            bvh.optimize_incremental(bvh_workspace);
        } else {
            *bvh = Bvh::from_iter(
                BvhBuildStrategy::Binned,
                finite
                    .iter()
                    .enumerate()
                    .map(|(leaf, &i)| (leaf, leaf_box(model, &reach_m, world, radius, i))),
            );
        }
        for (a, b) in bvh.leaf_pairs(bvh, |n1, n2| n1.intersects(n2)) {
            let (a, b) = (finite[a as usize], finite[b as usize]);
            if a != b {
                pairs.push(pack(a.min(b), a.max(b)));
            }
        }
    }
}

/// The most colliders whose pairs are put in order through a bit matrix (2 MB of bits); more
/// are sorted.
const PAIR_BITS_MAX_COLLIDERS: usize = 4096;

/// Puts the candidate pairs of `n` colliders in collider order without repeats. A pile's
/// broad phase finds tens of thousands of candidates per detection (its boxes grow with the
/// bodies' speeds), and sorting them took an eighth of a falling pile's step: as bits of the
/// n × n pair matrix, read row by row, they come out in order for a pass over n²/64 words.
fn sort_pairs(n: usize, pairs: &mut Vec<u64>, bits: &mut Vec<u64>) {
    if n > PAIR_BITS_MAX_COLLIDERS {
        pairs.sort_unstable();
        pairs.dedup();
        return;
    }
    let words_per_row = n.div_ceil(64);
    bits.clear();
    bits.resize(n * words_per_row, 0);
    for &pair in pairs.iter() {
        let (i, j) = unpack(pair);
        bits[i * words_per_row + j / 64] |= 1 << (j % 64);
    }
    pairs.clear();
    for (i, row) in bits.chunks_exact(words_per_row).enumerate() {
        for (w, &word) in row.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let j = w * 64 + word.trailing_zeros() as usize;
                pairs.push(pack(i, j));
                word &= word - 1;
            }
        }
    }
}

/// A candidate pair (i < j) as one sortable integer (collider counts are far below 2³²).
#[inline(always)]
fn pack(i: usize, j: usize) -> u64 {
    ((i as u64) << 32) | j as u64
}

#[inline(always)]
pub(super) fn unpack(pair: u64) -> (usize, usize) {
    ((pair >> 32) as usize, (pair & 0xffff_ffff) as usize)
}

/// Collider `i`'s leaf box in the hierarchy: its bounding sphere grown by its body's reach.
/// (Always inlined: as a closure LLVM made it a call per collider once `detect` had grown
/// by the inlined `pair_contacts`, and detection of the Newton's cradle took 1.6 % more
/// instructions.)
#[inline(always)]
fn leaf_box(
    model: &ContactModel,
    reach_m: &impl Fn(BodyId) -> f64,
    world: &[Isometry3<f64>],
    radius: &[f64],
    i: usize,
) -> Aabb {
    // Rounding of prediction_m against the sum of the reaches is far below this (m).
    const SLACK_M: f64 = 1.0e-9;
    let half = radius[i] + reach_m(model.colliders[i].body) + SLACK_M;
    let centre = glam(&world[i].translation.vector);
    Aabb::new(centre - Vector::splat(half), centre + Vector::splat(half))
}

#[cfg(test)]
mod tests {
    use nalgebra::Vector3;

    use super::super::geometry::tests::{scatter, Lcg};
    use super::super::geometry::{world_poses_and_radii, DetectScratch};
    use super::*;
    use crate::model::body::Pose as BodyPose;

    /// The bit matrix gives the pairs in the order, and without the repeats, of a sort.
    #[test]
    fn pairs_come_out_sorted_and_once() {
        for n in [1, 2, 63, 64, 65, 293, PAIR_BITS_MAX_COLLIDERS + 1] {
            let mut state = 12345u64 + n as u64;
            let mut next = |m: usize| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 33) as usize % m
            };
            let mut pairs = Vec::new();
            for _ in 0..(3 * n) {
                let (a, b) = (next(n), next(n));
                if a != b {
                    pairs.push(pack(a.min(b), a.max(b)));
                    pairs.push(pack(a.min(b), a.max(b)));
                }
            }
            let mut expected = pairs.clone();
            expected.sort_unstable();
            expected.dedup();
            let mut bits = Vec::new();
            sort_pairs(n, &mut pairs, &mut bits);
            assert_eq!(pairs, expected, "{n} colliders");
        }
    }

    /// The hierarchy's candidates contain every pair that the all-pairs bounding-sphere test
    /// keeps (checked against that test written out here), on 200 spheres and boxes of mixed
    /// sizes scattered through a 0.5 m cube with a reach of a few millimetres, plus a plane;
    /// and on one, two and three bodies (parry builds the smallest trees by hand).
    #[test]
    fn the_broad_phase_misses_no_pair_the_all_pairs_test_keeps() {
        for bodies in [1, 2, 3, 200] {
            broad_phase_against_all_pairs(bodies);
        }
    }

    fn broad_phase_against_all_pairs(bodies: usize) {
        let mut rng = Lcg(3);
        let (model, mut poses) = scatter(bodies, &mut rng, [0.005, 0.03], [0.5, 0.8], 0.5, 0.0);
        let reach = |b: BodyId| 0.0005 + 0.002 * (b % 3) as f64;
        let mut scratch = DetectScratch::default();
        // The first call builds the hierarchy; the later ones refit it after every body moved.
        for frame in 0..30 {
            if frame > 0 {
                for p in poses.iter_mut().skip(1) {
                    let step = Vector3::new(rng.uniform(), rng.uniform(), rng.uniform())
                        - Vector3::repeat(0.5);
                    *p = BodyPose::new(p.x + step * 0.08, p.q);
                }
            }
            check_pairs(&model, &poses, reach, &mut scratch, bodies);
        }
    }

    fn check_pairs(
        model: &ContactModel,
        poses: &[BodyPose],
        reach: impl Fn(BodyId) -> f64,
        scratch: &mut DetectScratch,
        bodies: usize,
    ) {
        world_poses_and_radii(model, poses, scratch);
        let DetectScratch {
            world,
            radius,
            broad,
            ..
        } = scratch;
        broad.candidate_pairs(model, &reach, world, radius);
        let mut found: Vec<_> = broad.pairs.iter().map(|&p| unpack(p)).collect();
        found.sort_unstable();
        found.dedup();
        let n = model.colliders.len();
        let mut expected = Vec::new();
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (model.colliders[i].body, model.colliders[j].body);
                let apart = (world[i].translation.vector - world[j].translation.vector).norm();
                let keep = !radius[i].is_finite()
                    || !radius[j].is_finite()
                    || apart <= radius[i] + radius[j] + reach(a) + reach(b);
                if keep {
                    expected.push((i, j));
                }
            }
        }
        assert!(expected.len() >= bodies, "{} pairs", expected.len());
        let missed: Vec<_> = expected
            .iter()
            .filter(|p| found.binary_search(p).is_err())
            .collect();
        assert!(missed.is_empty(), "missed {missed:?}");
        // And it prunes: far fewer candidates than all pairs.
        if bodies > 100 {
            assert!(found.len() < n * (n - 1) / 8, "{} candidates", found.len());
        }
    }
}
