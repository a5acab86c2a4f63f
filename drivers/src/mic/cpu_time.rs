//! CPU time consumed by the calling thread, to report what the microphone threads cost.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// CPU time (user + system) the calling thread has used so far; `None` where the platform
/// has no per-thread clock.
pub fn thread_cpu_time() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer and reads nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return None;
    }
    Some(Duration::new(
        u64::try_from(ts.tv_sec).ok()?,
        u32::try_from(ts.tv_nsec).ok()?,
    ))
}

/// A thread's CPU time published for other threads to read (nanoseconds, relaxed: a
/// monitoring figure, not a synchronisation point).
#[derive(Debug, Default)]
pub(crate) struct CpuMeter(AtomicU64);

impl CpuMeter {
    /// Records the calling thread's CPU time; call it from the thread being measured.
    pub(crate) fn record(&self) {
        if let Some(t) = thread_cpu_time() {
            self.0.store(
                u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
                Ordering::Relaxed,
            );
        }
    }

    /// Adds the CPU time spent since `since` (a reading of [`thread_cpu_time`] on the calling
    /// thread); used for callbacks that run on a thread owned by the audio backend.
    pub(crate) fn add_since(&self, since: Option<Duration>) {
        if let (Some(a), Some(b)) = (since, thread_cpu_time()) {
            let d = u64::try_from(b.saturating_sub(a).as_nanos()).unwrap_or(u64::MAX);
            self.0.fetch_add(d, Ordering::Relaxed);
        }
    }

    /// The last published figure.
    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_cpu_time_grows_with_work_and_ignores_sleep() {
        let a = thread_cpu_time().expect("Linux has CLOCK_THREAD_CPUTIME_ID");
        std::thread::sleep(Duration::from_millis(30));
        let b = thread_cpu_time().expect("clock");
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
        std::hint::black_box(x);
        let c = thread_cpu_time().expect("clock");
        // Sleeping costs (almost) no CPU; spinning does.
        assert!(b - a < Duration::from_millis(10), "sleep cost {:?}", b - a);
        assert!(c > b);
    }
}
