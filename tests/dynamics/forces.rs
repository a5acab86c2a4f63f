//! Force elements (`[[force]]`) and initial velocities (`velocity_m_per_s`,
//! `angular_velocity_rad_per_s`): the motion they cause against closed forms written here,
//! not taken from the solver, the energy balance with their work, and the scene errors.

use std::f64::consts::TAU;

use ar_dynamics::model::force::{ForceAxes, ForceElement, ForceKind};
use ar_dynamics::{Scene, SimError, Simulation, SolverParams};
use nalgebra::{UnitQuaternion, Vector3};

const G: f64 = 9.81;

fn scene(text: &str) -> Scene {
    Scene::parse(text, "forces.toml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn build(text: &str, dt_secs: Option<f64>) -> Simulation {
    let s = scene(text);
    let params = SolverParams {
        dt_secs: dt_secs.unwrap_or(s.params.dt_secs),
        ..s.params
    };
    s.build_with(params).expect("builds")
}

fn steps_until(sim: &mut Simulation, t_secs: f64) {
    let n = (t_secs / sim.dt_secs()).round() as usize;
    for _ in 0..n {
        sim.step().expect("step");
    }
}

/// One free 0.2 kg body at (0, 0, 1) m without gravity; `body_keys` go into its table (on
/// line 9), `tables` after it.
fn free_body(body_keys: &str, tables: &str) -> String {
    format!(
        r#"
gravity_m_per_s2 = [0.0, 0.0, 0.0]
[[body]]
name = "b"
mass_kg = 0.2
inertia_kg_m2 = [2e-3, 3e-3, 5e-3]
position_m = [0.0, 0.0, 1.0]
shape = {{ kind = "sphere", radius_m = 0.05 }}
{body_keys}
{tables}"#
    )
}

// ----- (a) constant force -----

/// Constant force F on a free body from x0 with v0: x(t) = x0 + v0 t + F t²/(2m),
/// v(t) = v0 + F t / m. The step is exact for a constant force (x' = x + h v + h² F/(2m)), so
/// only rounding remains: measured 1.5e-14 m and 2.5e-15 m/s after 2 s.
#[test]
fn a_constant_world_force_moves_a_free_body_on_the_exact_parabola() {
    let text = free_body(
        "velocity_m_per_s = [0.1, 0.0, -0.2]",
        r#"
[[force]]
name = "push"
body = "b"
force_n = [0.3, -0.2, 0.5]
"#,
    );
    let mut sim = build(&text, None);
    let (m, x0, v0, f) = (
        0.2,
        Vector3::new(0.0, 0.0, 1.0),
        Vector3::new(0.1, 0.0, -0.2),
        Vector3::new(0.3, -0.2, 0.5),
    );
    steps_until(&mut sim, 2.0);
    let t = sim.time_secs();
    let b = &sim.bodies()[1];
    let x_err = (b.position_in_world - (x0 + v0 * t + f * (t * t / (2.0 * m)))).norm();
    let v_err = (b.linear_velocity_in_world - (v0 + f * (t / m))).norm();
    eprintln!("constant force: |x error| {x_err:.2e} m, |v error| {v_err:.2e} m/s after {t} s");
    assert!(x_err < 1e-12, "{x_err}");
    assert!(v_err < 1e-12, "{v_err}");
    assert_eq!(b.angular_velocity_in_world, Vector3::zeros());
    // Its work F·Δx is booked and closes the balance.
    let d = sim.diagnostics();
    let work = f.dot(&(b.position_in_world - x0));
    assert!((d.external_work_j - work).abs() < 1e-12, "{d:?} vs {work}");
    assert!(d.energy_error_rel.abs() < 1e-12, "{d:?}");
}

// ----- (b) sinusoidal force -----

/// Velocity and position errors at t = 0.3 s (not a whole period, where the midpoint rule
/// of a periodic force would be exact by symmetry) against the closed form of
/// m v' = F sin(2π f t): v(t) = v0 − F/(2π f m) (cos(2π f t) − 1),
/// x(t) = x0 + v0 t + F/(2π f m) (t − sin(2π f t)/(2π f)).
fn sinusoid_errors(h: f64) -> (f64, f64) {
    let text = free_body(
        "velocity_m_per_s = [0.0, 0.05, 0.0]",
        r#"
[[force]]
name = "shake"
body = "b"
force_n = [0.5, 0.0, -0.25]
frequency_hz = 1.0
"#,
    );
    let mut sim = build(&text, Some(h));
    steps_until(&mut sim, 0.3);
    let (m, f_hz, amp) = (0.2, 1.0, Vector3::new(0.5, 0.0, -0.25));
    let (x0, v0) = (Vector3::new(0.0, 0.0, 1.0), Vector3::new(0.0, 0.05, 0.0));
    let t = sim.time_secs();
    let w = TAU * f_hz;
    let v = v0 - amp * (((w * t).cos() - 1.0) / (w * m));
    let x = x0 + v0 * t + amp * ((t - (w * t).sin() / w) / (w * m));
    let b = &sim.bodies()[1];
    (
        (b.linear_velocity_in_world - v).norm(),
        (b.position_in_world - x).norm(),
    )
}

/// The element is evaluated at the step's midpoint time: the velocity is the composite
/// midpoint rule of ∫F dt/m, second order (error ≈ h²/24 · F ω (1 − cos ωt)/m = 9.6e-5 m/s at
/// h = 0.01 s). Halving h divides both errors by 4 (measured ratios 4.00).
#[test]
fn a_sinusoidal_force_is_second_order_accurate() {
    let e = [0.01, 0.005, 0.0025].map(sinusoid_errors);
    for (h, (ev, ex)) in [0.01, 0.005, 0.0025].iter().zip(&e) {
        eprintln!("sinusoid h = {h} s: |v error| {ev:.3e} m/s, |x error| {ex:.3e} m");
    }
    // Composite midpoint rule: ∫g − h Σ g(mid) ≈ h²/24 (g′(t) − g′(0)), g = (F/m) sin ωt.
    let (h, f_n, m, w, t) = (
        0.01,
        (0.5_f64.powi(2) + 0.25_f64.powi(2)).sqrt(),
        0.2,
        TAU,
        0.3,
    );
    let predicted = h * h / 24.0 * f_n / m * w * (1.0 - (w * t).cos());
    assert!(
        (e[0].0 - predicted).abs() < 0.05 * predicted,
        "{} vs {predicted}",
        e[0].0
    );
    for k in 0..2 {
        let (rv, rx) = (e[k].0 / e[k + 1].0, e[k].1 / e[k + 1].1);
        eprintln!("error ratio when h halves: v {rv:.3}, x {rx:.3}");
        assert!((rv - 4.0).abs() < 0.1, "velocity error ratio {rv}");
        assert!((rx - 4.0).abs() < 0.2, "position error ratio {rx}");
    }
}

// ----- (c) body-axes torque -----

/// A body spins about its principal z axis (tilted in the world); a constant torque along
/// body z accelerates the spin: ω(t) = (ω0 + τ t / I_z) n with n the body z axis in the world,
/// which stays put (no gyroscopic torque about a principal axis). If the torque did not turn
/// with the body (world axes), it would not be along n and would tip the axis.
#[test]
fn a_body_axes_torque_spins_up_a_body_about_its_principal_axis() {
    let rotation = Vector3::new(0.3, -0.4, 0.5);
    let q = UnitQuaternion::from_scaled_axis(rotation);
    let n = q * Vector3::z();
    let (omega0, tau, i_z) = (1.0, 0.01, 5e-3);
    let w0 = n * omega0;
    let text = free_body(
        &format!(
            "rotation_rad = [{}, {}, {}]\nangular_velocity_rad_per_s = [{:e}, {:e}, {:e}]",
            rotation.x, rotation.y, rotation.z, w0.x, w0.y, w0.z
        ),
        &format!(
            r#"
[[force]]
name = "motor"
body = "b"
torque_n_m = [0.0, 0.0, {tau}]
axes = "body"
"#
        ),
    );
    let mut sim = build(&text, None);
    let q0 = sim.bodies()[1].world_from_body_rotation;
    let mut max_rate_err = 0.0_f64;
    let mut max_axis_err = 0.0_f64;
    for _ in 0..100 {
        sim.step().expect("step");
        let t = sim.time_secs();
        let b = &sim.bodies()[1];
        let expected = n * (omega0 + tau * t / i_z);
        max_rate_err = max_rate_err.max((b.angular_velocity_in_world - expected).norm());
        max_axis_err = max_axis_err.max((b.world_from_body_rotation * Vector3::z() - n).norm());
    }
    let t = sim.time_secs();
    let b = &sim.bodies()[1];
    // The angle turned about n. The Cayley map turns by 2 atan(ω̄h/2) per step instead of
    // ω̄h: a second-order lag of Σ (ω̄h)³/12 ≈ h²/12 ∫ω³ dt = h²/12 · ((1 + 2t)⁴ − 1)/8 rad
    // (ω = 1 + 2t rad/s here) = 8.3e-5 rad after 1 s.
    let turn = b.world_from_body_rotation * q0.inverse();
    let angle = turn.angle() * turn.axis().map_or(1.0, |a| a.dot(&n).signum());
    let expected_angle = omega0 * t + tau * t * t / (2.0 * i_z);
    let angle_err = (angle - expected_angle).abs();
    eprintln!(
        "body torque: |ω error| ≤ {max_rate_err:.2e} rad/s, axis moved ≤ {max_axis_err:.2e}, \
         angle {angle:.9} rad vs {expected_angle:.9} rad ({angle_err:.2e})"
    );
    assert!(max_rate_err < 1e-12, "{max_rate_err}");
    assert!(max_axis_err < 1e-12, "{max_axis_err}");
    let h = sim.dt_secs();
    let lag = h * h / 12.0 * ((1.0 + 2.0 * t).powi(4) - 1.0) / 8.0;
    assert!(
        (expected_angle - angle - lag).abs() < 0.05 * lag,
        "lag {} rad vs {lag} rad",
        expected_angle - angle
    );
    assert!(sim.diagnostics().energy_error_rel.abs() < 1e-11);
}

/// Velocity error after 1 s of a force of 0.1 N along body x at the centre of mass of a body
/// spinning at ω = 2 rad/s about world z (body z): the force turns, F(t) = F (cos ωt, sin ωt, 0),
/// so v(t) = v0 + F/(m ω) (sin ωt, 1 − cos ωt, 0).
fn turning_force_error(h: f64) -> f64 {
    let text = free_body(
        "angular_velocity_rad_per_s = [0.0, 0.0, 2.0]",
        r#"
[[force]]
name = "thruster"
body = "b"
force_n = [0.1, 0.0, 0.0]
axes = "body"
"#,
    );
    let mut sim = build(&text, Some(h));
    steps_until(&mut sim, 1.0);
    let (t, w, m, f) = (sim.time_secs(), 2.0, 0.2, 0.1);
    let v = Vector3::new((w * t).sin(), 1.0 - (w * t).cos(), 0.0) * (f / (m * w));
    (sim.bodies()[1].linear_velocity_in_world - v).norm()
}

/// A vector in body axes is taken at the step's start pose, so on a turning body it lags by
/// half a step's rotation, ωh/2: first order in h (error ratio 2 when h halves; measured
/// 2.00), unlike a world-axes sinusoid. Pinned so that a change of this evaluation is a
/// conscious one.
#[test]
fn a_body_axes_force_on_a_turning_body_is_first_order_accurate() {
    let e = [0.01, 0.005, 0.0025].map(turning_force_error);
    eprintln!(
        "turning body-axes force: |v error| {:.3e}, {:.3e}, {:.3e} m/s at h = 0.01, 0.005, 0.0025 s",
        e[0], e[1], e[2]
    );
    for k in 0..2 {
        let ratio = e[k] / e[k + 1];
        assert!((ratio - 2.0).abs() < 0.1, "error ratio {ratio}");
    }
    // The lag turns the velocity change by ωh/2: |Δv| ωh/2 at h = 0.01 s.
    let dv = 0.1 / (0.2 * 2.0) * (2.0 - 2.0 * 2.0_f64.cos()).sqrt();
    assert!(
        (e[0] - dv * 2.0 * 0.01 / 2.0).abs() < 0.05 * e[0],
        "{}",
        e[0]
    );
}

// ----- (d) energy balance of a driven pendulum -----

/// The ten pendula's first link (0.1 kg, 50 mm, I = [21, 21, 0.5] kg·mm²) on a hinge about y
/// at its top, driven by a sinusoidal torque in body axes near its resonance (2 Hz against
/// 2.7 Hz).
const DRIVEN_PENDULUM: &str = r#"
gravity_m_per_s2 = [0.0, 0.0, -9.81]
[[body]]
name = "p1"
mass_kg = 0.1
inertia_kg_m2 = [21.0e-6, 21.0e-6, 0.5e-6]
position_m = [0.0, 0.0, 0.575]
shape = { kind = "capsule", radius_m = 0.004, length_m = 0.042 }
[[joint]]
name = "pivot"
kind = "hinge"
body1 = "ground"
body2 = "p1"
anchor_in_world_m = [0.0, 0.0, 0.6]
axis_in_world = [0.0, 1.0, 0.0]
[[force]]
name = "drive"
body = "p1"
torque_n_m = [0.0, 5e-3, 0.0]
axes = "body"
frequency_hz = 2.0
phase_rad = 0.3
"#;

/// What a run of the driven pendulum measured (J, rad).
struct DrivenRun {
    max_angle_rad: f64,
    /// Largest |E − E0|: how much energy the drive moved in and out.
    max_energy_change_j: f64,
    /// Largest |E − W − E0|, W summed by the test.
    max_balance_j: f64,
    /// Largest |W(test) − W(solver)|.
    max_work_difference_j: f64,
}

/// Runs the driven pendulum for 5 s with the solver's velocity tolerance `tolerance`; the
/// torque's work W is summed here independently as h τ(t + h/2)·ω̄ per step.
fn driven_pendulum(tolerance: f64) -> DrivenRun {
    let s = scene(DRIVEN_PENDULUM);
    let params = SolverParams {
        velocity_tolerance: tolerance,
        ..s.params
    };
    let mut sim = s.build_with(params).expect("builds");
    let e0 = sim.kinetic_energy_j() + sim.potential_energy_j();
    let h = sim.dt_secs();
    let mut work = 0.0;
    let mut run = DrivenRun {
        max_angle_rad: 0.0,
        max_energy_change_j: 0.0,
        max_balance_j: 0.0,
        max_work_difference_j: 0.0,
    };
    for _ in 0..500 {
        let t_mid = sim.time_secs() + 0.5 * h;
        let w_start = sim.bodies()[1].angular_velocity_in_world;
        sim.step().expect("step");
        let w_end = sim.bodies()[1].angular_velocity_in_world;
        let tau = Vector3::new(0.0, 5e-3 * (TAU * 2.0 * t_mid + 0.3).sin(), 0.0);
        work += h * tau.dot(&(0.5 * (w_start + w_end)));
        let e = sim.kinetic_energy_j() + sim.potential_energy_j();
        run.max_energy_change_j = run.max_energy_change_j.max((e - e0).abs());
        run.max_balance_j = run.max_balance_j.max((e - work - e0).abs());
        run.max_work_difference_j = run
            .max_work_difference_j
            .max((sim.diagnostics().external_work_j - work).abs());
        let r = sim.bodies()[1].world_from_body_rotation * Vector3::z();
        run.max_angle_rad = run.max_angle_rad.max(r.x.atan2(r.z).abs());
    }
    eprintln!(
        "driven pendulum, tolerance {tolerance:e}: amplitude {:.3} rad, |E − E0| ≤ {:.3e} J, \
         |E − W − E0| ≤ {:.3e} J, |W(test) − W(solver)| ≤ {:.3e} J",
        run.max_angle_rad, run.max_energy_change_j, run.max_balance_j, run.max_work_difference_j
    );
    run
}

/// Kinetic + potential − external work stays at its initial value. The torque's work summed
/// by the test equals the solver's external work, and the balance closes to the solver's
/// velocity tolerance: with the default (1e-6 m/s) to 1.5e-6 of the energy the drive moves in
/// and out (measured), with 1e-12 m/s to rounding, 4e-11 (the scheme's work identities are exact).
#[test]
fn a_pendulum_driven_by_a_sinusoidal_torque_keeps_the_energy_balance() {
    let run = driven_pendulum(SolverParams::default().velocity_tolerance);
    assert!(run.max_angle_rad > 0.3, "the drive should swing it");
    assert!(run.max_work_difference_j < 1e-12);
    assert!(run.max_balance_j < 1e-5 * run.max_energy_change_j);
    let tight = driven_pendulum(1e-12);
    assert!(tight.max_work_difference_j < 1e-12);
    assert!(tight.max_balance_j < 1e-9 * tight.max_energy_change_j);
}

// ----- (e) initial velocities -----

/// A body launched with v0 under gravity follows x0 + v0 t + g t²/2 (exact for the scheme),
/// and its initial kinetic energy counts as initial energy: the balance is closed from the
/// first step.
#[test]
fn a_body_launched_with_an_initial_velocity_follows_the_parabola() {
    let text = free_body("velocity_m_per_s = [0.3, -0.1, 2.0]", "")
        .replace("[0.0, 0.0, 0.0]", "[0.0, 0.0, -9.81]");
    let mut sim = build(&text, None);
    let v0 = Vector3::new(0.3, -0.1, 2.0);
    let ke0: f64 = 0.5 * 0.2 * v0.norm_squared();
    assert!((sim.diagnostics().kinetic_j - ke0).abs() < 1e-15);
    for _ in 0..100 {
        sim.step().expect("step");
        assert!(
            sim.diagnostics().energy_error_rel.abs() < 1e-10,
            "{:?}",
            sim.diagnostics()
        );
    }
    let t = sim.time_secs();
    let expected =
        Vector3::new(0.0, 0.0, 1.0) + v0 * t + Vector3::new(0.0, 0.0, -G) * (t * t / 2.0);
    let err = (sim.bodies()[1].position_in_world - expected).norm();
    eprintln!("launch: |x error| {err:.2e} m after {t} s");
    assert!(err < 1e-12, "{err}");
}

/// A free body given an initial spin off its principal axes tumbles with constant |Iω| and
/// kinetic energy (Euler's equations; the implicit midpoint rule keeps both quadratic
/// invariants once its iteration converges; with the default tolerance, 1e-5 rad/s, they
/// drift by 1e-8 (|L|) and 4e-8 (energy) over 3 s, measured).
#[test]
fn an_initial_spin_keeps_the_angular_momentum() {
    let text = free_body(
        "rotation_rad = [0.2, 0.1, -0.3]\nangular_velocity_rad_per_s = [1.0, -2.0, 3.0]",
        "",
    );
    let mut sim = build(&text, None);
    let momentum = |sim: &Simulation| {
        let b = &sim.bodies()[1];
        let r = b.world_from_body_rotation * b.body_from_principal;
        let w = r.inverse_transform_vector(&b.angular_velocity_in_world);
        r * b.principal_inertia_kg_m2.component_mul(&w)
    };
    let w0 = Vector3::new(1.0, -2.0, 3.0);
    assert_eq!(sim.bodies()[1].angular_velocity_in_world, w0);
    let l0 = momentum(&sim);
    let e0 = sim.kinetic_energy_j();
    let (mut dl, mut de) = (0.0_f64, 0.0_f64);
    for _ in 0..300 {
        sim.step().expect("step");
        dl = dl.max((momentum(&sim).norm() - l0.norm()).abs() / l0.norm());
        de = de.max((sim.kinetic_energy_j() - e0).abs() / e0);
    }
    let turned = (sim.bodies()[1].angular_velocity_in_world - w0).norm();
    eprintln!("initial spin: |L| drift ≤ {dl:.2e}, energy drift ≤ {de:.2e}, |Δω| {turned:.2}");
    assert!(turned > 0.1, "the body should tumble: {turned}");
    assert!(dl < 1e-6, "{dl}");
    assert!(de < 1e-6, "{de}");
}

// ----- the simulation's checks -----

#[test]
fn add_force_element_rejects_bad_bodies_and_numbers() {
    let mut sim = build(&free_body("", ""), None);
    let element = |body| ForceElement {
        name: "f".to_owned(),
        body,
        kind: ForceKind::Torque,
        axes: ForceAxes::World,
        vector: Vector3::x(),
        frequency_hz: 0.0,
        phase_rad: 0.0,
    };
    assert!(matches!(
        sim.add_force_element(element(7)),
        Err(SimError::UnknownBodyIndex { index: 7, .. })
    ));
    assert!(matches!(
        sim.add_force_element(element(0)),
        Err(SimError::BadForceElement { .. })
    ));
    let mut bad = element(1);
    bad.frequency_hz = -2.0;
    assert!(sim.add_force_element(bad).is_err());
    assert!(sim.force_elements().is_empty());
    sim.add_force_element(element(1)).expect("valid");
    assert_eq!(sim.force_elements().len(), 1);
}

// ----- (f) scene errors -----

fn scene_error(text: &str) -> String {
    match Scene::parse(text, "bad.toml") {
        Ok(_) => panic!("scene should be rejected:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that `text` is rejected at `line` (1-based) naming `field`.
fn assert_rejected(text: &str, line: usize, field: &str) {
    let e = scene_error(text);
    assert!(
        e.starts_with(&format!("bad.toml:{line}:")) && e.contains(&format!("`{field}`")),
        "expected line {line} and field {field}: {e}"
    );
}

/// `free_body("", …)` leaves line 9 empty: the force table starts on line 10.
fn with_force(keys: &str) -> String {
    free_body("", &format!("[[force]]\n{keys}"))
}

#[test]
fn bad_initial_velocities_are_reported_with_line_and_field() {
    assert_rejected(
        &free_body("velocity_m_per_s = [0.0, nan, 0.0]", ""),
        9,
        "body[0].velocity_m_per_s",
    );
    assert_rejected(
        &free_body(
            "velocity_m_per_s = [0.0, 1.0, 0.0]\nangular_velocity_rad_per_s = [inf, 0.0, 0.0]",
            "",
        ),
        10,
        "body[0].angular_velocity_rad_per_s",
    );
}

#[test]
fn bad_force_tables_are_reported_with_line_and_field() {
    let ok = "name = \"f\"\nbody = \"b\"\nforce_n = [1.0, 0.0, 0.0]\n";
    assert!(Scene::parse(&with_force(ok), "ok.toml").is_ok());
    // Line 10 is `[[force]]`, then name (11), body (12), force_n (13), then the next key (14).
    assert_rejected(
        &with_force(&ok.replace("\"b\"", "\"c\"")),
        12,
        "force[0].body",
    );
    assert_rejected(
        &with_force(&ok.replace("\"b\"", "\"ground\"")),
        12,
        "force[0].body",
    );
    assert_rejected(
        &with_force(&ok.replace("1.0, 0.0", "1.0, nan")),
        13,
        "force[0].force_n",
    );
    assert_rejected(
        &with_force(&format!("{ok}frequency_hz = -1.0\n")),
        14,
        "force[0].frequency_hz",
    );
    assert_rejected(
        &with_force(&format!("{ok}frequency_hz = inf\n")),
        14,
        "force[0].frequency_hz",
    );
    assert_rejected(
        &with_force(&format!("{ok}frequency_hz = 1.0\nphase_rad = nan\n")),
        15,
        "force[0].phase_rad",
    );
    assert_rejected(
        &with_force(&format!("{ok}phase_rad = 0.5\n")),
        14,
        "force[0].phase_rad",
    );
    assert_rejected(
        &with_force(&format!("{ok}point_in_body_m = [0.0, inf, 0.0]\n")),
        14,
        "force[0].point_in_body_m",
    );
    let torque = ok.replace("force_n", "torque_n_m");
    assert!(Scene::parse(&with_force(&torque), "ok.toml").is_ok());
    assert_rejected(
        &with_force(&format!("{torque}point_in_body_m = [0.1, 0.0, 0.0]\n")),
        14,
        "force[0].point_in_body_m",
    );
    assert_rejected(
        &with_force(&format!("{ok}torque_n_m = [0.0, 0.0, 1.0]\n")),
        14,
        "force[0].torque_n_m",
    );
    assert_rejected(
        &with_force("name = \"f\"\nbody = \"b\"\n"),
        11,
        "force[0].force_n",
    );
    // A second table with the same name (`[[force]]` on line 14, its name on 15).
    assert_rejected(
        &with_force(&format!("{ok}[[force]]\n{ok}")),
        15,
        "force[1].name",
    );
    // Misspelt keys and values come from the TOML parser, with their line.
    let e = scene_error(&with_force(&format!("{ok}axes = \"bodyy\"\n")));
    assert!(e.contains("line 14") && e.contains("bodyy"), "{e}");
    let e = scene_error(&with_force(&format!("{ok}frequency = 1.0\n")));
    assert!(e.contains("line 14") && e.contains("frequency"), "{e}");
}
