//! `scene import --collisions` (issue 43, acceptance 3): a URDF link whose collision is an STL
//! mesh (a cube written here, off the link's origin) becomes a convex collider in the body
//! frame; imported with a floating base 5 cm above the desk and simulated, it falls and rests
//! on the desk at its closed-form height with no penetration. Without the option the
//! collisions are not used, and the warning names the option.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

#[path = "support/cli.rs"]
mod cli;
use cli::{ok, run, s};

/// Edge of the cube (m): exact in f32 (the mesh reader keeps vertices in f32).
const EDGE_M: f64 = 0.03125;

/// An ASCII STL of the closed cube [0, a]³, its 12 triangles counter-clockwise from outside.
fn cube_stl(a: f64) -> String {
    let corner = |k: usize| [k & 1, (k >> 1) & 1, (k >> 2) & 1].map(|b| b as f64 * a);
    // Each face as four corners (bit patterns) counter-clockwise seen from outside.
    let faces: [[usize; 4]; 6] = [
        [0, 2, 3, 1], // z = 0, normal −z
        [4, 5, 7, 6], // z = a
        [0, 1, 5, 4], // y = 0
        [2, 6, 7, 3], // y = a
        [0, 4, 6, 2], // x = 0
        [1, 3, 7, 5], // x = a
    ];
    let mut out = String::from("solid cube\n");
    for f in faces {
        for tri in [[f[0], f[1], f[2]], [f[0], f[2], f[3]]] {
            out.push_str("  facet normal 0 0 0\n    outer loop\n");
            for k in tri {
                let [x, y, z] = corner(k);
                let _ = writeln!(out, "      vertex {x:?} {y:?} {z:?}");
            }
            out.push_str("    endloop\n  endfacet\n");
        }
    }
    out.push_str("endsolid cube\n");
    out
}

/// A one-link URDF: 0.2 kg, centre of mass at the cube's centre, the cube mesh as collision.
fn block_urdf() -> String {
    let i = 0.2 * EDGE_M * EDGE_M / 6.0;
    let c = EDGE_M / 2.0;
    format!(
        r#"<?xml version="1.0"?>
<robot name="block">
  <link name="block">
    <inertial>
      <origin xyz="{c:?} {c:?} {c:?}"/>
      <mass value="0.2"/>
      <inertia ixx="{i:?}" ixy="0" ixz="0" iyy="{i:?}" iyz="0" izz="{i:?}"/>
    </inertial>
    <collision>
      <geometry><mesh filename="cube.stl"/></geometry>
    </collision>
  </link>
</robot>
"#
    )
}

fn write_model(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("cube.stl"), cube_stl(EDGE_M)).unwrap();
    let urdf = dir.join("block.urdf");
    std::fs::write(&urdf, block_urdf()).unwrap();
    urdf
}

/// The number after `what` in `text` (up to the next space).
fn number_after(text: &str, what: &str) -> f64 {
    let at = text
        .find(what)
        .unwrap_or_else(|| panic!("no {what:?} in:\n{text}"))
        + what.len();
    text[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// `scene import` of the block model (written into `dir`) with a floating base and `extra`
/// options, into `dir/block.toml`: the run and the scene's path.
fn import_block(dir: &Path, extra: &[&str]) -> (Output, std::path::PathBuf) {
    let urdf = write_model(dir);
    let scene = dir.join("block.toml");
    let mut args = vec![
        "scene",
        "import",
        s(&urdf),
        "--out",
        s(&scene),
        "--floating-base",
    ];
    args.extend_from_slice(extra);
    let out = ok(run(&args));
    (out, scene)
}

#[test]
fn an_imported_stl_collision_falls_and_rests_on_the_desk() {
    let dir = tempfile::tempdir().unwrap();
    let (out, scene) = import_block(dir.path(), &["--collisions", "--base-at", "0,0,0.05"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not used"), "{stderr}");
    let text = std::fs::read_to_string(&scene).unwrap();
    assert!(text.contains("kind = \"convex\""), "{text}");
    assert!(text.contains("\n[contact]\n"), "{text}");
    assert!(text.contains("name = \"desk\""), "{text}");
    // The hull's vertices are the cube's corners in the body frame (the centre of mass).
    let loaded = ar_dynamics::Scene::parse(&text, &scene).unwrap();
    let shape = loaded.bodies[1].shape.clone().unwrap();
    let ar_dynamics::Shape::Convex { points_m } = shape else {
        panic!("{shape:?}");
    };
    assert_eq!(points_m.len(), 8);
    for p in points_m.iter() {
        for x in p {
            assert!((x.abs() - EDGE_M / 2.0).abs() < 1e-15, "{p:?}");
        }
    }

    // Dropped from 5 cm (its bottom face at z = 0.05 m), 1.5 s.
    let poses = dir.path().join("poses.csv");
    let contacts = dir.path().join("contacts.csv");
    let out = ok(run(&[
        "simulate",
        s(&scene),
        "--duration",
        "1.5",
        "--poses",
        s(&poses),
        "--contacts",
        s(&contacts),
    ]));
    let summary = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let max_penetration = number_after(&summary, "max penetration ");
    println!("{summary}");
    assert!(
        max_penetration <= 1e-6,
        "max penetration {max_penetration} m"
    );
    // The last row: the centre of mass at half the edge above the desk, at rest.
    let poses = std::fs::read_to_string(&poses).unwrap();
    let last: Vec<f64> = poses
        .lines()
        .last()
        .unwrap()
        .split(',')
        .filter_map(|f| f.parse().ok())
        .collect();
    let (t, z) = (last[0], last[3]);
    assert!((t - 1.5).abs() < 1e-9, "last row at t = {t}");
    assert!((z - EDGE_M / 2.0).abs() <= 1e-6, "rests at z = {z} m");
    // And the contacts of the last step: four corners of the bottom face, none penetrating.
    let contacts = std::fs::read_to_string(&contacts).unwrap();
    let last_t = contacts.lines().last().unwrap().split(',').next().unwrap();
    let gaps: Vec<f64> = contacts
        .lines()
        .filter(|l| l.split(',').next() == Some(last_t))
        .map(|l| l.split(',').nth(9).unwrap().parse().unwrap())
        .collect();
    assert!(gaps.len() >= 3, "{gaps:?}");
    assert!(gaps.iter().all(|&g| g >= -1e-6), "{gaps:?}");
}

#[test]
fn without_the_option_the_collisions_are_not_used_and_the_warning_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let (out, scene) = import_block(dir.path(), &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 collision shapes not used") && stderr.contains("--collisions"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&scene).unwrap();
    assert!(
        !text.contains("convex") && !text.contains("[contact]"),
        "{text}"
    );
}
