//! Deformable bodies (`[[deformable]]`, issue 18): the settled shapes against static
//! equilibria that this file computes with its own assembly and Newton iteration (not the
//! solver's), fracture of a connection, and the scene errors.

use ar_dynamics::{Scene, Simulation};

use crate::settle;
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use settle::settle;

const G: f64 = 9.81;

fn build(text: &str) -> Simulation {
    Scene::parse(text, "deformable.toml")
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .build()
        .expect("builds")
}

/// A linear spring between two nodes for the reference.
struct Bar {
    a: usize,
    b: usize,
    rest_m: f64,
    k: f64,
}

/// Net force on every node (N): springs plus weight.
fn forces(x: &[Vector3<f64>], bars: &[Bar], mass_kg: f64) -> Vec<Vector3<f64>> {
    let mut f = vec![Vector3::new(0.0, 0.0, -mass_kg * G); x.len()];
    for bar in bars {
        let d = x[bar.b] - x[bar.a];
        let l = d.norm();
        let t = bar.k * (l - bar.rest_m) * d / l;
        f[bar.a] += t;
        f[bar.b] -= t;
    }
    f
}

/// The tangent stiffness K = −∂f/∂x over the free nodes (`index[n]` their block or None).
fn stiffness(x: &[Vector3<f64>], bars: &[Bar], index: &[Option<usize>], n: usize) -> DMatrix<f64> {
    let mut k = DMatrix::zeros(3 * n, 3 * n);
    for bar in bars {
        let d = x[bar.b] - x[bar.a];
        let l = d.norm();
        let u = d / l;
        // ∂(force on a)/∂x_b for f_a = k (l − l₀) u.
        let kab = (Matrix3::identity() * (1.0 - bar.rest_m / l)
            + u * u.transpose() * (bar.rest_m / l))
            * bar.k;
        for (p, q, sign) in [
            (bar.a, bar.a, 1.0),
            (bar.b, bar.b, 1.0),
            (bar.a, bar.b, -1.0),
            (bar.b, bar.a, -1.0),
        ] {
            if let (Some(i), Some(j)) = (index[p], index[q]) {
                let mut blk = k.fixed_view_mut::<3, 3>(3 * i, 3 * j);
                blk += kab * sign;
            }
        }
    }
    k
}

/// Newton's iteration on the free nodal positions for Σ f = 0; returns the positions and
/// the final largest force residual (N).
fn static_equilibrium(
    mut x: Vec<Vector3<f64>>,
    bars: &[Bar],
    pinned: &[usize],
    mass_kg: f64,
) -> (Vec<Vector3<f64>>, f64) {
    let mut index = vec![None; x.len()];
    let mut n = 0;
    for (i, slot) in index.iter_mut().enumerate() {
        if !pinned.contains(&i) {
            *slot = Some(n);
            n += 1;
        }
    }
    let residual = |x: &[Vector3<f64>]| {
        let f = forces(x, bars, mass_kg);
        let mut r = DVector::zeros(3 * n);
        for (i, slot) in index.iter().enumerate() {
            if let Some(j) = slot {
                r.fixed_rows_mut::<3>(3 * j).copy_from(&f[i]);
            }
        }
        r
    };
    for _ in 0..100 {
        let r = residual(&x);
        if r.amax() < 1e-11 {
            break;
        }
        let dx = stiffness(&x, bars, &index, n)
            .lu()
            .solve(&r)
            .expect("the reference stiffness is regular");
        // Damped: never move a node by more than 1 cm in one iteration.
        let scale = (0.01 / dx.amax()).min(1.0);
        for (i, slot) in index.iter().enumerate() {
            if let Some(j) = slot {
                x[i] += dx.fixed_rows::<3>(3 * j) * scale;
            }
        }
    }
    let r = residual(&x).amax();
    (x, r)
}

fn max_speed(sim: &Simulation) -> f64 {
    sim.bodies()
        .iter()
        .map(|b| b.linear_velocity_in_world.norm())
        .fold(0.0, f64::max)
}

/// Acceptance 2 of issue 18: a hanging rope of 100 elements, released from a V between
/// its pinned ends, settles (element drag) to the static equilibrium of the same
/// mass-spring chain, the extensible discrete catenary, within 1e-4 m per element. The
/// reference is that chain (100 nodes of M/100, 99 springs of rest length L/99) solved here
/// by Newton's method from a parabola, not the solver's state.
#[test]
fn a_hanging_rope_of_100_elements_settles_to_its_discrete_catenary() {
    let (n, mass, length, k, span) = (100, 0.1, 1.0, 500.0, 0.8);
    let mut sim = build(&format!(
        r#"
[[deformable]]
name = "rope"
kind = "rope"
mass_kg = {mass}
element_radius_m = 0.004
stiffness_n_per_m = {k}
damping_n_s_per_m = 0.01
drag_n_s_per_m = 0.008
end1_m = [0.0, 0.0, 1.0]
end2_m = [{span}, 0.0, 1.0]
elements = {n}
length_m = {length}
pin1 = "ground"
pin2 = "ground"
"#
    ));
    assert_eq!(sim.bodies().len(), n + 1);
    assert_eq!(sim.springs().len(), n - 1);
    // Settled: no element moves by more than 1e-6 m in the last second.
    let moved_m = settle(&mut sim, 1400);
    let speed = max_speed(&sim);

    // The reference chain from a parabola z = 1 − a s (D − s) whose springs are all taut.
    let m = mass / n as f64;
    let bars: Vec<Bar> = (0..n - 1)
        .map(|i| Bar {
            a: i,
            b: i + 1,
            rest_m: length / (n - 1) as f64,
            k,
        })
        .collect();
    let start: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            let s = span * i as f64 / (n - 1) as f64;
            Vector3::new(s, 0.0, 1.0 - 3.0 * s * (span - s))
        })
        .collect();
    let (reference, residual_n) = static_equilibrium(start, &bars, &[0, n - 1], m);
    let error_m = (0..n)
        .map(|i| (sim.bodies()[i + 1].position_in_world - reference[i]).norm())
        .fold(0.0, f64::max);
    let sag_m = 1.0 - reference[n / 2].z;
    println!(
        "rope: sag {sag_m:.6} m, largest element error {error_m:.3e} m, moved {moved_m:.3e} m in \
         the last 1 s (speed {speed:.3e} m/s), reference residual {residual_n:.1e} N, energy \
         error {:.2e}, {} linear solves in the last step",
        sim.diagnostics().energy_error_rel,
        sim.diagnostics().iterations
    );
    assert!(
        residual_n < 1e-10,
        "reference did not converge: {residual_n}"
    );
    assert!(moved_m < 1e-6, "the rope still moves: {moved_m} m in 1 s");
    assert!(error_m < 1e-4, "element off its equilibrium by {error_m} m");
    assert!(sim.diagnostics().energy_error_rel.abs() < 1e-6);
}

/// Acceptance 3 of issue 18: a connection pulled slowly (a force rising as sin(2π f t),
/// quasi-static against the connection's own frequency) breaks at its rest length plus its
/// fracture extension, up to what it stretches in the breaking step; the force just before
/// is stiffness × extension and the pull itself within 1 %; the elastic energy it held is
/// booked as fracture loss and the balance still closes.
#[test]
fn a_connection_breaks_at_its_fracture_extension_and_books_the_energy() {
    let (k, limit, f0, freq) = (1000.0, 1.0e-3, 2.0, 0.025);
    let mut sim = build(&format!(
        r#"
gravity_m_per_s2 = [0.0, 0.0, 0.0]
[[deformable]]
name = "r"
kind = "rope"
mass_kg = 0.02
element_radius_m = 0.005
stiffness_n_per_m = {k}
damping_n_s_per_m = 0.5
fracture_extension_m = {limit}
end1_m = [0.0, 0.0, 1.0]
end2_m = [0.1, 0.0, 1.0]
elements = 2
pin1 = "ground"
[[force]]
name = "pull"
body = "r.e1"
force_n = [{f0}, 0.0, 0.0]
frequency_hz = {freq}
"#
    ));
    let rest = sim.springs()[0].rest_length_m;
    assert!((rest - 0.1).abs() < 1e-15);
    let mut last_extension = 0.0;
    while sim.fractures().is_empty() {
        assert!(sim.time_secs() < 10.0, "never broke");
        last_extension =
            (sim.bodies()[2].position_in_world - sim.bodies()[1].position_in_world).norm() - rest;
        sim.step().expect("step");
    }
    let fr = sim.fractures()[0].clone();
    let ext_end =
        (sim.bodies()[2].position_in_world - sim.bodies()[1].position_in_world).norm() - rest;
    let stretch_in_step = ext_end - last_extension;
    // The pull at the breaking step's midpoint (the force element's time).
    let pull = f0 * (std::f64::consts::TAU * freq * (fr.time_secs - 0.005)).sin();
    println!(
        "fracture at t = {:.2} s: extension {:.7e} m (limit {limit:e}, stretch in the step \
         {stretch_in_step:.2e} m), tension {:.6} N vs k·e {:.6} N vs pull {pull:.6} N, energy {:.4e} J",
        fr.time_secs,
        fr.extension_m,
        fr.tension_n,
        k * fr.extension_m,
        fr.energy_j
    );
    assert_eq!(fr.spring, 0);
    assert!(sim.springs()[0].broken);
    assert_eq!(fr.extension_m, ext_end);
    assert!(last_extension <= limit && fr.extension_m > limit);
    assert!(fr.extension_m - limit <= stretch_in_step);
    assert!(stretch_in_step < 1e-5 * limit.max(1.0), "{stretch_in_step}");
    assert!((fr.tension_n / (k * fr.extension_m) - 1.0).abs() < 0.01);
    assert!((fr.tension_n / pull - 1.0).abs() < 0.01);
    assert!((fr.energy_j - 0.5 * k * ext_end * ext_end).abs() < 1e-15);
    // Booked: the fracture line holds it, the elastic energy no longer does, the balance closes.
    for _ in 0..50 {
        sim.step().expect("step");
    }
    let d = sim.diagnostics();
    assert_eq!(d.fractured_j, fr.energy_j);
    assert_eq!(d.elastic_j, 0.0);
    assert_eq!(sim.spring_tension_n(0), Some(0.0));
    println!(
        "after: energy error {:.2e}, drift {:.2e} J",
        d.energy_error_rel, d.energy_drift_j
    );
    assert!(d.energy_error_rel.abs() < 1e-6, "{}", d.energy_error_rel);
    // Free now: the element accelerates away under the pull.
    assert!(sim.bodies()[2].linear_velocity_in_world.x > 0.1);
}

/// Acceptance 1 of issue 18 (first half): a braced cantilever lattice, one layer in the x–z
/// plane, its x = 0 nodes pinned to the ground by ball joints (the clamp; rigid groups do not
/// exist yet), settles under gravity to the deflection of the same mass-spring network
/// solved directly, K u = f, with K assembled here from the connections at the rest pose
/// (in-plane degrees of freedom: a single layer has no stiffness across it, and no load).
/// Measured: tip +0.004 %, largest nodal difference 0.11 % of the largest deflection.
#[test]
fn a_clamped_cantilever_lattice_settles_to_the_direct_solution_of_k_u_f() {
    let (mass, k) = (0.05, 1.0e6);
    let mut sim = build(&format!(
        r#"
[[deformable]]
name = "beam"
kind = "lattice"
mass_kg = {mass}
element_radius_m = 0.003
stiffness_n_per_m = {k}
damping_n_s_per_m = 0.5
drag_n_s_per_m = 0.04
origin_m = [0.0, 0.0, 0.2]
size_m = [0.2, 0.0, 0.02]
spacing_m = 0.01
diagonal_bracing = true
clamp = "x-"
"#
    ));
    let n = sim.bodies().len() - 1;
    assert_eq!(n, 21 * 3);
    assert_eq!(sim.springs().len(), 20 * 3 + 21 * 2 + 2 * 20 * 2);
    let x0: Vec<Vector3<f64>> = sim.bodies()[1..]
        .iter()
        .map(|b| b.position_in_world)
        .collect();
    let bars: Vec<Bar> = sim
        .springs()
        .iter()
        .map(|s| Bar {
            a: s.body1 - 1,
            b: s.body2 - 1,
            rest_m: s.rest_length_m,
            k: s.stiffness_n_per_m,
        })
        .collect();
    // The clamped nodes are those at x = 0, found here from the positions.
    let pinned: Vec<usize> = (0..n).filter(|&i| x0[i].x.abs() < 1e-12).collect();
    assert_eq!(pinned.len(), 3);
    assert_eq!(sim.joints().len(), 3);
    let moved_m = settle(&mut sim, 300);
    // K u = f at the rest pose, where the connections carry no force: f is the weight.
    let mut index = vec![None; n];
    let mut free = 0;
    for (i, slot) in index.iter_mut().enumerate() {
        if !pinned.contains(&i) {
            *slot = Some(free);
            free += 1;
        }
    }
    let full = stiffness(&x0, &bars, &index, free);
    let in_plane: Vec<usize> = (0..3 * free).filter(|r| r % 3 != 1).collect();
    let kk = DMatrix::from_fn(in_plane.len(), in_plane.len(), |r, c| {
        full[(in_plane[r], in_plane[c])]
    });
    let m = mass / n as f64;
    let f = DVector::from_fn(in_plane.len(), |r, _| {
        if in_plane[r] % 3 == 2 {
            -m * G
        } else {
            0.0
        }
    });
    let u = kk.lu().solve(&f).expect("the clamped lattice is stiff");
    let mut worst = 0.0_f64;
    let mut u_max = 0.0_f64;
    let (mut tip_sim, mut tip_ref) = (0.0, 0.0);
    for i in 0..n {
        if let Some(j) = index[i] {
            let us = sim.bodies()[i + 1].position_in_world - x0[i];
            let ur = Vector3::new(u[2 * j], 0.0, u[2 * j + 1]);
            worst = worst.max((us - ur).norm());
            u_max = u_max.max(ur.norm());
            if (x0[i].x - 0.2).abs() < 1e-12 && (x0[i].z - 0.21).abs() < 1e-12 {
                (tip_sim, tip_ref) = (us.z, ur.z);
            }
        }
    }
    println!(
        "cantilever: tip deflection {tip_sim:.6e} m vs K u = f {tip_ref:.6e} m ({:+.4} %), largest \
         nodal difference {:.4} % of the largest deflection, moved {moved_m:.2e} m in the last 1 s",
        100.0 * (tip_sim / tip_ref - 1.0),
        100.0 * worst / u_max
    );
    assert!(tip_ref < 0.0);
    // Settled to the level the solver reaches: the stiff lattice (h ω ≈ 350 for one
    // connection) keeps moving by about 0.3 % of the tip deflection per second at the
    // default velocity tolerance (measured 7.3e-7 m against 2.2e-4 m); the agreement below is
    // shown at that state, not at a state settled to 1e-3 of the deflection.
    assert!(moved_m < 1e-2 * tip_ref.abs(), "not settled: {moved_m}");
    assert!((tip_sim / tip_ref - 1.0).abs() < 0.01);
    assert!(worst < 0.01 * u_max);
}

/// A cloth curtain pinned at its two top corners (`pinned_nodes`) settles hanging from them:
/// the pins' reactions on the corner elements carry the whole weight, M g, and hold the
/// corners apart against the sagging top edge with equal and opposite forces.
#[test]
fn a_cloth_pinned_at_two_corners_hangs_from_them() {
    let mass_kg = 0.02;
    let mut sim = build(&format!(
        r#"
[[deformable]]
name = "curtain"
kind = "cloth"
mass_kg = {mass_kg}
element_radius_m = 0.003
stiffness_n_per_m = 200.0
damping_n_s_per_m = 0.01
drag_n_s_per_m = 0.04
corner_m = [0.0, 0.0, 0.5]
edge1_m = [0.2, 0.0, 0.0]
edge2_m = [0.0, 0.0, -0.2]
nodes = [5, 5]
shear = "both"
bend = true
pinned_nodes = [[0, 0], [4, 0]]
"#
    ));
    assert_eq!(sim.bodies().len(), 1 + 25);
    // 40 structural, 32 diagonals, 30 skip-one.
    assert_eq!(sim.springs().len(), 40 + 32 + 30);
    assert_eq!(sim.joints().len(), 2);
    for _ in 0..300 {
        sim.step().expect("step");
    }
    let r = sim.joint_reactions();
    let lift_n = r[0].force_in_world.z + r[1].force_in_world.z;
    let weight_n = mass_kg * 9.81;
    let sideways_n = (r[0].force_in_world.x, r[1].force_in_world.x);
    println!(
        "pinned curtain: pins carry {lift_n:.9} N of the weight {weight_n:.9} N, hold the corners out with {:.6} and {:.6} N, \
         fastest element {:.2e} m/s",
        sideways_n.0,
        sideways_n.1,
        max_speed(&sim)
    );
    assert!(max_speed(&sim) < 1e-4, "not at rest");
    // Measured 6e-7, with the elements still moving at 4 µm/s.
    assert!((lift_n / weight_n - 1.0).abs() < 1e-5, "{lift_n} N");
    assert!(
        sideways_n.0 < 0.0 && (sideways_n.0 + sideways_n.1).abs() < 1e-5 * weight_n,
        "{sideways_n:?}"
    );
}

/// Bad `[[deformable]]` tables are refused with the table's field named.
#[test]
fn bad_deformable_tables_name_their_field() {
    let base = r#"
[[deformable]]
name = "r"
mass_kg = 0.1
element_radius_m = 0.01
stiffness_n_per_m = 100.0
"#;
    for (extra, field, words) in [
        (
            "kind = \"sheet\"",
            "deformable[0].kind",
            "expected rope, lattice or cloth",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nnodes = [3, 3]",
            "deformable[0].edge2_m",
            "needs `edge2_m`",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.2, 0.0, 0.0]\nnodes = [3, 3]",
            "deformable[0].edge2_m",
            "parallel",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.0, 0.1, 0.0]\nnodes = [3, 0]",
            "deformable[0].nodes",
            "at least 2 nodes along each edge",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.0, 0.1, 0.0]\nnodes = [3]",
            "deformable[0].nodes",
            "expected 2 numbers",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.0, 0.1, 0.0]\nnodes = [3, 3]\npinned_nodes = [[0, 3]]",
            "deformable[0].pinned_nodes",
            "outside the 3 × 3 grid",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.0, 0.1, 0.0]\nnodes = [3, 3]\nshear = \"two\"",
            "deformable[0].shear",
            "expected none, one or both",
        ),
        (
            "kind = \"cloth\"\ncorner_m = [0.0, 0.0, 0.0]\nedge1_m = [0.1, 0.0, 0.0]\nedge2_m = [0.0, 0.1, 0.0]\nnodes = [3, 3]\nclamp = \"x-\"",
            "deformable[0].clamp",
            "belongs to kind = \"lattice\", not \"cloth\"",
        ),
        (
            "kind = \"rope\"\nend1_m = [0.0, 0.0, 0.0]\nelements = 3",
            "deformable[0].end2_m",
            "needs `end2_m`",
        ),
        (
            "kind = \"rope\"\nend1_m = [0.0, 0.0, 0.0]\nend2_m = [1.0, 0.0, 0.0]\nelements = 3\nspacing_m = 0.1",
            "deformable[0].spacing_m",
            "belongs to kind = \"lattice\"",
        ),
        (
            "kind = \"rope\"\nend1_m = [0.0, 0.0, 0.0]\nend2_m = [1.0, 0.0, 0.0]\nelements = 3\nlength_m = 0.5",
            "deformable[0].length_m",
            "shorter than the distance",
        ),
        (
            "kind = \"rope\"\nend1_m = [0.0, 0.0, 0.0]\nend2_m = [1.0, 0.0, 0.0]\nelements = 3\npin1 = \"post\"",
            "deformable[0].pin1",
            "unknown body `post`",
        ),
        (
            "kind = \"lattice\"\norigin_m = [0.0, 0.0, 0.0]\nsize_m = [0.1, 0.1, 0.1]\nspacing_m = 0.1\nclamp = \"w+\"",
            "deformable[0].clamp",
            "expected x-",
        ),
        (
            "kind = \"rope\"\nend1_m = [0.0, 0.0, 0.0]\nend2_m = [1.0, 0.0, 0.0]\nelements = 3\ndrag_n_s_per_m = 10.0",
            "deformable[0].drag_n_s_per_m",
            "explicit drag",
        ),
    ] {
        let text = format!("{base}{extra}\n");
        let e = Scene::parse(&text, "bad.toml").expect_err(extra).to_string();
        assert!(e.contains(field) && e.contains(words), "{extra}: {e}");
    }
}
