//! URDF import (issue 43) through the commands, with the project's own models
//! (tests/import/): the imported three-link arm moves as the same arm written by hand, `scene
//! import` + `simulate` gives the same bytes as `simulate FILE.urdf`, and every bad input is
//! refused with exit 1, the file, the line and the element, and no output file.

use std::path::Path;

#[path = "support/cli.rs"]
mod cli;
use cli::{ok, run, s};

const ARM_URDF: &str = "tests/import/three_link.urdf";
const ARM_TOML: &str = "tests/import/three_link.toml";

/// (t, body, x, y, z) of a poses CSV.
fn poses(path: &Path) -> Vec<(String, String, [f64; 3])> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let x = |k: usize| f[k].parse::<f64>().unwrap();
            (f[0].to_owned(), f[1].to_owned(), [x(2), x(3), x(4)])
        })
        .collect()
}

#[test]
fn the_imported_arm_moves_as_the_hand_written_one() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("arm.toml");
    ok(run(&[
        "scene",
        "import",
        ARM_URDF,
        "--out",
        s(&scene),
        "--no-limits",
    ]));
    for method in [
        &["--method", "default"][..],
        &["--method", "articulated", "--integrator", "rk4"][..],
    ] {
        let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
        for (input, out) in [(s(&scene), &a), (ARM_TOML, &b)] {
            let mut args = vec!["simulate", input, "--duration", "0.5", "--dt", "0.001"];
            args.extend_from_slice(method);
            args.extend_from_slice(&["--poses", s(out)]);
            ok(run(&args));
        }
        let (a, b) = (poses(&a), poses(&b));
        assert_eq!(a.len(), 3 * 500);
        let mut worst = 0.0_f64;
        for (ra, rb) in a.iter().zip(&b) {
            assert_eq!((&ra.0, &ra.1), (&rb.0, &rb.1));
            for k in 0..3 {
                worst = worst.max((ra.2[k] - rb.2[k]).abs());
            }
        }
        // The hand-written numbers (0.15) and the computed ones (0.1 + 0.05) differ in the last
        // bit; a chaotic triple pendulum grows that over 0.5 s, but not to a micrometre.
        assert!(worst < 1e-9, "{method:?}: {worst:e} m");
        // It has swung: the last link is far from its start at x = 0.25 m.
        let end = a.last().unwrap();
        assert!((end.2[0] - 0.25).abs() > 0.1, "{end:?}");
    }
}

#[test]
fn import_then_simulate_is_byte_identical_to_simulating_the_urdf() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("three_link.toml");
    let out = ok(run(&["scene", "import", ARM_URDF, "--out", s(&scene)]));
    let warnings = String::from_utf8_lossy(&out.stderr);
    let urdf = std::fs::read_to_string(ARM_URDF).unwrap();
    let at = format!(
        "three_link.urdf:{}: <transmission> ignored",
        line_of(&urdf, "<transmission")
    );
    assert!(warnings.contains(&at), "{warnings}");
    let outputs = |input: &str, tag: &str| {
        let (csv, poses) = (
            dir.path().join(format!("{tag}.csv")),
            dir.path().join(format!("{tag}_poses.csv")),
        );
        let out = ok(run(&[
            "simulate",
            input,
            "--duration",
            "0.3",
            "--csv",
            s(&csv),
            "--poses",
            s(&poses),
        ]));
        (
            std::fs::read(csv).unwrap(),
            std::fs::read(poses).unwrap(),
            // The summary less its input's name and its wall-clock lines.
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter(|l| !l.starts_with("wall time") && !l.starts_with("real-time"))
                .collect::<Vec<_>>()
                .join("\n")
                .replace(input, "SCENE"),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let direct = outputs(ARM_URDF, "direct");
    let imported = outputs(s(&scene), "imported");
    assert_eq!(direct.0, imported.0, "main CSV");
    assert_eq!(direct.1, imported.1, "poses CSV");
    assert_eq!(direct.2, imported.2, "summary");
    // The direct run says what the import left out, once.
    assert_eq!(
        direct.3.matches("<transmission> ignored").count(),
        1,
        "{}",
        direct.3
    );
    assert!(imported.3.is_empty(), "{}", imported.3);
}

/// The arm with one edit, written to `dir`.
fn variant(dir: &Path, name: &str, from: &str, to: &str) -> (std::path::PathBuf, String) {
    let text = std::fs::read_to_string(ARM_URDF).unwrap();
    assert!(text.contains(from), "{from}");
    let text = text.replacen(from, to, 1);
    let path = dir.join(format!("{name}.urdf"));
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn bad_inputs_exit_1_with_file_line_and_element_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let l2_inertia = "<inertia ixx=\"2e-6\" ixy=\"0\" ixz=\"0\" iyy=\"8.5e-5\" iyz=\"0\" izz=\"8.5e-5\"/>\n    </inertial>\n    <visual><geometry><box size=\"0.1 0.01 0.01\"/></geometry></visual>\n  </link>\n  <joint name=\"j3\"";
    // (case, from, to, the line's marker in the edited text, the element in the message)
    let cases: [(&str, &str, &str, &str, &str); 8] = [
        (
            "malformed",
            "<link name=\"l3\">",
            "<link name=\"l3\"",
            "<link name=\"l3\"",
            "malformed XML",
        ),
        (
            "missing_child",
            "<child link=\"l2\"/>",
            "<child link=\"l9\"/>",
            "<joint name=\"j2\"",
            "<joint \"j2\">: its child link \"l9\" does not exist",
        ),
        (
            "cycle",
            "<parent link=\"base\"/>\n    <child link=\"l1\"/>",
            "<parent link=\"l3\"/>\n    <child link=\"l1\"/>",
            "<joint name=\"j1\"",
            "<joint \"j1\">: the links form a cycle",
        ),
        (
            "two_parents",
            "<parent link=\"l3\"/>\n    <child link=\"tip\"/>",
            "<parent link=\"l3\"/>\n    <child link=\"l2\"/>",
            "<joint name=\"tip_joint\"",
            "link \"l2\" has two parents",
        ),
        (
            "zero_inertia",
            "<inertia ixx=\"2e-6\"",
            "<inertia ixx=\"0\"",
            "<link name=\"l1\">",
            "<link \"l1\">: the inertia tensor is not positive definite",
        ),
        (
            "not_pd",
            l2_inertia,
            &l2_inertia.replacen("ixy=\"0\"", "ixy=\"1e-4\"", 1),
            "<link name=\"l2\">",
            "<link \"l2\">: the inertia tensor is not positive definite",
        ),
        (
            "zero_mass",
            "<mass value=\"0.1\"/>",
            "<mass value=\"0\"/>",
            "<joint name=\"j1\"",
            "child link \"l1\" has no mass",
        ),
        (
            "missing_mesh",
            "<box size=\"0.1 0.01 0.01\"/>",
            "<mesh filename=\"package://arm_meshes/l1.stl\"/>",
            "<visual><geometry><mesh",
            "mesh \"package://arm_meshes/l1.stl\" not found; tried: ",
        ),
    ];
    let kept = dir.path().join("kept.toml");
    std::fs::write(&kept, "# the user's own scene\n").unwrap();
    for (name, from, to, marker, message) in cases {
        let (path, text) = variant(dir.path(), name, from, to);
        // A broken start tag: the parser stops at the next line's tag.
        let line = line_of(&text, marker) + usize::from(name == "malformed");
        for out_file in [dir.path().join(format!("{name}.toml")), kept.clone()] {
            let out = run(&[
                "scene",
                "import",
                s(&path),
                "--out",
                s(&out_file),
                "--package-path",
                s(dir.path()),
            ]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
            let at = format!("{}:{line}:", path.display());
            assert!(stderr.contains(&at), "{name}: wants {at} in {stderr}");
            assert!(
                stderr.contains(message),
                "{name}: wants {message:?} in {stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "{name}: one message: {stderr}");
        }
        assert!(!dir.path().join(format!("{name}.toml")).exists(), "{name}");
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap(),
            "# the user's own scene\n"
        );
        // The commands that take a scene refuse it the same way.
        let out = run(&["simulate", s(&path), "--duration", "0.01"]);
        assert_eq!(out.status.code(), Some(1), "{name}");
    }
}
