//! A recorded session's solver log (`--record DIR` on `demo` and `run`): every step's inputs
//! to the simulation (the stylus spring, the wind level, a new viewpoint) and its outputs (the
//! diagnostics and every body's pose), streamed to CSV files as the run goes, so that memory
//! stays bounded however long the session, and [`super::replay`] can feed the same inputs to
//! the same simulation and compare its outputs byte for byte.
//!
//! A session folder holds:
//! - `session.toml`: the format version, the scene as named on the command line, the method,
//!   the step h and the calibration `world_from_arm` the run used;
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
//!   body with a shape (world frame).
//!
//! Numbers are written as the shortest text that reads back to the same `f64`, so a replay
//! that computes the same numbers writes the same bytes. At the rig's 100 steps per second
//! the two CSV files grow by about 130 kB/s for the ten pendula (~0.5 GB an hour; measured
//! 1.09 MB for a 7.94 s demo).

use std::fs;
use std::fs::File;
use std::io;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use ar_io::csv_table::read_table;
use ar_io::csv_write::CsvWriter;
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::interaction::SpringAttachment;
use crate::rig::RigSimulation;

/// The session folder's format version (`session.toml`'s `format`).
pub const SESSION_FORMAT: u32 = 1;
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

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> SessionError + '_ {
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

    /// Reads `dir/session.toml`.
    pub fn read(dir: &Path) -> Result<Self, SessionError> {
        let path = dir.join(SESSION_FILE);
        let text = fs::read_to_string(&path).map_err(io_error(&path))?;
        let info: Self = toml::from_str(&text).map_err(|e| SessionError::Bad {
            path: path.clone(),
            line: e.span().map(|s| text[..s.start].matches('\n').count() + 1),
            message: e.message().to_owned(),
        })?;
        if info.format != SESSION_FORMAT {
            return Err(SessionError::Bad {
                path,
                line: None,
                message: format!(
                    "format {} is not the format this version reads ({SESSION_FORMAT})",
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
    /// Creates (or truncates) the file.
    pub fn create(path: &Path) -> Result<Self, SessionError> {
        let file = File::create(path).map_err(io_error(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            csv: CsvWriter::new(BufWriter::new(file)),
            header_written: false,
        })
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

/// Records a session into its folder as the solver steps (see the module docs).
pub struct SessionRecorder {
    dir: PathBuf,
    inputs_path: PathBuf,
    inputs: CsvWriter<BufWriter<File>>,
    solver: SolverLogWriter,
    pending_view: Option<Isometry3<f64>>,
}

impl SessionRecorder {
    /// Creates the session folder `dir` (or uses an empty or new one) with its description and
    /// a copy of the scene file `scene_file`. A folder that holds a recording already is an
    /// error: a recording is never overwritten.
    pub fn create(dir: &Path, scene_file: &Path, info: &SessionInfo) -> Result<Self, SessionError> {
        if dir.join(SESSION_FILE).exists() {
            return Err(SessionError::Exists {
                dir: dir.to_path_buf(),
            });
        }
        fs::create_dir_all(dir).map_err(io_error(dir))?;
        let scene_copy = dir.join(SCENE_FILE);
        fs::copy(scene_file, &scene_copy).map_err(io_error(scene_file))?;
        let inputs_path = dir.join(INPUTS_FILE);
        let file = File::create(&inputs_path).map_err(io_error(&inputs_path))?;
        let mut inputs = CsvWriter::new(BufWriter::new(file));
        inputs
            .write_fields(INPUT_HEADER)
            .map_err(io_error(&inputs_path))?;
        let solver = SolverLogWriter::create(&dir.join(SOLVER_FILE))?;
        // The description last: a folder with it holds a complete recording's start.
        let session_path = dir.join(SESSION_FILE);
        let text = toml::to_string(info).map_err(|e| SessionError::Bad {
            path: session_path.clone(),
            line: None,
            message: e.to_string(),
        })?;
        fs::write(&session_path, text).map_err(io_error(&session_path))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            inputs_path,
            inputs,
            solver,
            pending_view: None,
        })
    }

    /// The session folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Notes a camera pose given to the simulation before the next step.
    pub fn view(&mut self, world_from_camera: &Isometry3<f64>) {
        self.pending_view = Some(*world_from_camera);
    }

    /// Writes step `step`'s inputs (the spring and wind it ran with, the tip it had when the
    /// scene's tip pushes, and a camera pose noted since the last step) and the simulation's
    /// state after it, at `t_after_s`.
    pub fn step(
        &mut self,
        step: u64,
        t_after_s: f64,
        spring: Option<&SpringAttachment>,
        tip_in_world: Option<Point3<f64>>,
        wind_level: f64,
        sim: &RigSimulation,
    ) -> Result<(), SessionError> {
        let pushes = spring.is_none() && sim.stylus_tip_radius_m().is_some();
        let row = InputRow {
            step,
            t_s: t_after_s,
            inputs: StepInputs {
                spring: spring.copied(),
                tip: tip_in_world.filter(|_| pushes),
                wind_level,
                view: self.pending_view.take(),
            },
        };
        write_input_row(&mut self.inputs, &row).map_err(io_error(&self.inputs_path))?;
        self.solver.write(t_after_s, sim)
    }

    /// Flushes both files.
    pub fn finish(&mut self) -> Result<(), SessionError> {
        self.inputs.flush().map_err(io_error(&self.inputs_path))?;
        self.solver.finish()
    }
}

fn write_input_row<W: io::Write>(csv: &mut CsvWriter<W>, r: &InputRow) -> io::Result<()> {
    let mut row = csv.row().value(r.step).value(r.t_s);
    row = match &r.inputs.spring {
        Some(s) => row.value(1).value(s.body).values([
            s.point_in_body.x,
            s.point_in_body.y,
            s.point_in_body.z,
            s.target_in_world.x,
            s.target_in_world.y,
            s.target_in_world.z,
        ]),
        None => match &r.inputs.tip {
            Some(t) => row.value(0).values([""; 4]).values([t.x, t.y, t.z]),
            None => row.value(0).values([""; 7]),
        },
    };
    row = row.value(r.inputs.wind_level);
    row = match &r.inputs.view {
        Some(v) => {
            let p = v.translation.vector;
            let q = v.rotation.quaternion();
            row.values([p.x, p.y, p.z, q.w, q.i, q.j, q.k])
        }
        None => row.values([""; 7]),
    };
    row.end()
}

/// Reads a session's `inputs.csv`: every row checked (the header, the step numbers counting
/// from 0, every number finite), errors naming the line and the field.
pub fn read_inputs(dir: &Path) -> Result<Vec<InputRow>, SessionError> {
    let path = dir.join(INPUTS_FILE);
    let text = fs::read_to_string(&path).map_err(io_error(&path))?;
    let bad = |line: usize, message: String| SessionError::Bad {
        path: path.clone(),
        line: Some(line),
        message,
    };
    let table = read_table(&text)
        .map_err(|e| SessionError::Bad {
            path: path.clone(),
            line: None,
            message: e.to_string(),
        })?
        .ok_or_else(|| bad(1, "empty file: expected the header".into()))?;
    if table.header.fields != INPUT_HEADER {
        return Err(bad(
            table.header.line,
            format!(
                "header {:?}, expected {:?}",
                table.header.joined(),
                INPUT_HEADER.join(",")
            ),
        ));
    }
    let mut rows = Vec::with_capacity(table.rows.len());
    for (k, rec) in table.rows.iter().enumerate() {
        let number = |i: usize| -> Result<f64, SessionError> {
            let field = rec.get(i);
            field
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    bad(
                        rec.line,
                        format!("{} = {field:?} is not a finite number", INPUT_HEADER[i]),
                    )
                })
        };
        let step: u64 = rec.get(0).parse().map_err(|_| {
            bad(
                rec.line,
                format!("step = {:?} is not a step number", rec.get(0)),
            )
        })?;
        if step != k as u64 {
            return Err(bad(
                rec.line,
                format!("step = {step}, expected {k} (the rows count the steps from 0)"),
            ));
        }
        let mut tip = None;
        let spring = match rec.get(2) {
            "0" => {
                if !rec.get(7).is_empty() {
                    tip = Some(Point3::new(number(7)?, number(8)?, number(9)?));
                }
                None
            }
            "1" => {
                let body = rec.get(3).parse::<usize>().map_err(|_| {
                    bad(
                        rec.line,
                        format!("body = {:?} is not a body index", rec.get(3)),
                    )
                })?;
                Some(SpringAttachment {
                    body,
                    point_in_body: Point3::new(number(4)?, number(5)?, number(6)?),
                    target_in_world: Point3::new(number(7)?, number(8)?, number(9)?),
                })
            }
            other => {
                return Err(bad(
                    rec.line,
                    format!("clipped = {other:?}: expected 0 or 1"),
                ))
            }
        };
        let view = if rec.get(11).is_empty() {
            None
        } else {
            let q = Quaternion::new(number(14)?, number(15)?, number(16)?, number(17)?);
            Some(Isometry3::from_parts(
                Translation3::new(number(11)?, number(12)?, number(13)?),
                // As recorded: a unit quaternion read back bit for bit.
                UnitQuaternion::new_unchecked(q),
            ))
        };
        rows.push(InputRow {
            step,
            t_s: number(1)?,
            inputs: StepInputs {
                spring,
                tip,
                wind_level: number(10)?,
                view,
            },
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<InputRow> {
        let view = Isometry3::from_parts(
            Translation3::new(0.1, -0.2, 0.3),
            UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3),
        );
        vec![
            InputRow {
                step: 0,
                t_s: 0.01,
                inputs: StepInputs {
                    spring: None,
                    tip: None,
                    wind_level: 0.0,
                    view: Some(view),
                },
            },
            InputRow {
                step: 1,
                t_s: 0.02,
                inputs: StepInputs {
                    spring: Some(SpringAttachment {
                        body: 10,
                        point_in_body: Point3::new(0.0, 0.0, -0.025),
                        target_in_world: Point3::new(0.1 / 3.0, 1e-17, 0.6),
                    }),
                    tip: None,
                    wind_level: 0.123456789012345,
                    view: None,
                },
            },
            InputRow {
                step: 2,
                t_s: 0.03,
                inputs: StepInputs {
                    spring: None,
                    tip: Some(Point3::new(-0.085, 0.09, 0.05 / 3.0)),
                    wind_level: 0.0,
                    view: None,
                },
            },
        ]
    }

    fn write_inputs(dir: &Path, rows: &[InputRow]) {
        let mut csv = CsvWriter::new(Vec::new());
        csv.write_fields(INPUT_HEADER).unwrap();
        for r in rows {
            write_input_row(&mut csv, r).unwrap();
        }
        fs::write(dir.join(INPUTS_FILE), csv.into_inner().unwrap()).unwrap();
    }

    #[test]
    fn inputs_read_back_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        write_inputs(dir.path(), &rows());
        assert_eq!(read_inputs(dir.path()).unwrap(), rows());
    }

    #[test]
    fn a_bad_input_row_is_named_by_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        write_inputs(dir.path(), &rows());
        let path = dir.path().join(INPUTS_FILE);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace("0.123456789012345", "NaN")).unwrap();
        let e = read_inputs(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("inputs.csv:3") && e.contains("wind_level"),
            "{e}"
        );
        fs::write(&path, text.replace("\n1,0.02,", "\n7,0.02,")).unwrap();
        let e = read_inputs(dir.path()).unwrap_err().to_string();
        assert!(e.contains(":3") && e.contains("expected 1"), "{e}");
    }

    #[test]
    fn a_recording_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("s.toml");
        fs::write(&scene, "# scene\n").unwrap();
        let session = dir.path().join("session");
        let info = SessionInfo::new("s", "default", 0.01, &Isometry3::identity());
        SessionRecorder::create(&session, &scene, &info).unwrap();
        assert_eq!(SessionInfo::read(&session).unwrap(), info);
        let e = SessionRecorder::create(&session, &scene, &info)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("already holds a recorded session"), "{e}");
    }
}
