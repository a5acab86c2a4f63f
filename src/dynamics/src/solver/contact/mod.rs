//! The contact stages of a step (see [`crate::contact`] for the model and the solve):
//!
//! - **Impacts** (before free motion): at the start poses, every contact that approaches
//!   faster than `impact_speed_m_per_s` and would close within the step gets Newton's
//!   restitution impulse with Mirtich's friction prediction, one contact at a time, in sweeps
//!   until no such contact is left: impulses propagate through simultaneous contacts (a
//!   Newton's cradle passes the whole velocity on). The kinetic energy this removes is booked
//!   as dissipated ([`super::contact::impacts`]).
//! - **Contact rows** (after the joints' velocity stage): the start-pose contact rows, each
//!   handled normal row closing its gap at the end of the step (target velocity
//!   −2 gap / h − u_start for the midpoint integrator: a resting contact does no work; a
//!   contact that still approaches at the start, an impact the impact stage left, is instead
//!   kept from separating, since the midpoint target would bounce it back elastically), with
//!   Coulomb friction, the active set by [`InequalityMethod`] (many contacts, or the pushing
//!   tip's, by sparse Gauss–Seidel in [`super::contact::sparse`]). The impulses' work Σ λ ū is
//!   booked as dissipated.
//! - **With springs** (a cloth, a lattice: `right` only, no joint limits) the contact rows are
//!   solved together with the velocity stage instead of after it, in rounds whose contact
//!   solve takes the springs as soft rows ([`coupled`]): the springs' impulses then match the
//!   end pose, and the energy balance closes.
//! - **Projection** (after integration, `right` only): penetration left by an impact is
//!   removed by moving the poses along M⁻¹Jᵀ, together with the joints' ψ when there are
//!   joints (see [`super::contact::projection`]); velocities are not changed.
//! - **Report** (with the projection, in [`super::contact::projection`]): the contacts at the
//!   end pose give the gaps and the largest penetration.
//!
//! Joint limits join the impacts and the contact rows as frictionless unilateral rows after
//! the contacts' ([`limits`]); a scene with limits and no contact runs these two stages for
//! them alone.
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

pub(super) mod bilateral;
use bilateral::push_joint_rows;
pub(super) mod coupled;
pub(super) mod detection;
pub(super) mod impacts;
pub(super) mod limits;
pub(super) mod projection;
pub(super) mod sparse;

use nalgebra::{Vector2, Vector3};

use super::contact::sparse::SparseContacts;
use super::{FailureCause, Step};
use crate::contact::lcp;
use crate::contact::lcp::{Bilateral, ContactImpulse, ContactRows, Insertion, InverseMass, Row};
use crate::contact::spin;
use crate::contact::{
    geometry, through_joints, ContactModel, ContactPoint, ContactReport, InequalityMethod,
    DEFAULT_IMPACT_SPEED_M_PER_S, DENSE_MAX_CONTACTS,
};
use crate::model::body::{Body, Pose};

/// The points within `margin_m` of touching: of the end contacts, those the projection and
/// the islands take (the end detection also finds the points the next step predicts, see
/// [`detection`]).
pub(super) fn within_margin(
    points: &[ContactPoint],
    margin_m: f64,
) -> impl Iterator<Item = &ContactPoint> {
    points.iter().filter(move |p| p.gap_m <= margin_m)
}

/// Linear and angular velocities of the bodies (and the stylus tip) as the contact rows read
/// them.
#[derive(Clone, Debug, Default)]
pub(super) struct RowVelocities {
    pub(super) v: Vec<Vector3<f64>>,
    pub(super) w: Vec<Vector3<f64>>,
}

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
    /// The projection's linearised gaps without joints: the normal row, the gap at the
    /// detection (m), the row's J M⁻¹ Jᵀ and the push so far.
    pub(super) projection_linear: Vec<(Row, f64, f64, f64)>,
    /// The handled set kept across steps by Alg. 1 and 2 (sorted keys).
    pub(super) kept: Vec<(usize, usize, usize)>,
    kept_initialised: bool,
    pub(crate) end_points: Vec<ContactPoint>,
    /// The inputs of the last end detection (valid until the next start detection), and
    /// those of the detection now (see [`detection`]).
    end_inputs: detection::DetectionInputs,
    end_inputs_valid: bool,
    inputs_now: detection::DetectionInputs,
    /// Tests: detect at every step's start, and how many start detections took the end points.
    #[cfg(test)]
    pub(crate) never_reuse_detection: bool,
    #[cfg(test)]
    pub(crate) reused_detections: usize,
    /// One row per contact point of the last step.
    pub(crate) report: Vec<ContactReport>,
    /// Largest penetration at the end of the last step (m, ≥ 0).
    pub(crate) max_penetration_m: f64,
    /// The largest row-velocity error the step's contact solve left (m/s; 0 when it
    /// converged or there was none): the projection's tolerance follows it (see
    /// [`super::contact::projection`]). Taken by the projection, so no step inherits it.
    pub(super) velocity_residual_m_per_s: f64,
    /// Sweeps the sparse solve ran in the last step, or the coupled rounds' in all (0 when
    /// another solve, or none, ran).
    pub(crate) sweeps: usize,
    /// The sparse solve's state (many contacts, or the pushing tip).
    pub(super) sparse: SparseContacts,
    /// Detection's buffers.
    detection: geometry::DetectScratch,
    /// Why the step's contacts cannot be solved within their memory (detection stopped at
    /// the model's `max_points`, or the solve through the joints would be too large): the
    /// step fails with it (cleared at the start of each step).
    pub(crate) overflow: Option<super::FailureCause>,
    /// The rounds that couple the contacts with the springs ([`coupled`]) and their solve.
    pub(crate) coupled: coupled::CoupledScratch,
    pub(super) through_soft_rows: crate::contact::through_soft_rows::ThroughSoftRowsScratch,
    /// The dense solve's and the solve through the joints' buffers.
    pub(super) lcp: lcp::LcpScratch,
    through_joints: through_joints::ThroughJointsScratch,
    /// The velocities now and at the start of the step, and the impact stage's rows (taken
    /// out while a stage uses them, and put back).
    pub(super) now: RowVelocities,
    start: RowVelocities,
    pub(super) impact_rows: Vec<[Row; 3]>,
    /// The impact sweeps' clocks: per contact when it was last looked at, per body when its
    /// velocity last changed (see `sequential_impacts`).
    pub(super) impact_looked_at: Vec<u64>,
    pub(super) impact_changed_at: Vec<u64>,
    /// Per contact, its rows' J M⁻¹ Jᵀ once an impact sweep has needed it.
    pub(super) impact_delassus: Vec<Option<nalgebra::Matrix3<f64>>>,
    /// The joint limits' ends in the current stage's solve (after the contacts' rows).
    pub(super) limits: Vec<crate::model::limit::LimitEnd>,
    /// Per joint, the limit impulses of the step so far (angle, travel; see [`limits`]).
    pub(super) limit_impulse: Vec<[f64; 2]>,
    /// Per joint, the limit torque (N·m) and force (N) of the last step; empty without
    /// limits.
    pub(crate) limit_force: Vec<[f64; 2]>,
}

impl ContactScratch {
    /// Which bodies sleep through the next step (fixed: detection skips their pairs with
    /// each other and with the ground).
    pub(crate) fn set_asleep(&mut self, asleep: &[bool]) {
        self.detection.asleep.clear();
        self.detection.asleep.extend_from_slice(asleep);
    }

    /// No body sleeps (after the step).
    pub(crate) fn clear_asleep(&mut self) {
        self.detection.asleep.clear();
    }

    /// Solves the contact rows with the bilateral rows eliminated ([`through_joints`]), into
    /// the impulses and the velocity change.
    pub(super) fn solve_through_joints(&mut self) {
        through_joints::solve(
            &self.rows,
            &self.bilateral,
            &self.inv_mass,
            &mut self.through_joints,
            &mut self.impulses,
            &mut self.delta,
        );
    }

    /// The end contacts within `margin_m` of touching (see [`within_margin`]).
    pub(crate) fn end_points_within(&self, margin_m: f64) -> impl Iterator<Item = &ContactPoint> {
        within_margin(&self.end_points, margin_m)
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
pub(super) fn tip_work(
    tip: Option<usize>,
    v_tip: &Vector3<f64>,
    rows: &[Row; 3],
    impulse: [f64; 3],
) -> f64 {
    let sign = match tip {
        Some(t) if rows[0].body2 == t => 1.0,
        Some(t) if rows[0].body1 == t => -1.0,
        _ => return 0.0,
    };
    -(0..3)
        .map(|r| impulse[r] * sign * rows[r].dir.dot(v_tip))
        .sum::<f64>()
}

pub(super) fn row_velocities(rows: &[Row; 3], v: &[Vector3<f64>], w: &[Vector3<f64>]) -> [f64; 3] {
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

    /// The velocities the contact rows read, into `out`: the bodies' (now, or at the start of
    /// the step), then the stylus tip's if it pushes.
    pub(super) fn contact_velocities(&self, start: bool, out: &mut RowVelocities) {
        let RowVelocities { v, w } = out;
        v.clear();
        w.clear();
        if start {
            v.extend_from_slice(&self.s.body.v_start);
            w.extend_from_slice(&self.s.body.w_start);
        } else {
            for b in self.bodies.iter() {
                v.push(b.linear_velocity_in_world);
                w.push(b.angular_velocity_in_world);
            }
        }
        if self.contact.is_some_and(|m| m.tip_body.is_some()) {
            v.push(
                self.stylus_target
                    .map_or(Vector3::zeros(), |t| t.velocity_in_world),
            );
            w.push(Vector3::zeros());
        }
    }

    /// The stylus tip's pseudo-body and velocity, if it pushes.
    pub(super) fn tip_motion(&self) -> (Option<usize>, Vector3<f64>) {
        (
            self.contact.and_then(|m| m.tip_body),
            self.stylus_target
                .map_or(Vector3::zeros(), |t| t.velocity_in_world),
        )
    }

    /// Stage 4b (contact only): the contact rows with friction, solved by the active-set
    /// method, applied to the velocities; then the prediction is renewed. With `book` the
    /// impulses' work is booked at once (the coupled rounds book it once they end).
    pub(super) fn contact_solve(&mut self, book: bool) {
        let limited = self.has_limits();
        let model = self.contact;
        if model.is_none() && !limited {
            return;
        }
        let method = model.map_or(InequalityMethod::Right, |m| m.method);
        let v_imp = model.map_or(DEFAULT_IMPACT_SPEED_M_PER_S, |m| m.impact_speed_m_per_s);
        let h = self.ctx.h;
        let mut now = std::mem::take(&mut self.s.contact.now);
        let mut start = std::mem::take(&mut self.s.contact.start);
        self.contact_velocities(false, &mut now);
        self.contact_velocities(true, &mut start);
        if limited {
            self.gather_limit_ends(h, (&now.v, &now.w), (&start.v, &start.w));
        }
        // Limits alone, none near: nothing to solve (the step is that of a scene without).
        let solve = model.is_some() || !self.s.contact.limits.is_empty();
        if solve {
            self.solve_contact_rows(method, v_imp, h, &now, &start, book);
        }
        self.s.contact.now = now;
        self.s.contact.start = start;
        if limited {
            self.finish_limit_forces();
        }
        if solve {
            self.predict_all();
        }
    }

    /// The contact solve proper, from the velocities now and at the start of the step.
    fn solve_contact_rows(
        &mut self,
        method: InequalityMethod,
        v_imp: f64,
        h: f64,
        now: &RowVelocities,
        start: &RowVelocities,
        book: bool,
    ) {
        let (v_start, w_start) = (&start.v, &start.w);
        let (tip, v_tip) = self.tip_motion();
        self.s.contact.build_rows(now, start, h, v_imp);
        self.push_limit_rows(v_imp, h, now, start);
        let c = &mut self.s.contact;
        let n = c.points.len();
        let insertion = c.handled_set(method);
        // The joints' rows (their last midpoint rows) keep their velocities in the solve.
        c.bilateral.clear();
        if !c.points.is_empty() || !c.limits.is_empty() {
            push_joint_rows(self.joints, &self.s.joint.blocks, &mut c.bilateral);
        }
        let tolerance_m = self.contact.and_then(|m| m.tolerance_m);
        c.solve_rows(insertion, tip, &self.gravity_in_world, h, tolerance_m);
        // Apply, and book the work Σ λ ū of the contact (and limit) impulses (the joints'
        // stay closed); the part the moving tip does is the user's.
        if book {
            let (work, user) = c.impulse_work(v_start, w_start, tip, &v_tip);
            self.s.ledger.dissipated_j -= work;
            self.s.ledger.user_work_j += user;
        }
        if !self.s.contact.limits.is_empty() {
            self.take_limit_impulses(n);
        }
        let c = &mut self.s.contact;
        c.sparse.remember(&c.points, &c.impulses);
        add_velocity_change(self.bodies, &c.delta);
        if method != InequalityMethod::Right {
            // Alg. 1 and 2: a handled row whose multiplier is ≤ 0 leaves the set.
            c.kept.clear();
            c.kept.extend(
                c.points
                    .iter()
                    .zip(&c.impulses)
                    .filter(|(_, i)| i.handled && i.normal > 0.0)
                    .map(|(p, _)| p.key()),
            );
            c.kept.sort_unstable();
        }
    }
}

/// Adds a solve's velocity change to the dynamic bodies.
pub(super) fn add_velocity_change(bodies: &mut [Body], delta: &lcp::VelocityChange) {
    for ((b, dv), dw) in bodies.iter_mut().zip(&delta.v).zip(&delta.w) {
        if b.is_dynamic() {
            b.linear_velocity_in_world += dv;
            b.angular_velocity_in_world += dw;
        }
    }
}

impl ContactScratch {
    /// Each contact point's rows, row velocities now and the target of its normal row, from
    /// the velocities now and at the start of the step.
    pub(super) fn build_rows(
        &mut self,
        now: &RowVelocities,
        start: &RowVelocities,
        h: f64,
        v_imp: f64,
    ) {
        self.rows.clear();
        for p in &self.points {
            let rows = rows_of(p, &self.poses);
            let u0 = row_velocities(&rows, &now.v, &now.w);
            let us = row_velocities(&rows, &start.v, &start.w);
            // The midpoint target closes the gap at the end of the step with no work from a
            // contact at rest; for a contact that approaches at the start (an impact the impact
            // stage did not resolve) it would reverse the approach, an elastic bounce: the end
            // velocity is kept from separating (a plastic impact; the projection removes what
            // penetration is left).
            let mut target = -2.0 * p.gap_m / h - us[0];
            if us[0] < -v_imp {
                target = target.min((-2.0 * p.gap_m / h).max(0.0));
            }
            self.rows.push(ContactRows {
                rows,
                u0,
                target,
                mu: p.material.friction,
                slip_start: Vector2::new(us[1], us[2]),
                spin: if p.material.spin_friction_m > 0.0 {
                    let row = spin::spin_row(&rows[0]);
                    spin::Spin {
                        mu_m: p.material.spin_friction_m,
                        u0: row.velocity(&now.v, &now.w),
                        start: row.velocity(&start.v, &start.w),
                    }
                } else {
                    spin::Spin::NONE
                },
            });
        }
    }

    /// The handled set the solve starts from, and how it inserts: empty for `right`; the set
    /// kept across steps for Alg. 1 and 2 (made at the first step).
    fn handled_set(&mut self, method: InequalityMethod) -> Insertion {
        self.handled.clear();
        self.handled.resize(self.points.len(), false);
        match method {
            InequalityMethod::Right => Insertion::Right,
            InequalityMethod::Platt | InequalityMethod::Tendency => {
                if !self.kept_initialised {
                    // At the start of the animation: Platt handles the active constraints,
                    // the tendency method those of them whose free motion violates them.
                    self.kept_initialised = true;
                    for (k, p) in self.points.iter().enumerate() {
                        let active = p.gap_m <= 1.0e-9;
                        let tends =
                            self.rows[k].u0[0] < self.rows[k].target - lcp::TENDENCY_TOLERANCE;
                        if active && (method == InequalityMethod::Platt || tends) {
                            self.kept.push(p.key());
                        }
                    }
                    self.kept.sort_unstable();
                }
                for (k, p) in self.points.iter().enumerate() {
                    self.handled[k] = self.kept.binary_search(&p.key()).is_ok();
                }
                Insertion::Fixed
            }
        }
    }

    /// Solves the rows by the solve that fits (through the joints, sparse, or the dense
    /// active set) into the impulses and the velocity change (`tolerance_m`: the scene's
    /// precision setting, which the sparse solve follows).
    fn solve_rows(
        &mut self,
        insertion: Insertion,
        tip: Option<usize>,
        gravity_in_world: &Vector3<f64>,
        h: f64,
        tolerance_m: Option<f64>,
    ) {
        let n = self.points.len();
        self.sweeps = 0;
        // Limit rows are solved through the joints whatever the method: they bound the
        // joints' own motions.
        if (insertion == Insertion::Right || !self.limits.is_empty()) && !self.bilateral.is_empty()
        {
            let contacts = n + self.limits.len();
            let bytes =
                through_joints::dense_bytes(self.bilateral.len(), contacts, self.inv_mass.len());
            if bytes > through_joints::MAX_DENSE_BYTES {
                self.overflow = Some(FailureCause::ThroughJointsTooLarge {
                    contacts,
                    bytes,
                    limit: through_joints::MAX_DENSE_BYTES,
                });
                // No impulses: the step is discarded (see `Step::run`).
                self.impulses.clear();
                self.impulses.resize(n, ContactImpulse::default());
                let bodies = self.inv_mass.len();
                for change in [&mut self.delta.v, &mut self.delta.w] {
                    change.clear();
                    change.resize(bodies, Vector3::zeros());
                }
                return;
            }
            self.solve_through_joints();
        } else if insertion == Insertion::Right
            && (n > DENSE_MAX_CONTACTS || touches(tip, &self.points))
        {
            let down = gravity_in_world.try_normalize(0.0).unwrap_or(-Vector3::z());
            let stats = self.sparse.solve(
                &mut self.rows,
                &self.points,
                &self.inv_mass,
                &down,
                h,
                tolerance_m,
                &mut self.impulses,
                &mut self.delta,
            );
            self.velocity_residual_m_per_s = stats.residual_m_per_s;
            self.sweeps = stats.sweeps;
        } else {
            lcp::solve(
                &self.rows,
                &self.bilateral,
                &self.inv_mass,
                &mut self.handled,
                insertion,
                &mut self.lcp,
                &mut self.impulses,
                &mut self.delta,
            );
        }
    }

    /// The work Σ λ ū of the handled contacts' impulses (ū the mean of the start and end row
    /// velocities), and the part of it the pushing tip does (the user's).
    pub(super) fn impulse_work(
        &self,
        v_start: &[Vector3<f64>],
        w_start: &[Vector3<f64>],
        tip: Option<usize>,
        v_tip: &Vector3<f64>,
    ) -> (f64, f64) {
        let mut work = 0.0;
        let mut user = 0.0;
        for (k, imp) in self.impulses.iter().enumerate() {
            if !imp.handled {
                continue;
            }
            let rows = &self.rows[k].rows;
            let lambda = [imp.normal, imp.tangent.x, imp.tangent.y];
            let us = row_velocities(rows, v_start, w_start);
            for r in 0..3 {
                work += lambda[r] * 0.5 * (us[r] + imp.u[r]);
            }
            if imp.spin != 0.0 {
                work += imp.spin * 0.5 * (self.rows[k].spin.start + imp.u_spin);
            }
            user += tip_work(tip, v_tip, rows, lambda);
        }
        (work, user)
    }
}
