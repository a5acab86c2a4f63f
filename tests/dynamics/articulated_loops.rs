//! Acceptance 3 of issue 17: kinematic loops in the articulated method.
//!
//! 1. The cross lift (pushed down, then released), the steam engine (Fig. 5) and the toy
//!    steam engine (Fig. 6, 15 loop rows) run 60 s with the loops closed: max loop ‖ψ‖.
//! 2. The driven steam engine's energy balance: the drive's work equals the change of kinetic
//!    and potential energy plus the dashpot's dissipation. Energies, drive power and
//!    dissipation are computed here from the bodies' poses and velocities and the scene's
//!    numbers (not from the method's ledger) and integrated by the trapezoidal rule.
//! 3. The parallelogram four-bar's period against the closed form of a physical pendulum at
//!    its amplitude, T = 4 √(I/(m g l)) K(sin(θ₀/2)), K by the arithmetic-geometric mean.
//!
//! `cargo test -p ar-dynamics --release --test dynamics articulated_loops:: -- --nocapture` prints the figures.

use std::f64::consts::{PI, TAU};
use std::path::Path;

use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator};
use ar_dynamics::Scene;
use nalgebra::{Matrix3, Point3, Vector3};

fn scene(name: &str) -> Scene {
    Scene::load(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join(format!("assets/scenes/{name}.toml")),
    )
    .expect("scene")
}

fn sim(scene: &Scene, dt_secs: f64, integrator: Integrator) -> ArticulatedSim {
    ArticulatedSim::from_scene(
        scene,
        ArticulatedParams {
            dt_secs,
            integrator,
        },
    )
    .expect("articulated sim")
}

fn body(scene: &Scene, name: &str) -> usize {
    scene.bodies.iter().position(|b| b.name == name).unwrap()
}

/// Runs `seconds` and returns the largest loop ‖ψ‖ (m) seen, at the start included.
fn max_psi(
    sim: &mut ArticulatedSim,
    seconds: f64,
    mut push: impl FnMut(&mut ArticulatedSim),
) -> f64 {
    let mut worst = sim.diagnostics().constraint_norm_m;
    let steps = (seconds / sim.dt_secs()).round() as usize;
    for _ in 0..steps {
        push(sim);
        sim.step().expect("step");
        worst = worst.max(sim.diagnostics().constraint_norm_m);
    }
    worst
}

#[test]
fn cross_lift_loops_stay_closed_for_60_s() {
    let scene = scene("cross_lift");
    let mut s = sim(&scene, 0.01, Integrator::Rk4);
    assert!(!s.loops().is_empty());
    let plate = body(&scene, "plate");
    let z0 = s.body_pose(plate).translation.z;
    let mut lowest = z0;
    let psi = max_psi(&mut s, 60.0, |s| {
        // Push the plate down for 0.2 s, then let the springs lift it back.
        if s.time_secs() < 0.2 {
            let at = Point3::from(s.body_pose(plate).translation.vector);
            s.apply_external_force(plate, Vector3::new(0.0, 0.0, -10.0), at);
        }
        lowest = lowest.min(s.body_pose(plate).translation.z);
    });
    println!(
        "cross lift: {} loop rows, plate down {:.2} mm, max loop |psi| {psi:.2e} m over 60 s",
        s.loops().rows(),
        1e3 * (z0 - lowest)
    );
    assert!(z0 - lowest > 5e-3, "the push moved the lift");
    // The scissor's loops are linear in its hinge angles: RK4 keeps them to rounding.
    assert!(psi < 1e-13, "loop |psi| {psi:e}");
}

#[test]
fn steam_engines_keep_their_loops_closed_for_60_s() {
    for (name, rows) in [("steam_engine", 5), ("toy_steam_engine", 15)] {
        let scene = scene(name);
        let mut s = sim(&scene, 0.01, Integrator::Rk4);
        assert_eq!(s.loops().rows(), rows, "{name}");
        let psi = max_psi(&mut s, 60.0, |_| {});
        let (_, w) = s.body_velocity(body(&scene, "flywheel"));
        println!(
            "{name}: {rows} loop rows, max loop |psi| {psi:.2e} m over 60 s, flywheel at {:.2} Hz",
            w.y / TAU
        );
        assert!(w.y.abs() > 1.0, "{name}: the flywheel keeps turning");
        assert!(psi < 1e-6, "{name}: loop |psi| {psi:e}");
    }
}

/// Kinetic and potential energy of the scene's moving bodies at the method's current state.
fn energy(scene: &Scene, s: &ArticulatedSim) -> f64 {
    let mut e = 0.0;
    for (i, b) in scene.bodies.iter().enumerate() {
        if !b.is_dynamic() {
            continue;
        }
        let pose = s.body_pose(i);
        let (v, w) = s.body_velocity(i);
        let r = pose.rotation.to_rotation_matrix().into_inner()
            * b.body_from_principal.to_rotation_matrix().into_inner();
        let inertia = r * Matrix3::from_diagonal(&b.principal_inertia_kg_m2) * r.transpose();
        e += 0.5 * b.mass_kg * v.norm_squared() + 0.5 * w.dot(&(inertia * w))
            - b.mass_kg * scene.gravity_in_world.dot(&pose.translation.vector);
    }
    e
}

#[test]
fn driven_steam_engine_energy_balance_closes() {
    let scene = scene("steam_engine");
    let piston = body(&scene, "piston");
    let drive = scene
        .forces
        .iter()
        .find(|f| f.name == "steam")
        .unwrap()
        .clone();
    let dashpot = scene
        .springs
        .iter()
        .find(|s| s.name == "dashpot")
        .unwrap()
        .clone();
    let ground_point = dashpot.point1_in_body1;
    let h = 0.002;
    let mut s = sim(&scene, h, Integrator::Rk4);
    // Drive power F(t)·v and dashpot power c (u·v)² at the current state (the drive acts at the
    // piston's centre of mass, the dashpot at the piston point given in the scene, which is
    // its centre of mass: the piston does not turn).
    let powers = |s: &ArticulatedSim| {
        let t = s.time_secs();
        let (v, _) = s.body_velocity(piston);
        let force = drive.vector * (TAU * drive.frequency_hz * t + drive.phase_rad).sin();
        let x = s.body_pose(piston).translation.vector;
        let u = (x - ground_point).normalize();
        (force.dot(&v), dashpot.damping_n_s_per_m * u.dot(&v).powi(2))
    };
    let e0 = energy(&scene, &s);
    let (mut p_drive, mut p_diss) = powers(&s);
    let (mut w_drive, mut w_diss) = (0.0, 0.0);
    let steps = (60.0 / h).round() as usize;
    for _ in 0..steps {
        s.step().unwrap();
        let (pd, pl) = powers(&s);
        w_drive += 0.5 * h * (p_drive + pd);
        w_diss += 0.5 * h * (p_diss + pl);
        (p_drive, p_diss) = (pd, pl);
    }
    let de = energy(&scene, &s) - e0;
    let imbalance = w_drive - (de + w_diss);
    let rel = imbalance / w_drive;
    println!(
        "steam engine, 60 s: drive work {w_drive:.4} J = ΔE {de:.4} J + dissipation {w_diss:.4} J \
         + {imbalance:.2e} J ({:.2e} %); method's ledger: drift {:.2e} J",
        100.0 * rel,
        s.diagnostics().energy_drift_j
    );
    assert!(w_drive > 10.0, "the drive does work");
    assert!(
        rel.abs() < 1e-6,
        "energy balance off by {:.3e} %",
        100.0 * rel
    );
}

/// The complete elliptic integral of the first kind K(k) by the arithmetic-geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0_f64, (1.0 - k * k).sqrt());
    while (a - b).abs() > 1e-16 * a {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    PI / (2.0 * a)
}

#[test]
fn parallelogram_four_bar_period_matches_the_closed_form() {
    let scene = scene("four_bar");
    let g = scene.gravity_in_world.norm();
    let joint = |name: &str| scene.joints.iter().find(|j| j.name == name).unwrap();
    let anchor = |name: &str| {
        let j = joint(name);
        scene.bodies[j.body1]
            .point_in_world(&j.anchor1_in_body1)
            .coords
    };
    // Physical pendulum: both cranks about their pivots, the coupler as a point mass at L.
    let (mut inertia, mut mgl) = (0.0, 0.0);
    let mut amplitude = 0.0;
    for (crank, pivot, end) in [
        ("crank_left", "pivot_left", "coupler_left"),
        ("crank_right", "pivot_right", "coupler_right"),
    ] {
        let b = &scene.bodies[body(&scene, crank)];
        let r = b.world_from_body_rotation.to_rotation_matrix().into_inner()
            * b.body_from_principal.to_rotation_matrix().into_inner();
        let i_com = r * Matrix3::from_diagonal(&b.principal_inertia_kg_m2) * r.transpose();
        let arm = (b.position_in_world - anchor(pivot)).norm();
        inertia += i_com[(1, 1)] + b.mass_kg * arm * arm;
        mgl += b.mass_kg * g * arm;
        let d = anchor(end) - anchor(pivot);
        amplitude = d.x.atan2(-d.z);
    }
    let length = (anchor("coupler_left") - anchor("pivot_left")).norm();
    let coupler = &scene.bodies[body(&scene, "coupler")];
    inertia += coupler.mass_kg * length * length;
    mgl += coupler.mass_kg * g * length;
    let closed_form = 4.0 * (inertia / mgl).sqrt() * elliptic_k((0.5 * amplitude).sin());

    let mut s = sim(&scene, 1e-3, Integrator::Rk45 { tolerance: 1e-11 });
    let id = body(&scene, "coupler");
    let x_mid = 0.5 * (anchor("pivot_left").x + anchor("pivot_right").x);
    let offset = |s: &ArticulatedSim| s.body_pose(id).translation.x - x_mid;
    let mut crossings = Vec::new();
    let mut prev = offset(&s);
    while s.time_secs() < 12.0 {
        s.step().unwrap();
        let now = offset(&s);
        if prev * now < 0.0 {
            // Linear interpolation: near a crossing the motion is nearly uniform.
            let t = s.time_secs();
            crossings.push(t - s.dt_secs() * now / (now - prev));
        }
        prev = now;
    }
    let n = crossings.len();
    let simulated = 2.0 * (crossings[n - 1] - crossings[0]) / (n - 1) as f64;
    let err = (simulated - closed_form) / closed_form;
    println!(
        "four-bar at {:.1}°: period {simulated:.6} s simulated, {closed_form:.6} s closed form \
         ({:+.2e} %), max loop |psi| {:.1e} m",
        amplitude.to_degrees(),
        100.0 * err,
        s.diagnostics().constraint_norm_m
    );
    assert!(n > 20, "{n} zero crossings");
    assert!(err.abs() < 1e-8, "period error {:.3e} %", 100.0 * err);
}
