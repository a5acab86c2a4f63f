//! The run summary printed by `demo` and `run`: what the interaction did (clip, drag, release,
//! free swing, tip error), the solver's health, latency, frame output and memory.

use super::display_summary::DisplaySummary;
use super::memory::{SETTLED_AFTER, WARMUP_FRAMES};
use crate::rig::live::RunSummary;
use crate::rig::threads::solver_worker::SolverSummary;
use std::fmt::Write as _;

/// How long after the clip the spring is given to pull the body onto the tip before the tip
/// error counts, seconds.
pub const CLIP_SETTLE_S: f64 = 0.3;

/// The interaction as recorded by the solver thread.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InteractionReport {
    /// Simulated time of the first clip, seconds.
    pub clip_s: Option<f64>,
    /// Simulated time of the first release after it, seconds.
    pub release_s: Option<f64>,
    /// Largest tip-to-grabbed-point distance while clipped (after [`CLIP_SETTLE_S`]), metres.
    pub max_tip_error_m: Option<f64>,
    /// How far the grabbed point was dragged from where it was clipped, metres.
    pub drag_m: Option<f64>,
    /// Path length of the grab point in the second after the release, metres (free swing).
    pub swing_path_after_release_m: Option<f64>,
}

impl InteractionReport {
    /// Extracts the report from a solver summary.
    pub fn from_solver(s: &SolverSummary) -> Self {
        let clip_s = s
            .events
            .iter()
            .find(|(_, m)| m.starts_with("clipped"))
            .map(|(t, _)| *t);
        let release_s = clip_s.and_then(|c| {
            s.events
                .iter()
                .find(|(t, m)| *t > c && m.starts_with("released"))
                .map(|(t, _)| *t)
        });
        let mut r = Self {
            clip_s,
            release_s,
            ..Self::default()
        };
        let Some(c) = clip_s else { return r };
        let clipped_rows: Vec<_> = s.trace.iter().filter(|row| row.clipped).collect();
        let start = clipped_rows.first().and_then(|row| row.grab_point_in_world);
        for row in clipped_rows
            .iter()
            .filter(|row| row.sim_time_s > c + CLIP_SETTLE_S)
        {
            if let (Some(tip), Some(p)) = (row.tip_in_world, row.grab_point_in_world) {
                let e = (tip - p).norm();
                r.max_tip_error_m = Some(r.max_tip_error_m.map_or(e, |m: f64| m.max(e)));
                if let Some(p0) = start {
                    let d = (p - p0).norm();
                    r.drag_m = Some(r.drag_m.map_or(d, |m: f64| m.max(d)));
                }
            }
        }
        if let Some(rel) = release_s {
            let pts: Vec<_> = s
                .trace
                .iter()
                .filter(|row| !row.clipped && row.sim_time_s > rel && row.sim_time_s <= rel + 1.0)
                .filter_map(|row| row.grab_point_in_world)
                .collect();
            if pts.len() > 1 {
                r.swing_path_after_release_m =
                    Some(pts.windows(2).map(|w| (w[1] - w[0]).norm()).sum());
            }
        }
        r
    }
}

/// How far the first grab point moved from the start of the trace to the clip (to the end
/// without one), metres: in a scene whose tip pushes, the push.
pub fn pushed_before_clip_m(s: &SolverSummary, clip_s: Option<f64>) -> Option<f64> {
    let before = |row: &&crate::rig::TraceRow| clip_s.is_none_or(|c| row.sim_time_s < c);
    let first = s.trace.first()?.grab_point_in_world?;
    let last = s.trace.iter().rfind(before)?.grab_point_in_world?;
    Some((last - first).norm())
}

/// The summary's camera line: the camera's frame rate (captured and tracked, with the stale
/// frames dropped, for a camera read on a capture thread), the updates the display showed,
/// and the shown frame's age from its capture to the frame presented.
pub fn camera_line(d: &DisplaySummary) -> String {
    let per_s = |n: u64| {
        if d.wall_s > 0.0 {
            n as f64 / d.wall_s
        } else {
            0.0
        }
    };
    let rate = match d.capture {
        Some(c) => format!(
            "{} frames captured ({:.1} per second), {} tracked ({:.1} per second), {} dropped \
             as stale; ",
            c.captured,
            per_s(c.captured),
            c.tracked,
            per_s(c.tracked),
            c.dropped_stale
        ),
        None => String::new(),
    };
    format!(
        "camera: {rate}{} updates shown ({:.1} per second); shown frame age, capture → \
         presented: {}",
        d.camera_updates,
        per_s(d.camera_updates),
        d.video_age.describe()
    )
}

/// The human-readable summary of a run.
pub fn describe(summary: &RunSummary, frame_period_ms: f64) -> String {
    let d = &summary.display;
    let s = &summary.solver;
    let i = InteractionReport::from_solver(s);
    let mut out = String::new();
    let fps = if d.wall_s > 0.0 {
        d.frames as f64 / d.wall_s
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "frames: {} in {:.1} s ({fps:.1} fps)",
        d.frames, d.wall_s
    );
    if let Some(dir) = &d.frames_dir {
        let _ = writeln!(
            out,
            "frames written to {} (frame_000000.png …)",
            dir.display()
        );
    }
    let _ = writeln!(
        out,
        "latency, stylus sample → frame presented: {} (target < {:.0} ms = two frames)",
        d.latency.describe(),
        2.0 * frame_period_ms
    );
    let _ = writeln!(
        out,
        "  of which stylus sample age at render start: {}",
        d.sample_age.describe()
    );
    let _ = writeln!(
        out,
        "  of which render time per frame: {}",
        d.render.describe()
    );
    let _ = writeln!(out, "{}", camera_line(d));
    let _ = writeln!(
        out,
        "solver: {} steps of {} ms, real-time factor {:.3}, {} steps dropped, max |psi| {:.3e} m, max |energy error| {:.3} %",
        s.steps,
        // To the microsecond: 0.005 s reads 5, not 5.000000000000001.
        (s.dt_secs * 1e6).round() / 1e3,
        s.real_time_factor,
        s.skipped_steps,
        s.max_psi_norm_m,
        100.0 * s.max_abs_energy_error_rel
    );
    let mm = |v: Option<f64>| v.map_or("-".to_owned(), |m| format!("{:.2} mm", m * 1e3));
    let sec = |v: Option<f64>| v.map_or("never".to_owned(), |t| format!("t = {t:.2} s"));
    let _ = writeln!(
        out,
        "interaction: clipped {}, released {}, dragged {}, max tip error while clipped {}, free swing path in the 1 s after release {}",
        sec(i.clip_s),
        sec(i.release_s),
        i.drag_m.map_or("-".to_owned(), |m| format!("{:.1} cm", m * 1e2)),
        mm(i.max_tip_error_m),
        i.swing_path_after_release_m.map_or("-".to_owned(), |m| format!("{:.1} cm", m * 1e2)),
    );
    if let Some(r) = s.stylus_tip_radius_m {
        let _ = writeln!(
            out,
            "stylus tip: a {:.0} mm sphere that pushes; the grab point's body moved {} before \
             the clip; deepest penetration {:.1e} m; user work {:.4} J by the end",
            2e3 * r,
            pushed_before_clip_m(s, i.clip_s)
                .map_or("-".to_owned(), |m| format!("{:.1} mm", m * 1e3)),
            s.max_penetration_m,
            s.trace.last().map_or(0.0, |row| row.user_work_j),
        );
    }
    if let Some(m) = &d.memory {
        let mb = |b: u64| b as f64 / 1e6;
        let _ = write!(
            out,
            "memory (resident): {:.1} MB at the first frame, {:.1} MB at the last ({:+.1} MB), peak {:.1} MB",
            mb(m.first_bytes),
            mb(m.last_bytes),
            (m.last_bytes as f64 - m.first_bytes as f64) / 1e6,
            mb(m.peak_bytes)
        );
        match (m.after_warmup_bytes, m.growth_after_warmup_bytes()) {
            (Some(w), Some(g)) => {
                let _ = write!(
                    out,
                    "; after warm-up: {:.1} MB at frame {WARMUP_FRAMES}, growth since {:+.1} MB",
                    mb(w),
                    g as f64 / 1e6
                );
            }
            _ => {
                let _ = write!(out, "; run shorter than the {WARMUP_FRAMES}-frame warm-up");
            }
        }
        match (m.settled_bytes, m.growth_after_settling_bytes()) {
            (Some(w), Some(g)) => {
                let _ = writeln!(
                    out,
                    "; settled: {:.1} MB after {} s, growth since {:+.1} MB",
                    mb(w),
                    SETTLED_AFTER.as_secs(),
                    g as f64 / 1e6
                );
            }
            _ => {
                let _ = writeln!(out);
            }
        }
    }
    let lost = &d.workers_lost;
    if lost.is_empty() {
        let _ = writeln!(
            out,
            "workers: {} started ({}), all running until the end",
            d.workers_started.len(),
            d.workers_started.join(", ")
        );
    } else {
        let _ = writeln!(
            out,
            "workers: {} started ({}), LOST during the run: {}",
            d.workers_started.len(),
            d.workers_started.join(", "),
            lost.join(", ")
        );
    }
    if let crate::rig::live::StopReason::WorkerFailed { worker, message } = &d.stop_reason {
        let _ = writeln!(out, "stopped early: {worker} failed: {message}");
    }
    if let Some(e) = &s.error {
        let _ = writeln!(out, "solver failed (stepping stopped, the rig ran on): {e}");
    }
    for e in d.events.first() {
        let _ = writeln!(out, "  {e}");
    }
    if d.events.dropped() > 0 {
        let _ = writeln!(out, "  ... {} events not kept ...", d.events.dropped());
    }
    for e in d.events.latest() {
        let _ = writeln!(out, "  {e}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::display::display_summary::CaptureSummary;
    use crate::rig::display::latency::LatencyStats;
    use crate::rig::live::StopReason;

    fn display(stop_reason: StopReason, workers_lost: Vec<String>) -> DisplaySummary {
        let mut latency = LatencyStats::default();
        latency.push_ms(30.0);
        DisplaySummary {
            frames: 10,
            wall_s: 0.4,
            latency,
            sample_age: LatencyStats::default(),
            render: LatencyStats::default(),
            video_age: LatencyStats::default(),
            camera_updates: 10,
            capture: None,
            events: Default::default(),
            frames_dir: None,
            memory: None,
            stop_reason,
            workers_started: vec!["camera".into(), "solver".into()],
            workers_lost,
            last_hud_lines: Vec::new(),
        }
    }

    #[test]
    fn a_failed_worker_is_named_as_lost_and_as_the_reason_to_stop() {
        let summary = RunSummary {
            display: display(
                StopReason::WorkerFailed {
                    worker: "solver".into(),
                    message: "diverged".into(),
                },
                vec!["solver".into()],
            ),
            solver: SolverSummary::default(),
        };
        let text = describe(&summary, 40.0);
        assert!(text.contains("LOST during the run: solver"), "{text}");
        assert!(
            text.contains("stopped early: solver failed: diverged"),
            "{text}"
        );
        assert!(text.contains("target < 80 ms"), "{text}");
    }

    /// The camera line gives the camera's rate and the shown frame's age (mean, p95, max).
    #[test]
    fn the_summary_reports_the_camera_rate_and_the_shown_frame_age() {
        let mut d = display(StopReason::Done, Vec::new());
        d.wall_s = 2.0;
        d.capture = Some(CaptureSummary {
            captured: 50,
            tracked: 40,
            dropped_stale: 10,
        });
        for ms in 1..=20 {
            d.video_age.push_ms(f64::from(ms) * 5.0);
        }
        let summary = RunSummary {
            display: d,
            solver: SolverSummary::default(),
        };
        let text = describe(&summary, 40.0);
        let line = text.lines().find(|l| l.starts_with("camera: ")).unwrap();
        assert_eq!(
            line,
            "camera: 50 frames captured (25.0 per second), 40 tracked (20.0 per second), 10 \
             dropped as stale; 10 updates shown (5.0 per second); shown frame age, capture → \
             presented: mean 52.5 ms, median 50.0 ms, p95 95.0 ms, max 100.0 ms (20 frames)"
        );
    }

    #[test]
    fn a_clean_run_says_every_worker_ran_to_the_end() {
        let summary = RunSummary {
            display: display(StopReason::Done, Vec::new()),
            solver: SolverSummary::default(),
        };
        let text = describe(&summary, 40.0);
        assert!(
            text.contains("2 started (camera, solver), all running until the end"),
            "{text}"
        );
        assert!(!text.contains("stopped early"), "{text}");
    }
}
