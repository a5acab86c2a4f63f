//! The sparse solve against closed forms: stacks, a sliding cube, focused sweeps.

use nalgebra::Matrix3;

use super::*;
use crate::contact::through_joints::RESIDUAL_TOLERANCE_M_PER_S;

const G_M_PER_S2: f64 = 9.81;
const H_SECS: f64 = 0.01;

fn ground() -> InverseMass {
    InverseMass {
        inv_mass: 0.0,
        inv_inertia: Matrix3::zeros(),
    }
}

/// A contact's rows between bodies 1 and 2 at lever arms r1, r2 with normal +z (body 2
/// above body 1), the row velocities at `v`, target 0 (touching).
fn contact(
    b1: usize,
    b2: usize,
    r1: Vector3<f64>,
    r2: Vector3<f64>,
    mu: f64,
    v: &[Vector3<f64>],
) -> ContactRows {
    let rows = [Vector3::z(), Vector3::x(), Vector3::y()].map(|d| Row::new(b1, b2, &r1, &r2, d));
    let w = vec![Vector3::zeros(); v.len()];
    ContactRows {
        rows,
        u0: rows.map(|r| r.velocity(v, &w)),
        target: 0.0,
        mu,
        slip_start: Vector2::zeros(),
        spin: crate::contact::spin::Spin::NONE,
    }
}

/// Solves from zero impulses in contact order and checks that the sweeps converged.
fn solve_cold(
    contacts: &[ContactRows],
    masses: &[InverseMass],
) -> (PgsScratch, Vec<ContactImpulse>, VelocityChange) {
    let (mut scratch, mut out, mut delta) = Default::default();
    let order: Vec<usize> = (0..contacts.len()).collect();
    let warm = vec![[0.0; 4]; contacts.len()];
    let stats = solve(
        contacts,
        &order,
        masses,
        &warm,
        RESIDUAL_TOLERANCE_M_PER_S,
        false,
        &mut scratch,
        &mut out,
        &mut delta,
    );
    assert!(
        stats.residual_m_per_s <= RESIDUAL_TOLERANCE_M_PER_S,
        "{stats:?}"
    );
    (scratch, out, delta)
}

/// Three spheres (radius r, mass m) stacked on the ground, each having fallen for one
/// step (v = −g h): the contacts take the weight above them, 3, 2 and 1 m g h (closed
/// form), and every sphere stops. Swept bottom first, the worst order for a stack.
#[test]
fn a_stack_of_three_spheres_carries_its_weight_down() {
    let (m_kg, r_m) = (0.02, 0.015);
    let inv_i = 1.0 / (0.4 * m_kg * r_m * r_m);
    let ball = InverseMass {
        inv_mass: 1.0 / m_kg,
        inv_inertia: Matrix3::identity() * inv_i,
    };
    let masses = [ground(), ball, ball, ball];
    let v = vec![
        Vector3::zeros(),
        Vector3::new(0.0, 0.0, -G_M_PER_S2 * H_SECS),
        Vector3::new(0.0, 0.0, -G_M_PER_S2 * H_SECS),
        Vector3::new(0.0, 0.0, -G_M_PER_S2 * H_SECS),
    ];
    let (down, up) = (Vector3::new(0.0, 0.0, -r_m), Vector3::new(0.0, 0.0, r_m));
    let contacts = [
        contact(0, 1, Vector3::zeros(), down, 0.5, &v),
        contact(1, 2, up, down, 0.5, &v),
        contact(2, 3, up, down, 0.5, &v),
    ];
    let (mut scratch, mut out, mut delta) = solve_cold(&contacts, &masses);
    let weight = m_kg * G_M_PER_S2 * H_SECS;
    for (k, o) in out.iter().enumerate() {
        let expected = (3 - k) as f64 * weight;
        // The residual times the stack's mass bounds the impulse error.
        assert!((o.normal - expected).abs() < 1e-9, "contact {k}: {o:?}");
        assert!(o.tangent.norm() < 1e-15, "contact {k}: {o:?}");
    }
    // Each contact's velocity within the tolerance, so the top sphere within three.
    for (b, (v, dv)) in v.iter().zip(&delta.v).enumerate().skip(1) {
        assert!(
            (v + dv).norm() < 3.0 * RESIDUAL_TOLERANCE_M_PER_S,
            "sphere {b}: {dv:?}"
        );
    }
    // Warm-started from the answer, the first check finds it converged.
    let warm: Vec<[f64; 4]> = out.iter().map(|o| [o.normal, 0.0, 0.0, 0.0]).collect();
    let stats = solve(
        &contacts,
        &[0, 1, 2],
        &masses,
        &warm,
        RESIDUAL_TOLERANCE_M_PER_S,
        false,
        &mut scratch,
        &mut out,
        &mut delta,
    );
    assert_eq!(stats.sweeps, CHECK_EVERY, "{stats:?}");
}

/// A cube sliding at 0.2 m/s on the ground with μ = 0.3 (four contacts on its face, a
/// statically indeterminate support): the normal impulses add up to its weight over the
/// step, the friction impulses to μ times that against the slide (closed form: it cannot
/// stop within a step, 0.2 m/s > μ g h), and the cube neither sinks nor tips.
#[test]
fn a_sliding_cube_takes_the_coulomb_impulse_on_four_points() {
    let (m_kg, a_m, mu) = (0.03, 0.03, 0.3);
    let inv_i = 6.0 / (m_kg * a_m * a_m);
    let cube = InverseMass {
        inv_mass: 1.0 / m_kg,
        inv_inertia: Matrix3::identity() * inv_i,
    };
    let masses = [ground(), cube];
    let v = vec![
        Vector3::zeros(),
        Vector3::new(0.2, 0.0, -G_M_PER_S2 * H_SECS),
    ];
    let half = a_m / 2.0;
    let contacts: Vec<ContactRows> = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
        .iter()
        .map(|(x, y)| {
            let r2 = Vector3::new(x * half, y * half, -half);
            contact(0, 1, r2 + Vector3::new(0.0, 0.0, half), r2, mu, &v)
        })
        .collect();
    let (_, out, delta) = solve_cold(&contacts, &masses);
    let weight = m_kg * G_M_PER_S2 * H_SECS;
    let normal: f64 = out.iter().map(|o| o.normal).sum();
    let friction: Vector2<f64> = out.iter().map(|o| o.tangent).sum();
    assert!((normal - weight).abs() < 1e-10, "{normal} vs {weight}");
    assert!(out.iter().all(|o| o.normal >= 0.0));
    assert!((friction.x + mu * weight).abs() < 1e-10, "{friction:?}");
    assert!(friction.y.abs() < 1e-11, "{friction:?}");
    let v_end = v[1] + delta.v[1];
    assert!(
        (v_end.x - (0.2 - mu * G_M_PER_S2 * H_SECS)).abs() < 1e-8,
        "{v_end:?}"
    );
    assert!(
        v_end.z.abs() < 1e-8 && delta.w[1].norm() < 1e-6,
        "{v_end:?} {:?}",
        delta.w[1]
    );
}

/// The spin residual's lever arm is the moving body's |r| at the contact, whatever the
/// normal (Σ |r × dᵢ|² = 2 |r|² over the three row directions); a fixed body has none.
#[test]
fn the_lever_arm_is_the_moving_bodys_distance_to_the_contact() {
    let ball = InverseMass {
        inv_mass: 50.0,
        inv_inertia: Matrix3::identity(),
    };
    let r2 = Vector3::new(0.003, -0.004, 0.012);
    let v = vec![Vector3::zeros(); 2];
    let c = contact(0, 1, Vector3::new(5.0, 0.0, 0.0), r2, 0.5, &v);
    assert!((lever_arm_m(&c.rows, |r| r.ang2, &ball) - 0.013).abs() < 1e-17);
    assert_eq!(lever_arm_m(&c.rows, |r| r.ang1, &ground()), 0.0);
}

/// A pile's focused sweeps: forty lone spheres on the ground (settled by the first sweep)
/// beside a stack of six (which needs hundreds of sweeps), so that after the full sweeps
/// only the stack's contacts stay active. Every contact still ends on the closed form (the
/// weight above it), the residual the checks kept up to date from the changed bodies
/// alone is the one every contact gives, and the focus costs few more sweeps: 356 against
/// 320 relaxing every contact (without the neighbours in the focus: stalled at 1e-6 m/s).
#[test]
fn focused_sweeps_settle_a_stack_beside_settled_spheres() {
    let (m_kg, r_m) = (0.02, 0.015);
    let ball = InverseMass {
        inv_mass: 1.0 / m_kg,
        inv_inertia: Matrix3::identity() / (0.4 * m_kg * r_m * r_m),
    };
    let (lone, stack) = (40, 6);
    let mut masses = vec![ground()];
    masses.resize(1 + lone + stack, ball);
    let mut v = vec![Vector3::new(0.0, 0.0, -G_M_PER_S2 * H_SECS); masses.len()];
    v[0] = Vector3::zeros();
    let (down, up) = (Vector3::new(0.0, 0.0, -r_m), Vector3::new(0.0, 0.0, r_m));
    let mut contacts: Vec<ContactRows> = (1..=lone)
        .map(|b| contact(0, b, Vector3::zeros(), down, 0.5, &v))
        .collect();
    for s in 0..stack {
        let (below, above) = (if s == 0 { 0 } else { lone + s }, lone + s + 1);
        let r1 = if s == 0 { Vector3::zeros() } else { up };
        contacts.push(contact(below, above, r1, down, 0.5, &v));
    }
    let order: Vec<usize> = (0..contacts.len()).collect();
    let warm = vec![[0.0; 4]; contacts.len()];
    let tolerance = 1e-9;
    let (mut scratch, mut out, mut delta) = Default::default();
    let stats = solve(
        &contacts,
        &order,
        &masses,
        &warm,
        tolerance,
        true,
        &mut scratch,
        &mut out,
        &mut delta,
    );
    assert!(stats.residual_m_per_s <= tolerance, "{stats:?}");
    assert!(stats.sweeps > FULL_SWEEPS, "{stats:?}");
    // Relaxing every contact in every sweep (no stall rule, no focus) takes nearly as
    // many sweeps, each of every contact.
    let (mut all, mut all_out, mut all_delta) = Default::default();
    let unfocused = solve(
        &contacts,
        &order,
        &masses,
        &warm,
        tolerance,
        false,
        &mut all,
        &mut all_out,
        &mut all_delta,
    );
    assert!(
        stats.sweeps as f64 <= 1.15 * unfocused.sweeps as f64,
        "{stats:?} {unfocused:?}"
    );
    let full = scratch.residual(&contacts, &order, &delta.v, &delta.w);
    assert_eq!(full, stats.residual_m_per_s);
    let weight = m_kg * G_M_PER_S2 * H_SECS;
    for (k, o) in out.iter().enumerate() {
        let above = if k < lone { 1 } else { stack - (k - lone) };
        // The residual times the stack's mass bounds the impulse error.
        assert!(
            (o.normal - above as f64 * weight).abs() < 1e-9,
            "contact {k}: {o:?}"
        );
    }
}
