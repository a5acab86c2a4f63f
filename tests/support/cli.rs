//! The program run as a user runs it, shared by the command-line tests (included with
//! `#[path]`): from the repository's root, so scene names and relative paths resolve there.

// Each test file includes this whole and uses what it needs.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

/// Runs `ar-multibody ARGS` from the repository's root to its end.
pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the binary runs")
}

/// `out`, after checking that the run succeeded (its standard error otherwise).
pub fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
