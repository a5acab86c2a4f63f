//! Replaying a recorded session (`ar-multibody replay DIR`): the scene copied into the session
//! folder is loaded for the recorded method as the rig loads it, every recorded step's inputs (the stylus spring, the
//! wind level, a new camera pose) are fed to it through the rig's [`Simulation`] interface as
//! the solver thread fed them, and its outputs are written with the recorder's own writer
//! ([`SolverLogWriter`]); the replayed `solver.csv` is then compared with the recorded one
//! line by line. The solver is deterministic, so a replay of an unaltered session is identical
//! bit for bit; the first line that differs is named otherwise. A session in parts (a reset or
//! a scene switch of the sandbox) is replayed part after part, each from its scene's initial
//! state, following the `next_part` of each part's `end.toml`; part `k`'s log is written to
//! `part<k>/` of the output folder and compared with that part's.
//!
//! What is trusted: nothing in the folder. Only regular files are read (never through a
//! link), each under a size limit; the two CSV files are streamed; the recording must be
//! closed (`end.toml`) with the step count and the sizes it states, so an empty or truncated
//! recording is refused. The replayed log goes to an exclusive temporary file in the output
//! folder and replaces `solver.csv` there only when complete; the output folder must be a
//! real folder (not a link) that holds no recording.
//!
//! [`Simulation`]: crate::rig::RigSimulation

use std::fs::File;
use std::io::{BufReader, Read, Seek};
use std::path::{Path, PathBuf};

use ar_io::atomic_write::AtomicFile;
use ar_io::safe_open::{describe_kind, open_regular};

use super::compare::first_difference;
pub use super::compare::Difference;
use super::session_end::{SessionEnd, END_FILE};
use super::session_log::{
    io_error, part_folder, InputReader, SessionError, SessionInfo, SolverLogWriter, INPUTS_FILE,
    MAX_LOG_BYTES, SCENE_FILE, SESSION_FILE, SOLVER_FILE,
};
use crate::rig::RigSimulation;

/// What a replay did: over the whole session, and part by part.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOutcome {
    /// Steps replayed, all parts.
    pub steps: u64,
    /// Simulated time at the end (the session's clock), seconds.
    pub simulated_s: f64,
    /// The replayed solver log (of the first part).
    pub solver_log: PathBuf,
    /// The first difference from the recording; `None` when every part is identical.
    pub difference: Option<Difference>,
    /// Each part (one for a session without a reset or a scene switch).
    pub parts: Vec<PartReplay>,
}

/// What the replay of one part of a session did.
#[derive(Debug, Clone, PartialEq)]
pub struct PartReplay {
    /// The part's scene, as named in its `session.toml`.
    pub scene: String,
    /// Steps replayed.
    pub steps: u64,
    /// The session's time at the end of the part, seconds.
    pub simulated_s: f64,
    /// The replayed solver log.
    pub solver_log: PathBuf,
    /// Where it differs from the recorded one; `None` when identical.
    pub difference: Option<Difference>,
}

fn bad(path: PathBuf, message: impl Into<String>) -> SessionError {
    SessionError::Bad {
        path,
        line: None,
        message: message.into(),
    }
}

/// Replays the session in `dir` into `out_dir` (created if needed; its `solver.csv` is
/// replaced when the replay is complete), part after part (see the module docs). `load`
/// builds the simulation from a part's scene file for its description (the method) as the
/// rig does; its step must be the recorded `dt_secs`. A step that fails is an error naming
/// the step and the time.
pub fn replay(
    dir: &Path,
    out_dir: &Path,
    mut load: impl FnMut(&Path, &SessionInfo) -> Result<RigSimulation, String>,
) -> Result<ReplayOutcome, SessionError> {
    let (mut part_dir, mut part_out) = (dir.to_path_buf(), out_dir.to_path_buf());
    let mut parts = Vec::new();
    loop {
        let first = parts.is_empty();
        let (part, next) = replay_part(&part_dir, &part_out, first, &mut load)?;
        parts.push(part);
        let Some(name) = next else { break };
        // Only the next part by its own name: never a path out of the session folder.
        let expected = part_folder(parts.len() as u32 + 1);
        let end = part_dir.join(END_FILE);
        if name != expected {
            return Err(bad(
                end,
                format!("next_part = {name:?}, expected {expected:?}"),
            ));
        }
        part_dir = dir.join(&name);
        match std::fs::symlink_metadata(&part_dir) {
            Ok(meta) if meta.is_dir() => {}
            _ => {
                return Err(bad(
                    end,
                    format!(
                        "next_part = {name:?}, but {} is not a folder: the session's later \
                         parts are missing; the parts before were replayed",
                        part_dir.display()
                    ),
                ))
            }
        }
        part_out = out_dir.join(&name);
    }
    Ok(ReplayOutcome {
        steps: parts.iter().map(|p| p.steps).sum(),
        simulated_s: parts.last().map_or(0.0, |p| p.simulated_s),
        solver_log: parts[0].solver_log.clone(),
        difference: parts.iter().find_map(|p| p.difference.clone()),
        parts,
    })
}

/// Replays the part of a session in `dir` into `out_dir`; what it did, and the next part's
/// folder name, if any.
fn replay_part(
    dir: &Path,
    out_dir: &Path,
    first_part: bool,
    load: &mut impl FnMut(&Path, &SessionInfo) -> Result<RigSimulation, String>,
) -> Result<(PartReplay, Option<String>), SessionError> {
    let info = SessionInfo::read(dir)?;
    let end = SessionEnd::read(dir, first_part)?;
    let inputs_file = open_log(dir, INPUTS_FILE, &end)?;
    let recorded_file = open_log(dir, SOLVER_FILE, &end)?;
    let scene = dir.join(SCENE_FILE);
    check_regular(&scene)?;
    let mut sim = load(&scene, &info).map_err(|message| bad(scene.clone(), message))?;
    // The recording's times count in its step; a scene copy that steps by another was edited.
    let (recorded_h, h) = (info.dt_secs, sim.dt_secs());
    if (recorded_h - h).abs() > 1e-12 * recorded_h.abs().max(h.abs()) {
        return Err(bad(
            dir.join(SESSION_FILE),
            format!(
                "dt_secs = {recorded_h} s, but the session's scene steps by {h} s \
                 ({SCENE_FILE} was changed after the recording)"
            ),
        ));
    }
    prepare_out_dir(dir, out_dir)?;
    let solver_log = out_dir.join(SOLVER_FILE);
    let replayed = AtomicFile::create(&solver_log).map_err(io_error(&solver_log))?;
    let clone = replayed.file().try_clone().map_err(io_error(&solver_log))?;
    let mut writer = SolverLogWriter::over(&solver_log, clone);
    let inputs_path = dir.join(INPUTS_FILE);
    let mut inputs = InputReader::new(&inputs_path, inputs_file, end.inputs_bytes)?;
    let mut simulated_s = 0.0;
    for row in &mut inputs {
        let row = row?;
        if let Some(view) = &row.inputs.view {
            sim.set_viewpoint(view);
        }
        // As the solver thread does: the tip (which only a pushing tip uses while unclipped).
        let spring_end = row.inputs.spring.map(|s| s.target_in_world);
        sim.set_stylus_tip(row.inputs.tip.or(spring_end));
        sim.step(row.inputs.spring.as_ref(), row.inputs.wind_level)
            .map_err(|e| {
                bad(
                    inputs_path.clone(),
                    format!(
                        "replaying step {} (t = {} s) failed: {}",
                        row.step, row.t_s, e.0
                    ),
                )
            })?;
        writer.write(row.t_s, &sim)?;
        simulated_s = row.t_s;
    }
    if inputs.rows() != end.steps {
        return Err(bad(
            inputs_path,
            format!(
                "{} steps, but {END_FILE} states {}: the recording was changed after it was \
                 closed; nothing was replayed",
                inputs.rows(),
                end.steps
            ),
        ));
    }
    writer.finish()?;
    let difference = compare(dir, &solver_log, recorded_file, &replayed, &end)?;
    replayed.commit().map_err(io_error(&solver_log))?;
    let part = PartReplay {
        scene: info.scene,
        steps: end.steps,
        simulated_s,
        solver_log,
        difference,
    };
    Ok((part, end.next_part))
}

/// Opens the recording's CSV file `name`: a regular file, not a link, of the size `end`
/// states (at most [`MAX_LOG_BYTES`]).
fn open_log(dir: &Path, name: &str, end: &SessionEnd) -> Result<File, SessionError> {
    let path = dir.join(name);
    let (file, meta) = open_regular(&path, MAX_LOG_BYTES).map_err(io_error(&path))?;
    end.check_size(dir, name, meta.len())?;
    Ok(file)
}

/// The scene copy is read by the scene loader, which follows links: check first that it is a
/// regular file itself (the loader checks the size).
fn check_regular(path: &Path) -> Result<(), SessionError> {
    let meta = std::fs::symlink_metadata(path).map_err(io_error(path))?;
    if meta.is_file() {
        return Ok(());
    }
    Err(bad(
        path.to_path_buf(),
        format!(
            "{}, not a regular file: a recording's files are read only as regular files, \
             never through a link",
            describe_kind(meta.file_type())
        ),
    ))
}

/// The replay's output folder: not the session folder, not a link, created if missing, and
/// holding no recording (whose files the replay would replace).
fn prepare_out_dir(dir: &Path, out_dir: &Path) -> Result<(), SessionError> {
    if same_dir(dir, out_dir) {
        return Err(bad(
            out_dir.to_path_buf(),
            "the replay's output folder must not be the session folder",
        ));
    }
    match std::fs::symlink_metadata(out_dir) {
        Ok(meta) if meta.is_dir() => {}
        Ok(meta) => {
            return Err(bad(
                out_dir.to_path_buf(),
                format!(
                    "{}, not a folder: the replay writes only into a real folder, never \
                     through a link",
                    describe_kind(meta.file_type())
                ),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(out_dir).map_err(io_error(out_dir))?;
        }
        Err(e) => return Err(io_error(out_dir)(e)),
    }
    for name in [SESSION_FILE, END_FILE, INPUTS_FILE, SCENE_FILE] {
        if std::fs::symlink_metadata(out_dir.join(name)).is_ok() {
            return Err(bad(
                out_dir.to_path_buf(),
                format!(
                    "holds a recorded session ({name}): the replay never writes into a \
                     recording; give --out a new folder"
                ),
            ));
        }
    }
    Ok(())
}

/// Compares the recorded log (at most the size `end` states) with the replayed one.
fn compare(
    dir: &Path,
    replayed_path: &Path,
    recorded: File,
    replayed: &AtomicFile,
    end: &SessionEnd,
) -> Result<Option<Difference>, SessionError> {
    let recorded_path = dir.join(SOLVER_FILE);
    let mut replayed_file = replayed
        .file()
        .try_clone()
        .map_err(io_error(replayed_path))?;
    replayed_file.rewind().map_err(io_error(replayed_path))?;
    first_difference(
        BufReader::new(recorded.take(end.solver_bytes)),
        BufReader::new(replayed_file),
    )
    .map_err(|source| SessionError::Io {
        path: recorded_path,
        source,
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
