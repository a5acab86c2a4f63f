//! `scene pile --bodies N` (issue 42): the generated pile loads with N bodies of the four
//! shapes, no two bodies' bounding spheres (nor a body's and a wall's box) overlap at the start,
//! the bin holds every body, and the capsule's and the octahedron's inertias agree with a
//! numerical integration over their solids written here (a grid of cell centres, midpoint rule).

use ar_dynamics::scene::generate::GenerateError;
use ar_dynamics::scene::generate_pile::{capsule_inertia_kg_m2, pile_toml, MAX_PILE_BODIES};
use ar_dynamics::Scene;

/// ∫ (y² + z², x² + z², x² + y²) dV and the volume of the solid `inside` within the box
/// [-half, half]³, by the midpoint rule on n³ cells.
fn moments(inside: impl Fn(f64, f64, f64) -> bool, half: f64, n: usize) -> ([f64; 3], f64) {
    let d = 2.0 * half / n as f64;
    let (mut m, mut volume) = ([0.0f64; 3], 0.0);
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                let [x, y, z] = [i, j, k].map(|c| -half + (c as f64 + 0.5) * d);
                if inside(x, y, z) {
                    volume += 1.0;
                    m[0] += y * y + z * z;
                    m[1] += x * x + z * z;
                    m[2] += x * x + y * y;
                }
            }
        }
    }
    (m.map(|x| x / volume), volume * d * d * d)
}

#[test]
fn the_capsule_and_the_octahedron_have_the_inertias_of_their_solids() {
    let (r, l, mass) = (0.01, 0.02, 0.025);
    let capsule = |x: f64, y: f64, z: f64| {
        let along = (z.abs() - 0.5 * l).max(0.0);
        x * x + y * y + along * along <= r * r
    };
    let (per_kg, _) = moments(capsule, 0.5 * l + r, 240);
    let closed = capsule_inertia_kg_m2(mass, r, l);
    for a in 0..3 {
        let numeric = mass * per_kg[a];
        assert!(
            (closed[a] - numeric).abs() <= 2e-3 * numeric,
            "capsule axis {a}: {} against {numeric}",
            closed[a]
        );
    }
    let a = 0.018;
    let octahedron = |x: f64, y: f64, z: f64| x.abs() + y.abs() + z.abs() <= a;
    let (per_kg, volume) = moments(octahedron, a, 240);
    assert!((volume - 4.0 / 3.0 * a.powi(3)).abs() <= 1e-3 * volume);
    for (axis, m) in per_kg.iter().enumerate() {
        let closed = a * a / 5.0;
        assert!(
            (closed - m).abs() <= 2e-3 * closed,
            "octahedron axis {axis}: {closed} against {m}"
        );
    }
}

/// The starting layout: every body inside the bin, above the desk, and no two bounding
/// spheres overlapping (bounding radii: sphere 15 mm, cube 26 mm, capsule 20 mm, octahedron
/// 18 mm).
#[test]
fn a_generated_pile_loads_with_its_bodies_apart_inside_the_bin() {
    for bodies in [1, 7, 288, 1000] {
        let text = pile_toml(bodies).unwrap();
        let scene = Scene::parse(&text, "pile.toml").unwrap_or_else(|e| panic!("{bodies}: {e}"));
        let sim = scene.build().expect("builds");
        let placed: Vec<_> = sim
            .bodies()
            .iter()
            .skip(1)
            .map(|b| {
                let radius = match b.name.chars().next() {
                    Some('s') => 0.015,
                    Some('b') => 0.015 * 3f64.sqrt(),
                    Some('c') => 0.02,
                    Some('h') => 0.018,
                    other => panic!("{other:?}"),
                };
                (b.position_in_world, radius, b.name.clone())
            })
            .collect();
        assert_eq!(placed.len(), bodies);
        for kind in ["s", "b", "c", "h"].iter().take(bodies.min(4)) {
            assert!(
                placed.iter().any(|p| p.2.starts_with(kind)),
                "{bodies}: no {kind}"
            );
        }
        // The bin's inside half width, from the wall at +x (its inner face).
        let wall = text.find("name = \"wall_px\"").unwrap();
        let half: f64 = {
            let sizes = &text[wall..];
            let size: f64 = sizes
                ["name = \"wall_px\"\nshape = { kind = \"box\", size_m = [".len()..]
                .split(',')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let at = sizes.find("position_m = [").unwrap() + "position_m = [".len();
            let x: f64 = sizes[at..].split(',').next().unwrap().parse().unwrap();
            x - 0.5 * size
        };
        for (p, r, name) in &placed {
            assert!(
                p.x.abs() + r < half && p.y.abs() + r < half,
                "{name} at {p:?} leaves the bin"
            );
            assert!(p.z - r > 0.0 && p.z + r < 0.4, "{name} at {p:?}");
        }
        if bodies <= 288 {
            for (i, a) in placed.iter().enumerate() {
                for b in &placed[i + 1..] {
                    assert!(
                        (a.0 - b.0).norm() > a.1 + b.1,
                        "{} and {} overlap",
                        a.2,
                        b.2
                    );
                }
            }
        }
    }
    assert_eq!(pile_toml(0), Err(GenerateError::Bodies(0)));
    assert_eq!(
        pile_toml(MAX_PILE_BODIES + 1),
        Err(GenerateError::Bodies(MAX_PILE_BODIES + 1))
    );
}
