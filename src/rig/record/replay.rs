//! Replaying a recorded session (`ar-multibody replay DIR`): the scene copied into the session
//! folder is loaded for the recorded method as the rig loads it, every recorded step's inputs (the stylus spring, the
//! wind level, a new camera pose) are fed to it through the rig's [`Simulation`] interface as
//! the solver thread fed them, and its outputs are written with the recorder's own writer
//! ([`SolverLogWriter`]); the replayed `solver.csv` is then compared with the recorded one
//! line by line. The solver is deterministic, so a replay of an unaltered session is identical
//! bit for bit; the first line that differs is named otherwise.

use std::fs;
use std::path::{Path, PathBuf};

use super::session_log::{
    read_inputs, SessionError, SessionInfo, SolverLogWriter, INPUTS_FILE, SCENE_FILE, SESSION_FILE,
    SOLVER_FILE,
};
use crate::rig::RigSimulation;

/// The first line at which the replayed solver log differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// 1-based line number.
    pub line: usize,
    /// The recorded line (empty past its end).
    pub recorded: String,
    /// The replayed line (empty past its end).
    pub replayed: String,
}

/// What a replay did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOutcome {
    /// Steps replayed.
    pub steps: u64,
    /// Simulated time at the end, seconds.
    pub simulated_s: f64,
    /// The replayed solver log.
    pub solver_log: PathBuf,
    /// Where it differs from the recording; `None` when identical.
    pub difference: Option<Difference>,
}

/// Replays the session in `dir` into `out_dir` (created if needed; its `solver.csv` is
/// replaced). `load` builds the simulation from the session's scene file for its description
/// (the method) as the rig does; its step must be the recorded `dt_secs`. A step that fails is
/// an error naming the step and the time.
pub fn replay(
    dir: &Path,
    out_dir: &Path,
    load: impl FnOnce(&Path, &SessionInfo) -> Result<RigSimulation, String>,
) -> Result<ReplayOutcome, SessionError> {
    let info = SessionInfo::read(dir)?;
    let inputs = read_inputs(dir)?;
    let scene = dir.join(SCENE_FILE);
    let mut sim = load(&scene, &info).map_err(|message| SessionError::Bad {
        path: scene.clone(),
        line: None,
        message,
    })?;
    // The recording's times count in its step; a scene copy that steps by another was edited.
    let (recorded_h, h) = (info.dt_secs, sim.dt_secs());
    if (recorded_h - h).abs() > 1e-12 * recorded_h.abs().max(h.abs()) {
        return Err(SessionError::Bad {
            path: dir.join(SESSION_FILE),
            line: None,
            message: format!(
                "dt_secs = {recorded_h} s, but the session's scene steps by {h} s \
                 ({SCENE_FILE} was changed after the recording)"
            ),
        });
    }
    if same_dir(dir, out_dir) {
        return Err(SessionError::Bad {
            path: out_dir.to_path_buf(),
            line: None,
            message: "the replay's output folder must not be the session folder".into(),
        });
    }
    fs::create_dir_all(out_dir).map_err(|source| SessionError::Io {
        path: out_dir.to_path_buf(),
        source,
    })?;
    let solver_log = out_dir.join(SOLVER_FILE);
    let mut writer = SolverLogWriter::create(&solver_log)?;
    for row in &inputs {
        if let Some(view) = &row.inputs.view {
            sim.set_viewpoint(view);
        }
        // As the solver thread does: the tip (which only a pushing tip uses while unclipped).
        let spring_end = row.inputs.spring.map(|s| s.target_in_world);
        sim.set_stylus_tip(row.inputs.tip.or(spring_end));
        sim.step(row.inputs.spring.as_ref(), row.inputs.wind_level)
            .map_err(|e| SessionError::Bad {
                path: dir.join(INPUTS_FILE),
                line: None,
                message: format!(
                    "replaying step {} (t = {} s) failed: {}",
                    row.step, row.t_s, e.0
                ),
            })?;
        writer.write(row.t_s, &sim)?;
    }
    writer.finish()?;
    let recorded_path = dir.join(SOLVER_FILE);
    let recorded = fs::read_to_string(&recorded_path).map_err(|source| SessionError::Io {
        path: recorded_path,
        source,
    })?;
    let replayed = fs::read_to_string(&solver_log).map_err(|source| SessionError::Io {
        path: solver_log.clone(),
        source,
    })?;
    Ok(ReplayOutcome {
        steps: inputs.len() as u64,
        simulated_s: inputs.last().map_or(0.0, |r| r.t_s),
        solver_log,
        difference: first_difference(&recorded, &replayed),
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The first line at which `recorded` and `replayed` differ, if any.
fn first_difference(recorded: &str, replayed: &str) -> Option<Difference> {
    let mut a = recorded.lines();
    let mut b = replayed.lines();
    let mut line = 0;
    loop {
        line += 1;
        match (a.next(), b.next()) {
            (None, None) => return None,
            (x, y) if x == y => continue,
            (x, y) => {
                return Some(Difference {
                    line,
                    recorded: x.unwrap_or_default().to_owned(),
                    replayed: y.unwrap_or_default().to_owned(),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        let d = first_difference("a\nb\nc\n", "a\nB\nc\n").unwrap();
        assert_eq!(
            (d.line, d.recorded.as_str(), d.replayed.as_str()),
            (2, "b", "B")
        );
        let d = first_difference("a\nb\n", "a\n").unwrap();
        assert_eq!((d.line, d.replayed.as_str()), (2, ""));
    }
}
