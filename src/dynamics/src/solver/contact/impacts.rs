//! Stage 0 of a contact step, the impacts (see [`crate::solver::contact`] for the stages): at the
//! start poses, every contact that approaches faster than `impact_speed_m_per_s` and would
//! close within the step gets Newton's restitution impulse with Mirtich's friction
//! prediction, in sweeps until no such contact is left; with joints, one simultaneous solve
//! of the contact and joint impulses ([`crate::contact::through_joints`]).

use nalgebra::{Vector2, Vector3};

use super::bilateral::joint_rows_at;
use super::{add_velocity_change, row_velocities, rows_of, tip_work, RowVelocities};
use crate::contact::impact;
use crate::contact::lcp::{ContactRows, Row};
use crate::contact::{ContactPoint, DEFAULT_IMPACT_SPEED_M_PER_S};
use crate::solver::Step;

impl Step<'_> {
    /// Stage 0 (contact only): detection at the start poses and the impact sweeps.
    pub(in crate::solver) fn contact_impacts(&mut self) {
        let limited = self.has_limits();
        if limited {
            self.reset_limit_impulses();
        }
        let model = self.contact;
        if model.is_none() && !limited {
            return;
        }
        let v_imp = model.map_or(DEFAULT_IMPACT_SPEED_M_PER_S, |m| m.impact_speed_m_per_s);
        let h = self.ctx.h;
        self.contact_masses();
        self.detect_contacts(false);
        let mut now = std::mem::take(&mut self.s.contact.now);
        let mut rows = std::mem::take(&mut self.s.contact.impact_rows);
        self.contact_velocities(false, &mut now);
        self.impact_sweeps(v_imp, h, &mut now, &mut rows);
        self.s.contact.now = now;
        self.s.contact.impact_rows = rows;
    }

    /// The impact stage after detection, with the velocities now and a buffer for the rows.
    fn impact_sweeps(
        &mut self,
        v_imp: f64,
        h: f64,
        now: &mut RowVelocities,
        rows: &mut Vec<[Row; 3]>,
    ) {
        let RowVelocities { v, w } = now;
        let (tip, v_tip) = self.tip_motion();
        let limited = self.has_limits();
        let c = &mut self.s.contact;
        let n = c.points.len();
        c.impact.clear();
        c.impact.resize(n, [0.0; 3]);
        c.limits.clear();
        if n == 0 && !limited {
            return;
        }
        rows.clear();
        rows.extend(c.points.iter().map(|p| rows_of(p, &c.poses)));

        let kinetic_before: f64 = self.bodies.iter().map(|b| b.kinetic_energy_j()).sum();
        let impacted = if self.joints.is_empty() {
            self.sequential_impacts(v_imp, h, v, w, rows)
        } else {
            self.simultaneous_impacts(v_imp, h, v, w, rows)
        };
        if impacted {
            self.book_impacts(kinetic_before, rows, tip, &v_tip);
        }
    }

    /// With joints, the impact is one simultaneous system of the contact impulses and the
    /// joints' attachment impulses (the virtual-mobile paper's §6, after Moore): the joints'
    /// rows are those of the start poses, their target zero row velocity (see the module
    /// docs), eliminated exactly, and the contacts solved through them by projected
    /// Gauss–Seidel (see `through_joints`). Returns whether any contact impacted.
    fn simultaneous_impacts(
        &mut self,
        v_imp: f64,
        h: f64,
        v: &[Vector3<f64>],
        w: &[Vector3<f64>],
        rows: &[[Row; 3]],
    ) -> bool {
        let impacting = |k: usize, p: &ContactPoint| {
            let u = row_velocities(&rows[k], v, w);
            u[0] < -v_imp && p.gap_m + h * u[0] < 0.0
        };
        if self.has_limits() {
            self.gather_limit_ends(h, (v, w), (v, w));
        }
        let c = &mut self.s.contact;
        let contacts_impact = c.points.iter().enumerate().any(|(k, p)| impacting(k, p));
        c.rows.clear();
        for (k, p) in c.points.iter().enumerate() {
            let u0 = row_velocities(&rows[k], v, w);
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
                spin: crate::contact::spin::Spin::NONE,
            });
        }
        let n = c.points.len();
        let limits_impact = self.push_limit_impact_rows(v_imp, h, v, w);
        if !contacts_impact && !limits_impact {
            self.s.contact.limits.clear();
            return false;
        }
        let c = &mut self.s.contact;
        c.bilateral.clear();
        joint_rows_at(self.joints, &c.poses, |mut b, _| {
            b.change = -b.row.velocity(v, w);
            c.bilateral.push(b);
        });
        c.solve_through_joints();
        for (k, i) in c.impulses.iter().enumerate().take(n) {
            if i.handled {
                c.impact[k] = [i.normal, i.tangent.x, i.tangent.y];
            }
        }
        add_velocity_change(self.bodies, &c.delta);
        self.take_limit_impulses(n);
        true
    }

    /// Without joints: Newton's impulse at each impacting contact in turn, on the velocities
    /// `v`, `w`, in sweeps until no contact impacts; then the bodies take them. Returns
    /// whether any contact impacted.
    ///
    /// A contact whose bodies' velocities have not changed since it was last looked at (and
    /// found not impacting) would be found so again, so it is skipped: a pile's impacts run
    /// hundreds of sweeps over a thousand contacts of which a few still impact. The clocks
    /// make the skip exact (the same impulses, in the same order, as looking at every one).
    fn sequential_impacts(
        &mut self,
        v_imp: f64,
        h: f64,
        v: &mut [Vector3<f64>],
        w: &mut [Vector3<f64>],
        rows: &[[Row; 3]],
    ) -> bool {
        let c = &mut self.s.contact;
        let n = c.points.len();
        let mut any_impact = false;
        let looked_at = &mut c.impact_looked_at;
        looked_at.clear();
        looked_at.resize(n, 0);
        let changed_at = &mut c.impact_changed_at;
        changed_at.clear();
        changed_at.resize(v.len(), 0);
        let delassus = &mut c.impact_delassus;
        delassus.clear();
        delassus.resize(n, None);
        // Only bodies that an impulse moves change velocity (not the ground, the statics).
        let movable: &[_] = &c.inv_mass;
        let moves = |b: usize| {
            movable[b].inv_mass != 0.0 || movable[b].inv_inertia != nalgebra::Matrix3::zeros()
        };
        let mut clock: u64 = 1;
        for _sweep in 0..(50 * n + 10) {
            let mut any = false;
            for (k, p) in c.points.iter().enumerate() {
                if changed_at[p.body1] < looked_at[k] && changed_at[p.body2] < looked_at[k] {
                    continue;
                }
                looked_at[k] = clock;
                let u = row_velocities(&rows[k], v, w);
                if u[0] < -v_imp && p.gap_m + h * u[0] < 0.0 {
                    // The rows and masses stay for the stage: each contact's matrix once.
                    let delassus = delassus[k]
                        .get_or_insert_with(|| impact::contact_delassus(&rows[k], &c.inv_mass));
                    let imp = impact::impact_impulse(
                        delassus,
                        u,
                        p.material.restitution,
                        p.material.friction,
                    );
                    if imp[0] > 0.0 {
                        for r in 0..3 {
                            rows[k][r].apply(imp[r], &c.inv_mass, v, w);
                            c.impact[k][r] += imp[r];
                        }
                        for b in [p.body1, p.body2] {
                            if moves(b) {
                                changed_at[b] = clock;
                            }
                        }
                        clock += 1;
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
            for ((b, v), w) in self.bodies.iter_mut().zip(v.iter()).zip(w.iter()) {
                if b.is_dynamic() {
                    b.linear_velocity_in_world = *v;
                    b.angular_velocity_in_world = *w;
                }
            }
        }
        any_impact
    }

    /// Books the impacts' energy: the kinetic energy they removed as dissipated, less the work
    /// the pushing tip did (the user's).
    fn book_impacts(
        &mut self,
        kinetic_before: f64,
        rows: &[[Row; 3]],
        tip: Option<usize>,
        v_tip: &Vector3<f64>,
    ) {
        let kinetic_after: f64 = self.bodies.iter().map(|b| b.kinetic_energy_j()).sum();
        let user: f64 = rows
            .iter()
            .zip(&self.s.contact.impact)
            .map(|(r, i)| tip_work(tip, v_tip, r, *i))
            .sum();
        self.s.ledger.dissipated_j += kinetic_before - kinetic_after + user;
        self.s.ledger.user_work_j += user;
    }
}
