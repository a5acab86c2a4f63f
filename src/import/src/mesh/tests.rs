//! Meshes written here by hand (an STL box, an OBJ tetrahedron) against closed forms.

use super::*;
use nalgebra::Matrix3;

fn here() -> Location {
    Location {
        file: "robot.urdf".into(),
        line: 7,
    }
}

/// A binary STL of the box [0, a] × [0, b] × [0, c], twelve outward triangles.
fn box_stl(a: f32, b: f32, c: f32) -> Vec<u8> {
    let v = |i: u8| {
        [
            if i & 1 != 0 { a } else { 0.0 },
            if i & 2 != 0 { b } else { 0.0 },
            if i & 4 != 0 { c } else { 0.0 },
        ]
    };
    // Faces as quads of corner indices, counter-clockwise seen from outside.
    let quads = [
        [0, 2, 3, 1], // z = 0
        [4, 5, 7, 6], // z = c
        [0, 1, 5, 4], // y = 0
        [2, 6, 7, 3], // y = b
        [0, 4, 6, 2], // x = 0
        [1, 3, 7, 5], // x = a
    ];
    let mut out = vec![0u8; 80];
    out.extend_from_slice(&12u32.to_le_bytes());
    for q in quads {
        for tri in [[q[0], q[1], q[2]], [q[0], q[2], q[3]]] {
            out.extend_from_slice(&[0u8; 12]);
            for i in tri {
                for x in v(i) {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            out.extend_from_slice(&[0u8; 2]);
        }
    }
    out
}

#[test]
fn a_box_has_the_closed_form_volume_centroid_and_inertia() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("box.stl");
    std::fs::write(&path, box_stl(0.2, 0.1, 0.05)).unwrap();
    let mesh = load(&path, &Vector3::repeat(1.0), &here()).unwrap();
    assert_eq!(mesh.triangle_count(), 12);
    let m = mass_properties(&mesh).unwrap();
    let (a, b, c) = (0.2f32 as f64, 0.1f32 as f64, 0.05f32 as f64);
    let volume = a * b * c;
    assert!((m.volume_m3 - volume).abs() < 1e-15, "{m:?}");
    assert!((m.centroid_m - Point3::new(a / 2.0, b / 2.0, c / 2.0)).norm() < 1e-15);
    let expected = Matrix3::from_diagonal(&Vector3::new(
        volume * (b * b + c * c) / 12.0,
        volume * (a * a + c * c) / 12.0,
        volume * (a * a + b * b) / 12.0,
    ));
    assert!(
        (m.inertia_per_density_m5 - expected).amax() < 1e-18,
        "{m:?}"
    );
}

#[test]
fn a_scale_in_millimetres_and_a_mirror_keep_the_solid() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("box_mm.stl");
    std::fs::write(&path, box_stl(200.0, 100.0, 50.0)).unwrap();
    let mm = Vector3::new(-0.001, 0.001, 0.001);
    let mesh = load(&path, &mm, &here()).unwrap();
    let m = mass_properties(&mesh).unwrap();
    assert!((m.volume_m3 - 0.2 * 0.1 * 0.05).abs() < 1e-12, "{m:?}");
    assert!((m.centroid_m - Point3::new(-0.1, 0.05, 0.025)).norm() < 1e-12);
}

/// A tetrahedron with a corner at the origin and its edges along the axes: volume abc/6,
/// centroid (a, b, c)/4, and, about the origin, ∫x² dV = a³bc/60, ∫xy dV = a²b²c/120.
#[test]
fn an_obj_tetrahedron_has_its_closed_form_products_of_inertia() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tet.obj");
    let (a, b, c) = (0.3, 0.2, 0.1);
    std::fs::write(
        &path,
        format!("v 0 0 0\nv {a} 0 0\nv 0 {b} 0\nv 0 0 {c}\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"),
    )
    .unwrap();
    let mesh = load(&path, &Vector3::repeat(1.0), &here()).unwrap();
    let m = mass_properties(&mesh).unwrap();
    let (a, b, c) = (a as f32 as f64, b as f32 as f64, c as f32 as f64);
    let v = a * b * c / 6.0;
    assert!((m.volume_m3 - v).abs() < 1e-16, "{m:?}");
    let g = Vector3::new(a, b, c) / 4.0;
    assert!((m.centroid_m.coords - g).norm() < 1e-15);
    let xx0 = a * a * a * b * c / 60.0;
    let yy0 = a * b * b * b * c / 60.0;
    let zz0 = a * b * c * c * c / 60.0;
    let ixx = yy0 + zz0 - v * (g.y * g.y + g.z * g.z);
    let ixy = -(a * a * b * b * c / 120.0 - v * g.x * g.y);
    let i = m.inertia_per_density_m5;
    assert!((i[(0, 0)] - ixx).abs() < 1e-18, "{i}");
    assert!(
        (i[(0, 1)] - ixy).abs() < 1e-18 && i[(0, 1)] == i[(1, 0)],
        "{i}"
    );
    let iyy = xx0 + zz0 - v * (g.z * g.z + g.x * g.x);
    assert!((i[(1, 1)] - iyy).abs() < 1e-18, "{i}");
    let hull = convex_hull(&mesh, &path, &here()).unwrap();
    assert_eq!((hull.vertices_m.len(), hull.triangles.len()), (4, 4));
}

#[test]
fn missing_empty_and_flat_meshes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere.stl");
    let err = load(&missing, &Vector3::repeat(1.0), &here()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("nowhere.stl") && text.contains("cannot read"),
        "{text}"
    );

    let garbage = dir.path().join("garbage.stl");
    std::fs::write(&garbage, b"solid nothing\nendsolid nothing\n").unwrap();
    let err = load(&garbage, &Vector3::repeat(1.0), &here()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("robot.urdf:7: <mesh ") && text.contains("garbage.stl"),
        "{text}"
    );

    let flat = dir.path().join("flat.obj");
    std::fs::write(
        &flat,
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n",
    )
    .unwrap();
    let mesh = load(&flat, &Vector3::repeat(1.0), &here()).unwrap();
    let err = mass_properties(&mesh).unwrap_err();
    assert!(err.contains("encloses no volume"), "{err}");
    let err = convex_hull(&mesh, &flat, &here()).unwrap_err();
    assert!(err.to_string().contains("span no volume"), "{err}");
}
