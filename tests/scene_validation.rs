//! Issue 20 item 7: scene files that used to load (or to fail far from the cause) are refused
//! with the file, line and field, and the CLI prints the message once.

use ar_dynamics::Scene;
use std::process::Command;

/// One pendulum on a ball joint; `body_extra` is inserted in its `[[body]]` table.
fn pendulum(body_extra: &str, inertia: &str, position: &str) -> String {
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n\
         \n\
         [[body]]\n\
         name = \"p\"\n\
         mass_kg = 0.1\n\
         inertia_kg_m2 = {inertia}\n\
         position_m = {position}\n\
         shape = {{ kind = \"sphere\", radius_m = 0.01 }}\n\
         {body_extra}\n\
         \n\
         [[joint]]\n\
         name = \"pivot\"\n\
         kind = \"ball\"\n\
         body1 = \"ground\"\n\
         body2 = \"p\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.6]\n"
    )
}

const INERTIA: &str = "[1e-5, 1e-5, 1e-5]";
const POSITION: &str = "[0.0, 0.0, 0.5]";

fn error_of(text: &str) -> String {
    Scene::parse(text, "s.toml")
        .expect_err("the scene must be refused")
        .to_string()
}

#[test]
fn the_base_scene_loads() {
    Scene::parse(&pendulum("", INERTIA, POSITION), "s.toml").unwrap();
}

#[test]
fn non_finite_rotations_name_their_line_and_field() {
    for (field, value) in [
        ("rotation_rad", "[nan, 0.0, 0.0]"),
        ("rotation_rad", "[0.0, inf, 0.0]"),
        ("inertia_rotation_rad", "[0.0, 0.0, -inf]"),
    ] {
        let err = error_of(&pendulum(&format!("{field} = {value}"), INERTIA, POSITION));
        assert!(
            err.contains("s.toml:9:")
                && err.contains(&format!("body[0].{field}"))
                && err.contains("finite"),
            "{field} = {value}: {err}"
        );
    }
}

#[test]
fn names_that_would_not_read_back_from_the_csvs_are_refused_by_field() {
    let base = pendulum("", INERTIA, POSITION);
    let cases = [
        (
            base.replace("name = \"p\"", "name = \" p\"")
                .replace("body2 = \"p\"", "body2 = \" p\""),
            "body[0].name",
            "starts or ends with a space",
        ),
        (
            base.replace("name = \"pivot\"", "name = \"pivot\\t\""),
            "joint[0].name",
            "control character",
        ),
        (
            base.replace("name = \"p\"", "name = \"ground\""),
            "body[0].name",
            "`ground` is reserved",
        ),
        (
            base.replace("name = \"pivot\"", "name = \"\""),
            "joint[0].name",
            "a joint needs a name",
        ),
    ];
    for (text, field, problem) in cases {
        let e = error_of(&text);
        assert!(
            e.contains(field) && e.contains(problem) && e.contains("s.toml:"),
            "{e}"
        );
    }
}

#[test]
fn inertia_violating_the_triangle_inequality_is_refused() {
    let err = error_of(&pendulum("", "[1e-5, 1e-5, 3e-5]", POSITION));
    assert!(
        err.contains("s.toml:6:") && err.contains("inertia_kg_m2") && err.contains("no rigid body"),
        "{err}"
    );
    // A thin rod reaches equality and loads.
    Scene::parse(&pendulum("", "[1e-5, 1e-5, 2e-5]", POSITION), "s.toml").unwrap();
}

#[test]
fn arrays_of_the_wrong_length_are_refused_not_cut() {
    for position in ["[0.0, 0.0, 0.5, 7.0]", "[0.0, 0.5]"] {
        let err = error_of(&pendulum("", INERTIA, position));
        assert!(
            err.contains("line 7") && err.contains("position_m") && err.contains("exactly 3"),
            "{position}: {err}"
        );
    }
    let err = error_of(&pendulum(
        "rotation_rad = [0.0, 0.0, 0.1, 0.2]",
        INERTIA,
        POSITION,
    ));
    assert!(err.contains("line 9") && err.contains("exactly 3"), "{err}");
    let err = error_of(&pendulum("", INERTIA, POSITION).replace(
        "anchor_in_world_m = [0.0, 0.0, 0.6]",
        "anchor_in_world_m = [0.0, 0.0, 0.6, 1.0]",
    ));
    assert!(
        err.contains("line 16") && err.contains("exactly 3"),
        "{err}"
    );
}

#[test]
fn an_empty_scene_is_refused() {
    for text in ["", "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n"] {
        let err = error_of(text);
        assert!(
            err.contains("s.toml") && err.contains("no bodies"),
            "{text:?}: {err}"
        );
    }
}

#[test]
fn a_scene_over_the_body_limit_is_refused_before_building() {
    let mut text = String::new();
    for i in 0..=ar_dynamics::scene::MAX_BODIES {
        text.push_str(&format!(
            "[[body]]\nname = \"b{i}\"\nmass_kg = 1.0\ninertia_kg_m2 = [1.0, 1.0, 1.0]\n\
             position_m = [0.0, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.1 }}\n"
        ));
    }
    let err = error_of(&text);
    assert!(err.contains("100001 bodies, over the limit"), "{err}");
}

/// `n` unit spheres, each joined by a ball joint to `parent(i)` (a body name).
fn ball_tree(n: usize, parent: impl Fn(usize) -> String) -> String {
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "[[body]]\nname = \"b{i}\"\nmass_kg = 1.0\ninertia_kg_m2 = [1.0, 1.0, 1.0]\n\
             position_m = [0.0, 0.0, {}]\nshape = {{ kind = \"sphere\", radius_m = 0.1 }}\n",
            -(i as f64) - 1.0
        ));
    }
    for i in 0..n {
        text.push_str(&format!(
            "[[joint]]\nname = \"j{i}\"\nkind = \"ball\"\nbody1 = \"{}\"\nbody2 = \"b{i}\"\n\
             anchor_in_world_m = [0.0, 0.0, {}]\n",
            parent(i),
            -(i as f64) - 0.5
        ));
    }
    text
}

/// A 16,000-body chain asked the coupled solver for 36.9 GB and aborted (later it was refused):
/// the factor's storage follows its profile, so a chain builds and steps.
#[test]
fn a_16000_body_chain_builds_and_steps() {
    let n = 16_000;
    let text = ball_tree(n, |i| {
        if i == 0 {
            "ground".to_owned()
        } else {
            format!("b{}", i - 1)
        }
    });
    let scene = Scene::parse(&text, "chain.toml").unwrap();
    let mut sim = scene.build().expect("a chain's storage is linear");
    sim.step().expect("a hanging chain steps");
    // Hanging at rest: the step keeps 16,000 one-metre links closed (1.1e-9 m here).
    assert!(
        sim.constraint_norm_m() < 1e-8,
        "{}",
        sim.constraint_norm_m()
    );
}

/// Elements that share a moving body couple with each other: 4,000 ball joints on one hub
/// fill a triangle of 8 million blocks (4.6 GB), refused with a message before allocating.
#[test]
fn a_hub_too_large_for_the_coupled_solver_is_refused_before_allocating() {
    let text = ball_tree(4_000, |i| {
        if i == 0 {
            "ground".to_owned()
        } else {
            "b0".to_owned()
        }
    });
    let scene = Scene::parse(&text, "hub.toml").unwrap();
    let err = scene.build().expect_err("too large").to_string();
    assert!(
        err.contains("4001 joints, springs and the stylus couple into")
            && err.contains("over the limit of 2147 MB"),
        "{err}"
    );
}

fn simulate(scene: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["simulate", "--duration", "0.05"])
        .arg(scene)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap()
}

/// The CLI shows a scene error once, without a backtrace even with RUST_BACKTRACE=1.
#[test]
fn the_cli_prints_a_scene_error_once_without_a_backtrace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        pendulum("rotation_rad = [nan, 0.0, 0.0]", INERTIA, POSITION),
    )
    .unwrap();
    let run = simulate(&path);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("rotation_rad").count(), 1, "{stderr}");
    assert!(
        !stderr.contains("Stack backtrace") && !stderr.contains("stack backtrace"),
        "{stderr}"
    );
}

/// A scene that is not UTF-8 (issue 45: "stream did not contain valid UTF-8", twice, with no
/// line or byte) is refused once, naming the line, the column and the byte.
#[test]
fn the_cli_names_the_line_and_byte_of_a_scene_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latin1.toml");
    let mut bytes = pendulum("", INERTIA, POSITION).into_bytes();
    // `name = "p"` (line 4) becomes `name = "p\xe9"`: byte 9 of the line.
    let at = bytes
        .windows(10)
        .position(|w| w == b"name = \"p\"")
        .unwrap()
        + 9;
    bytes.insert(at, 0xe9);
    std::fs::write(&path, &bytes).unwrap();
    let run = simulate(&path);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("UTF-8").count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}:4:10: byte {at} of the file (0xe9",
            path.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the scene is unchanged"
    );
}

/// A FIFO or a device as the scene is refused at once, not read until out of memory.
#[cfg(unix)]
#[test]
fn only_regular_files_are_read_as_scenes() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.toml");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for path in [fifo.as_path(), std::path::Path::new("/dev/zero")] {
        let run = simulate(path);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
}

/// The pendulum scene with one `[[support]]` table named `post` (its fields from line 20).
fn with_support(support: &str) -> String {
    format!(
        "{}\n[[support]]\nname = \"post\"\n{support}\n",
        pendulum("", INERTIA, POSITION)
    )
}

#[test]
fn supports_load_and_change_nothing_of_the_model() {
    let plain = Scene::parse(&pendulum("", INERTIA, POSITION), "s.toml").unwrap();
    let text = with_support(
        "kind = \"rod\"\nfrom_m = [0.0, 0.1, 0.0]\nto_m = [0.0, 0.1, 0.62]\nradius_m = 0.008",
    );
    let scene = Scene::parse(&text, "s.toml").unwrap();
    assert_eq!(scene.supports.len(), 1);
    assert_eq!(scene.supports[0].name, "post");
    assert_eq!(
        scene.supports[0].shape,
        ar_dynamics::SupportShape::Rod {
            from_in_world: nalgebra::Point3::new(0.0, 0.1, 0.0),
            to_in_world: nalgebra::Point3::new(0.0, 0.1, 0.62),
            radius_m: 0.008,
        }
    );
    assert_eq!(format!("{:?}", scene.bodies), format!("{:?}", plain.bodies));
    assert_eq!(format!("{:?}", scene.joints), format!("{:?}", plain.joints));
}

#[test]
fn a_bad_support_field_is_refused_with_its_line_and_field() {
    let line_of = |text: &str, needle: &str| {
        1 + text
            .lines()
            .position(|l| l.starts_with(needle))
            .expect("the field is in the text")
    };
    for (support, field, line_start, why) in [
        (
            "kind = \"rod\"\nfrom_m = [0.0, 0.1, 0.0]\nto_m = [0.0, 0.1, 0.6]\nradius_m = -0.01",
            "support[0].radius_m",
            "radius_m",
            "positive",
        ),
        (
            "kind = \"box\"\ncenter_m = [0.0, 0.0, 0.003]\nsize_m = [0.1, 0.1, 0.006]\nradius_m = 0.01",
            "support[0].radius_m",
            "radius_m",
            "a box support has no radius_m",
        ),
        (
            "kind = \"rod\"\nfrom_m = [0.0, 0.1, 0.0]\nradius_m = 0.01",
            "support[0].to_m",
            "kind = \"rod\"",
            "a rod support needs to_m",
        ),
        (
            "kind = \"line\"\nfrom_m = [0.0, 0.0, 0.7]\nto_m = [0.0, 0.0, nan]",
            "support[0].to_m",
            "to_m",
            "finite",
        ),
        (
            "kind = \"box\"\ncenter_m = [0.0, 0.0, 0.0]\nsize_m = [0.1, 0.1, 0.01]",
            "support[0].kind",
            "kind = \"box\"",
            "below the desk",
        ),
        (
            "kind = \"box\"\ncenter_m = [0.0, 0.0, 0.1]\nsize_m = [0.1, 0.0, 0.01]",
            "support[0].size_m",
            "size_m",
            "positive",
        ),
    ] {
        let text = with_support(support);
        let err = error_of(&text);
        let line = line_of(&text, line_start);
        assert!(
            err.contains(&format!("s.toml:{line}:"))
                && err.contains(&format!("`{field}`"))
                && err.contains(why),
            "{support}: {err}"
        );
    }
    // Misspelt fields and kinds come from the TOML parser, with their line.
    let err = error_of(&with_support(
        "kind = \"rod\"\nfrom_m = [0.0, 0.0, 0.0]\nto = [0.0, 0.0, 0.5]",
    ));
    assert!(
        err.contains("line 22") && err.contains("unknown field `to`"),
        "{err}"
    );
    let err = error_of(&with_support("kind = \"beam\""));
    assert!(
        err.contains("line 20") && err.contains("unknown variant `beam`"),
        "{err}"
    );
}

#[test]
fn two_supports_of_one_name_are_refused() {
    let text = format!(
        "{}\n[[support]]\nname = \"post\"\nkind = \"line\"\nfrom_m = [0.0, 0.0, 0.1]\nto_m = [0.0, 0.0, 0.2]\n",
        with_support("kind = \"line\"\nfrom_m = [0.0, 0.0, 0.1]\nto_m = [0.0, 0.0, 0.3]")
    );
    let err = error_of(&text);
    assert!(
        err.contains("`support[1].name`") && err.contains("already the name of support[0]"),
        "{err}"
    );
}
