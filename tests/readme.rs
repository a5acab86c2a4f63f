//! The README's commands work as written: every `ar-multibody …` line of its `sh` blocks is
//! run from the repository's folder (where the README says to run them), except the lines
//! marked `# hardware` (they need a camera, an arm or a display) or `# interactive` (two
//! terminals, or until Ctrl-C), and must exit 0. The README also stays a short guide.

use std::path::Path;
use std::process::Command;

const README: &str = include_str!("../README.md");
/// The README is a guide; the reference lives in `src/manual/` (rustdoc).
const MAX_README_LINES: usize = 250;

/// The command lines of the README's `sh` blocks, with continuations joined.
fn sh_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(tag) = trimmed.strip_prefix("```") {
            in_sh = !in_sh && tag.trim() == "sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(trimmed);
        if !pending.is_empty() {
            out.push(std::mem::take(&mut pending));
        }
    }
    out
}

#[test]
fn the_readme_is_a_short_guide_with_the_two_set_up_commands() {
    let lines = README.lines().count();
    assert!(
        lines <= MAX_README_LINES,
        "README.md has {lines} lines; the guide keeps to {MAX_README_LINES} (details go to src/manual/)"
    );
    let all = sh_lines(README);
    assert!(all.iter().any(|l| l.starts_with("make demo")));
    assert!(all.iter().any(|l| l.starts_with("make test")));
    let set_up: Vec<_> = all.iter().filter(|l| l.starts_with("make ")).collect();
    assert_eq!(set_up.len(), 2, "exactly two set-up commands: {set_up:?}");
    // Every reference page it links to exists.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (k, _) in README.match_indices("](src/manual/") {
        let rest = &README[k + 2..];
        let path = &rest[..rest.find(')').expect("closed link")];
        assert!(root.join(path).is_file(), "README links to missing {path}");
    }
}

#[test]
fn every_non_hardware_command_of_the_readme_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(root.join("out")).expect("out/ for the README's outputs");
    let commands: Vec<String> = sh_lines(README)
        .into_iter()
        .filter(|l| l.starts_with("ar-multibody "))
        .filter(|l| !l.contains("# hardware") && !l.contains("# interactive"))
        .collect();
    assert!(
        commands.len() >= 10,
        "the README shows {} runnable commands: {commands:?}",
        commands.len()
    );
    for line in &commands {
        let without_comment = line.split(" #").next().expect("a command").trim();
        assert!(
            !without_comment.contains(['"', '\'', '$', '|', '>', '<', '*']),
            "keep README commands free of shell syntax so that this test runs them as written: {line}"
        );
        let mut words = without_comment.split_whitespace().skip(1);
        let output = Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
            .args(words.by_ref())
            .current_dir(root)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .expect("runs the binary");
        assert!(
            output.status.success(),
            "README command failed ({}): {line}\nstderr:\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn the_marked_commands_are_the_ones_that_need_devices() {
    let skipped: Vec<String> = sh_lines(README)
        .into_iter()
        .filter(|l| l.starts_with("ar-multibody "))
        .filter(|l| l.contains("# hardware") || l.contains("# interactive"))
        .collect();
    for line in &skipped {
        let needs_device = [
            "--device",
            "--arm auto",
            "--config",
            "arm simulate",
            "--port",
            // A window on a display (tests/sandbox_xvfb.rs runs it in a virtual X server).
            "sandbox",
        ]
        .iter()
        .any(|d| line.contains(d));
        assert!(
            needs_device,
            "{line} is marked as needing a device but names none: run it in the test instead"
        );
    }
}
