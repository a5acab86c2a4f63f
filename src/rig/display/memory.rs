//! Resident memory over a run: the figures the display loop records per frame
//! ([`MemorySummary`]), how they are read (Linux `/proc/self/status`), and the allocator tuning
//! that keeps long runs from creeping.

use std::time::Duration;

/// Frames after which the caches of the first frames (pipelines, glyph atlas, staging memory,
/// the allocator's arenas) are built: memory growth is judged from this frame on.
pub const WARMUP_FRAMES: u64 = 25;

/// Time after which resident memory is expected to have reached its steady size.
pub const SETTLED_AFTER: Duration = Duration::from_secs(60);

/// Resident memory of the process over a run, bytes (Linux `/proc/self/status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySummary {
    /// At the first frame.
    pub first_bytes: u64,
    /// At frame [`WARMUP_FRAMES`], if the run got that far.
    pub after_warmup_bytes: Option<u64>,
    /// At the first frame after [`SETTLED_AFTER`] of running, if the run got that far: the
    /// allocator's arenas of the camera, tracker and video threads keep filling for about a
    /// minute before they reach their steady size.
    pub settled_bytes: Option<u64>,
    /// At the last frame.
    pub last_bytes: u64,
    /// Largest value seen at a frame.
    pub peak_bytes: u64,
}

impl MemorySummary {
    pub(in crate::rig) fn new(rss: u64) -> Self {
        Self {
            first_bytes: rss,
            after_warmup_bytes: None,
            settled_bytes: None,
            last_bytes: rss,
            peak_bytes: rss,
        }
    }

    pub(in crate::rig) fn record(&mut self, frame: u64, elapsed: Duration, rss: u64) {
        if frame == WARMUP_FRAMES {
            self.after_warmup_bytes = Some(rss);
        }
        if elapsed >= SETTLED_AFTER && self.settled_bytes.is_none() {
            self.settled_bytes = Some(rss);
        }
        self.last_bytes = rss;
        self.peak_bytes = self.peak_bytes.max(rss);
    }

    /// Growth from the end of the warm-up to the last frame, bytes (`None` for short runs).
    pub fn growth_after_warmup_bytes(&self) -> Option<i64> {
        self.after_warmup_bytes
            .map(|w| self.last_bytes as i64 - w as i64)
    }

    /// Growth from [`SETTLED_AFTER`] to the last frame, bytes (`None` for runs shorter).
    pub fn growth_after_settling_bytes(&self) -> Option<i64> {
        self.settled_bytes
            .map(|w| self.last_bytes as i64 - w as i64)
    }
}

/// Makes the C allocator serve every block of [`LARGE_BLOCK_BYTES`] or more (video frames,
/// read-back images, OpenCV matrices) from its own memory mapping, returned to the system when
/// freed. Otherwise glibc raises that threshold after the first such free and carves the
/// ~1 MB frames of several threads out of its arenas, whose fragmentation grew the demo by
/// ~10 MB over its first minute and a little more every minute after.
///
/// Fixing that threshold also fixes glibc's trim threshold at its initial 128 KiB, so every
/// free that left more than that at the top of a thread's arena gave the pages back
/// (`madvise`) and the next frame faulted them in again, zeroed: ~5,000 page faults per frame
/// of the demo, most of them in the software rasteriser's buffers. The trim threshold is
/// therefore raised to [`TRIM_THRESHOLD_BYTES`]: an arena keeps what it will reuse next frame
/// (the demo: half the page faults, render time 34 → 30 ms mean, 46 → 33 ms p95, and resident
/// memory after warm-up growing 1.6 MB instead of 20.6 MB over 150 frames, with the same peak).
/// Returns whether both settings were applied (glibc only). Call once at start-up, before the
/// threads start.
pub fn keep_large_buffers_out_of_the_heap() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes the allocator's tuning; it is called at start-up before
        // the rig's threads exist; any value is valid for M_MMAP_THRESHOLD up to 32 MiB and
        // for M_TRIM_THRESHOLD.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES as libc::c_int) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES as libc::c_int) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Blocks at least this large get their own memory mapping (see
/// [`keep_large_buffers_out_of_the_heap`]): glibc's initial threshold, made permanent.
pub const LARGE_BLOCK_BYTES: usize = 128 * 1024;

/// Free memory an arena keeps at its top rather than giving it back to the system (see
/// [`keep_large_buffers_out_of_the_heap`]).
pub const TRIM_THRESHOLD_BYTES: usize = 64 * 1024 * 1024;

/// Resident set size of this process, bytes (Linux `/proc/self/status`).
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_summary_keeps_warm_up_settled_last_and_peak() {
        let mb = 1_000_000;
        let mut m = MemorySummary::new(200 * mb);
        let mut elapsed = Duration::ZERO;
        for frame in 1..=3000u64 {
            elapsed += Duration::from_millis(40);
            // Climbs for the first 100 frames, one spike, then flat with a small creep.
            let rss = if frame < 100 {
                200 * mb + frame * mb / 2
            } else if frame == 500 {
                400 * mb
            } else {
                250 * mb + frame * 1000
            };
            m.record(frame, elapsed, rss);
        }
        assert_eq!(m.first_bytes, 200 * mb);
        assert_eq!(
            m.after_warmup_bytes,
            Some(200 * mb + WARMUP_FRAMES * mb / 2)
        );
        // 60 s at 40 ms per frame is frame 1500.
        assert_eq!(m.settled_bytes, Some(250 * mb + 1500 * 1000));
        assert_eq!(m.last_bytes, 250 * mb + 3000 * 1000);
        assert_eq!(m.peak_bytes, 400 * mb);
        assert_eq!(m.growth_after_settling_bytes(), Some(1500 * 1000));
        assert_eq!(
            m.growth_after_warmup_bytes(),
            Some((250 * mb + 3_000_000) as i64 - (200 * mb + 12 * mb + mb / 2) as i64)
        );
    }

    #[test]
    fn short_runs_have_no_warm_up_or_settled_figure() {
        let mut m = MemorySummary::new(100);
        m.record(1, Duration::from_millis(40), 120);
        assert_eq!(m.growth_after_warmup_bytes(), None);
        assert_eq!(m.growth_after_settling_bytes(), None);
        assert_eq!((m.last_bytes, m.peak_bytes), (120, 120));
    }
}
