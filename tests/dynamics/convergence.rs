//! Convergence order of the solver's step in three-dimensional motion.
//!
//! The step is meant to be second-order accurate: the error at a fixed time must fall by ~4×
//! each time h is halved. A planar swing cannot show whether the rotational part (gyroscopic
//! term, orientation update, the frame in which torques act on the body) is second order, as
//! there every rotation is about one fixed axis; so the mechanisms here move out of any plane:
//!
//! spatial chains: two links (ball joint to the ground, one hinge) and the three links
//! (ball joint, two hinges with crossed axes), released tilted and turning; the same two links
//! swinging in a plane are the control. (A free asymmetric body, the other three-dimensional
//! case, is in `tests/dynamics/convergence_free_body.rs`.)
//!
//! The reference is written here and shares nothing with the solver but the initial state
//! (no `ar_dynamics` code computes any reference motion): the maximal-coordinate DAE M a = F + Jᵀλ (gyroscopic torque −ω × Iω) with the
//!   constraints imposed on the accelerations (J a = −J̇v, and a light Baumgarte term), solved
//!   by dense LU and integrated by RK4 at 0.1 ms; checked by its energy conservation, its
//!   constraint drift, and its agreement with RK4 at 0.2 ms.
//!
//! The fitted order (slope of log error against log h) must be at least 1.8, and each error
//! within 2× of the value measured when this test was written, so that a regression of the
//! constant shows too. `cargo test -p ar-dynamics --test dynamics convergence:: -- --nocapture` prints the tables.

use ar_dynamics::{Body, Joint, JointKind, Simulation, SolverParams};
use nalgebra::{
    DMatrix, DVector, Isometry3, Matrix3, Quaternion, Translation3, UnitQuaternion, Vector3,
};

const G: f64 = 9.81;

use crate::convergence_order;
use convergence_order::{assert_converges, params, report};

// ----- Spatial chains: the maximal-coordinate DAE by RK4 -----

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
