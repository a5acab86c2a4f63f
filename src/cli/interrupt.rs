//! Ctrl-C (SIGINT) and SIGTERM for every command that runs until stopped or for long.
//!
//! The first signal asks the command to stop: a callback (it sets the command's stop flag) runs
//! on a watcher thread, and the command ends at its next check with what it has kept (rows
//! flushed, recordings closed, the summary printed), exiting with the conventional status
//! 128 + signal: 130 for Ctrl-C, 143 for SIGTERM ([`Interrupts::exit_if_received`], or
//! [`Interrupts::report_in_exit_status`] for a command that must return to `main` first, so
//! that its windows and devices are dropped before the process ends).
//!
//! A command whose checks can be far apart (one step of a large scene can take seconds)
//! registers a last resort with [`Interrupts::end_after`]: if it has not ended `grace` after the
//! first signal, or at a second signal of any kind, the watcher runs the last resort (which
//! flushes the rows written so far: whole rows, as the writers hold a lock per row batch) and
//! ends the process itself. Without a last resort a second signal ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// A signal that asked the command to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopSignal(i32);

impl StopSignal {
    /// The exit status of a command it stopped: 128 + the signal's number.
    pub fn exit_code(self) -> i32 {
        128 + self.0
    }

    /// "Ctrl-C" or "SIGTERM", for messages.
    pub fn name(self) -> &'static str {
        if self.0 == SIGINT {
            "Ctrl-C"
        } else {
            "SIGTERM"
        }
    }
}

/// What the watcher does when the command has not ended in time, given the signal and why
/// ("Ctrl-C again"): keep what can be kept, say so, and end the process (if it returns, the
/// watcher ends the process itself).
type LastResort = Box<dyn FnOnce(StopSignal, &str) + Send>;

struct Shared {
    /// The first signal's number, 0 before any.
    first: AtomicI32,
    /// Whether `main` ends with 128 + the signal's number ([`exit_status`]).
    report: AtomicBool,
    last_resort: Mutex<Option<(Duration, LastResort)>>,
}

impl Shared {
    /// Runs the last resort (if the command registered one), says what was kept and exits.
    fn end_now(&self, signal: StopSignal, why: &str) -> ! {
        let last_resort = self.last_resort().take();
        if let Some((_, last_resort)) = last_resort {
            last_resort(signal, why);
        }
        eprintln!("{why}: ended at once");
        std::process::exit(signal.exit_code());
    }

    fn grace(&self) -> Option<Duration> {
        self.last_resort().as_ref().map(|(grace, _)| *grace)
    }

    /// The last resort, locked (a panic while it was held leaves nothing half-made in it).
    fn last_resort(&self) -> MutexGuard<'_, Option<(Duration, LastResort)>> {
        lock_even_if_poisoned(&self.last_resort)
    }
}

/// The process's Ctrl-C and SIGTERM handling (install once per process).
pub struct Interrupts {
    shared: Arc<Shared>,
}

impl Interrupts {
    /// Starts the watcher thread; `on_first` runs on it at the first signal.
    pub fn install(on_first: impl FnOnce() + Send + 'static) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            first: AtomicI32::new(0),
            report: AtomicBool::new(false),
            last_resort: Mutex::new(None),
        });
        anyhow::ensure!(
            INSTALLED.set(shared.clone()).is_ok(),
            "the Ctrl-C / SIGTERM handler is installed twice"
        );
        let mut signals =
            Signals::new([SIGINT, SIGTERM]).context("installing the Ctrl-C / SIGTERM handler")?;
        let watcher = shared.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut on_first = Some(on_first);
                for number in signals.forever() {
                    let signal = StopSignal(number);
                    if watcher.first.load(Ordering::SeqCst) != 0 {
                        watcher.end_now(signal, &format!("{} again", signal.name()));
                    }
                    watcher.first.store(number, Ordering::SeqCst);
                    if let Some(f) = on_first.take() {
                        f();
                    }
                    start_grace_timer(watcher.clone(), signal);
                }
            })
            .context("starting the signal watcher")?;
        Ok(Self { shared })
    }

    /// [`Self::install`] with a first signal that sets `flag`.
    pub fn setting(flag: &Arc<AtomicBool>) -> anyhow::Result<Self> {
        let flag = flag.clone();
        Self::install(move || flag.store(true, Ordering::SeqCst))
    }

    /// The signal that asked the command to stop, if one has.
    pub fn received(&self) -> Option<StopSignal> {
        match self.shared.first.load(Ordering::SeqCst) {
            0 => None,
            n => Some(StopSignal(n)),
        }
    }

    /// Registers what the watcher runs before ending the process when the command has not
    /// ended `grace` after the first signal, or at a second signal.
    pub fn end_after(
        &self,
        grace: Duration,
        last_resort: impl FnOnce(StopSignal, &str) + Send + 'static,
    ) {
        *self.shared.last_resort() = Some((grace, Box::new(last_resort)));
    }

    /// Makes `main` end with 128 + the signal's number if a signal stopped the command, once
    /// the command has returned ([`exit_status`]).
    pub fn report_in_exit_status(&self) {
        self.shared.report.store(true, Ordering::SeqCst);
    }

    /// Ends the process with 128 + the signal's number if a signal stopped the command (call
    /// after everything it keeps is written).
    pub fn exit_if_received(&self) {
        if let Some(signal) = self.received() {
            std::process::exit(signal.exit_code());
        }
    }
}

/// Locks `mutex` even when a thread panicked holding it: the handling must still end the
/// process, and what the mutexes here hold (a closure, whole CSV rows) is never left half-made.
pub fn lock_even_if_poisoned<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The handling installed in this process, if any.
static INSTALLED: OnceLock<Arc<Shared>> = OnceLock::new();

/// The status `main` ends with after a command that returned successfully: 128 + the signal's
/// number if a signal stopped a command that asked for it
/// ([`Interrupts::report_in_exit_status`]).
pub fn exit_status() -> Option<u8> {
    let shared = INSTALLED.get()?;
    let number = shared.first.load(Ordering::SeqCst);
    (number != 0 && shared.report.load(Ordering::SeqCst)).then(|| (128 + number) as u8)
}

/// After the first signal: a command with a last resort that has not ended within its grace
/// period is ended by the watcher.
fn start_grace_timer(shared: Arc<Shared>, signal: StopSignal) {
    let Some(grace) = shared.grace() else {
        return;
    };
    // A step can take seconds: say that the signal was heard, and what a second one does.
    eprintln!(
        "{}: stopping at the end of the step in progress, within {:.1} s ({} again ends the run at once)",
        signal.name(),
        grace.as_secs_f64(),
        signal.name()
    );
    let spawned = std::thread::Builder::new()
        .name("signal-grace".into())
        .spawn(move || {
            std::thread::sleep(grace);
            let why = format!(
                "the step in progress did not end within {:.1} s",
                grace.as_secs_f64()
            );
            shared.end_now(signal, &why);
        });
    if spawned.is_err() {
        // No thread for the timer: the command still stops at its next check.
        log::warn!("could not start the stop timer after {}", signal.name());
    }
}
