//! Issue 45 (trust, part two), "outputs never replace what they must not": an output
//! (`scene chain --out`, `calibrate tracker --out`, every file written through the atomic
//! writer) replaces only a regular file its user could open for writing, or creates a new
//! one; a FIFO, a device, a link or another user's read-only file is refused with the path
//! and what is there, and a run whose output is one of its inputs, or whose two outputs share
//! a path, is refused before anything is written. The files `simulate` streams row by row,
//! `--plot` and `calibrate camera --out` follow the same rules, and an error names a cause
//! once. Every case checks the exit status, the message, and that every file that was there
//! is unchanged (kind, bytes, mode, owner).
//!
//! Devices and FIFOs are made in a temporary folder; the device and the other-user cases run
//! only as root (`mknod`, and the binary run as uid 65534 through `setpriv`), and say so
//! when skipped.

#[path = "support/file_tree.rs"]
mod file_tree;

use file_tree::snapshot;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn utf8(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `scene chain --links 2 --out OUT`.
fn scene_out(out: &Path) -> Output {
    bin()
        .args(["scene", "chain", "--links", "2", "--out", utf8(out)])
        .output()
        .unwrap()
}

/// Asserts a refusal: exit status 1, one error naming `path` and containing `what`.
fn assert_refused(out: &Output, path: &Path, what: &str) {
    let said = text(out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains(utf8(path)), "the path is named: {said}");
    assert!(said.contains(what), "expected {what:?} in: {said}");
    assert_eq!(said.matches("error:").count(), 1, "one message: {said}");
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn an_output_over_a_fifo_is_refused_and_the_fifo_stays() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("scene.toml");
    mkfifo(&fifo);
    let before = snapshot(dir.path());
    let out = scene_out(&fifo);
    assert_refused(&out, &fifo, "a FIFO (named pipe), not a regular file");
    assert_eq!(
        snapshot(dir.path()),
        before,
        "no temporary file left, FIFO kept"
    );
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

/// A character device made with `mknod` in the temporary folder (root only), and in any
/// case a link to `/dev/null` in it: neither is replaced (the old writer turned both into
/// regular files with exit 0).
#[test]
fn an_output_over_a_device_or_a_link_to_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("null-link.toml");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let device = dir.path().join("null-device.toml");
    // The null device's numbers (1, 3): writing it would be harmless even if it were.
    let made = is_root()
        && Command::new("mknod")
            .args([utf8(&device), "c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
    if !made {
        eprintln!("skipped the mknod case: not root, or mknod is not allowed here");
    }
    let before = snapshot(dir.path());
    let out = scene_out(&link);
    assert_refused(&out, &link, "a symbolic link, not a regular file");
    assert!(
        text(&out).contains("never replaces a link"),
        "{}",
        text(&out)
    );
    if made {
        let out = scene_out(&device);
        assert_refused(&out, &device, "a device, not a regular file");
        assert!(std::fs::symlink_metadata(&device)
            .unwrap()
            .file_type()
            .is_char_device());
    }
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/dev/null"));
}

/// The old writer renamed over another user's read-only file in a world-writable folder.
/// As root: the folder 0777 (no sticky bit), a calibration file of root's, mode 0444, and
/// the binary run as uid/gid 65534 (`setpriv`): refused, the file unchanged; the same user
/// may still write a new file there, and replace a file of its own.
#[test]
fn another_users_read_only_file_is_not_replaced() {
    if !is_root() {
        eprintln!("skipped: needs root to run the binary as another user");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let theirs = dir.path().join("tracker.toml");
    std::fs::write(&theirs, "# root's calibration\n").unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o444)).unwrap();
    let as_nobody = |out: &Path| {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_ar-multibody"))
            .args(["scene", "chain", "--links", "2", "--out", utf8(out)])
            .output()
            .unwrap()
    };
    let before = snapshot(dir.path());
    let out = as_nobody(&theirs);
    assert_refused(
        &out,
        &theirs,
        "may not open for writing (permission denied)",
    );
    assert_eq!(snapshot(dir.path()), before);

    // The control: the same user writes a new file, then replaces it (its own).
    let own = dir.path().join("own.toml");
    let out = as_nobody(&own);
    assert!(out.status.success(), "{}", text(&out));
    let out = as_nobody(&own);
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&own).unwrap().contains("[[body]]"));
    assert_eq!(
        std::fs::read_to_string(&theirs).unwrap(),
        "# root's calibration\n"
    );
}

/// A regular file is still replaced, atomically, keeping its mode.
#[test]
fn a_regular_file_is_still_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("chain.toml");
    std::fs::write(&out_path, "old").unwrap();
    std::fs::set_permissions(&out_path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = scene_out(&out_path);
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&out_path)
        .unwrap()
        .contains("[[body]]"));
    let mode = std::fs::metadata(&out_path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// A scene file and a stylus script in a temporary folder.
fn simulate_inputs(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let scene = dir.join("scene.toml");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/scenes/ten_pendula.toml");
    std::fs::copy(shipped, &scene).unwrap();
    let stylus = dir.join("stylus.csv");
    std::fs::write(
        &stylus,
        "t_s,x_m,y_m,z_m,grab\n0,0,0,0.1,0\n0.05,0,0,0.1,1\n",
    )
    .unwrap();
    (scene, stylus)
}

fn simulate(args: &[&str]) -> Output {
    bin()
        .arg("simulate")
        .args(args)
        .args(["--duration", "0.05"])
        .output()
        .unwrap()
}

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (scene, stylus) = simulate_inputs(dir.path());
    let (scene_s, stylus_s) = (utf8(&scene), utf8(&stylus));
    // Through a link too: the link is to the input.
    let link = dir.path().join("out.csv");
    std::os::unix::fs::symlink(&scene, &link).unwrap();
    let before = snapshot(dir.path());
    let cases: [(&[&str], &str); 4] = [
        (&[scene_s, "--csv", scene_s], "--csv"),
        (&[scene_s, "--stylus", stylus_s, "--csv", stylus_s], "--csv"),
        (
            &[scene_s, "--poses", stylus_s, "--stylus", stylus_s],
            "--poses",
        ),
        (&[scene_s, "--contacts", utf8(&link)], "--contacts"),
    ];
    for (args, flag) in cases {
        let out = simulate(args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(said.contains(&format!("error: {flag} ")), "{said}");
        assert!(
            said.contains("is the same file as the")
                && said.contains("never replaces one of the run's inputs"),
            "{said}"
        );
        assert_eq!(snapshot(dir.path()), before, "{args:?} changed a file");
    }
    let out = simulate(&[scene_s, "--csv", scene_s]);
    assert!(
        text(&out).contains(&format!(
            "--csv {scene_s} is the same file as the scene file"
        )),
        "{}",
        text(&out)
    );
}

#[test]
fn two_outputs_on_one_path_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (scene, _) = simulate_inputs(dir.path());
    let existing = dir.path().join("x.csv");
    std::fs::write(&existing, "keep me\n").unwrap();
    let new = dir.path().join("new.csv");
    let before = snapshot(dir.path());
    for (a, b) in [(&existing, &existing), (&new, &new)] {
        let out = simulate(&[utf8(&scene), "--csv", utf8(a), "--poses", utf8(b)]);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        let expected = format!(
            "--csv {} and --poses {} are the same file",
            utf8(a),
            utf8(b)
        );
        assert!(said.contains(&expected), "{said}");
        assert_eq!(snapshot(dir.path()), before);
    }
    assert!(!new.exists());
}

#[test]
fn calibrate_tracker_out_naming_its_pairs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = dir.path().join("pairs.csv");
    let mut csv = String::from("world_x,world_y,world_z,arm_x,arm_y,arm_z\n");
    for i in 0..8u32 {
        let corner = |bit: u32| f64::from((i >> bit) & 1) * 0.08;
        let (x, y, z) = (corner(0), corner(1), corner(2));
        csv.push_str(&format!("{x},{y},{z},{},{},{}\n", x + 0.3, y - 0.1, z));
    }
    std::fs::write(&pairs, &csv).unwrap();
    let before = snapshot(dir.path());
    let out = bin()
        .args([
            "calibrate",
            "tracker",
            "--pairs",
            utf8(&pairs),
            "--out",
            utf8(&pairs),
        ])
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let expected = format!(
        "--out {} is the same file as the --pairs {}",
        utf8(&pairs),
        utf8(&pairs)
    );
    assert!(said.contains(&expected), "{said}");
    assert_eq!(snapshot(dir.path()), before);
    // The control: the same pairs fit and write to a new file.
    let tracker = dir.path().join("tracker.toml");
    let out = bin()
        .args([
            "calibrate",
            "tracker",
            "--pairs",
            utf8(&pairs),
            "--out",
            utf8(&tracker),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&pairs).unwrap(), csv);
}

/// The CSV files `simulate` streams (`--csv`, `--poses`, `--contacts`) were opened with a
/// plain create-and-truncate: a FIFO blocked the run until a reader came, a link was written
/// through. Now they are refused like the atomic writer's targets, before the run.
#[test]
fn a_streamed_csv_over_a_fifo_or_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.csv");
    mkfifo(&fifo);
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("poses.csv");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let before = snapshot(dir.path());
    for (flag, path, what) in [
        ("--csv", &fifo, "a FIFO (named pipe), not a regular file"),
        ("--poses", &link, "a symbolic link, not a regular file"),
        (
            "--contacts",
            &fifo,
            "a FIFO (named pipe), not a regular file",
        ),
    ] {
        let out = simulate(&["ten_pendula", flag, utf8(path)]);
        assert_refused(&out, path, what);
        assert_eq!(snapshot(dir.path()), before, "{flag}");
    }
}

/// `--plot` into a folder that does not exist said "backend error: Drawing backend error:
/// ImageError(IoError(Os { code: 2, … }))" after the whole run; now it is refused in words
/// before the run, and a plot is written atomically.
#[test]
fn a_plot_into_a_missing_folder_is_refused_in_words_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("no such folder").join("plot.png");
    let out = simulate(&["ten_pendula", "--plot", utf8(&plot)]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    let expected = format!(
        "error: --plot {}: the folder {} does not exist",
        utf8(&plot),
        utf8(plot.parent().unwrap())
    );
    assert_eq!(said.trim(), expected, "no run, no other words");
    let good = dir.path().join("plot.png");
    let out = simulate(&["ten_pendula", "--plot", utf8(&good)]);
    assert!(out.status.success(), "{}", text(&out));
    let png = std::fs::read(&good).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "the plot alone, no temporary file left"
    );
}

/// `calibrate camera --out` naming one of the images it reads, or a FIFO: refused before any
/// image is read, the images unchanged.
#[test]
fn calibrate_camera_out_naming_an_image_or_a_fifo_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("view01.png");
    std::fs::write(&image, b"\x89PNG not really").unwrap();
    let fifo = dir.path().join("camera.toml");
    mkfifo(&fifo);
    let before = snapshot(dir.path());
    let camera = |out: &Path| {
        bin()
            .args(["calibrate", "camera", "--images", utf8(dir.path())])
            .args(["--out", utf8(out)])
            .output()
            .unwrap()
    };
    let out = camera(&image);
    let expected = format!(
        "--out {} is the same file as the --images image {}",
        utf8(&image),
        utf8(&image)
    );
    assert_refused(&out, &image, &expected);
    assert_refused(
        &camera(&fifo),
        &fifo,
        "a FIFO (named pipe), not a regular file",
    );
    assert_eq!(snapshot(dir.path()), before);
}

/// A cause that a message already names is not printed again ("No such file or directory
/// (os error 2): No such file or directory (os error 2)").
#[test]
fn a_missing_file_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let runs = [
        bin().arg("replay").arg(&missing).output().unwrap(),
        bin()
            .args(["calibrate", "tracker", "--pairs", utf8(&missing), "--out"])
            .arg(dir.path().join("out.toml"))
            .output()
            .unwrap(),
        simulate(&[utf8(&missing)]),
    ];
    for out in runs {
        let said = text(&out);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert_eq!(
            said.matches("No such file or directory").count(),
            1,
            "{said}"
        );
        assert!(said.contains(utf8(&missing)), "{said}");
    }
}
