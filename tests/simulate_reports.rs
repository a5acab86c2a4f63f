//! What `simulate` reports of what happened: a rope whose connection breaks gets the
//! `fractured_j` column and a summary line per break (time, connection, load); a scene
//! without breakable connections keeps its columns; and the warning that the dissipated
//! energy decreased names only what the run has (the undamped, contact-free throw has no
//! dampers or contacts to blame); a hinge swung into its limit gets a summary line with the
//! first time at the end and the impact's torque, against the closed form of the swing.

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

/// A 1 kg bob 0.5 m from a hinge about y (I about its centre 0.01 kg·m²), released
/// horizontally, swings down into its upper limit at 1 rad with `limit_restitution` 0.
fn limited_pendulum(h_secs: f64) -> String {
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n[solver]\ndt_secs = {h_secs}\n\
         [[body]]\nname = \"bob\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
         position_m = [0.5, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.05 }}\n\
         [[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\nbody2 = \"bob\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.0]\naxis_in_world = [0.0, 1.0, 0.0]\n\
         limits_rad = [-0.5, 1.0]\n"
    )
}

/// The time the pendulum of [`limited_pendulum`] takes from rest at the horizontal to the
/// angle `theta_rad`, and its rate there: ½ I ω² = m g L sin θ, t = ∫ dθ / ω, integrated by
/// Simpson's rule in u = √θ (which removes the start's 1/√θ).
fn swing_closed_form(theta_rad: f64) -> (f64, f64) {
    let (m, g, l): (f64, f64, f64) = (1.0, 9.81, 0.5);
    let k = 2.0 * m * g * l / (0.01 + m * l * l);
    let f = |u: f64| {
        if u == 0.0 {
            2.0 / k.sqrt()
        } else {
            2.0 * u / (k * (u * u).sin()).sqrt()
        }
    };
    let (n, top) = (20_000, theta_rad.sqrt());
    let du = top / n as f64;
    let sum: f64 = (0..=n)
        .map(|i| {
            let w = if i == 0 || i == n {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * f(i as f64 * du)
        })
        .sum();
    (sum * du / 3.0, (k * theta_rad.sin()).sqrt())
}

#[test]
fn a_hinge_swung_into_its_limit_is_in_the_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let scene = dir.path().join("limited.toml");
    let h = 0.001;
    std::fs::write(&scene, limited_pendulum(h)).unwrap();
    let run = simulate(&[scene.to_str().unwrap(), "--duration", "1"], None);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}\n{}", text(&run.stderr));
    let line = stdout
        .lines()
        .find(|l| l.starts_with("limit pivot"))
        .unwrap_or_else(|| panic!("no limit line:\n{stdout}"));
    let numbers: Vec<f64> = line
        .split([' ', ',', ';'])
        .filter_map(|w| w.parse().ok())
        .collect();
    let [lower_steps, upper_steps, first_t, torque] = numbers[..] else {
        panic!("{line}");
    };
    let (t_arrive, omega_arrive) = swing_closed_form(1.0);
    // The first step at the end is the one the swing would pass it in.
    assert!(
        (first_t - t_arrive).abs() <= 1.5 * h,
        "{line}: closed form {t_arrive} s"
    );
    // It stops there (restitution 0) and rests on the upper end until the run ends, but for
    // the impact step's stop short of the end: Newton's impulse acts at the start of the step
    // that would pass the end, where the bob is up to ω h (5.6 mrad) before it, and gravity
    // brings it the rest of the way in 16 steps (1.3 mrad) without a limit load.
    assert_eq!(lower_steps, 0.0, "{line}");
    let resting = (1.0 - first_t) / h + 1.0;
    assert!(
        upper_steps <= resting && upper_steps >= resting - 17.0,
        "{line}: {resting}"
    );
    // The largest torque is the impact's: the moment of momentum about the pivot stopped in
    // one step (gravity's torque, 2.65 N·m, adds 0.2 %).
    let impact = (0.01 + 0.25) * omega_arrive / h;
    assert!(
        (torque - impact).abs() <= 0.01 * impact,
        "{line}: {impact} N·m"
    );
}

#[test]
fn a_joint_without_limits_gets_no_limit_line() {
    let run = simulate(&["ten_pendula", "--duration", "0.05"], None);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(!stdout.contains("limit "), "{stdout}");
}
