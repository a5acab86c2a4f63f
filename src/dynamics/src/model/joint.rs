//! Joints: ball, hinge, prismatic, slot (pin in a slot) and fixed.
//!
//! Every joint is built from three kinds of position-level constraint rows ψ:
//! - *point* rows (3): the two anchors coincide, ψ = p₁ − p₂ (m, world axes);
//! - *slide* rows (2): the anchor of body 2 stays on the line through the anchor of body 1
//!   along the slide axis, ψ = (p₂ − p₁)·bᵢ with bᵢ ⊥ axis fixed in body 1 (m);
//! - *angular* rows: a hinge keeps its axis a₁ (body 1) perpendicular to two vectors u₂, w₂
//!   of body 2 (ψ = a₁·u₂, a₁·w₂, 2 rows), a lock keeps the relative orientation
//!   (ψ = 2·vec(q₁ q₀ q₂⁻¹), 3 rows). Angular rows are dimensionless (rad); the diagnostics
//!   count them as metres at a 1 m lever arm, which is stricter than any body of our scenes.
//!
//! | kind      | rows                      | free motion                          |
//! |-----------|---------------------------|--------------------------------------|
//! | ball      | 3 point                   | all rotations                        |
//! | hinge     | 3 point + 2 angular       | rotation about the axis              |
//! | prismatic | 2 slide + 3 lock          | translation along the axis           |
//! | slot      | 2 slide + 2 angular       | translation along the axis and rotation about the hinge axis (the paper's "slider" of a scissor lift: a roller in a slot) |
//! | fixed     | 3 point + 3 lock          | none                                 |
//!
//! The Jacobian rows are written so that the row rate is `lin·(v₁ − v₂) + ang₁·ω₁ + ang₂·ω₂`.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use super::body::{Body, BodyId, Pose};
use super::limit::JointLimits;
use crate::linalg::block::{BlockVector, MAX_ROWS};

/// The kind of a joint (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// Spherical joint: the anchors coincide.
    Ball,
    /// Revolute joint about an axis.
    Hinge,
    /// Translational joint along an axis, no relative rotation.
    Prismatic,
    /// Pin in a slot: translation along an axis and rotation about a hinge axis.
    Slot,
    /// Welded: no relative motion.
    Fixed,
}

impl JointKind {
    /// Number of constraint rows.
    pub fn rows(self) -> usize {
        match self {
            JointKind::Ball => 3,
            JointKind::Hinge => 5,
            JointKind::Prismatic => 5,
            JointKind::Slot => 4,
            JointKind::Fixed => 6,
        }
    }

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            JointKind::Ball => "ball",
            JointKind::Hinge => "hinge",
            JointKind::Prismatic => "prismatic",
            JointKind::Slot => "slot",
            JointKind::Fixed => "fixed",
        }
    }
}

/// One Jacobian row (see the module docs for the sign convention).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Row {
    pub(crate) lin: Vector3<f64>,
    pub(crate) ang1: Vector3<f64>,
    pub(crate) ang2: Vector3<f64>,
}

/// A joint between two bodies, with its geometry stored in the body frames.
#[derive(Clone, Debug)]
pub struct Joint {
    /// Unique name from the scene file (used for the CSV reaction columns).
    pub name: String,
    /// Kind of joint.
    pub kind: JointKind,
    /// First body (the reaction is reported on the second).
    pub body1: BodyId,
    /// Second body.
    pub body2: BodyId,
    /// Anchor point in the frame of body 1 (m).
    pub anchor1_in_body1: Vector3<f64>,
    /// Anchor point in the frame of body 2 (m).
    pub anchor2_in_body2: Vector3<f64>,
    slide_perp_in_body1: [Vector3<f64>; 2],
    hinge_axis_in_body1: Vector3<f64>,
    hinge_perp_in_body2: [Vector3<f64>; 2],
    body1_from_body2_rotation: UnitQuaternion<f64>,
    /// Body 2's first hinge perpendicular as body 1 saw it in the initial pose: the angle of
    /// a limit is measured from it ([`super::limit`]).
    hinge_reference_in_body1: Vector3<f64>,
    /// The joint's limits (default method; none unless the scene sets them).
    pub limits: JointLimits,
    /// Viscous damping on the joint's coordinate (hinge: N·m·s/rad on the relative angular
    /// rate about the axis; prismatic: N·s/m on the relative sliding rate); 0 elsewhere. Both
    /// methods book its dissipation in the energy balance (see [`crate::model::damper`]).
    pub damping: f64,
}

/// Two unit vectors perpendicular to `axis` and to each other.
fn perpendiculars(axis: &Vector3<f64>) -> [Vector3<f64>; 2] {
    let helper = if axis.x.abs() < 0.6 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let b = axis.cross(&helper).normalize();
    let c = axis.cross(&b);
    [b, c]
}

impl Joint {
    /// Builds a joint from anchors given in each body frame and axes given in the world frame
    /// at the bodies' current poses. `axis_in_world` is the hinge axis of a hinge and the slide
    /// axis of a prismatic or slot joint; `hinge_axis_in_world` is the slot's rotation axis.
    /// Axes must be unit vectors (the scene loader normalises and checks them).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: impl Into<String>,
        kind: JointKind,
        bodies: &[Body],
        body1: BodyId,
        body2: BodyId,
        anchor1_in_body1: Vector3<f64>,
        anchor2_in_body2: Vector3<f64>,
        axis_in_world: Vector3<f64>,
        hinge_axis_in_world: Vector3<f64>,
    ) -> Self {
        let q1 = bodies[body1].world_from_body_rotation;
        let q2 = bodies[body2].world_from_body_rotation;
        let (slide_axis, hinge_axis) = match kind {
            JointKind::Hinge => (axis_in_world, axis_in_world),
            JointKind::Slot => (axis_in_world, hinge_axis_in_world),
            _ => (axis_in_world, axis_in_world),
        };
        let slide_perp = perpendiculars(&slide_axis);
        let hinge_perp = perpendiculars(&hinge_axis);
        Self {
            name: name.into(),
            kind,
            body1,
            body2,
            anchor1_in_body1,
            anchor2_in_body2,
            slide_perp_in_body1: slide_perp.map(|b| q1.inverse_transform_vector(&b)),
            hinge_axis_in_body1: q1.inverse_transform_vector(&hinge_axis),
            hinge_perp_in_body2: hinge_perp.map(|b| q2.inverse_transform_vector(&b)),
            body1_from_body2_rotation: q1.inverse() * q2,
            hinge_reference_in_body1: q1.inverse_transform_vector(&hinge_perp[0]),
            limits: JointLimits::default(),
            damping: 0.0,
        }
    }

    /// Number of constraint rows.
    pub fn rows(&self) -> usize {
        self.kind.rows()
    }

    /// The hinge axis fixed in body 1 (unit; meaningful for hinge and slot joints).
    pub fn hinge_axis_in_body1(&self) -> Vector3<f64> {
        self.hinge_axis_in_body1
    }

    /// The slide axis fixed in body 1 (unit; meaningful for prismatic and slot joints).
    pub fn slide_axis_in_body1(&self) -> Vector3<f64> {
        self.slide_perp_in_body1[0].cross(&self.slide_perp_in_body1[1])
    }

    /// The two unit vectors ⊥ the slide axis, fixed in body 1, whose slide rows ψ = (p₂ − p₁)·b
    /// are (meaningful for prismatic and slot joints).
    pub(crate) fn slide_perp_in_body1(&self) -> &[Vector3<f64>; 2] {
        &self.slide_perp_in_body1
    }

    /// Body 2's first hinge perpendicular in the initial pose, fixed in body 1 (the zero of
    /// a limited angle).
    pub(crate) fn hinge_reference_in_body1(&self) -> &Vector3<f64> {
        &self.hinge_reference_in_body1
    }

    /// The two unit vectors ⊥ the hinge axis, fixed in body 2, whose angular rows ψ = a₁·u
    /// are (meaningful for hinge and slot joints).
    pub(crate) fn hinge_perp_in_body2(&self) -> &[Vector3<f64>; 2] {
        &self.hinge_perp_in_body2
    }

    /// The joint's attachment vectors in the world at the poses `p1`, `p2`.
    pub(crate) fn geometry(&self, p1: &Pose, p2: &Pose) -> JointGeometry {
        let mut g = JointGeometry::default();
        self.set_geometry(p1, p2, &mut g);
        g
    }

    /// Sets `g` to the joint's attachment vectors at the poses `p1`, `p2` (in place: the
    /// solver does this several times per step).
    pub(crate) fn set_geometry(&self, p1: &Pose, p2: &Pose, g: &mut JointGeometry) {
        g.x1 = p1.x;
        g.x2 = p2.x;
        g.r1 = p1.r * self.anchor1_in_body1;
        g.r2 = p2.r * self.anchor2_in_body2;
        if matches!(self.kind, JointKind::Prismatic | JointKind::Slot) {
            g.slide_perp = self.slide_perp_in_body1.map(|b| p1.r * b);
        }
        match self.kind {
            JointKind::Hinge | JointKind::Slot => {
                g.axis = p1.r * self.hinge_axis_in_body1;
                g.hinge_perp = self.hinge_perp_in_body2.map(|u| p2.r * u);
            }
            JointKind::Prismatic | JointKind::Fixed => {
                g.lock = lock_error(&p1.q, &self.body1_from_body2_rotation, &p2.q);
            }
            JointKind::Ball => {}
        }
    }

    /// Position-level constraint ψ at the given poses (first `rows()` entries).
    pub(crate) fn psi(&self, p1: &Pose, p2: &Pose) -> BlockVector {
        self.psi_of(&self.geometry(p1, p2))
    }

    /// Position-level constraint ψ of the geometry `g` (first `rows()` entries).
    pub(crate) fn psi_of(&self, g: &JointGeometry) -> BlockVector {
        let mut psi = [0.0; MAX_ROWS];
        self.psi_into(g, &mut psi);
        psi
    }

    /// [`Self::psi_of`] written in place, into the solver's joint blocks.
    pub(crate) fn psi_into(&self, g: &JointGeometry, psi: &mut BlockVector) {
        *psi = [0.0; MAX_ROWS];
        let a1 = g.x1 + g.r1;
        let a2 = g.x2 + g.r2;
        let mut i = 0;
        match self.kind {
            JointKind::Ball | JointKind::Hinge | JointKind::Fixed => {
                let d = a1 - a2;
                psi[0] = d.x;
                psi[1] = d.y;
                psi[2] = d.z;
                i = 3;
            }
            JointKind::Prismatic | JointKind::Slot => {
                let d = a2 - a1;
                for b in &g.slide_perp {
                    psi[i] = d.dot(b);
                    i += 1;
                }
            }
        }
        match self.kind {
            JointKind::Hinge | JointKind::Slot => {
                for u in &g.hinge_perp {
                    psi[i] = g.axis.dot(u);
                    i += 1;
                }
            }
            JointKind::Prismatic | JointKind::Fixed => {
                psi[i] = g.lock.x;
                psi[i + 1] = g.lock.y;
                psi[i + 2] = g.lock.z;
            }
            JointKind::Ball => {}
        }
    }

    /// Jacobian rows for the step from poses `s` (start) to `e` (end); see [`Self::rows_of`].
    #[cfg(test)]
    pub(crate) fn jacobian(
        &self,
        p1s: &Pose,
        p1e: &Pose,
        p2s: &Pose,
        p2e: &Pose,
        rows: &mut [Row; MAX_ROWS],
    ) {
        self.rows_of(&self.geometry(p1s, p2s), &self.geometry(p1e, p2e), rows);
    }

    /// Jacobian rows for the step from geometry `s` (start) to `e` (end), built from the mean
    /// of the start and end world vectors (anchor arms, axes). Because the solver turns
    /// bodies with the Cayley map (see [`super::body::advance_rotation`]), for which
    /// R' r − R r = h ω̄ × (R r + R' r)/2 holds exactly, these rows satisfy
    /// ψ(e) − ψ(s) = h J v̄ exactly for point, slide and hinge rows: the constraint impulses
    /// then do no work over a step in which ψ stays zero, which is what keeps the energy
    /// balance exact. With `s == e` they are the ordinary Jacobian at that pose.
    pub(crate) fn rows_of(&self, s: &JointGeometry, e: &JointGeometry, rows: &mut [Row; MAX_ROWS]) {
        let r1 = (s.r1 + e.r1) * 0.5;
        let r2 = (s.r2 + e.r2) * 0.5;
        let mut i = 0;
        match self.kind {
            JointKind::Ball | JointKind::Hinge | JointKind::Fixed => {
                for k in 0..3 {
                    let e = Vector3::ith(k, 1.0);
                    rows[i] = Row {
                        lin: e,
                        ang1: r1.cross(&e),
                        ang2: -r2.cross(&e),
                    };
                    i += 1;
                }
            }
            JointKind::Prismatic | JointKind::Slot => {
                // d = p₂ − p₁ also turns with body 1, hence the extra term in ang1.
                let d = ((s.x2 - s.x1) + (e.x2 - e.x1)) * 0.5 + r2 - r1;
                for (bs, be) in s.slide_perp.iter().zip(&e.slide_perp) {
                    let b = (bs + be) * 0.5;
                    rows[i] = Row {
                        lin: -b,
                        ang1: -(r1 + d).cross(&b),
                        ang2: r2.cross(&b),
                    };
                    i += 1;
                }
            }
        }
        match self.kind {
            JointKind::Hinge | JointKind::Slot => {
                let a = (s.axis + e.axis) * 0.5;
                for (us, ue) in s.hinge_perp.iter().zip(&e.hinge_perp) {
                    let c = a.cross(&((us + ue) * 0.5));
                    rows[i] = Row {
                        lin: Vector3::zeros(),
                        ang1: c,
                        ang2: -c,
                    };
                    i += 1;
                }
            }
            JointKind::Prismatic | JointKind::Fixed => {
                for k in 0..3 {
                    let e = Vector3::ith(k, 1.0);
                    rows[i] = Row {
                        lin: Vector3::zeros(),
                        ang1: e,
                        ang2: -e,
                    };
                    i += 1;
                }
            }
            JointKind::Ball => {}
        }
    }
}

impl Joint {
    /// How the torques of this joint's impulses `lambda` on its two bodies change with each
    /// body's own end-of-step angular velocity, (∂τ₁/∂ω₁′, ∂τ₂/∂ω₂′), at the geometry `g` of
    /// the step's start poses (N·m·s per rad/s). The midpoint arms and axes turn with the
    /// body: r̄ = (r + r′)/2 with r′ = cay(h ω̄) r and ω̄ = (ω₀ + ω′)/2, so
    /// ∂r̄/∂ω′ = −(h/4)[r]×, and a torque r̄ × F changes by (h/4)[F]×[r]×. This is the
    /// geometric stiffness of the step: the solver's Newton iteration needs it (see
    /// `Simulation::update_newton_inertia`). Cross terms between the two bodies and the
    /// turning of a slide's force with body 1 are left out; they only slow the iteration
    /// down, they do not change its solution.
    pub(crate) fn turning_stiffness(
        &self,
        g: &JointGeometry,
        lambda: &BlockVector,
        dt_secs: f64,
    ) -> (Matrix3<f64>, Matrix3<f64>) {
        let (r1, r2) = (&g.r1, &g.r2);
        let mut a1 = Matrix3::zeros();
        let mut a2 = Matrix3::zeros();
        let mut i = 0;
        match self.kind {
            JointKind::Ball | JointKind::Hinge | JointKind::Fixed => {
                // τ₁ = r̄₁ × Λ, τ₂ = r̄₂ × (−Λ).
                let f = Vector3::new(lambda[0], lambda[1], lambda[2]);
                a1 += cross_cross(&f, r1);
                a2 -= cross_cross(&f, r2);
                i = 3;
            }
            JointKind::Prismatic | JointKind::Slot => {
                // Force B = Σ λₖ b̄ₖ on body 2 at its anchor, −B on body 1 at the same point:
                // body 1's arm p = x₂ + r₂ − x₁ does not turn with it, its b̄ₖ do.
                let mut b = Vector3::zeros();
                for perp in &g.slide_perp {
                    b += perp * lambda[i];
                    i += 1;
                }
                let p = g.x2 + r2 - g.x1;
                a1 += cross_cross(&p, &b);
                a2 += cross_cross(&b, r2);
            }
        }
        if matches!(self.kind, JointKind::Hinge | JointKind::Slot) {
            // τ₁ = ā × U, τ₂ = −ā × U with U = Σ μₖ ūₖ; ā turns with body 1, ūₖ with body 2.
            let a = &g.axis;
            let mut u = Vector3::zeros();
            for perp in &g.hinge_perp {
                u += perp * lambda[i];
                i += 1;
            }
            a1 += cross_cross(&u, a);
            a2 += cross_cross(a, &u);
        }
        // Lock rows have constant Jacobians: no turning stiffness.
        let q = 0.25 * dt_secs;
        (a1 * q, a2 * q)
    }
}

/// A joint's attachment vectors in the world at one pair of poses: what its ψ, its rows and
/// its turning stiffness are made from. The solver keeps those of the step's start and of
/// the current prediction, so that each body's rotation turns them once per pose.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JointGeometry {
    /// Positions of the two bodies (m).
    x1: Vector3<f64>,
    x2: Vector3<f64>,
    /// Anchor arms from each body's position to its anchor (m).
    r1: Vector3<f64>,
    r2: Vector3<f64>,
    /// Hinge axis (turns with body 1) and its perpendiculars (turn with body 2).
    axis: Vector3<f64>,
    hinge_perp: [Vector3<f64>; 2],
    /// Perpendiculars of the slide axis (turn with body 1).
    slide_perp: [Vector3<f64>; 2],
    /// Relative-orientation error of the lock rows.
    lock: Vector3<f64>,
}

/// [x]×[y]× = y xᵀ − (x·y) I, without forming the two cross-product matrices.
pub(crate) fn cross_cross(x: &Vector3<f64>, y: &Vector3<f64>) -> Matrix3<f64> {
    let mut m = y * x.transpose();
    let d = x.dot(y);
    m[(0, 0)] -= d;
    m[(1, 1)] -= d;
    m[(2, 2)] -= d;
    m
}

/// Relative-orientation error 2·vec(q₁ q₀ q₂⁻¹), whose rate is ω₁ − ω₂ near zero error.
fn lock_error(
    q1: &UnitQuaternion<f64>,
    q0: &UnitQuaternion<f64>,
    q2: &UnitQuaternion<f64>,
) -> Vector3<f64> {
    let e = (q1 * q0 * q2.inverse()).into_inner();
    let s = if e.w < 0.0 { -2.0 } else { 2.0 };
    e.imag() * s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::body::advance_rotation;
    use nalgebra::{Isometry3, Translation3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn v3(rng: &mut ChaCha8Rng, s: f64) -> Vector3<f64> {
        Vector3::new(
            rng.random_range(-s..s),
            rng.random_range(-s..s),
            rng.random_range(-s..s),
        )
    }

    const ALL_KINDS: [JointKind; 5] = [
        JointKind::Ball,
        JointKind::Hinge,
        JointKind::Slot,
        JointKind::Prismatic,
        JointKind::Fixed,
    ];

    /// A unit body at a random pose.
    fn random_body(rng: &mut ChaCha8Rng) -> Body {
        Body::new(
            "b",
            1.0,
            Vector3::new(1.0, 1.0, 1.0),
            UnitQuaternion::identity(),
            Isometry3::from_parts(
                Translation3::from(v3(rng, 1.0)),
                UnitQuaternion::from_scaled_axis(v3(rng, 2.0)),
            ),
            None,
        )
    }

    /// A joint of `kind` from body 0 to body 1 with the given anchors and random axes.
    fn random_axes_joint(
        kind: JointKind,
        bodies: &[Body],
        a1: Vector3<f64>,
        a2: Vector3<f64>,
        rng: &mut ChaCha8Rng,
    ) -> Joint {
        let (axis, hinge_axis) = (v3(rng, 1.0).normalize(), v3(rng, 1.0).normalize());
        Joint::new("j", kind, bodies, 0, 1, a1, a2, axis, hinge_axis)
    }

    /// The midpoint rows must reproduce the change of ψ over a step exactly (the energy
    /// bookkeeping relies on it), for every kind with point, slide and hinge rows.
    #[test]
    fn midpoint_rows_reproduce_the_change_of_psi() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for kind in ALL_KINDS {
            for _ in 0..20 {
                let bodies = vec![random_body(&mut rng), random_body(&mut rng)];
                let a1 = v3(&mut rng, 0.3);
                let a2 = bodies[1]
                    .world_from_body()
                    .inverse_transform_point(&bodies[0].point_in_world(&a1))
                    .coords;
                let j = random_axes_joint(kind, &bodies, a1, a2, &mut rng);
                let h = 0.01;
                let (v1, w1, v2, w2) = (
                    v3(&mut rng, 1.0),
                    v3(&mut rng, 5.0),
                    v3(&mut rng, 1.0),
                    v3(&mut rng, 5.0),
                );
                let s1 = Pose::of(&bodies[0]);
                let s2 = Pose::of(&bodies[1]);
                let e1 = Pose::new(s1.x + v1 * h, advance_rotation(&s1.q, &w1, h));
                let e2 = Pose::new(s2.x + v2 * h, advance_rotation(&s2.q, &w2, h));
                let mut rows = [Row::default(); MAX_ROWS];
                j.jacobian(&s1, &e1, &s2, &e2, &mut rows);
                let (p0, p1) = (j.psi(&s1, &s2), j.psi(&e1, &e2));
                let exact_rows = match kind {
                    JointKind::Prismatic | JointKind::Fixed => {
                        3 - if kind == JointKind::Prismatic { 1 } else { 0 }
                    }
                    _ => j.rows(),
                };
                for k in 0..exact_rows {
                    let rate =
                        rows[k].lin.dot(&(v1 - v2)) + rows[k].ang1.dot(&w1) + rows[k].ang2.dot(&w2);
                    let change = (p1[k] - p0[k]) / h;
                    assert!(
                        (rate - change).abs() < 1e-9 * (1.0 + change.abs()),
                        "{kind:?} row {k}: {rate} vs {change}"
                    );
                }
            }
        }
    }

    /// The turning stiffness is the derivative of each body's joint torque with respect to
    /// its own end angular velocity (checked by finite differences about a step from rest).
    #[test]
    fn turning_stiffness_is_the_derivative_of_the_midpoint_torques() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let h = 0.01;
        for kind in ALL_KINDS {
            for _ in 0..10 {
                let bodies = vec![random_body(&mut rng), random_body(&mut rng)];
                let a1 = v3(&mut rng, 0.3);
                let a2 = v3(&mut rng, 0.3);
                let j = random_axes_joint(kind, &bodies, a1, a2, &mut rng);
                let mut lambda = [0.0; MAX_ROWS];
                for l in lambda.iter_mut().take(j.rows()) {
                    *l = rng.random_range(-1.0..1.0);
                }
                let (s1, s2) = (Pose::of(&bodies[0]), Pose::of(&bodies[1]));
                // Torques on both bodies when body `b` ends the step with angular velocity w.
                let torques = |b: usize, w: &Vector3<f64>| {
                    let turned = |s: &Pose| Pose::new(s.x, advance_rotation(&s.q, w, 0.5 * h));
                    let (e1, e2) = if b == 0 {
                        (turned(&s1), s2)
                    } else {
                        (s1, turned(&s2))
                    };
                    let mut rows = [Row::default(); MAX_ROWS];
                    j.jacobian(&s1, &e1, &s2, &e2, &mut rows);
                    let mut t = [Vector3::zeros(); 2];
                    for k in 0..j.rows() {
                        t[0] += rows[k].ang1 * lambda[k];
                        t[1] += rows[k].ang2 * lambda[k];
                    }
                    t[b]
                };
                let (k1, k2) = j.turning_stiffness(&j.geometry(&s1, &s2), &lambda, h);
                let eps = 1.0e-6;
                for (b, k) in [(0, k1), (1, k2)] {
                    for c in 0..3 {
                        let e = Vector3::ith(c, eps);
                        let fd = (torques(b, &e) - torques(b, &-e)) / (2.0 * eps);
                        let an = k.column(c).into_owned();
                        assert!(
                            (fd - an).amax() < 1e-8 * (1.0 + fd.amax()),
                            "{kind:?} body {b} column {c}: {fd} vs {an}"
                        );
                    }
                }
            }
        }
    }
}
