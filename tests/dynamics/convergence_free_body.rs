//! Convergence order of the solver's step for a free asymmetric body (principal inertias
//! 1, 2, 3 kg·m²) spinning mostly about its intermediate axis, which flips over and back (the
//! Dzhanibekov effect): the error at a fixed time must fall by ~4× each time h is halved.
//!
//! The reference is written here and shares nothing with the solver but the initial state:
//! classical RK4 (10 µs) of Euler's equations in the body frame with the quaternion kinematics
//! q̇ = ½ q ⊗ (0, Ω); its flip period is checked against the closed form 4K(k)/λ of the Jacobi
//! elliptic solution (Landau & Lifshitz, Mechanics, §37). The fitted order must be at least
//! 1.8 and each error within 2× of the value measured when this test was written.
//! `cargo test -p ar-dynamics --test dynamics convergence_free_body:: -- --nocapture` prints the table. (Spatial chains:
//! `tests/dynamics/convergence.rs`.)

use ar_dynamics::{Body, Simulation};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

use crate::convergence_order;
use convergence_order::{assert_converges, params, report};

const SPINNER_INERTIA: Vector3<f64> = Vector3::new(1.0, 2.0, 3.0);
/// Body-frame start rate: mostly about the intermediate axis.
const SPINNER_RATE: Vector3<f64> = Vector3::new(0.8, 8.0, 0.3);

fn spinner_start_rotation() -> UnitQuaternion<f64> {
    UnitQuaternion::from_euler_angles(0.3, -0.2, 0.7)
}

/// One RK4 step of Euler's equations I Ω̇ = (I Ω) × Ω (body frame) and q̇ = ½ q ⊗ (0, Ω)
/// (q = world_from_body), q renormalised.
fn rk4_free_body(w: &mut Vector3<f64>, q: &mut Quaternion<f64>, h: f64) {
    let i = SPINNER_INERTIA;
    let f = |w: &Vector3<f64>, q: &Quaternion<f64>| {
        let dw = Vector3::new(
            (i.y - i.z) * w.y * w.z / i.x,
            (i.z - i.x) * w.z * w.x / i.y,
            (i.x - i.y) * w.x * w.y / i.z,
        );
        (dw, q * Quaternion::from_parts(0.0, *w) * 0.5)
    };
    let (k1w, k1q) = f(w, q);
    let (k2w, k2q) = f(&(*w + k1w * (h / 2.0)), &(*q + k1q * (h / 2.0)));
    let (k3w, k3q) = f(&(*w + k2w * (h / 2.0)), &(*q + k2q * (h / 2.0)));
    let (k4w, k4q) = f(&(*w + k3w * h), &(*q + k3q * h));
    *w += (k1w + k2w * 2.0 + k3w * 2.0 + k4w) * (h / 6.0);
    *q = (*q + (k1q + k2q * 2.0 + k3q * 2.0 + k4q) * (h / 6.0)).normalize();
}

/// The complete elliptic integral of the first kind K(k), by the arithmetic-geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0, (1.0 - k * k).sqrt());
    while (a - b).abs() > 1e-15 * a {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    std::f64::consts::PI / (2.0 * a)
}

/// The period of a torque-free body's rates (I₁ < I₂ < I₃): for L² > 2EI₂,
/// Ω₁ ∝ cn τ, Ω₂ ∝ sn τ, Ω₃ ∝ dn τ with τ = λt, λ² = (I₃ − I₂)(L² − 2EI₁)/(I₁I₂I₃),
/// k² = (I₂ − I₁)(2EI₃ − L²)/((I₃ − I₂)(L² − 2EI₁)); for L² < 2EI₂ the same with indices 1 and 3
/// exchanged. sn and cn have period 4K(k) in τ, so the flip over and back takes T = 4K(k)/λ.
fn flip_period(i: &Vector3<f64>, w: &Vector3<f64>) -> f64 {
    let e2 = i.dot(&w.component_mul(w));
    let l2 = i.component_mul(w).norm_squared();
    let (i1, i2, i3) = if l2 > e2 * i.y {
        (i.x, i.y, i.z)
    } else {
        (i.z, i.y, i.x)
    };
    let lambda2 = (i3 - i2) * (l2 - e2 * i1) / (i1 * i2 * i3);
    let k2 = (i2 - i1) * (e2 * i3 - l2) / ((i3 - i2) * (l2 - e2 * i1));
    4.0 * elliptic_k(k2.sqrt()) / lambda2.sqrt()
}

/// The flip period from a history of (t, Ω₂): twice the time from its first downward zero
/// crossing to the next upward one (zeros of sn, half a period apart), each interpolated
/// linearly within its step.
fn flip_period_of(history: &[(f64, f64)]) -> f64 {
    let crossing = |downward: bool, after: f64| {
        history
            .windows(2)
            .find(|p| p[0].0 >= after && (p[0].1 > 0.0) == downward && (p[1].1 > 0.0) != downward)
            .map(|p| p[0].0 + (p[1].0 - p[0].0) * p[0].1 / (p[0].1 - p[1].1))
            .expect("Ω₂ crosses zero")
    };
    let down = crossing(true, 0.0);
    2.0 * (crossing(false, down) - down)
}

/// The reference body rate and orientation at `t_end` (a multiple of `h`), and the flip period.
fn spinner_reference(t_end: f64, h: f64) -> (Vector3<f64>, UnitQuaternion<f64>, f64) {
    let (mut w, mut q) = (SPINNER_RATE, *spinner_start_rotation().quaternion());
    let mut history = vec![(0.0, w.y)];
    for n in 1..=(t_end / h).round() as usize {
        rk4_free_body(&mut w, &mut q, h);
        history.push((n as f64 * h, w.y));
    }
    let q = UnitQuaternion::new_normalize(q);
    (w, q, flip_period_of(&history))
}

/// The solver's body rate and orientation at `t_end`, and its flip period.
fn spinner_solver(t_end: f64, h: f64) -> (Vector3<f64>, UnitQuaternion<f64>, f64) {
    let pose = Isometry3::from_parts(Translation3::new(0.0, 0.0, 0.5), spinner_start_rotation());
    let id = UnitQuaternion::identity();
    let body = Body::new("spinner", 1.0, SPINNER_INERTIA, id, pose, None);
    let bodies = vec![Body::ground(), body];
    let mut sim = Simulation::new(bodies, vec![], vec![], vec![], Vector3::zeros(), params(h))
        .expect("builds");
    sim.set_body_velocity(1, Vector3::zeros(), pose.rotation * SPINNER_RATE);
    let state = |sim: &Simulation| {
        let b = &sim.bodies()[1];
        let q = b.world_from_body_rotation;
        (q.inverse_transform_vector(&b.angular_velocity_in_world), q)
    };
    let mut history = vec![(0.0, SPINNER_RATE.y)];
    for n in 1..=(t_end / h).round() as usize {
        sim.step().expect("step");
        history.push((n as f64 * h, state(&sim).0.y));
    }
    let (w, q) = state(&sim);
    (w, q, flip_period_of(&history))
}

/// The free body at 4, 2, 1, 0.5 ms against RK4 at 10 µs after 3.6 s: a little over one flip
/// period (3.42 s), the body over and back.
#[test]
fn a_free_asymmetric_body_flips_at_the_right_period_with_second_order_error() {
    let t_end = 3.6;
    let closed_form = flip_period(&SPINNER_INERTIA, &SPINNER_RATE);
    let (w_ref, q_ref, period_ref) = spinner_reference(t_end, 1e-5);
    let (w_ref2, q_ref2, _) = spinner_reference(t_end, 2e-5);
    let (dw, dq) = ((w_ref - w_ref2).norm(), q_ref.angle_to(&q_ref2));
    println!(
        "flip period: closed form {closed_form:.9} s, RK4 {period_ref:.9} s; RK4 at 10 and \
         20 µs differ by {dw:.1e} rad/s, {dq:.1e} rad at {t_end} s"
    );
    // The reference agrees with the closed form and with itself at twice the step.
    let off = (period_ref - closed_form).abs();
    assert!(off < 1e-6 * closed_form, "RK4 period off by {off} s");
    assert!(dw < 1e-8 && dq < 1e-9, "RK4 not converged: {dw}, {dq}");

    let hs = [4e-3, 2e-3, 1e-3, 0.5e-3];
    let (mut rate, mut angle, mut period) = (vec![], vec![], vec![]);
    for &h in &hs {
        let (w, q, p) = spinner_solver(t_end, h);
        rate.push((w - w_ref).norm());
        angle.push(q.angle_to(&q_ref));
        period.push((p - closed_form).abs());
    }
    let columns = [
        ("|ΔΩ| (rad/s)", &rate[..]),
        ("orientation (rad)", &angle[..]),
        ("period (s)", &period[..]),
    ];
    let title = "free body, I = (1, 2, 3) kg m², Ω₀ = (0.8, 8, 0.3) rad/s: error at t = 3.6 s";
    let orders = report(title, &hs, &columns);
    for (((name, errors), order), measured) in columns.iter().zip(orders).zip(MEASURED_SPINNER) {
        assert_converges(name, order, errors, &measured);
    }
}

/// Body rate, orientation and period errors measured at 4, 2, 1, 0.5 ms.
const MEASURED_SPINNER: [[f64; 4]; 3] = [
    [4.795e-5, 1.182e-5, 2.939e-6, 7.359e-7],
    [3.086e-3, 7.716e-4, 1.929e-4, 4.823e-5],
    [2.429e-5, 5.972e-6, 1.495e-6, 3.732e-7],
];
