//! The capture thread: a camera's frames read on a thread of their own, so that reading the
//! sensor never waits behind tracking (nor, further on, behind rendering). Each frame read
//! replaces the one waiting, if any (a latest-value channel of one); the tracking side takes
//! the newest frame when it is ready for one, and the frames it was too slow for are dropped
//! as stale and counted. Without this the camera thread read, tracked and undistorted one
//! frame after the other, and on a loaded machine the video shown was up to 0.66 s old at 6
//! frames per second (issue 44).

use super::worker::{StopFlag, Worker, WorkerError};
use crate::rig::devices::DeviceError;
use ar_drivers::latest::{latest_channel, LatestReceiver, SendOutcome};
use crossbeam_channel::RecvTimeoutError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Pause before reading again after a disconnect.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// How many frames the capture thread read, and how many of them were replaced by a newer one
/// before the tracking side took them.
#[derive(Debug, Default)]
pub struct CaptureCounts {
    captured: AtomicU64,
    dropped_stale: AtomicU64,
    taken: AtomicU64,
}

impl CaptureCounts {
    /// Frames read from the device.
    pub fn captured(&self) -> u64 {
        self.captured.load(Ordering::Acquire)
    }

    /// Frames dropped unread because a newer one arrived first.
    pub fn dropped_stale(&self) -> u64 {
        self.dropped_stale.load(Ordering::Acquire)
    }

    /// Frames the consumer took (and tracked).
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Acquire)
    }
}

/// The reading end of a capture thread; dropping it stops and joins the thread.
pub struct Capture<T> {
    rx: LatestReceiver<Result<T, DeviceError>>,
    counts: Arc<CaptureCounts>,
    // Dropped after `rx` (fields drop in order): the thread sees its consumer gone, or the
    // worker's stop flag, whichever it meets first.
    _worker: Worker<()>,
}

impl<T: Send + 'static> Capture<T> {
    /// Starts a thread called `name` that calls `read` until stopped, keeping only the newest
    /// result. `read` blocks for at most about 100 ms ([`DeviceError::Timeout`] when nothing
    /// came); after [`DeviceError::Disconnected`] it is called again after a pause, after
    /// [`DeviceError::Fatal`] the thread ends (the error is the last thing it delivers).
    pub fn spawn(
        name: &str,
        mut read: impl FnMut() -> Result<T, DeviceError> + Send + 'static,
    ) -> Result<Self, WorkerError> {
        let (tx, rx) = latest_channel(1);
        let counts = Arc::new(CaptureCounts::default());
        let c = counts.clone();
        let worker = Worker::spawn(name, StopFlag::new(), move |stop| {
            while !stop.is_stopped() {
                let result = read();
                let (fatal, retry) = match &result {
                    Ok(_) => {
                        c.captured.fetch_add(1, Ordering::AcqRel);
                        (false, false)
                    }
                    Err(DeviceError::Timeout) => continue,
                    Err(DeviceError::Disconnected(_)) => (false, true),
                    Err(DeviceError::Fatal(_)) => (true, false),
                };
                match tx.send(result) {
                    SendOutcome::Disconnected => return,
                    SendOutcome::ReplacedOldest(n) => {
                        c.dropped_stale.fetch_add(n as u64, Ordering::AcqRel);
                    }
                    SendOutcome::Queued => {}
                }
                if fatal {
                    return;
                }
                if retry {
                    std::thread::sleep(RETRY_PAUSE);
                }
            }
        })?;
        Ok(Self {
            rx,
            counts,
            _worker: worker,
        })
    }

    /// The newest frame read since the last call, waiting up to `timeout` for one
    /// ([`DeviceError::Timeout`] if none came). A capture thread that has ended after
    /// delivering its fatal error gives [`DeviceError::Fatal`].
    pub fn newest(&self, timeout: Duration) -> Result<T, DeviceError> {
        let first = match self.rx.recv_timeout(timeout) {
            Ok(v) => v,
            Err(RecvTimeoutError::Timeout) => return Err(DeviceError::Timeout),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(DeviceError::Fatal("the capture thread has stopped".into()))
            }
        };
        // One slot, but a frame may have replaced this one meanwhile: take the newest.
        let newest = self.rx.try_iter().last().unwrap_or(first);
        if newest.is_ok() {
            self.counts.taken.fetch_add(1, Ordering::AcqRel);
        }
        newest
    }

    /// The thread's counts so far (shared: they keep counting while the thread runs).
    pub fn counts(&self) -> &Arc<CaptureCounts> {
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossbeam_channel::{unbounded, Receiver};
    use std::time::Instant;

    /// A fake camera: delivers the frame numbers the test releases, counting those taken.
    fn gated_reader(
        gate: Receiver<u64>,
        taken: Arc<AtomicU64>,
    ) -> impl FnMut() -> Result<u64, DeviceError> + Send + 'static {
        move || match gate.recv_timeout(Duration::from_millis(50)) {
            Ok(seq) => {
                taken.fetch_add(1, Ordering::AcqRel);
                Ok(seq)
            }
            Err(RecvTimeoutError::Timeout) => Err(DeviceError::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(DeviceError::Fatal("gate closed".into())),
        }
    }

    /// Waits (as a failure guard only, never a margin) until the fake has given `n` frames.
    fn wait_taken(taken: &AtomicU64, n: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while taken.load(Ordering::Acquire) < n {
            assert!(Instant::now() < deadline, "the capture thread blocked");
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// A consumer that takes nothing while 100 frames arrive does not stop the capture thread
    /// reading them all, and then gets the newest: what it shows is one frame old, not 100.
    #[test]
    fn a_slow_consumer_never_blocks_capture_and_gets_the_newest_frame() {
        let (gate, gate_rx) = unbounded();
        let taken = Arc::new(AtomicU64::new(0));
        let capture = Capture::spawn("test-capture", gated_reader(gate_rx, taken.clone())).unwrap();
        for seq in 0..100 {
            gate.send(seq).unwrap();
        }
        wait_taken(&taken, 100);
        assert_eq!(capture.newest(Duration::from_secs(60)), Ok(99));
        assert_eq!(capture.counts().captured(), 100);
        assert_eq!(capture.counts().dropped_stale(), 99);
        // Nothing newer: the consumer waits rather than being handed the old frame again.
        assert_eq!(
            capture.newest(Duration::from_millis(1)),
            Err(DeviceError::Timeout)
        );
        for seq in 100..=150 {
            gate.send(seq).unwrap();
        }
        wait_taken(&taken, 151);
        assert_eq!(capture.newest(Duration::from_secs(60)), Ok(150));
        assert_eq!(capture.counts().dropped_stale(), 99 + 50);
        assert_eq!(capture.counts().taken(), 2);
    }

    /// A fatal error is delivered (not replaced, it is the last thing sent), then the thread
    /// ends and later calls say so.
    #[test]
    fn a_fatal_error_is_the_last_thing_delivered() {
        let (gate, gate_rx) = unbounded();
        let taken = Arc::new(AtomicU64::new(0));
        let capture = Capture::spawn("test-capture", gated_reader(gate_rx, taken.clone())).unwrap();
        gate.send(1).unwrap();
        wait_taken(&taken, 1);
        drop(gate);
        let deadline = Instant::now() + Duration::from_secs(60);
        let fatal = loop {
            match capture.newest(Duration::from_secs(1)) {
                Ok(1) | Err(DeviceError::Timeout) => {}
                other => break other,
            }
            assert!(Instant::now() < deadline);
        };
        assert_eq!(fatal, Err(DeviceError::Fatal("gate closed".into())));
        assert!(matches!(
            capture.newest(Duration::from_secs(1)),
            Err(DeviceError::Fatal(m)) if m.contains("capture thread has stopped")
        ));
    }
}
