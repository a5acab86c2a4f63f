//! Acceptance 1 of issue 17: the two methods agree on the same scene.
//!
//! 1. Ten pendula released at rest from a 10° swing (the whole chain tilted about the pivot,
//!    about the hinge axis), 2 s: the articulated method with RK45 at a tight tolerance
//!    against the default method at h = 4, 2, 1 and 0.5 ms. The largest tip distance between
//!    the two over the run must shrink at the default method's order (second) and be below
//!    1e-4 m at 0.5 ms.
//! 2. The chain's lowest normal mode: its frequency from the linearisation of the articulated
//!    dynamics about the hanging equilibrium (−∂q̈/∂q by finite differences of the ABA, whose
//!    eigenvalues are ω²), and the periods both methods simulate when released in that mode's
//!    shape at a small amplitude, must agree within 0.5 %.
//!
//! `cargo test -p ar-dynamics --release --test dynamics articulated_vs_default:: -- --nocapture` prints the figures.

use std::path::Path;

use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator, Workspace};
use ar_dynamics::{Scene, Simulation, SolverParams};
use nalgebra::{DMatrix, Isometry3, Point3, Vector3};

fn ten_pendula() -> Scene {
    Scene::load(
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("assets/scenes/ten_pendula.toml"),
    )
    .expect("scene")
}

/// The scene with every body moved as the articulated state `q` places it (the joints of the
/// scene stay valid: they are stored in the body frames, and hinge axes along y stay along y
/// for planar states).
fn scene_at(q: &[f64]) -> Scene {
    let mut scene = ten_pendula();
    let mut art = ArticulatedSim::from_scene(&scene, ArticulatedParams::default()).unwrap();
    let qd = vec![0.0; art.qd().len()];
    art.set_state(q, &qd);
    for (i, b) in scene.bodies.iter_mut().enumerate().skip(1) {
        let pose: Isometry3<f64> = art.body_pose(i);
        b.position_in_world = pose.translation.vector;
        b.world_from_body_rotation = pose.rotation;
    }
    scene
}

/// q of a planar configuration: the ball joint tilted by `angles[0]` about y, hinge k by
/// `angles[k]`.
fn planar_q(angles: &[f64]) -> Vec<f64> {
    let h = 0.5 * angles[0];
    let mut q = vec![h.cos(), 0.0, h.sin(), 0.0];
    q.extend_from_slice(&angles[1..]);
    q
}

fn articulated(scene: &Scene, dt: f64, tolerance: f64) -> ArticulatedSim {
    ArticulatedSim::from_scene(
        scene,
        ArticulatedParams {
            dt_secs: dt,
            integrator: Integrator::Rk45 { tolerance },
        },
    )
    .unwrap()
}

fn default_method(scene: &Scene, h: f64) -> Simulation {
    scene
        .build_with(SolverParams {
            dt_secs: h,
            ..scene.params
        })
        .unwrap()
}

fn tip(p: Point3<f64>) -> Vector3<f64> {
    p.coords
}

#[test]
fn the_methods_agree_on_a_ten_degree_swing() {
    let mut angles = [0.0; 10];
    angles[0] = 10.0_f64.to_radians();
    let scene = scene_at(&planar_q(&angles));
    let sample = 0.004;
    let samples = (2.0 / sample) as usize;
    let mut reference = Vec::with_capacity(samples);
    let mut art = articulated(&scene, sample, 1e-11);
    for _ in 0..samples {
        art.step().unwrap();
        reference.push(tip(art.grab_point_in_world(0).unwrap()));
    }
    let hs = [0.004, 0.002, 0.001, 0.0005];
    let mut diffs = vec![];
    for h in hs {
        let mut sim = default_method(&scene, h);
        let per_sample = (sample / h).round() as usize;
        let mut worst = 0.0_f64;
        for r in &reference {
            for _ in 0..per_sample {
                sim.step().unwrap();
            }
            worst = worst.max((tip(sim.grab_point_in_world(0).unwrap()) - r).norm());
        }
        diffs.push(worst);
    }
    println!("10° swing, 2 s: max tip distance, default method vs articulated RK45 (tol 1e-11)");
    for (i, (h, d)) in hs.iter().zip(&diffs).enumerate() {
        let order = if i == 0 {
            String::new()
        } else {
            format!("  local order {:.2}", (diffs[i - 1] / d).log2())
        };
        println!("  h = {:>4} ms: {d:.3e} m{order}", h * 1e3);
    }
    let overall = (diffs[0] / diffs[3]).log2() / 3.0;
    println!("  mean order {overall:.2}");
    assert!(overall > 1.7, "order {overall}");
    assert!(diffs[3] < 1e-4, "at 0.5 ms: {:e} m", diffs[3]);
}

/// Eigenvalues ω² of −∂q̈/∂q about the hanging equilibrium in the plane of the hinges:
/// the ball joint's rotation about y and the nine hinge angles.
fn planar_mode_frequencies() -> (Vec<f64>, DMatrix<f64>) {
    let scene = ten_pendula();
    let art = ArticulatedSim::from_scene(&scene, ArticulatedParams::default()).unwrap();
    let tree = art.tree().clone();
    let mut ws = Workspace::new(&tree);
    let nv = tree.nv();
    let qd = vec![0.0; nv];
    let tau = vec![0.0; nv];
    // Planar accelerations: the ball joint's about y is its velocity index 1.
    let planar_qdd = |angles: &[f64], ws: &mut Workspace| {
        ws.kinematics(&tree, &planar_q(angles), &qd);
        let mut qdd = vec![0.0; nv];
        ws.accelerations(&tree, &tau, &[], &mut qdd).unwrap();
        let mut out = vec![qdd[1]];
        out.extend_from_slice(&qdd[3..]);
        out
    };
    let eps = 1e-6;
    let mut a = DMatrix::zeros(10, 10);
    for j in 0..10 {
        let mut plus = [0.0; 10];
        let mut minus = [0.0; 10];
        plus[j] = eps;
        minus[j] = -eps;
        let (ap, am) = (planar_qdd(&plus, &mut ws), planar_qdd(&minus, &mut ws));
        for i in 0..10 {
            a[(i, j)] = -(ap[i] - am[i]) / (2.0 * eps);
        }
    }
    let schur = a.clone().schur();
    let mut w2: Vec<f64> = schur
        .eigenvalues()
        .expect("real eigenvalues")
        .iter()
        .copied()
        .collect();
    w2.sort_by(f64::total_cmp);
    (w2, a)
}

/// Period of the tip's x(t) from its zero crossings (linear interpolation), over the run.
fn period_from_crossings(t: &[f64], x: &[f64]) -> f64 {
    let mut crossings = vec![];
    for k in 1..x.len() {
        if x[k - 1] != 0.0 && x[k - 1].signum() != x[k].signum() {
            let s = x[k - 1] / (x[k - 1] - x[k]);
            crossings.push(t[k - 1] + s * (t[k] - t[k - 1]));
        }
    }
    let n = crossings.len();
    assert!(n >= 5, "only {n} zero crossings");
    2.0 * (crossings[n - 1] - crossings[0]) / (n - 1) as f64
}

#[test]
fn the_lowest_normal_mode_matches() {
    let (w2, a) = planar_mode_frequencies();
    assert!(w2[0] > 0.0);
    let omega = w2[0].sqrt();
    let linear_period = std::f64::consts::TAU / omega;
    // The mode shape: the null vector of A − ω² I (inverse iteration).
    let shift = a.clone() - DMatrix::identity(10, 10) * (w2[0] * (1.0 + 1e-9));
    let lu = shift.lu();
    let mut v = nalgebra::DVector::from_element(10, 1.0);
    for _ in 0..5 {
        v = lu.solve(&v).unwrap();
        v /= v.amax();
    }
    // Relative angles of the mode scaled so that the largest is 0.5°.
    let angles: Vec<f64> = v.iter().map(|x| x * 0.5_f64.to_radians()).collect();
    let scene = scene_at(&planar_q(&angles));
    let h = 0.01;
    let duration = 4.0 * linear_period;
    let steps = (duration / h) as usize;
    let mut art = articulated(&scene, h, 1e-10);
    let mut sim = default_method(&scene, h);
    let (mut t, mut xa, mut xd) = (vec![], vec![], vec![]);
    for n in 1..=steps {
        art.step().unwrap();
        sim.step().unwrap();
        t.push(n as f64 * h);
        xa.push(art.grab_point_in_world(0).unwrap().x);
        xd.push(sim.grab_point_in_world(0).unwrap().x);
    }
    let (ta, td) = (
        period_from_crossings(&t, &xa),
        period_from_crossings(&t, &xd),
    );
    println!(
        "lowest mode: ω = {omega:.6} rad/s, linearised period {linear_period:.6} s; simulated \
         (0.5° amplitude, h = 10 ms): articulated {ta:.6} s, default {td:.6} s \
         (default vs articulated {:+.4} %, vs linearised {:+.4} %)",
        100.0 * (td / ta - 1.0),
        100.0 * (td / linear_period - 1.0)
    );
    assert!((ta / linear_period - 1.0).abs() < 0.005);
    assert!((td / ta - 1.0).abs() < 0.005);
}
