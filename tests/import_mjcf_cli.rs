//! MJCF through the commands: `scene import MODEL.xml` then `simulate` gives the same bytes as
//! `simulate MODEL.xml`; bad MJCF gives exit 1 with file, line and element, and no output file.

#[path = "support/cli.rs"]
mod cli;
use cli::{run, s};

#[test]
fn an_imported_mjcf_simulates_to_the_same_bytes_as_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = "tests/import/models/slider_crank.xml";
    let scene = dir.path().join("crank.toml");
    let out = run(&["scene", "import", model, "--out", s(&scene)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    for (source, poses) in [(model, &a), (s(&scene), &b)] {
        let out = run(&["simulate", source, "--duration", "0.2", "--poses", s(poses)]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(a.len() > 1000);
    assert_eq!(a, b);
}

#[test]
fn bad_mjcf_is_exit_1_with_file_line_and_element_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("malformed", "<mujoco><worldbody>\n<body><geom size=\"1\"></body>\n</worldbody></mujoco>", ":2: malformed XML"),
        (
            "two_joints",
            "<mujoco><worldbody>\n<body name=\"u\"><joint/>\n<joint name=\"j2\"/><geom size=\"0.1\"/></body>\n</worldbody></mujoco>",
            ":3: <joint \"j2\">: body `u` has 2 joints",
        ),
        (
            "unknown_body",
            "<mujoco><worldbody><body name=\"a\"><joint/><geom size=\"0.1\"/></body></worldbody>\n<equality><connect body1=\"a\" body2=\"b\" anchor=\"0 0 0\"/></equality></mujoco>",
            ":2: <connect>: attribute `body2`: no body `b`",
        ),
        (
            "missing_mesh",
            "<mujoco><asset>\n<mesh name=\"m\" file=\"gone.stl\"/></asset></mujoco>",
            ":2: <mesh \"m\">: attribute `file`: the mesh file",
        ),
        (
            "massless",
            "<mujoco><worldbody>\n<body name=\"a\"><joint/></body></worldbody></mujoco>",
            ":2: <joint \"a_joint\">: its child link \"a\" has no mass and moves",
        ),
    ];
    for (name, text, expected) in cases {
        let model = dir.path().join(format!("{name}.xml"));
        std::fs::write(&model, text).unwrap();
        let scene = dir.path().join(format!("{name}.toml"));
        let out = run(&["scene", "import", s(&model), "--out", s(&scene)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(&format!("{name}.xml")), "{name}: {stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(!scene.exists(), "{name}: an output file was written");
    }
}
