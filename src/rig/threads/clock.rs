//! Real-time pacing of the fixed-step solver.
//!
//! The solver advances in steps of h, the simulation's own (a scene's `[solver] dt_secs`).
//! At wall time t it owes ⌊t/h⌋ steps since the start. When it falls behind by more than
//! `max_steps_per_tick` (the catch-up bound), the excess steps are dropped — simulated time
//! slips behind wall time — and counted, so the slowdown is reported instead of the solver
//! spiralling into ever longer catch-up batches. When another simulation with another h takes
//! over (the sandbox's next scene), the steps owed so far are settled and the new h counts
//! from there.

use std::time::{Duration, Instant};

/// The shortest step the clock paces, seconds: finer steps cannot be kept in real time by a
/// thread that sleeps between batches, and a step that rounds to no time at all would owe
/// infinitely many.
pub const MIN_STEP_SECS: f64 = 1e-6;

/// The longest step the clock paces, seconds: a coarser one would leave the scene still
/// between frames for longer than a second.
pub const MAX_STEP_SECS: f64 = 1.0;

/// A step the real-time clock cannot pace.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the simulation steps by h = {dt_secs} s; the rig paces steps of {MIN_STEP_SECS} s to \
     {MAX_STEP_SECS} s"
)]
pub struct StepError {
    /// The step asked for, seconds.
    pub dt_secs: f64,
}

/// The step `dt_secs` as a duration, if the clock can pace it.
pub fn pacing_step(dt_secs: f64) -> Result<Duration, StepError> {
    if (MIN_STEP_SECS..=MAX_STEP_SECS).contains(&dt_secs) {
        Ok(Duration::from_secs_f64(dt_secs))
    } else {
        Err(StepError { dt_secs })
    }
}

/// How many steps to take now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepPlan {
    /// Steps to take in this batch.
    pub steps: u32,
    /// Steps dropped in this batch because of the catch-up bound.
    pub skipped: u64,
}

/// Paces fixed steps against a monotonic clock.
///
/// Steps are counted from `origin` at the current step; an earlier step's steps (before
/// [`Self::change_step`]) are kept apart, as the time they simulated and the wall time they
/// took.
#[derive(Debug, Clone)]
pub struct RealTimeStepper {
    step: Duration,
    max_steps_per_tick: u32,
    origin: Instant,
    steps_taken: u64,
    steps_skipped: u64,
    /// Steps taken or dropped before `origin` (at earlier steps).
    counted_before: u64,
    /// Steps taken before `origin`.
    taken_before: u64,
    /// Time simulated before `origin`, seconds.
    simulated_before_s: f64,
    /// Wall time before `origin` (pauses left out).
    wall_before: Duration,
}

impl RealTimeStepper {
    /// Starts at `origin` with step `dt_secs` and at most `max_steps_per_tick` steps per batch;
    /// an error for a step the clock cannot pace ([`pacing_step`]).
    pub fn new(origin: Instant, dt_secs: f64, max_steps_per_tick: u32) -> Result<Self, StepError> {
        Ok(Self {
            step: pacing_step(dt_secs)?,
            max_steps_per_tick: max_steps_per_tick.max(1),
            origin,
            steps_taken: 0,
            steps_skipped: 0,
            counted_before: 0,
            taken_before: 0,
            simulated_before_s: 0.0,
            wall_before: Duration::ZERO,
        })
    }

    /// Steps by `dt_secs` from now on: the steps counted so far keep the time they covered,
    /// and the new step counts from the end of the last of them. An error (and no change) for
    /// a step the clock cannot pace.
    pub fn change_step(&mut self, dt_secs: f64) -> Result<(), StepError> {
        let step = pacing_step(dt_secs)?;
        let counted = self.counted_since_origin();
        let covered = self.step_times(counted);
        self.simulated_before_s +=
            (self.steps_taken - self.taken_before) as f64 * self.step.as_secs_f64();
        self.wall_before += covered;
        self.origin += covered;
        self.counted_before = self.steps_taken + self.steps_skipped;
        self.taken_before = self.steps_taken;
        self.step = step;
        Ok(())
    }

    /// Steps taken or dropped at the current step.
    fn counted_since_origin(&self) -> u64 {
        self.steps_taken + self.steps_skipped - self.counted_before
    }

    /// The wall time of `n` steps of the current step.
    fn step_times(&self, n: u64) -> Duration {
        Duration::from_nanos(
            u64::try_from(self.step.as_nanos())
                .unwrap_or(u64::MAX)
                .saturating_mul(n),
        )
    }

    /// The steps owed at `now`, bounded; the returned steps count as taken.
    pub fn plan(&mut self, now: Instant) -> StepPlan {
        let elapsed = now.saturating_duration_since(self.origin);
        let owed_total = (elapsed.as_nanos() / self.step.as_nanos()) as u64;
        let pending = owed_total.saturating_sub(self.counted_since_origin());
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
        let since_origin = self.step_times(self.counted_since_origin());
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
        self.origin + self.step_times(self.counted_since_origin() + 1)
    }

    /// Steps taken so far.
    pub fn steps_taken(&self) -> u64 {
        self.steps_taken
    }

    /// Steps dropped so far.
    pub fn steps_skipped(&self) -> u64 {
        self.steps_skipped
    }

    /// Simulated time over wall time at `now`, the wall time counted in whole steps (the steps
    /// due by `now`): exactly 1.0 when every step due has been taken, below it by the steps
    /// dropped or still owed. (Counting the wall time to `now` itself would put a run that
    /// kept pace below 1 by the part of a step since the last one fell due.)
    pub fn real_time_factor(&self, now: Instant) -> f64 {
        let since_origin = now.saturating_duration_since(self.origin);
        let due = (since_origin.as_nanos() / self.step.as_nanos()) as u64;
        let wall = (self.wall_before + self.step_times(due)).as_secs_f64();
        if wall <= 0.0 {
            return 1.0;
        }
        let simulated_s = self.simulated_before_s
            + (self.steps_taken - self.taken_before) as f64 * self.step.as_secs_f64();
        simulated_s / wall
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_pace_with_several_steps_per_frame() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
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
    fn the_factor_counts_whole_steps_due() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
        // Every step due taken, measured 7 ms into the next one: exactly real time.
        assert_eq!(s.plan(t0 + Duration::from_millis(1000)).steps, 10);
        for k in 1..=9u64 {
            s.plan(t0 + Duration::from_millis(1000 + 100 * k));
        }
        assert_eq!((s.steps_taken(), s.steps_skipped()), (100, 90));
        let rtf = s.real_time_factor(t0 + Duration::from_millis(1907));
        assert_eq!(rtf, 100.0 / 190.0);
        // Three steps due and not yet taken count against it.
        let rtf = s.real_time_factor(t0 + Duration::from_millis(1930));
        assert_eq!(rtf, 100.0 / 193.0);
        let mut kept = RealTimeStepper::new(t0, 0.01, 10).unwrap();
        for k in 1..=50u64 {
            kept.plan(t0 + Duration::from_millis(20 * k));
        }
        assert_eq!(kept.real_time_factor(t0 + Duration::from_millis(1009)), 1.0);
    }

    #[test]
    fn a_held_clock_owes_nothing_for_the_pause() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
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
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
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
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
        s.plan(t0 + Duration::from_millis(25));
        assert_eq!(s.next_due(), t0 + Duration::from_millis(30));
    }

    #[test]
    fn a_new_step_counts_from_the_last_step_of_the_old_one() {
        let t0 = Instant::now();
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
        assert_eq!(s.plan(t0 + Duration::from_millis(45)).steps, 4);
        // A scene with h = 5 ms takes over: the 5 ms since the fourth step are owed at the
        // new step, and it keeps pace from there.
        s.change_step(0.005).unwrap();
        assert_eq!(s.next_due(), t0 + Duration::from_millis(45));
        assert_eq!(s.plan(t0 + Duration::from_millis(45)).steps, 1);
        assert_eq!(s.plan(t0 + Duration::from_millis(85)).steps, 8);
        assert_eq!((s.steps_taken(), s.steps_skipped()), (13, 0));
        // 40 ms at 10 ms and 45 ms at 5 ms, in 85 ms.
        let rtf = s.real_time_factor(t0 + Duration::from_millis(85));
        assert!((rtf - 1.0).abs() < 1e-9, "{rtf}");
        // A pause at the new step owes nothing either.
        s.hold(t0 + Duration::from_millis(1085));
        assert_eq!(s.plan(t0 + Duration::from_millis(1095)).steps, 2);
    }

    #[test]
    fn a_step_the_clock_cannot_pace_is_refused() {
        let t0 = Instant::now();
        for dt in [0.0, -0.01, 1e-9, 2.0, f64::NAN, f64::INFINITY] {
            let err = RealTimeStepper::new(t0, dt, 10).unwrap_err();
            assert!(err.to_string().contains("the rig paces steps of"), "{err}");
        }
        let mut s = RealTimeStepper::new(t0, 0.01, 10).unwrap();
        assert!(s.change_step(0.0).is_err());
        assert_eq!(s.plan(t0 + Duration::from_millis(40)).steps, 4);
    }
}
