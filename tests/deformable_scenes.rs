//! The shipped deformable scenes (issue 18) load, run and show what they are meant to show,
//! checked against references worked out here: the draped cloth (`cloth.toml`) against the
//! geometry of an inextensible sheet over the box edge.

use ar_multibody::sim::{Scene, Simulation};
use nalgebra::Vector3;

fn scene_text(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/assets/scenes/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("shipped scene")
}

/// `text` with the one line that starts with `from` replaced by `to`.
fn replace_line(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.lines().filter(|l| l.starts_with(from)).count(),
        1,
        "one line starts with {from:?}"
    );
    text.lines()
        .map(|l| if l.starts_with(from) { to } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

fn build(text: &str, name: &str) -> Simulation {
    Scene::parse(text, name)
        .unwrap_or_else(|e| panic!("{e}"))
        .build()
        .expect("builds")
}

/// Element `k`'s position (the body after the ground and the scene's `[[body]]` tables).
fn element(sim: &Simulation, name: &str) -> Vector3<f64> {
    sim.bodies()[sim.body_id(name).expect(name)].position_in_world
}

/// The shipped cloth is issue 18's speed case: 1024 elements and 2945 connections.
#[test]
fn the_shipped_cloth_has_1024_elements_and_2945_connections() {
    let scene = Scene::parse(&scene_text("cloth.toml"), "cloth.toml").expect("loads");
    let elements = scene
        .bodies
        .iter()
        .filter(|b| b.name.starts_with("cloth.e"))
        .count();
    assert_eq!(elements, 1024);
    assert_eq!(scene.springs.len(), 1984 + 961);
}

/// The cloth of `cloth.toml` at 7 × 7 elements (0.04 m apart; the drag per element scaled
/// with the element mass, so that the sheet's damping time m/c is the shipped one's) drops
/// onto the box and comes to rest draped over it: the middle 3 × 3 elements on the box top
/// (their undersides at its height 0.08 m, within the contact stage's penetration), the row
/// through the middle folded over each edge, its next element against the box side
/// (x = ±(0.06 + r)) and the last one hanging below that, outside the box, above the desk.
/// An inextensible sheet would put the element on the side √(s² − d²) below the last one on
/// the top (s = 0.04 m the connection's length, d its horizontal distance to the side); the
/// sheet stretches where its corners fold over the box's corners (a 7 × 7 sheet cannot
/// fold there), which pulls that element lower: measured 2.1 mm (6 %), printed and guarded.
#[test]
fn the_cloth_comes_to_rest_draped_over_the_box() {
    let text = replace_line(&scene_text("cloth.toml"), "nodes =", "nodes = [7, 7]");
    let text = replace_line(
        &text,
        "drag_n_s_per_m =",
        &format!("drag_n_s_per_m = {}", 0.001 * 1024.0 / 49.0),
    );
    let mut sim = build(&text, "cloth.toml at 7 × 7");
    let (r, top, half, s) = (0.003, 0.08, 0.06, 0.04);
    let mut penetration_m = 0.0f64;
    for _ in 0..250 {
        sim.step().expect("step");
        penetration_m = penetration_m.max(sim.max_penetration_m());
    }
    let before: Vec<Vector3<f64>> = sim.bodies().iter().map(|b| b.position_in_world).collect();
    for _ in 0..50 {
        sim.step().expect("step");
        penetration_m = penetration_m.max(sim.max_penetration_m());
    }
    let moved_m = sim
        .bodies()
        .iter()
        .zip(&before)
        .map(|(b, p)| (b.position_in_world - p).norm())
        .fold(0.0, f64::max);
    let node = |i: usize, j: usize| element(&sim, &format!("cloth.e{}", i + 7 * j));
    // On the top: the middle 3 × 3, grid indices 2..=4.
    let mut top_gap = (f64::INFINITY, f64::NEG_INFINITY);
    for j in 2..=4 {
        for i in 2..=4 {
            let p = node(i, j);
            assert!(
                p.x.abs() < half && p.y.abs() < half,
                "element [{i}, {j}] left the top: {p}"
            );
            let gap = p.z - r - top;
            top_gap = (top_gap.0.min(gap), top_gap.1.max(gap));
        }
    }
    // The middle row (j = 3) over the edges at x = ±0.06, the near element on the box side.
    let mut drop_error_m = 0.0f64;
    for (near, far, last_on_top, sign) in [(1usize, 0usize, 2usize, -1.0), (5, 6, 4, 1.0)] {
        let on_top = node(last_on_top, 3);
        let (pn, pf) = (node(near, 3), node(far, 3));
        let side_offset_m = half + r - on_top.x.abs();
        let inextensible_drop_m = (s * s - side_offset_m * side_offset_m).sqrt();
        let drop_m = on_top.z - pn.z;
        println!(
            "cloth edge x {sign:+}: on the side at {pn:.5?} (dropped {drop_m:.5} m; inextensible {inextensible_drop_m:.5} m), \
             hanging at {pf:.5?}"
        );
        assert!(
            (pn.x - sign * (half + r)).abs() < 1e-9,
            "not against the box side: {pn}"
        );
        assert!(
            pf.z < pn.z - s / 2.0 && pf.x.abs() > half + r - 1e-9,
            "not hanging: {pf}"
        );
        drop_error_m = drop_error_m.max((drop_m - inextensible_drop_m).abs());
    }
    let lowest_m = sim.bodies()[1..]
        .iter()
        .map(|b| b.position_in_world.z)
        .fold(f64::INFINITY, f64::min);
    let stretch = sim
        .springs()
        .iter()
        .map(|c| {
            let b = sim.bodies();
            let l = (b[c.body2].position_in_world - b[c.body1].position_in_world).norm();
            l / c.rest_length_m - 1.0
        })
        .fold(0.0f64, f64::max);
    println!(
        "cloth 7 × 7 at {:.1} s: top elements' gap {:.3e} to {:.3e} m, max penetration {penetration_m:.3e} m, \
         drop over the edge off the inextensible sheet's by {drop_error_m:.3e} m, largest stretch {:.2} %, \
         lowest centre {lowest_m:.4} m, moved {moved_m:.2e} m in the last 0.5 s",
        sim.time_secs(),
        top_gap.0,
        top_gap.1,
        100.0 * stretch
    );
    assert!(moved_m < 1e-4, "not at rest: moved {moved_m} m");
    assert!(penetration_m < 1e-9, "penetration {penetration_m:e} m");
    assert!(top_gap.0 > -1e-9 && top_gap.1 < 1e-9, "{top_gap:?}");
    assert!(
        lowest_m > r - 1e-9,
        "an element went through the desk: {lowest_m}"
    );
    assert!(
        drop_error_m < 3e-3,
        "drop {drop_error_m} m off the inextensible sheet's"
    );
    assert!(stretch < 0.08, "stretched by {:.1} %", 100.0 * stretch);
}
