//! The CSV files `simulate` writes as the run goes (`--csv`, `--poses`, `--contacts`), the
//! long help that documents their columns, and the run's progress bar and Ctrl-C handling
//! (both methods).
//!
//! Rows are streamed through the workspace's CSV writer (`ar_io::csv_write`) opened
//! before the run, not collected in memory:
//! an hour of simulation at 100 steps/s is 360 000 rows (tens of MB for the main CSV, ten times
//! that for the poses of ten bodies).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{Context as _, Result};
use ar_io::csv_write::CsvWriter;
use ar_io::output_target::{check_distinct, check_output_path};
use ar_io::safe_open::create_stream;
use indicatif::ProgressBar;

use super::interrupt::{Interrupts, StopSignal};
use super::simulate::SimulateArgs;

/// Long help of `simulate` (`--help`): the columns of both CSV files.
pub const COLUMNS_HELP: &str = "\
CSV files (numbers in Rust's shortest round-trip format, so two runs compare byte for byte;
t_s has 9 decimals, i.e. rounded to 1 ns, as the solver's clock is n·h accumulated):

--csv OUT.csv, one row per step, world frame (the marker's: z up):
  t_s                 simulated time at the end of the step (s)
  constraint_norm_m   norm of all position-level constraint errors ‖ψ‖ (m; angular rows
                      counted at a 1 m lever arm)
  kinetic_j           kinetic energy (J)
  potential_j         gravitational energy −Σ m g·x, zero at the world origin (J)
  elastic_j           energy in the springs and the stylus spring (J)
  user_work_j         work done by the user through the stylus spring since the start (J)
  external_work_j     work of the wind and other external forces since the start (J)
  dissipated_j        energy taken out by dampers since the start (J)
  energy_error_rel    drift / E_ref: the drift is E + dissipated + fractured − user work −
                      external work − E(0) (J), E = kinetic + potential + elastic, and E_ref the
                      largest so far of the peak kinetic energy, the ranges (max − min) of
                      the potential and elastic energy and |user work| + |external work|,
                      at least 1 nJ. The summary's figure is the run's largest |drift| over
                      the E_ref at its end.
  clipped             1 while the stylus is clipped, else 0
  stylus_x,_y,_z      the stylus tip the solver uses (m; NaN before a script sets one)
  grab_x,_y,_z        the scene's first grab point (m; NaN if it has none)
  fractured_j         only in scenes with breakable connections (fracture_extension_m):
                      the elastic energy the broken connections held when they broke,
                      the balance's fracture line (J); the summary lists each break
  then per joint, in scene order, the reaction on the joint's second body:
  <joint>_fx,_fy,_fz  force (N)
  <joint>_tx,_ty,_tz  moment about the joint's anchor (N·m)
  then per joint with limits (limits_rad, limits_m), in scene order:
  <joint>_limit_n_m   limit torque about the hinge axis on the second body (N·m)
  <joint>_limit_n     limit force along the slide axis on the second body (N)

--poses OUT.csv, one row per dynamic body (scene order) every --poses-every steps, world frame:
  t_s                 simulated time at the end of the step (s)
  body                the body's name from the scene file
  x_m,y_m,z_m         position of the body frame's origin, which is the centre of mass (m)
  qw,qx,qy,qz         orientation world_from_body as a unit quaternion
  vx_m_per_s,...      velocity of the centre of mass (m/s)
  wx_rad_per_s,...    angular velocity in world axes (rad/s)
A point p given in the body frame is at x + R(q)·p in the world.

With --method articulated the main CSV has the same columns up to grab_z and no reaction
columns: constraint_norm_m is the loop-closing joints' ‖ψ‖ (0 for a tree: its joints are
exact in reduced coordinates); the poses CSV is the same.";

/// Refuses, before anything is written, a run whose output (`--csv`, `--poses`, `--contacts`,
/// `--plot`) is one of its inputs (the scene file, `--stylus`, `--calibration`, a `--wind`
/// file) or whose two outputs name the same file: the run would destroy its own input, or
/// one output would overwrite the other.
pub fn check_paths(args: &SimulateArgs) -> Result<()> {
    let scene = ar_dynamics::scene::resolve_scene(&args.scene);
    let wind = args
        .wind
        .as_deref()
        .filter(|w| w.parse::<f64>().is_err())
        .map(Path::new);
    let mut inputs = vec![("scene file", scene.as_path())];
    for (flag, path) in [
        ("--stylus", args.stylus.as_deref()),
        ("--calibration", args.calibration.as_deref()),
        ("--wind", wind),
    ] {
        inputs.extend(path.map(|p| (flag, p)));
    }
    let outputs: Vec<_> = [
        ("--csv", &args.csv),
        ("--poses", &args.poses),
        ("--contacts", &args.contacts),
        ("--plot", &args.plot),
    ]
    .into_iter()
    .filter_map(|(flag, path)| path.as_deref().map(|p| (flag, p)))
    .collect();
    check_distinct(&inputs, &outputs)?;
    if let Some(plot) = &args.plot {
        check_output_path(plot).with_context(|| format!("--plot {}", plot.display()))?;
    }
    Ok(())
}

/// A CSV file written row by row during the run. The first write error is kept (the run's
/// step callback cannot stop the run) and returned, naming the file, by [`Self::finish`].
pub struct CsvStream {
    path: PathBuf,
    writer: CsvWriter<File>,
    error: Option<std::io::Error>,
}

impl CsvStream {
    /// Creates `path` (or truncates the regular file there; anything else is refused, see
    /// [`ar_io::safe_open::create_stream`]) and writes the header line.
    pub fn create<S: AsRef<str>>(path: &Path, header: impl IntoIterator<Item = S>) -> Result<Self> {
        let file =
            create_stream(path).with_context(|| format!("cannot create {}", path.display()))?;
        let mut stream = Self {
            path: path.to_owned(),
            writer: CsvWriter::new(file),
            error: None,
        };
        stream.write_rows(|w| w.write_fields(header));
        Ok(stream)
    }

    /// Writes the rows `fill` writes; nothing after an error.
    pub fn write_rows(&mut self, fill: impl FnOnce(&mut CsvWriter<File>) -> std::io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        if let Err(e) = fill(&mut self.writer) {
            self.error = Some(e);
        }
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file; the first error of the run, if any, names the file.
    pub fn finish(mut self) -> Result<()> {
        let result = match self.error.take() {
            Some(e) => Err(e),
            None => self.writer.flush(),
        };
        result.with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// The run's CSV streams (`--csv`, `--poses`, `--contacts`), shared between the run, which
/// writes a step's rows under the lock, and the signal watcher, which may end the process
/// between two steps' rows: so a file always ends in a whole row.
#[derive(Clone, Default)]
pub struct SharedStreams(Arc<Mutex<[Option<CsvStream>; 3]>>);

impl SharedStreams {
    /// The streams, locked (a writer that panicked left whole rows behind: keep using them).
    pub fn lock(&self) -> MutexGuard<'_, [Option<CsvStream>; 3]> {
        super::interrupt::lock_even_if_poisoned(&self.0)
    }

    /// Flushes the streams of an interrupted or failed run and closes them; says where the
    /// rows are (or why they could not be kept), e.g. "; rows so far kept in out.csv".
    pub fn finish_all(&self) -> String {
        finish_taken(&mut self.lock())
    }

    /// Flushes the streams and ends the process with the signal's status, holding the lock so
    /// that no further row is begun.
    fn end_process(&self, signal: StopSignal, message: &str) -> ! {
        let mut streams = self.lock();
        let kept = finish_taken(&mut streams);
        eprintln!("{message}{kept}");
        std::process::exit(signal.exit_code());
    }
}

fn finish_taken(streams: &mut [Option<CsvStream>; 3]) -> String {
    let mut text = String::new();
    for stream in streams.iter_mut().filter_map(Option::take) {
        let path = stream.path().display().to_string();
        match stream.finish() {
            Ok(()) => text.push_str(&format!("; rows so far kept in {path}")),
            Err(e) => text.push_str(&format!("; {}", super::error_text(&e))),
        }
    }
    text
}

/// How long after a first Ctrl-C or SIGTERM a step may still run before the watcher ends the
/// process with the rows of the steps completed (a step of a large scene can take seconds).
const STOP_GRACE: Duration = Duration::from_millis(300);

/// Where the run is, for the watcher's message: steps done and the simulated time (bits).
#[derive(Default)]
struct Position {
    steps: AtomicU64,
    time_bits: AtomicU64,
}

impl Position {
    fn describe(&self) -> String {
        let steps = self.steps.load(Ordering::SeqCst);
        if steps == 0 {
            return "before the first step".to_owned();
        }
        let time_secs = f64::from_bits(self.time_bits.load(Ordering::SeqCst));
        format!("at t = {time_secs:.3} s after {steps} steps")
    }
}

/// A run's progress bar (on stderr when it is a terminal) and its Ctrl-C / SIGTERM handling:
/// an interrupted run ends after the current step, or [`STOP_GRACE`] after the signal if the
/// step is still running, with the rows of the completed steps flushed, exit 130 (Ctrl-C) or
/// 143 (SIGTERM). A second signal ends it at once, the same way.
pub struct RunWatch {
    progress: ProgressBar,
    interrupts: Interrupts,
    position: Arc<Position>,
    streams: SharedStreams,
}

impl RunWatch {
    /// Installs the handler (before the scene is built, which can take long itself) for the
    /// run whose rows go to `streams`.
    pub fn install(streams: SharedStreams) -> Result<Self> {
        let interrupts = Interrupts::install(|| {})?;
        let position = Arc::new(Position::default());
        let (at, files) = (position.clone(), streams.clone());
        interrupts.end_after(STOP_GRACE, move |signal, why| {
            let message = format!(
                "interrupted by {} {} ({why}; rows are kept for the completed steps only)",
                signal.name(),
                at.describe()
            );
            files.end_process(signal, &message)
        });
        Ok(Self {
            progress: ProgressBar::hidden(),
            interrupts,
            position,
            streams,
        })
    }

    /// Starts the bar over `planned_steps`.
    pub fn start(&mut self, planned_steps: u64) {
        self.progress = super::progress::bar(Some(planned_steps), "steps");
    }

    /// After each step: moves the bar; after a signal, flushes the streams, says where their
    /// rows are and ends the process with 128 + the signal's number.
    pub fn after_step(&self, steps_done: usize, time_secs: f64) {
        self.position
            .time_bits
            .store(time_secs.to_bits(), Ordering::SeqCst);
        self.position
            .steps
            .store(steps_done as u64, Ordering::SeqCst);
        self.progress.set_position(steps_done as u64);
        if let Some(signal) = self.interrupts.received() {
            self.progress.finish_and_clear();
            let message = format!(
                "interrupted by {} {}",
                signal.name(),
                self.position.describe()
            );
            self.streams.end_process(signal, &message);
        }
    }

    /// Clears the bar at the end of the run.
    pub fn finish(&self) {
        self.progress.finish_and_clear();
    }
}
