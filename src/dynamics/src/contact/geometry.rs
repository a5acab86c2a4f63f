//! The bridge to parry: colliders as parry shapes, poses converted at the boundary (parry
//! speaks glam; the solver nalgebra), and detection, which takes the candidate pairs of the
//! broad phase (`broad_phase.rs`) to the narrow phase's contact manifolds (`narrow_phase.rs`).

use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rot3, Vector};
use parry3d_f64::query::Ray;
use parry3d_f64::shape::Shape as ParryShape;
use parry3d_f64::shape::{Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, HalfSpace};
use std::sync::Arc;

use super::broad_phase::BroadPhase;
use super::convex::{self, HullError};
use super::{narrow_phase, ContactModel, ContactPoint, Material};
use crate::model::body::Pose as BodyPose;
use crate::model::body::{BodyId, GROUND};
use crate::model::shape::Shape;

/// A collider's geometry (in its own frame). Not `Copy`: a convex shares its hull.
#[derive(Clone, Debug, PartialEq)]
pub enum ColliderShape {
    /// A sphere.
    Sphere { radius_m: f64 },
    /// A box with these half extents (m).
    Box { half_extents_m: Vector3<f64> },
    /// A capsule along z: half length of the segment, radius.
    Capsule { half_length_m: f64, radius_m: f64 },
    /// A cylinder along z.
    Cylinder { half_length_m: f64, radius_m: f64 },
    /// The half-space n·(x − p) ≤ 0 is solid (unit n, p the collider's origin).
    Plane { normal: Vector3<f64> },
    /// A convex polyhedron (vertices in the collider's frame), built once from a body's
    /// `kind = "convex"` points, with its bounding radius about the origin (kept: detection
    /// asks for it every step).
    Convex {
        hull: Arc<ConvexPolyhedron>,
        radius_m: f64,
    },
}

impl ColliderShape {
    /// The collider of a body shape; for a convex, its hull (built here: call it once per
    /// scene, not per step), or why there is none.
    pub fn of(shape: &Shape) -> Result<Self, HullError> {
        Ok(match shape {
            &Shape::Sphere { radius_m } => Self::Sphere { radius_m },
            &Shape::Box { size_m } => Self::Box {
                half_extents_m: Vector3::from(size_m) * 0.5,
            },
            &Shape::Capsule { radius_m, length_m } => Self::Capsule {
                half_length_m: 0.5 * length_m,
                radius_m,
            },
            &Shape::Cylinder { radius_m, length_m } => Self::Cylinder {
                half_length_m: 0.5 * length_m,
                radius_m,
            },
            Shape::Convex { points_m } => Self::convex(convex::hull(points_m)?),
        })
    }

    /// A convex collider of `hull`, its bounding radius measured once.
    pub fn convex(hull: Arc<ConvexPolyhedron>) -> Self {
        Self::Convex {
            radius_m: convex::bounding_radius_m(&hull),
            hull,
        }
    }

    /// Radius of a sphere about the collider's origin that holds it (infinite for a plane).
    pub fn bounding_radius_m(&self) -> f64 {
        match *self {
            Self::Sphere { radius_m } => radius_m,
            Self::Box { half_extents_m } => half_extents_m.norm(),
            Self::Capsule {
                half_length_m,
                radius_m,
            } => half_length_m + radius_m,
            Self::Cylinder {
                half_length_m,
                radius_m,
            } => half_length_m.hypot(radius_m),
            Self::Plane { .. } => f64::INFINITY,
            Self::Convex { radius_m, .. } => radius_m,
        }
    }

    /// Where the ray `origin_in_world + t·direction_in_world` (t ≥ 0) first meets the
    /// collider's surface when the collider is at `world_from_shape`, as the ray parameter t;
    /// `None` when it misses (or starts inside: the surface behind the user does not count).
    pub fn cast_ray(
        &self,
        world_from_shape: &Isometry3<f64>,
        origin_in_world: &Point3<f64>,
        direction_in_world: &Vector3<f64>,
    ) -> Option<f64> {
        self.with_parry(|shape, rotation| {
            let pose = parry_pose(world_from_shape, rotation);
            let ray = Ray::new(glam(&origin_in_world.coords), glam(direction_in_world));
            // Not solid: a ray from inside meets the surface on its way out, which is not a
            // point the user sees; such a start is rejected below.
            let inside = shape.contains_point(&pose, glam(&origin_in_world.coords));
            if inside {
                return None;
            }
            shape.cast_ray(&pose, &ray, f64::MAX, true)
        })
    }

    /// The collider grown by `margin_m` on every side (a box keeps its square corners).
    pub fn inflated(&self, margin_m: f64) -> Self {
        match *self {
            Self::Sphere { radius_m } => Self::Sphere {
                radius_m: radius_m + margin_m,
            },
            Self::Box { half_extents_m } => Self::Box {
                half_extents_m: half_extents_m.add_scalar(margin_m),
            },
            Self::Capsule {
                half_length_m,
                radius_m,
            } => Self::Capsule {
                half_length_m,
                radius_m: radius_m + margin_m,
            },
            Self::Cylinder {
                half_length_m,
                radius_m,
            } => Self::Cylinder {
                half_length_m: half_length_m + margin_m,
                radius_m: radius_m + margin_m,
            },
            Self::Plane { normal } => Self::Plane { normal },
            Self::Convex { .. } if margin_m == 0.0 => self.clone(),
            // Never `None` for a hull parry made (its vertices span a volume, and so do the
            // grown ones); the hull as it is then, rather than no collider.
            Self::Convex { ref hull, .. } => match convex::inflated(hull, margin_m) {
                Some(grown) => Self::convex(grown),
                None => self.clone(),
            },
        }
    }

    /// The point of the collider's surface nearest to `point_in_world` when the collider is at
    /// `world_from_shape`.
    pub fn nearest_surface_point(
        &self,
        world_from_shape: &Isometry3<f64>,
        point_in_world: &Point3<f64>,
    ) -> Point3<f64> {
        self.with_parry(|shape, rotation| {
            let pose = parry_pose(world_from_shape, rotation);
            let p = shape
                .project_point(&pose, glam(&point_in_world.coords), false)
                .point;
            Point3::from(nalg(&p))
        })
    }

    /// Calls `f` with the parry shape and the rotation from parry's shape frame to this
    /// collider's frame (parry's cylinder lies along y, ours along z).
    pub(super) fn with_parry<R>(&self, f: impl FnOnce(&dyn ParryShape, Option<Rot3>) -> R) -> R {
        match *self {
            Self::Sphere { radius_m } => f(&Ball::new(radius_m), None),
            Self::Box { half_extents_m } => f(&Cuboid::new(glam(&half_extents_m)), None),
            Self::Capsule {
                half_length_m,
                radius_m,
            } => f(&Capsule::new_z(half_length_m, radius_m), None),
            Self::Cylinder {
                half_length_m,
                radius_m,
            } => f(
                &Cylinder::new(half_length_m, radius_m),
                // y (parry's axis) to z: a quarter turn about x.
                Some(Rot3::from_rotation_x(std::f64::consts::FRAC_PI_2)),
            ),
            Self::Plane { normal } => f(&HalfSpace::new(glam(&normal)), None),
            Self::Convex { ref hull, .. } => f(hull.as_ref(), None),
        }
    }
}

/// A shape attached to a body (body 0: static geometry).
#[derive(Clone, Debug, PartialEq)]
pub struct Collider {
    /// Name (the body's, the static shape's or the plane's).
    pub name: String,
    /// The body it moves with.
    pub body: BodyId,
    /// Its geometry.
    pub shape: ColliderShape,
    /// Its pose in the body frame (the world pose for static geometry).
    pub body_from_shape: Isometry3<f64>,
    /// Its surface.
    pub material: Material,
}

pub(super) fn glam(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

pub(super) fn nalg(v: &Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

fn glam_rot(q: &UnitQuaternion<f64>) -> Rot3 {
    Rot3::from_xyzw(q.i, q.j, q.k, q.w)
}

/// The world pose of a collider on a body with pose `body`.
fn world_pose(c: &Collider, body: &BodyPose) -> Isometry3<f64> {
    let world_from_body = Isometry3::from_parts(body.x.into(), body.q);
    world_from_body * c.body_from_shape
}

/// The buffers of [`detect`], kept from call to call so that detection allocates nothing
/// once they have grown: the colliders' world poses and radii, the broad phase's and the
/// narrow phase's.
#[derive(Clone, Default)]
pub(crate) struct DetectScratch {
    pub(super) world: Vec<Isometry3<f64>>,
    pub(super) radius: Vec<f64>,
    pub(super) broad: BroadPhase,
    /// The narrow phase's buffers, one per run of pairs.
    runs: Vec<narrow_phase::RunScratch>,
    /// Per body, whether it sleeps (fixed for this step; empty: none): pairs of two fixed
    /// bodies (sleeping or the ground) are not looked at.
    pub(crate) asleep: Vec<bool>,
}

impl DetectScratch {
    /// The candidate pairs of the last detection (after the broad phase).
    #[cfg(test)]
    pub(super) fn pair_count(&self) -> usize {
        self.broad.pairs.len()
    }
}

impl std::fmt::Debug for DetectScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DetectScratch")
            .field("colliders", &self.world.len())
            .field("pairs", &self.broad.pairs.len())
            .finish_non_exhaustive()
    }
}

/// The most contact points one detection keeps: about 2 GB with their rows, impulses and
/// report, forty times what a pile of 100 000 bodies (the scene limit) at rest holds.
pub const MAX_CONTACT_POINTS: usize = 4_000_000;

/// Detects the contact points of all allowed pairs at the poses `poses` (indexed by body),
/// within `prediction_m(pair)` beyond touching. `reach_m(body)` bounds a body's share of
/// that distance: prediction_m(a, b) ≤ reach_m(a) + reach_m(b). Points are appended to `out`
/// in collider order (deterministic), so `out` is sorted by [`ContactPoint::key`] (unique).
///
/// At most `model.max_points` points are found: detection stops there and returns
/// `false` (a scene flying apart, whose prediction distances grow with its speeds, would
/// otherwise fill the memory with points; the step is then refused, see
/// `solver::failure`).
///
/// The broad phase is parry's bounding-volume hierarchy over the colliders' bounding boxes
/// (bounding sphere plus reach); planes, which have no bounding box, are paired with every
/// collider. The candidates are then taken in collider order, bounding spheres first.
pub(crate) fn detect(
    model: &ContactModel,
    poses: &[BodyPose],
    prediction_m: impl Fn(BodyId, BodyId) -> f64 + Sync,
    reach_m: impl Fn(BodyId) -> f64,
    scratch: &mut DetectScratch,
    out: &mut Vec<ContactPoint>,
) -> bool {
    out.clear();
    if all_fixed(model, &scratch.asleep) {
        return true;
    }
    world_poses_and_radii(model, poses, scratch);
    let DetectScratch {
        world,
        radius,
        broad,
        runs,
        asleep,
    } = scratch;
    broad.find(model, reach_m, world, radius);
    let inputs = narrow_phase::Inputs {
        model,
        world,
        radius,
        asleep,
    };
    narrow_phase::contacts(&inputs, &broad.pairs, &prediction_m, runs, out)
}

/// Whether every collider is fixed (a settled pile asleep): then no pair can touch, and the
/// hierarchy is not refitted (its next refit moves every leaf anyway).
fn all_fixed(model: &ContactModel, asleep: &[bool]) -> bool {
    !asleep.is_empty() && model.colliders.iter().all(|c| fixed(asleep, c.body))
}

/// Whether a body is fixed for this detection: the ground, or asleep (`asleep` by body).
#[inline(always)]
pub(super) fn fixed(asleep: &[bool], b: BodyId) -> bool {
    b == GROUND || asleep.get(b).copied().unwrap_or(false)
}

/// Each collider's world pose and bounding radius (m; infinite for a plane), into `scratch`.
pub(super) fn world_poses_and_radii(
    model: &ContactModel,
    poses: &[BodyPose],
    scratch: &mut DetectScratch,
) {
    scratch.world.clear();
    scratch.radius.clear();
    for c in &model.colliders {
        scratch.world.push(world_pose(c, &poses[c.body]));
        scratch.radius.push(c.shape.bounding_radius_m());
    }
}

pub(super) fn parry_pose(w: &Isometry3<f64>, shape_rotation: Option<Rot3>) -> Pose {
    let pose = Pose::from_parts(glam(&w.translation.vector), glam_rot(&w.rotation));
    match shape_rotation {
        Some(r) => pose * Pose::from_rotation(r),
        None => pose,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::contact::InequalityMethod;

    /// A deterministic uniform sequence in [0, 1) (a 64-bit linear congruential generator).
    pub(in crate::contact) struct Lcg(pub(in crate::contact) u64);

    impl Lcg {
        pub(in crate::contact) fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// `bodies` shapes scattered through the cube [0, `extent_m`]³ over the desk plane: spheres
    /// (even bodies) and boxes (odd) of size `size_m[0] + size_m[1]·u`, a box's half extents
    /// (1, `aspect[0]`, `aspect[1]`) times its size, each turned about a random axis by up to
    /// `turn_rad` (not turned, and no numbers drawn for it, at 0). Body 0, the ground, first.
    pub(in crate::contact) fn scatter(
        bodies: usize,
        rng: &mut Lcg,
        size_m: [f64; 2],
        aspect: [f64; 2],
        extent_m: f64,
        turn_rad: f64,
    ) -> (ContactModel, Vec<BodyPose>) {
        let mut model = ContactModel::new(1.0e-3, InequalityMethod::Right);
        let mut poses = vec![BodyPose::new(Vector3::zeros(), UnitQuaternion::identity())];
        for body in 1..=bodies {
            let size = size_m[0] + size_m[1] * rng.uniform();
            let shape = if body % 2 == 0 {
                ColliderShape::Sphere { radius_m: size }
            } else {
                ColliderShape::Box {
                    half_extents_m: Vector3::new(size, aspect[0] * size, aspect[1] * size),
                }
            };
            model.add(
                format!("b{body}"),
                body,
                shape,
                Isometry3::identity(),
                Material::default(),
            );
            let x = Vector3::new(rng.uniform(), rng.uniform(), rng.uniform()) * extent_m;
            let q = if turn_rad == 0.0 {
                UnitQuaternion::identity()
            } else {
                let turn = Vector3::new(rng.uniform(), rng.uniform(), rng.uniform());
                UnitQuaternion::from_scaled_axis(turn * turn_rad)
            };
            poses.push(BodyPose::new(x, q));
        }
        model
            .add_plane("desk", Vector3::z(), Vector3::zeros(), Material::default())
            .unwrap();
        (model, poses)
    }
}
