//! Free rigid-body rotation against Euler's equations: a symmetric body's precession at the
//! Euler rate, and the intermediate-axis (Dzhanibekov) flip.

use ar_dynamics::Simulation;
use nalgebra::Vector3;

/// One free body of inertia `inertia` with no gravity, spinning at body-frame rate `omega`.
fn free_spinning_body(inertia: Vector3<f64>, omega_in_body: Vector3<f64>) -> Simulation {
    free_spinning_body_with(inertia, omega_in_body, ar_dynamics::SolverParams::default())
}

/// [`free_spinning_body`] with the given solver parameters.
fn free_spinning_body_with(
    inertia: Vector3<f64>,
    omega_in_body: Vector3<f64>,
    params: ar_dynamics::SolverParams,
) -> Simulation {
    use ar_dynamics::Body;
    use nalgebra::{Isometry3, Translation3, UnitQuaternion};
    // A tilted start pose, so that the body axes are not the world axes.
    let pose = Isometry3::from_parts(
        Translation3::new(0.0, 0.0, 0.5),
        UnitQuaternion::from_euler_angles(0.3, -0.2, 0.7),
    );
    let body = Body::new(
        "spinner",
        1.0,
        inertia,
        UnitQuaternion::identity(),
        pose,
        None,
    );
    let mut sim = Simulation::new(
        vec![Body::ground(), body],
        vec![],
        vec![],
        vec![],
        Vector3::zeros(),
        params,
    )
    .expect("builds");
    let omega_in_world = pose.rotation * omega_in_body;
    sim.set_body_velocity(1, Vector3::zeros(), omega_in_world);
    sim
}

fn body_rate_and_momentum(
    sim: &Simulation,
    inertia: &Vector3<f64>,
) -> (Vector3<f64>, Vector3<f64>) {
    let b = &sim.bodies()[1];
    let omega_in_body = b
        .world_from_body_rotation
        .inverse_transform_vector(&b.angular_velocity_in_world);
    let momentum_in_world = b.world_from_body_rotation * inertia.component_mul(&omega_in_body);
    (omega_in_body, momentum_in_world)
}

/// How a free symmetric body's rotation went over `steps` steps (see
/// [`a_free_symmetric_body_precesses_at_the_euler_rate`]).
struct Precession {
    turned_rad: f64,
    expected_rad: f64,
    max_axial_rate_drift: f64,
    max_transverse_rate_drift: f64,
    max_momentum_drift: f64,
    max_energy_drift: f64,
}

impl Precession {
    /// Asserts the body rates drifted by less than `rate_rad_per_s`, |L| and the energy by less
    /// than `relative`, and the precession angle is within 1e-3 of Euler's rate.
    fn assert_within(&self, rate_rad_per_s: f64, relative: f64) {
        assert!(
            self.max_axial_rate_drift < rate_rad_per_s,
            "Ω₃ drifted by {}",
            self.max_axial_rate_drift
        );
        assert!(
            self.max_transverse_rate_drift < rate_rad_per_s,
            "|Ω⊥| drifted by {}",
            self.max_transverse_rate_drift
        );
        assert!(
            self.max_momentum_drift < relative,
            "|L| drifted by {}",
            self.max_momentum_drift
        );
        assert!(
            self.max_energy_drift < relative,
            "the energy drifted by {}",
            self.max_energy_drift
        );
        assert!(
            (self.turned_rad - self.expected_rad).abs() < 1e-3 * self.expected_rad.abs(),
            "turned {} rad, expected {} rad",
            self.turned_rad,
            self.expected_rad
        );
    }
}

fn precess(params: ar_dynamics::SolverParams, steps: usize) -> Precession {
    let inertia = Vector3::new(2.0e-3, 2.0e-3, 1.0e-3);
    let omega0 = Vector3::new(1.0, 0.0, 10.0);
    let mut sim = free_spinning_body_with(inertia, omega0, params);
    let (_, l0) = body_rate_and_momentum(&sim, &inertia);
    let e0 = sim.kinetic_energy_j();
    let rate = (inertia.z - inertia.x) / inertia.x * omega0.z;
    let mut p = Precession {
        turned_rad: 0.0,
        expected_rad: 0.0,
        max_axial_rate_drift: 0.0,
        max_transverse_rate_drift: 0.0,
        max_momentum_drift: 0.0,
        max_energy_drift: 0.0,
    };
    let mut last_angle = 0.0_f64;
    for _ in 0..steps {
        sim.step().expect("step");
        let (w, l) = body_rate_and_momentum(&sim, &inertia);
        let angle = w.y.atan2(w.x);
        let mut d = angle - last_angle;
        d -= (d / std::f64::consts::TAU).round() * std::f64::consts::TAU;
        p.turned_rad += d;
        last_angle = angle;
        p.max_axial_rate_drift = p.max_axial_rate_drift.max((w.z - omega0.z).abs());
        p.max_transverse_rate_drift = p.max_transverse_rate_drift.max((w.xy().norm() - 1.0).abs());
        p.max_momentum_drift = p.max_momentum_drift.max((l - l0).norm() / l0.norm());
        p.max_energy_drift = p
            .max_energy_drift
            .max((sim.kinetic_energy_j() - e0).abs() / e0);
    }
    p.expected_rad = rate * sim.time_secs();
    eprintln!(
        "precession {:.6} rad (Euler's rate: {:.6} rad); drift at most: Ω₃ {:.3e} rad/s, \
         |Ω⊥| {:.3e} rad/s, world angular momentum {:.3e} of |L|, energy {:.3e}",
        p.turned_rad,
        p.expected_rad,
        p.max_axial_rate_drift,
        p.max_transverse_rate_drift,
        p.max_momentum_drift,
        p.max_energy_drift
    );
    p
}

/// A torque-free symmetric body (I₁ = I₂) precesses in its own frame: (Ω₁, Ω₂) turns about the
/// symmetry axis at λ = (I₃ − I₁)/I₁ · Ω₃ while Ω₃ stays constant (Euler's equations). The
/// world angular momentum and the kinetic energy stay constant. The implicit midpoint rule
/// turns (Ω₁, Ω₂) by 2·atan(hλ/2) per step, a phase error of (hλ)²/12 = 2e-4 here.
///
/// The integrator keeps |Ω⊥|, Ω₃, |L| and the energy exactly once its iteration has
/// converged: checked to rounding with a tight velocity tolerance. With the default one
/// (1e-6 m/s at the 0.1 m lever, 1e-5 rad/s) the refreshes stop as soon as the next change is
/// estimated under it, and the drift is of that order over the run.
#[test]
fn a_free_symmetric_body_precesses_at_the_euler_rate() {
    use ar_dynamics::SolverParams;
    let tight = SolverParams {
        velocity_tolerance: 1e-12,
        ..SolverParams::default()
    };
    let p = precess(tight, 200);
    p.assert_within(1e-9, 1e-9);
    let p = precess(SolverParams::default(), 200);
    p.assert_within(1e-5, 1e-6);
}

/// The tennis-racket (Dzhanibekov) effect: a spin about the intermediate principal axis is
/// unstable and flips over, a spin about the largest one is stable. Energy and |L| stay.
#[test]
fn a_spin_about_the_intermediate_axis_flips_and_about_the_major_axis_does_not() {
    let inertia = Vector3::new(1.0e-3, 2.0e-3, 3.0e-3);
    for (omega0, flips) in [
        (Vector3::new(1.0e-3, 5.0, 1.0e-3), true),
        (Vector3::new(1.0e-3, 1.0e-3, 5.0), false),
    ] {
        let mut sim = free_spinning_body(inertia, omega0);
        let (_, l0) = body_rate_and_momentum(&sim, &inertia);
        let e0 = sim.kinetic_energy_j();
        let axis = if flips { 1 } else { 2 };
        let mut min_along_axis = f64::INFINITY;
        let (mut max_l_drift, mut max_e_drift) = (0.0_f64, 0.0_f64);
        for _ in 0..1000 {
            sim.step().expect("step");
            let (w, l) = body_rate_and_momentum(&sim, &inertia);
            min_along_axis = min_along_axis.min(w[axis]);
            max_l_drift = max_l_drift.max((l.norm() - l0.norm()).abs() / l0.norm());
            max_e_drift = max_e_drift.max((sim.kinetic_energy_j() - e0).abs() / e0);
        }
        eprintln!("flips {flips}: drift of |L| {max_l_drift:.3e}, of the energy {max_e_drift:.3e}");
        // The refreshes stop at the velocity tolerance (1e-6 m/s at a 0.1 m lever arm, 1e-5
        // rad/s here), so |L| and the energy are kept to that order, not to rounding
        // (measured 3.6e-9 over the flip).
        assert!(max_l_drift < 1e-7, "|L| drifted by {max_l_drift}");
        assert!(max_e_drift < 1e-7, "the energy drifted by {max_e_drift}");
        if flips {
            assert!(
                min_along_axis < -0.9 * omega0[axis],
                "the intermediate-axis spin did not flip: min {min_along_axis}"
            );
        } else {
            assert!(
                min_along_axis > 0.99 * omega0[axis],
                "the major-axis spin wandered: min {min_along_axis}"
            );
        }
    }
}
