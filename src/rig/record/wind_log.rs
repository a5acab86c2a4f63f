//! A running account of the wind the simulation applied: how long the microphone blew, how
//! loud, and the largest total force it put on the bodies. The simulation writes it on the
//! solver thread; whoever built the simulation keeps a handle and reads it (the demo prints it
//! at the end, as evidence that its breaths reached the bodies).

use std::sync::{Arc, Mutex, PoisonError};

/// A level at least this far above the noise floor counts as blowing (RMS, full scale 1; −40
/// dBFS): a room's own fluctuations about its floor stay far below it, a breath far above.
pub const BLOWING_LEVEL: f64 = 0.01;

/// What the wind did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindTotals {
    /// Steps taken.
    pub steps: u64,
    /// Simulated time with a level of at least [`BLOWING_LEVEL`] above the noise floor, seconds.
    pub blowing_s: f64,
    /// Simulated time of the first such step, seconds.
    pub first_blow_s: Option<f64>,
    /// Highest level above the floor (RMS, full scale 1).
    pub peak_level: f64,
    /// Largest total wind force on the bodies in one step, newtons (still-air damping excluded).
    pub peak_force_n: f64,
}

/// A shared handle on [`WindTotals`]; clones see the same totals.
#[derive(Debug, Clone, Default)]
pub struct WindLog(Arc<Mutex<WindTotals>>);

impl WindLog {
    /// Books one step of `dt_secs` that ended at `time_after_s` with `level` above the floor and
    /// a total wind force of `force_n`.
    pub fn record(&self, dt_secs: f64, time_after_s: f64, level: f64, force_n: f64) {
        // A panic elsewhere cannot leave the totals half-written: every field is set at once.
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        t.steps += 1;
        if level >= BLOWING_LEVEL {
            t.blowing_s += dt_secs;
            t.first_blow_s.get_or_insert(time_after_s - dt_secs);
        }
        t.peak_level = t.peak_level.max(level);
        t.peak_force_n = t.peak_force_n.max(force_n);
    }

    /// The totals so far.
    pub fn totals(&self) -> WindTotals {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One line for people, e.g. "wind: blew for 1.20 s from t = 5.31 s, up to 0.171 above the
    /// floor, largest total force 0.523 N".
    pub fn describe(&self) -> String {
        let t = self.totals();
        match t.first_blow_s {
            None => format!(
                "wind: the microphone never blew (at most {:.4} above its noise floor)",
                t.peak_level
            ),
            Some(first) => format!(
                "wind: blew for {:.2} s from t = {first:.2} s, up to {:.3} above the floor, \
                 largest total force {:.3} N",
                t.blowing_s, t.peak_level, t.peak_force_n
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_count_blowing_steps_and_keep_the_peaks() {
        let log = WindLog::default();
        let reader = log.clone();
        assert!(reader.describe().contains("never blew"));
        for (k, level) in [0.0, 0.1, 0.3, 0.005, 0.2, 0.0].into_iter().enumerate() {
            log.record(0.01, (k + 1) as f64 * 0.01, level, level * 2.0);
        }
        let t = reader.totals();
        assert_eq!(t.steps, 6);
        assert!((t.blowing_s - 0.03).abs() < 1e-12);
        assert_eq!(t.first_blow_s, Some(0.01));
        assert_eq!(t.peak_level, 0.3);
        assert_eq!(t.peak_force_n, 0.6);
        assert!(reader.describe().contains("blew for 0.03 s"));
    }
}
