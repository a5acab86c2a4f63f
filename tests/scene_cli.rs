//! `ar-multibody scene`: generated scenes load and run in `simulate`, and bad sizes are refused
//! with the flag named.

#[path = "support/cli.rs"]
mod cli;
use cli::run;

#[test]
fn a_generated_chain_and_mobile_run_in_simulate() {
    let dir = tempfile::tempdir().unwrap();
    for (kind, flag, value, bodies) in [
        ("chain", "--links", "25", "25 dynamic bodies"),
        ("mobile", "--depth", "5", "31 dynamic bodies"),
        ("pile", "--bodies", "40", "40 dynamic bodies"),
    ] {
        let path = dir.path().join(format!("{kind}.toml"));
        let out = run(&["scene", kind, flag, value, "--out", path.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = run(&["simulate", path.to_str().unwrap(), "--duration", "0.2"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(bodies), "{stdout}");
    }
}

#[test]
fn the_chain_goes_to_stdout_and_bad_sizes_are_refused() {
    let out = run(&["scene", "chain", "--links", "3"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.matches("[[body]]").count(), 3);
    for (args, flag) in [
        (&["scene", "chain", "--links", "0"][..], "--links 0"),
        (&["scene", "mobile", "--depth", "1"][..], "--depth 1"),
        (&["scene", "pile", "--bodies", "0"][..], "--bodies 0"),
    ] {
        let out = run(args);
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(flag), "{stderr}");
        assert!(out.stdout.is_empty(), "no scene written");
    }
}
