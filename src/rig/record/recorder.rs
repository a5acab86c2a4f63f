//! Recording a session into its folder as the solver steps (`--record DIR`; the files are
//! described in [`super::session_log`]).
//!
//! The folder must be new or empty, and every file is created exclusively without following
//! a link: a link planted in the folder (`inputs.csv` pointing at a file outside) or a file
//! of the user's that is there already is never opened, so nothing is overwritten. Closing
//! the recorder writes its end marker ([`super::session_end`]).

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use ar_io::csv_write::CsvWriter;
use ar_io::input_file::read_text;
use ar_io::safe_open::create_new;
use nalgebra::{Isometry3, Point3};

use super::inputs_csv::write_input_row;
use super::session_end::SessionEnd;
use super::session_log::{
    io_error, InputRow, SessionError, SessionInfo, SolverLogWriter, StepInputs, INPUTS_FILE,
    INPUT_HEADER, SCENE_FILE, SESSION_FILE, SOLVER_FILE,
};
use crate::interaction::SpringAttachment;
use crate::rig::RigSimulation;

/// Records a session into its folder as the solver steps (see the module docs).
pub struct SessionRecorder {
    dir: PathBuf,
    inputs_path: PathBuf,
    inputs: CsvWriter<BufWriter<File>>,
    solver: SolverLogWriter,
    pending_view: Option<Isometry3<f64>>,
    steps: u64,
    finished: bool,
}

impl SessionRecorder {
    /// Creates the session folder `dir` (or uses an empty one) with its description and a
    /// copy of the scene file `scene_file`. A folder that holds a recording, or anything else,
    /// is an error: nothing in it is ever overwritten.
    pub fn create(dir: &Path, scene_file: &Path, info: &SessionInfo) -> Result<Self, SessionError> {
        prepare_folder(dir)?;
        // A URDF or MJCF model is kept as the scene it was imported to: replay reads a scene.
        let scene_text = if crate::scene_load::is_model_file(scene_file) {
            crate::scene_load::scene_text(scene_file).map_err(|e| SessionError::Bad {
                path: scene_file.to_owned(),
                line: None,
                message: e.to_string(),
            })?
        } else {
            read_text(scene_file).map_err(io_error(scene_file))?
        };
        write_new(&dir.join(SCENE_FILE), scene_text.as_bytes())?;
        let inputs_path = dir.join(INPUTS_FILE);
        let file = create_new(&inputs_path).map_err(io_error(&inputs_path))?;
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
        write_new(&session_path, text.as_bytes())?;
        Ok(Self {
            dir: dir.to_path_buf(),
            inputs_path,
            inputs,
            solver,
            pending_view: None,
            steps: 0,
            finished: false,
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
        self.solver.write(t_after_s, sim)?;
        self.steps += 1;
        Ok(())
    }

    /// Flushes both files and closes the recording with its end marker (the step count and
    /// the files' sizes). A second call does nothing.
    pub fn finish(&mut self) -> Result<(), SessionError> {
        if self.finished {
            return Ok(());
        }
        self.inputs.flush().map_err(io_error(&self.inputs_path))?;
        let inputs_file = self.inputs.get_ref().get_ref();
        let inputs_bytes = inputs_file
            .sync_all()
            .and_then(|()| inputs_file.metadata())
            .map_err(io_error(&self.inputs_path))?
            .len();
        self.solver.finish()?;
        let end = SessionEnd {
            steps: self.steps,
            inputs_bytes,
            solver_bytes: self.solver.bytes()?,
        };
        end.write(&self.dir)?;
        self.finished = true;
        Ok(())
    }
}

/// Makes `dir` a new folder, or checks that it is an empty one (not a link to one).
fn prepare_folder(dir: &Path) -> Result<(), SessionError> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return std::fs::create_dir_all(dir).map_err(io_error(dir));
        }
        Err(e) => return Err(io_error(dir)(e)),
        Ok(meta) if !meta.is_dir() => {
            return Err(SessionError::Bad {
                path: dir.to_path_buf(),
                line: None,
                message: format!(
                    "{}, not a folder: a session is recorded into a new or empty folder",
                    ar_io::safe_open::describe_kind(meta.file_type())
                ),
            })
        }
        Ok(_) => {}
    }
    if std::fs::symlink_metadata(dir.join(SESSION_FILE)).is_ok() {
        return Err(SessionError::Exists {
            dir: dir.to_path_buf(),
        });
    }
    let mut entries = std::fs::read_dir(dir).map_err(io_error(dir))?;
    if let Some(entry) = entries.next() {
        let entry = entry.map_err(io_error(dir))?;
        return Err(SessionError::NotEmpty {
            dir: dir.to_path_buf(),
            entry: entry.file_name().to_string_lossy().into_owned(),
        });
    }
    Ok(())
}

/// Writes `bytes` into the new file `path`, created exclusively.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), SessionError> {
    let mut file = create_new(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
