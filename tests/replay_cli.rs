//! Recorded and replayed sessions (issue 19, acceptance 3): `demo --record DIR` writes the
//! solver's inputs and outputs of every step while the whole rig runs on simulated devices in
//! real time (threads, dropped steps and all); `replay DIR` feeds the recorded inputs to the
//! same simulation and reproduces the solver log bit for bit. An altered input is caught at
//! the line where the trajectory departs, and a recording is never overwritten. A session of
//! the articulated method replays with that method, and one of a scene with a step of its own
//! (`ten_pendula_fine`, 5 ms) records and replays at that step.

use std::path::Path;
use std::process::{Command, Output};

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .output()
        .expect("runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A headless steel-fish demo (the scripted clip, drag and release, then the microphone's
/// wind from where the camera looks), recorded into `dir`.
fn record_demo(dir: &Path) {
    let out = cli(&[
        "demo",
        "--scene",
        "steel_fish",
        "--headless",
        "--no-save",
        "--record",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "demo failed:\n{}", text(&out));
    assert!(text(&out).contains("session recorded in"), "{}", text(&out));
}

#[test]
fn a_recorded_demo_replays_bit_for_bit_and_an_altered_one_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    record_demo(&session);

    let inputs = std::fs::read_to_string(session.join("inputs.csv")).unwrap();
    let rows: Vec<&str> = inputs.lines().skip(1).collect();
    // (How many steps the real-time rig took depends on the machine's load: it drops steps
    // when it falls behind; the gesture and a breath happen in any case.)
    assert!(rows.len() > 100, "{} steps recorded", rows.len());
    let field = |r: &&str, i: usize| r.split(',').nth(i).unwrap_or("").to_owned();
    let clipped = rows.iter().filter(|r| field(r, 2) == "1").count();
    assert!(
        clipped > 10,
        "the gesture is in the recording ({clipped} steps)"
    );
    let windy = rows.iter().filter(|r| field(r, 10) != "0").count();
    assert!(windy > 0, "the wind is in the recording");
    let views = rows.iter().filter(|r| !field(r, 11).is_empty()).count();
    assert!(views > 0, "the camera's poses are in the recording");

    let out = cli(&["replay", session.to_str().unwrap()]);
    assert!(out.status.success(), "replay failed:\n{}", text(&out));
    assert!(text(&out).contains("identical to the recording, bit for bit"));
    let recorded = std::fs::read(session.join("solver.csv")).unwrap();
    let replayed = std::fs::read(session.join("replay/solver.csv")).unwrap();
    assert!(recorded == replayed, "the solver logs differ");

    // Move the spring's target of one clipped step by 1 mm: the replay departs there.
    let (index, row) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.split(',').nth(2) == Some("1"))
        .unwrap();
    let mut fields: Vec<String> = row.split(',').map(str::to_owned).collect();
    let tx: f64 = fields[7].parse().unwrap();
    fields[7] = (tx + 1e-3).to_string();
    let altered = inputs.replacen(row, &fields.join(","), 1);
    std::fs::write(session.join("inputs.csv"), altered).unwrap();
    let out = cli(&[
        "replay",
        session.to_str().unwrap(),
        "--out",
        tmp.path().join("altered").to_str().unwrap(),
    ]);
    assert!(
        !out.status.success(),
        "an altered input replays as identical"
    );
    // The header is line 1 and step k is on line k + 2.
    let expected = format!("differs from the recording at line {}", index + 2);
    assert!(text(&out).contains(&expected), "{}", text(&out));
}

#[test]
fn a_recording_is_never_overwritten_and_a_broken_one_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    std::fs::create_dir(&session).unwrap();
    std::fs::write(session.join("session.toml"), "format = 1\n").unwrap();
    let out = cli(&[
        "demo",
        "--headless",
        "--no-save",
        "--record",
        session.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("already holds a recorded session"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(session.join("session.toml")).unwrap(),
        "format = 1\n",
        "the existing recording is untouched"
    );

    // That session.toml lacks its fields: replay names the file and the problem.
    let out = cli(&["replay", session.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("session.toml") && text(&out).contains("missing field"),
        "{}",
        text(&out)
    );
}

#[test]
fn an_articulated_session_replays_with_its_method() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    let out = cli(&[
        "demo",
        "--method",
        "articulated",
        "--headless",
        "--no-save",
        "--record",
        session.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "demo failed:\n{}", text(&out));
    let info = std::fs::read_to_string(session.join("session.toml")).unwrap();
    assert!(info.contains("method = \"articulated\""), "{info}");
    let out = cli(&["replay", session.to_str().unwrap()]);
    assert!(out.status.success(), "replay failed:\n{}", text(&out));
    assert!(text(&out).contains("identical to the recording, bit for bit"));
}

/// The step of a recording's rows: consecutive `t_s` (column 2 of `inputs.csv` and column 1 of
/// `solver.csv`) differences.
fn row_steps(csv: &str, column: usize) -> Vec<f64> {
    let times: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|r| r.split(',').nth(column).unwrap().parse().unwrap())
        .collect();
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

/// A scene with its own step (`ten_pendula_fine`, `[solver] dt_secs = 0.005`) runs on the
/// headless demo at that step: the summary counts 5 ms steps, the frames are written, the
/// recording says `dt_secs = 0.005` and steps by it, and it replays bit for bit.
#[test]
fn a_scene_at_a_5_ms_step_runs_headless_at_its_step_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let (session, frames) = (tmp.path().join("session"), tmp.path().join("frames"));
    let out = cli(&[
        "demo",
        "--headless",
        "--frames",
        "50",
        "--scene",
        "ten_pendula_fine",
        "--out",
        frames.to_str().unwrap(),
        "--record",
        session.to_str().unwrap(),
    ]);
    let said = text(&out);
    assert!(out.status.success(), "demo failed:\n{said}");
    assert!(said.contains("frames: 50 in"), "{said}");
    assert!(said.contains(" steps of 5 ms, real-time factor"), "{said}");
    let pngs = std::fs::read_dir(&frames)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".png"))
        .count();
    assert_eq!(pngs, 50);

    let info = std::fs::read_to_string(session.join("session.toml")).unwrap();
    assert!(info.contains("dt_secs = 0.005\n"), "{info}");
    let inputs = std::fs::read_to_string(session.join("inputs.csv")).unwrap();
    let solver = std::fs::read_to_string(session.join("solver.csv")).unwrap();
    // 50 frames at 25 fps: 2 s, 400 steps of 5 ms (fewer if the loaded machine dropped some).
    assert!(
        inputs.lines().count() > 200,
        "{} rows",
        inputs.lines().count()
    );
    for steps in [row_steps(&inputs, 1), row_steps(&solver, 0)] {
        assert!(steps.iter().all(|d| (d - 0.005).abs() < 1e-9), "{steps:?}");
    }
    let out = cli(&["replay", session.to_str().unwrap()]);
    assert!(out.status.success(), "replay failed:\n{}", text(&out));
    assert!(text(&out).contains("identical to the recording, bit for bit"));
}
