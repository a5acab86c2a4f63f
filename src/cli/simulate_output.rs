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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use ar_io::csv_write::CsvWriter;
use ar_io::output_target::check_distinct;
use indicatif::ProgressBar;

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
    Ok(check_distinct(&inputs, &outputs)?)
}

/// A CSV file written row by row during the run. The first write error is kept (the run's
/// step callback cannot stop the run) and returned, naming the file, by [`Self::finish`].
pub struct CsvStream {
    path: PathBuf,
    writer: CsvWriter<File>,
    error: Option<std::io::Error>,
}

impl CsvStream {
    /// Creates (truncates) `path` and writes the header line.
    pub fn create<S: AsRef<str>>(path: &Path, header: impl IntoIterator<Item = S>) -> Result<Self> {
        let file =
            File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
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

/// A run's progress bar (on stderr when it is a terminal) and its Ctrl-C / SIGTERM handling:
/// an interrupted run ends after the current step with the rows written so far flushed.
pub struct RunWatch {
    progress: ProgressBar,
    interrupted: Arc<AtomicBool>,
}

impl RunWatch {
    /// Installs the handler and starts the bar over `planned_steps`.
    pub fn start(planned_steps: u64) -> Result<Self> {
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = interrupted.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("installing the Ctrl-C / SIGTERM handler")?;
        Ok(Self {
            progress: super::progress::bar(Some(planned_steps), "steps"),
            interrupted,
        })
    }

    /// After each step: moves the bar; after a Ctrl-C, flushes the streams `take` hands over,
    /// says where their rows are and exits with status 130.
    pub fn after_step<const N: usize>(
        &self,
        steps_done: usize,
        time_secs: f64,
        take: impl FnOnce() -> [Option<CsvStream>; N],
    ) {
        self.progress.set_position(steps_done as u64);
        if self.interrupted.load(Ordering::SeqCst) {
            self.progress.finish_and_clear();
            let kept = finish_all(take());
            eprintln!("interrupted at t = {time_secs:.3} s after {steps_done} steps{kept}");
            std::process::exit(130);
        }
    }

    /// Clears the bar at the end of the run.
    pub fn finish(&self) {
        self.progress.finish_and_clear();
    }
}

/// Flushes the CSV streams of an interrupted or failed run; says where the rows are (or why
/// they could not be kept), e.g. "; rows so far kept in out.csv".
pub fn finish_all<const N: usize>(streams: [Option<CsvStream>; N]) -> String {
    let mut text = String::new();
    for stream in streams.into_iter().flatten() {
        let path = stream.path().display().to_string();
        match stream.finish() {
            Ok(()) => text.push_str(&format!("; rows so far kept in {path}")),
            Err(e) => text.push_str(&format!("; {e:#}")),
        }
    }
    text
}
