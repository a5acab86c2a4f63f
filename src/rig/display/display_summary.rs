//! What the rig's display loop measured over a run (frames, latencies, memory, the workers)
//! and why it ended.

use super::latency::LatencyStats;
use super::memory::MemorySummary;
use crate::rig::live::StopReason;
use crate::rig::threads::capture::CaptureCounts;
use crate::rig::threads::event_log::EventLog;
use std::path::PathBuf;

/// What the display loop measured.
#[derive(Debug, Clone)]
pub struct DisplaySummary {
    /// Frames rendered.
    pub frames: u64,
    /// Wall time of the loop, seconds.
    pub wall_s: f64,
    /// End-to-end latency per frame (stylus sample → frame presented), milliseconds.
    pub latency: LatencyStats,
    /// The first part of it: age of the newest stylus sample when the frame's render started
    /// (arm → driver → solver step → snapshot → display loop), milliseconds.
    pub sample_age: LatencyStats,
    /// Render time per frame (both eyes and read-back), milliseconds: the second part.
    pub render: LatencyStats,
    /// Age of the shown video frame when presented (its capture time → presented),
    /// milliseconds; grows when the camera thread falls behind its frame rate.
    pub video_age: LatencyStats,
    /// Camera updates (video frame + marker pose) the display loop received.
    pub camera_updates: u64,
    /// The camera's capture thread over the run, for a camera read on one.
    pub capture: Option<CaptureSummary>,
    /// Messages the workers reported (clips, releases, reconnects, slowdowns).
    pub events: EventLog<String>,
    /// Frames written to this folder, if any.
    pub frames_dir: Option<PathBuf>,
    /// Resident memory over the run (Linux).
    pub memory: Option<MemorySummary>,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Names of the worker threads the rig started.
    pub workers_started: Vec<String>,
    /// Workers that ended while the rig was still running (checked after every frame), plus
    /// the one whose failure stopped it; the others stopping with the rig are not lost.
    pub workers_lost: Vec<String>,
    /// The HUD's lines on the last frame (what the user saw last, e.g. "solver failed: …").
    pub last_hud_lines: Vec<String>,
}

/// What the camera's capture thread did over the run ([`crate::rig::threads::capture`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CaptureSummary {
    /// Frames read from the camera.
    pub captured: u64,
    /// Frames tracked (the newest whenever tracking was ready).
    pub tracked: u64,
    /// Frames dropped unread as stale: a newer one had come before tracking was ready.
    pub dropped_stale: u64,
}

impl CaptureSummary {
    /// The counts of a capture thread now.
    pub fn of(c: &CaptureCounts) -> Self {
        Self {
            captured: c.captured(),
            tracked: c.taken(),
            dropped_stale: c.dropped_stale(),
        }
    }

    /// What was counted between `start` and `self`.
    pub fn since(&self, start: &Self) -> Self {
        Self {
            captured: self.captured - start.captured,
            tracked: self.tracked - start.tracked,
            dropped_stale: self.dropped_stale - start.dropped_stale,
        }
    }
}

impl DisplaySummary {
    pub(in crate::rig) fn note_lost(&mut self, worker: &str) {
        if !self.workers_lost.iter().any(|w| w == worker) {
            self.workers_lost.push(worker.to_owned());
        }
    }
}
