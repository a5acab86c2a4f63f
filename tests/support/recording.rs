//! A small recorded session made in-process for the recording tests (included with
//! `#[path]`): the ten pendula, `steps` steps with the tip grabbed and pulled sideways, the
//! wind blowing on some, a camera pose on the first, through the recorder the rig uses.

use ar_multibody::interaction::SpringAttachment;
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::record::replay::{replay, ReplayOutcome};
use ar_multibody::rig::record::session_log::{SessionError, SessionInfo, SessionRecorder};
use nalgebra::{Isometry3, Vector3};
use std::path::Path;

/// Records `steps` steps of the ten pendula into `session` (a new or empty folder).
pub fn record_session(session: &Path, steps: u64) {
    record_session_in_parts(session, steps, 1);
}

/// [`record_session`] in `parts` parts, each `steps` steps of the ten pendula from their
/// initial state (as the sandbox's resets record them), the time going on.
#[allow(dead_code)]
pub fn record_session_in_parts(session: &Path, steps: u64, parts: u32) {
    let scene = ar_dynamics::scene::resolve_scene("ten_pendula");
    let mut sim = load_simulation(&scene, Method::Default).unwrap().simulation;
    let h = sim.dt_secs();
    let info = SessionInfo::new("ten_pendula", "default", h, &Isometry3::identity());
    let mut recorder = SessionRecorder::create(session, &scene, &info).unwrap();
    let text = std::fs::read_to_string(&scene).unwrap();
    for part in 0..parts {
        if part > 0 {
            sim = load_simulation(&scene, Method::Default).unwrap().simulation;
            recorder.next_part("ten_pendula", &text, h).unwrap();
        }
        record_steps(&mut recorder, &mut sim, u64::from(part) * steps, steps);
    }
    recorder.finish().unwrap();
}

/// Records `steps` steps of `sim` dragged by its first grab point, from step `first`.
fn record_steps(
    recorder: &mut SessionRecorder,
    sim: &mut ar_multibody::rig::RigSimulation,
    first: u64,
    steps: u64,
) {
    let h = sim.dt_secs();
    let grab = sim.grab_points()[0];
    let view = Isometry3::translation(0.0, -0.5, 0.4);
    recorder.view(&view);
    sim.set_viewpoint(&view);
    for k in first..first + steps {
        let spring = SpringAttachment {
            body: grab.body,
            point_in_body: grab.point_in_body,
            target_in_world: grab.point_in_world + Vector3::new(0.001 * k as f64, 0.0, 0.0),
        };
        let wind = if k % 3 == 0 { 0.2 } else { 0.0 };
        sim.set_stylus_tip(Some(spring.target_in_world));
        sim.step(Some(&spring), wind).unwrap();
        recorder
            .step((k + 1) as f64 * h, Some(&spring), None, wind, sim)
            .unwrap();
    }
}

/// Replays `session` into `out` in-process, as `ar-multibody replay` does.
#[allow(dead_code)]
pub fn replay_in_process(session: &Path, out: &Path) -> Result<ReplayOutcome, SessionError> {
    replay(session, out, |scene, info| {
        let method = Method::from_name(&info.method).ok_or("unknown method")?;
        load_simulation(scene, method)
            .map(|l| l.simulation)
            .map_err(|e| e.0)
    })
}
