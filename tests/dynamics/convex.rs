//! Convex colliders (`shape = { kind = "convex", points_m = [...] }`, issues 42 and 43)
//! against closed forms: a convex box rests where a `box` does, a tetrahedron settles on a
//! face at its inradius, a sphere rests on a convex; ray casts; the validation errors.

use ar_dynamics::contact::ColliderShape;
use ar_dynamics::{Scene, Shape, Simulation};
use nalgebra::{Isometry3, Point3, Vector3};

const DESK: &str = "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n\n[solver]\ndt_secs = 0.01\n\n\
                    [[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\n\
                    point_in_world_m = [0.0, 0.0, 0.0]\n";

/// Half edges of the test box (m): 0.1 × 0.06 × 0.04.
const HALF: [f64; 3] = [0.05, 0.03, 0.02];

fn corners(half: [f64; 3]) -> String {
    let points: Vec<String> = (0..8)
        .map(|k: usize| {
            let c = |i: usize| if k & (1 << i) == 0 { -half[i] } else { half[i] };
            format!("[{:?}, {:?}, {:?}]", c(0), c(1), c(2))
        })
        .collect();
    format!("[{}]", points.join(", "))
}

/// A `[[body]]` table (mass 0.2 kg, the inertia of the test box: shapes never set it).
fn body(name: &str, at: [f64; 3], rotation_rad: [f64; 3], shape: &str) -> String {
    let (m, [a, b, c]) = (0.2, HALF.map(|h| 2.0 * h));
    let inertia = [b * b + c * c, a * a + c * c, a * a + b * b].map(|s| m * s / 12.0);
    format!(
        "\n[[body]]\nname = \"{name}\"\nmass_kg = {m:?}\ninertia_kg_m2 = {inertia:?}\n\
         position_m = {at:?}\nrotation_rad = {rotation_rad:?}\nshape = {shape}\n"
    )
}

fn build(text: &str) -> Simulation {
    Scene::parse(text, "convex.toml").unwrap().build().unwrap()
}

/// Steps `steps` times; returns the most negative contact gap of the last 100 steps as a
/// penetration (m, ≥ 0).
fn run(sim: &mut Simulation, steps: usize) -> f64 {
    let mut penetration = 0.0f64;
    for k in 0..steps {
        sim.step().unwrap();
        if k + 100 >= steps {
            for c in sim.contact_report() {
                penetration = penetration.max(-c.gap_m);
            }
        }
    }
    penetration
}

fn z_of(sim: &Simulation, name: &str) -> f64 {
    sim.bodies()[sim.body_id(name).unwrap()].position_in_world.z
}

#[test]
fn a_convex_box_rests_at_the_height_of_a_box() {
    let hull = format!("{{ kind = \"convex\", points_m = {} }}", corners(HALF));
    let cuboid = format!("{{ kind = \"box\", size_m = {:?} }}", HALF.map(|h| 2.0 * h));
    let text = format!(
        "{DESK}{}{}",
        body("hull", [0.0, 0.0, 0.05], [0.0; 3], &hull),
        body("cuboid", [0.5, 0.0, 0.05], [0.0; 3], &cuboid),
    );
    let mut sim = build(&text);
    let penetration = run(&mut sim, 300);
    let (hull_z, box_z) = (z_of(&sim, "hull"), z_of(&sim, "cuboid"));
    println!("hull z {hull_z}, box z {box_z}, penetration {penetration:e} m");
    assert!(penetration <= 1e-6, "penetration {penetration} m");
    assert!((hull_z - HALF[2]).abs() <= 1e-6, "hull at z = {hull_z}");
    assert!((hull_z - box_z).abs() <= 1e-6, "hull {hull_z}, box {box_z}");
    let hull_body = &sim.bodies()[sim.body_id("hull").unwrap()];
    assert!(hull_body.linear_velocity_in_world.norm() < 1e-6);
}

#[test]
fn a_tetrahedron_dropped_on_the_desk_rests_on_a_face_at_its_inradius() {
    // A regular tetrahedron with its centroid (the centre of mass) at the body origin:
    // alternate corners of the cube [−a, a]³; edge 2√2 a, inradius a/√3, and an isotropic
    // inertia m·edge²/20 = 0.4 m a².
    let a = 0.03;
    let vertices = [[a, a, a], [a, -a, -a], [-a, a, -a], [-a, -a, a]];
    let shape = format!("{{ kind = \"convex\", points_m = {vertices:?} }}");
    let (m, i) = (0.1, 0.4 * 0.1 * a * a);
    // Tilted so that a vertex lands first, 2 cm above the desk.
    let text = format!(
        "{DESK}\n[[body]]\nname = \"tet\"\nmass_kg = {m:?}\ninertia_kg_m2 = [{i:?}, {i:?}, {i:?}]\n\
         position_m = [0.0, 0.0, 0.075]\nrotation_rad = [0.4, -0.3, 0.2]\nshape = {shape}\n\
         friction = 0.8\n"
    );
    let mut sim = build(&text);
    let penetration = run(&mut sim, 400);
    let tet = &sim.bodies()[sim.body_id("tet").unwrap()];
    let pose = tet.world_from_body();
    let mut heights: Vec<f64> = vertices
        .iter()
        .map(|v| (pose * Point3::from(Vector3::from(*v))).z)
        .collect();
    heights.sort_by(f64::total_cmp);
    let inradius = a / 3f64.sqrt();
    println!(
        "vertex heights {heights:?}, centre z {}, penetration {penetration:e} m",
        pose.translation.z
    );
    assert!(penetration <= 1e-6, "penetration {penetration} m");
    // On a face: three vertices on the desk (within 1e-6 m), the fourth at the height 4r.
    for h in &heights[..3] {
        assert!(h.abs() <= 1e-6, "a vertex of the resting face at z = {h}");
    }
    assert!((heights[3] - 4.0 * inradius).abs() <= 1e-6);
    assert!((pose.translation.z - inradius).abs() <= 1e-6);
}

#[test]
fn a_sphere_rests_on_a_convex_body_and_on_a_static_convex() {
    let hull = format!("{{ kind = \"convex\", points_m = {} }}", corners(HALF));
    let r = 0.01;
    let ball = |name: &str, at: [f64; 3]| {
        let i = 0.4 * 0.05 * r * r;
        format!(
            "\n[[body]]\nname = \"{name}\"\nmass_kg = 0.05\ninertia_kg_m2 = [{i:?}, {i:?}, {i:?}]\n\
             position_m = {at:?}\nshape = {{ kind = \"sphere\", radius_m = {r:?} }}\n"
        )
    };
    // A static convex wedge-free slab: its top at z = 0.1 m.
    let text = format!(
        "{DESK}{}{}\n[[static]]\nname = \"slab\"\nshape = {hull}\nposition_m = [0.5, 0.0, 0.08]\n{}",
        body("hull", [0.0, 0.0, HALF[2]], [0.0; 3], &hull),
        ball("on_body", [0.01, 0.005, 2.0 * HALF[2] + r + 0.01]),
        ball("on_static", [0.51, 0.0, 0.1 + r + 0.01]),
    );
    let mut sim = build(&text);
    let penetration = run(&mut sim, 300);
    let (on_body, on_static) = (z_of(&sim, "on_body"), z_of(&sim, "on_static"));
    println!("sphere on body z {on_body}, on static z {on_static}, penetration {penetration:e}");
    assert!(penetration <= 1e-6, "penetration {penetration} m");
    assert!((on_body - (2.0 * HALF[2] + r)).abs() <= 2e-6, "{on_body}");
    assert!((on_static - (0.1 + r)).abs() <= 1e-6, "{on_static}");
}

#[test]
fn a_ray_meets_a_convex_where_it_meets_its_box() {
    let points: Vec<[f64; 3]> = (0..8)
        .map(|k: usize| [0, 1, 2].map(|i| if k & (1 << i) == 0 { -HALF[i] } else { HALF[i] }))
        .collect();
    let hull = ColliderShape::of(&Shape::Convex {
        points_m: points.into(),
    })
    .unwrap();
    let cuboid = ColliderShape::of(&Shape::Box {
        size_m: HALF.map(|h| 2.0 * h),
    })
    .unwrap();
    let pose = Isometry3::new(Vector3::new(0.1, 0.2, 0.3), Vector3::new(0.3, -0.2, 0.5));
    let origin = Point3::new(0.0, 0.0, 1.0);
    let direction = (Vector3::new(0.11, 0.19, 0.3) - origin.coords).normalize();
    let t_hull = hull.cast_ray(&pose, &origin, &direction).unwrap();
    let t_box = cuboid.cast_ray(&pose, &origin, &direction).unwrap();
    assert!((t_hull - t_box).abs() < 1e-12, "{t_hull} vs {t_box}");
    let radius = (HALF[0].powi(2) + HALF[1].powi(2) + HALF[2].powi(2)).sqrt();
    assert!((hull.bounding_radius_m() - radius).abs() < 1e-15);
    // A ray that misses, and one from inside (not a surface the user sees).
    let away = Vector3::new(0.0, 1.0, 0.0);
    assert_eq!(hull.cast_ray(&pose, &origin, &away), None);
    let inside = Point3::from(pose.translation.vector);
    assert_eq!(hull.cast_ray(&pose, &inside, &direction), None);
}

/// The scene's error for a body whose shape is `shape`.
fn shape_error(shape: &str) -> String {
    let text = format!("{DESK}{}", body("bad", [0.0, 0.0, 0.1], [0.0; 3], shape));
    Scene::parse(&text, "convex.toml").unwrap_err().to_string()
}

#[test]
fn bad_convex_points_are_refused_naming_the_body_and_field() {
    let three = shape_error("{ kind = \"convex\", points_m = [[0, 0, 0], [1, 0, 0], [0, 1, 0]] }");
    assert!(three.contains("convex.toml:"), "{three}");
    assert!(three.contains("body[0].shape.points_m"), "{three}");
    assert!(three.contains("got 3"), "{three}");
    let flat = shape_error(
        "{ kind = \"convex\", points_m = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]] }",
    );
    assert!(flat.contains("body[0].shape.points_m"), "{flat}");
    assert!(flat.contains("one plane"), "{flat}");
    let nan = shape_error(
        "{ kind = \"convex\", points_m = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, nan]] }",
    );
    assert!(nan.contains("body[0].shape.points_m[3]"), "{nan}");
    assert!(nan.contains("finite"), "{nan}");
    let two =
        shape_error("{ kind = \"convex\", points_m = [[0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]] }");
    assert!(two.contains("exactly 3 numbers"), "{two}");
    // A static's convex is checked the same way.
    let text = format!(
        "{DESK}{}\n[[static]]\nname = \"s\"\nshape = {{ kind = \"convex\", points_m = [[0, 0, 0]] }}\n\
         position_m = [0.0, 0.0, 0.0]\n",
        body("good", [0.0, 0.0, 0.1], [0.0; 3], "{ kind = \"sphere\", radius_m = 0.01 }")
    );
    let e = Scene::parse(&text, "convex.toml").unwrap_err().to_string();
    assert!(e.contains("static[0].shape.points_m"), "{e}");
}
