//! Issue 45 (trust, part two), "recordings and replays never follow links or overwrite":
//! `--record DIR` refuses a folder that holds anything (a planted `inputs.csv` link to an
//! outside file, the user's own files) and creates every file exclusively; `replay` refuses
//! an output folder that is a link or holds a recording, reads only regular files (not
//! links, FIFOs, devices) under size limits, streams the solver logs, and refuses a
//! recording that was not closed, was truncated or holds no step. Each case checks the exit
//! status, the message (path and what is wrong) and that every file that was there, inside
//! the session folder and out, is unchanged.

#[path = "support/file_tree.rs"]
mod file_tree;
#[path = "support/recording.rs"]
mod recording;

use file_tree::snapshot;
use recording::{record_session, record_session_in_parts, replay_in_process};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn utf8(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs the binary; a run still going after 300 s (a hang: these runs take a second or
/// two) is killed and fails the test rather than blocking the suite.
fn cli(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(300) {
            child.kill().unwrap();
            panic!("ar-multibody {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Asserts a refusal: exit status 1, one error that names `path` and says `what`.
fn assert_refused(out: &Output, path: &Path, what: &str) {
    let said = text(out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(utf8(path)), "the path is named: {said}");
    assert!(said.contains(what), "expected {what:?} in: {said}");
    assert!(!said.contains("bit for bit"), "{said}");
}

/// A temporary folder with a recorded session (`session/`, 40 steps) and an outside folder
/// with a precious file.
struct Setup {
    tmp: tempfile::TempDir,
    session: PathBuf,
    outside: PathBuf,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    record_session(&session, 40);
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("precious.txt"), "the user's own data\n").unwrap();
    Setup {
        tmp,
        session,
        outside,
    }
}

#[test]
fn a_recording_replays_bit_for_bit_twice() {
    let s = setup();
    for _ in 0..2 {
        let out = cli(&["replay", utf8(&s.session)]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(text(&out).contains("replayed 40 steps"), "{}", text(&out));
        assert!(text(&out).contains("identical to the recording, bit for bit"));
    }
    let end = std::fs::read_to_string(s.session.join("end.toml")).unwrap();
    assert!(end.starts_with("steps = 40\n"), "{end}");
}

/// `demo --record DIR` into a folder holding a planted `inputs.csv` link to an outside
/// file, or the user's own file: refused before the run, nothing changed anywhere.
#[test]
fn recording_into_a_folder_that_holds_anything_is_refused() {
    let s = setup();
    let planted = s.tmp.path().join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(s.outside.join("precious.txt"), planted.join("inputs.csv")).unwrap();
    let users = s.tmp.path().join("users");
    std::fs::create_dir(&users).unwrap();
    std::fs::write(users.join("notes.txt"), "mine\n").unwrap();
    let linked = s.tmp.path().join("linked");
    std::os::unix::fs::symlink(&s.outside, &linked).unwrap();
    let before = snapshot(s.tmp.path());
    for (dir, what) in [
        (
            &planted,
            "the folder is not empty (it holds \"inputs.csv\")",
        ),
        (&users, "the folder is not empty (it holds \"notes.txt\")"),
        (&linked, "a symbolic link, not a folder"),
        (&s.session, "already holds a recorded session"),
    ] {
        let out = cli(&["demo", "--headless", "--no-save", "--record", utf8(dir)]);
        assert_refused(&out, dir, what);
        assert_eq!(snapshot(s.tmp.path()), before, "{}", dir.display());
    }
}

/// `replay DIR` whose `replay` is a link to another folder, and `--out` naming another
/// recording: refused, the other folder's files unchanged.
#[test]
fn a_replay_never_writes_through_a_link_or_into_a_recording() {
    let s = setup();
    std::fs::write(s.outside.join("solver.csv"), "someone's log\n").unwrap();
    std::os::unix::fs::symlink(&s.outside, s.session.join("replay")).unwrap();
    let other = s.tmp.path().join("other");
    record_session(&other, 5);
    let before = snapshot(s.tmp.path());
    let out = cli(&["replay", utf8(&s.session)]);
    assert_refused(
        &out,
        &s.session.join("replay"),
        "a symbolic link, not a folder",
    );
    assert_eq!(snapshot(s.tmp.path()), before);
    let out = cli(&["replay", utf8(&s.session), "--out", utf8(&other)]);
    assert_refused(&out, &other, "holds a recorded session (session.toml)");
    assert_eq!(snapshot(s.tmp.path()), before);
    // A link inside the output folder at solver.csv is not written through either.
    let out_dir = s.tmp.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::os::unix::fs::symlink(s.outside.join("precious.txt"), out_dir.join("solver.csv")).unwrap();
    let before = snapshot(s.tmp.path());
    let out = cli(&["replay", utf8(&s.session), "--out", utf8(&out_dir)]);
    assert_refused(&out, &out_dir.join("solver.csv"), "never replaces a link");
    assert_eq!(snapshot(s.tmp.path()), before);
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// Each file of the session replaced by a link (to `/dev/zero`, to an outside copy of the
/// same bytes), a FIFO or an oversized sparse file: refused at once (no hang, no 4 GB read).
#[test]
fn replay_reads_only_regular_files_under_a_limit() {
    let s = setup();
    let names = [
        "session.toml",
        "end.toml",
        "inputs.csv",
        "solver.csv",
        "scene.toml",
    ];
    for name in names {
        let path = s.session.join(name);
        let original = std::fs::read(&path).unwrap();
        let copy = s.outside.join(name);
        std::fs::write(&copy, &original).unwrap();
        let cases: [(&str, &dyn Fn()); 4] = [
            ("a symbolic link", &|| {
                std::os::unix::fs::symlink("/dev/zero", &path).unwrap()
            }),
            ("a symbolic link", &|| {
                std::os::unix::fs::symlink(&copy, &path).unwrap()
            }),
            ("a FIFO (named pipe)", &|| mkfifo(&path)),
            ("over the limit of", &|| {
                let f = std::fs::File::create(&path).unwrap();
                f.set_len(if name.ends_with(".csv") {
                    (256 << 30) + 1
                } else {
                    65 << 20
                })
                .unwrap();
            }),
        ];
        for (what, plant) in cases {
            std::fs::remove_file(&path).unwrap();
            plant();
            let before = snapshot(s.tmp.path());
            let out = cli(&["replay", utf8(&s.session)]);
            assert_refused(&out, &path, what);
            assert_eq!(snapshot(s.tmp.path()), before, "{name}: {what}");
        }
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &original).unwrap();
    }
    let out = cli(&["replay", utf8(&s.session)]);
    assert!(out.status.success(), "{}", text(&out));
}

/// Rewrites `end.toml` (a test of what a consistent forgery does).
fn write_end(session: &Path, steps: u64) {
    let size = |n: &str| std::fs::metadata(session.join(n)).unwrap().len();
    let text = format!(
        "steps = {steps}\ninputs_bytes = {}\nsolver_bytes = {}\n",
        size("inputs.csv"),
        size("solver.csv")
    );
    std::fs::write(session.join("end.toml"), text).unwrap();
}

/// Keeps the first `lines` lines of `path`.
fn truncate_lines(path: &Path, lines: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let kept: String = text.split_inclusive('\n').take(lines).collect();
    std::fs::write(path, kept).unwrap();
}

#[test]
fn a_truncated_empty_unclosed_or_old_recording_is_refused() {
    let s = setup();
    let (inputs, solver, end) = (
        s.session.join("inputs.csv"),
        s.session.join("solver.csv"),
        s.session.join("end.toml"),
    );
    // Both logs cut to their headers (the old replay said "identical" over 0 steps).
    truncate_lines(&inputs, 1);
    truncate_lines(&solver, 1);
    let before = snapshot(s.tmp.path());
    let out = cli(&["replay", utf8(&s.session)]);
    assert_refused(&out, &inputs, "but end.toml states");
    assert!(text(&out).contains("truncated or changed after the recording"));
    assert_eq!(snapshot(s.tmp.path()), before);
    // The sizes forged to match: the step count still does not.
    write_end(&s.session, 40);
    let out = cli(&["replay", utf8(&s.session)]);
    assert_refused(&out, &inputs, "0 steps, but end.toml states 40");
    // No end marker: the recording was never closed.
    std::fs::remove_file(&end).unwrap();
    let out = cli(&["replay", utf8(&s.session)]);
    assert_refused(&out, &end, "missing: the recording was never closed");
    // A closed recording of no step.
    let empty = s.tmp.path().join("empty");
    record_session(&empty, 0);
    let out = cli(&["replay", utf8(&empty)]);
    assert_refused(&out, &empty.join("end.toml"), "steps = 0");
    // A format 1 recording (before end.toml): refused with how to record it again.
    let old = s.tmp.path().join("old");
    record_session(&old, 3);
    let info = old.join("session.toml");
    let text1 = std::fs::read_to_string(&info)
        .unwrap()
        .replace("format = 3", "format = 1");
    std::fs::write(&info, text1).unwrap();
    std::fs::remove_file(old.join("end.toml")).unwrap();
    let out = cli(&["replay", utf8(&old)]);
    assert_refused(
        &out,
        &info,
        "record the session again (`--record NEW_FOLDER`)",
    );
    // A format 2 recording (before the parts) is one part and replays as before; a format
    // newer than this version's is refused, naming the ones it reads.
    let two = s.tmp.path().join("two");
    record_session(&two, 3);
    let info = two.join("session.toml");
    let written = std::fs::read_to_string(&info).unwrap();
    std::fs::write(&info, written.replace("format = 3", "format = 2")).unwrap();
    let out = cli(&["replay", utf8(&two)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("identical to the recording, bit for bit"));
    std::fs::write(&info, written.replace("format = 3", "format = 4")).unwrap();
    let out = cli(&["replay", utf8(&two)]);
    assert_refused(
        &out,
        &info,
        "format 4 is not a format this version reads (2 to 3)",
    );
}

/// A session in parts (the sandbox's resets) replays part after part, each compared with its
/// own log; a later part that is missing, or named out of the session, is refused.
#[test]
fn a_session_in_parts_replays_every_part_and_a_missing_part_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let session = tmp.path().join("session");
    record_session_in_parts(&session, 20, 3);
    let out = cli(&["replay", utf8(&session)]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("replayed 60 steps (0.6 s simulated)"),
        "{said}"
    );
    assert!(
        said.contains("part 3: ten_pendula, 20 steps to t = 0.6 s"),
        "{said}"
    );
    assert!(
        said.contains("every part's (3) solver log identical to the recording, bit for bit"),
        "{said}"
    );
    for part in ["part2", "part3"] {
        assert_eq!(
            std::fs::read(session.join(part).join("solver.csv")).unwrap(),
            std::fs::read(session.join("replay").join(part).join("solver.csv")).unwrap(),
            "{part}"
        );
    }
    // A later part changed: named with its line.
    let solver3 = session.join("part3").join("solver.csv");
    let recorded = std::fs::read_to_string(&solver3).unwrap();
    // The last row's time, 0.6, made 9.6: same size, line 21.
    let last = recorded.trim_end().rfind('\n').unwrap() + 1;
    assert!(
        recorded[last..].starts_with("0.6,"),
        "{}",
        &recorded[last..]
    );
    let changed = format!("{}9{}", &recorded[..last], &recorded[last + 1..]);
    std::fs::write(&solver3, &changed).unwrap();
    let out = cli(&["replay", utf8(&session)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("differs from part 3's recording at line 21"),
        "{}",
        text(&out)
    );
    // The last part gone: refused, naming the end marker that names it.
    std::fs::remove_dir_all(session.join("part3")).unwrap();
    let out = cli(&["replay", utf8(&session)]);
    assert_refused(
        &out,
        &session.join("part2").join("end.toml"),
        "the session's later parts are missing",
    );
    // A part named out of the session folder.
    let end = session.join("part2").join("end.toml");
    let marker = std::fs::read_to_string(&end).unwrap();
    std::fs::remove_file(&end).unwrap();
    std::fs::write(&end, marker.replace("\"part3\"", "\"../elsewhere\"")).unwrap();
    let out = cli(&["replay", utf8(&session)]);
    assert_refused(
        &out,
        &end,
        "next_part = \"../elsewhere\", expected \"part3\"",
    );
}

/// The peak resident size of `ar-multibody replay SESSION`, MB, and its exit status
/// (`wait4` on that process alone).
// The child is waited for by `wait4`, which std's Child does not know of.
#[allow(clippy::zombie_processes)]
fn replay_peak_mb(session: &Path) -> (f64, i32) {
    let child = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(["replay", utf8(session)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet waited for; the pointers are to live locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    assert!(libc::WIFEXITED(status));
    (usage.ru_maxrss as f64 / 1024.0, libc::WEXITSTATUS(status))
}

/// The logs are streamed: a recording whose `solver.csv` has 150 MB of extra lines (its end
/// marker forged to match) is compared to the first differing line in no more memory than
/// the plain recording's replay takes, give or take 30 MB (the old replay read both logs
/// whole: 150 MB more).
#[test]
fn replay_streams_the_solver_logs() {
    let s = setup();
    let (plain_mb, status) = replay_peak_mb(&s.session);
    assert_eq!(status, 0);
    let solver = s.session.join("solver.csv");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&solver)
        .unwrap();
    let line = format!("{}\n", "9".repeat(999));
    let chunk = line.repeat(1000);
    for _ in 0..150 {
        f.write_all(chunk.as_bytes()).unwrap();
    }
    drop(f);
    write_end(&s.session, 40);
    let (padded_mb, status) = replay_peak_mb(&s.session);
    assert_eq!(status, 1, "the extra lines differ");
    eprintln!(
        "replay's peak resident size: {plain_mb:.1} MB, {padded_mb:.1} MB with 150 MB more log"
    );
    assert!(
        padded_mb < plain_mb + 30.0,
        "{padded_mb:.1} MB for a 150 MB log, {plain_mb:.1} MB without"
    );
}

/// The library call the CLI makes agrees, and a replay does not touch the outside folder.
#[test]
fn the_in_process_replay_agrees() {
    let s = setup();
    let before = snapshot(&s.outside);
    let outcome = replay_in_process(&s.session, &s.tmp.path().join("replayed")).unwrap();
    assert_eq!(outcome.steps, 40);
    assert_eq!(outcome.difference, None);
    assert_eq!(snapshot(&s.outside), before);
}
