//! The solver before the drawing: on a machine without a GPU the renderer (lavapipe) wants a
//! core of its own, and a step of a falling pile wants one too; when both are short, a late
//! frame is a lower frame rate while a late step is a simulation that falls behind real time
//! and drops steps. So the sandbox lowers the scheduling priority of its drawing threads (the
//! display loop's, the renderer's and every other thread that is not one of the rig's
//! workers) by [`DRAWING_NICE_STEP`] below the solver's. An unprivileged process can only lower
//! priorities, which is why the drawing yields rather than the solver rising.
//!
//! Measured on the `pile` in the sandbox under Xvfb (release, 2 cores, 15 s): dropped steps in 3
//! of 8 runs without it (3 to 13 steps), none in 4 of 4 with it, at the same 21 frames per
//! second (`src/manual/contact.md`). The rig's workers are told apart by their thread names,
//! which they have once [`crate::rig::threads::worker::Worker::spawn`] returns.

/// How many nice steps the drawing threads run below the solver (4: the solver's weight is
/// 2.7 times theirs under Linux's scheduler).
pub const DRAWING_NICE_STEP: i32 = 4;

/// The rig's workers, which keep their priority (the solver's own threads, and its narrow
/// phase's helpers, which take the solver thread's name).
pub const WORKERS: [&str; 6] = ["solver", "camera", "capture", "arm", "mic", "signals"];

/// Lowers the priority of every thread of this process not named in [`WORKERS`] by
/// [`DRAWING_NICE_STEP`] below the calling thread's (threads they start later inherit it);
/// the number of threads lowered. Linux only (elsewhere nothing changes).
pub fn lower_drawing_threads() -> std::io::Result<usize> {
    #[cfg(target_os = "linux")]
    {
        linux::lower_all_but(&WORKERS, DRAWING_NICE_STEP)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Ok(0)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;

    /// The nice value of thread `tid` (0: the calling thread).
    fn nice_of(tid: libc::id_t) -> io::Result<i32> {
        // getpriority returns -1 for a nice of -1 too: errno tells them apart.
        // SAFETY: errno is the calling thread's own; getpriority only reads.
        unsafe {
            *libc::__errno_location() = 0;
            let nice = libc::getpriority(libc::PRIO_PROCESS, tid);
            if nice == -1 && *libc::__errno_location() != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(nice)
        }
    }

    /// Sets every thread not named in `keep` to the calling thread's nice + `step`.
    pub fn lower_all_but(keep: &[&str], step: i32) -> io::Result<usize> {
        let target = (nice_of(0)? + step).min(19);
        let mut lowered = 0;
        for entry in std::fs::read_dir("/proc/self/task")? {
            let entry = entry?;
            let Some(tid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<libc::id_t>().ok())
            else {
                continue;
            };
            // A thread that ended since the listing has no name any more: nothing to lower.
            let Ok(name) = std::fs::read_to_string(entry.path().join("comm")) else {
                continue;
            };
            if keep.contains(&name.trim_end()) || nice_of(tid).is_ok_and(|n| n >= target) {
                continue;
            }
            // SAFETY: setpriority on a thread of this process; it changes only its nice value.
            if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, target) } == 0 {
                lowered += 1;
            }
        }
        Ok(lowered)
    }
}
