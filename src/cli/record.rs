//! `--record DIR` of `demo`, `run` and `sandbox`: starting the session's recorder before the rig, and
//! saying at the end where the session is and whether it is complete (see
//! `ar_multibody::rig::record::session_log`).

use ar_multibody::rig::method::Method;
use ar_multibody::rig::record::session_log::{SessionInfo, SessionRecorder};
use ar_multibody::rig::{RigSimulation, RunSummary, SolverConfig};
use std::path::Path;

/// The recorder for `--record DIR`, if asked: the folder is created with the session's
/// description (`scene` as the user named it, `method`, the step of `simulation`, the scene's
/// own, and the arm's calibration of `solver`) and a copy of `scene_file`. A folder that holds
/// a recording already is refused here, before anything runs.
pub fn start(
    dir: Option<&Path>,
    scene: &str,
    scene_file: &Path,
    method: Method,
    simulation: &RigSimulation,
    solver: &SolverConfig,
) -> anyhow::Result<Option<SessionRecorder>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let info = SessionInfo::new(
        scene,
        method.name(),
        simulation.dt_secs(),
        &solver.world_from_arm,
    );
    let recorder = SessionRecorder::create(dir, scene_file, &info)?;
    eprintln!("recording the session into {}", dir.display());
    Ok(Some(recorder))
}

/// Says where the session was recorded, or fails when the recording is incomplete.
pub fn finish(dir: Option<&Path>, summary: &RunSummary) -> anyhow::Result<()> {
    let Some(dir) = dir else {
        return Ok(());
    };
    if let Some(e) = &summary.solver.recording_error {
        anyhow::bail!("the recording in {} is incomplete: {e}", dir.display());
    }
    let parts = match summary.solver.recorded_later_parts {
        0 => String::new(),
        later => format!(
            " in {} parts: the folder, then part2 to part{}",
            later + 1,
            later + 1
        ),
    };
    println!(
        "session recorded in {} ({} steps{parts}); `ar-multibody replay {}` runs it again",
        dir.display(),
        summary.solver.recorded_steps,
        dir.display()
    );
    Ok(())
}
