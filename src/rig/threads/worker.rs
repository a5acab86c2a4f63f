//! A worker: a named thread with a stop flag and a join handle. Dropping the handle stops and
//! joins the thread, so no thread outlives the rig. A worker's fatal error is sent once, as a
//! [`WorkerReport`], to the main thread, which shows it to the user.

use crossbeam_channel::Sender;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A shared stop request: set by Ctrl-C, window close, or a fatal error anywhere.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    /// A flag that is not set.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks every worker to stop.
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// True once a stop was asked for.
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a worker tells the main thread besides its data stream.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerReport {
    /// The worker hit an error it cannot recover from and has stopped.
    Fatal {
        /// The worker's thread name.
        worker: String,
        /// What happened.
        message: String,
    },
    /// Something the user should know (a clip, a release, a reconnect, a slowdown).
    Event {
        /// The worker's thread name.
        worker: String,
        /// What happened.
        message: String,
    },
}

/// Handle of a running worker thread.
#[derive(Debug)]
pub struct Worker<T> {
    name: String,
    stop: StopFlag,
    handle: Option<JoinHandle<T>>,
}

/// Why a worker could not be started or joined.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The OS refused a new thread.
    #[error("cannot start worker thread `{name}`: {source}")]
    Spawn {
        /// The thread name.
        name: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The worker panicked.
    #[error("worker thread `{name}` panicked: {message}")]
    Panicked {
        /// The thread name.
        name: String,
        /// The panic payload, when it was a string.
        message: String,
    },
}

impl<T: Send + 'static> Worker<T> {
    /// Starts `body` on a thread called `name`; `body` must return soon after `stop` is set.
    pub fn spawn(
        name: &str,
        stop: StopFlag,
        body: impl FnOnce(StopFlag) -> T + Send + 'static,
    ) -> Result<Self, WorkerError> {
        let flag = stop.clone();
        let (started_tx, started_rx) = std::sync::mpsc::sync_channel(1);
        let handle = std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || {
                let _ = started_tx.send(());
                body(flag)
            })
            .map_err(|source| WorkerError::Spawn {
                name: name.to_owned(),
                source,
            })?;
        // The thread takes its name as it starts: once it runs, whatever looks threads up by
        // name (the sandbox's priorities, a profiler) finds it under that name.
        let _ = started_rx.recv();
        Ok(Self {
            name: name.to_owned(),
            stop,
            handle: Some(handle),
        })
    }

    /// The thread's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True while the thread runs.
    pub fn is_running(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }

    /// Stops the rig (the flag is shared) and waits for this thread's result.
    pub fn join(mut self) -> Result<T, WorkerError> {
        self.stop.stop();
        self.join_inner()
    }

    fn join_inner(&mut self) -> Result<T, WorkerError> {
        let Some(handle) = self.handle.take() else {
            return Err(WorkerError::Panicked {
                name: self.name.clone(),
                message: "already joined".into(),
            });
        };
        handle.join().map_err(|payload| WorkerError::Panicked {
            name: self.name.clone(),
            message: payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic".into()),
        })
    }
}

impl<T> Drop for Worker<T> {
    fn drop(&mut self) {
        self.stop.stop();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Sends a report, ignoring a main thread that is already gone (it no longer needs it).
pub fn report(tx: &Sender<WorkerReport>, r: WorkerReport) {
    let _ = tx.try_send(r);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dropping_a_worker_stops_and_joins_it() {
        let stop = StopFlag::new();
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        let w = Worker::spawn("test-worker", stop.clone(), move |s| {
            while !s.is_stopped() {
                std::thread::sleep(Duration::from_millis(1));
            }
            d.store(true, Ordering::SeqCst);
        })
        .unwrap();
        assert!(w.is_running());
        drop(w);
        assert!(done.load(Ordering::SeqCst));
        assert!(stop.is_stopped());
    }

    #[test]
    fn a_panic_is_reported_by_name() {
        let w = Worker::spawn("doomed", StopFlag::new(), |_| -> () { panic!("boom") }).unwrap();
        let err = w.join().unwrap_err().to_string();
        assert!(err.contains("doomed") && err.contains("boom"), "{err}");
    }
}
