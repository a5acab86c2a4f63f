//! Issue 43, acceptance 3, on the off-screen surface (Mesa lavapipe): mesh visuals (an OBJ
//! with a material colour and an STL without one, written here) are drawn in their colours at
//! their poses, cast shadows, go to the GPU once however many frames show them, and take the
//! body's shape's place; a mesh that cannot be read stops `demo` at scene load with exit 1,
//! naming the body and the path. Every pixel check is at an image position computed from the
//! geometry (the pinhole projection).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::mesh::{MeshGeometry, SharedMesh};
use ar_multibody::compositor::renderer::LIGHT_TRAVEL_IN_WORLD;
use ar_multibody::compositor::{
    Compositor, CompositorConfig, FrameInput, Overlay, Shading, ShapeInstance, VideoImage,
    VisualShape,
};
use ar_multibody::rig::devices::fixed_view::look_at;
use ar_multibody::rig::method::Method;
use ar_multibody::rig::simulation::RigSimulation;
use image::RgbImage;
use nalgebra::{Isometry3, Point2, Point3, Vector3};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The grey of the plain desk video.
const DESK_GREY: u8 = 160;
/// Half the side of the test cubes (m).
const HALF_M: f32 = 0.02;
/// The OBJ's material colour (Kd), a saturated red.
const MATERIAL_RED: [f32; 3] = [0.9, 0.1, 0.1];

fn camera() -> CameraIntrinsics {
    CameraIntrinsics::ideal(640, 480, 600.0)
}

fn camera_from_world() -> Isometry3<f64> {
    look_at(Point3::new(0.05, -0.5, 0.45), Point3::new(0.0, 0.0, 0.05)).unwrap()
}

fn compositor() -> Compositor {
    let mut config = CompositorConfig::monitor(camera());
    config.show_hud = false;
    Compositor::headless(config).unwrap()
}

fn render(c: &mut Compositor, overlay: &Overlay) -> RgbImage {
    let cam = camera();
    let desk = vec![DESK_GREY; (cam.image_width * cam.image_height * 3) as usize];
    c.render(&FrameInput {
        video: Some(VideoImage {
            width: cam.image_width,
            height: cam.image_height,
            rgb: &desk,
        }),
        camera_from_world: Some(camera_from_world()),
        overlay,
        hud_lines: &[],
    })
    .unwrap()
}

fn at(c: &Compositor, img: &RgbImage, p: &Point3<f64>) -> [u8; 3] {
    let px: Point2<f64> = c
        .view_intrinsics()
        .project(&(camera_from_world() * p))
        .expect("in front of the camera");
    img.get_pixel(px.x.round() as u32, px.y.round() as u32).0
}

/// The cube's corner `i` (bit 0: +x, bit 1: +y, bit 2: +z), centred on the origin.
fn corner(i: usize) -> [f32; 3] {
    [1, 2, 4].map(|bit| if i & bit != 0 { HALF_M } else { -HALF_M })
}

/// The cube's faces as two triangles each, counter-clockwise seen from outside.
fn cube_triangles() -> Vec<[usize; 3]> {
    let quads = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    quads
        .iter()
        .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect()
}

/// A binary STL of the cube.
fn write_stl(path: &Path) {
    let mut out = vec![0u8; 80];
    out.extend_from_slice(&12u32.to_le_bytes());
    for tri in cube_triangles() {
        out.extend_from_slice(&[0u8; 12]);
        for i in tri {
            for x in corner(i) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out.extend_from_slice(&[0u8; 2]);
    }
    std::fs::write(path, out).unwrap();
}

/// An OBJ of the cube with its material library (one red material) beside it.
fn write_obj(path: &Path) {
    let [r, g, b] = MATERIAL_RED;
    std::fs::write(
        path.with_extension("mtl"),
        format!("newmtl red\nKd {r} {g} {b}\n"),
    )
    .unwrap();
    let mtl = path.with_extension("mtl");
    let mut text = format!(
        "mtllib {}\no cube\n",
        mtl.file_name().unwrap().to_string_lossy()
    );
    for i in 0..8 {
        let [x, y, z] = corner(i);
        text += &format!("v {x} {y} {z}\n");
    }
    text += "usemtl red\n";
    for [a, b, c] in cube_triangles() {
        text += &format!("f {} {} {}\n", a + 1, b + 1, c + 1);
    }
    std::fs::write(path, text).unwrap();
}

fn mesh_at(mesh: &SharedMesh, centre: Point3<f64>, color: [f32; 3]) -> ShapeInstance {
    ShapeInstance {
        shape: VisualShape::Mesh(mesh.clone()),
        world_from_shape: Isometry3::translation(centre.x, centre.y, centre.z),
        color,
        shading: Shading::Lit,
    }
}

/// Red, green or blue clearly above the other two channels.
fn dominant(px: [u8; 3]) -> Option<usize> {
    let max = (0..3).max_by_key(|&i| px[i])?;
    (0..3)
        .filter(|&i| i != max)
        .all(|i| u32::from(px[max]) > 2 * u32::from(px[i]) + 20)
        .then_some(max)
}

#[test]
fn an_obj_shows_its_material_colour_and_an_stl_the_instance_colour_with_the_desk_beside() {
    let dir = tempfile::tempdir().unwrap();
    let (obj, stl) = (dir.path().join("cube.obj"), dir.path().join("cube.stl"));
    write_obj(&obj);
    write_stl(&stl);
    let obj = SharedMesh::new(MeshGeometry::load(&obj, [1.0; 3]).unwrap());
    let stl = SharedMesh::new(MeshGeometry::load(&stl, [1.0; 3]).unwrap());
    assert_eq!((obj.triangle_count(), stl.triangle_count()), (12, 12));
    assert_eq!(
        obj.parts[0].rgba.map(|c| [c[0], c[1], c[2]]),
        Some(MATERIAL_RED)
    );
    assert_eq!(stl.parts[0].rgba, None);

    let (left, right) = (Point3::new(-0.06, 0.0, 0.05), Point3::new(0.06, 0.0, 0.05));
    let mut overlay = Overlay::default();
    // The OBJ's material wins over the instance's blue; the STL has only the instance's green.
    overlay.shapes.push(mesh_at(&obj, left, [0.1, 0.1, 0.9]));
    overlay.shapes.push(mesh_at(&stl, right, [0.1, 0.8, 0.1]));
    let mut c = compositor();
    c.set_shadows(false);
    let img = render(&mut c, &overlay);
    let top = |p: Point3<f64>| p + Vector3::new(0.0, 0.0, f64::from(HALF_M));
    let (obj_px, stl_px) = (at(&c, &img, &top(left)), at(&c, &img, &top(right)));
    let desk_px = at(&c, &img, &Point3::new(0.0, 0.12, 0.0));
    eprintln!("obj {obj_px:?}, stl {stl_px:?}, desk {desk_px:?}");
    assert_eq!(dominant(obj_px), Some(0), "the OBJ's red: {obj_px:?}");
    assert_eq!(dominant(stl_px), Some(1), "the STL's green: {stl_px:?}");
    assert_eq!(desk_px, [DESK_GREY; 3], "the desk between and behind them");
    // Just past the cube's side (x = −0.04): the desk.
    let past = at(&c, &img, &Point3::new(-0.12, 0.0, 0.0));
    assert_eq!(past, [DESK_GREY; 3]);

    // With shadows, the desk where the light projects the OBJ's centre is darker.
    c.set_shadows(true);
    let shadowed = render(&mut c, &overlay);
    let l = Vector3::from(LIGHT_TRAVEL_IN_WORLD.map(f64::from));
    let under = left - l * (left.z / l.z);
    let dark = at(&c, &shadowed, &under);
    eprintln!("shadow of the OBJ at {under:?}: {dark:?}");
    assert!(dark.iter().all(|&v| v < DESK_GREY - 30), "{dark:?}");
    assert_eq!(at(&c, &shadowed, &Point3::new(0.0, 0.12, 0.0)), desk_px);
}

/// A mesh's buffers go to the GPU once: frames that move it, and a frame whose overlay puts a
/// marker before it (its node is made again), draw the same buffers; a new scene's mesh (a
/// new shared mesh) is uploaded anew.
#[test]
fn a_mesh_is_uploaded_once_however_many_frames_show_it() {
    let dir = tempfile::tempdir().unwrap();
    let stl = dir.path().join("cube.stl");
    write_stl(&stl);
    let mesh = SharedMesh::new(MeshGeometry::load(&stl, [1.0; 3]).unwrap());
    let mut c = compositor();
    for k in 0..5 {
        let mut overlay = Overlay::default();
        if k >= 3 {
            overlay.push_marker(Point3::new(0.1, 0.1, 0.0), 0.01, [1.0, 1.0, 0.0]);
        }
        let centre = Point3::new(0.01 * f64::from(k), 0.0, 0.05);
        overlay.shapes.push(mesh_at(&mesh, centre, [0.1, 0.8, 0.1]));
        let img = render(&mut c, &overlay);
        let top = centre + Vector3::new(0.0, 0.0, f64::from(HALF_M));
        assert_eq!(dominant(at(&c, &img, &top)), Some(1), "frame {k}");
    }
    assert_eq!(c.mesh_uploads(), 1);
    let reloaded = SharedMesh::new(MeshGeometry::load(&stl, [1.0; 3]).unwrap());
    let mut overlay = Overlay::default();
    overlay.shapes.push(mesh_at(
        &reloaded,
        Point3::new(0.0, 0.0, 0.05),
        [0.1, 0.8, 0.1],
    ));
    render(&mut c, &overlay);
    assert_eq!(c.mesh_uploads(), 2);
}

/// A scene with one body: a capsule at (0, 0, 0.1) whose visual is `mesh` 0.1 m along x.
fn scene_with_mesh(dir: &Path, mesh: &str) -> PathBuf {
    let path = dir.join("robot.toml");
    std::fs::write(
        &path,
        format!(
            "[[body]]\nname = \"link\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
             position_m = [0.0, 0.0, 0.1]\n\
             shape = {{ kind = \"capsule\", radius_m = 0.015, length_m = 0.03 }}\n\
             [[body.visual]]\nmesh = \"{mesh}\"\nposition_in_body_m = [0.1, 0.0, 0.0]\n\
             [[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\n\
             body2 = \"link\"\nanchor_in_world_m = [0.0, 0.0, 0.2]\naxis_in_world = [0.0, 1.0, 0.0]\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_scene_body_with_a_mesh_visual_shows_the_mesh_and_no_longer_its_shape() {
    let dir = tempfile::tempdir().unwrap();
    write_obj(&dir.path().join("cube.obj"));
    let sim = RigSimulation::load(&scene_with_mesh(dir.path(), "cube.obj"), Method::Default)
        .expect("the scene and its mesh load");
    let bodies = sim.bodies();
    let mut overlay = Overlay::default();
    overlay.push_bodies(&bodies);
    assert_eq!(
        overlay.shapes.len(),
        1,
        "only the mesh: {:?}",
        overlay.shapes
    );
    let VisualShape::Mesh(mesh) = &overlay.shapes[0].shape else {
        panic!("not a mesh: {:?}", overlay.shapes[0].shape);
    };
    assert_eq!(mesh.triangle_count(), 12);
    // Read once at load: every snapshot shares the same mesh.
    let again = sim.bodies();
    assert_eq!(again[0].meshes[0].as_ref(), Some(mesh));

    let mut c = compositor();
    c.set_shadows(false);
    let img = render(&mut c, &overlay);
    let body = Point3::new(0.0, 0.0, 0.1);
    let cube_top = Point3::new(0.1, 0.0, 0.1 + f64::from(HALF_M));
    let (shape_px, mesh_px) = (at(&c, &img, &body), at(&c, &img, &cube_top));
    eprintln!("where the capsule was {shape_px:?}, the mesh {mesh_px:?}");
    assert_eq!(shape_px, [DESK_GREY; 3], "the capsule is not drawn");
    assert_eq!(
        dominant(mesh_px),
        Some(0),
        "the mesh in its red: {mesh_px:?}"
    );
}

/// `demo --headless` on `scene`: its exit code and standard error.
fn demo(scene: &Path, dir: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args([
            "demo",
            "--headless",
            "--no-save",
            "--frames",
            "1",
            "--scene",
        ])
        .arg(scene)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_mesh_that_cannot_be_read_stops_the_demo_at_load_naming_the_body_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("cube.stl");
    std::fs::write(&garbage, b"solid nothing\nendsolid nothing\n").unwrap();
    let scene = scene_with_mesh(dir.path(), "cube.stl");
    let (code, stderr) = demo(&scene, dir.path());
    eprintln!("{stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("body \"link\""), "{stderr}");
    assert!(stderr.contains(&garbage.display().to_string()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let missing = scene_with_mesh(dir.path(), "gone.obj");
    let (code, stderr) = demo(&missing, dir.path());
    eprintln!("{stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("gone.obj"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!dir.path().join("demo-frames").exists());
}

/// A URDF with an OBJ visual and no fixed link (so no grab point): `demo` takes it directly,
/// reads its mesh, holds the stylus still and runs to the end.
#[test]
fn the_demo_runs_a_urdf_with_a_mesh_visual_and_no_grab_point() {
    let dir = tempfile::tempdir().unwrap();
    write_obj(&dir.path().join("cube.obj"));
    let urdf = dir.path().join("arm.urdf");
    std::fs::write(
        &urdf,
        r#"<robot name="arm">
  <link name="base"/>
  <joint name="j1" type="continuous">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
  </joint>
  <link name="l1">
    <inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-3" iyz="0" izz="1e-3"/></inertial>
    <visual><origin xyz="0.05 0 0"/><geometry><mesh filename="cube.obj"/></geometry></visual>
  </link>
</robot>
"#,
    )
    .unwrap();
    let (code, stderr) = demo(&urdf, dir.path());
    eprintln!("{stderr}");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("has no grab point"), "{stderr}");
    assert!(
        !stderr.contains("mesh"),
        "no warning about the mesh: {stderr}"
    );
}

/// A body whose shape is a convex (a wedge: a right-triangle prism along y) is drawn as its
/// hull, 8 triangles, not as a box: the camera sees the wedge's thick corner in the body's
/// colour and, through the corner the slope cuts away, the desk.
#[test]
fn a_convex_body_shape_is_drawn_as_its_hull() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wedge.toml");
    let a = 0.02;
    let points: Vec<String> = [-a, a]
        .iter()
        .flat_map(|&y| [[-a, y, -a], [a, y, -a], [-a, y, a]])
        .map(|p| format!("[{}, {}, {}]", p[0], p[1], p[2]))
        .collect();
    std::fs::write(
        &path,
        format!(
            "[[body]]\nname = \"wedge\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
             position_m = [0.0, 0.0, 0.1]\n\
             shape = {{ kind = \"convex\", points_m = [{}] }}\n\
             [[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\n\
             body2 = \"wedge\"\nanchor_in_world_m = [0.0, 0.0, 0.2]\naxis_in_world = [0.0, 1.0, 0.0]\n",
            points.join(", ")
        ),
    )
    .unwrap();
    let sim = RigSimulation::load(&path, Method::Default).expect("the scene loads");
    let mut overlay = Overlay::default();
    overlay.push_bodies(&sim.bodies());
    let VisualShape::Mesh(mesh) = &overlay.shapes[0].shape else {
        panic!("not a mesh: {:?}", overlay.shapes[0].shape);
    };
    assert_eq!(mesh.triangle_count(), 8);
    let mut again = Overlay::default();
    again.push_bodies(&sim.bodies());
    assert_eq!(
        again.shapes[0].shape, overlay.shapes[0].shape,
        "one mesh per shape"
    );

    let mut c = compositor();
    c.set_shadows(false);
    let img = render(&mut c, &overlay);
    let thick = at(&c, &img, &Point3::new(-0.012, -a, 0.1 - 0.012));
    let cut_away = at(&c, &img, &Point3::new(0.018, -a, 0.1 + 0.018));
    eprintln!("thick corner {thick:?}, cut-away corner {cut_away:?}");
    assert_ne!(thick, [DESK_GREY; 3], "the wedge is drawn");
    assert_eq!(cut_away, [DESK_GREY; 3], "not its bounding box");
}
