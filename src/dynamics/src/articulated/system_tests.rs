//! Tests of [`super::ArticulatedSim`] on the project's scenes: the mapping from the scene,
//! energy conservation under RK45 (acceptance 4 of issue 17), the integrators' orders, a
//! free body's momentum, determinism.

use nalgebra::{Isometry3, Matrix3, UnitQuaternion, Vector3};

use super::integrator::Integrator;
use super::system::{ArticulatedParams, ArticulatedSim};
use crate::{Body, Model, Scene};

fn scene(name: &str) -> Scene {
    Scene::load(format!(
        "{}/assets/scenes/{name}.toml",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    ))
    .unwrap()
}

fn params(dt_secs: f64, integrator: Integrator) -> ArticulatedParams {
    ArticulatedParams {
        dt_secs,
        integrator,
    }
}

/// Ten pendula released from a swing: the whole chain tilted by `deg` about the hinge axis
/// (world y) at the pivot, at rest.
pub(crate) fn ten_pendula_swing(deg: f64, p: ArticulatedParams) -> ArticulatedSim {
    let mut sim = ArticulatedSim::from_scene(&scene("ten_pendula"), p).unwrap();
    let mut q = sim.q().to_vec();
    let half = 0.5 * deg.to_radians();
    // Link 0 is p1 on the ball joint: its quaternion (w, x, y, z) tilts the chain about y.
    q[..4].copy_from_slice(&[half.cos(), 0.0, half.sin(), 0.0]);
    let qd = vec![0.0; sim.qd().len()];
    sim.set_state(&q, &qd);
    sim
}

/// At q₀ every body is where the scene puts it, and a tilt of the ball joint moves the tip
/// along the circle about the pivot.
#[test]
fn the_scene_pose_is_the_neutral_configuration() {
    let sc = scene("ten_pendula");
    let sim = ArticulatedSim::from_scene(&sc, ArticulatedParams::default()).unwrap();
    assert_eq!(sim.tree().nq(), 4 + 9);
    assert_eq!(sim.tree().nv(), 3 + 9);
    for (i, b) in sc.bodies.iter().enumerate().skip(1) {
        let pose = sim.body_pose(i);
        assert!((pose.translation.vector - b.position_in_world).amax() < 1e-12);
        assert!(pose.rotation.angle_to(&b.world_from_body_rotation) < 1e-12);
    }
    let tip = sim.grab_point_in_world(0).unwrap();
    assert!((tip.coords - Vector3::new(0.0, 0.0, 0.1)).amax() < 1e-12);
    let tilted = ten_pendula_swing(10.0, ArticulatedParams::default());
    let tip = tilted.grab_point_in_world(0).unwrap().coords;
    let a = 10.0_f64.to_radians();
    // Rotation about +y takes −z towards −x.
    let expected = Vector3::new(0.0, 0.0, 0.6) + Vector3::new(-a.sin(), 0.0, -a.cos()) * 0.5;
    assert!((tip - expected).amax() < 1e-12, "{tip} vs {expected}");
}

/// Acceptance 4 of issue 17: RK45 on a free ten-pendula swing (10°, 10 s) keeps the energy
/// within 1e-6 of the swing's energy (the balance's E_ref: the peak kinetic energy or the
/// range of the potential energy) at every reported step, and reports its step count.
#[test]
fn rk45_keeps_the_energy_of_a_ten_pendula_swing() {
    let mut sim = ten_pendula_swing(10.0, params(0.01, Integrator::Rk45 { tolerance: 1e-9 }));
    let mut worst = 0.0_f64;
    for _ in 0..1000 {
        sim.step().unwrap();
        worst = worst.max(sim.diagnostics().energy_error_rel.abs());
        // The hinges are along y and the tilt is about y: the swing stays in the xz plane.
        assert!(sim.grab_point_in_world(0).unwrap().y.abs() < 1e-9);
    }
    let s = sim.stats();
    println!(
        "RK45 tol 1e-9, 10 s: max |energy drift| / E_ref = {worst:.2e} (E_ref {:.4e} J); \
         {} accepted, {} rejected steps, {} evaluations",
        sim.diagnostics().energy_reference_j,
        s.accepted_steps,
        s.rejected_steps,
        s.evaluations
    );
    assert!(worst < 1e-6, "energy error {worst:e}");
    assert!(s.accepted_steps >= 1000);
}

/// RK4's tip error at 1 s falls ~16× per halving of h (against RK45 at a tight tolerance);
/// semi-implicit Euler's ~2×.
#[test]
fn fixed_step_integrators_converge_at_their_order() {
    let tip_at = |integrator: Integrator, h: f64| {
        let mut sim = ten_pendula_swing(10.0, params(h, integrator));
        let n = (0.5 / h).round() as usize;
        for _ in 0..n {
            sim.step().unwrap();
        }
        sim.grab_point_in_world(0).unwrap().coords
    };
    let reference = tip_at(Integrator::Rk45 { tolerance: 1e-12 }, 0.5);
    let e = |i: Integrator, h: f64| (tip_at(i, h) - reference).norm();
    let (r1, r2) = (e(Integrator::Rk4, 0.005), e(Integrator::Rk4, 0.0025));
    let (e1, e2) = (
        e(Integrator::SemiImplicitEuler, 0.002),
        e(Integrator::SemiImplicitEuler, 0.001),
    );
    println!("RK4 {r1:.3e} → {r2:.3e}; Euler {e1:.3e} → {e2:.3e}");
    let rk4_order = (r1 / r2).log2();
    let euler_order = (e1 / e2).log2();
    assert!(rk4_order > 3.3, "RK4 order {rk4_order}");
    assert!(euler_order > 0.8, "Euler order {euler_order}");
}

/// A torque-free asymmetric body (a free root) keeps its world angular momentum and energy.
#[test]
fn a_free_body_keeps_its_momentum() {
    let mut body = Body::new(
        "b",
        2.0,
        Vector3::new(1.0, 2.0, 3.0),
        UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3),
        Isometry3::translation(0.1, 0.2, 0.3),
        None,
    );
    body.linear_velocity_in_world = Vector3::new(0.3, -0.1, 0.2);
    body.angular_velocity_in_world = Vector3::new(0.05, 2.0, 0.1);
    let model = Model::new(
        vec![Body::ground(), body],
        vec![],
        vec![],
        vec![],
        Vector3::zeros(),
    )
    .unwrap();
    let mut sim =
        ArticulatedSim::new(&model, params(0.01, Integrator::Rk45 { tolerance: 1e-10 })).unwrap();
    let momentum = |sim: &ArticulatedSim| {
        let pose = sim.body_pose(1);
        let (v, w) = sim.body_velocity(1);
        let r = pose.rotation.to_rotation_matrix().into_inner()
            * model.bodies[1]
                .body_from_principal
                .to_rotation_matrix()
                .into_inner();
        let i_world = r * Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 3.0)) * r.transpose();
        (
            v * 2.0,
            i_world * w + pose.translation.vector.cross(&(v * 2.0)),
        )
    };
    let (p0, l0) = momentum(&sim);
    assert!((p0 - Vector3::new(0.6, -0.2, 0.4)).amax() < 1e-12);
    for _ in 0..500 {
        sim.step().unwrap();
    }
    let (p1, l1) = momentum(&sim);
    assert!((p1 - p0).amax() < 1e-9, "{p0} → {p1}");
    assert!((l1 - l0).amax() < 1e-7 * l0.norm(), "{l0} → {l1}");
    assert!(sim.diagnostics().energy_error_rel.abs() < 1e-7);
}

/// Same inputs, same bits.
#[test]
fn two_runs_are_bit_identical() {
    let run = || {
        let mut sim = ten_pendula_swing(10.0, params(0.01, Integrator::Rk4));
        for _ in 0..100 {
            sim.step().unwrap();
        }
        sim.q()
            .iter()
            .chain(sim.qd())
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// A non-finite state is an error that names the body and the time, not a "singular joint".
#[test]
fn a_non_finite_state_is_an_error_naming_the_body() {
    let mut sim = ten_pendula_swing(10.0, params(0.01, Integrator::SemiImplicitEuler));
    let mut q = sim.q().to_vec();
    let qd = sim.qd().to_vec();
    q[6] = f64::NAN; // the third hinge's angle: link p4
    sim.set_state(&q, &qd);
    let err = sim.step().unwrap_err().to_string();
    assert!(err.contains("non-finite") && err.contains("`p4`"), "{err}");
    // The state before the step is kept.
    assert!(sim.q()[6].is_nan() && sim.time_secs() == 0.0);
}

/// A body on a hinge about its own vertical axis through the centre of mass (gravity does no
/// work), I = 0.3 kg·m² about it.
fn wheel() -> Model {
    let body = Body::new(
        "wheel",
        2.0,
        Vector3::new(0.1, 0.2, 0.3),
        UnitQuaternion::identity(),
        Isometry3::translation(0.0, 0.0, 0.5),
        None,
    );
    let bodies = vec![Body::ground(), body];
    let hinge = crate::model::joint::Joint::new(
        "axle",
        crate::model::joint::JointKind::Hinge,
        &bodies,
        0,
        1,
        Vector3::new(0.0, 0.0, 0.5),
        Vector3::zeros(),
        Vector3::z(),
        Vector3::z(),
    );
    Model::new(
        bodies,
        vec![hinge],
        vec![],
        vec![],
        Vector3::new(0.0, 0.0, -9.81),
    )
    .unwrap()
}

/// A sinusoidal actuator spins the wheel as the closed form says,
/// ω(t) = A/(I 2πf) (cos φ − cos(2πf t + φ)), and its work is the external work.
#[test]
fn a_joint_actuator_drives_as_the_closed_form() {
    use super::joint_forces::JointActuator;
    let mut sim = ArticulatedSim::new(
        &wheel(),
        params(0.01, Integrator::Rk45 { tolerance: 1e-11 }),
    )
    .unwrap();
    let (a, f, phi) = (0.6, 1.5, 0.4);
    let actuator = JointActuator {
        amplitude: a,
        frequency_hz: f,
        phase_rad: phi,
    };
    sim.add_joint_actuator("axle", actuator).unwrap();
    for _ in 0..123 {
        sim.step().unwrap();
    }
    let t = sim.time_secs();
    let w = std::f64::consts::TAU * f;
    let expected = a / (0.3 * w) * (phi.cos() - (w * t + phi).cos());
    let got = sim.body_velocity(1).1.z;
    let d = sim.diagnostics();
    println!("actuated wheel at {t} s: ω {got:.12} vs {expected:.12}");
    assert!(
        (got - expected).abs() < 1e-9 * expected.abs().max(1.0),
        "{got} vs {expected}"
    );
    assert!((d.external_work_j - d.kinetic_j).abs() < 1e-9, "{d:?}");
    // An unknown joint is refused.
    assert!(sim.add_joint_actuator("nope", actuator).is_err());
}

/// The exponential limits stop a spinning wheel and send it back at either end (3 s swing
/// between them); the energy balance
/// (limit energy elastic, its damping dissipated) closes.
#[test]
fn a_joint_limit_stops_the_wheel_and_books_its_energy() {
    use super::joint_forces::JointLimit;
    let mut model = wheel();
    model.bodies[1].angular_velocity_in_world = Vector3::new(0.0, 0.0, 2.0);
    let mut sim =
        ArticulatedSim::new(&model, params(0.01, Integrator::Rk45 { tolerance: 1e-11 })).unwrap();
    let limit = JointLimit {
        lower: -0.5,
        upper: 0.5,
        stiffness: 0.05,
        sharpness: 40.0,
        damping: 0.01,
    };
    sim.set_joint_limit("axle", limit).unwrap();
    let (mut max_angle, mut min_rate): (f64, f64) = (0.0, 0.0);
    for _ in 0..300 {
        sim.step().unwrap();
        max_angle = max_angle.max(sim.q()[0]);
        min_rate = min_rate.min(sim.qd()[0]);
    }
    let d = sim.diagnostics();
    println!(
        "limited wheel: max angle {max_angle:.4} rad, ω {:.4} rad/s, dissipated {:.4e} J, balance {:.2e}",
        sim.qd()[0],
        d.dissipated_j,
        d.energy_error_rel
    );
    assert!(
        max_angle > 0.5 && max_angle < 0.7,
        "stopped just past the limit"
    );
    assert!(min_rate < -1.5, "and sent back");
    assert!(d.dissipated_j > 0.0);
    assert!(d.energy_error_rel.abs() < 1e-8, "{d:?}");
    assert!(limit.validate().is_ok());
    assert!(JointLimit {
        lower: 1.0,
        ..limit
    }
    .validate()
    .is_err());
}
