//! Contact impulses with joints and springs eliminated: the solve of [`super::through_joints`]
//! for rows that may be soft (a spring's linearised law), assembled from the rows' couplings.
//!
//! A bilateral row b with compliance ε_b changes its row velocity by −ε_b λ_b under its
//! impulse λ_b (ε = 0: a joint, whose row velocity is kept). With K_b = J_b M⁻¹ J_bᵀ +
//! diag(ε) and B = J_b M⁻¹ J_cᵀ, the contacts see W = J_c M⁻¹ J_cᵀ − Bᵀ K_b⁻¹ B, and the
//! bilateral rows answer a contact impulse change Δλ_c with λ_b = −K_b⁻¹ B Δλ_c (the rows'
//! `change` is not used here: every row keeps its velocity). Each entry of these
//! products couples two rows through the bodies they share
//! ([`super::lcp::Row::coupling`]), so the cost is that of the dense K_b factor and its
//! solves, not of the bodies' coordinates (`through_joints` works over 6 coordinates per
//! body and, on a cloth of 64 elements and 161 springs, took 60 % of the step).
//!
//! W is positive semi-definite, and singular when the contact rows outnumber the bodies'
//! freedoms (a rope of 31 elements lying on the desk and against its neighbours: 279 rows
//! on 186 coordinates). Projected Gauss–Seidel with friction can then stall or diverge;
//! the caller judges the sweeps by their residual ([`SweepStats`]).
//!
//! [`prepare`] forms W and K_b⁻¹ B once; [`solve_from`] then solves from the row velocities
//! now, any number of times (an iteration whose rows move little within a step keeps them,
//! as a chord iteration keeps its factor). The sweeps start from the impulses the
//! velocities already hold (`applied`), so a solve inside an iteration continues from the
//! last one's impulses; the contact law holds for the total impulse.

use nalgebra::{Vector2, Vector3};

use super::lcp::{Bilateral, ContactImpulse, ContactRows, InverseMass, VelocityChange};
use super::through_joints::{sweeps, SweepStats};
use crate::linalg::dense_lu::DenseLu;

/// Relative regularisation of K_b's diagonal (loops make joint rows redundant).
const BILATERAL_REGULARISATION: f64 = 1.0e-12;

/// The bytes of the solve's dense buffers for `bilateral_rows` bilateral rows and `contacts`
/// contacts (three rows each): K_b and its factor, B and K_b⁻¹ B, and W (saturating).
pub fn dense_bytes(bilateral_rows: usize, contacts: usize) -> usize {
    let rows = contacts.saturating_mul(3);
    [
        bilateral_rows
            .saturating_mul(bilateral_rows)
            .saturating_mul(2),
        bilateral_rows.saturating_mul(rows).saturating_mul(2),
        rows.saturating_mul(rows),
    ]
    .into_iter()
    .fold(0usize, usize::saturating_add)
    .saturating_mul(std::mem::size_of::<f64>())
}

/// The solve's buffers, kept from solve to solve (no allocation once grown).
#[derive(Clone, Debug, Default)]
pub struct ThroughSoftRowsScratch {
    /// K_b (column-major) and its factor.
    kb: Vec<f64>,
    kb_lu: DenseLu,
    /// The bilateral rows' impulses in answer to the contacts'.
    x0: Vec<f64>,
    /// K_b⁻¹ B, one column per contact row.
    kb_b: Vec<f64>,
    /// B, one column per contact row.
    b: Vec<f64>,
    /// W (column-major), row velocities and impulses.
    w: Vec<f64>,
    u: Vec<f64>,
    lambda: Vec<f64>,
}

/// Forms K_b, W and K_b⁻¹ B for these rows (see the module docs) into `scratch`.
pub fn prepare(
    contacts: &[ContactRows],
    bilateral: &[Bilateral],
    m: &[InverseMass],
    scratch: &mut ThroughSoftRowsScratch,
) {
    // The scene and `set_contact_model` refuse spin friction with joints and springs.
    debug_assert!(contacts.iter().all(|c| c.spin.mu_m == 0.0));
    let nb = bilateral.len();
    let dim = 3 * contacts.len();
    let contact_row = |k: usize| &contacts[k / 3].rows[k % 3];
    let ThroughSoftRowsScratch {
        kb,
        kb_lu,
        kb_b,
        b,
        w,
        ..
    } = scratch;
    kb.clear();
    kb.extend((0..nb * nb).map(|k| {
        let (i, j) = (k % nb, k / nb);
        let soft = if i == j { bilateral[i].compliance } else { 0.0 };
        bilateral[i].row.coupling(&bilateral[j].row, m) + soft
    }));
    kb_lu.factor_regularised(nb, kb, BILATERAL_REGULARISATION);
    b.clear();
    b.extend((0..nb * dim).map(|k| {
        let (i, c) = (k % nb, k / nb);
        bilateral[i].row.coupling(contact_row(c), m)
    }));
    kb_b.clone_from(b);
    if nb > 0 {
        for col in kb_b.chunks_exact_mut(nb) {
            if !kb_lu.solve_in_place(col) {
                col.fill(0.0);
            }
        }
    }
    w.clear();
    w.extend((0..dim * dim).map(|k| {
        let (i, j) = (k % dim, k / dim);
        let taken: f64 = b[i * nb..(i + 1) * nb]
            .iter()
            .zip(&kb_b[j * nb..(j + 1) * nb])
            .map(|(p, q)| p * q)
            .sum();
        contact_row(i).coupling(contact_row(j), m) - taken
    }));
}

/// Solves the contacts' impulses with the matrices of the last [`prepare`] (for the same
/// contacts and bilateral rows): `applied` holds per contact the impulse (normal, t₁, t₂)
/// that the velocities behind `contacts[k].u0` already contain. Writes the total impulse per
/// contact (handled when its normal impulse is positive) with its row velocities, and the
/// bodies' velocity change by the impulses' difference and the bilateral rows' answer
/// −K_b⁻¹ B Δλ_c along their rows.
pub fn solve_from(
    contacts: &[ContactRows],
    bilateral: &[Bilateral],
    m: &[InverseMass],
    applied: &[[f64; 3]],
    scratch: &mut ThroughSoftRowsScratch,
    out: &mut Vec<ContactImpulse>,
    delta: &mut VelocityChange,
) -> SweepStats {
    let nb = bilateral.len();
    let dim = 3 * contacts.len();
    let contact_row = |k: usize| &contacts[k / 3].rows[k % 3];
    let ThroughSoftRowsScratch {
        x0,
        kb_b,
        w,
        u,
        lambda,
        ..
    } = scratch;
    u.clear();
    u.extend((0..dim).map(|i| contacts[i / 3].u0[i % 3]));
    lambda.clear();
    lambda.extend(applied.iter().flatten());
    let stats = sweeps(w, u, lambda, contacts);
    let bodies = m.len();
    for change in [&mut delta.v, &mut delta.w] {
        change.clear();
        change.resize(bodies, Vector3::zeros());
    }
    x0.clear();
    x0.resize(nb, 0.0);
    for (i, l) in lambda.iter().enumerate() {
        let d = l - applied[i / 3][i % 3];
        if d != 0.0 {
            contact_row(i).apply(d, m, &mut delta.v, &mut delta.w);
            for (x, y) in x0.iter_mut().zip(&kb_b[i * nb..(i + 1) * nb]) {
                *x -= d * y;
            }
        }
    }
    for (r, l) in bilateral.iter().zip(x0.iter()) {
        if *l != 0.0 {
            r.row.apply(*l, m, &mut delta.v, &mut delta.w);
        }
    }
    out.clear();
    out.extend((0..contacts.len()).map(|c| ContactImpulse {
        handled: lambda[3 * c] > 0.0,
        normal: lambda[3 * c],
        tangent: Vector2::new(lambda[3 * c + 1], lambda[3 * c + 2]),
        u: [u[3 * c], u[3 * c + 1], u[3 * c + 2]],
        spin: 0.0,
        u_spin: 0.0,
    }));
    stats
}

#[cfg(test)]
mod tests {
    use nalgebra::Matrix3;

    use super::*;
    use crate::contact::lcp::Row;

    /// The ground (body 0) and a particle of mass `m_kg` (body 1).
    fn ground_and_particle(m_kg: f64) -> [InverseMass; 2] {
        [
            InverseMass {
                inv_mass: 0.0,
                inv_inertia: Matrix3::zeros(),
            },
            InverseMass {
                inv_mass: 1.0 / m_kg,
                inv_inertia: Matrix3::identity() * 1e3,
            },
        ]
    }

    /// A frictionless contact of the particle (1 cm above its contact point) with the ground,
    /// at these velocities.
    fn ground_contact(v: &[Vector3<f64>; 2]) -> [ContactRows; 1] {
        let w = [Vector3::zeros(); 2];
        let r = Vector3::new(0.0, 0.0, -0.01);
        let rows = [Vector3::z(), Vector3::x(), Vector3::y()]
            .map(|dir| Row::new(0, 1, &Vector3::zeros(), &r, dir));
        [ContactRows {
            rows,
            u0: rows.map(|row| row.velocity(v, &w)),
            target: 0.0,
            mu: 0.0,
            slip_start: Vector2::zeros(),
            spin: crate::contact::spin::Spin::NONE,
        }]
    }

    /// A particle of 0.5 kg (body 1) falls onto the ground (body 0) while a soft spring row
    /// from the ground pulls it along d = (1, 0, 1)/√2: the frictionless contact and the
    /// spring's linearised law must hold together. Checked against the conditions
    /// themselves: the particle's normal velocity ends at the target 0, its momentum change is
    /// λₙ ẑ + λₛ d (λₛ from the change along x), and the spring's row velocity changes by
    /// −ε λₛ. A solve from that solution, with its impulses applied, changes nothing.
    #[test]
    fn a_contact_and_a_soft_row_hold_together() {
        let (m_kg, compliance) = (0.5, 0.7);
        let masses = ground_and_particle(m_kg);
        let v = [Vector3::zeros(), Vector3::new(0.2, 0.0, -1.0)];
        let d = Vector3::new(1.0, 0.0, 1.0) / 2f64.sqrt();
        let bilateral = [Bilateral {
            row: Row::new(0, 1, &Vector3::zeros(), &Vector3::zeros(), d),
            change: 0.0,
            compliance,
        }];
        let contact = ground_contact;
        let contacts = contact(&v);
        let mut scratch = ThroughSoftRowsScratch::default();
        let (mut out, mut delta) = (Vec::new(), VelocityChange::default());
        prepare(&contacts, &bilateral, &masses, &mut scratch);
        let stats = solve_from(
            &contacts,
            &bilateral,
            &masses,
            &[[0.0; 3]],
            &mut scratch,
            &mut out,
            &mut delta,
        );
        assert!(stats.residual_m_per_s < 1e-10, "{stats:?}");
        let dv = delta.v[1];
        let lambda_n = out[0].normal;
        let lambda_s = m_kg * dv.x / d.x;
        assert!(out[0].handled && lambda_n > 0.0, "{:?}", out[0]);
        assert!(
            (v[1].z + dv.z).abs() < 1e-12,
            "normal velocity {}",
            v[1].z + dv.z
        );
        assert!(dv.y.abs() < 1e-15);
        assert!(
            (m_kg * dv.z - (lambda_n + lambda_s * d.z)).abs() < 1e-12,
            "momentum: {dv} with λn {lambda_n}, λs {lambda_s}"
        );
        // (K_b's diagonal is raised by 1e-12 of itself: 4e-12 of the change here.)
        assert!(
            (d.dot(&dv) + compliance * lambda_s).abs() < 1e-11 * d.dot(&dv).abs(),
            "spring law: Δu {} against −ελ {}",
            d.dot(&dv),
            -compliance * lambda_s
        );
        // From the solution with its impulses applied: nothing left to do.
        let after = [Vector3::zeros(), v[1] + dv];
        let applied = [[out[0].normal, out[0].tangent.x, out[0].tangent.y]];
        let contacts = contact(&after);
        solve_from(
            &contacts,
            &bilateral,
            &masses,
            &applied,
            &mut scratch,
            &mut out,
            &mut delta,
        );
        assert!((out[0].normal - lambda_n).abs() < 1e-12, "{:?}", out[0]);
        assert!(delta.v[1].norm() < 1e-12, "{}", delta.v[1]);
    }
}
