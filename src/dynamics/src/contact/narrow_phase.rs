//! The narrow phase of contact detection: the contact manifolds (parry) of the broad phase's
//! candidate pairs, in collider order, on one thread or on several.
//!
//! The pairs are cut into consecutive runs of about equal length, one per thread
//! ([`ContactModel::threads`]); each run's points are found into its own buffer and the
//! buffers are joined in run order. A pair's manifold depends on that pair alone, so the
//! points are the same, in the same order, bit for bit, whatever the number of threads: the
//! step stays deterministic on one core or two.

use nalgebra::Isometry3;
use parry3d_f64::math::Pose;
use parry3d_f64::query::{ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher};

use super::broad_phase::unpack;
use super::geometry::{fixed, nalg, parry_pose, Collider};
use super::{ContactModel, ContactPoint};
use crate::model::body::BodyId;

/// Fewer candidate pairs per thread than this are not split: handing a run to another
/// thread costs about what a few hundred rejected pairs do.
const MIN_PAIRS_PER_RUN: usize = 512;

/// One run's buffers, kept between detections (no allocation once grown).
#[derive(Clone, Default)]
pub(crate) struct RunScratch {
    /// The manifold of pairs without a plane; planes have their own, as parry's half-space
    /// generator replaces the point storage with a new one each time.
    manifold: ContactManifold<(), ()>,
    plane_manifold: ContactManifold<(), ()>,
    /// The run's points (on one thread the run writes into the caller's buffer instead).
    points: Vec<ContactPoint>,
}

/// What every run reads: the model and the colliders' world poses, bounding radii and
/// whether their bodies are fixed for this detection.
pub(super) struct Inputs<'a> {
    pub(super) model: &'a ContactModel,
    pub(super) world: &'a [Isometry3<f64>],
    pub(super) radius: &'a [f64],
    pub(super) asleep: &'a [bool],
}

/// The contact points of the candidate `pairs` (sorted, see `geometry::sort_pairs`) within
/// `prediction_m(pair)` beyond touching, appended to `out` in pair order. Returns `false`
/// when more than the model's `max_points` were found (`out` then holds the first
/// `max_points`, as one thread would have).
pub(super) fn contacts(
    inputs: &Inputs,
    pairs: &[u64],
    prediction_m: &(impl Fn(BodyId, BodyId) -> f64 + Sync),
    runs: &mut Vec<RunScratch>,
    out: &mut Vec<ContactPoint>,
) -> bool {
    let threads = inputs
        .model
        .threads
        .min(pairs.len() / MIN_PAIRS_PER_RUN)
        .max(1);
    if runs.len() < threads {
        runs.resize_with(threads, RunScratch::default);
    }
    if threads == 1 {
        let complete = run(inputs, pairs, prediction_m, &mut runs[0], out);
        out.truncate(inputs.model.max_points);
        return complete;
    }
    let per_run = pairs.len().div_ceil(threads);
    runs_from(
        inputs,
        pairs,
        per_run,
        0,
        &mut runs[..threads],
        prediction_m,
    );
    for scratch in &runs[..threads] {
        if out.len() > inputs.model.max_points {
            break;
        }
        out.extend_from_slice(&scratch.points);
    }
    // A run that stopped at `max_points` holds more than that itself.
    if out.len() > inputs.model.max_points {
        out.truncate(inputs.model.max_points);
        return false;
    }
    true
}

/// Runs `first`, `first + 1`, … (one per buffer in `runs`, each `per_run` pairs of `pairs`),
/// each into its buffer's points, halves in parallel (rayon's `join`, which allocates
/// nothing, unlike a scope's spawned jobs).
fn runs_from(
    inputs: &Inputs,
    pairs: &[u64],
    per_run: usize,
    first: usize,
    runs: &mut [RunScratch],
    prediction_m: &(impl Fn(BodyId, BodyId) -> f64 + Sync),
) {
    if let [scratch] = runs {
        let start = (first * per_run).min(pairs.len());
        let end = (start + per_run).min(pairs.len());
        let mut points = std::mem::take(&mut scratch.points);
        points.clear();
        run(
            inputs,
            &pairs[start..end],
            prediction_m,
            scratch,
            &mut points,
        );
        scratch.points = points;
        return;
    }
    let half = runs.len() / 2;
    let (a, b) = runs.split_at_mut(half);
    rayon::join(
        || runs_from(inputs, pairs, per_run, first, a, prediction_m),
        || runs_from(inputs, pairs, per_run, first + half, b, prediction_m),
    );
}

/// One run of pairs, in order, into `out`; `false` once `out` holds more than the model's
/// `max_points` (it stops there).
fn run(
    inputs: &Inputs,
    pairs: &[u64],
    prediction_m: &impl Fn(BodyId, BodyId) -> f64,
    scratch: &mut RunScratch,
    out: &mut Vec<ContactPoint>,
) -> bool {
    let Inputs {
        model,
        world,
        radius,
        asleep,
    } = *inputs;
    for &pair in pairs {
        let (i, j) = unpack(pair);
        debug_assert!(i < j && j < model.colliders.len());
        let (c1, c2) = (&model.colliders[i], &model.colliders[j]);
        if fixed(asleep, c1.body) && fixed(asleep, c2.body) {
            continue;
        }
        let (w1, w2) = (&world[i], &world[j]);
        // The bounding spheres first: the cheapest test, and most pairs of a pile fail it.
        let apart = (w1.translation.vector - w2.translation.vector).norm_squared();
        let touching = radius[i] + radius[j];
        if touching.is_finite() && apart > touching * touching {
            let prediction = prediction_m(c1.body, c2.body);
            let reach = touching + prediction;
            if apart > reach * reach {
                continue;
            }
        }
        if !model.pair_allowed(c1.body, c2.body) {
            continue;
        }
        let prediction = prediction_m(c1.body, c2.body);
        let manifold = if touching.is_finite() {
            &mut scratch.manifold
        } else {
            &mut scratch.plane_manifold
        };
        reset(manifold);
        c1.shape.with_parry(|g1, r1| {
            c2.shape.with_parry(|g2, r2| {
                let p1 = parry_pose(w1, r1);
                let p2 = parry_pose(w2, r2);
                let pos12 = p1.inv_mul(&p2);
                // Every collider shape is convex (no composite shapes).
                let found = DefaultQueryDispatcher.contact_manifold_convex_convex(
                    &pos12, g1, g2, None, None, prediction, manifold,
                );
                if found.is_err() {
                    return;
                }
                push_points((i, c1, &p1), (j, c2, &p2), manifold, out);
            })
        });
        if out.len() > model.max_points {
            return false;
        }
    }
    true
}

/// Makes `manifold` a fresh one for the next pair (parry's convex generators may read what
/// the last pair left), keeping only the points' storage.
#[inline(always)]
fn reset(manifold: &mut ContactManifold<(), ()>) {
    let points = std::mem::take(&mut manifold.points);
    *manifold = ContactManifold::new();
    manifold.points = points;
    manifold.points.clear();
}

/// Appends the points of `manifold`, found between colliders `i` and `j` at their parry
/// poses `p1` and `p2`, as contact points.
#[inline(always)]
fn push_points(
    (i, c1, p1): (usize, &Collider, &Pose),
    (j, c2, p2): (usize, &Collider, &Pose),
    manifold: &ContactManifold<(), ()>,
    out: &mut Vec<ContactPoint>,
) {
    let material = c1.material.pair(&c2.material);
    let normal = nalg(&p1.rotation.mul_vec3(manifold.local_n1));
    for (index, pt) in manifold.points.iter().enumerate() {
        out.push(ContactPoint {
            collider1: i,
            collider2: j,
            index,
            body1: c1.body,
            body2: c2.body,
            point1: nalg(&p1.transform_point(pt.local_p1)),
            point2: nalg(&p2.transform_point(pt.local_p2)),
            normal,
            gap_m: pt.dist,
            material,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::geometry::tests::{scatter, Lcg};
    use super::super::geometry::{detect, DetectScratch};
    use super::*;
    use crate::model::body::Pose as BodyPose;

    /// 300 boxes and spheres crowded into a 0.2 m cube over a plane, tilted every which way:
    /// thousands of candidate pairs.
    fn crowd() -> (ContactModel, Vec<BodyPose>) {
        scatter(300, &mut Lcg(7), [0.01, 0.01], [0.7, 0.9], 0.2, 3.0)
    }

    fn points(model: &ContactModel, poses: &[BodyPose]) -> (bool, Vec<ContactPoint>, usize) {
        let mut scratch = DetectScratch::default();
        let mut out = Vec::new();
        let complete = detect(
            model,
            poses,
            |_, _| 0.004,
            |_| 0.002,
            &mut scratch,
            &mut out,
        );
        (complete, out, scratch.pair_count())
    }

    /// Split into runs, the points are those of one thread, in the same order, bit for bit,
    /// and a detection cut at `max_points` keeps the same first points.
    #[test]
    fn any_number_of_threads_finds_the_same_points_in_the_same_order() {
        let (mut model, poses) = crowd();
        model.threads = 1;
        let (complete, one, pairs) = points(&model, &poses);
        assert!(complete);
        assert!(
            pairs >= 5 * MIN_PAIRS_PER_RUN,
            "{pairs} candidate pairs: too few to split"
        );
        assert!(one.len() > 500, "{} points", one.len());
        for threads in [2, 3, 5] {
            model.threads = threads;
            let (complete, many, _) = points(&model, &poses);
            assert!(complete);
            assert_eq!(many, one, "{threads} threads");
        }
        for max_points in [0, 7, one.len() / 2, one.len() - 1] {
            model.max_points = max_points;
            for threads in [1, 2, 5] {
                model.threads = threads;
                let (complete, cut, _) = points(&model, &poses);
                assert!(!complete, "{threads} threads, at most {max_points}");
                assert_eq!(
                    cut,
                    one[..max_points],
                    "{threads} threads, at most {max_points}"
                );
            }
        }
    }
}
