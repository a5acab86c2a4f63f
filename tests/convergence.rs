//! Convergence order of the solver's step in three-dimensional motion.
//!
//! The step is meant to be second-order accurate: the error at a fixed time must fall by ~4×
//! each time h is halved. A planar swing cannot show whether the rotational part (gyroscopic
//! term, orientation update, the frame in which torques act on the body) is second order, as
//! there every rotation is about one fixed axis; so the mechanisms here move out of any plane:
//!
//! 1. A free asymmetric body (principal inertias 1, 2, 3 kg·m²) spinning mostly about its
//!    intermediate axis, which flips over and back (the Dzhanibekov effect).
//! 2. Spatial chains: two links (ball joint to the ground, one hinge) and the three
//!    links (ball joint, two hinges with crossed axes), released tilted and turning; the same
//!    two links swinging in a plane are the control.
//!
//! The references are written here and share nothing with the solver but the initial state
//! (no `ar_multibody::sim` code computes any reference motion):
//!
//! - the free body: classical RK4 (10 µs) of Euler's equations in the body frame with the
//!   quaternion kinematics q̇ = ½ q ⊗ (0, Ω); its flip period is checked against the closed
//!   form 4K(k)/λ of the Jacobi elliptic solution (Landau & Lifshitz, Mechanics, §37);
//! - the chains: the maximal-coordinate DAE M a = F + Jᵀλ (gyroscopic torque −ω × Iω) with the
//!   constraints imposed on the accelerations (J a = −J̇v, and a light Baumgarte term), solved
//!   by dense LU and integrated by RK4 at 0.1 ms; checked by its energy conservation, its
//!   constraint drift, and its agreement with RK4 at 0.2 ms.
//!
//! The fitted order (slope of log error against log h) must be at least 1.8, and each error
//! within 2× of the value measured when this test was written, so that a regression of the
//! constant shows too. `cargo test --test convergence -- --nocapture` prints the tables.

use ar_multibody::sim::{Body, Joint, JointKind, Simulation, SolverParams};
use nalgebra::{
    DMatrix, DVector, Isometry3, Matrix3, Quaternion, Translation3, UnitQuaternion, Vector3,
};

const G: f64 = 9.81;

fn params(h: f64) -> SolverParams {
    SolverParams {
        dt_secs: h,
        ..SolverParams::default()
    }
}

/// Least-squares slope of ln(error) against ln(h).
fn fitted_order(hs: &[f64], errors: &[f64]) -> f64 {
    let xs: Vec<f64> = hs.iter().map(|h| h.ln()).collect();
    let ys: Vec<f64> = errors.iter().map(|e| e.ln()).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (mx, my) = (mean(&xs), mean(&ys));
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    sxy / xs.iter().map(|x| (x - mx) * (x - mx)).sum::<f64>()
}

/// Prints an error table, each column with its local orders, and returns the fitted orders.
fn report(title: &str, hs: &[f64], columns: &[(&str, &[f64])]) -> Vec<f64> {
    println!("{title}");
    print!("{:>8}", "h (ms)");
    for (name, _) in columns {
        print!("{name:>24}");
    }
    println!();
    for (i, h) in hs.iter().enumerate() {
        print!("{:>8.3}", h * 1e3);
        for (_, e) in columns {
            let local = match i {
                0 => String::new(),
                _ => format!("{:.2}", (e[i - 1] / e[i]).log2()),
            };
            print!("{:>14.3e}{local:>10}", e[i]);
        }
        println!();
    }
    let orders: Vec<f64> = columns.iter().map(|(_, e)| fitted_order(hs, e)).collect();
    print!("{:>8}", "order");
    orders.iter().for_each(|o| print!("{o:>24.2}"));
    println!("\n");
    orders
}

/// Asserts the fitted order and that each error is within 2× of the one measured.
fn assert_converges(what: &str, order: f64, errors: &[f64], measured: &[f64]) {
    assert!(order >= 1.8, "{what}: order {order:.2} < 1.8 ({errors:?})");
    for (e, m) in errors.iter().zip(measured) {
        assert!(*e <= 2.0 * m, "{what}: error {e:.3e} > twice {m:.3e}");
    }
}

// ----- 1. A free asymmetric body: RK4 of Euler's equations, the closed-form flip period -----

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

// ----- 2. Spatial chains: the maximal-coordinate DAE by RK4 -----

/// A constraint of the reference DAE between two bodies (0 the ground, whose frame is the
/// world; k ≥ 1 the k-th link), vectors in the bodies' frames.
#[derive(Clone, Copy)]
enum Constraint {
    /// Point a₁ of body b₁ coincides with point a₂ of body b₂: (b₁, a₁, b₂, a₂).
    Point(usize, Vector3<f64>, usize, Vector3<f64>),
    /// Axis n of body b₁ stays perpendicular to axis u of body b₂: (b₁, n, b₂, u).
    Perpendicular(usize, Vector3<f64>, usize, Vector3<f64>),
}

/// One constraint row: (body, linear part, angular part) of each side, the acceleration target
/// γ = −J̇v − 2αψ̇ − α²ψ, and ψ.
struct DaeRow {
    sides: [(usize, Vector3<f64>, Vector3<f64>); 2],
    gamma: f64,
    psi: f64,
}

/// The reference model: `links` box links (mass [`LINK_MASS`], principal inertia
/// [`link_inertia`] in the body frame) under gravity, and the constraints. The state is 13
/// numbers per link: x, q (w, i, j, k), v, ω (world).
struct Dae {
    links: usize,
    constraints: Vec<Constraint>,
}

/// Baumgarte rate (1/s) of the reference's constraint stabilisation.
const BAUMGARTE: f64 = 10.0;

/// Pose and velocities of body `b` in state `s`: x, R, v, ω (the ground: at rest, identity).
fn kin(s: &[f64], b: usize) -> (Vector3<f64>, Matrix3<f64>, Vector3<f64>, Vector3<f64>) {
    let z = Vector3::zeros();
    if b == 0 {
        return (z, Matrix3::identity(), z, z);
    }
    let s = &s[13 * (b - 1)..13 * b];
    let q = UnitQuaternion::new_normalize(Quaternion::new(s[3], s[4], s[5], s[6]));
    let v3 = |o: usize| Vector3::new(s[o], s[o + 1], s[o + 2]);
    (v3(0), q.to_rotation_matrix().into_inner(), v3(7), v3(10))
}

impl Dae {
    fn rows(&self, s: &[f64]) -> Vec<DaeRow> {
        let (a, aa) = (2.0 * BAUMGARTE, BAUMGARTE * BAUMGARTE);
        let mut rows = Vec::new();
        for c in &self.constraints {
            match *c {
                Constraint::Point(b1, a1, b2, a2) => {
                    let ((x1, r1, v1, w1), (x2, r2, v2, w2)) = (kin(s, b1), kin(s, b2));
                    let (r1, r2) = (r1 * a1, r2 * a2);
                    let psi = x1 + r1 - x2 - r2;
                    let dpsi = v1 + w1.cross(&r1) - v2 - w2.cross(&r2);
                    let quad = w1.cross(&w1.cross(&r1)) - w2.cross(&w2.cross(&r2));
                    for k in 0..3 {
                        let e = Vector3::ith(k, 1.0);
                        rows.push(DaeRow {
                            sides: [(b1, e, r1.cross(&e)), (b2, -e, -r2.cross(&e))],
                            gamma: -quad[k] - a * dpsi[k] - aa * psi[k],
                            psi: psi[k],
                        });
                    }
                }
                Constraint::Perpendicular(b1, n, b2, u) => {
                    let ((_, r1, _, w1), (_, r2, _, w2)) = (kin(s, b1), kin(s, b2));
                    let (n, u) = (r1 * n, r2 * u);
                    let (psi, nu) = (n.dot(&u), n.cross(&u));
                    let dpsi = (w1 - w2).dot(&nu);
                    let quad = (w1 - w2).dot(&(w1.cross(&n).cross(&u) + n.cross(&w2.cross(&u))));
                    rows.push(DaeRow {
                        sides: [(b1, Vector3::zeros(), nu), (b2, Vector3::zeros(), -nu)],
                        gamma: -quad - a * dpsi - aa * psi,
                        psi,
                    });
                }
            }
        }
        rows
    }

    /// The state's time derivative: [M −Jᵀ; J 0] [a; λ] = [F; γ] by dense LU.
    fn derivative(&self, s: &[f64]) -> Vec<f64> {
        let nb = self.links;
        let rows = self.rows(s);
        let n = 6 * nb + rows.len();
        let (mut a, mut rhs) = (DMatrix::<f64>::zeros(n, n), DVector::<f64>::zeros(n));
        for b in 0..nb {
            let (_, r, _, w) = kin(s, b + 1);
            let inertia = r * Matrix3::from_diagonal(&link_inertia()) * r.transpose();
            let o = 6 * b;
            a.view_mut((o, o), (3, 3)).fill_diagonal(LINK_MASS);
            a.view_mut((o + 3, o + 3), (3, 3)).copy_from(&inertia);
            rhs.rows_mut(o, 3)
                .copy_from(&(Vector3::new(0.0, 0.0, -G) * LINK_MASS));
            rhs.rows_mut(o + 3, 3).copy_from(&-w.cross(&(inertia * w)));
        }
        for (k, row) in rows.iter().enumerate() {
            let i = 6 * nb + k;
            for &(b, lin, ang) in row.sides.iter().filter(|side| side.0 > 0) {
                let o = 6 * (b - 1);
                for d in 0..3 {
                    (a[(i, o + d)], a[(i, o + 3 + d)]) = (lin[d], ang[d]);
                    (a[(o + d, i)], a[(o + 3 + d, i)]) = (-lin[d], -ang[d]);
                }
            }
            rhs[i] = row.gamma;
        }
        let acc = a.lu().solve(&rhs).expect("regular KKT matrix");
        let mut ds = vec![0.0; s.len()];
        for b in 0..nb {
            let (_, _, v, w) = kin(s, b + 1);
            let o = 13 * b;
            let q = Quaternion::new(s[o + 3], s[o + 4], s[o + 5], s[o + 6]);
            let dq = Quaternion::from_parts(0.0, w) * q * 0.5;
            ds[o..o + 3].copy_from_slice(v.as_slice());
            ds[o + 3..o + 7].copy_from_slice(&[dq.w, dq.i, dq.j, dq.k]);
            ds[o + 7..o + 13].copy_from_slice(&acc.as_slice()[6 * b..6 * b + 6]);
        }
        ds
    }

    /// One classical RK4 step, the quaternions renormalised.
    fn rk4(&self, s: &mut [f64], h: f64) {
        let add =
            |k: &[f64], f: f64| -> Vec<f64> { s.iter().zip(k).map(|(a, b)| a + f * b).collect() };
        let k1 = self.derivative(s);
        let k2 = self.derivative(&add(&k1, h / 2.0));
        let k3 = self.derivative(&add(&k2, h / 2.0));
        let k4 = self.derivative(&add(&k3, h));
        for (i, x) in s.iter_mut().enumerate() {
            *x += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
        for q in s.chunks_mut(13).map(|b| &mut b[3..7]) {
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            q.iter_mut().for_each(|x| *x /= n);
        }
    }

    fn energy(&self, s: &[f64]) -> f64 {
        (1..=self.links)
            .map(|b| {
                let (x, r, v, w) = kin(s, b);
                let wb = r.transpose() * w;
                0.5 * LINK_MASS * v.norm_squared()
                    + 0.5 * wb.dot(&link_inertia().component_mul(&wb))
                    + LINK_MASS * G * x.z
            })
            .sum()
    }

    fn constraint_norm(&self, s: &[f64]) -> f64 {
        self.rows(s)
            .iter()
            .map(|r| r.psi * r.psi)
            .sum::<f64>()
            .sqrt()
    }
}

/// A chain of box links hanging from a ball joint at the origin, each hinged to the one above:
/// the links' start orientations (Euler angles), the hinge axes (hinge k below link k, in link
/// k's frame), the top link's angular velocity and the hinges' start rates (rad/s).
struct ChainSpec {
    rotations: &'static [[f64; 3]],
    hinge_axes: &'static [[f64; 3]],
    w_top: [f64; 3],
    hinge_rates: &'static [f64],
}

const TWO_LINKS: ChainSpec = ChainSpec {
    rotations: &[[0.5, -0.3, 0.2], [-0.2, 0.6, 1.1]],
    hinge_axes: &[[1.0, 0.4, 0.1]],
    w_top: [0.6, -0.8, 0.5],
    hinge_rates: &[1.5],
};

const THREE_LINKS: ChainSpec = ChainSpec {
    rotations: &[[0.5, -0.3, 0.2], [-0.2, 0.6, 1.1], [0.4, 0.9, -0.5]],
    hinge_axes: &[[1.0, 0.4, 0.1], [0.2, 1.0, -0.1]],
    w_top: [0.6, -0.8, 0.5],
    hinge_rates: &[1.5, -1.0],
};

/// Two links swinging in the xz-plane (hinge axis and angular velocities along y).
const PLANAR_TWO_LINKS: ChainSpec = ChainSpec {
    rotations: &[[0.0, 0.5, 0.0], [0.0, -0.4, 0.0]],
    hinge_axes: &[[0.0, 1.0, 0.0]],
    w_top: [0.0, 2.0, 0.0],
    hinge_rates: &[3.0],
};

const HALF_LENGTH: f64 = 0.15;
const LINK_MASS: f64 = 0.5;
const TOP: Vector3<f64> = Vector3::new(0.0, 0.0, HALF_LENGTH);
const BOTTOM: Vector3<f64> = Vector3::new(0.0, 0.0, -HALF_LENGTH);

/// Principal inertia of a 6 × 3 × 30 cm box link.
fn link_inertia() -> Vector3<f64> {
    let s = Vector3::new(0.06, 0.03, 2.0 * HALF_LENGTH).map(|x| x * x);
    Vector3::new(s.y + s.z, s.x + s.z, s.x + s.y) * (LINK_MASS / 12.0)
}

impl ChainSpec {
    /// Each link's start pose, velocity and angular velocity, down from the pivot (the joint
    /// rates carried along the chain), and the hinge axes in the world.
    #[allow(clippy::type_complexity)]
    fn start(
        &self,
    ) -> (
        Vec<(Isometry3<f64>, Vector3<f64>, Vector3<f64>)>,
        Vec<Vector3<f64>>,
    ) {
        let (mut anchor, mut anchor_velocity) = (Vector3::zeros(), Vector3::zeros());
        let mut w = Vector3::from(self.w_top);
        let (mut links, mut axes) = (Vec::new(), Vec::new());
        for (k, r) in self.rotations.iter().enumerate() {
            let q = UnitQuaternion::from_euler_angles(r[0], r[1], r[2]);
            if k > 0 {
                w += axes[k - 1] * self.hinge_rates[k - 1];
            }
            let x = anchor - q * TOP;
            let v = anchor_velocity + w.cross(&(x - anchor));
            links.push((Isometry3::from_parts(Translation3::from(x), q), v, w));
            if let Some(a) = self.hinge_axes.get(k) {
                axes.push(q * Vector3::from(*a).normalize());
            }
            anchor = x + q * BOTTOM;
            anchor_velocity = v + w.cross(&(anchor - x));
        }
        (links, axes)
    }

    fn simulation(&self, params: SolverParams) -> Simulation {
        let (links, axes) = self.start();
        let mut bodies = vec![Body::ground()];
        for (k, (pose, _, _)) in links.iter().enumerate() {
            let (i, id) = (link_inertia(), UnitQuaternion::identity());
            bodies.push(Body::new(format!("link{k}"), LINK_MASS, i, id, *pose, None));
        }
        let (zero, z) = (Vector3::zeros(), Vector3::z());
        let mut joints = vec![Joint::new(
            "ball",
            JointKind::Ball,
            &bodies,
            0,
            1,
            zero,
            TOP,
            z,
            z,
        )];
        for (k, &a) in axes.iter().enumerate() {
            let (name, kind) = (format!("hinge{k}"), JointKind::Hinge);
            joints.push(Joint::new(
                name,
                kind,
                &bodies,
                k + 1,
                k + 2,
                BOTTOM,
                TOP,
                a,
                a,
            ));
        }
        let gravity = Vector3::new(0.0, 0.0, -G);
        let mut sim =
            Simulation::new(bodies, joints, vec![], vec![], gravity, params).expect("builds");
        for (k, (_, v, w)) in links.iter().enumerate() {
            sim.set_body_velocity(k + 1, *v, *w);
        }
        sim
    }

    /// The reference model and its start state.
    fn dae(&self) -> (Dae, Vec<f64>) {
        let (links, axes) = self.start();
        let mut constraints = vec![Constraint::Point(0, Vector3::zeros(), 1, TOP)];
        for (k, a) in axes.iter().enumerate() {
            constraints.push(Constraint::Point(k + 1, BOTTOM, k + 2, TOP));
            // The axis, fixed in the upper link, stays across two directions fixed in the lower.
            let across = a.cross(&Vector3::new(0.3, -0.5, 0.8)).normalize();
            let n = links[k].0.rotation.inverse_transform_vector(a);
            for u in [across, a.cross(&across)] {
                let u = links[k + 1].0.rotation.inverse_transform_vector(&u);
                constraints.push(Constraint::Perpendicular(k + 1, n, k + 2, u));
            }
        }
        let mut state = Vec::new();
        for (pose, v, w) in &links {
            let q = pose.rotation;
            state.extend(pose.translation.vector.iter());
            state.extend([q.w, q.i, q.j, q.k]);
            state.extend(v.iter().chain(w.iter()));
        }
        let dae = Dae {
            links: links.len(),
            constraints,
        };
        (dae, state)
    }
}

/// The reference tip at `t_end` by RK4 at `h`, after checking its energy and constraints.
fn reference_tip(spec: &ChainSpec, t_end: f64, h: f64) -> Vector3<f64> {
    let (dae, mut s) = spec.dae();
    let e0 = dae.energy(&s);
    let scale = e0.abs() + dae.links as f64 * LINK_MASS * G * HALF_LENGTH;
    let (mut max_e, mut max_psi) = (0.0_f64, 0.0_f64);
    for _ in 0..(t_end / h).round() as usize {
        dae.rk4(&mut s, h);
        max_e = max_e.max((dae.energy(&s) - e0).abs() / scale);
        max_psi = max_psi.max(dae.constraint_norm(&s));
    }
    println!(
        "  RK4 at {:.1} ms: energy error ≤ {max_e:.1e} (relative), |ψ| ≤ {max_psi:.1e} m",
        h * 1e3
    );
    assert!(max_e < 1e-9, "reference energy error {max_e}");
    assert!(max_psi < 1e-9, "reference constraint drift {max_psi} m");
    let (x, r, _, _) = kin(&s, dae.links);
    x + r * BOTTOM
}

/// The solver's tip at `t_end`, and its largest energy-balance error on the way.
fn solver_tip(spec: &ChainSpec, t_end: f64, params: SolverParams) -> (Vector3<f64>, f64) {
    let mut sim = spec.simulation(params);
    let steps = (t_end / params.dt_secs).round() as usize;
    let (mut max_e, mut solves) = (0.0_f64, 0);
    for _ in 0..steps {
        sim.step().expect("step");
        max_e = max_e.max(sim.diagnostics().energy_error_rel.abs());
        solves += sim.diagnostics().iterations;
    }
    println!(
        "  solver at {:.2} ms: energy balance error ≤ {max_e:.1e}, {:.2} solves per step",
        params.dt_secs * 1e3,
        solves as f64 / steps as f64
    );
    let b = sim.bodies().last().expect("links");
    (
        b.position_in_world + b.world_from_body_rotation * BOTTOM,
        max_e,
    )
}

/// Tip errors after 1 s at h = 2, 1, 0.5, 0.25 ms against RK4 at 0.1 ms.
#[test]
fn spatial_chains_converge_at_second_order() {
    let (t_end, hs) = (1.0, [2e-3, 1e-3, 0.5e-3, 0.25e-3]);
    let chains = [
        ("two links, ball + hinge, spatial", &TWO_LINKS),
        ("three links, ball + two crossed hinges", &THREE_LINKS),
        ("two links, planar (control)", &PLANAR_TWO_LINKS),
    ];
    for ((name, spec), measured) in chains.into_iter().zip(MEASURED_CHAINS) {
        println!("{name}:");
        let reference = reference_tip(spec, t_end, 1e-4);
        let spread = (reference_tip(spec, t_end, 2e-4) - reference).norm();
        println!("  RK4 at 0.1 and 0.2 ms: tips {spread:.1e} m apart");
        assert!(spread < 1e-8, "the reference has not converged: {spread} m");
        let errors: Vec<f64> = hs
            .iter()
            .map(|&h| (solver_tip(spec, t_end, params(h)).0 - reference).norm())
            .collect();
        let title = format!("{name}: tip error at t = 1 s");
        let order = report(&title, &hs, &[("tip (m)", &errors[..])])[0];
        assert_converges(name, order, &errors, &measured);
    }
}

/// Tip errors measured at 2, 1, 0.5, 0.25 ms.
const MEASURED_CHAINS: [[f64; 4]; 3] = [
    [6.821e-5, 1.707e-5, 4.249e-6, 1.061e-6],
    [6.873e-5, 1.718e-5, 4.289e-6, 1.072e-6],
    [1.612e-5, 4.026e-6, 1.006e-6, 2.505e-7],
];

/// The exact energy identity in three-dimensional motion: with the iteration converged
/// (velocity tolerance 1e-12), the three links' energy balance closes to ~1e-9 at 2 ms (the
/// default tolerance leaves up to ~1e-3).
#[test]
fn a_spatial_chain_keeps_its_energy_when_the_iteration_has_converged() {
    let tight = SolverParams {
        velocity_tolerance: 1e-12,
        max_iterations: 1000,
        ..params(2e-3)
    };
    let (_, max_e) = solver_tip(&THREE_LINKS, 1.0, tight);
    assert!(max_e < 1e-7, "energy balance error {max_e}");
}
