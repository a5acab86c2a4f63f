//! The pile bench's own penetration measure (see `pile.rs`), alike for both engines: parry's
//! exact contact query on every pair of colliders whose bounding boxes overlap, at the poses
//! each step ends with; and the bin's box, to count the bodies that left it.

use ar_dynamics::contact::{ColliderShape, ContactModel};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::query;
use rapier3d_f64::geometry::SharedShape;
use rapier3d_f64::math::{Pose, Vector};

use super::{parry_shape, to_pose};

/// The bench's own penetration measure: the scene's colliders, posed from body poses.
pub struct Check {
    /// Body index, shape, pose in the body frame, is a plane.
    colliders: Vec<(usize, SharedShape, Pose, bool)>,
    model: ContactModel,
    /// The box of the static colliders other than planes (the bin).
    bin: Aabb,
}

impl Check {
    pub fn new(model: &ContactModel) -> Self {
        let colliders: Vec<_> = model
            .colliders
            .iter()
            .map(|c| {
                let plane = matches!(c.shape, ColliderShape::Plane { .. });
                (
                    c.body,
                    parry_shape(&c.shape),
                    to_pose(&c.body_from_shape),
                    plane,
                )
            })
            .collect();
        let mut bin = Aabb::new_invalid();
        for (body, shape, pose, plane) in &colliders {
            if *body == 0 && !plane {
                bin.merge(&shape.compute_aabb(pose));
            }
        }
        Self {
            colliders,
            model: model.clone(),
            bin,
        }
    }

    /// Deepest penetration (m, ≥ 0) with every body at `pose_of(body)` (body 0: identity).
    pub fn deepest_m(&self, pose_of: impl Fn(usize) -> Pose) -> f64 {
        let world: Vec<Pose> = self
            .colliders
            .iter()
            .map(|(b, _, p, _)| if *b == 0 { *p } else { pose_of(*b) * *p })
            .collect();
        let boxes: Vec<Option<Aabb>> = self
            .colliders
            .iter()
            .zip(&world)
            .map(|((_, s, _, plane), w)| (!plane).then(|| s.compute_aabb(w)))
            .collect();
        let mut deepest = 0.0f64;
        for i in 0..self.colliders.len() {
            for j in i + 1..self.colliders.len() {
                let (bi, bj) = (self.colliders[i].0, self.colliders[j].0);
                if !self.model.pair_allowed(bi, bj) {
                    continue;
                }
                if let (Some(a), Some(b)) = (&boxes[i], &boxes[j]) {
                    if !a.intersects(b) {
                        continue;
                    }
                }
                // A plane goes first: parry's contact of a shape with a half-space given
                // second reports the shape's depth below the half-space's far side.
                let (a, b) = if self.colliders[j].3 { (j, i) } else { (i, j) };
                let (sa, sb) = (&*self.colliders[a].1, &*self.colliders[b].1);
                if let Ok(Some(c)) = query::contact(&world[a], sa, &world[b], sb, 0.0) {
                    deepest = deepest.max(-c.dist);
                }
            }
        }
        deepest
    }

    /// How many of the `centres` are outside the bin.
    pub fn out_of_bin(&self, centres: impl Iterator<Item = Vector>) -> usize {
        let inside =
            |p: Vector| (0..3).all(|k| p[k] >= self.bin.mins[k] && p[k] <= self.bin.maxs[k]);
        centres.filter(|p| !inside(*p)).count()
    }
}
