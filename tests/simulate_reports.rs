//! What `simulate` reports of what happened: a rope whose connection breaks gets the
//! `fractured_j` column and a summary line per break (time, connection, load); a scene
//! without breakable connections keeps its columns; and the warning that the dissipated
//! energy decreased names only what the run has (the undamped, contact-free throw has no
//! dampers or contacts to blame).

use std::path::Path;
use std::process::{Command, Output};

fn simulate(args: &[&str], csv: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ar-multibody"));
    cmd.arg("simulate")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(csv) = csv {
        cmd.arg("--csv").arg(csv);
    }
    cmd.output().expect("simulate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The shipped rope with a 1 mm fracture extension and a 1.2 N pull on its free end: its
/// last connection breaks in the first step.
fn breaking_rope() -> String {
    let rope = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/rope.toml"),
    )
    .expect("the shipped rope");
    let with_fracture = rope.replacen(
        "pin1 = \"ground\"\n",
        "pin1 = \"ground\"\nfracture_extension_m = 0.001\n",
        1,
    );
    assert_ne!(
        with_fracture, rope,
        "the rope's table takes the fracture extension"
    );
    format!(
        "{with_fracture}\n[[force]]\nname = \"pull\"\nbody = \"rope.e30\"\nforce_n = [0.0, 0.0, -1.2]\n"
    )
}

#[test]
fn a_breaking_rope_has_the_fractured_column_and_the_break_in_the_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scene = dir.path().join("rope_break.toml");
    std::fs::write(&scene, breaking_rope()).unwrap();
    let csv = dir.path().join("run.csv");
    let run = simulate(&[scene.to_str().unwrap(), "--duration", "0.5"], Some(&csv));
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));

    let rows = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = rows.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|c| *c == "fractured_j")
        .unwrap_or_else(|| panic!("no fractured_j column: {header:?}"));
    assert_eq!(header[column - 1], "grab_z", "after the main columns");
    // The first row whose fracture energy is positive is the breaking step.
    let first_break = rows
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[column].parse::<f64>().unwrap() > 0.0)
        .expect("the connection breaks");
    let t_break = first_break[0];

    assert!(
        stdout.contains("fractures          1 of the 30 breakable connections broke:"),
        "{stdout}"
    );
    let line = stdout
        .lines()
        .find(|l| l.starts_with("  t = "))
        .unwrap_or_else(|| panic!("a line per break: {stdout}"));
    assert!(
        line.starts_with(&format!(
            "  t = {t_break} s  rope.c29 (rope.e29 – rope.e30): tension "
        )) && line.contains(" N, extension ")
            && line.contains("(limit 1.0000e-3 m)"),
        "{line}"
    );
}

#[test]
fn a_scene_without_breakable_connections_keeps_its_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("run.csv");
    let run = simulate(&["rope", "--duration", "0.05"], Some(&csv));
    assert!(run.status.success(), "{}", text(&run.stderr));
    let rows = std::fs::read_to_string(&csv).unwrap();
    let header = rows.lines().next().unwrap();
    assert!(header.starts_with("t_s,constraint_norm_m,"), "{header}");
    assert!(!header.contains("fractured_j"), "{header}");
    assert!(!text(&run.stdout).contains("fractures"));
}

#[test]
fn the_undamped_contact_free_throw_blames_no_dampers_or_contacts() {
    // Ten pendula thrown by the stylus with an undamped stylus spring: nothing in the run
    // dissipates, so what the balance books as negative dissipation is the solver's.
    let run = simulate(
        &[
            "ten_pendula",
            "--stylus",
            "assets/scripts/ten_pendula_drag.csv",
            "--stylus-damping",
            "0",
            "--duration",
            "6",
        ],
        None,
    );
    let all = format!("{}{}", text(&run.stdout), text(&run.stderr));
    assert!(run.status.success(), "{all}");
    assert!(
        !all.contains("damper") && !all.contains("contact impulses"),
        "{all}"
    );
    assert!(
        all.contains("in a run where nothing dissipates: that is the solver's tolerance"),
        "{all}"
    );
}
