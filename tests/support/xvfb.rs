//! A virtual X server (Xvfb) for the tests that drive a real window with synthetic mouse and
//! key events (xdotool, XTest), and the program's status lines read as they come (included
//! with `#[path]`). `make test` installs `xvfb` and `xdotool`.
//!
//! The rig is slow on a loaded machine in a debug build (a frame can take seconds), so the
//! tests wait for the program's status lines rather than for fixed times.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// Longest wait for one status line (a frame may take seconds on a loaded debug build).
pub const LINE_TIMEOUT: Duration = Duration::from_secs(120);

/// A virtual X server, stopped on drop. One at a time: two tests picking the same free display
/// number would share one server, and each would find the other's window.
pub struct Xvfb {
    child: Child,
    /// The `DISPLAY` to run under.
    pub display: String,
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
}

static ONE_SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether `program` is on the `PATH`.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

impl Xvfb {
    /// A server with one screen of `screen` (`WIDTHxHEIGHTxDEPTH`); panics without Xvfb.
    pub fn start(screen: &str) -> Self {
        let one_at_a_time = ONE_SERVER.lock().unwrap_or_else(|p| p.into_inner());
        let n = (90..190)
            .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists())
            .expect("a free X display number");
        let display = format!(":{n}");
        let child = Command::new("Xvfb")
            .args([&display, "-screen", "0", screen, "-nolisten", "tcp"])
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (apt-get install xvfb xdotool; `make test` installs them)");
        let socket = format!("/tmp/.X11-unix/X{n}");
        let start = Instant::now();
        while !Path::new(&socket).exists() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "Xvfb did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Self {
            child,
            display,
            _one_at_a_time: one_at_a_time,
        }
    }

    /// [`Self::start`], or `None` with a line on standard error saying why `test` is
    /// skipped when Xvfb or xdotool is not installed.
    #[allow(dead_code)]
    pub fn start_or_skip(test: &str, screen: &str) -> Option<Self> {
        let missing: Vec<&str> = ["Xvfb", "xdotool"]
            .into_iter()
            .filter(|p| !on_path(p))
            .collect();
        if missing.is_empty() {
            return Some(Self::start(screen));
        }
        eprintln!(
            "SKIPPED {test}: {} not installed (apt-get install xvfb xdotool; `make test` installs them)",
            missing.join(" and ")
        );
        None
    }

    /// Runs xdotool on this display; its standard output, trimmed.
    pub fn xdotool(&self, args: &[&str]) -> String {
        let out = Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool (apt-get install xdotool; `make test` installs it)");
        assert!(out.status.success(), "xdotool {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Starts `command` on this display with its standard output and error piped.
    #[allow(dead_code)]
    pub fn spawn(&self, command: &mut Command) -> Child {
        command
            .env("DISPLAY", &self.display)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Moves the pointer to pixel (`x_px`, `y_px`) of `window`, rounded.
    pub fn move_to(&self, window: &str, x_px: f64, y_px: f64) {
        self.xdotool(&[
            "mousemove",
            "--window",
            window,
            &format!("{x_px:.0}"),
            &format!("{y_px:.0}"),
        ]);
    }

    /// The first window whose name matches `name` (a regular expression), waiting for it.
    pub fn window(&self, name: &str) -> String {
        let found = self.xdotool(&["search", "--sync", "--name", name]);
        found.lines().next().unwrap().to_owned()
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Killed, the server leaves its socket and lock file behind; left there, they used up
        // the display numbers 90-189 after some fifty runs ("a free X display number").
        let n = self.display.trim_start_matches(':');
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{n}"));
        let _ = std::fs::remove_file(format!("/tmp/.X{n}-lock"));
    }
}

/// The lines of `child`'s standard output as they come, each echoed to the test's standard
/// error after `who`; its standard error is echoed too and gathered on a thread of its own (so
/// a full pipe never blocks the program), for the message of a failed test.
#[allow(dead_code)]
pub fn stdout_lines(child: &mut Child, who: &'static str) -> (Receiver<String>, Receiver<String>) {
    let (tx, lines) = channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            eprintln!("{who}: {line}");
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let (err_tx, stderr_text) = channel();
    if let Some(stderr) = child.stderr.take() {
        std::thread::spawn(move || {
            // Echoed as it comes too: a test that fails waiting for a status line shows why
            // the program stopped.
            let mut text = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("{who} (stderr): {line}");
                text.push_str(&line);
                text.push('\n');
            }
            let _ = err_tx.send(text);
        });
    }
    (lines, stderr_text)
}

/// Waits for a stdout line containing `needle`; returns it.
pub fn wait_for(lines: &Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + LINE_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.contains(needle) => return line,
            Ok(_) => continue,
            Err(e) => panic!("no line with {needle:?} ({e})"),
        }
    }
}

/// The number just before `unit` in `line` (e.g. "16.5 cm").
pub fn figure_before(line: &str, unit: &str) -> f64 {
    let head = &line[..line
        .find(unit)
        .unwrap_or_else(|| panic!("{unit} in {line}"))];
    head.trim_end()
        .rsplit(' ')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("a number before {unit} in {line}"))
}
