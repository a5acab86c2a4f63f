//! The emitter against closed forms: a two-link arm with offset inertials and a tool fixed to
//! its forearm, parsed back by the scene loader.

use std::path::PathBuf;

use ar_dynamics::Scene;
use nalgebra::{Isometry3, Matrix3, Vector3};

use super::scene_toml;
use crate::error::{ImportError, Location};
use crate::model::{Joint, JointKind, Link, Model, WORLD};
use crate::options::ImportOptions;

fn at(line: u32) -> Location {
    Location {
        file: PathBuf::from("arm.urdf"),
        line,
    }
}

fn link(name: &str, mass: f64, com_x: f64, d: [f64; 3], line: u32) -> Link {
    Link {
        name: name.into(),
        mass_kg: mass,
        com_in_link: Vector3::new(com_x, 0.0, 0.0),
        inertia_in_link_kg_m2: Matrix3::from_diagonal(&Vector3::from(d)),
        visuals: Vec::new(),
        collisions: Vec::new(),
        at: at(line),
    }
}

fn joint(
    name: &str,
    kind: JointKind,
    parent: &str,
    child: &str,
    origin: [f64; 3],
    line: u32,
) -> Joint {
    Joint::new(
        name,
        kind,
        parent,
        child,
        Isometry3::translation(origin[0], origin[1], origin[2]),
        Vector3::y_axis(),
        at(line),
    )
}

/// base (massless, fixed base) —shoulder (y, at z = 1)→ upper (2 kg, COM x = 0.5)
/// —elbow (y, at x = 1)→ fore (1 kg, COM x = 0.3) —fixed (x = 0.6)→ tool (0.5 kg, COM x = 0.1).
fn arm() -> Model {
    Model {
        name: "arm".into(),
        source: PathBuf::from("arm.urdf"),
        gravity_m_per_s2: None,
        dt_secs: None,
        links: vec![
            link("base", 0.0, 0.0, [0.0; 3], 2),
            link("upper", 2.0, 0.5, [0.01, 0.2, 0.2], 3),
            link("fore", 1.0, 0.3, [0.01, 0.02, 0.03], 4),
            link("tool", 0.5, 0.1, [0.001, 0.002, 0.003], 5),
        ],
        joints: vec![
            joint(
                "shoulder",
                JointKind::Revolute,
                "base",
                "upper",
                [0.0, 0.0, 1.0],
                6,
            ),
            joint(
                "elbow",
                JointKind::Revolute,
                "upper",
                "fore",
                [1.0, 0.0, 0.0],
                7,
            ),
            joint(
                "flange",
                JointKind::Fixed,
                "fore",
                "tool",
                [0.6, 0.0, 0.0],
                8,
            ),
        ],
        loops: Vec::new(),
        contact_excludes: Vec::new(),
        initial_positions: Vec::new(),
        initial_velocities: Vec::new(),
        ignored: Vec::new(),
    }
}

fn options(q1: f64, q2: f64) -> ImportOptions {
    ImportOptions {
        joint_positions: vec![("shoulder".into(), q1), ("elbow".into(), q2)],
        ..ImportOptions::default()
    }
}

fn parse(model: &Model, options: &ImportOptions) -> Scene {
    let e = scene_toml(model, options).unwrap();
    Scene::parse(&e.text, "arm.toml").unwrap_or_else(|err| panic!("{err}\n{}", e.text))
}

fn body<'s>(scene: &'s Scene, name: &str) -> &'s ar_dynamics::Body {
    scene.bodies.iter().find(|b| b.name == name).unwrap()
}

#[test]
fn two_link_arm_centres_of_mass_in_closed_form() {
    let (q1, q2) = (0.4_f64, -1.1_f64);
    let scene = parse(&arm(), &options(q1, q2));
    // Rotation about +y by q takes x to (cos q, 0, −sin q).
    let upper = Vector3::new(0.5 * q1.cos(), 0.0, 1.0 - 0.5 * q1.sin());
    let com_fore = 0.65 / 1.5; // fore and tool merged: (1·0.3 + 0.5·0.7) / 1.5
    let q12 = q1 + q2;
    let fore = Vector3::new(
        q1.cos() + com_fore * q12.cos(),
        0.0,
        1.0 - q1.sin() - com_fore * q12.sin(),
    );
    assert!((body(&scene, "upper").position_in_world - upper).norm() < 1e-15);
    assert!((body(&scene, "fore").position_in_world - fore).norm() < 1e-15);
    // base is massless and fixed: merged into the ground; tool into fore.
    assert_eq!(scene.bodies.len(), 3);
    assert_eq!(body(&scene, "fore").mass_kg, 1.5);
    // The hinges: shoulder at (0, 0, 1), elbow at the upper link's end, both about y.
    let elbow = &scene.joints[1];
    assert_eq!(elbow.name, "elbow");
    let elbow_world = Vector3::new(q1.cos(), 0.0, 1.0 - q1.sin());
    let fore_body = body(&scene, "fore");
    let p = fore_body.world_from_body() * nalgebra::Point3::from(elbow.anchor2_in_body2);
    assert!((p.coords - elbow_world).norm() < 1e-15);
    // The tool stays a grab point at its frame's origin.
    let g = &scene.grab_points[0];
    assert_eq!(g.name, "tool");
    let tool = fore_body.world_from_body() * nalgebra::Point3::from(g.point_in_body);
    let tool_world = Vector3::new(
        q1.cos() + 0.6 * q12.cos(),
        0.0,
        1.0 - q1.sin() - 0.6 * q12.sin(),
    );
    assert!((tool.coords - tool_world).norm() < 1e-15);
}

#[test]
fn merged_inertia_by_the_parallel_axis_theorem() {
    let scene = parse(&arm(), &options(0.0, 0.0));
    let fore = body(&scene, "fore");
    // COM at x = 0.65/1.5; fore 2/15 m behind it, tool 4/15 m ahead:
    // m d² = 1·(2/15)² + 0.5·(4/15)² = 12/225 about y and z, nothing about x.
    let extra = 1.0 * (2.0_f64 / 15.0).powi(2) + 0.5 * (4.0_f64 / 15.0).powi(2);
    assert!((extra - 12.0 / 225.0).abs() < 1e-15);
    let want = Vector3::new(0.011, 0.022 + extra, 0.033 + extra);
    assert!(
        (fore.principal_inertia_kg_m2 - want).norm() < 1e-15,
        "{:?}",
        fore.principal_inertia_kg_m2
    );
    assert_eq!(
        fore.body_from_principal,
        nalgebra::UnitQuaternion::identity()
    );
}

#[test]
fn a_rotated_inertia_gets_principal_axes_back() {
    let mut m = arm();
    let r = nalgebra::Rotation3::from_euler_angles(0.2, 0.5, -0.3);
    m.links[1].inertia_in_link_kg_m2 =
        r.matrix() * Matrix3::from_diagonal(&Vector3::new(0.1, 0.15, 0.2)) * r.matrix().transpose();
    let scene = parse(&m, &options(0.3, 0.0));
    let upper = body(&scene, "upper");
    let back = upper.body_from_principal.to_rotation_matrix();
    let d = Matrix3::from_diagonal(&upper.principal_inertia_kg_m2);
    let tensor = back.matrix() * d * back.matrix().transpose();
    assert!((tensor - m.links[1].inertia_in_link_kg_m2).abs().max() < 1e-15);
}

#[test]
fn base_pose_and_scale_move_and_scale_everything() {
    let o = ImportOptions {
        base_at_m: [0.1, 0.2, 0.0],
        base_rotation_rad: [0.0, 0.0, std::f64::consts::FRAC_PI_2],
        scale: 0.5,
        ..options(0.0, 0.0)
    };
    let scene = parse(&arm(), &o);
    let upper = body(&scene, "upper");
    // COM (0.5, 0, 1) scaled to (0.25, 0, 0.5), turned 90° about z to (0, 0.25, 0.5).
    assert!((upper.position_in_world - Vector3::new(0.1, 0.45, 0.5)).norm() < 1e-15);
    assert!((upper.principal_inertia_kg_m2 - Vector3::new(0.0025, 0.05, 0.05)).norm() < 1e-15);
}

#[test]
fn text_round_trips_every_float() {
    let e = scene_toml(&arm(), &options(0.123456789, -2.0 / 3.0)).unwrap();
    assert!(e
        .text
        .starts_with("# Imported by ar-multibody from arm.urdf"));
    let scene = Scene::parse(&e.text, "arm.toml").unwrap();
    let again = scene_toml(&arm(), &options(0.123456789, -2.0 / 3.0)).unwrap();
    assert_eq!(e.text, again.text);
    let upper = body(&scene, "upper");
    let q1 = 0.123456789_f64;
    let want = nalgebra::UnitQuaternion::from_axis_angle(&Vector3::y_axis(), q1);
    assert!(upper.world_from_body_rotation.angle_to(&want) < 1e-15);
}

fn invalid(e: ImportError) -> (u32, String, String) {
    match e {
        ImportError::Invalid {
            at,
            element,
            message,
        } => (at.line, element, message),
        other => panic!("{other}"),
    }
}

#[test]
fn unknown_joint_and_massless_moving_link_are_named() {
    let mut o = options(0.0, 0.0);
    o.joint_positions.push(("wrist".into(), 1.0));
    let (_, element, message) = invalid(scene_toml(&arm(), &o).unwrap_err());
    assert_eq!(element, "joint \"wrist\"");
    assert!(message.contains("no joint of this name"), "{message}");

    let mut m = arm();
    m.links[1].mass_kg = 0.0;
    let (line, element, message) = invalid(scene_toml(&m, &options(0.0, 0.0)).unwrap_err());
    assert_eq!((line, element.as_str()), (6, "joint \"shoulder\""));
    assert!(message.contains("\"upper\" has no mass"), "{message}");
}

#[test]
fn bad_inertia_is_named_with_its_line() {
    let mut m = arm();
    m.links[2].inertia_in_link_kg_m2 = Matrix3::from_diagonal(&Vector3::new(0.01, 0.0, 0.03));
    let (line, element, message) = invalid(scene_toml(&m, &options(0.0, 0.0)).unwrap_err());
    assert_eq!((line, element.as_str()), (4, "link \"fore\""));
    assert!(message.contains("not positive definite"), "{message}");
    m.links[2].inertia_in_link_kg_m2 = Matrix3::from_diagonal(&Vector3::new(0.01, 0.01, 0.03));
    let (_, _, message) = invalid(scene_toml(&m, &options(0.0, 0.0)).unwrap_err());
    assert!(message.contains("no rigid body"), "{message}");
}

#[test]
fn limits_are_relative_and_damping_is_the_scenes() {
    let mut m = arm();
    m.joints[0].limits = Some([-1.0, 2.0]);
    m.joints[1].damping = 0.5;
    m.joints[1].friction = 0.25;
    let e = scene_toml(&m, &options(0.5, 0.0)).unwrap();
    assert!(e.text.contains("limits_rad = [-1.5, 1.5]"), "{}", e.text);
    assert!(e.text.contains("damping_n_m_s_per_rad = 0.5"), "{}", e.text);
    assert_eq!(e.warnings.len(), 1, "{:?}", e.warnings);
    assert!(e.warnings[0].starts_with("arm.urdf:7: joint \"elbow\": friction 0.25"));
    // --no-damping: neither in the scene nor warned about.
    let free = ImportOptions {
        ignore_damping: true,
        ..options(0.5, 0.0)
    };
    let e = scene_toml(&m, &free).unwrap();
    assert!(!e.text.contains("damping"), "{}", e.text);
    assert!(e.warnings.is_empty(), "{:?}", e.warnings);
    let (line, _, message) = invalid(scene_toml(&m, &options(2.5, 0.0)).unwrap_err());
    assert_eq!(line, 6);
    assert!(message.contains("outside its limits"), "{message}");
    // Not set by --joint: the file's (here 0) is moved into the limits, with a warning.
    m.joints[0].limits = Some([0.5, 2.0]);
    let e = scene_toml(&m, &ImportOptions::default()).unwrap();
    assert!(e.text.contains("limits_rad = [0.0, 1.5]"), "{}", e.text);
    assert!(
        e.warnings[0].starts_with("arm.urdf:6: joint \"shoulder\": initial position 0 outside its limits [0.5, 2]: starts at 0.5"),
        "{:?}",
        e.warnings
    );
}

#[test]
fn a_floating_base_is_a_free_body() {
    let mut m = arm();
    m.links[0] = link("base", 3.0, 0.0, [0.1, 0.1, 0.1], 2);
    let fixed = parse(&m, &options(0.0, 0.0));
    assert_eq!(fixed.joints[0].name, "base_to_ground");
    let o = ImportOptions {
        floating_base: true,
        ..options(0.0, 0.0)
    };
    let free = parse(&m, &o);
    assert_eq!(free.bodies.len(), 4); // ground, base, upper, fore
    assert_eq!(free.joints.len(), 2);
    assert_eq!(WORLD, "world");
}

/// Visuals of a merged link land in the body frame (origin at the combined centre of mass,
/// x = 0.65/1.5 m along the forearm), with their colour; a mesh keeps its absolute path and
/// scale; an ellipsoid is named in a warning.
#[test]
fn visuals_are_placed_in_the_body_frame() {
    use crate::model::{Geom, GeomShape};
    let dir = tempfile::tempdir().unwrap();
    let mesh = dir.path().join("tool.stl");
    std::fs::write(&mesh, b"solid t\nendsolid t\n").unwrap();
    let geom = |shape, x: f64, rgba| Geom {
        shape,
        link_from_geom: Isometry3::translation(x, 0.0, 0.0),
        rgba,
        at: at(9),
    };
    let mut model = arm();
    model.links[2].visuals = vec![
        geom(GeomShape::Sphere { radius: 0.05 }, 0.0, None),
        geom(
            GeomShape::Ellipsoid {
                radii: Vector3::new(0.1, 0.2, 0.3),
            },
            0.0,
            None,
        ),
    ];
    model.links[3].visuals = vec![
        geom(
            GeomShape::Box {
                size: Vector3::new(0.1, 0.02, 0.02),
            },
            0.05,
            Some([0.2, 0.4, 0.6, 1.0]),
        ),
        geom(
            GeomShape::Mesh {
                path: mesh.clone(),
                scale: Vector3::repeat(0.001),
            },
            0.0,
            None,
        ),
    ];
    let emitted = scene_toml(&model, &options(0.0, 0.0)).unwrap();
    assert!(
        emitted
            .warnings
            .iter()
            .any(|w| w.starts_with("arm.urdf:9:") && w.contains("ellipsoid")),
        "{:?}",
        emitted.warnings
    );
    let scene = Scene::parse(&emitted.text, "arm.toml").unwrap();
    let visuals = &body(&scene, "fore").visuals;
    assert_eq!(visuals.len(), 3, "{}", emitted.text);
    let com_x = 0.65 / 1.5;
    let x = |i: usize| visuals[i].body_from_visual.translation.vector;
    assert!((x(0) - Vector3::new(-com_x, 0.0, 0.0)).norm() < 1e-15);
    assert!((x(1) - Vector3::new(0.65 - com_x, 0.0, 0.0)).norm() < 1e-15);
    assert_eq!(visuals[1].rgba, Some([0.2, 0.4, 0.6, 1.0]));
    assert_eq!(
        visuals[2].geometry,
        ar_dynamics::model::visual::VisualGeometry::Mesh {
            path: mesh,
            scale: [0.001; 3]
        }
    );
}

/// `--collisions`: a box centred on the upper arm's centre of mass becomes its 8 corners; the
/// forearm's off-centre sphere and the merged tool's box one hull with warnings naming the
/// links; the ground's collision is not used (warned); the desk plane and `[contact]` are
/// there, and the upper arm and forearm (joined by the elbow) are an excluded pair.
#[test]
fn collisions_become_colliders_in_the_body_frame() {
    use crate::model::{Geom, GeomShape};
    let geom = |shape, x: f64| Geom {
        shape,
        link_from_geom: Isometry3::translation(x, 0.0, 0.0),
        rgba: None,
        at: at(11),
    };
    let cuboid = |x: f64, y: f64, z: f64| GeomShape::Box {
        size: Vector3::new(x, y, z),
    };
    let mut model = arm();
    model.links[0].collisions = vec![geom(cuboid(0.1, 0.1, 0.1), 0.0)];
    model.links[1].collisions = vec![geom(cuboid(0.2, 0.1, 0.06), 0.5)];
    model.links[2].collisions = vec![geom(GeomShape::Sphere { radius: 0.05 }, 0.3)];
    model.links[3].collisions = vec![geom(cuboid(0.1, 0.02, 0.02), 0.05)];
    let o = ImportOptions {
        collisions: true,
        ..options(0.0, 0.0)
    };
    let emitted = scene_toml(&model, &o).unwrap();
    let warned = |what: &[&str]| {
        emitted
            .warnings
            .iter()
            .any(|w| what.iter().all(|x| w.contains(x)))
    };
    assert!(
        warned(&["arm.urdf:11:", "\"fore\"", "sphere", "points"]),
        "{:?}",
        emitted.warnings
    );
    assert!(warned(&["\"fore\"", "2 collision geoms", "fore, tool"]));
    assert!(warned(&["1 collision shapes of links fixed to the ground"]));
    assert!(!warned(&["--collisions"]));
    let scene = Scene::parse(&emitted.text, "arm.toml").unwrap();
    let ar_dynamics::Shape::Convex { points_m } = body(&scene, "upper").shape.clone().unwrap()
    else {
        panic!("{}", emitted.text);
    };
    assert_eq!(points_m.len(), 8);
    for p in points_m.iter() {
        let half = [0.1, 0.05, 0.03];
        assert!(
            (0..3).all(|k| (p[k].abs() - half[k]).abs() < 1e-15),
            "{p:?}"
        );
    }
    // The merged forearm: sphere samples around x = 0.3 − 0.65/1.5 and the tool's box out
    // to x = 0.6 + 0.1 − 0.65/1.5 in the body frame.
    let ar_dynamics::Shape::Convex { points_m } = body(&scene, "fore").shape.clone().unwrap()
    else {
        panic!("{}", emitted.text);
    };
    let com_x = 0.65 / 1.5;
    let max_x = points_m.iter().map(|p| p[0]).fold(f64::MIN, f64::max);
    let min_x = points_m.iter().map(|p| p[0]).fold(f64::MAX, f64::min);
    assert!((max_x - (0.7 - com_x)).abs() < 1e-12, "{max_x}");
    assert!((min_x - (0.25 - com_x)).abs() < 1e-12, "{min_x}");
    let contact = scene.contact.as_ref().unwrap();
    let names: Vec<&str> = contact.colliders.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["upper", "fore", "desk"]);
    let (upper, fore) = (
        scene.bodies.iter().position(|b| b.name == "upper").unwrap(),
        scene.bodies.iter().position(|b| b.name == "fore").unwrap(),
    );
    // Joined by the elbow: never a pair once built.
    let sim = scene.build().unwrap();
    let built = sim.model().contact.as_ref().unwrap();
    assert!(!built.pair_allowed(upper, fore));
    // The shoulder joins the upper arm to the ground (the massless base is merged into
    // it), so it never touches the desk either; the forearm does.
    assert!(!built.pair_allowed(upper, 0) && built.pair_allowed(fore, 0));
}

/// One sphere centred on the body's centre of mass stays a sphere; a body without collision
/// geoms does not collide.
#[test]
fn a_centred_sphere_stays_a_sphere_and_a_body_without_collisions_does_not_collide() {
    use crate::model::{Geom, GeomShape};
    let mut model = arm();
    model.links[1].collisions = vec![Geom {
        shape: GeomShape::Sphere { radius: 0.05 },
        link_from_geom: Isometry3::translation(0.5, 0.0, 0.0),
        rgba: None,
        at: at(11),
    }];
    let o = ImportOptions {
        collisions: true,
        ..options(0.0, 0.0)
    };
    let emitted = scene_toml(&model, &o).unwrap();
    assert!(emitted.warnings.is_empty(), "{:?}", emitted.warnings);
    let scene = Scene::parse(&emitted.text, "arm.toml").unwrap();
    assert_eq!(
        body(&scene, "upper").shape,
        Some(ar_dynamics::Shape::Sphere { radius_m: 0.05 })
    );
    let contact = scene.contact.as_ref().unwrap();
    let names: Vec<&str> = contact.colliders.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["upper", "desk"]);
}
