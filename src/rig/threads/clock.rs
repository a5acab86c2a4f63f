//! Real-time pacing of the fixed-step solver.
//!
//! The solver advances in steps of h (0.01 s). At wall time t it owes ⌊t/h⌋ steps since the
//! start. When it falls behind by more than `max_steps_per_tick` (the catch-up bound), the
//! excess steps are dropped — simulated time slips behind wall time — and counted, so the
//! slowdown is reported instead of the solver spiralling into ever longer catch-up batches.

use std::time::{Duration, Instant};

/// How many steps to take now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepPlan {
    /// Steps to take in this batch.
    pub steps: u32,
    /// Steps dropped in this batch because of the catch-up bound.
    pub skipped: u64,
}

/// Paces fixed steps against a monotonic clock.
#[derive(Debug, Clone)]
pub struct RealTimeStepper {
    step: Duration,
    max_steps_per_tick: u32,
    origin: Instant,
    steps_taken: u64,
    steps_skipped: u64,
}

impl RealTimeStepper {
    /// Starts at `origin` with step `dt_secs` and at most `max_steps_per_tick` steps per batch.
    pub fn new(origin: Instant, dt_secs: f64, max_steps_per_tick: u32) -> Self {
        Self {
            step: Duration::from_secs_f64(dt_secs),
            max_steps_per_tick: max_steps_per_tick.max(1),
            origin,
            steps_taken: 0,
            steps_skipped: 0,
        }
    }

    /// The steps owed at `now`, bounded; the returned steps count as taken.
    pub fn plan(&mut self, now: Instant) -> StepPlan {
        let elapsed = now.saturating_duration_since(self.origin);
        let owed_total = (elapsed.as_nanos() / self.step.as_nanos()) as u64;
        let pending = owed_total.saturating_sub(self.steps_taken + self.steps_skipped);
        let steps = pending.min(self.max_steps_per_tick as u64);
        let skipped = pending - steps;
        self.steps_taken += steps;
        self.steps_skipped += skipped;
        StepPlan {
            steps: steps as u32,
            skipped,
        }
    }

    /// Holds the clock at `now`: the time since the last step is owed no steps (a paused
    /// session does not catch up on its pause, nor count the pause as dropped steps).
    pub fn hold(&mut self, now: Instant) {
        let counted = self.steps_taken + self.steps_skipped;
        let since_origin = Duration::from_nanos(
            u64::try_from(self.step.as_nanos())
                .unwrap_or(u64::MAX)
                .saturating_mul(counted),
        );
        if let Some(origin) = now.checked_sub(since_origin) {
            self.origin = origin;
        }
    }

    /// Counts a step taken outside the plan (a single step while held).
    pub fn count_step(&mut self) {
        self.steps_taken += 1;
    }

    /// When the next step falls due.
    pub fn next_due(&self) -> Instant {
        let n = (self.steps_taken + self.steps_skipped + 1) as u32;
        self.origin + self.step * n
    }

    /// Steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.steps_taken
    }

    /// Steps dropped so far.
    pub fn steps_skipped(&self) -> u64 {
        self.steps_skipped
    }

    /// Simulated time over wall time at `now` (1.0 when keeping up).
    pub fn real_time_factor(&self, now: Instant) -> f64 {
        let wall = now.saturating_duration_since(self.origin).as_secs_f64();
        if wall <= 0.0 {
            return 1.0;
        }
        self.steps_taken as f64 * self.step.as_secs_f64() / wall
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_pace_with_several_steps_per_frame() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10);
        // A 25 fps display asks every 40 ms: four steps each time, as in the paper.
        for k in 1..=25u32 {
            let plan = s.plan(t0 + Duration::from_millis(40 * k as u64));
            assert_eq!(
                plan,
                StepPlan {
                    steps: 4,
                    skipped: 0
                }
            );
        }
        assert_eq!(s.steps_taken(), 100);
        let rtf = s.real_time_factor(t0 + Duration::from_secs(1));
        assert!((rtf - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_held_clock_owes_nothing_for_the_pause() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10);
        assert_eq!(s.plan(t0 + Duration::from_millis(40)).steps, 4);
        // Paused for 2 s, with one single step on the way.
        s.hold(t0 + Duration::from_millis(1000));
        s.count_step();
        s.hold(t0 + Duration::from_millis(2040));
        let plan = s.plan(t0 + Duration::from_millis(2080));
        assert_eq!(
            plan,
            StepPlan {
                steps: 4,
                skipped: 0
            }
        );
        assert_eq!((s.steps_taken(), s.steps_skipped()), (9, 0));
    }

    #[test]
    fn a_stall_is_bounded_and_reported_not_replayed() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10);
        let plan = s.plan(t0 + Duration::from_millis(505));
        assert_eq!(
            plan,
            StepPlan {
                steps: 10,
                skipped: 40
            }
        );
        // Afterwards it continues at normal pace from the new point, with no backlog.
        let plan = s.plan(t0 + Duration::from_millis(545));
        assert_eq!(
            plan,
            StepPlan {
                steps: 4,
                skipped: 0
            }
        );
        assert_eq!(s.steps_skipped(), 40);
        assert!(s.real_time_factor(t0 + Duration::from_millis(545)) < 0.3);
    }

    #[test]
    fn next_due_is_one_step_after_the_last_planned() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10);
        s.plan(t0 + Duration::from_millis(25));
        assert_eq!(s.next_due(), t0 + Duration::from_millis(30));
    }
}
