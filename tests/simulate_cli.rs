//! `ar-multibody simulate` as an engineer uses it: the two CSV files it streams (checked here
//! with formulas of their own, from the scene file read as plain TOML, not through the
//! solver library), its summary, and its refusal of bad numeric flags.

use std::path::Path;

#[path = "support/cli.rs"]
mod cli;
use cli::run;

/// The package root: scene names and the scripts' relative paths resolve from here.
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn ok(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// The ten-pendula scene file as plain TOML.
fn scene() -> toml::Value {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("assets/scenes/ten_pendula.toml")).unwrap();
    toml::from_str(&text).unwrap()
}

fn vec3(v: &toml::Value) -> [f64; 3] {
    let a = v.as_array().expect("an array of three numbers");
    [0, 1, 2].map(|i| a[i].as_float().expect("a float"))
}

/// `v` rotated by the unit quaternion (w, x, y, z): v + 2w (u × v) + 2 u × (u × v), u = (x, y, z).
fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let [w, x, y, z] = q;
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let u = [x, y, z];
    let t = cross(u, v);
    let tt = cross(u, t);
    [0, 1, 2].map(|i| v[i] + 2.0 * w * t[i] + 2.0 * tt[i])
}

/// A parsed CSV: header fields and rows of fields (no quoting needed for these scenes).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect();
    (header, rows)
}

/// The summary's line that starts with `label`.
fn summary_line<'a>(stdout: &'a str, label: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("a {label} line in:\n{stdout}"))
}

/// The summary's simulated time, as printed: `steps N (h = H s, T s simulated)`.
fn printed_simulated_time(stdout: &str) -> &str {
    let line = summary_line(stdout, "steps");
    let before = line.split(" s simulated").next().unwrap();
    before.rsplit(' ').next().unwrap()
}

fn has_nine_decimals(t: &str) -> bool {
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    !int.is_empty() && int.bytes().all(|b| b.is_ascii_digit()) && frac.len() == 9
}

#[test]
fn a_dragged_chain_streams_poses_that_keep_the_pivot_and_a_csv_that_matches_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let poses = dir.path().join("poses.csv");
    let csv = dir.path().join("run.csv");
    let stdout = ok(&[
        "simulate",
        "ten_pendula",
        "--duration",
        "2",
        "--stylus",
        "assets/scripts/ten_pendula_drag.csv",
        "--poses",
        poses.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let scene = scene();
    let bodies = scene["body"].as_array().unwrap();
    let joints = scene["joint"].as_array().unwrap();

    // Summary: the model's size, from the scene file (ball 3 rows, hinge 5).
    let rows: usize = joints
        .iter()
        .map(|j| match j["kind"].as_str().unwrap() {
            "ball" => 3,
            "hinge" => 5,
            other => panic!("unexpected joint kind {other}"),
        })
        .sum();
    let model = format!(
        "{} dynamic bodies, {} joints, {rows} constraint rows",
        bodies.len(),
        joints.len()
    );
    assert!(stdout.contains(&model), "expected `{model}` in\n{stdout}");

    // The poses file: header, one row per body and step, in scene order.
    let (header, pose_rows) = read_csv(&poses);
    assert_eq!(
        header.join(","),
        "t_s,body,x_m,y_m,z_m,qw,qx,qy,qz,vx_m_per_s,vy_m_per_s,vz_m_per_s,\
         wx_rad_per_s,wy_rad_per_s,wz_rad_per_s"
    );
    assert_eq!(pose_rows.len(), 200 * bodies.len());
    for (k, row) in pose_rows.iter().enumerate() {
        assert_eq!(row.len(), 15, "row {k}");
        assert_eq!(row[1], bodies[k % bodies.len()]["name"].as_str().unwrap());
        assert!(has_nine_decimals(&row[0]), "t_s {}", row[0]);
    }

    // The pivot's anchor in p1's frame, from the scene file: p1 starts unrotated at
    // `position_m`, the ball joint's anchor is given in the world.
    let pivot = joints
        .iter()
        .find(|j| j["name"].as_str() == Some("pivot"))
        .unwrap();
    assert_eq!(pivot["body2"].as_str(), Some("p1"));
    let p1 = bodies
        .iter()
        .find(|b| b["name"].as_str() == Some("p1"))
        .unwrap();
    assert!(p1.get("rotation_rad").is_none(), "p1 starts unrotated");
    let anchor_in_world = vec3(&pivot["anchor_in_world_m"]);
    assert_eq!(anchor_in_world, [0.0, 0.0, 0.6]);
    let x0 = vec3(&p1["position_m"]);
    let anchor_in_p1 = [0, 1, 2].map(|i| anchor_in_world[i] - x0[i]);
    let mut worst_m = 0.0_f64;
    for row in pose_rows.iter().filter(|r| r[1] == "p1") {
        let f: Vec<f64> = row[2..9].iter().map(|s| s.parse().unwrap()).collect();
        let r = rotate([f[3], f[4], f[5], f[6]], anchor_in_p1);
        let gap = [0, 1, 2].map(|i| f[i] + r[i] - anchor_in_world[i]);
        worst_m = worst_m.max((gap[0] * gap[0] + gap[1] * gap[1] + gap[2] * gap[2]).sqrt());
    }
    eprintln!("pivot anchor of p1 off (0, 0, 0.6) by at most {worst_m:.3e} m");
    // Measured 4.9e-9 m (the solver's ‖ψ‖ reaches 1.8e-8 m over all joints of this run).
    assert!(worst_m < 2e-8, "pivot anchor off by {worst_m} m");

    // The main CSV: header from the scene's joints, one row per step, 9-decimal times, the
    // last of which is the summary's simulated time.
    let (header, csv_rows) = read_csv(&csv);
    let mut expected = "t_s,constraint_norm_m,kinetic_j,potential_j,elastic_j,user_work_j,\
                        external_work_j,dissipated_j,energy_error_rel,clipped,stylus_x,\
                        stylus_y,stylus_z,grab_x,grab_y,grab_z"
        .to_owned();
    for j in joints {
        let name = j["name"].as_str().unwrap();
        for c in ["fx", "fy", "fz", "tx", "ty", "tz"] {
            expected.push_str(&format!(",{name}_{c}"));
        }
    }
    assert_eq!(header.join(","), expected);
    assert_eq!(csv_rows.len(), 200);
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (k, row) in csv_rows.iter().enumerate() {
        assert_eq!(row.len(), header.len(), "row {k}");
        assert!(has_nine_decimals(&row[0]), "t_s {}", row[0]);
        // Every step's poses carry the step's time.
        assert_eq!(row[0], pose_rows[k * bodies.len()][0]);
        // No wind: no external work.
        assert_eq!(row[column("external_work_j")], "0");
    }
    let last_t = &csv_rows.last().unwrap()[0];
    assert_eq!(last_t, "2.000000000");
    assert_eq!(printed_simulated_time(&stdout), last_t);
    // A ball joint transmits no moment, a hinge none about its axis (world y here). The
    // reported moments are not quite zero: the solver's impulses act at the step's midpoint
    // attachment vectors, and the moment about the anchor is taken with the end-of-step one,
    // which leaves |Δarm × F|. Measured: at most 1.3 % of |F|·|arm| at the pivot and 0.9 % at
    // hinge1 (each anchor is 25 mm from its second body's centre), and nothing across hinge1's
    // axis in this planar drag.
    let norm = |row: &[String], prefix: &str| {
        ["x", "y", "z"]
            .iter()
            .map(|a| {
                row[column(&format!("{prefix}{a}"))]
                    .parse::<f64>()
                    .unwrap()
                    .powi(2)
            })
            .sum::<f64>()
            .sqrt()
    };
    let mut worst_pivot = 0.0_f64;
    let mut worst_hinge_axis = 0.0_f64;
    for row in &csv_rows {
        let arm_m = 0.025;
        worst_pivot = worst_pivot.max(norm(row, "pivot_t") / (norm(row, "pivot_f") * arm_m));
        let ty = row[column("hinge1_ty")].parse::<f64>().unwrap().abs();
        worst_hinge_axis = worst_hinge_axis.max(ty / (norm(row, "hinge1_f") * arm_m));
        for across in ["hinge1_tx", "hinge1_tz"] {
            assert_eq!(row[column(across)], "0", "{across} at t = {}", row[0]);
        }
    }
    eprintln!(
        "moments over |F|·25 mm: pivot <= {worst_pivot:.3e}, hinge1 about its axis <= \
         {worst_hinge_axis:.3e}"
    );
    assert!(worst_pivot < 0.03, "pivot moment {worst_pivot} of |F|·arm");
    assert!(
        worst_hinge_axis < 0.03,
        "hinge1 axial moment {worst_hinge_axis} of |F|·arm"
    );
}

#[test]
fn poses_every_n_writes_steps_n_2n_and_so_on() {
    let dir = tempfile::tempdir().unwrap();
    let poses = dir.path().join("poses.csv");
    ok(&[
        "simulate",
        "ten_pendula",
        "--duration",
        "0.5",
        "--poses",
        poses.to_str().unwrap(),
        "--poses-every",
        "7",
    ]);
    let (_, rows) = read_csv(&poses);
    // 50 steps: 7, 14, ..., 49.
    let times: Vec<&str> = rows.iter().step_by(10).map(|r| r[0].as_str()).collect();
    assert_eq!(rows.len(), 7 * 10);
    assert_eq!(times.first(), Some(&"0.070000000"));
    assert_eq!(times.last(), Some(&"0.490000000"));
}

/// Each bad value exits with an error, printed once, on one line naming the flag and the
/// value, before the scene is read (so no "scene file" in it).
#[test]
fn bad_numeric_flags_are_argument_errors_naming_the_flag() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["simulate", "ten_pendula"], "--dt", "0"),
        (&["simulate", "ten_pendula"], "--dt", "-1"),
        (&["simulate", "ten_pendula"], "--dt", "nan"),
        (&["simulate", "ten_pendula"], "--duration", "-1"),
        (&["simulate", "ten_pendula"], "--duration", "NaN"),
        (&["simulate", "ten_pendula"], "--iterations", "0"),
        (&["simulate", "ten_pendula"], "--beta", "-0.1"),
        (&["simulate", "ten_pendula"], "--beta", "1.5"),
        (&["simulate", "ten_pendula"], "--beta", "nan"),
        (&["simulate", "ten_pendula"], "--stylus-stiffness", "0"),
        (&["simulate", "ten_pendula"], "--stylus-stiffness", "-5"),
        (&["simulate", "ten_pendula"], "--stylus-damping", "-1"),
        (&["simulate", "ten_pendula"], "--stylus-damping", "inf"),
        (&["simulate", "ten_pendula"], "--row-refreshes", "-1"),
        (&["simulate", "ten_pendula"], "--poses-every", "0"),
        (&["demo", "--headless", "--no-save"], "--duration-s", "-1"),
        (
            &["demo", "--headless", "--no-save"],
            "--duration-s",
            "1e300",
        ),
        (&["demo", "--headless", "--no-save"], "--ipd-mm", "-64"),
    ];
    for (command, flag, value) in cases {
        let mut args = command.to_vec();
        args.extend([*flag, *value]);
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        let naming: Vec<&str> = stderr.lines().filter(|l| l.contains(flag)).collect();
        assert_eq!(naming.len(), 1, "{args:?}: {stderr}");
        assert!(
            naming[0].contains(&format!("'{value}'")),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("scene file"), "{args:?}: {stderr}");
    }
}

/// A run that would take no step is refused before any file is written, not reported as a
/// success with a header-only CSV.
#[test]
fn a_duration_shorter_than_half_a_step_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("run.csv");
    let csv_arg = csv.to_str().unwrap();
    let out = run(&[
        "simulate",
        "ten_pendula",
        "--dt",
        "100",
        "--duration",
        "1",
        "--csv",
        csv_arg,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--duration 1 s is shorter than half a step (h = 100 s from --dt)"),
        "{stderr}"
    );
    assert!(!csv.exists(), "a CSV was written");
    // Explicitly zero stays a way to load and check a scene without stepping.
    ok(&["simulate", "ten_pendula", "--duration", "0"]);
}

/// β = 0 (no drift correction) is a value the command line accepts; whether the solver
/// accepts it is `SolverParams::validate`'s business.
#[test]
fn beta_zero_is_not_an_argument_error() {
    let out = run(&[
        "simulate",
        "ten_pendula",
        "--duration",
        "0.1",
        "--beta",
        "0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("invalid value"), "{stderr}");
}

/// Body and shape names come from scene files and may hold commas and quotes: the poses and
/// contacts CSVs quote them (RFC 4180), so that every row keeps its column count and a CSV
/// reader gets the name back.
#[test]
fn names_with_commas_and_quotes_keep_their_columns() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(ROOT).join("assets/scenes/incline.toml"))
        .unwrap()
        .replace("name = \"stays\"", "name = 'box \"A\", left'");
    let scene = dir.path().join("named.toml");
    std::fs::write(&scene, text).unwrap();
    let (poses, contacts) = (dir.path().join("p.csv"), dir.path().join("c.csv"));
    ok(&[
        "simulate",
        scene.to_str().unwrap(),
        "--duration",
        "0.1",
        "--poses",
        poses.to_str().unwrap(),
        "--contacts",
        contacts.to_str().unwrap(),
    ]);
    for (path, columns) in [(&poses, &["body"][..]), (&contacts, &["shape1", "shape2"])] {
        let text = std::fs::read_to_string(path).unwrap();
        let table = ar_io::csv_table::read_table(&text)
            .unwrap()
            .expect("a header");
        let width = table.header.fields.len();
        assert!(!table.rows.is_empty(), "{}", path.display());
        assert!(table.rows.iter().all(|r| r.fields.len() == width), "{text}");
        let mut names = Vec::new();
        for column in columns {
            let at = table.column(&[column]).expect(column);
            names.extend(table.rows.iter().map(|r| r.get(at)));
        }
        assert!(names.contains(&"box \"A\", left"), "{names:?}");
        assert!(text.contains("\"box \"\"A\"\", left\""), "{text}");
    }
}

/// The progress bar is for terminals: in a pipe (scripts, CI) stderr stays empty on success
/// and stdout holds only the summary.
#[test]
fn no_progress_bar_in_a_pipe() {
    let out = run(&["simulate", "ten_pendula", "--duration", "0.5"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("scene "), "{stdout}");
    assert!(
        !stdout.contains('\r') && !stdout.contains("eta"),
        "{stdout}"
    );
}

/// A hinge pendulum with `limits_rad` (issue 42): the CSV's last column is the limit's torque,
/// which at rest on the upper limit holds gravity's moment m g L cos(hi) about the pivot
/// (closed form, to the O(h²) the manual gives for a hinge limit).
#[test]
fn a_limited_hinge_reports_its_limit_torque_in_the_csv() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("limited.toml");
    std::fs::write(
        &scene,
        "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n[solver]\ndt_secs = 0.01\n\
         [[body]]\nname = \"bob\"\nmass_kg = 1.0\ninertia_kg_m2 = [0.01, 0.01, 0.01]\n\
         position_m = [0.5, 0.0, 0.0]\nshape = { kind = \"sphere\", radius_m = 0.05 }\n\
         [[joint]]\nname = \"pivot\"\nkind = \"hinge\"\nbody1 = \"ground\"\nbody2 = \"bob\"\n\
         anchor_in_world_m = [0.0, 0.0, 0.0]\naxis_in_world = [0.0, 1.0, 0.0]\n\
         limits_rad = [-0.5, 1.0]\n",
    )
    .unwrap();
    let csv = dir.path().join("out.csv");
    ok(&[
        "simulate",
        scene.to_str().unwrap(),
        "--duration",
        "1",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let (header, rows) = read_csv(&csv);
    assert_eq!(header.last().unwrap(), "pivot_limit_n_m");
    assert_eq!(header[header.len() - 2], "pivot_tz");
    let torque: f64 = rows.last().unwrap().last().unwrap().parse().unwrap();
    let (m_kg, l_m) = (1.0, 0.5);
    let at_rest = -m_kg * 9.81 * l_m * 1.0f64.cos();
    assert!(
        (torque - at_rest).abs() <= 1e-3 * at_rest.abs(),
        "{torque} {at_rest}"
    );
    // Before the swing reaches the limit the column is 0.
    assert_eq!(rows[0].last().unwrap(), "0");
}

/// The summary counts the sleeping bodies (contact scenes with `sleep`, the default): on the
/// incline the box that sticks is still from its first step and sleeps from 0.5 s, the box
/// that slides never does.
#[test]
fn the_summary_counts_sleeping_bodies() {
    let stdout = ok(&["simulate", "incline", "--duration", "1"]);
    let line = summary_line(&stdout, "sleeping");
    assert_eq!(
        line,
        "sleeping           1 bodies at the end, 1 at most at once"
    );
}

/// A scene with springs and contact solves its contacts with the springs, in rounds that the
/// summary counts (the cloth strikes the box within 0.3 s: 5.2 rounds per step, at most 9);
/// a scene without springs has no such line.
#[test]
fn the_summary_counts_the_rounds_that_solve_contacts_with_springs() {
    let stdout = ok(&["simulate", "cloth", "--duration", "0.3"]);
    let line = summary_line(&stdout, "contact rounds");
    let per_step: f64 = line
        .split_whitespace()
        .nth(2)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("rounds per step in {line:?}"));
    assert!((2.0..20.0).contains(&per_step), "{line}");
    let stdout = ok(&["simulate", "incline", "--duration", "0.3"]);
    assert!(!stdout.contains("contact rounds"), "{stdout}");
}

/// The pile's contacts found on one thread or two (`[contact] threads`), and the run done
/// twice, give byte-identical poses (issue 42, acceptance 8): a falling pile has thousands of
/// candidate pairs, so the narrow phase splits them between the threads.
#[test]
fn the_pile_gives_the_same_poses_on_one_thread_or_two_and_twice() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(ROOT).join("assets/scenes/pile.toml")).unwrap();
    assert!(
        !text.contains("[contact]"),
        "the pile sets its own [contact] table"
    );
    let poses = |threads: usize, run: usize| {
        let scene = dir.path().join(format!("pile_{threads}.toml"));
        std::fs::write(&scene, format!("{text}\n[contact]\nthreads = {threads}\n")).unwrap();
        let csv = dir.path().join(format!("poses_{threads}_{run}.csv"));
        ok(&[
            "simulate",
            scene.to_str().unwrap(),
            "--duration",
            "0.5",
            "--poses",
            csv.to_str().unwrap(),
        ]);
        std::fs::read(csv).unwrap()
    };
    let one = poses(1, 0);
    assert!(one.len() > 100_000, "{} bytes of poses", one.len());
    assert!(one == poses(2, 0), "two threads differ from one");
    assert!(one == poses(2, 1), "a second run on two threads differs");
}
