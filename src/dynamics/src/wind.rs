//! Virtual wind from a microphone: the wind law of the "virtual mobile" paper.
//!
//! The user blows from a source disc of radius r0 (the mouth); the wind fills a cone whose
//! apex lies l0 behind the disc ([`WindCone`]). With the microphone level above its noise
//! floor, the source speed is
//!
//! ```text
//! v0 = gain · max(0, level − floor)                       [m/s]
//! v(l1) = v0 · (l0 / l1)²                                 (l1: distance from the apex)
//! F_face = α · A · v0² / l1⁴ · (n_v · n_a) · n_a  + F_rand,   |F_rand| < β |F_face|
//! ```
//!
//! for a face of area A with outward unit normal n_a, where n_v is the unit wind direction at
//! the face (radially out of the apex). Only faces that look at the apex (n_v · n_a < 0) are
//! pushed, so the force points into the body, along −n_a. Faces outside the cone, behind the
//! source disc, or hidden from the apex by another body (a ray cast from the apex to the
//! face centre meets another body's shape first) get no force. The force acts at the face
//! centre, so it makes a torque as well.
//!
//! **Units.** `level` and `floor` are RMS with full scale 1, so `gain` is in m/s per unit
//! RMS. α is in kg·m (= N·s²): `F [N] = α [kg·m] · A [m²] · v0² [m²/s²] / l1⁴ [m⁴]`. Physically
//! the dynamic pressure ½ ρ v² C_d on the face gives α = ½ ρ C_d l0⁴
//! ([`WindParams::alpha_from_drag`]); the scene may choose a larger α to make a breath
//! visible.
//!
//! **Random part.** Each face draws a vector uniformly from the ball of radius β |F_face|
//! (three uniform numbers per face and call, for every face, whether or not it is pushed, so
//! one face's gusts do not depend on the others' visibility). The generator is ChaCha8 from
//! the configured seed: the same seed and inputs give bit-identical forces.
//!
//! Faces come from the bodies' visual shapes ([`faces::body_faces`], patches no larger than
//! `max_patch_m`), computed once per shape in the body frame.

pub mod cone;
pub mod element;
pub mod faces;
pub mod primitive;
pub mod raycast;
pub mod schedule;

pub use cone::{ConeError, WindCone};
pub use element::{WindBody, WindElement, WindSettings, WindSettingsError};
pub use faces::{body_faces, Face};
pub use primitive::Primitive;
pub use raycast::ray_hit;
pub use schedule::{LevelSchedule, ScheduleError};

use nalgebra::{Isometry3, Point3, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Relative tolerance when deciding that a ray meets another body before the face.
const OCCLUSION_EPS_M: f64 = 1e-9;

/// The parameters of the wind law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindParams {
    /// Source speed per unit of level above the floor (m/s per unit RMS).
    pub gain_m_per_s: f64,
    /// Force coefficient α (kg·m, see the module docs).
    pub alpha_kg_m: f64,
    /// Bound of the random part relative to the deterministic force (0 ≤ β < 1 sensible).
    pub beta: f64,
    /// Largest edge of a face patch (m).
    pub max_patch_m: f64,
}

impl WindParams {
    /// α for air of density `rho_kg_per_m3` on faces of drag coefficient `drag_coefficient`
    /// with a cone of l0 = `l0_m`: ½ ρ C_d l0⁴ (kg·m).
    pub fn alpha_from_drag(rho_kg_per_m3: f64, drag_coefficient: f64, l0_m: f64) -> f64 {
        0.5 * rho_kg_per_m3 * drag_coefficient * l0_m.powi(4)
    }

    /// The source speed v0 = gain · max(0, level − floor) (m/s).
    pub fn source_speed_m_per_s(&self, level: f64, floor: f64) -> f64 {
        let above = level - floor;
        if above.is_finite() && above > 0.0 {
            self.gain_m_per_s * above
        } else {
            0.0
        }
    }
}

/// A body the wind may push: its index, its shape and its pose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindTarget {
    /// The body's index (as the solver numbers them).
    pub body: usize,
    /// Its visual shape.
    pub primitive: Primitive,
    /// Its pose.
    pub world_from_body: Isometry3<f64>,
}

/// The wind's force on one face.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaceForce {
    /// The body pushed.
    pub body: usize,
    /// Where the force acts: the face centre (world, m).
    pub point_in_world: Point3<f64>,
    /// The force (world, N), random part included.
    pub force_in_world: Vector3<f64>,
}

/// The deterministic wind force on a face (world frame) for source speed `v0_m_per_s`, and
/// the face's distance from the apex; `None` when the face is outside the cone, behind the
/// source disc, or turned away from the apex. Occlusion is not considered here.
pub fn face_force(
    cone: &WindCone,
    alpha_kg_m: f64,
    v0_m_per_s: f64,
    face_in_world: &Face,
) -> Option<(f64, Vector3<f64>)> {
    let (l1, n_v) = cone.reach(&face_in_world.centre)?;
    let cos = n_v.dot(&face_in_world.normal);
    if cos >= 0.0 {
        return None;
    }
    let l1_sq = l1 * l1;
    let magnitude = alpha_kg_m * face_in_world.area_m2 * v0_m_per_s * v0_m_per_s / (l1_sq * l1_sq);
    Some((l1, face_in_world.normal.into_inner() * (magnitude * cos)))
}

/// True when the segment from the apex to `point` (at distance `l1_m`) meets a target other
/// than `skip` before reaching the point.
pub fn occluded(
    targets: &[WindTarget],
    skip: usize,
    apex_in_world: &Point3<f64>,
    point_in_world: &Point3<f64>,
    l1_m: f64,
) -> bool {
    let occluders: Vec<Occluder> = targets
        .iter()
        .map(|t| Occluder::new(t, apex_in_world))
        .collect();
    occluded_by(&occluders, skip, apex_in_world, point_in_world, l1_m)
}

/// A target prepared for many rays from the same apex: the apex in its body frame and a
/// bounding sphere for a quick miss.
#[derive(Debug, Clone, Copy)]
struct Occluder {
    primitive: Primitive,
    centre_in_world: Point3<f64>,
    radius_m: f64,
    apex_in_body: Vector3<f64>,
    body_from_world: nalgebra::UnitQuaternion<f64>,
}

impl Occluder {
    fn new(t: &WindTarget, apex_in_world: &Point3<f64>) -> Self {
        Self {
            primitive: t.primitive,
            centre_in_world: Point3::from(t.world_from_body.translation.vector),
            radius_m: t.primitive.bounding_radius_m(),
            apex_in_body: t
                .world_from_body
                .inverse_transform_point(apex_in_world)
                .coords,
            body_from_world: t.world_from_body.rotation.inverse(),
        }
    }
}

fn occluded_by(
    occluders: &[Occluder],
    skip: usize,
    apex_in_world: &Point3<f64>,
    point_in_world: &Point3<f64>,
    l1_m: f64,
) -> bool {
    let dir = (point_in_world - apex_in_world) / l1_m;
    occluders.iter().enumerate().any(|(k, o)| {
        if k == skip {
            return false;
        }
        // Quick miss: the segment passes farther from the centre than the bounding radius.
        let c = o.centre_in_world - apex_in_world;
        let along = c.dot(&dir).clamp(0.0, l1_m);
        if (c - dir * along).norm_squared() > o.radius_m * o.radius_m {
            return false;
        }
        let d = o.body_from_world * dir;
        raycast::ray_hit_in_body(&o.primitive, &o.apex_in_body, &d)
            .is_some_and(|hit| hit < l1_m - OCCLUSION_EPS_M)
    })
}

/// The wind: cone, parameters, the seeded generator of the random part and the faces of the
/// shapes it has seen (cached in body frames).
#[derive(Debug, Clone)]
pub struct Wind {
    /// Where it blows.
    pub cone: WindCone,
    /// The law's parameters.
    pub params: WindParams,
    rng: ChaCha8Rng,
    faces_in_body: Vec<(Primitive, Vec<Face>)>,
    occluders: Vec<Occluder>,
}

impl Wind {
    /// A wind whose random part is seeded with `seed`.
    pub fn new(cone: WindCone, params: WindParams, seed: u64) -> Self {
        Self {
            cone,
            params,
            rng: ChaCha8Rng::seed_from_u64(seed),
            faces_in_body: Vec::new(),
            occluders: Vec::new(),
        }
    }

    /// Computes the forces on every visible face of `targets` for source speed `v0_m_per_s`
    /// into `out` (cleared first). Advances the random generator by three numbers per face.
    pub fn forces(&mut self, v0_m_per_s: f64, targets: &[WindTarget], out: &mut Vec<FaceForce>) {
        out.clear();
        if self.faces_in_body.len() != targets.len() {
            self.faces_in_body.resize_with(targets.len(), || {
                (Primitive::Sphere { radius_m: 0.0 }, Vec::new())
            });
        }
        let apex = self.cone.apex_in_world;
        self.occluders.clear();
        self.occluders
            .extend(targets.iter().map(|t| Occluder::new(t, &apex)));
        for (k, target) in targets.iter().enumerate() {
            let cache = &mut self.faces_in_body[k];
            if cache.0 != target.primitive || cache.1.is_empty() {
                *cache = (
                    target.primitive,
                    body_faces(&target.primitive, self.params.max_patch_m),
                );
            }
            for face in &cache.1 {
                let (u1, u2, u3): (f64, f64, f64) =
                    (self.rng.random(), self.rng.random(), self.rng.random());
                if v0_m_per_s <= 0.0 {
                    continue;
                }
                let face = face.transformed(&target.world_from_body);
                let Some((l1, f)) =
                    face_force(&self.cone, self.params.alpha_kg_m, v0_m_per_s, &face)
                else {
                    continue;
                };
                if f == Vector3::zeros() || occluded_by(&self.occluders, k, &apex, &face.centre, l1)
                {
                    continue;
                }
                let random = random_in_ball(u1, u2, u3) * (self.params.beta * f.norm());
                out.push(FaceForce {
                    body: target.body,
                    point_in_world: face.centre,
                    force_in_world: f + random,
                });
            }
        }
    }
}

/// A point of the open unit ball from three uniform numbers in [0, 1): uniform direction
/// (z = cos θ uniform, φ uniform) and radius u^(1/3), so the density is uniform in volume.
fn random_in_ball(u1: f64, u2: f64, u3: f64) -> Vector3<f64> {
    let z = 2.0 * u1 - 1.0;
    let phi = 2.0 * std::f64::consts::PI * u2;
    let s = (1.0 - z * z).max(0.0).sqrt();
    Vector3::new(s * phi.cos(), s * phi.sin(), z) * u3.cbrt()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Unit;

    /// Wind along +x from a disc at the origin, l0 = 0.1 m, r0 = 0.05 m.
    fn cone() -> WindCone {
        WindCone::from_source(Point3::origin(), Vector3::x(), 0.1, 0.05).expect("cone")
    }

    fn params(beta: f64) -> WindParams {
        WindParams {
            gain_m_per_s: 20.0,
            alpha_kg_m: 1e-4,
            beta,
            max_patch_m: 0.01,
        }
    }

    fn facing_wind(x: f64) -> Face {
        Face {
            centre: Point3::new(x, 0.0, 0.0),
            normal: Unit::new_unchecked(-Vector3::x()),
            area_m2: 1e-4,
        }
    }

    /// A thin square plate (0.04 m, normal along x) at x.
    fn plate(body: usize, x: f64) -> WindTarget {
        WindTarget {
            body,
            primitive: Primitive::Cuboid {
                half_extents_m: [0.001, 0.02, 0.02],
            },
            world_from_body: Isometry3::translation(x, 0.0, 0.0),
        }
    }

    fn total(forces: &[FaceForce], body: usize) -> Vector3<f64> {
        forces
            .iter()
            .filter(|f| f.body == body)
            .map(|f| f.force_in_world)
            .sum()
    }

    #[test]
    fn source_speed_is_gain_times_level_above_floor() {
        let p = params(0.0);
        assert!((p.source_speed_m_per_s(0.25, 0.05) - 4.0).abs() < 1e-12);
        assert_eq!(p.source_speed_m_per_s(0.01, 0.05), 0.0);
        assert_eq!(p.source_speed_m_per_s(f64::NAN, 0.05), 0.0);
    }

    #[test]
    fn face_force_follows_the_law_and_falls_with_the_fourth_power() {
        let c = cone();
        let alpha = 1e-4;
        let v0 = 5.0;
        // Face at x = 0.3: l1 = 0.4 m, head-on.
        let (l1, f) = face_force(&c, alpha, v0, &facing_wind(0.3)).expect("in the cone");
        assert!((l1 - 0.4).abs() < 1e-12);
        let expected = alpha * 1e-4 * v0 * v0 / 0.4f64.powi(4);
        assert!(
            (f - Vector3::new(expected, 0.0, 0.0)).norm() < 1e-12 * expected,
            "{f:?}"
        );
        // Twice the distance from the apex: a sixteenth of the force (speed a quarter).
        let (l1b, fb) = face_force(&c, alpha, v0, &facing_wind(0.7)).expect("in the cone");
        assert!((l1b - 0.8).abs() < 1e-12);
        assert!((fb.x / f.x - 1.0 / 16.0).abs() < 1e-12);
        assert!((c.speed_at(v0, l1b) / c.speed_at(v0, l1) - 0.25).abs() < 1e-12);
        // Twice v0: four times the force.
        let (_, f2) = face_force(&c, alpha, 2.0 * v0, &facing_wind(0.3)).expect("in");
        assert!((f2.x / f.x - 4.0).abs() < 1e-12);
    }

    #[test]
    fn oblique_faces_get_the_cosine_times_the_normal() {
        let c = cone();
        let n = Unit::new_normalize(Vector3::new(-1.0, 1.0, 0.0));
        let face = Face {
            centre: Point3::new(0.3, 0.0, 0.0),
            normal: n,
            area_m2: 1e-4,
        };
        let (_, f) = face_force(&c, 1e-4, 5.0, &face).expect("in");
        let (_, head_on) = face_force(&c, 1e-4, 5.0, &facing_wind(0.3)).expect("in");
        let cos = -std::f64::consts::FRAC_1_SQRT_2;
        assert!((f - n.into_inner() * (head_on.x * cos)).norm() < 1e-15);
        // Pushed along −n: into the face.
        assert!(f.dot(&n) < 0.0);
    }

    #[test]
    fn no_force_outside_the_cone_behind_the_disc_or_on_lee_faces() {
        let c = cone();
        // At x = 0.3 (axial 0.4) the cone's radius is 0.2.
        let mut off_axis = facing_wind(0.3);
        off_axis.centre.y = 0.21;
        assert!(face_force(&c, 1e-4, 5.0, &off_axis).is_none());
        off_axis.centre.y = 0.19;
        assert!(face_force(&c, 1e-4, 5.0, &off_axis).is_some());
        assert!(face_force(&c, 1e-4, 5.0, &facing_wind(-0.05)).is_none());
        let mut lee = facing_wind(0.3);
        lee.normal = Vector3::x_axis();
        assert!(face_force(&c, 1e-4, 5.0, &lee).is_none());

        let mut wind = Wind::new(c, params(0.0), 1);
        let mut out = Vec::new();
        let far_side = WindTarget {
            world_from_body: Isometry3::translation(0.3, 0.5, 0.0),
            ..plate(1, 0.0)
        };
        wind.forces(5.0, &[far_side], &mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn an_occluded_plate_gets_no_force_until_the_front_one_moves() {
        let mut wind = Wind::new(cone(), params(0.0), 1);
        let mut out = Vec::new();
        let front = plate(1, 0.3);
        let back = plate(2, 0.5);
        wind.forces(5.0, &[front, back], &mut out);
        let f_front = total(&out, 1);
        assert!(
            f_front.x > 0.0,
            "the front plate is pushed downwind: {f_front:?}"
        );
        assert_eq!(
            total(&out, 2),
            Vector3::zeros(),
            "the back plate is in the front one's shadow"
        );
        // Only the windward face of the front plate is pushed, and the force is what the law
        // gives summed over its patches (the cone is wide enough to cover it).
        assert!(out
            .iter()
            .all(|f| (f.point_in_world.x - 0.299).abs() < 1e-12));
        // Move the front plate out of the way: the back plate catches the wind.
        let aside = WindTarget {
            world_from_body: Isometry3::translation(0.3, 0.5, 0.0),
            ..front
        };
        wind.forces(5.0, &[aside, back], &mut out);
        assert!(total(&out, 2).x > 0.0);
        // Partly hidden: a plate shifted half its width shades only part of the back plate.
        let half = WindTarget {
            world_from_body: Isometry3::translation(0.3, 0.02, 0.0),
            ..front
        };
        wind.forces(5.0, &[half, back], &mut out);
        let partial = total(&out, 2).x;
        wind.forces(5.0, &[aside, back], &mut out);
        let full = total(&out, 2).x;
        assert!(
            partial > 0.2 * full && partial < 0.8 * full,
            "{partial} of {full}"
        );
    }

    #[test]
    fn force_acts_at_face_centres_and_makes_torque() {
        let mut wind = Wind::new(cone(), params(0.0), 1);
        let mut out = Vec::new();
        // A plate whose centre is off the axis: the patches nearer the apex are pushed harder.
        let p = WindTarget {
            world_from_body: Isometry3::translation(0.3, 0.05, 0.0),
            ..plate(1, 0.0)
        };
        wind.forces(5.0, &[p], &mut out);
        let centre = Point3::new(0.3, 0.05, 0.0);
        let torque: Vector3<f64> = out
            .iter()
            .map(|f| (f.point_in_world - centre).cross(&f.force_in_world))
            .sum();
        assert!(torque.norm() > 0.0);
    }

    #[test]
    fn random_part_is_bounded_by_beta_and_repeats_with_the_seed() {
        let targets = [plate(1, 0.3), plate(2, 0.4)];
        let shifted = [
            targets[0],
            WindTarget {
                world_from_body: Isometry3::translation(0.4, 0.015, 0.0),
                ..targets[1]
            },
        ];
        let beta = 0.3;
        let mut calm = Wind::new(cone(), params(0.0), 11);
        let mut gusty = Wind::new(cone(), params(beta), 11);
        let mut again = Wind::new(cone(), params(beta), 11);
        let mut other = Wind::new(cone(), params(beta), 12);
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut max_ratio: f64 = 0.0;
        for step in 0..50 {
            let t = if step % 2 == 0 { &targets } else { &shifted };
            calm.forces(5.0, t, &mut a);
            gusty.forces(5.0, t, &mut b);
            again.forces(5.0, t, &mut c);
            other.forces(5.0, t, &mut d);
            assert_eq!(a.len(), b.len());
            for (det, rnd) in a.iter().zip(&b) {
                assert_eq!(det.point_in_world, rnd.point_in_world);
                let ratio =
                    (rnd.force_in_world - det.force_in_world).norm() / det.force_in_world.norm();
                assert!(
                    ratio < beta,
                    "random part {ratio} of the force at step {step}"
                );
                max_ratio = max_ratio.max(ratio);
            }
            assert!(b
                .iter()
                .zip(&c)
                .all(|(x, y)| x.force_in_world.map(f64::to_bits)
                    == y.force_in_world.map(f64::to_bits)));
            assert!(b
                .iter()
                .zip(&d)
                .any(|(x, y)| x.force_in_world != y.force_in_world));
        }
        // The bound is used, not just respected.
        assert!(max_ratio > 0.8 * beta, "largest random part {max_ratio}");
    }

    #[test]
    fn no_level_above_the_floor_means_no_force() {
        let mut wind = Wind::new(cone(), params(0.5), 3);
        let mut out = Vec::new();
        let v0 = wind.params.source_speed_m_per_s(0.01, 0.02);
        wind.forces(v0, &[plate(1, 0.3)], &mut out);
        assert!(out.is_empty());
    }
}
