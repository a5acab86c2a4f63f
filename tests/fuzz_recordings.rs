//! Issue 45: a fuzz harness for `replay` on hostile session folders. A small recording (the
//! ten pendula, 20 steps) is copied and damaged: bytes flipped, ranges deleted or
//! duplicated, files truncated, emptied, removed, grown with garbage or made oversized
//! (sparse), replaced by links (to `/dev/zero`, to a file or a folder outside the session,
//! dangling) or by FIFOs, and the replay's output folder planted as a link or a file; then
//! `replay` runs on it, in a thread watched for hangs. Nothing may panic or hang, nothing
//! outside the session folder may change (checked by snapshot: every file's kind, bytes,
//! mode, link target), every refusal names a file of the session, and a replay reported
//! identical must have written the recorded log byte for byte.
//!
//! `make test` runs a short pass (PROPTEST_CASES defaults to 256); `make fuzz` runs
//! `make fuzz-recordings`, 20,000 cases.

#[path = "support/file_tree.rs"]
mod file_tree;
#[path = "support/recording.rs"]
mod recording;

use file_tree::snapshot;
use proptest::prelude::*;
use recording::{record_session, replay_in_process};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

const FILES: [&str; 5] = [
    "session.toml",
    "end.toml",
    "inputs.csv",
    "solver.csv",
    "scene.toml",
];

/// How long one replay of 20 steps may take before it counts as a hang: thousands of times
/// what it takes, so that no load of the machine makes a working replay fail.
const HANG_AFTER: Duration = Duration::from_secs(120);

/// The template recording, made once per test process (in Cargo's temporary folder for
/// integration tests, made afresh).
fn template() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-recordings-template");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let session = dir.join("session");
        record_session(&session, 20);
        session
    })
}

#[derive(Debug, Clone)]
enum Target {
    DevZero,
    OutsideFile,
    OutsideDir,
    Dangling,
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipByte(usize, usize, u8),
    Delete(usize, usize, usize),
    Duplicate(usize, usize, usize),
    Truncate(usize, usize),
    Garbage(usize, usize),
    Remove(usize),
    Oversize(usize),
    Link(usize, Target),
    Fifo(usize),
    ReplayLink(Target),
    ReplayIsFile,
    ReplayLogLink(Target),
}

fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        Just(Target::DevZero),
        Just(Target::OutsideFile),
        Just(Target::OutsideDir),
        Just(Target::Dangling),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let file = 0..FILES.len();
    prop_oneof![
        6 => (file.clone(), any::<usize>(), 1u8..=255).prop_map(|(f, p, b)| Mutation::FlipByte(f, p, b)),
        2 => (file.clone(), any::<usize>(), 1usize..64).prop_map(|(f, p, n)| Mutation::Delete(f, p, n)),
        2 => (file.clone(), any::<usize>(), 1usize..200).prop_map(|(f, p, n)| Mutation::Duplicate(f, p, n)),
        2 => (file.clone(), any::<usize>()).prop_map(|(f, n)| Mutation::Truncate(f, n)),
        1 => (file.clone(), 1usize..5000).prop_map(|(f, n)| Mutation::Garbage(f, n)),
        1 => file.clone().prop_map(Mutation::Remove),
        1 => file.clone().prop_map(Mutation::Oversize),
        2 => (file.clone(), target()).prop_map(|(f, t)| Mutation::Link(f, t)),
        1 => file.prop_map(Mutation::Fifo),
        1 => target().prop_map(Mutation::ReplayLink),
        1 => Just(Mutation::ReplayIsFile),
        1 => target().prop_map(Mutation::ReplayLogLink),
    ]
}

/// A case's folders: the session copied from the template, and an outside folder with the
/// files links point at.
struct Case {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    session: PathBuf,
    outside: PathBuf,
}

fn new_case() -> Case {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let session = root.join("session");
    std::fs::create_dir(&session).unwrap();
    for name in FILES {
        std::fs::copy(template().join(name), session.join(name)).unwrap();
    }
    let outside = root.join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("precious.txt"), "the user's own data\n").unwrap();
    // Copies of the session's files outside, so that a link to one is otherwise valid.
    for name in FILES {
        std::fs::copy(template().join(name), outside.join(name)).unwrap();
    }
    Case {
        _tmp: tmp,
        root,
        session,
        outside,
    }
}

fn link_target(case: &Case, t: &Target, name: &str) -> PathBuf {
    match t {
        Target::DevZero => PathBuf::from("/dev/zero"),
        Target::OutsideFile => case.outside.join(name),
        Target::OutsideDir => case.outside.clone(),
        Target::Dangling => case.root.join("nowhere"),
    }
}

fn edit(path: &Path, change: impl FnOnce(&mut Vec<u8>)) {
    // Only a small regular file is edited (an earlier mutation may have made it a link, or
    // a sparse oversized file).
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() < 1 << 20) {
        let mut b = std::fs::read(path).unwrap();
        change(&mut b);
        std::fs::write(path, b).unwrap();
    }
}

fn replace(path: &Path) {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }
}

fn apply(case: &Case, m: &Mutation) {
    let file = |f: usize| case.session.join(FILES[f]);
    match m {
        Mutation::FlipByte(f, p, x) => edit(&file(*f), |b| {
            if !b.is_empty() {
                let i = p % b.len();
                b[i] ^= x;
            }
        }),
        Mutation::Delete(f, p, n) => edit(&file(*f), |b| {
            let i = p % b.len().max(1);
            let j = (i + n).min(b.len());
            if i < j {
                b.drain(i..j);
            }
        }),
        Mutation::Duplicate(f, p, n) => edit(&file(*f), |b| {
            let i = p % b.len().max(1);
            let j = (i + n).min(b.len());
            if i < j {
                let part = b[i..j].to_vec();
                b.splice(j..j, part);
            }
        }),
        Mutation::Truncate(f, n) => edit(&file(*f), |b| b.truncate(n % (b.len() + 1))),
        Mutation::Garbage(f, n) => edit(&file(*f), |b| {
            b.extend((0..*n).map(|i| (i * 7919 % 251) as u8));
        }),
        Mutation::Remove(f) => replace(&file(*f)),
        Mutation::Oversize(f) => {
            let path = file(*f);
            replace(&path);
            let big = if FILES[*f].ends_with(".csv") {
                (256 << 30) + 1
            } else {
                65 << 20
            };
            std::fs::File::create(&path).unwrap().set_len(big).unwrap();
        }
        Mutation::Link(f, t) => {
            let path = file(*f);
            replace(&path);
            std::os::unix::fs::symlink(link_target(case, t, FILES[*f]), &path).unwrap();
        }
        Mutation::Fifo(f) => {
            let path = file(*f);
            replace(&path);
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path; mkfifo has no other preconditions.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        Mutation::ReplayLink(t) => {
            let path = case.session.join("replay");
            replace(&path);
            std::os::unix::fs::symlink(link_target(case, t, "solver.csv"), &path).unwrap();
        }
        Mutation::ReplayIsFile => {
            let path = case.session.join("replay");
            replace(&path);
            std::fs::write(&path, "not a folder\n").unwrap();
        }
        Mutation::ReplayLogLink(t) => {
            let dir = case.session.join("replay");
            replace(&dir);
            std::fs::create_dir(&dir).unwrap();
            std::os::unix::fs::symlink(link_target(case, t, "solver.csv"), dir.join("solver.csv"))
                .unwrap();
        }
    }
}

/// Replays `case`'s session into its `replay` folder in a thread; a replay still running
/// after [`HANG_AFTER`] fails the case.
fn replay_watched(case: &Case) -> Result<(bool, String), TestCaseError> {
    let (session, out) = (case.session.clone(), case.session.join("replay"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| replay_in_process(&session, &out));
        let _ = tx.send(result);
    });
    match rx.recv_timeout(HANG_AFTER) {
        Err(_) => Err(TestCaseError::fail("replay hung")),
        Ok(Err(_)) => Err(TestCaseError::fail("replay panicked")),
        Ok(Ok(Ok(outcome))) => Ok((outcome.difference.is_none(), String::new())),
        Ok(Ok(Err(e))) => Ok((false, e.to_string())),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_session_folders(mutations in prop::collection::vec(mutation(), 1..4)) {
        let case = new_case();
        for m in &mutations {
            apply(&case, m);
        }
        let outside_before = snapshot(&case.outside);
        let template_before = snapshot(template());
        let (identical, refusal) = replay_watched(&case)?;
        prop_assert_eq!(&snapshot(&case.outside), &outside_before, "outside changed");
        prop_assert_eq!(&snapshot(template()), &template_before);
        prop_assert!(
            !case.root.join("nowhere").exists(),
            "a dangling link was written through"
        );
        if !refusal.is_empty() {
            prop_assert!(
                refusal.contains(case.session.to_str().unwrap()),
                "a refusal that names no file of the session: {}", refusal
            );
        }
        if identical {
            // Reported identical: the replayed log is the recorded one, byte for byte.
            let recorded = std::fs::read(case.session.join("solver.csv")).unwrap();
            let replayed = std::fs::read(case.session.join("replay/solver.csv")).unwrap();
            prop_assert!(recorded == replayed, "identical, but the logs differ");
        }
    }
}
