//! The status lines a session with the mouse prints on standard output, one per event, so
//! that a script or a test can follow it (the sandbox, the mouse on `run`): `t = … s: …` with
//! the session's simulated time as the newest snapshot shows it (the solver's clock, which its
//! events, the run's summary and a recording's `t_s` count in: it goes on across resets and
//! scene switches and stops while paused), and what became of the point the pointer grabbed
//! last (where it was grabbed, where it was let go, where it is at the end).

use super::pick::Pick;
use crate::scene_view::BodyView;
use nalgebra::Point3;
use std::sync::Arc;

/// Prints the session's lines with its simulated time.
#[derive(Debug, Clone, Default)]
pub struct StatusLines {
    sim_time_s: f64,
}

impl StatusLines {
    /// Lines timed from the session's start (0 s until the first snapshot).
    pub fn new() -> Self {
        Self::default()
    }

    /// The session's time now: the newest snapshot's.
    pub fn at(&mut self, sim_time_s: f64) {
        self.sim_time_s = sim_time_s;
    }

    /// Prints `line` as `t = … s: line`.
    pub fn say(&self, line: &str) {
        println!("t = {:.2} s: {line}", self.sim_time_s);
    }
}

/// A point of a body followed by the status lines: the last grabbed one.
#[derive(Debug, Clone)]
struct Watched {
    body: usize,
    name: Arc<str>,
    point_in_body: Point3<f64>,
    grabbed_at_in_world: Point3<f64>,
}

impl Watched {
    fn now(&self, bodies: &[BodyView]) -> Option<Point3<f64>> {
        bodies
            .iter()
            .find(|b| b.body == self.body)
            .map(|b| b.world_from_body * self.point_in_body)
    }
}

/// The last grabbed point, followed from snapshot to snapshot; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct GrabWatch {
    watched: Option<Watched>,
    now_in_world: Option<Point3<f64>>,
}

impl GrabWatch {
    /// Follows `pick`'s point from now on; the line that says it was grabbed.
    pub fn grabbed(&mut self, pick: &Pick) -> String {
        let p = pick.point_in_world;
        self.watched = Some(Watched {
            body: pick.body,
            name: pick.name.clone(),
            point_in_body: pick.point_in_body,
            grabbed_at_in_world: p,
        });
        self.now_in_world = Some(p);
        format!(
            "grabbed {} at ({:.4}, {:.4}, {:.4}) m",
            pick.name, p.x, p.y, p.z
        )
    }

    /// Stops following (the scene changed under it).
    pub fn forget(&mut self) {
        *self = Self::default();
    }

    /// Notes where the point is among `bodies` (the newest snapshot's).
    pub fn update(&mut self, bodies: &[BodyView]) {
        if let Some(p) = self.watched.as_ref().and_then(|w| w.now(bodies)) {
            self.now_in_world = Some(p);
        }
    }

    /// `what` (e.g. "released") with where the point is among `bodies`, and how far from
    /// where it was grabbed (cm).
    pub fn line(&self, what: &str, bodies: &[BodyView]) -> Option<String> {
        let w = self.watched.as_ref()?;
        let p = w.now(bodies)?;
        Some(format!(
            "{what} {}: the grabbed point at ({:.4}, {:.4}, {:.4}) m, {:.1} cm from where it was grabbed",
            w.name,
            p.x,
            p.y,
            p.z,
            (p - w.grabbed_at_in_world).norm() * 1e2
        ))
    }

    /// Where the point was last seen, and how far from where it was grabbed (mm): the
    /// session's last line.
    pub fn final_line(&self) -> Option<String> {
        let w = self.watched.as_ref()?;
        let p = self.now_in_world?;
        Some(format!(
            "at the end: {}'s grabbed point at ({:.6}, {:.6}, {:.6}) m, {:.2} mm from where it was grabbed",
            w.name,
            p.x,
            p.y,
            p.z,
            (p - w.grabbed_at_in_world).norm() * 1e3
        ))
    }
}
