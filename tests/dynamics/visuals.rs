//! `[[body.visual]]` tables (issue 43: robots bring meshes and several shapes per link): they
//! are read into the body's visuals with their placement and colour, a relative mesh path is
//! found beside the scene file, and every mistake names the file, line and field; the solver
//! never reads them, so a scene steps bit for bit the same with or without them.

use ar_dynamics::model::shape::Shape;
use ar_dynamics::model::visual::VisualGeometry;
use ar_dynamics::Scene;

const BODY: &str = "[[body]]\nname = \"link\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
    position_m = [0.0, 0.0, 0.5]\nshape = { kind = \"box\", size_m = [0.1, 0.1, 0.1] }\n";

const PIVOT: &str = "[[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\n\
    body2 = \"link\"\nanchor_in_world_m = [0.1, 0.0, 0.5]\naxis_in_world = [0.0, 1.0, 0.0]\n";

fn scene_in(dir: &std::path::Path, visuals: &str) -> std::path::PathBuf {
    let path = dir.join("robot.toml");
    std::fs::write(&path, format!("{BODY}{visuals}{PIVOT}")).unwrap();
    path
}

#[test]
fn visuals_are_read_with_their_placement_colour_and_mesh_beside_the_scene() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("meshes")).unwrap();
    std::fs::write(dir.path().join("meshes/link.stl"), b"solid x\nendsolid x\n").unwrap();
    let path = scene_in(
        dir.path(),
        "[[body.visual]]\nmesh = \"meshes/link.stl\"\nscale = [0.001, 0.001, 0.001]\n\
         position_in_body_m = [0.0, 0.0, -0.05]\ncolor_rgba = [0.2, 0.4, 0.6]\n\
         [[body.visual]]\nshape = { kind = \"sphere\", radius_m = 0.02 }\n\
         rotation_in_body_rad = [0.0, 0.0, 1.5]\n",
    );
    let scene = Scene::load(&path).unwrap();
    let visuals = &scene.bodies[1].visuals;
    assert_eq!(visuals.len(), 2);
    assert_eq!(
        visuals[0].geometry,
        VisualGeometry::Mesh {
            path: dir.path().join("meshes/link.stl"),
            scale: [0.001; 3]
        }
    );
    assert_eq!(visuals[0].rgba, Some([0.2, 0.4, 0.6, 1.0]));
    assert_eq!(visuals[0].body_from_visual.translation.vector.z, -0.05);
    assert_eq!(
        visuals[1].geometry,
        VisualGeometry::Shape(Shape::Sphere { radius_m: 0.02 })
    );
    assert!((visuals[1].body_from_visual.rotation.angle() - 1.5).abs() < 1e-15);
    assert!(scene.bodies[0].visuals.is_empty());
}

#[test]
fn the_solver_never_reads_the_visuals() {
    let dir = tempfile::tempdir().unwrap();
    let plain = Scene::load(scene_in(dir.path(), "")).unwrap();
    let drawn = Scene::parse(
        &format!(
            "{BODY}[[body.visual]]\nshape = {{ kind = \"capsule\", radius_m = 0.01, length_m = 0.2 }}\n{PIVOT}"
        ),
        dir.path().join("drawn.toml"),
    )
    .unwrap();
    let (mut a, mut b) = (plain.build().unwrap(), drawn.build().unwrap());
    for _ in 0..50 {
        a.step().unwrap();
        b.step().unwrap();
    }
    let (pa, pb) = (&a.bodies()[1], &b.bodies()[1]);
    assert_eq!(pa.position_in_world, pb.position_in_world);
    assert_eq!(pa.world_from_body_rotation, pb.world_from_body_rotation);
}

#[test]
fn mistakes_in_visuals_name_the_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[body.visual]]\nmesh = \"missing.stl\"\n",
            "body[0].visual[0].mesh",
            "missing.stl",
        ),
        (
            "[[body.visual]]\nposition_in_body_m = [0.0, 0.0, 0.0]\n",
            "body[0].visual[0]",
            "needs a `shape` or a `mesh`",
        ),
        (
            "[[body.visual]]\nshape = { kind = \"sphere\", radius_m = 0.02 }\nmesh = \"a.stl\"\n",
            "body[0].visual[0]",
            "not both",
        ),
        (
            "[[body.visual]]\nshape = { kind = \"sphere\", radius_m = -1.0 }\n",
            "body[0].visual[0].shape.radius_m",
            "must be positive",
        ),
        (
            "[[body.visual]]\nshape = { kind = \"sphere\", radius_m = 0.02 }\ncolor_rgba = [1.0, 2.0, 0.0]\n",
            "body[0].visual[0].color_rgba",
            "0..1",
        ),
        (
            "[[body.visual]]\nshape = { kind = \"sphere\", radius_m = 0.02 }\nscale = [1.0, 1.0, 1.0]\n",
            "body[0].visual[0].scale",
            "only a mesh is scaled",
        ),
    ];
    for (visual, field, words) in cases {
        let path = scene_in(dir.path(), visual);
        let err = Scene::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("robot.toml:") && err.contains(field) && err.contains(words),
            "{visual}: {err}"
        );
        // The line named is the visual's (after the body's six lines), not the file's start.
        let line: usize = err
            .split(':')
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("no line in {err}"));
        assert!(line >= 2, "{err}");
    }
}
