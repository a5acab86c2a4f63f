//! Joint limits in the contact stages (see [`crate::model::limit`] for the coordinates and
//! their rows). Each end of a limit near enough to act in the step is one more unilateral
//! row of the contact solves, frictionless, appended after the contacts' rows and solved with
//! them through the joints ([`crate::contact::through_joints`]: the joints eliminated exactly,
//! so a hinge limit meets the inertia about the pivot, not the link's own):
//!
//! - **Impacts**: an end approaching faster than the impact speed that would be passed within
//!   the step gets Newton's impulse with the joint's `limit_restitution` e (target −e u);
//!   the other ends near it are kept from closing more than their gap in the step.
//! - **Rows**: every end whose gap the step could close gets the contact rows' midpoint target
//!   (the gap closed at the end of the step, no work at rest), with the Cayley map's angle
//!   for an angle end: the step turns a body by 2 atan(h ω̄ / 2), not h ω̄, so closing a gap
//!   g takes ω̄ = (2/h) tan(g/2) (the linear form stopped a swing 1e-5 rad short of its limit
//!   and let it arrive at the next step instead). As a contact, an end that still approaches
//!   at the start is kept from separating (a plastic impact) instead of bouncing back.
//!
//! - **Position correction** (with the joints' projection, after integration): the joints'
//!   position projection does not see the limits, and on a chain it moved a link resting on
//!   its limit 2.5e-7 rad past it (its midpoint rows were made before the limit stopped the
//!   turn, which leaves ψ for the projection). So an end more than [`LIMIT_TOLERANCE`] past
//!   is projected back along its row in the same Gauss–Seidel sweeps (poses only).
//!
//! The work of the rows' impulses is booked as dissipated with the contacts'; the impacts'
//! kinetic energy loss with theirs. The impulses of the step, signed along the coordinate
//! (a torque about the hinge axis on body 2, a force along the slide axis), give each joint's
//! limit force ([`crate::Simulation::joint_limit_forces`]).

use nalgebra::{Vector2, Vector3};

use super::RowVelocities;
use crate::contact::lcp::{ContactRows, Row};
use crate::model::body::{advance_rotation, Pose};
use crate::model::limit::{LimitEnd, LimitedCoordinate};
use crate::solver::Step;

/// An end is in a step's rows when its gap is under what the start and current row speeds
/// close in the step plus this (rad or m): one at rest on its limit is always in.
const NEAR_GAP: f64 = 1.0e-9;

/// The position correction leaves an end at most this far past (rad or m).
pub(in crate::solver) const LIMIT_TOLERANCE: f64 = 1.0e-9;

/// The frictionless contact rows of a limit end: its row, then two empty tangent rows.
fn limit_rows(e: &LimitEnd, u0: f64, target: f64) -> ContactRows {
    let empty = Row {
        dir: Vector3::zeros(),
        ang1: Vector3::zeros(),
        ang2: Vector3::zeros(),
        ..e.row
    };
    ContactRows {
        rows: [e.row, empty, empty],
        u0: [u0, 0.0, 0.0],
        target,
        mu: 0.0,
        slip_start: Vector2::zeros(),
        spin: crate::contact::spin::Spin::NONE,
    }
}

/// The mean row velocity that closes `gap` in a step of `h`: the Cayley map's for an angle.
fn closing_mean(e: &LimitEnd, h: f64) -> f64 {
    match e.coordinate {
        LimitedCoordinate::Angle => -(2.0 / h) * (0.5 * e.gap).tan(),
        LimitedCoordinate::Travel => -e.gap / h,
    }
}

impl Step<'_> {
    /// Whether any joint has limits.
    pub(in crate::solver) fn has_limits(&self) -> bool {
        self.joints.iter().any(|j| j.limits.any())
    }

    /// Starts the step's limit impulses at zero (one pair per joint).
    pub(in crate::solver) fn reset_limit_impulses(&mut self) {
        let c = &mut self.s.contact;
        c.limit_impulse.clear();
        c.limit_impulse.resize(self.joints.len(), [0.0; 2]);
    }

    /// The limit ends at the contact stages' poses (the start poses) whose gap the step could
    /// close, with row velocities `now` and at the start, into the scratch's `limits`.
    pub(in crate::solver) fn gather_limit_ends(
        &mut self,
        h: f64,
        now: (&[Vector3<f64>], &[Vector3<f64>]),
        start: (&[Vector3<f64>], &[Vector3<f64>]),
    ) {
        let c = &mut self.s.contact;
        c.limits.clear();
        for (i, j) in self.joints.iter().enumerate() {
            if !j.limits.any() {
                continue;
            }
            let (p1, p2) = (&c.poses[j.body1], &c.poses[j.body2]);
            j.limit_ends(i, p1, p2, |e| {
                let reach = h
                    * (e.row.velocity(now.0, now.1).abs() + e.row.velocity(start.0, start.1).abs());
                if e.gap <= reach + NEAR_GAP {
                    c.limits.push(e);
                }
            });
        }
    }

    /// Appends the impact solve's rows of the gathered ends at the velocities `v`, `w`:
    /// Newton's target for an impacting end, otherwise its gap not closed further. Returns
    /// whether any end impacts.
    pub(in crate::solver) fn push_limit_impact_rows(
        &mut self,
        v_imp: f64,
        h: f64,
        v: &[Vector3<f64>],
        w: &[Vector3<f64>],
    ) -> bool {
        let c = &mut self.s.contact;
        let mut any = false;
        for e in &c.limits {
            let u = e.row.velocity(v, w);
            let target = if u < -v_imp && e.gap + h * u < 0.0 {
                any = true;
                -self.joints[e.joint].limits.restitution * u
            } else {
                -e.gap.max(0.0) / h
            };
            c.rows.push(limit_rows(e, u, target));
        }
        any
    }

    /// Appends the contact-rows stage's rows of the gathered ends (see the module docs).
    pub(in crate::solver) fn push_limit_rows(
        &mut self,
        v_imp: f64,
        h: f64,
        now: &RowVelocities,
        start: &RowVelocities,
    ) {
        let c = &mut self.s.contact;
        for e in &c.limits {
            let u0 = e.row.velocity(&now.v, &now.w);
            let us = e.row.velocity(&start.v, &start.w);
            let close = 2.0 * closing_mean(e, h);
            let mut target = close - us;
            if us < -v_imp {
                target = target.min(close.max(0.0));
            }
            c.rows.push(limit_rows(e, u0, target));
        }
    }

    /// Books the solve's impulses of the limit rows (those after the first `n`, the
    /// contacts') into the joints' limit impulses, and leaves the contacts' rows and impulses.
    pub(in crate::solver) fn take_limit_impulses(&mut self, n: usize) {
        let c = &mut self.s.contact;
        for (e, i) in c.limits.iter().zip(c.impulses.iter().skip(n)) {
            if i.handled {
                c.limit_impulse[e.joint][e.coordinate.index()] += e.sign * i.normal;
            }
        }
        c.impulses.truncate(n);
        c.rows.truncate(n);
    }

    /// The step's limit forces (impulses / h) per joint: torque about the hinge axis (N·m),
    /// force along the slide axis (N), on body 2.
    pub(in crate::solver) fn finish_limit_forces(&mut self) {
        let h = self.ctx.h;
        let c = &mut self.s.contact;
        c.limit_force.clear();
        c.limit_force
            .extend(c.limit_impulse.iter().map(|[a, t]| [a / h, t / h]));
    }
}

impl Step<'_> {
    /// The ends of the limits at the current poses, into the scratch's `limits`; returns how
    /// far the deepest is past its end (rad or m, ≥ 0).
    fn limit_ends_now(&mut self) -> f64 {
        let c = &mut self.s.contact;
        c.limits.clear();
        let mut deepest = 0.0f64;
        for (i, j) in self.joints.iter().enumerate() {
            if j.limits.any() {
                let (p1, p2) = (
                    Pose::of(&self.bodies[j.body1]),
                    Pose::of(&self.bodies[j.body2]),
                );
                j.limit_ends(i, &p1, &p2, |e| {
                    deepest = deepest.max(-e.gap);
                    c.limits.push(e);
                });
            }
        }
        deepest
    }

    /// How far the deepest limit end is past at the current poses (rad or m, ≥ 0; 0 without
    /// limits).
    pub(in crate::solver) fn limit_violation(&mut self) -> f64 {
        if self.has_limits() {
            self.limit_ends_now()
        } else {
            0.0
        }
    }

    /// One position projection of every end past its limit along its row, with the two
    /// bodies' own masses (poses only; the joints' projection follows in the next sweep).
    pub(in crate::solver) fn project_limits(&mut self) {
        self.limit_ends_now();
        for k in 0..self.s.contact.limits.len() {
            let e = self.s.contact.limits[k];
            if e.gap >= 0.0 {
                continue;
            }
            let (b1, b2) = (e.row.body1, e.row.body2);
            let (m1, m2) = (self.bodies[b1].inv_mass, self.bodies[b2].inv_mass);
            let (i1, i2) = (self.s.body.inv_inertia[b1], self.s.body.inv_inertia[b2]);
            let r = &e.row;
            let k_eff = (m1 + m2) * r.dir.norm_squared()
                + r.ang1.dot(&(i1 * r.ang1))
                + r.ang2.dot(&(i2 * r.ang2));
            if k_eff <= 0.0 {
                continue;
            }
            let lambda = -e.gap / k_eff;
            for (b, m, i, ang, sign) in [(b2, m2, i2, r.ang2, 1.0), (b1, m1, i1, r.ang1, -1.0)] {
                let body = &mut self.bodies[b];
                if body.is_dynamic() {
                    body.position_in_world += r.dir * (sign * m * lambda);
                    body.world_from_body_rotation = advance_rotation(
                        &body.world_from_body_rotation,
                        &(i * ang * (sign * lambda)),
                        1.0,
                    );
                }
            }
        }
    }
}
