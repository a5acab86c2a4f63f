//! Stage 5b with contact: with `right`, the penetration left at the end of a step is
//! projected away by moving the poses along M⁻¹Jᵀ (velocities are not changed); then the
//! contacts at the end poses give the step's report, and for Alg. 1 and 2 the next step's
//! insertions. Both projections take the end contacts within the model's margin: the end
//! detection also finds the points the next step will predict (see `detection`), and with
//! rows that far apart the pile at `tolerance_m = 1e-6` settled with 3e-4 J of kinetic
//! energy instead of 6e-8 J.
//!
//! - Without joints, projected Gauss–Seidel on the re-detected contacts' gaps, linearised at
//!   each detection's poses (see `linear_projection`), until the deepest penetration is under [`PROJECTION_TOLERANCE_M`],
//!   or, after a contact solve that stopped short of convergence (a pile's sweeps), under h
//!   times its velocity error, at most the solver's position tolerance; with the scene's
//!   `[contact] tolerance_m`, under that.
//! - With joints, the joints' ψ and the contacts' gaps are projected together: each pass is
//!   a Newton step on both, the joint rows as equalities J Δq = −ψ and the contact normals as
//!   unilateral rows (Δgap ≥ −gap, push only), with the active set found as for the contact
//!   impulses (Jonquet et al.'s Alg. 3 in [`lcp::solve`]). Projecting them one after the
//!   other instead made each undo the other: a chain lying on the desk had its links pushed
//!   out of the desk against its hinges, then pulled back in by the joints' own pass, which
//!   then could not close ψ under its tolerance.

use nalgebra::Vector2;

use super::bilateral::joint_rows_at;
use super::{rows_of, within_margin};
use crate::contact::lcp;
use crate::contact::lcp::{ContactRows, Insertion};
use crate::contact::{ContactPoint, ContactReport, InequalityMethod};
use crate::model::body::{advance_rotation, Pose};
use crate::solver::Step;

/// Penetration (m) and joint error (‖ψ‖, m) the projection leaves at most.
pub(in crate::solver) const PROJECTION_TOLERANCE_M: f64 = 1.0e-10;
/// Projection sweeps (without joints; a detection each) or Newton passes (with joints) at
/// most.
const MAX_PROJECTION_SWEEPS: usize = 30;
/// Gauss–Seidel sweeps on the linearised gaps per detection (without joints).
const LINEAR_SWEEPS: usize = 16;

impl super::ContactScratch {
    /// One projection sweep's displacements (into `delta`: translation, rotation vector per
    /// body) from the end contacts: projected Gauss–Seidel on their gaps linearised at the
    /// detection's poses (gap + J Δq ≥ 0, push only, the pushes accumulated so that a
    /// contact pushed too far by its neighbours' pushes gives back), until the linearised
    /// deepest penetration is under half the tolerance or after [`LINEAR_SWEEPS`]. One pass
    /// per detection with stale gaps, as before, left a pile's contacts undoing each other's
    /// corrections: a pile whose contact sweeps stop short needed all 30 detections.
    fn linear_projection(&mut self, tolerance: f64, margin_m: f64) {
        let bodies = self.inv_mass.len();
        for d in [&mut self.delta.v, &mut self.delta.w] {
            d.clear();
            d.resize(bodies, nalgebra::Vector3::zeros());
        }
        self.projection_linear.clear();
        for p in within_margin(&self.end_points, margin_m) {
            let row = rows_of(p, &self.poses)[0];
            let k = row.coupling(&row, &self.inv_mass);
            if k > 0.0 {
                self.projection_linear.push((row, p.gap_m, k, 0.0));
            }
        }
        let (dx, dth) = (&mut self.delta.v, &mut self.delta.w);
        for _ in 0..LINEAR_SWEEPS {
            let mut deepest = 0.0f64;
            for (row, gap, k, pushed) in self.projection_linear.iter_mut() {
                let g = *gap + row.velocity(dx, dth);
                deepest = deepest.max(-g);
                let new = (*pushed - g / *k).max(0.0);
                let change = new - *pushed;
                if change == 0.0 {
                    continue;
                }
                *pushed = new;
                let (m1, m2) = (&self.inv_mass[row.body1], &self.inv_mass[row.body2]);
                dx[row.body2] += row.dir * (m2.inv_mass * change);
                dth[row.body2] += m2.inv_inertia * row.ang2 * change;
                dx[row.body1] -= row.dir * (m1.inv_mass * change);
                dth[row.body1] -= m1.inv_inertia * row.ang1 * change;
            }
            if deepest <= 0.5 * tolerance {
                break;
            }
        }
    }
}

impl Step<'_> {
    /// Projects penetration away without joints (see the module docs). Returns whether the
    /// end contacts are those of the final poses (they are not when the sweeps ran out).
    pub(in crate::solver) fn project_contacts(&mut self) -> bool {
        // No finer than the velocity solve: Gauss–Seidel sweeps that stopped short of
        // convergence (a pile's) leave row velocities off by up to a few 1e-5 m/s, which move
        // the contacts by h times that in the next step, so projecting further is undone
        // there; but never coarser than the joints' position tolerance (in a pile's impacts the
        // residual is ~0.1 m/s, and h times that left millimetres). Measured on
        // assets/scenes/pile.toml (6 s): the sweeps stop at ~1e-7 m instead of running all
        // [`MAX_PROJECTION_SWEEPS`] (a full detection each) toward 1e-10 m; 57 -> 36 ms per
        // step, kinetic energy after 5 s 1.2e-7 J (1.8e-7 before), deepest penetration the
        // same 2.3e-5 m (in the impacts). A converged solve keeps PROJECTION_TOLERANCE_M.
        // With the scene's precision setting the projection stops at it, whatever the sweeps
        // left: the step never ends deeper than the user allowed.
        let residual = std::mem::take(&mut self.s.contact.velocity_residual_m_per_s);
        let margin_m = self.contact_model().map_or(0.0, |m| m.margin_m);
        let tolerance = match self.contact_model().and_then(|m| m.tolerance_m) {
            Some(t) => t.max(PROJECTION_TOLERANCE_M),
            None => PROJECTION_TOLERANCE_M
                .max((self.ctx.h * residual).min(self.ctx.position_tolerance_m)),
        };
        for _ in 0..MAX_PROJECTION_SWEEPS {
            let worst = self.detect_end_contacts();
            if worst <= tolerance {
                return true;
            }
            let c = &mut self.s.contact;
            c.linear_projection(tolerance, margin_m);
            for (b, (dx, turn)) in self.bodies.iter_mut().zip(c.delta.v.iter().zip(&c.delta.w)) {
                if b.is_dynamic() {
                    b.position_in_world += dx;
                    b.world_from_body_rotation =
                        advance_rotation(&b.world_from_body_rotation, turn, 1.0);
                }
            }
        }
        false
    }

    /// Projects penetration and joint error away together (see the module docs). Returns
    /// whether the end contacts are those of the final poses, as [`Self::project_contacts`].
    pub(in crate::solver) fn project_contacts_and_joints(&mut self) -> bool {
        let margin_m = self.contact_model().map_or(0.0, |m| m.margin_m);
        for _ in 0..MAX_PROJECTION_SWEEPS {
            let worst = self.detect_end_contacts();
            let c = &mut self.s.contact;
            c.bilateral.clear();
            let mut psi_squared = 0.0;
            joint_rows_at(self.joints, &c.poses, |mut b, e| {
                psi_squared += e * e;
                b.change = -e;
                c.bilateral.push(b);
            });
            if worst <= PROJECTION_TOLERANCE_M && psi_squared.sqrt() <= PROJECTION_TOLERANCE_M {
                return true;
            }
            // A displacement is a velocity over a unit time: a contact row that would end
            // below its gap's closure is inserted.
            c.projection_rows.clear();
            for p in within_margin(&c.end_points, margin_m) {
                c.projection_rows.push(ContactRows {
                    rows: rows_of(p, &c.poses),
                    u0: [0.0; 3],
                    target: -p.gap_m,
                    mu: 0.0,
                    slip_start: Vector2::zeros(),
                    spin: crate::contact::spin::Spin::NONE,
                });
            }
            c.handled.clear();
            c.handled.resize(c.projection_rows.len(), false);
            lcp::solve(
                &c.projection_rows,
                &c.bilateral,
                &c.inv_mass,
                &mut c.handled,
                Insertion::Right,
                &mut c.lcp,
                &mut c.projection_impulses,
                &mut c.delta,
            );
            for ((b, dx), turn) in self.bodies.iter_mut().zip(&c.delta.v).zip(&c.delta.w) {
                if b.is_dynamic() {
                    b.position_in_world += dx;
                    b.world_from_body_rotation =
                        advance_rotation(&b.world_from_body_rotation, turn, 1.0);
                }
            }
        }
        false
    }

    /// Stage 5b (contact only, `right`): projects penetration away, then detects the end
    /// contacts for the report (and, for Alg. 1 and 2, the insertions of the next step).
    pub(in crate::solver) fn contact_project_and_report(&mut self) {
        let Some(model) = self.contact_model() else {
            return;
        };
        let method = model.method;
        let h = self.ctx.h;
        // Whether the end contacts were last detected at the poses the step ends with.
        let mut detected = false;
        if method == InequalityMethod::Right {
            detected = if self.joints.is_empty() {
                self.project_contacts()
            } else {
                self.project_contacts_and_joints()
            };
            // The predicted poses are the poses (the joints' position pass reads them).
            for (p, b) in self.s.body.predicted.iter_mut().zip(self.bodies.iter()) {
                *p = Pose::of(b);
            }
            self.s.versions.prediction.advance();
        }
        let deepest = if detected {
            self.s.contact.deepest_end_penetration_m()
        } else {
            self.detect_end_contacts()
        };
        let c = &mut self.s.contact;
        c.max_penetration_m = deepest;
        // Alg. 1 inserts the rows violated at the end of the step; Alg. 2 those whose
        // violation tendency was negative in this step.
        match method {
            InequalityMethod::Right => {}
            InequalityMethod::Platt => {
                for p in c.end_points.iter().filter(|p| p.gap_m < 0.0) {
                    if let Err(at) = c.kept.binary_search(&p.key()) {
                        c.kept.insert(at, p.key());
                    }
                }
            }
            InequalityMethod::Tendency => {
                for (k, p) in c.points.iter().enumerate() {
                    let i = &c.impulses[k];
                    if !i.handled && i.u[0] < c.rows[k].target - lcp::TENDENCY_TOLERANCE {
                        if let Err(at) = c.kept.binary_search(&p.key()) {
                            c.kept.insert(at, p.key());
                        }
                    }
                }
            }
        }
        c.report.clear();
        for (k, p) in c.points.iter().enumerate() {
            let i = c.impulses.get(k).copied().unwrap_or_default();
            let imp = c.impact[k];
            let normal = imp[0] + if i.handled { i.normal } else { 0.0 };
            let friction = Vector2::new(imp[1], imp[2])
                + if i.handled {
                    i.tangent
                } else {
                    Vector2::zeros()
                };
            // Both lists are in key order (`geometry::detect`): a search, not a scan, so
            // that the report stays linear in the contacts of a large sheet.
            let gap_m = c
                .end_points
                .binary_search_by_key(&p.key(), ContactPoint::key)
                .map_or_else(
                    |_| p.gap_m + 0.5 * h * (c.rows[k].u0[0] + i.u[0]),
                    |e| c.end_points[e].gap_m,
                );
            c.report.push(ContactReport {
                shape1: p.collider1,
                shape2: p.collider2,
                point_in_world: 0.5 * (p.point1 + p.point2),
                normal: p.normal,
                gap_m,
                normal_force_n: normal / h,
                friction_force_n: friction.norm() / h,
            });
        }
    }
}
