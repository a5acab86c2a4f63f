//! A recorded session's solver log (`--record DIR` on `demo`, `run` and `sandbox`): every step's inputs
//! to the simulation (the stylus spring, the wind level, a new viewpoint) and its outputs (the
//! diagnostics and every body's pose), streamed to CSV files as the run goes, so that memory
//! stays bounded however long the session, and [`super::replay`] can feed the same inputs to
//! the same simulation and compare its outputs byte for byte.
//!
//! A session folder holds:
//! - `session.toml`: the format version ([`SESSION_FORMAT`]), the scene as named on the
//!   command line, the method, the step h and the calibration `world_from_arm` the run used;
//! - `scene.toml`: a copy of the scene file, so that a replay does not depend on the scene
//!   file staying as it was;
//! - `inputs.csv`: one row per step, header [`INPUT_HEADER`]: the step number, the simulated
//!   time after it, whether the stylus was clipped, the grabbed body, the grabbed point in
//!   the body frame and the spring's target in the world (m) — or, not clipped in a scene
//!   whose stylus tip pushes, the tip in the target's columns (body and point empty) — the
//!   wind level (the
//!   microphone's RMS above its floor, full scale 1), and the camera pose `world_from_camera`
//!   (m, unit quaternion) on the steps before which a new one arrived (empty otherwise);
//! - `solver.csv`: one row per step, header `t_s,psi_norm_m,energy_j,kinetic_j,user_work_j,
//!   energy_drift_j,spring_force_n` and then `<body>_x_m,_y_m,_z_m,_qw,_qx,_qy,_qz` for every
//!   body with a shape (world frame);
//! - `end.toml`, written when the recording is closed: the step count and the byte sizes of
//!   `inputs.csv` and `solver.csv` ([`super::session_end`]). Without it (the run was killed,
//!   the recording failed) or with files of other sizes, a recording is refused by `replay`:
//!   a truncated or empty recording is never reported as replayed.
//!
//! A session whose simulation was replaced (the sandbox's reset and scene switch) goes on in
//! parts: the folder itself holds the first part as above, and each later part is a folder
//! `part2`, `part3`, … in it holding the same files for the scene it loaded (`session.toml`
//! naming that scene and its step, `scene.toml` its copy, `inputs.csv`, `solver.csv`,
//! `end.toml`). Each part starts from its scene's initial state; the step numbers and
//! times `t_s` go on from the part before (the session's clock). The `end.toml` of every
//! part but the last names the next (`next_part = "part2"`), so `replay` follows the chain
//! and a missing part is refused.
//!
//! Every file is created exclusively and never through a link ([`ar_io::safe_open`]), in a
//! folder that was empty: a recording never overwrites anything, and `replay` reads only
//! regular files (not links), each under a size limit, streaming the CSV files.
//!
//! Numbers are written as the shortest text that reads back to the same `f64`, so a replay
//! that computes the same numbers writes the same bytes. At the rig's 100 steps per second
//! the two CSV files grow by about 130 kB/s for the ten pendula (~0.5 GB an hour; measured
//! 1.09 MB for a 7.94 s demo).

use std::fs::File;
use std::io;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use ar_io::csv_write::CsvWriter;
use ar_io::safe_open::{create_new, read_regular_text};
use nalgebra::{Isometry3, Point3};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::interaction::SpringAttachment;
use crate::rig::RigSimulation;

pub use super::inputs_csv::{read_inputs, InputReader};
pub use super::recorder::SessionRecorder;
pub use super::session_end::{SessionEnd, END_FILE};

/// The session folder's format version (`session.toml`'s `format`). Format 2 added
/// `end.toml`; a format 1 recording states no step count, so a truncated one cannot be told
/// from a whole one and it is refused with a word on recording it again. Format 3 added the
/// parts (`next_part` in `end.toml`); a format 2 recording is one part and replays as before.
pub const SESSION_FORMAT: u32 = 3;
/// The oldest format this version replays.
pub const OLDEST_READ_FORMAT: u32 = 2;

/// The folder of the session's part `k` (2, 3, …) in the session folder.
pub fn part_folder(k: u32) -> String {
    format!("part{k}")
}
/// The largest `session.toml` or `end.toml` read, bytes: they hold a few lines.
pub const MAX_DESCRIPTION_BYTES: u64 = 64 << 10;
/// The largest `inputs.csv` or `solver.csv` replayed, bytes (256 GiB, some 500 hours of the
/// ten pendula at ~0.5 GB an hour): both are streamed, never read whole, so the limit only
/// bounds how long a replay may read.
pub const MAX_LOG_BYTES: u64 = 256 << 30;
/// The session's description.
pub const SESSION_FILE: &str = "session.toml";
/// The copy of the scene file.
pub const SCENE_FILE: &str = "scene.toml";
/// The per-step inputs.
pub const INPUTS_FILE: &str = "inputs.csv";
/// The per-step outputs.
pub const SOLVER_FILE: &str = "solver.csv";

/// The header of `inputs.csv`.
pub const INPUT_HEADER: [&str; 18] = [
    "step",
    "t_s",
    "clipped",
    "body",
    "px_m",
    "py_m",
    "pz_m",
    "tx_m",
    "ty_m",
    "tz_m",
    "wind_level",
    "view_x_m",
    "view_y_m",
    "view_z_m",
    "view_qw",
    "view_qx",
    "view_qy",
    "view_qz",
];

/// The columns of `solver.csv` before the bodies' poses.
const SOLVER_HEADER: [&str; 7] = [
    "t_s",
    "psi_norm_m",
    "energy_j",
    "kinetic_j",
    "user_work_j",
    "energy_drift_j",
    "spring_force_n",
];

/// What went wrong with a session folder.
#[derive(Debug, Error)]
pub enum SessionError {
    /// A file could not be created, written or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The folder holds a recording already (it is never overwritten).
    #[error("{}: already holds a recorded session ({SESSION_FILE}); record into a new folder", dir.display())]
    Exists {
        /// The folder.
        dir: PathBuf,
    },
    /// The folder to record into holds files already (they are never overwritten).
    #[error("{}: the folder is not empty (it holds {entry:?}); record into a new or empty folder, nothing there is overwritten", dir.display())]
    NotEmpty {
        /// The folder.
        dir: PathBuf,
        /// One of its entries.
        entry: String,
    },
    /// A file of the session does not read as it should.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Bad {
        /// The file.
        path: PathBuf,
        /// The 1-based line, when the problem is on one.
        line: Option<usize>,
        /// What is wrong, naming the field.
        message: String,
    },
}

pub(super) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> SessionError + '_ {
    move |source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A session's `session.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionInfo {
    /// [`SESSION_FORMAT`] when written.
    pub format: u32,
    /// The scene as named on the command line (its file is copied to `scene.toml`).
    pub scene: String,
    /// The simulation method (`default` or `articulated`, as `--method` names it).
    pub method: String,
    /// The simulation's fixed step h, seconds: the scene's `[solver] dt_secs`, which the rig
    /// stepped by (for the articulated method, its rig step, four of the method's own).
    pub dt_secs: f64,
    /// The arm's base in the world (marker) frame: translation (m).
    pub world_from_arm_translation_m: [f64; 3],
    /// The arm's base in the world frame: rotation as a unit quaternion (w, x, y, z).
    pub world_from_arm_rotation_wxyz: [f64; 4],
}

impl SessionInfo {
    /// The description of a session of `scene` simulated by `method` (its command-line name)
    /// at the simulation's step `dt_secs`, calibrated with `world_from_arm`.
    pub fn new(scene: &str, method: &str, dt_secs: f64, world_from_arm: &Isometry3<f64>) -> Self {
        let q = world_from_arm.rotation.quaternion();
        let t = world_from_arm.translation.vector;
        Self {
            format: SESSION_FORMAT,
            scene: scene.to_owned(),
            method: method.to_owned(),
            dt_secs,
            world_from_arm_translation_m: [t.x, t.y, t.z],
            world_from_arm_rotation_wxyz: [q.w, q.i, q.j, q.k],
        }
    }

    /// Reads `dir/session.toml` (a regular file, not a link, of at most
    /// [`MAX_DESCRIPTION_BYTES`]).
    pub fn read(dir: &Path) -> Result<Self, SessionError> {
        let path = dir.join(SESSION_FILE);
        let info: Self = read_toml(&path)?;
        if info.format == 1 {
            return Err(SessionError::Bad {
                path,
                line: None,
                message: "format 1: recorded before recordings stated their step count and \
                          end (end.toml), so a truncated recording cannot be told from a whole \
                          one; record the session again (`--record NEW_FOLDER`) with this \
                          version to replay it"
                    .into(),
            });
        }
        if !(OLDEST_READ_FORMAT..=SESSION_FORMAT).contains(&info.format) {
            return Err(SessionError::Bad {
                path,
                line: None,
                message: format!(
                    "format {} is not a format this version reads ({OLDEST_READ_FORMAT} to \
                     {SESSION_FORMAT}); replay it with the version that recorded it",
                    info.format
                ),
            });
        }
        if !(info.dt_secs > 0.0 && info.dt_secs.is_finite()) {
            return Err(SessionError::Bad {
                path,
                line: None,
                message: format!("dt_secs must be positive, got {}", info.dt_secs),
            });
        }
        Ok(info)
    }
}

/// Reads a small TOML file of a session (`session.toml`, `end.toml`): a regular file, not a
/// link, of at most [`MAX_DESCRIPTION_BYTES`]; errors name the file and the line.
pub(super) fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SessionError> {
    let text = read_regular_text(path, MAX_DESCRIPTION_BYTES).map_err(io_error(path))?;
    toml::from_str(&text).map_err(|e| SessionError::Bad {
        path: path.to_path_buf(),
        // Counted in bytes: a span of mutated text need not start on a character boundary.
        line: e.span().map(|s| {
            let before = &text.as_bytes()[..s.start.min(text.len())];
            before.iter().filter(|&&b| b == b'\n').count() + 1
        }),
        message: e.message().to_owned(),
    })
}

/// What the simulation was given before one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInputs {
    /// The stylus spring, while clipped.
    pub spring: Option<SpringAttachment>,
    /// The stylus tip while not clipped, in a scene whose tip pushes (world, m).
    pub tip: Option<Point3<f64>>,
    /// The wind level (microphone RMS above its floor, full scale 1).
    pub wind_level: f64,
    /// A camera pose `world_from_camera` that arrived before this step.
    pub view: Option<Isometry3<f64>>,
}

/// One row of `inputs.csv`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputRow {
    /// The step number, from 0.
    pub step: u64,
    /// Simulated time after the step, seconds.
    pub t_s: f64,
    /// The inputs.
    pub inputs: StepInputs,
}

/// Writes `solver.csv` rows: the diagnostics and every body's pose after a step. The recorder
/// and the replay write through this one type, so their files compare byte for byte.
pub struct SolverLogWriter {
    path: PathBuf,
    csv: CsvWriter<BufWriter<File>>,
    header_written: bool,
}

impl SolverLogWriter {
    /// Creates the file, exclusively: nothing at `path` (a file, a link) is overwritten.
    pub fn create(path: &Path) -> Result<Self, SessionError> {
        let file = create_new(path).map_err(io_error(path))?;
        Ok(Self::over(path, file))
    }

    /// Writes into `file`, already open (named `path` in messages).
    pub fn over(path: &Path, file: File) -> Self {
        Self {
            path: path.to_path_buf(),
            csv: CsvWriter::new(BufWriter::new(file)),
            header_written: false,
        }
    }

    /// Bytes in the file so far (after [`Self::finish`], all of them).
    pub fn bytes(&self) -> Result<u64, SessionError> {
        let meta = self.csv.get_ref().get_ref().metadata();
        Ok(meta.map_err(io_error(&self.path))?.len())
    }

    /// Writes the row of the step that ended at `t_s` (and, before the first, the header).
    pub fn write(&mut self, t_s: f64, sim: &RigSimulation) -> Result<(), SessionError> {
        let bodies = sim.bodies();
        if !self.header_written {
            let mut header: Vec<String> = SOLVER_HEADER.iter().map(|s| s.to_string()).collect();
            for b in &bodies {
                for c in ["x_m", "y_m", "z_m", "qw", "qx", "qy", "qz"] {
                    header.push(format!("{}_{c}", b.name));
                }
            }
            self.csv
                .write_fields(&header)
                .map_err(io_error(&self.path))?;
            self.header_written = true;
        }
        let d = sim.diagnostics();
        let mut row = self.csv.row().value(t_s).values([
            d.psi_norm_m,
            d.energy_j,
            d.kinetic_j,
            d.user_work_j,
            d.energy_drift_j,
            d.spring_force_n,
        ]);
        for b in &bodies {
            let p = b.world_from_body.translation.vector;
            let q = b.world_from_body.rotation.quaternion();
            row = row.values([p.x, p.y, p.z, q.w, q.i, q.j, q.k]);
        }
        row.end().map_err(io_error(&self.path))
    }

    /// Flushes the file.
    pub fn finish(&mut self) -> Result<(), SessionError> {
        self.csv.flush().map_err(io_error(&self.path))
    }
}
