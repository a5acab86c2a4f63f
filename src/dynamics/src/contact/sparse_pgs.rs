//! Contact impulses of many contacts between free bodies (no joints): projected Gauss–Seidel
//! on the bodies' velocities, one row at a time, warm-started from the last step's impulses.
//!
//! The dense active set ([`super::lcp::solve`]) factors the contacts' Delassus matrix once per
//! insertion, which is right for the tens of contacts of the teaching scenes and hopeless for
//! a pile (a thousand contacts: seconds per step). Here each row's impulse change is its
//! velocity error over its own effective mass, applied at once to the two bodies' velocities,
//! so a sweep costs a few dozen operations per contact and no matrix is formed:
//!
//! - normal: λₙ ← max(0, λₙ − (uₙ − target) / Wₙₙ);
//! - friction: both tangent rows stepped the same way, then clamped to the disc μ λₙ (the
//!   isotropic cone, as the other contact solves);
//! - spin friction (where the pair has it): the spin row stepped the same way, then clamped
//!   to ±μ_spin λₙ;
//! - the law and its residual are those of [`super::through_joints`]
//!   ([`super::through_joints::contact_residual`]): a loaded normal row on its target, an
//!   unloaded one at or above it, a friction impulse sticking inside the disc or sliding on
//!   its edge against the slip; the spin row's, a spin sticking inside its bound or braked on
//!   it, in m/s as the spin error times the contact's lever arm on the moving bodies (the
//!   velocity error it makes at the bodies' surface: in rad/s the spin rows alone doubled
//!   the sweeps of a resting pile).
//!
//! A resting pile's impulses change little from step to step, so each contact starts from
//! the impulse the contact with the same key (colliders and manifold index) ended the last
//! step with, clamped to the law; the sweeps then correct what changed. They stop once the
//! residual is under the caller's tolerance ([`super::through_joints::RESIDUAL_TOLERANCE_M_PER_S`] by default, or
//! the scene's `[contact] tolerance_m` over h), once it stalls (it fell by less than a tenth
//! over the last [`STALL_CHECKS`] checks), or after [`MAX_SWEEPS`].
//!
//! Sweeps run in contact order (the detection's collider order), so the result is
//! deterministic.

use nalgebra::{Vector2, Vector3};

use super::lcp::{ContactImpulse, ContactRows, InverseMass, Row, VelocityChange};
use super::spin::spin_residual;
use super::sweep_focus::SweepFocus;
use super::through_joints::{contact_residual, SweepStats};

/// Sweeps at most per solve.
pub const MAX_SWEEPS: usize = 500;

/// One contact's three rows (normal, t₁, t₂) as the sweeps read them, with their impulse
/// responses. The solve keeps them in sweep order, so that a sweep reads them front to back
/// (or back to front) instead of jumping through the contacts.
#[derive(Clone, Copy, Debug)]
struct Packed {
    body1: usize,
    body2: usize,
    inv_mass1: f64,
    inv_mass2: f64,
    dir: [Vector3<f64>; 3],
    ang1: [Vector3<f64>; 3],
    ang2: [Vector3<f64>; 3],
    /// M⁻¹ Jᵀ, angular parts: the angular velocity change of body 1 (subtracted) and body 2
    /// per unit impulse (the linear ones are dir / m).
    dw1: [Vector3<f64>; 3],
    dw2: [Vector3<f64>; 3],
    /// J M⁻¹ Jᵀ of each row (1/m/s per N·s).
    diag: [f64; 3],
    u0: [f64; 3],
    target: f64,
    mu: f64,
    spin: PackedSpin,
}

/// A contact's spin row as the sweeps read it (all zero without spin friction).
#[derive(Clone, Copy, Debug, Default)]
struct PackedSpin {
    mu_m: f64,
    /// The normal (the row's angular direction on both bodies) and I⁻¹ n of each body.
    axis: Vector3<f64>,
    dw1: Vector3<f64>,
    dw2: Vector3<f64>,
    diag: f64,
    u0: f64,
    /// The larger lever arm of the two moving bodies (m): a spin error times it is the
    /// velocity error it makes at the contact's distance from their centres, the residual's
    /// measure (m/s) for the spin row.
    reach_m: f64,
}

impl Packed {
    fn of(c: &ContactRows, m: &[InverseMass]) -> Self {
        let [n, _, _] = &c.rows;
        debug_assert!(c
            .rows
            .iter()
            .all(|r| r.body1 == n.body1 && r.body2 == n.body2));
        let (m1, m2) = (&m[n.body1], &m[n.body2]);
        Self {
            body1: n.body1,
            body2: n.body2,
            inv_mass1: m1.inv_mass,
            inv_mass2: m2.inv_mass,
            dir: c.rows.map(|r| r.dir),
            ang1: c.rows.map(|r| r.ang1),
            ang2: c.rows.map(|r| r.ang2),
            dw1: c.rows.map(|r| m1.inv_inertia * r.ang1),
            dw2: c.rows.map(|r| m2.inv_inertia * r.ang2),
            diag: c.rows.map(|r| r.coupling(&r, m)),
            u0: c.u0,
            target: c.target,
            mu: c.mu,
            spin: if c.spin.mu_m > 0.0 {
                let axis = n.dir;
                let row = c.spin_row();
                PackedSpin {
                    mu_m: c.spin.mu_m,
                    axis,
                    dw1: m1.inv_inertia * axis,
                    dw2: m2.inv_inertia * axis,
                    diag: row.coupling(&row, m),
                    u0: c.spin.u0,
                    reach_m: lever_arm_m(&c.rows, |r| r.ang1, m1).max(lever_arm_m(
                        &c.rows,
                        |r| r.ang2,
                        m2,
                    )),
                }
            } else {
                PackedSpin::default()
            },
        }
    }

    /// The spin row's velocity that the impulses so far add (rad/s).
    #[inline(always)]
    fn spin_velocity(&self, dw: &[Vector3<f64>]) -> f64 {
        self.spin.axis.dot(&(dw[self.body2] - dw[self.body1]))
    }

    /// Row `r`'s velocity that the impulses so far add (m/s): [`Row::velocity`]'s sum, on the
    /// body pair the three rows share (kept once rather than in every row: a `[Row; 3]` here
    /// made the pile's step 7 % slower).
    ///
    /// [`Row::velocity`]: super::lcp::Row::velocity
    #[inline(always)]
    fn velocity(&self, r: usize, dv: &[Vector3<f64>], dw: &[Vector3<f64>]) -> f64 {
        let (b1, b2) = (self.body1, self.body2);
        self.dir[r].dot(&(dv[b2] - dv[b1])) + self.ang2[r].dot(&dw[b2]) - self.ang1[r].dot(&dw[b1])
    }

    /// Applies spin impulse `lambda` (N·m·s) to the two bodies' angular velocity changes.
    #[inline(always)]
    fn apply_spin(&self, lambda: f64, dw: &mut [Vector3<f64>]) {
        dw[self.body2] += self.spin.dw2 * lambda;
        dw[self.body1] -= self.spin.dw1 * lambda;
    }

    /// Applies impulse `lambda` along row `r` to the two bodies' velocity changes.
    #[inline(always)]
    fn apply(&self, r: usize, lambda: f64, dv: &mut [Vector3<f64>], dw: &mut [Vector3<f64>]) {
        let (b1, b2) = (self.body1, self.body2);
        dv[b2] += self.dir[r] * self.inv_mass2 * lambda;
        dw[b2] += self.dw2[r] * lambda;
        dv[b1] -= self.dir[r] * self.inv_mass1 * lambda;
        dw[b1] -= self.dw1[r] * lambda;
    }

    /// One Gauss–Seidel step on this contact's impulses `l` (normal, t₁, t₂, spin): the normal
    /// row, the two tangent rows clamped to the disc, then the spin row clamped to its bound.
    /// Returns whether any impulse changed.
    #[inline(always)]
    fn relax(&self, l: &mut [f64; 4], dv: &mut [Vector3<f64>], dw: &mut [Vector3<f64>]) -> bool {
        let c = self;
        let mut changed = false;
        if c.diag[0] > 0.0 {
            let u = c.u0[0] + c.velocity(0, dv, dw);
            let new = (l[0] - (u - c.target) / c.diag[0]).max(0.0);
            if new != l[0] {
                c.apply(0, new - l[0], dv, dw);
                l[0] = new;
                changed = true;
            }
        }
        // Unloaded and without friction impulse, the disc is a point and the tangent rows stay
        // at zero: skipping them gives the same bits (a separating contact, most of a
        // falling pile's predicted ones, then costs one row instead of three).
        if c.mu > 0.0 && l[..3] != [0.0; 3] {
            let mut t = Vector2::new(l[1], l[2]);
            for r in 0..2 {
                if c.diag[r + 1] > 0.0 {
                    t[r] -= (c.u0[r + 1] + c.velocity(r + 1, dv, dw)) / c.diag[r + 1];
                }
            }
            let bound = c.mu * l[0];
            if t.norm() > bound {
                t *= bound / t.norm();
            }
            for r in 0..2 {
                let change = t[r] - l[r + 1];
                if change != 0.0 {
                    c.apply(r + 1, change, dv, dw);
                    l[r + 1] = t[r];
                    changed = true;
                }
            }
        }
        let s = &c.spin;
        if s.mu_m > 0.0 && (l[0] != 0.0 || l[3] != 0.0) && s.diag > 0.0 {
            let bound = s.mu_m * l[0];
            let new = (l[3] - (s.u0 + c.spin_velocity(dw)) / s.diag).clamp(-bound, bound);
            let change = new - l[3];
            if change != 0.0 {
                c.apply_spin(change, dw);
                l[3] = new;
                changed = true;
            }
        }
        changed
    }

    /// The contact's bodies that its impulses move (`None`: the ground, a sleeping body, the
    /// stylus tip).
    fn moving_bodies(&self) -> [Option<usize>; 2] {
        [
            (self.inv_mass1 != 0.0).then_some(self.body1),
            (self.inv_mass2 != 0.0).then_some(self.body2),
        ]
    }
}

/// A moving body's lever arm |r| at a contact (m; 0 for a fixed body), from its rows' r × d
/// along three orthonormal directions (Σ |r × dᵢ|² = 2 |r|²).
fn lever_arm_m(rows: &[Row; 3], ang: impl Fn(&Row) -> Vector3<f64>, m: &InverseMass) -> f64 {
    if m.inv_mass == 0.0 {
        return 0.0;
    }
    (rows.iter().map(|r| ang(r).norm_squared()).sum::<f64>() / 2.0).sqrt()
}

/// Whether a contact's impulses `l` carry a load (what [`contact_residual`] asks before it
/// reads the tangent rows).
fn loaded(l: &[f64; 4]) -> bool {
    l[0] > 0.0
}

/// The sweeps check the residual every this many sweeps (the check costs about a sweep).
const CHECK_EVERY: usize = 4;

/// A pile's sweeps after this many relax every contact only while more than half of them
/// are active ([`super::sweep_focus`]).
const FULL_SWEEPS: usize = 8;
/// The focused sweeps relax the contacts whose residual is over this fraction of the largest
/// (or over the tolerance, if that is more).
const FOCUS_FRACTION: f64 = 0.3;

/// The sweeps stop, converged or not, once the residual is more than [`STALL_RATIO`] times
/// what it was this many checks before (32 sweeps).
const STALL_CHECKS: usize = 8;
/// See [`STALL_CHECKS`].
const STALL_RATIO: f64 = 0.9;

/// The solve's buffers, kept between steps (no allocation once grown).
#[derive(Clone, Debug, Default)]
pub struct PgsScratch {
    /// The contacts' rows in sweep order (entry p is contact `order[p]`).
    packed: Vec<Packed>,
    /// Where each contact is in `packed`.
    position: Vec<usize>,
    /// Row velocities now, per contact (normal, t₁, t₂).
    u: Vec<[f64; 3]>,
    /// Impulses now (normal, t₁, t₂, spin), in sweep order.
    lambda: Vec<[f64; 4]>,
    /// Spin row velocities now, per contact.
    u_spin: Vec<f64>,
    /// Residuals at the last check, in sweep order.
    residuals: Vec<f64>,
    /// The focused sweeps' contacts and bodies.
    focus: SweepFocus,
}

/// Solves the contacts' impulses (see the module docs). `warm[k]` is contact k's starting
/// impulse (normal, t₁, t₂, spin; zeros when it is new); `order` the contacts' indices in the order the sweeps
/// take them (a permutation of 0..n); `tolerance_m_per_s` the residual at which the sweeps
/// stop; `stop_on_stall` whether they also stop when it stalls ([`STALL_CHECKS`]). Writes
/// one impulse per contact (handled when its normal impulse is positive) and the
/// bodies' velocity change.
#[allow(clippy::too_many_arguments)]
pub fn solve(
    contacts: &[ContactRows],
    order: &[usize],
    m: &[InverseMass],
    warm: &[[f64; 4]],
    tolerance_m_per_s: f64,
    stop_on_stall: bool,
    scratch: &mut PgsScratch,
    out: &mut Vec<ContactImpulse>,
    delta: &mut VelocityChange,
) -> SweepStats {
    debug_assert_eq!(order.len(), contacts.len());
    delta.v.clear();
    delta.v.resize(m.len(), Vector3::zeros());
    delta.w.clear();
    delta.w.resize(m.len(), Vector3::zeros());
    let (dv, dw) = (&mut delta.v, &mut delta.w);
    scratch.pack(contacts, order, m);
    scratch.warm_start(contacts, warm, dv, dw);
    let stats = scratch.sweeps(contacts, order, tolerance_m_per_s, stop_on_stall, dv, dw);
    scratch.write_out(out);
    stats
}

impl PgsScratch {
    /// The contacts' rows packed in sweep order, and where each contact went.
    fn pack(&mut self, contacts: &[ContactRows], order: &[usize], m: &[InverseMass]) {
        let n = contacts.len();
        self.packed.clear();
        self.packed
            .extend(order.iter().map(|&k| Packed::of(&contacts[k], m)));
        self.position.clear();
        self.position.resize(n, 0);
        for (p, &k) in order.iter().enumerate() {
            self.position[k] = p;
        }
    }

    /// Each contact's warm impulse, clamped to the law, applied and kept as its start.
    fn warm_start(
        &mut self,
        contacts: &[ContactRows],
        warm: &[[f64; 4]],
        dv: &mut [Vector3<f64>],
        dw: &mut [Vector3<f64>],
    ) {
        self.lambda.clear();
        self.lambda.resize(contacts.len(), [0.0; 4]);
        // The warm impulses go on in contact order (detection's), so the velocity changes the
        // sweeps start from do not depend on the sweep order.
        for ((c, start), &p) in contacts.iter().zip(warm).zip(&self.position) {
            let normal = start[0].max(0.0);
            let mut t = Vector2::new(start[1], start[2]) * if c.mu > 0.0 { 1.0 } else { 0.0 };
            let bound = c.mu * normal;
            if t.norm() > bound {
                t *= bound / t.norm();
            }
            let spin_bound = c.spin.mu_m * normal;
            let spin = start[3].clamp(-spin_bound, spin_bound);
            let packed = &self.packed[p];
            for (r, li) in [normal, t.x, t.y].iter().enumerate() {
                if *li != 0.0 {
                    packed.apply(r, *li, dv, dw);
                }
            }
            if spin != 0.0 {
                packed.apply_spin(spin, dw);
            }
            self.lambda[p] = [normal, t.x, t.y, spin];
        }
    }

    /// The sweeps, until the residual (checked every [`CHECK_EVERY`] sweeps and after the
    /// last) is under `tolerance_m_per_s` or stalls ([`STALL_CHECKS`]). A pile's sweeps
    /// (`stop_on_stall`) after the first [`FULL_SWEEPS`] relax only the contacts whose
    /// residual is over [`FOCUS_FRACTION`] of the largest ([`super::sweep_focus`]).
    fn sweeps(
        &mut self,
        contacts: &[ContactRows],
        order: &[usize],
        tolerance_m_per_s: f64,
        stop_on_stall: bool,
        dv: &mut [Vector3<f64>],
        dw: &mut [Vector3<f64>],
    ) -> SweepStats {
        let n = contacts.len();
        self.u.clear();
        self.u.resize(n, [0.0; 3]);
        self.u_spin.clear();
        self.u_spin.resize(n, 0.0);
        self.residuals.clear();
        self.residuals.resize(n, 0.0);
        let mut stats = SweepStats::default();
        // The residuals of the last STALL_CHECKS checks (a ring): the sweeps stop when the
        // residual stalls.
        let mut history = [f64::INFINITY; STALL_CHECKS];
        let mut checks = 0;
        let (mut focused, mut focus_built) = (false, false);
        for sweep in 0..MAX_SWEEPS {
            // Forward on even sweeps, backward on odd ones (symmetric Gauss–Seidel): the first
            // contacts of `order` carry their loads to the last ones in one sweep, and back.
            self.sweep(sweep % 2 == 0, focused, dv, dw);
            if (sweep + 1) % CHECK_EVERY != 0 && sweep + 1 != MAX_SWEEPS {
                continue;
            }
            let residual = if focused {
                self.changed_residual(contacts, order, dv, dw)
            } else {
                self.residual(contacts, order, dv, dw)
            };
            stats = SweepStats {
                sweeps: sweep + 1,
                residual_m_per_s: residual,
            };
            if residual <= tolerance_m_per_s {
                break;
            }
            // Stalled: the residual fell by less than a tenth over the last STALL_CHECKS
            // checks. It is then held by a few contacts whose rows Gauss–Seidel cannot settle
            // (measured on the pile's fall at tolerance_m = 1e-5: 1 to 20 of 2,200 contacts,
            // mostly friction rows, holding ~1e-3 m/s from sweep 100 to 500, every other
            // contact converged): more sweeps change little but the time. Over 225 solves,
            // stopping here took 55 sweeps on average instead of 420 and left a residual 1.02
            // times (median; 1.56 at the 90th percentile) that of the 500th sweep.
            let slot = checks % STALL_CHECKS;
            if stop_on_stall && residual > STALL_RATIO * history[slot] {
                break;
            }
            history[slot] = residual;
            checks += 1;
            if stop_on_stall && sweep + 1 >= FULL_SWEEPS {
                if !focus_built {
                    let pairs = self.packed.iter().map(Packed::moving_bodies);
                    self.focus.build(dv.len(), pairs);
                    focus_built = true;
                }
                let threshold = tolerance_m_per_s.max(FOCUS_FRACTION * residual);
                let packed = &self.packed;
                self.focus
                    .select(&self.residuals, threshold, |p| packed[p].moving_bodies());
                focused = 2 * self.focus.active.len() < n;
            }
        }
        self.tangent_velocities(order, dv, dw);
        stats
    }

    /// One sweep, forward or backward, over every contact or (`focused`) the active ones,
    /// marking the bodies whose velocity changed.
    fn sweep(
        &mut self,
        forward: bool,
        focused: bool,
        dv: &mut [Vector3<f64>],
        dw: &mut [Vector3<f64>],
    ) {
        if focused {
            let active = self.focus.active.len();
            for i in 0..active {
                let p = self.focus.active[if forward { i } else { active - 1 - i }];
                if self.packed[p].relax(&mut self.lambda[p], dv, dw) {
                    for b in self.packed[p].moving_bodies().into_iter().flatten() {
                        self.focus.mark(b);
                    }
                }
            }
        } else {
            let n = self.packed.len();
            for i in 0..n {
                let p = if forward { i } else { n - 1 - i };
                self.packed[p].relax(&mut self.lambda[p], dv, dw);
            }
        }
    }

    /// Contact p's (contact `k`'s) row velocities now (into `u`, `u_spin`) and residual
    /// (into `residuals`). The residual of an unloaded contact reads only its normal row, so
    /// its tangent velocities are left for [`Self::tangent_velocities`] once the sweeps end.
    #[inline(always)]
    fn contact_residual_at(
        &mut self,
        p: usize,
        k: usize,
        contact: &ContactRows,
        dv: &[Vector3<f64>],
        dw: &[Vector3<f64>],
    ) -> f64 {
        let (c, l) = (&self.packed[p], &self.lambda[p]);
        let u = if loaded(l) {
            [0, 1, 2].map(|r| c.u0[r] + c.velocity(r, dv, dw))
        } else {
            [c.u0[0] + c.velocity(0, dv, dw), 0.0, 0.0]
        };
        self.u[k] = u;
        let mut residual = contact_residual(contact, &[l[0], l[1], l[2]], &u);
        if c.spin.mu_m > 0.0 {
            let u_spin = c.spin.u0 + c.spin_velocity(dw);
            self.u_spin[k] = u_spin;
            let spin = spin_residual(c.spin.mu_m * l[0], l[3], u_spin);
            residual = residual.max(spin * c.spin.reach_m);
        }
        self.residuals[p] = residual;
        residual
    }

    /// Every contact's row velocities and residual, and the largest residual.
    fn residual(
        &mut self,
        contacts: &[ContactRows],
        order: &[usize],
        dv: &[Vector3<f64>],
        dw: &[Vector3<f64>],
    ) -> f64 {
        let mut residual = 0.0f64;
        for (p, &k) in order.iter().enumerate() {
            residual = residual.max(self.contact_residual_at(p, k, &contacts[k], dv, dw));
        }
        self.focus.forget_changed();
        residual
    }

    /// The row velocities and residual of the contacts on a body that changed since the last
    /// check (no other contact's can have moved), and the largest residual.
    fn changed_residual(
        &mut self,
        contacts: &[ContactRows],
        order: &[usize],
        dv: &[Vector3<f64>],
        dw: &[Vector3<f64>],
    ) -> f64 {
        let mut focus = std::mem::take(&mut self.focus);
        focus.take_changed(|p| {
            let k = order[p];
            self.contact_residual_at(p, k, &contacts[k], dv, dw);
        });
        self.focus = focus;
        self.residuals.iter().copied().fold(0.0, f64::max)
    }

    /// The tangent velocities of the unloaded contacts, which [`Self::residual`] left out.
    fn tangent_velocities(&mut self, order: &[usize], dv: &[Vector3<f64>], dw: &[Vector3<f64>]) {
        for ((c, l), &k) in self.packed.iter().zip(&self.lambda).zip(order) {
            if !loaded(l) {
                for r in 1..3 {
                    self.u[k][r] = c.u0[r] + c.velocity(r, dv, dw);
                }
            }
        }
    }

    /// One impulse per contact, in contact order.
    fn write_out(&self, out: &mut Vec<ContactImpulse>) {
        out.clear();
        let rows = self.position.iter().zip(&self.u).zip(&self.u_spin);
        out.extend(rows.map(|((&p, u), &u_spin)| {
            let l = self.lambda[p];
            ContactImpulse {
                handled: l[0] > 0.0,
                normal: l[0],
                tangent: Vector2::new(l[1], l[2]),
                u: *u,
                spin: l[3],
                u_spin,
            }
        }));
    }
}

#[cfg(test)]
mod tests;
