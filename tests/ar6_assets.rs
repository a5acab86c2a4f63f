//! Issue 43: the shipped `ar6` robot's mesh visual is of this project's own making. Its tool
//! flange carries a two-finger gripper, `assets/robots/meshes/ar6_gripper.obj`, written by
//! [`gripper_obj`] here: the test checks that the committed file is exactly what the generator
//! writes (`AR6_WRITE_MESHES=1 cargo test --test ar6_assets` writes it again after a change),
//! that the mesh is closed and wound outward, that the importer's mesh loader (`mesh-loader`)
//! reads it whole, and that `ar6.urdf` imports with it as a mesh
//! visual of the flange's body, found relative to the URDF's folder.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// A triangle mesh: vertices (metres) and triangles (indices, counter-clockwise seen from
/// outside).
#[derive(Default)]
struct Mesh {
    vertices: Vec<[f64; 3]>,
    triangles: Vec<[usize; 3]>,
}

impl Mesh {
    /// Adds a convex solid between two horizontal polygons of as many corners (counter-
    /// clockwise seen from above), `bottom` at height `z0` and `top` at `z1`: a prism, a
    /// frustum or a tapered finger.
    fn loft(&mut self, bottom: &[[f64; 2]], z0: f64, top: &[[f64; 2]], z1: f64) {
        let n = bottom.len();
        let b0 = self.vertices.len();
        self.vertices
            .extend(bottom.iter().map(|&[x, y]| [x, y, z0]));
        self.vertices.extend(top.iter().map(|&[x, y]| [x, y, z1]));
        let t0 = b0 + n;
        for k in 1..n - 1 {
            // The bottom faces down (clockwise from above), the top up.
            self.triangles.push([b0, b0 + k + 1, b0 + k]);
            self.triangles.push([t0, t0 + k, t0 + k + 1]);
        }
        for k in 0..n {
            let j = (k + 1) % n;
            self.triangles.push([b0 + k, b0 + j, t0 + j]);
            self.triangles.push([b0 + k, t0 + j, t0 + k]);
        }
    }

    /// The mesh as Wavefront OBJ text, numbers to the micrometre.
    fn obj(&self, header: &str) -> String {
        let mut out = String::new();
        for line in header.lines() {
            let _ = writeln!(out, "# {line}");
        }
        let _ = writeln!(out, "o ar6_gripper");
        for [x, y, z] in &self.vertices {
            let _ = writeln!(out, "v {x:.6} {y:.6} {z:.6}");
        }
        for [a, b, c] in &self.triangles {
            let _ = writeln!(out, "f {} {} {}", a + 1, b + 1, c + 1);
        }
        out
    }
}

/// A rectangle centred on (`cx`, `cy`), counter-clockwise from above.
fn rect(cx: f64, cy: f64, half_x: f64, half_y: f64) -> [[f64; 2]; 4] {
    [
        [cx - half_x, cy - half_y],
        [cx + half_x, cy - half_y],
        [cx + half_x, cy + half_y],
        [cx - half_x, cy + half_y],
    ]
}

/// A regular polygon of `n` corners and radius `r` about the origin, counter-clockwise.
fn circle(n: usize, r: f64) -> Vec<[f64; 2]> {
    (0..n)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / n as f64;
            [r * a.cos(), r * a.sin()]
        })
        .collect()
}

/// The ar6's gripper, in the tool flange's frame (z out of the flange, metres): a coupling
/// disc on the flange, a palm, and two fingers along x that taper toward their tips.
fn gripper_obj() -> String {
    let mut m = Mesh::default();
    // Coupling: a 16-sided disc, 36 mm across, 8 mm thick, on the flange's face (z = 6 mm).
    m.loft(&circle(16, 0.018), 0.006, &circle(16, 0.018), 0.014);
    // Palm: 52 × 24 mm, 16 mm tall, chamfered toward its top.
    m.loft(
        &rect(0.0, 0.0, 0.026, 0.012),
        0.014,
        &rect(0.0, 0.0, 0.024, 0.010),
        0.030,
    );
    // Fingers: 8 × 18 mm at the palm, 5 × 12 mm at the tips, 40 mm long, 20 mm apart.
    for side in [-1.0, 1.0] {
        m.loft(
            &rect(side * 0.014, 0.0, 0.004, 0.009),
            0.030,
            &rect(side * 0.012, 0.0, 0.0025, 0.006),
            0.070,
        );
    }
    m.obj(
        "ar6 gripper: the tool flange's visual of the ar-multibody project's own ar6 robot.\n\
         Written by tests/ar6_assets.rs (AR6_WRITE_MESHES=1 cargo test --test ar6_assets);\n\
         do not edit by hand. Metres, in the tool flange's frame.",
    )
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_shipped_gripper_mesh_is_what_its_generator_writes() {
    let path = root().join("assets/robots/meshes/ar6_gripper.obj");
    let text = gripper_obj();
    if std::env::var_os("AR6_WRITE_MESHES").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let shipped = std::fs::read_to_string(&path).unwrap();
    assert!(
        shipped == text,
        "{} differs from its generator's output: run AR6_WRITE_MESHES=1 cargo test --test \
         ar6_assets",
        path.display()
    );
}

#[test]
fn the_gripper_is_closed_and_wound_outward() {
    let text = gripper_obj();
    let vertices: Vec<[f64; 3]> = text
        .lines()
        .filter_map(|l| l.strip_prefix("v "))
        .map(|l| {
            let v: Vec<f64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    let faces: Vec<[usize; 3]> = text
        .lines()
        .filter_map(|l| l.strip_prefix("f "))
        .map(|l| {
            let f: Vec<usize> = l
                .split(' ')
                .map(|x| x.parse::<usize>().unwrap() - 1)
                .collect();
            [f[0], f[1], f[2]]
        })
        .collect();
    assert_eq!((vertices.len(), faces.len()), (32 + 8 * 3, 60 + 12 * 3));
    // Closed and consistently wound: every directed edge once, and its reverse once.
    let mut edges: HashMap<(usize, usize), usize> = HashMap::new();
    for f in &faces {
        for k in 0..3 {
            *edges.entry((f[k], f[(k + 1) % 3])).or_default() += 1;
        }
    }
    for (&(a, b), &n) in &edges {
        assert_eq!((n, edges.get(&(b, a))), (1, Some(&1)), "edge {a}-{b}");
    }
    // Wound outward: the signed volume (divergence theorem) is positive.
    let volume_m3: f64 = faces
        .iter()
        .map(|f| {
            let [a, b, c] = f.map(|i| nalgebra::Vector3::from(vertices[i]));
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum();
    assert!((2.5e-5..4.5e-5).contains(&volume_m3), "{volume_m3} m³");
    // Within the palm's 52 mm × the disc's 36 mm, above the flange's 6 mm face.
    for [x, y, z] in &vertices {
        assert!(x.abs() <= 0.026 && y.abs() <= 0.018 && (0.006..=0.070).contains(z));
    }
}

#[test]
fn the_ar6_imports_with_the_gripper_as_the_flange_body_s_mesh_visual() {
    let urdf = root().join("assets/robots/ar6.urdf");
    let scene = ar_multibody::scene_load::scene_text(&urdf).unwrap();
    let mesh = root().join("assets/robots/meshes/ar6_gripper.obj");
    let wrist_3 = scene.find("name = \"wrist_3\"").unwrap();
    let next_body = scene[wrist_3..]
        .find("[[joint]]")
        .map_or(scene.len(), |i| wrist_3 + i);
    let expected = format!("mesh = \"{}\"", mesh.display());
    assert!(
        scene[wrist_3..next_body].contains(&expected),
        "{expected} not in wrist_3's tables:\n{}",
        &scene[wrist_3..next_body]
    );
}

#[test]
fn the_importer_s_mesh_loader_reads_the_whole_gripper() {
    let path = root().join("assets/robots/meshes/ar6_gripper.obj");
    let at = ar_import::error::Location {
        file: path.clone(),
        line: 0,
    };
    let mesh = ar_import::mesh::load(&path, &nalgebra::Vector3::repeat(1.0), &at).unwrap();
    assert_eq!(mesh.triangle_count(), 60 + 12 * 3);
    let top_m = mesh.vertices().map(|v| v.z).fold(f64::MIN, f64::max);
    let width_m = mesh.vertices().map(|v| v.x).fold(f64::MIN, f64::max);
    assert!((top_m - 0.070).abs() < 1e-7 && (width_m - 0.026).abs() < 1e-7);
}
