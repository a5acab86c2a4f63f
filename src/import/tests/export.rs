//! `export::mjcf` on the shipped scenes: the ten pendula (a tree) exported and read back by
//! the MJCF reader and the emitter give the same bodies and joints to round-off; the cross
//! lift (loops, slots, springs) becomes a spanning tree with its slots as slide + hinge,
//! its other loop joints as `connect` rows and its springs as tendons, and says what it drops.

use std::path::PathBuf;

use ar_dynamics::scene::Scene;
use ar_import::{emit, export, mjcf, ImportOptions};

fn shipped(name: &str) -> Scene {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../assets/scenes/{name}.toml"));
    Scene::load(&path).expect("a shipped scene loads")
}

#[test]
fn a_tree_scene_survives_export_and_import() {
    let original = shipped("ten_pendula");
    let exported = export::mjcf(&original);
    assert!(
        exported.warnings.iter().all(|w| w.contains("[[support]]")),
        "{:?}",
        exported.warnings
    );
    let path = PathBuf::from("ten_pendula.xml");
    let model = mjcf::read_str(&exported.text, &path, &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}\n{}", exported.text));
    let emitted = emit::scene_toml(&model, &ImportOptions::default()).unwrap();
    let back =
        Scene::parse(&emitted.text, &path).unwrap_or_else(|e| panic!("{e}\n{}", emitted.text));
    assert_eq!(back.bodies.len(), original.bodies.len());
    for (a, b) in original.bodies.iter().zip(&back.bodies).skip(1) {
        assert_eq!(a.name, b.name);
        assert!((a.mass_kg - b.mass_kg).abs() < 1e-15);
        assert!(
            (a.position_in_world - b.position_in_world).norm() < 1e-15,
            "{}",
            a.name
        );
        let inertia = |x: &ar_dynamics::Body| {
            let r = (x.world_from_body_rotation * x.body_from_principal).to_rotation_matrix();
            r.matrix()
                * nalgebra::Matrix3::from_diagonal(&x.principal_inertia_kg_m2)
                * r.matrix().transpose()
        };
        assert!((inertia(a) - inertia(b)).norm() < 1e-18, "{}", a.name);
    }
    assert_eq!(back.joints.len(), original.joints.len());
    for (a, b) in original.joints.iter().zip(&back.joints) {
        assert_eq!((a.name.as_str(), a.kind), (b.name.as_str(), b.kind));
        let anchor = |s: &Scene, j: &ar_dynamics::Joint| {
            s.bodies[j.body2].point_in_world(&j.anchor2_in_body2)
        };
        assert!(
            (anchor(&original, a) - anchor(&back, b)).norm() < 1e-15,
            "{}",
            a.name
        );
    }
}

#[test]
fn the_cross_lift_becomes_a_tree_with_equality_rows_and_tendons() {
    let scene = shipped("cross_lift");
    let exported = export::mjcf(&scene);
    let x = &exported.text;
    let count = |s: &str| x.matches(s).count();
    // 11 bodies; 20 joints: the 4 slots (a slide and a hinge each) and 7 hinges make the
    // tree, the 9 other hinges close loops as two connects each.
    assert_eq!(count("<body "), 11);
    assert_eq!(count("type=\"slide\""), 4);
    assert_eq!(count("_slide\" type=\"slide\""), 4);
    assert_eq!(count("<joint "), 11 + 4);
    assert_eq!(count("<connect "), 2 * (scene.joints.len() - 11));
    assert_eq!(count("<spatial "), 2);
    assert!(
        x.contains("stiffness=\"40000.0\" damping=\"2000.0\" springlength=\"0.34460779678390563\"")
    );
    assert_eq!(
        exported.warnings,
        vec!["[[support]] (drawn only): not exported".to_owned()]
    );
    let doc = roxmltree::Document::parse(x).expect("well-formed XML");
    assert_eq!(doc.root_element().attribute("model"), Some("cross_lift"));
}
