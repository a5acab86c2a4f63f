//! The contact rows of a step solved by sparse projected Gauss–Seidel
//! ([`crate::contact::sparse_pgs`]): what the step keeps for it between steps (the
//! impulses by contact key, the warm start of the next step), the order of the sweeps, and
//! the pile's target rule. Used without joints when a step has more than
//! [`crate::contact::DENSE_MAX_CONTACTS`] contacts, or when the pushing tip is in one.

use nalgebra::Vector3;

use crate::contact::lcp::{ContactImpulse, ContactRows, InverseMass, VelocityChange};
use crate::contact::through_joints::{SweepStats, RESIDUAL_TOLERANCE_M_PER_S};
use crate::contact::{sparse_pgs, ContactPoint, DENSE_MAX_CONTACTS};

/// A contact's identity from step to step ([`ContactPoint::key`]).
type Key = (usize, usize, usize);

/// The sparse solve's buffers and the last step's impulses.
#[derive(Clone, Debug, Default)]
pub(in crate::solver) struct SparseContacts {
    pgs: sparse_pgs::PgsScratch,
    warm: Vec<[f64; 4]>,
    order: Vec<usize>,
    by_height: Vec<(f64, usize)>,
    /// The last contact-rows solve's impulses by contact key (sorted), the next step's warm
    /// start.
    last_impulses: Vec<(Key, [f64; 4])>,
}

impl SparseContacts {
    /// Solves the contact rows (`rows[k]` of `points[k]`) into the impulses and the velocity
    /// change. `down` is the direction of gravity (unit), `h` the step (s), `tolerance_m` the
    /// scene's precision setting (the sweeps stop at a residual of `tolerance_m / h`; without
    /// it at [`RESIDUAL_TOLERANCE_M_PER_S`]). Returns the sweeps' statistics: how many ran, and
    /// the largest row-velocity error they left (m/s).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::solver) fn solve(
        &mut self,
        rows: &mut [ContactRows],
        points: &[ContactPoint],
        inv_mass: &[InverseMass],
        down: &Vector3<f64>,
        h: f64,
        tolerance_m: Option<f64>,
        impulses: &mut Vec<ContactImpulse>,
        delta: &mut VelocityChange,
    ) -> SweepStats {
        let n = points.len();
        // On a pile the sweeps stop short of convergence (see `sparse_pgs`) and leave
        // velocity errors of up to a few mm/s, which the midpoint target would reflect
        // every step (a contact that separates at the start is made to approach as fast
        // at the end, and the other way round), so they would never die out: there the
        // target is kept between zero and the gap's closure −2 gap / h (the end velocity
        // never reverses the start's; what penetration that leaves, the projection
        // removes). Measured on assets/scenes/pile.toml: the kinetic energy at rest fell
        // from 2.5e-6 J to 5e-8 J. The few contacts of a pushing tip converge and keep
        // the midpoint target, whose balance is exact.
        if n > DENSE_MAX_CONTACTS {
            for (r, p) in rows.iter_mut().zip(points) {
                let closure = -2.0 * p.gap_m / h;
                r.target = r.target.clamp(closure.min(0.0), closure.max(0.0));
            }
        }
        let last = &self.last_impulses;
        self.warm.clear();
        self.warm.extend(points.iter().map(|p| {
            last.binary_search_by(|(k, _)| k.cmp(&p.key()))
                .map_or([0.0; 4], |i| last[i].1)
        }));
        // Top of the pile first: a forward sweep carries each body's weight down to the
        // ground.
        // (Each height once, not per comparison; the index breaks ties, so the order is
        // unique whatever the sort.)
        let height = |p: &ContactPoint| -down.dot(&(p.point1 + p.point2));
        self.by_height.clear();
        self.by_height
            .extend(points.iter().enumerate().map(|(k, p)| (height(p), k)));
        self.by_height
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        self.order.clear();
        self.order.extend(self.by_height.iter().map(|&(_, k)| k));
        let tolerance_m_per_s = tolerance_m.map_or(RESIDUAL_TOLERANCE_M_PER_S, |t| t / h);
        // Only a pile's sweeps stop when they stall: the few contacts of a pushing tip
        // converge, and their energy balance needs it (a jittering tip's balance went from
        // 2e-6 to 6e-4 with the stall rule, `tests/rig_push.rs`).
        let stop_on_stall = n > DENSE_MAX_CONTACTS;
        let stats = sparse_pgs::solve(
            rows,
            &self.order,
            inv_mass,
            &self.warm,
            tolerance_m_per_s,
            stop_on_stall,
            &mut self.pgs,
            impulses,
            delta,
        );
        log::debug!(
            "contact rows: {n} contacts ({} warm) by sparse Gauss–Seidel, {} sweeps, residual {:.3e} m/s",
            self.warm.iter().filter(|w| w[0] > 0.0).count(),
            stats.sweeps,
            stats.residual_m_per_s
        );
        stats
    }

    /// Keeps the step's loaded impulses by contact key for the next step's warm start
    /// (whichever solve found them).
    pub(in crate::solver) fn remember(
        &mut self,
        points: &[ContactPoint],
        impulses: &[ContactImpulse],
    ) {
        self.last_impulses.clear();
        self.last_impulses.extend(
            points
                .iter()
                .zip(impulses)
                .filter(|(_, i)| i.handled)
                .map(|(p, i)| (p.key(), [i.normal, i.tangent.x, i.tangent.y, i.spin])),
        );
        self.last_impulses.sort_unstable_by_key(|a| a.0);
    }
}
