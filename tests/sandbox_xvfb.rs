//! Acceptance 1 of issue 19: `sandbox ten_pendula` in a real kiss3d window on a virtual X
//! server (Xvfb, rendered by lavapipe), driven by synthetic mouse and key events (xdotool,
//! XTest): a left drag on the tip moves it, the `R` key resets the scene, the session
//! recorded with `--record` shows the drag and replays bit for bit; a scene with a step of its
//! own (`ten_pendula_fine`, 5 ms) runs and records at that step. `make test` installs `xvfb`
//! and `xdotool`.
//!
//! The rig is slow on a loaded machine in a debug build (a frame can take seconds), so the
//! test waits for the program's status lines rather than for fixed times
//! (`support/xvfb.rs`).

use ar_dynamics::scene::resolve_scene;
use ar_multibody::rig::devices::demo_world::demo_intrinsics;
use ar_multibody::rig::RigSimulation;
use ar_multibody::sandbox::session::initial_view;
use nalgebra::{Point2, Point3};
use std::path::Path;
use std::process::{Child, Command, Output};
use std::sync::mpsc::Receiver;
use std::time::Duration;

#[path = "support/xvfb.rs"]
mod xvfb;
use xvfb::{figure_before, stdout_lines, wait_for, Xvfb};

const BIN: &str = env!("CARGO_BIN_EXE_ar-multibody");

/// The shipped scene `name`, loaded as the sandbox loads it.
fn load(name: &str) -> RigSimulation {
    RigSimulation::load(
        &resolve_scene(name),
        ar_multibody::rig::method::Method::Default,
    )
    .unwrap()
}

/// Where `point_in_world` of `sim` is in the view the sandbox starts with, pixels.
fn view_px(sim: &RigSimulation, point_in_world: Point3<f64>) -> Point2<f64> {
    let view = initial_view(sim).camera_from_world();
    demo_intrinsics().project(&(view * point_in_world)).unwrap()
}

/// Where the ten pendula's tip (p10's centre) is in the window, from the view the sandbox
/// starts with.
fn tip_px() -> Point2<f64> {
    let sim = load("ten_pendula");
    let tip = sim
        .bodies()
        .into_iter()
        .find(|b| &*b.name == "p10")
        .unwrap();
    view_px(&sim, Point3::from(tip.world_from_body.translation.vector))
}

/// `sandbox SCENE` for up to 600 s in a focused window of `x`: the process, its standard
/// output's lines and the window.
fn open_sandbox(x: &Xvfb, scene: &str) -> (Child, Receiver<String>, String) {
    let mut child = x.spawn(Command::new(BIN).args(["sandbox", scene, "--duration-s", "600"]));
    let (lines, _stderr) = stdout_lines(&mut child, "sandbox");
    let window = x.window("ar-multibody sandbox");
    x.xdotool(&["windowfocus", "--sync", &window]);
    (child, lines, window)
}

/// A left drag in `window`, which shows the view stretched by `scale`: presses at `from_px` (a
/// pixel of the view), waits for the grab, moves the pointer through `moves` (pixels of the
/// view from `from_px`, each seen by the display loop), holds it `hold` and lets go. The
/// line that says what was grabbed, and the one that says where it was let go.
fn drag(
    x: &Xvfb,
    window: &str,
    lines: &Receiver<String>,
    (from_px, scale): (Point2<f64>, f64),
    moves: &[(f64, f64)],
    hold: Duration,
) -> (String, String) {
    // Pixel edges scale: the view's pixel centre c is the window's (c + ½)·scale − ½.
    let in_window = |c: f64| (c + 0.5) * scale - 0.5;
    let at = |(dx, dy): (f64, f64)| {
        x.move_to(window, in_window(from_px.x + dx), in_window(from_px.y + dy))
    };
    at((0.0, 0.0));
    std::thread::sleep(Duration::from_millis(500));
    x.xdotool(&["mousedown", "1"]);
    let grabbed = wait_for(lines, "grabbed ");
    let body = grabbed
        .split("grabbed ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("{grabbed}"))
        .to_owned();
    for &m in moves {
        at(m);
        std::thread::sleep(Duration::from_millis(400));
    }
    std::thread::sleep(hold);
    x.xdotool(&["mouseup", "1"]);
    let released = wait_for(lines, &format!("released {body}"));
    (grabbed, released)
}

/// The standard output of a command that must have succeeded (its output in the message).
fn succeeded(out: &Output) -> String {
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// `sandbox ten_pendula` recording into `record`, in a focused window of `x`.
struct Sandbox {
    child: Child,
    lines: Receiver<String>,
    stderr: Receiver<String>,
    window: String,
}

impl Sandbox {
    fn start(x: &Xvfb, record: &Path) -> Self {
        let mut child = x.spawn(
            Command::new(BIN)
                .args(["sandbox", "ten_pendula", "--duration-s", "600", "--record"])
                .arg(record),
        );
        let (lines, stderr) = stdout_lines(&mut child, "sandbox");
        let window = x.window("ar-multibody sandbox");
        x.xdotool(&["windowfocus", "--sync", &window]);
        Self {
            child,
            lines,
            stderr,
            window,
        }
    }

    /// Presses on the tip, moves the pointer through `moves` (pixels of the view from the
    /// tip, each seen by the display loop), holds it `hold` and lets go, in a window that
    /// shows the view stretched by `scale`; the line that says where it was let go.
    fn drag_tip(&self, x: &Xvfb, scale: f64, moves: &[(f64, f64)], hold: Duration) -> String {
        let from = (tip_px(), scale);
        let (grabbed, released) = drag(x, &self.window, &self.lines, from, moves, hold);
        assert!(grabbed.contains("grabbed p10 at"), "{grabbed}");
        released
    }
}

#[test]
fn a_drag_on_the_tip_moves_it_and_the_reset_key_puts_it_back() {
    let x = Xvfb::start("800x600x24");
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("session");
    let sandbox = Sandbox::start(&x, &record);
    // 80 px right and 30 px up, in steps the display loop sees one by one.
    let moves: Vec<_> = (1..=8)
        .map(|k| (10.0 * f64::from(k), -3.75 * f64::from(k)))
        .collect();
    let released = sandbox.drag_tip(&x, 1.0, &moves, Duration::from_secs(2));
    let Sandbox {
        mut child, lines, ..
    } = sandbox;
    // 85 px at ~1 m with f = 600 px: the target moved ~14 cm; the tip follows most of it.
    let moved_cm = figure_before(&released, "cm from where it was grabbed");
    assert!(moved_cm > 5.0, "{released}");
    x.xdotool(&["key", "r"]);
    wait_for(&lines, "reset: ten_pendula at its initial state");
    std::thread::sleep(Duration::from_secs(2));
    x.xdotool(&["key", "Escape"]);
    let end = wait_for(&lines, "at the end: p10's grabbed point");
    // The chain starts at rest hanging straight: reloaded, it stays there.
    let off_mm = figure_before(&end, "mm from where it was grabbed");
    assert!(off_mm < 0.01, "{end}");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    // The recording (up to the reset) holds the drag and replays bit for bit.
    let solver = std::fs::read_to_string(record.join("solver.csv")).unwrap();
    let mut rows = solver.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "p10_x_m").unwrap();
    let xs: Vec<f64> = rows
        .map(|r| r.split(',').nth(column).unwrap().parse().unwrap())
        .collect();
    let swing_m = xs.iter().fold(0.0f64, |m, x| m.max((x - xs[0]).abs()));
    assert!(swing_m > 0.05, "p10 moved at most {swing_m} m along x");
    let replay = Command::new(BIN)
        .args(["replay"])
        .arg(&record)
        .arg("--out")
        .arg(dir.path().join("replayed"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{said}");
    assert!(said.contains("bit for bit"), "{said}");
}

/// Issue 43: in `sandbox ar6` (the shipped robot, found by name in `assets/robots/`) a left
/// drag on the tool flange, sideways and down, bends the upright arm: the flange's body
/// (`wrist_3`, which the flange is merged into) follows the mouse several centimetres.
#[test]
fn a_drag_on_the_ar6_flange_bends_the_arm() {
    let sim = load("ar6");
    let flange_px = view_px(&sim, sim.grab_points()[0].point_in_world);
    let x = Xvfb::start("800x600x24");
    let (mut child, lines, window) = open_sandbox(&x, "ar6");
    // 60 px right and 40 px down, in steps the display loop sees one by one: the upright arm
    // is at its full reach upward, so the drag goes down to bend it.
    let moves: Vec<_> = (1..=8)
        .map(|k| (7.5 * f64::from(k), 5.0 * f64::from(k)))
        .collect();
    let hold = Duration::from_secs(2);
    let (grabbed, released) = drag(&x, &window, &lines, (flange_px, 1.0), &moves, hold);
    assert!(grabbed.contains("grabbed wrist_3 at"), "{grabbed}");
    let moved_cm = figure_before(&released, "cm from where it was grabbed");
    assert!(moved_cm > 4.0, "{released}");
    x.xdotool(&["key", "Escape"]);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// The number after `t = ` at the start of `line` (a status line or a solver event).
fn time_of(line: &str) -> f64 {
    let after = &line[line.find("t = ").unwrap_or_else(|| panic!("t = in {line}")) + 4..];
    figure_before(after, "s:")
}

/// Issue 44, acceptance 5: one session, one recording. A sandbox session with a drag (in the
/// window resized to 1024 × 768: the pointer's pixels are mapped back to the view's, issue
/// 44's resizing), two resets (`R`) and a scene switch (`Tab`), recorded with `--record`: the recording goes on
/// in a part per reload (`part2`, `part3`, `part4`), each with the scene it loads, on one
/// clock with the status lines and the solver's events; `replay` reproduces every part, and
/// every replayed `solver.csv` is byte for byte the recorded one.
#[test]
fn two_resets_and_a_scene_switch_are_one_recording_replayed_bit_for_bit() {
    let x = Xvfb::start("1280x1024x24");
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("session");
    let sandbox = Sandbox::start(&x, &record);
    x.xdotool(&["windowsize", &sandbox.window, "1024", "768"]);
    wait_for(&sandbox.lines, "window 1024×768 px: the view scaled to it");
    let moves: Vec<_> = (1..=4).map(|k| (15.0 * f64::from(k), 0.0)).collect();
    let released = sandbox.drag_tip(&x, 1.6, &moves, Duration::ZERO);
    assert!(
        figure_before(&released, "cm from where it was grabbed") > 2.0,
        "{released}"
    );
    let Sandbox {
        mut child,
        lines,
        stderr,
        ..
    } = sandbox;
    // Each part gets steps of its own before the next key (not needed: a part may be empty).
    let mut reloads = Vec::new();
    for (key, said) in [
        ("r", "reset: ten_pendula at its initial state"),
        ("r", "reset: ten_pendula at its initial state"),
        ("Tab", "scene: "),
    ] {
        std::thread::sleep(Duration::from_secs(1));
        x.xdotool(&["key", key]);
        reloads.push(wait_for(&lines, said));
    }
    let switched = reloads[2]
        .split("scene: ")
        .nth(1)
        .and_then(|s| s.strip_suffix(" at its initial state"))
        .unwrap_or_else(|| panic!("{}", reloads[2]))
        .to_owned();
    std::thread::sleep(Duration::from_secs(1));
    x.xdotool(&["key", "Escape"]);
    // The summary's solver events name each part.
    let mut events = Vec::new();
    for part in ["part2", "part3", "part4"] {
        events.push(wait_for(
            &lines,
            &format!("recording goes on in {part} with"),
        ));
    }
    assert!(
        events[2].ends_with(&format!("with {switched}")),
        "{}",
        events[2]
    );
    let recorded = wait_for(&lines, "session recorded in");
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "{status}: {}",
        stderr.recv().unwrap_or_default()
    );
    assert!(
        recorded.contains(" steps in 4 parts: the folder, then part2 to part4)"),
        "{recorded}"
    );
    let steps_recorded: f64 = recorded
        .split(" (")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a step count in {recorded}"));

    // One clock: a status line's time comes before the event of the reload it asked for, and
    // each part's first step is one step after that event (the part's own step for Tab).
    let mut total_rows = 0.0;
    for (k, (reload, event)) in reloads.iter().zip(&events).enumerate() {
        let part = record.join(format!("part{}", k + 2));
        let info = std::fs::read_to_string(part.join("session.toml")).unwrap();
        let scene = if k < 2 { "ten_pendula" } else { &switched };
        assert!(info.contains(&format!("scene = \"{scene}\"\n")), "{info}");
        assert!(info.contains("format = 3\n"), "{info}");
        assert!(
            time_of(reload) <= time_of(event) + 0.005,
            "{reload} / {event}"
        );
        let inputs = std::fs::read_to_string(part.join("inputs.csv")).unwrap();
        if let Some(first) = inputs.lines().nth(1) {
            let t: f64 = first.split(',').nth(1).unwrap().parse().unwrap();
            assert!(
                t > time_of(event) - 0.005 && t < time_of(event) + 0.02,
                "{first} / {event}"
            );
        }
    }
    for dir in [record.clone()]
        .into_iter()
        .chain((2..=4).map(|k| record.join(format!("part{k}"))))
    {
        total_rows += (std::fs::read_to_string(dir.join("inputs.csv"))
            .unwrap()
            .lines()
            .count()
            - 1) as f64;
    }
    assert_eq!(
        total_rows, steps_recorded,
        "every recorded step is in one part"
    );

    let replay = Command::new(BIN)
        .args(["replay"])
        .arg(&record)
        .output()
        .unwrap();
    let said = succeeded(&replay);
    assert!(
        said.contains("every part's (4) solver log identical to the recording, bit for bit"),
        "{said}"
    );
    for part in ["", "part2", "part3", "part4"] {
        let recorded = std::fs::read(record.join(part).join("solver.csv")).unwrap();
        let replayed = std::fs::read(record.join("replay").join(part).join("solver.csv")).unwrap();
        assert!(
            recorded == replayed,
            "{part}: the replayed solver.csv differs"
        );
    }
}

/// A scene with its own step (`ten_pendula_fine`, `[solver] dt_secs = 0.005`) runs in the
/// sandbox's window at that step: the summary counts 5 ms steps, about 200 per second of the
/// run, and the recording says `dt_secs = 0.005`, steps by it and replays bit for bit.
#[test]
fn a_scene_at_a_5_ms_step_runs_in_the_sandbox_at_its_step() {
    let x = Xvfb::start("800x600x24");
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("session");
    let out = Command::new(BIN)
        .args([
            "sandbox",
            "ten_pendula_fine",
            "--duration-s",
            "3",
            "--record",
        ])
        .arg(&record)
        .env("DISPLAY", &x.display)
        .output()
        .unwrap();
    let said = succeeded(&out);
    let solver_line = said
        .lines()
        .find(|l| l.starts_with("solver: "))
        .unwrap_or_else(|| panic!("no solver line in {said}"));
    assert!(solver_line.contains(" steps of 5 ms,"), "{solver_line}");
    // The display loop ran 3 s; the solver, started just before it, paced 5 ms steps all along
    // (taken, or dropped on a loaded machine).
    let taken = figure_before(solver_line, "steps of");
    let dropped = figure_before(solver_line, "steps dropped");
    assert!(
        ((taken + dropped) * 0.005 - 3.0).abs() < 0.5,
        "{solver_line}"
    );
    let info = std::fs::read_to_string(record.join("session.toml")).unwrap();
    assert!(info.contains("dt_secs = 0.005\n"), "{info}");
    let solver = std::fs::read_to_string(record.join("solver.csv")).unwrap();
    let times: Vec<f64> = solver
        .lines()
        .skip(1)
        .map(|r| r.split(',').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len() as f64, taken, "one row per step");
    assert!((times[0] - 0.005).abs() < 1e-12, "{}", times[0]);
    for w in times.windows(2) {
        assert!((w[1] - w[0] - 0.005).abs() < 1e-9, "{w:?}");
    }
    let replay = Command::new(BIN)
        .args(["replay"])
        .arg(&record)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&replay.stdout);
    assert!(replay.status.success(), "{said}");
    assert!(said.contains("bit for bit"), "{said}");
}

/// An unknown scene is named with the shipped ones; without a display the sandbox says how
/// to get one; neither opens anything.
#[test]
fn an_unknown_scene_or_no_display_is_refused_with_a_clear_error() {
    let out = Command::new(BIN)
        .args(["sandbox", "no_such_scene"])
        .env("DISPLAY", ":0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("unknown scene \"no_such_scene\""), "{err}");
    assert!(err.contains("ten_pendula, ten_pendula_desk"), "{err}");
    let out = Command::new(BIN)
        .args(["sandbox", "ten_pendula"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no display is set") && err.contains("xvfb-run"),
        "{err}"
    );
}

/// Issue 42, acceptance 9: the mouse grabs a body of the pile (288 bodies, none with a grab
/// point) and drags it: a left press over the middle of the bin grabs whichever body the ray
/// meets first, and a drag upwards lifts it out of the pile.
#[test]
fn a_drag_lifts_a_body_out_of_the_pile() {
    let sim = load("pile");
    assert!(sim.grab_points().is_empty());
    // The middle of the bin, a little below the top of the settled pile (about 9 cm high).
    let middle_px = view_px(&sim, Point3::new(0.0, 0.0, 0.06));
    let x = Xvfb::start("800x600x24");
    let (mut child, lines, window) = open_sandbox(&x, "pile");
    // The pile has fallen into its bin after 2.5 s of the session's time (read from the
    // status line of a pause, as the machine may run the session slower than real time).
    loop {
        std::thread::sleep(Duration::from_secs(1));
        x.xdotool(&["key", "p"]);
        let t = time_of(&wait_for(&lines, "paused"));
        x.xdotool(&["key", "p"]);
        wait_for(&lines, "running");
        if t >= 2.5 {
            break;
        }
    }
    assert_drawing_yields_to_the_solver(child.id());
    // 60 px up, in steps the display loop sees one by one.
    let moves: Vec<_> = (1..=6).map(|k| (0.0, -10.0 * f64::from(k))).collect();
    let hold = Duration::from_secs(2);
    let (grabbed, released) = drag(&x, &window, &lines, (middle_px, 1.0), &moves, hold);
    let named = |b: &ar_multibody::scene_view::BodyView| {
        grabbed.contains(&format!("grabbed {} at", b.name))
    };
    assert!(sim.bodies().iter().any(named), "{grabbed}");
    let moved_cm = figure_before(&released, "cm from where it was grabbed");
    assert!(moved_cm > 3.0, "{released}");
    x.xdotool(&["key", "Escape"]);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// The sandbox's drawing threads run below its solver (`rig::display::priority`): the solver's
/// threads keep the nice value the process started with, the display loop's (the main thread)
/// runs 4 steps below.
fn assert_drawing_yields_to_the_solver(pid: u32) {
    // The nice value is field 19 of a thread's stat, the 17th after its parenthesised name.
    let nice_and_name = |task: &Path| {
        let stat = std::fs::read_to_string(task.join("stat")).unwrap();
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let nice: i32 = after_name.split(' ').nth(16).unwrap().parse().unwrap();
        let name = std::fs::read_to_string(task.join("comm")).unwrap();
        (nice, name.trim_end().to_owned())
    };
    let own = nice_and_name(Path::new("/proc/thread-self")).0;
    let tasks = Path::new("/proc").join(pid.to_string()).join("task");
    let (main_nice, _) = nice_and_name(&tasks.join(pid.to_string()));
    assert_eq!(main_nice, (own + 4).min(19));
    let solver: Vec<i32> = std::fs::read_dir(&tasks)
        .unwrap()
        .map(|t| nice_and_name(&t.unwrap().path()))
        .filter(|(_, name)| name == "solver")
        .map(|(nice, _)| nice)
        .collect();
    assert!(
        !solver.is_empty() && solver.iter().all(|&n| n == own),
        "{solver:?}"
    );
}
