//! The contact stages of a step (see [`crate::sim::contact`] for the model and the solve):
//!
//! - **Impacts** (before free motion): at the start poses, every contact that approaches
//!   faster than `impact_speed_m_per_s` and would close within the step gets Newton's
//!   restitution impulse with Mirtich's friction prediction, one contact at a time, in sweeps
//!   until no such contact is left: impulses propagate through simultaneous contacts (a
//!   Newton's cradle passes the whole velocity on). The kinetic energy this removes is booked
//!   as dissipated.
//! - **Contact rows** (after the joints' velocity stage): the start-pose contact rows, each
//!   handled normal row closing its gap at the end of the step (target velocity
//!   −2 gap / h − u_start for the midpoint integrator: a resting contact does no work; a
//!   contact that still approaches at the start, an impact the impact stage left, is instead
//!   kept from separating, since the midpoint target would bounce it back elastically), with
//!   Coulomb friction, the active set by [`InequalityMethod`] (many contacts, or the pushing
//!   tip's, by sparse Gauss–Seidel in [`super::contact_sparse`]). The impulses' work Σ λ ū is
//!   booked as dissipated.
//! - **Projection** (after integration, `right` only): penetration left by an impact is
//!   removed by moving the poses along M⁻¹Jᵀ, together with the joints' ψ when there are
//!   joints (see [`super::contact_projection`]); velocities are not changed.
//! - **Report** (with the projection, in [`super::contact_projection`]): the contacts at the
//!   end pose give the gaps and the largest penetration.
//!
//! With joints, the contact rows keep the joints' row velocities (their last midpoint rows,
//! whose midpoint velocity is what makes joint impulses workless in this integrator); an
//! impact's joint rows are those of the start poses with zero row velocity as the target
//! (the instantaneous impulse problem; the previous step's midpoint rows there have row
//! velocities of order h ω v, against which joint impulses would do work). With joints and
//! the `right` method both solves eliminate the joints and solve the contacts by projected
//! Gauss–Seidel ([`through_joints`]), which settles where Alg. 3's insertions and releases
//! do not on a chain lying on the desk; `platt` and `tendency` keep their fixed handled sets
//! in [`lcp::solve`]. The projection closes ψ and the gaps together.

use nalgebra::{Vector2, Vector3};

use super::contact_sparse::SparseContacts;
use super::Step;
use crate::sim::block::MAX_ROWS;
use crate::sim::body::Pose;
use crate::sim::contact::lcp::{
    self, Bilateral, ContactImpulse, ContactRows, Insertion, InverseMass, Row,
};
use crate::sim::contact::{
    geometry, through_joints, ContactModel, ContactPoint, ContactReport, InequalityMethod,
    DENSE_MAX_CONTACTS,
};
use crate::sim::joint::{Joint, Row as JointRow};

/// The contact stages' scratch and their results of the last step.
#[derive(Clone, Debug, Default)]
pub(crate) struct ContactScratch {
    pub(super) poses: Vec<Pose>,
    pub(super) inv_mass: Vec<InverseMass>,
    speed_bound: Vec<f64>,
    /// Contacts at the start poses, their rows and impact impulses (n, t₁, t₂).
    pub(crate) points: Vec<ContactPoint>,
    pub(super) rows: Vec<ContactRows>,
    pub(super) impact: Vec<[f64; 3]>,
    pub(crate) impulses: Vec<ContactImpulse>,
    pub(super) handled: Vec<bool>,
    pub(super) bilateral: Vec<Bilateral>,
    pub(super) delta: lcp::VelocityChange,
    /// The coupled projection's rows and impulses (kept apart from the step's, which the
    /// report reads).
    pub(super) projection_rows: Vec<ContactRows>,
    pub(super) projection_impulses: Vec<ContactImpulse>,
    /// The handled set kept across steps by Alg. 1 and 2 (sorted keys).
    pub(super) kept: Vec<(usize, usize, usize)>,
    kept_initialised: bool,
    pub(super) end_points: Vec<ContactPoint>,
    /// One row per contact point of the last step.
    pub(crate) report: Vec<ContactReport>,
    /// Largest penetration at the end of the last step (m, ≥ 0).
    pub(crate) max_penetration_m: f64,
    /// The sparse solve's state (many contacts, or the pushing tip).
    sparse: SparseContacts,
}

impl ContactScratch {
    /// Solves the contact rows with the bilateral rows eliminated ([`through_joints`]), into
    /// the impulses and the velocity change.
    fn solve_through_joints(&mut self) {
        through_joints::solve(
            &self.rows,
            &self.bilateral,
            &self.inv_mass,
            &mut self.impulses,
            &mut self.delta,
        );
    }

    /// The deepest penetration among the end contacts (m, ≥ 0).
    pub(super) fn deepest_end_penetration_m(&self) -> f64 {
        self.end_points.iter().map(|p| -p.gap_m).fold(0.0, f64::max)
    }
}

fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = if n.x.abs() < 0.6 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let t1 = n.cross(&a).normalize();
    (t1, n.cross(&t1))
}

pub(super) fn rows_of(p: &ContactPoint, poses: &[Pose]) -> [Row; 3] {
    let r1 = p.point1 - poses[p.body1].x;
    let r2 = p.point2 - poses[p.body2].x;
    let (t1, t2) = tangents(&p.normal);
    [
        Row::new(p.body1, p.body2, &r1, &r2, p.normal),
        Row::new(p.body1, p.body2, &r1, &r2, t1),
        Row::new(p.body1, p.body2, &r1, &r2, t2),
    ]
}

/// Whether the pushing tip (kinematic: no inverse mass) is in one of the contacts. The dense
/// active set then holds equalities it cannot meet together: a body pressed by the tip while
/// its friction on the desk sticks has its velocity fixed twice, once by the tip's normal row
/// and once by the sticking rows, and the regularised solve answers the mismatch with
/// impulses of 1e6 N·s that cancel each other (the energy balance closes while the user work
/// books 1e5 J). Projected Gauss–Seidel keeps every friction impulse in its cone.
fn touches(tip: Option<usize>, points: &[ContactPoint]) -> bool {
    tip.is_some_and(|t| points.iter().any(|p| p.body1 == t || p.body2 == t))
}

/// The user's work through the pushing tip by impulses (n, t₁, t₂) along `rows`: minus the
/// impulses times the rows' tip-velocity terms.
fn tip_work(tip: Option<usize>, v_tip: &Vector3<f64>, rows: &[Row; 3], impulse: [f64; 3]) -> f64 {
    let sign = match tip {
        Some(t) if rows[0].body2 == t => 1.0,
        Some(t) if rows[0].body1 == t => -1.0,
        _ => return 0.0,
    };
    -(0..3)
        .map(|r| impulse[r] * sign * rows[r].dir.dot(v_tip))
        .sum::<f64>()
}

/// A joint row as a contact solve's bilateral row (body 2 relative to body 1, as the
/// contact rows), whose row velocity is to change by `change`.
pub(super) fn bilateral_of(joint: &Joint, row: &JointRow, change: f64) -> Bilateral {
    Bilateral {
        row: Row {
            body1: joint.body1,
            body2: joint.body2,
            dir: -row.lin,
            ang1: -row.ang1,
            ang2: row.ang2,
        },
        change,
    }
}

/// The joints' rows at these poses (of body 2 relative to body 1, as the contact rows), each
/// with its joint error ψ, handed to `visit` in joint order.
pub(super) fn joint_rows_at(
    joints: &[Joint],
    poses: &[Pose],
    mut visit: impl FnMut(Bilateral, f64),
) {
    let mut rows = [JointRow::default(); MAX_ROWS];
    for j in joints {
        let g = j.geometry(&poses[j.body1], &poses[j.body2]);
        let psi = j.psi_of(&g);
        j.rows_of(&g, &g, &mut rows);
        for (row, e) in rows.iter().zip(&psi).take(j.rows()) {
            visit(bilateral_of(j, row, 0.0), *e);
        }
    }
}

fn row_velocities(rows: &[Row; 3], v: &[Vector3<f64>], w: &[Vector3<f64>]) -> [f64; 3] {
    [
        rows[0].velocity(v, w),
        rows[1].velocity(v, w),
        rows[2].velocity(v, w),
    ]
}

impl Step<'_> {
    pub(super) fn contact_model(&self) -> Option<&ContactModel> {
        self.contact
    }

    /// Inverse masses at the current orientations, and the poses.
    pub(super) fn contact_masses(&mut self) {
        self.update_inertia();
        let c = &mut self.s.contact;
        c.poses.clear();
        c.poses.extend(self.bodies.iter().map(Pose::of));
        c.inv_mass.clear();
        c.inv_mass.extend(
            self.bodies
                .iter()
                .zip(&self.s.body.inv_inertia)
                .map(|(b, i)| InverseMass {
                    inv_mass: b.inv_mass,
                    inv_inertia: *i,
                }),
        );
        if self.contact.is_some_and(|m| m.tip_body.is_some()) {
            // The stylus tip: kinematic (no inverse mass); far away while there is no tip.
            let x = self
                .stylus_target
                .map_or(Vector3::repeat(1.0e9), |t| t.position_in_world.coords);
            c.poses
                .push(Pose::new(x, nalgebra::UnitQuaternion::identity()));
            c.inv_mass.push(InverseMass {
                inv_mass: 0.0,
                inv_inertia: nalgebra::Matrix3::zeros(),
            });
        }
    }

    /// The velocities the contact rows read: the bodies' (now, or at the start of the step),
    /// then the stylus tip's if it pushes.
    fn contact_velocities(&self, start: bool) -> (Vec<Vector3<f64>>, Vec<Vector3<f64>>) {
        let (mut v, mut w): (Vec<_>, Vec<_>) = if start {
            (self.s.body.v_start.clone(), self.s.body.w_start.clone())
        } else {
            self.bodies
                .iter()
                .map(|b| (b.linear_velocity_in_world, b.angular_velocity_in_world))
                .unzip()
        };
        if self.contact.is_some_and(|m| m.tip_body.is_some()) {
            v.push(
                self.stylus_target
                    .map_or(Vector3::zeros(), |t| t.velocity_in_world),
            );
            w.push(Vector3::zeros());
        }
        (v, w)
    }

    /// The stylus tip's pseudo-body and velocity, if it pushes.
    fn tip_motion(&self) -> (Option<usize>, Vector3<f64>) {
        (
            self.contact.and_then(|m| m.tip_body),
            self.stylus_target
                .map_or(Vector3::zeros(), |t| t.velocity_in_world),
        )
    }

    /// Detects the contacts at the current poses (with their masses) as the step's end
    /// contacts; returns the deepest penetration (m, ≥ 0).
    pub(super) fn detect_end_contacts(&mut self) -> f64 {
        self.contact_masses();
        self.detect_contacts(true);
        self.s.contact.deepest_end_penetration_m()
    }

    pub(super) fn detect_contacts(&mut self, end: bool) {
        let Some(model) = self.contact else { return };
        let h = self.ctx.h;
        let g = self.gravity_in_world.norm();
        let c = &mut self.s.contact;
        // Each body's reach from its origin over its colliders, then its speed bound.
        c.speed_bound.clear();
        c.speed_bound.resize(self.bodies.len(), 0.0);
        for k in model
            .colliders
            .iter()
            .filter(|k| k.body < self.bodies.len())
        {
            let reach = k.shape.bounding_radius_m() + k.body_from_shape.translation.vector.norm();
            c.speed_bound[k.body] = c.speed_bound[k.body].max(reach);
        }
        for (bound, b) in c.speed_bound.iter_mut().zip(self.bodies.iter()) {
            *bound = if b.is_dynamic() {
                b.linear_velocity_in_world.norm()
                    + b.angular_velocity_in_world.norm() * *bound
                    + h * g
            } else {
                0.0
            };
        }
        if model.tip_body.is_some() {
            let v_tip = self
                .stylus_target
                .map_or(0.0, |t| t.velocity_in_world.norm());
            c.speed_bound.push(v_tip);
        }
        let margin = model.margin_m;
        let speed = &c.speed_bound;
        let prediction = |a: usize, b: usize| {
            if end {
                margin
            } else {
                margin + 2.0 * h * (speed[a] + speed[b])
            }
        };
        let out = if end {
            &mut c.end_points
        } else {
            &mut c.points
        };
        let reach = |a: usize| {
            if end {
                0.5 * margin
            } else {
                0.5 * margin + 2.0 * h * speed[a]
            }
        };
        geometry::detect(model, &c.poses, prediction, reach, out);
    }

    /// Stage 0 (contact only): detection at the start poses and the impact sweeps.
    pub(super) fn contact_impacts(&mut self) {
        let Some(model) = self.contact_model() else {
            return;
        };
        let v_imp = model.impact_speed_m_per_s;
        let h = self.ctx.h;
        self.contact_masses();
        self.detect_contacts(false);
        let (mut v, mut w) = self.contact_velocities(false);
        let (tip, v_tip) = self.tip_motion();
        let c = &mut self.s.contact;
        let n = c.points.len();
        c.impact.clear();
        c.impact.resize(n, [0.0; 3]);
        if n == 0 {
            return;
        }
        let rows: Vec<[Row; 3]> = c.points.iter().map(|p| rows_of(p, &c.poses)).collect();

        let kinetic_before: f64 = self.bodies.iter().map(|b| b.kinetic_energy_j()).sum();
        let mut any_impact = false;
        if !self.joints.is_empty() {
            // With joints, the impact is one simultaneous system of the contact impulses and
            // the joints' attachment impulses (the virtual-mobile paper's §6, after Moore):
            // the joints' rows are those of the start poses, their target zero row velocity
            // (see the module docs), eliminated exactly, and the contacts solved through them
            // by projected Gauss–Seidel (see `through_joints`).
            let impacting = |k: usize, p: &ContactPoint| {
                let u = row_velocities(&rows[k], &v, &w);
                u[0] < -v_imp && p.gap_m + h * u[0] < 0.0
            };
            if c.points.iter().enumerate().any(|(k, p)| impacting(k, p)) {
                c.rows.clear();
                for (k, p) in c.points.iter().enumerate() {
                    let u0 = row_velocities(&rows[k], &v, &w);
                    let target = if impacting(k, p) {
                        -p.material.restitution * u0[0]
                    } else {
                        -p.gap_m.max(0.0) / h
                    };
                    c.rows.push(ContactRows {
                        rows: rows[k],
                        u0,
                        target,
                        mu: p.material.friction,
                        slip_start: Vector2::new(u0[1], u0[2]),
                    });
                }
                let c = &mut self.s.contact;
                c.bilateral.clear();
                joint_rows_at(self.joints, &c.poses, |mut b, _| {
                    b.change = -b.row.velocity(&v, &w);
                    c.bilateral.push(b);
                });
                c.solve_through_joints();
                for (k, i) in c.impulses.iter().enumerate() {
                    if i.handled {
                        c.impact[k] = [i.normal, i.tangent.x, i.tangent.y];
                    }
                }
                for ((b, dv), dw) in self.bodies.iter_mut().zip(&c.delta.v).zip(&c.delta.w) {
                    if b.is_dynamic() {
                        b.linear_velocity_in_world += dv;
                        b.angular_velocity_in_world += dw;
                    }
                }
                let kinetic_after: f64 = self.bodies.iter().map(|b| b.kinetic_energy_j()).sum();
                let user: f64 = rows
                    .iter()
                    .zip(&self.s.contact.impact)
                    .map(|(r, i)| tip_work(tip, &v_tip, r, *i))
                    .sum();
                self.s.ledger.dissipated_j += kinetic_before - kinetic_after + user;
                self.s.ledger.user_work_j += user;
            }
            return;
        }
        for _sweep in 0..(50 * n + 10) {
            let mut any = false;
            for (k, p) in c.points.iter().enumerate() {
                let u = row_velocities(&rows[k], &v, &w);
                if u[0] < -v_imp && p.gap_m + h * u[0] < 0.0 {
                    let imp = lcp::impact_impulse(
                        &rows[k],
                        u,
                        p.material.restitution,
                        p.material.friction,
                        &c.inv_mass,
                    );
                    if imp[0] > 0.0 {
                        for r in 0..3 {
                            rows[k][r].apply(imp[r], &c.inv_mass, &mut v, &mut w);
                            c.impact[k][r] += imp[r];
                        }
                        any = true;
                    }
                }
            }
            if !any {
                break;
            }
            any_impact = true;
        }
        if any_impact {
            for ((b, v), w) in self.bodies.iter_mut().zip(&v).zip(&w) {
                if b.is_dynamic() {
                    b.linear_velocity_in_world = *v;
                    b.angular_velocity_in_world = *w;
                }
            }
            let kinetic_after: f64 = self.bodies.iter().map(|b| b.kinetic_energy_j()).sum();
            let user: f64 = rows
                .iter()
                .zip(&self.s.contact.impact)
                .map(|(r, i)| tip_work(tip, &v_tip, r, *i))
                .sum();
            self.s.ledger.dissipated_j += kinetic_before - kinetic_after + user;
            self.s.ledger.user_work_j += user;
        }
    }

    /// Stage 4b (contact only): the contact rows with friction, solved by the active-set
    /// method, applied to the velocities; then the prediction is renewed.
    pub(super) fn contact_solve(&mut self) {
        let Some(model) = self.contact_model() else {
            return;
        };
        let method = model.method;
        let v_imp = model.impact_speed_m_per_s;
        let h = self.ctx.h;
        let (v, w) = self.contact_velocities(false);
        let (v_start, w_start) = self.contact_velocities(true);
        let (tip, v_tip) = self.tip_motion();
        let c = &mut self.s.contact;
        let n = c.points.len();

        c.rows.clear();
        for p in &c.points {
            let rows = rows_of(p, &c.poses);
            let u0 = row_velocities(&rows, &v, &w);
            let us = row_velocities(&rows, &v_start, &w_start);
            // The midpoint target closes the gap at the end of the step with no work from a
            // contact at rest; for a contact that approaches at the start (an impact the impact
            // stage did not resolve) it would reverse the approach, an elastic bounce: the end
            // velocity is kept from separating (a plastic impact; the projection removes what
            // penetration is left).
            let mut target = -2.0 * p.gap_m / h - us[0];
            if us[0] < -v_imp {
                target = target.min((-2.0 * p.gap_m / h).max(0.0));
            }
            c.rows.push(ContactRows {
                rows,
                u0,
                target,
                mu: p.material.friction,
                slip_start: Vector2::new(us[1], us[2]),
            });
        }
        c.handled.clear();
        c.handled.resize(n, false);
        let insertion = match method {
            InequalityMethod::Right => Insertion::Right,
            InequalityMethod::Platt | InequalityMethod::Tendency => {
                if !c.kept_initialised {
                    // At the start of the animation: Platt handles the active constraints,
                    // the tendency method those of them whose free motion violates them.
                    c.kept_initialised = true;
                    for (k, p) in c.points.iter().enumerate() {
                        let active = p.gap_m <= 1.0e-9;
                        let tends = c.rows[k].u0[0] < c.rows[k].target - lcp::TENDENCY_TOLERANCE;
                        if active && (method == InequalityMethod::Platt || tends) {
                            c.kept.push(p.key());
                        }
                    }
                    c.kept.sort_unstable();
                }
                for (k, p) in c.points.iter().enumerate() {
                    c.handled[k] = c.kept.binary_search(&p.key()).is_ok();
                }
                Insertion::Fixed
            }
        };
        // The joints' rows (their last midpoint rows) keep their velocities in the solve.
        c.bilateral.clear();
        if n > 0 {
            for (j, blk) in self.joints.iter().zip(&self.s.joint.blocks) {
                for row in &blk.rows[..j.rows()] {
                    c.bilateral.push(bilateral_of(j, row, 0.0));
                }
            }
        }
        if insertion == Insertion::Right && !c.bilateral.is_empty() {
            c.solve_through_joints();
        } else if insertion == Insertion::Right
            && (n > DENSE_MAX_CONTACTS || touches(tip, &c.points))
        {
            let down = self
                .gravity_in_world
                .try_normalize(0.0)
                .unwrap_or(-Vector3::z());
            c.sparse.solve(
                &mut c.rows,
                &c.points,
                &c.inv_mass,
                &down,
                h,
                &mut c.impulses,
                &mut c.delta,
            );
        } else {
            lcp::solve(
                &c.rows,
                &c.bilateral,
                &c.inv_mass,
                &mut c.handled,
                insertion,
                &mut c.impulses,
                &mut c.delta,
            );
        }
        // Apply, and book the work Σ λ ū of the contact impulses (the joints' stay closed); the
        // part the moving tip does is the user's.
        let mut work = 0.0;
        let mut user = 0.0;
        for (k, imp) in c.impulses.iter().enumerate() {
            if !imp.handled {
                continue;
            }
            let rows = &c.rows[k].rows;
            let lambda = [imp.normal, imp.tangent.x, imp.tangent.y];
            let us = row_velocities(rows, &v_start, &w_start);
            for r in 0..3 {
                work += lambda[r] * 0.5 * (us[r] + imp.u[r]);
            }
            user += tip_work(tip, &v_tip, rows, lambda);
        }
        self.s.ledger.dissipated_j -= work;
        self.s.ledger.user_work_j += user;
        c.sparse.remember(&c.points, &c.impulses);
        for ((b, dv), dw) in self.bodies.iter_mut().zip(&c.delta.v).zip(&c.delta.w) {
            if b.is_dynamic() {
                b.linear_velocity_in_world += dv;
                b.angular_velocity_in_world += dw;
            }
        }
        if method != InequalityMethod::Right {
            // Alg. 1 and 2: a handled row whose multiplier is ≤ 0 leaves the set.
            let keep: Vec<_> = c
                .points
                .iter()
                .zip(&c.impulses)
                .filter(|(_, i)| i.handled && i.normal > 0.0)
                .map(|(p, _)| p.key())
                .collect();
            c.kept = keep;
            c.kept.sort_unstable();
        }
        self.predict_all();
    }
}
