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
    let scene = ar_dynamics::scene::resolve_scene("ten_pendula");
    let mut sim = load_simulation(&scene, Method::Default).unwrap().simulation;
    let h = sim.dt_secs();
    let info = SessionInfo::new("ten_pendula", "default", h, &Isometry3::identity());
    let mut recorder = SessionRecorder::create(session, &scene, &info).unwrap();
    let grab = sim.grab_points()[0];
    let view = Isometry3::translation(0.0, -0.5, 0.4);
    recorder.view(&view);
    sim.set_viewpoint(&view);
    for k in 0..steps {
        let spring = SpringAttachment {
            body: grab.body,
            point_in_body: grab.point_in_body,
            target_in_world: grab.point_in_world + Vector3::new(0.001 * k as f64, 0.0, 0.0),
        };
        let wind = if k % 3 == 0 { 0.2 } else { 0.0 };
        sim.set_stylus_tip(Some(spring.target_in_world));
        sim.step(Some(&spring), wind).unwrap();
        recorder
            .step(k, (k + 1) as f64 * h, Some(&spring), None, wind, &sim)
            .unwrap();
    }
    recorder.finish().unwrap();
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
