//! `ar-multibody scene export SCENE --mjcf OUT.xml`: a shipped scene becomes MJCF with its
//! warnings on stderr; a scene that cannot be read gives exit 1 naming it and writes nothing,
//! leaving an existing output file as it was.

#[path = "support/cli.rs"]
mod cli;
use cli::run;

#[test]
fn a_shipped_scene_is_exported_with_its_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("cross_lift.xml");
    let out = run(&[
        "scene",
        "export",
        "cross_lift",
        "--mjcf",
        out_path.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "warning: assets/scenes/cross_lift.toml: [[support]] (drawn only): not exported"
    );
    let xml = std::fs::read_to_string(&out_path).unwrap();
    assert!(xml.contains("<mujoco model=\"cross_lift\">"), "{xml}");
    assert_eq!(xml.matches("<body ").count(), 11);
}

#[test]
fn a_bad_scene_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bad.toml");
    std::fs::write(&scene, "[[body]]\nname = \"b\"\nmass_kg = -1.0\n").unwrap();
    let out_path = dir.path().join("out.xml");
    std::fs::write(&out_path, "before").unwrap();
    let out = run(&[
        "scene",
        "export",
        scene.to_str().unwrap(),
        "--mjcf",
        out_path.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.toml:"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "before");
    let fresh = dir.path().join("fresh.xml");
    let out = run(&[
        "scene",
        "export",
        "no_such_scene",
        "--mjcf",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!fresh.exists());
}
