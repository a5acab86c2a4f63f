//! Force elements (`[[force]]`) and initial velocities (`velocity_m_per_s`,
//! `angular_velocity_rad_per_s`): the motion they cause against closed forms written here,
//! not taken from the solver, the energy balance with their work, and the scene errors.

use ar_multibody::sim::{Scene, Simulation, SolverParams};
use nalgebra::Vector3;

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
        sim.step();
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
/// invariants once its iteration converges; with the default tolerance, 1e-5 rad/s, to
/// about 1e-7).
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
        sim.step();
        dl = dl.max((momentum(&sim).norm() - l0.norm()).abs() / l0.norm());
        de = de.max((sim.kinetic_energy_j() - e0).abs() / e0);
    }
    let turned = (sim.bodies()[1].angular_velocity_in_world - w0).norm();
    eprintln!("initial spin: |L| drift ≤ {dl:.2e}, energy drift ≤ {de:.2e}, |Δω| {turned:.2}");
    assert!(turned > 0.1, "the body should tumble: {turned}");
    assert!(dl < 1e-6, "{dl}");
    assert!(de < 1e-6, "{de}");
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
