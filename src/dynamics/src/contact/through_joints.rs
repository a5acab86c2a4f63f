//! Contact impulses on a jointed mechanism: the contacts' normal and friction rows with the
//! joints eliminated exactly, solved by projected Gauss–Seidel. Used for an impact and for the
//! contact rows whenever the scene has joints (with the `right` inequality method).
//!
//! Alg. 3's active set ([`super::lcp::solve`]) solves contacts and joints as one equality
//! system and inserts or releases whole contacts. On a chain whose links lie on the desk and
//! touch each other it often does not settle: the system is highly redundant (the links on
//! the desk have more contact rows than the hinges leave them freedoms), a release undoes an
//! insertion, the releases run out, and contacts are left approaching or penetrating, which
//! the position projection then lifts out with energy that nothing books. So here the joints
//! are taken out first and the contacts are solved as the complementarity problem they are:
//!
//! - Joint rows J_b are equalities with given row velocity changes Δu_b; with
//!   K_b = J_b M⁻¹ J_bᵀ, an impulse's velocity change is projected onto the joints' motions by
//!   P = M⁻¹ − M⁻¹ J_bᵀ K_b⁻¹ J_b M⁻¹, the contacts see the Delassus matrix W = J_c P J_cᵀ
//!   (symmetric, positive semi-definite), and the joint changes alone move them by
//!   J_c M⁻¹ J_bᵀ K_b⁻¹ Δu_b.
//! - Each contact: λₙ ≥ 0 and its normal row velocity at or above its target,
//!   complementary; the friction impulse within the disc μ λₙ (an isotropic cone, as the
//!   contact rows'), sticking the tangent velocity where the disc allows and otherwise on the
//!   disc's edge.
//! - Sweeps over the contacts (the normal row, then the two tangent rows, clamped to the disc)
//!   until the complementarity residual ([`complementarity_residual`]) is under
//!   [`RESIDUAL_TOLERANCE_M_PER_S`], or [`MAX_SWEEPS`]. Dependent rows only share a load
//!   between them, as a statically indeterminate support does, and the impulses stay the
//!   size of the loads. Convergence is linear and slow on the redundant systems a chain on the
//!   desk makes: there the sweeps run out with a residual of 2e-8 to 1.4e-6 m/s (median
//!   2e-7; at most 1e-6 m of gap over a 10 ms step, which the projection removes). The
//!   largest number of sweeps is set where more stopped paying: 2000 instead of 500 changed
//!   the desk chain's energy balance by under 1e-6 of E_ref, at four times the cost.
//!
//! The joints hold exactly (K_b is factored, not iterated). The dense matrices are sized by
//! the bodies and contacts of one solve (tens) and kept from solve to solve
//! ([`ThroughJointsScratch`]); the arithmetic is nalgebra's, on views of those buffers.

use nalgebra::{DVectorView, DVectorViewMut, Vector2, Vector3};

use super::lcp::{Bilateral, ContactImpulse, ContactRows, InverseMass, Row, VelocityChange};
use crate::linalg::dense_lu::DenseLu;

/// The sweeps stop once the complementarity residual is below this (m/s): over a step of
/// 10 ms, 1e-12 m of gap.
pub const RESIDUAL_TOLERANCE_M_PER_S: f64 = 1.0e-10;
/// Sweeps at most (each one pass over the contacts).
pub const MAX_SWEEPS: usize = 500;
/// Relative regularisation of K_b's diagonal (loops make joint rows redundant).
const JOINT_REGULARISATION: f64 = 1.0e-12;

/// The most the dense buffers of one solve may take (bytes): the bodies' coordinates times
/// the joint and contact rows, K_b and W. Over it a scene is refused when it is built (its
/// joints alone) or a step fails (its contacts too), instead of allocating without bound (a
/// mobile of 4095 parts over a desk asked for 11 GB and an LU of 20,000 rows).
pub const MAX_DENSE_BYTES: usize = 1 << 30;

/// The bytes of one solve's dense buffers for `joint_rows` bilateral rows, `contacts`
/// contacts (three rows each) and limit ends, over `bodies` bodies (saturating).
pub fn dense_bytes(joint_rows: usize, contacts: usize, bodies: usize) -> usize {
    let dofs = bodies.saturating_mul(6);
    let rows = contacts.saturating_mul(3);
    let doubles = [
        joint_rows.saturating_mul(dofs).saturating_mul(2),
        joint_rows.saturating_mul(joint_rows).saturating_mul(2),
        rows.saturating_mul(dofs).saturating_mul(2),
        rows.saturating_mul(rows),
    ]
    .into_iter()
    .fold(0usize, usize::saturating_add);
    doubles.saturating_mul(std::mem::size_of::<f64>())
}

/// What a solve did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SweepStats {
    /// Sweeps made.
    pub sweeps: usize,
    /// The complementarity residual at the end (m/s, see [`complementarity_residual`]).
    pub residual_m_per_s: f64,
}

/// How far the impulses and row velocities (three per contact: normal, t₁, t₂) are from the
/// contact law (m/s): the largest [`contact_residual`] over the contacts.
pub fn complementarity_residual(contacts: &[ContactRows], lambda: &[f64], u: &[f64]) -> f64 {
    contacts
        .iter()
        .enumerate()
        .map(|(c, k)| {
            let at = |x: &[f64]| [x[3 * c], x[3 * c + 1], x[3 * c + 2]];
            contact_residual(k, &at(lambda), &at(u))
        })
        .fold(0.0, f64::max)
}

/// How far one contact's impulse (normal, t₁, t₂) and row velocities are from the contact law
/// (m/s): a loaded normal row off its target, an unloaded one below it; a friction impulse
/// inside the disc with a tangent velocity left, or one on the disc's edge with the velocity
/// not opposite to it.
pub fn contact_residual(k: &ContactRows, lambda: &[f64; 3], u: &[f64; 3]) -> f64 {
    let r_n = if lambda[0] > 0.0 {
        (u[0] - k.target).abs()
    } else {
        (k.target - u[0]).max(0.0)
    };
    if !(k.mu > 0.0 && lambda[0] > 0.0) {
        return r_n;
    }
    let t = Vector2::new(lambda[1], lambda[2]);
    let ut = Vector2::new(u[1], u[2]);
    let r_t = if t.norm() < k.mu * lambda[0] * (1.0 - 1.0e-9) {
        ut.norm()
    } else {
        let d = t / t.norm();
        (ut - d * ut.dot(&d)).norm() + ut.dot(&d).max(0.0)
    };
    r_n.max(r_t)
}

/// The solve's buffers, kept from solve to solve (no allocation once grown). Dense vectors
/// over the bodies' coordinates (6 per body: v then ω) are stored one after another.
#[derive(Clone, Debug, Default)]
pub struct ThroughJointsScratch {
    /// J_b and M⁻¹ J_bᵀ, one joint row each.
    jb: Vec<f64>,
    mjb: Vec<f64>,
    /// K_b (column-major) and its factor.
    kb: Vec<f64>,
    kb_lu: DenseLu,
    /// Joint row velocity changes and their impulses, and the velocity change they make.
    joint_change: Vec<f64>,
    taken: Vec<f64>,
    /// J_c and P J_cᵀ, one contact row each; W = J_c P J_cᵀ (column-major).
    jc: Vec<f64>,
    g: Vec<f64>,
    w: Vec<f64>,
    /// Row velocities, impulses and the bodies' velocity change.
    u: Vec<f64>,
    lambda: Vec<f64>,
    dv: Vec<f64>,
}

/// Projected Gauss–Seidel sweeps over the contacts on the Delassus matrix `w` (column-major,
/// three rows per contact), updating the row velocities `u` with the impulses `lambda`, until
/// the complementarity residual is under [`RESIDUAL_TOLERANCE_M_PER_S`] or [`MAX_SWEEPS`].
pub(super) fn sweeps(
    w: &[f64],
    u: &mut [f64],
    lambda: &mut [f64],
    contacts: &[ContactRows],
) -> SweepStats {
    let dim = 3 * contacts.len();
    let mut stats = SweepStats::default();
    // (u += d W(·, i) written out: nalgebra's axpy computes the same d·w + u.)
    let add = |lambda: &mut [f64], u: &mut [f64], i: usize, d: f64| {
        lambda[i] += d;
        for (y, x) in u.iter_mut().zip(&w[i * dim..(i + 1) * dim]) {
            *y += d * x;
        }
    };
    let at = |i: usize, j: usize| w[j * dim + i];
    for sweep in 0..MAX_SWEEPS {
        for (c, k) in contacts.iter().enumerate() {
            let n = 3 * c;
            if at(n, n) > 0.0 {
                let new = (lambda[n] - (u[n] - k.target) / at(n, n)).max(0.0);
                let d = new - lambda[n];
                add(lambda, u, n, d);
            }
            if k.mu > 0.0 {
                let mut t = Vector2::new(lambda[n + 1], lambda[n + 2]);
                for r in 0..2 {
                    let i = n + 1 + r;
                    if at(i, i) > 0.0 {
                        t[r] -= u[i] / at(i, i);
                    }
                }
                let bound = k.mu * lambda[n];
                if t.norm() > bound {
                    t *= bound / t.norm();
                }
                for r in 0..2 {
                    let i = n + 1 + r;
                    let d = t[r] - lambda[i];
                    add(lambda, u, i, d);
                }
            }
        }
        let residual = complementarity_residual(contacts, lambda, u);
        stats = SweepStats {
            sweeps: sweep + 1,
            residual_m_per_s: residual,
        };
        if residual <= RESIDUAL_TOLERANCE_M_PER_S {
            break;
        }
    }
    stats
}

/// Writes a row as a dense Jacobian row over 6 coordinates per body (v then ω) into `j`.
fn dense_row(row: &Row, j: &mut [f64]) {
    j.fill(0.0);
    for (body, sign, ang) in [(row.body2, 1.0, row.ang2), (row.body1, -1.0, row.ang1)] {
        for a in 0..3 {
            j[6 * body + a] += sign * row.dir[a];
            j[6 * body + 3 + a] += sign * ang[a];
        }
    }
}

/// Writes M⁻¹ times a dense vector over the bodies' coordinates into `y`.
fn apply_inverse_mass(m: &[InverseMass], x: &[f64], y: &mut [f64]) {
    for (b, im) in m.iter().enumerate() {
        let v = Vector3::new(x[6 * b], x[6 * b + 1], x[6 * b + 2]) * im.inv_mass;
        let w = im.inv_inertia * Vector3::new(x[6 * b + 3], x[6 * b + 4], x[6 * b + 5]);
        for a in 0..3 {
            y[6 * b + a] = v[a];
            y[6 * b + 3 + a] = w[a];
        }
    }
}

fn view(x: &[f64]) -> DVectorView<'_, f64> {
    DVectorView::from_slice(x, x.len())
}

fn view_mut(x: &mut [f64]) -> DVectorViewMut<'_, f64> {
    let n = x.len();
    DVectorViewMut::from_slice(x, n)
}

/// M⁻¹ J_bᵀ K_b⁻¹ r into `y`: the velocity change of the joint impulses that change the joints'
/// row velocities by `r` (zero when K_b is singular). `r` is overwritten.
fn joint_response(kb_lu: &DenseLu, mjb: &[f64], r: &mut [f64], y: &mut [f64]) {
    if !kb_lu.solve_in_place(r) {
        r.fill(0.0);
    }
    y.fill(0.0);
    let mut y = view_mut(y);
    for (col, l) in mjb.chunks_exact(y.len()).zip(r.iter()) {
        y.axpy(*l, &view(col), 1.0);
    }
}

/// Solves the impact's contact impulses with the joints eliminated (see the module docs).
/// `contacts[k].target` is the normal row's target velocity; every contact takes part.
/// Writes one impulse per contact (handled when its normal impulse is positive) and the
/// bodies' velocity change (contacts and joints).
pub fn solve(
    contacts: &[ContactRows],
    bilateral: &[Bilateral],
    m: &[InverseMass],
    scratch: &mut ThroughJointsScratch,
    out: &mut Vec<ContactImpulse>,
    delta: &mut VelocityChange,
) -> SweepStats {
    // The scene and `set_contact_model` refuse spin friction with joints and springs.
    debug_assert!(contacts.iter().all(|c| c.spin.mu_m == 0.0));
    let dofs = 6 * m.len();
    scratch.factor_joints(bilateral, m, dofs);
    scratch.joints_own_change(bilateral, dofs);
    scratch.project_contact_rows(contacts, m, bilateral.len(), dofs);
    scratch.delassus_and_start(contacts, dofs);
    let stats = scratch.sweeps(contacts);
    scratch.write_out(contacts.len(), m.len(), dofs, out, delta);
    stats
}

impl ThroughJointsScratch {
    /// M⁻¹ J_bᵀ as columns, K_b and its factor.
    fn factor_joints(&mut self, bilateral: &[Bilateral], m: &[InverseMass], dofs: usize) {
        let nb = bilateral.len();
        let Self {
            jb, mjb, kb, kb_lu, ..
        } = self;
        jb.clear();
        jb.resize(nb * dofs, 0.0);
        mjb.clear();
        mjb.resize(nb * dofs, 0.0);
        for ((b, j), mj) in bilateral
            .iter()
            .zip(jb.chunks_exact_mut(dofs))
            .zip(mjb.chunks_exact_mut(dofs))
        {
            dense_row(&b.row, j);
            apply_inverse_mass(m, j, mj);
        }
        kb.clear();
        kb.extend((0..nb * nb).map(|k| {
            let (i, j) = (k % nb, k / nb);
            view(&jb[i * dofs..(i + 1) * dofs]).dot(&view(&mjb[j * dofs..(j + 1) * dofs]))
        }));
        kb_lu.factor_regularised(nb, kb, JOINT_REGULARISATION);
    }

    /// The joints' own changes into `dv`: Δv₀ = M⁻¹ J_bᵀ K_b⁻¹ Δu_b.
    fn joints_own_change(&mut self, bilateral: &[Bilateral], dofs: usize) {
        let Self {
            mjb,
            kb_lu,
            joint_change,
            dv,
            ..
        } = self;
        dv.clear();
        dv.resize(dofs, 0.0);
        if !bilateral.is_empty() {
            joint_change.clear();
            joint_change.extend(bilateral.iter().map(|b| b.change));
            joint_response(kb_lu, mjb, joint_change, dv);
        }
    }

    /// J_c, and G = P J_cᵀ column by column: M⁻¹ J_cᵀ less the part the `nb` joints take back.
    fn project_contact_rows(
        &mut self,
        contacts: &[ContactRows],
        m: &[InverseMass],
        nb: usize,
        dofs: usize,
    ) {
        let nc = contacts.len();
        let Self {
            jb,
            mjb,
            kb_lu,
            joint_change,
            taken,
            jc,
            g,
            ..
        } = self;
        jc.clear();
        jc.resize(3 * nc * dofs, 0.0);
        g.clear();
        g.resize(3 * nc * dofs, 0.0);
        taken.clear();
        taken.resize(dofs, 0.0);
        let contact_rows = contacts.iter().flat_map(|c| c.rows.iter());
        for ((row, j), x) in contact_rows
            .zip(jc.chunks_exact_mut(dofs))
            .zip(g.chunks_exact_mut(dofs))
        {
            dense_row(row, j);
            // M⁻¹ J_cᵀ less the part the joints take back: P J_cᵀ.
            apply_inverse_mass(m, j, x);
            if nb > 0 {
                joint_change.clear();
                joint_change.extend(jb.chunks_exact(dofs).map(|b| view(b).dot(&view(x))));
                joint_response(kb_lu, mjb, joint_change, taken);
                for (x, t) in x.iter_mut().zip(taken.iter()) {
                    *x -= t;
                }
            }
        }
    }

    /// W = J_c G; the row velocities now (u₀ plus what the joint changes do) and zero
    /// impulses.
    fn delassus_and_start(&mut self, contacts: &[ContactRows], dofs: usize) {
        let dim = 3 * contacts.len();
        let Self {
            jc,
            g,
            w,
            u,
            lambda,
            dv,
            ..
        } = self;
        w.clear();
        w.extend((0..dim * dim).map(|k| {
            let (i, j) = (k % dim, k / dim);
            view(&jc[i * dofs..(i + 1) * dofs]).dot(&view(&g[j * dofs..(j + 1) * dofs]))
        }));
        // Row velocities now: u₀ plus what the joint changes do.
        u.clear();
        u.extend(
            jc.chunks_exact(dofs)
                .enumerate()
                .map(|(i, j)| contacts[i / 3].u0[i % 3] + view(j).dot(&view(dv))),
        );
        lambda.clear();
        lambda.resize(dim, 0.0);
    }

    /// The projected Gauss–Seidel sweeps on W ([`sweeps`]).
    fn sweeps(&mut self, contacts: &[ContactRows]) -> SweepStats {
        sweeps(&self.w, &mut self.u, &mut self.lambda, contacts)
    }

    /// The impulses and row velocities per contact, and the bodies' velocity change (the
    /// joints' own plus G λ).
    fn write_out(
        &mut self,
        nc: usize,
        bodies: usize,
        dofs: usize,
        out: &mut Vec<ContactImpulse>,
        delta: &mut VelocityChange,
    ) {
        let Self {
            g, u, lambda, dv, ..
        } = self;
        {
            let mut dv = view_mut(dv);
            for (gc, l) in g.chunks_exact(dofs).zip(lambda.iter()) {
                if *l != 0.0 {
                    dv.axpy(*l, &view(gc), 1.0);
                }
            }
        }
        out.clear();
        out.extend((0..nc).map(|c| ContactImpulse {
            handled: lambda[3 * c] > 0.0,
            normal: lambda[3 * c],
            tangent: Vector2::new(lambda[3 * c + 1], lambda[3 * c + 2]),
            u: [u[3 * c], u[3 * c + 1], u[3 * c + 2]],
            spin: 0.0,
            u_spin: 0.0,
        }));
        delta.v.clear();
        delta.w.clear();
        for b in 0..bodies {
            delta
                .v
                .push(Vector3::new(dv[6 * b], dv[6 * b + 1], dv[6 * b + 2]));
            delta
                .w
                .push(Vector3::new(dv[6 * b + 3], dv[6 * b + 4], dv[6 * b + 5]));
        }
    }
}

#[cfg(test)]
mod tests {
    use nalgebra::Matrix3;

    use super::*;

    /// The ground (body 0) and one body of this mass and world inverse inertia (body 1).
    fn ground_and(mass_kg: f64, inv_inertia: Matrix3<f64>) -> [InverseMass; 2] {
        [
            InverseMass {
                inv_mass: 0.0,
                inv_inertia: Matrix3::zeros(),
            },
            InverseMass {
                inv_mass: 1.0 / mass_kg,
                inv_inertia,
            },
        ]
    }

    /// A uniform rod (mass m, length L) hinged by a ball joint at one end swings about y and
    /// strikes the desk with its other end: a plastic impact stops it, with the normal impulse
    /// of the tip's effective mass I_pivot / L² = m/3 (closed form), the friction impulse zero
    /// (the tip has no tangential velocity), and the joint holding the pivot still.
    #[test]
    fn a_hinged_rod_striking_the_desk_takes_the_closed_form_impulse() {
        let (m_kg, l_m, omega) = (0.3, 0.4, 2.5);
        let i_centre = m_kg * l_m * l_m / 12.0;
        let masses = ground_and(
            m_kg,
            Matrix3::from_diagonal(&Vector3::new(1e3, 1.0 / i_centre, 1.0 / i_centre)),
        );
        // Rod centre at (L/2, 0, 0), pivot at the origin, tip at (L, 0, 0); ω about +y moves
        // the tip down at ω L.
        let w_rod = Vector3::new(0.0, omega, 0.0);
        let v_rod = w_rod.cross(&Vector3::new(l_m / 2.0, 0.0, 0.0));
        let v = [Vector3::zeros(), v_rod];
        let w = [Vector3::zeros(), w_rod];
        let r_tip = Vector3::new(l_m / 2.0, 0.0, 0.0);
        let r_pivot = -r_tip;
        let rows = [Vector3::z(), Vector3::x(), Vector3::y()]
            .map(|d| Row::new(0, 1, &Vector3::zeros(), &r_tip, d));
        let u0 = rows.map(|r| r.velocity(&v, &w));
        assert!((u0[0] + omega * l_m).abs() < 1e-15);
        let contacts = [ContactRows {
            rows,
            u0,
            target: 0.0,
            mu: 0.5,
            slip_start: Vector2::zeros(),
            spin: crate::contact::spin::Spin::NONE,
        }];
        let bilateral: Vec<Bilateral> = [Vector3::x(), Vector3::y(), Vector3::z()]
            .iter()
            .map(|d| {
                let row = Row::new(0, 1, &Vector3::zeros(), &r_pivot, *d);
                Bilateral {
                    row,
                    change: -row.velocity(&v, &w),
                    compliance: 0.0,
                }
            })
            .collect();
        let (mut out, mut delta) = (Vec::new(), VelocityChange::default());
        let mut scratch = ThroughJointsScratch::default();
        let stats = solve(
            &contacts,
            &bilateral,
            &masses,
            &mut scratch,
            &mut out,
            &mut delta,
        );
        let expected = m_kg / 3.0 * omega * l_m;
        assert!(
            stats.residual_m_per_s <= RESIDUAL_TOLERANCE_M_PER_S,
            "{stats:?}"
        );
        assert!(
            (out[0].normal - expected).abs() < 1e-12 * expected,
            "{:?}",
            out[0]
        );
        assert!(out[0].tangent.norm() < 1e-12, "{:?}", out[0]);
        // The rod stops: its centre's velocity and its turn are taken back, the pivot holds.
        assert!((v_rod + delta.v[1]).norm() < 1e-12, "{:?}", delta.v[1]);
        assert!((w_rod + delta.w[1]).norm() < 1e-11, "{:?}", delta.w[1]);
    }

    /// Two contacts under one rigid bar on the desk (a statically indeterminate support)
    /// carry the bar's momentum between them, each with a non-negative impulse, and the bar
    /// stops; the impulses stay the size of the momentum.
    #[test]
    fn redundant_supports_share_the_load() {
        let m_kg = 0.2;
        let masses = ground_and(m_kg, Matrix3::identity() * 1e4);
        let v = [Vector3::zeros(), Vector3::new(0.0, 0.0, -0.5)];
        let w = [Vector3::zeros(); 2];
        // Three contacts in a line under the bar: one more than a line support needs.
        let contacts: Vec<ContactRows> = [-0.05, 0.0, 0.05]
            .iter()
            .map(|x| {
                let r = Vector3::new(*x, 0.0, -0.01);
                let rows = [Vector3::z(), Vector3::x(), Vector3::y()]
                    .map(|d| Row::new(0, 1, &Vector3::zeros(), &r, d));
                ContactRows {
                    rows,
                    u0: rows.map(|row| row.velocity(&v, &w)),
                    target: 0.0,
                    mu: 0.0,
                    slip_start: Vector2::zeros(),
                    spin: crate::contact::spin::Spin::NONE,
                }
            })
            .collect();
        let (mut out, mut delta) = (Vec::new(), VelocityChange::default());
        let mut scratch = ThroughJointsScratch::default();
        solve(&contacts, &[], &masses, &mut scratch, &mut out, &mut delta);
        let total: f64 = out.iter().map(|o| o.normal).sum();
        // To the sweeps' residual (1e-10 m/s) times the bar's mass.
        assert!((total - m_kg * 0.5).abs() < 1e-11, "{out:?}");
        assert!(out
            .iter()
            .all(|o| o.normal >= 0.0 && o.normal < m_kg * 0.5 + 1e-12));
        assert!((v[1] + delta.v[1]).norm() < 1e-10 && delta.w[1].norm() < 1e-9);
    }
}
