//! The solver thread's trace: one row per recorded step (the stylus, the grab point, the
//! solver's health), and the rule that keeps a session of any length in bounded memory by
//! thinning it evenly (see [`super::solver_worker::SolverConfig::trace_max_rows`]).

use crate::interaction::SpringAttachment;
use nalgebra::Point3;

/// One recorded instant of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceRow {
    /// Simulated time, seconds.
    pub sim_time_s: f64,
    /// Clipped at the end of this step.
    pub clipped: bool,
    /// Stylus tip, world frame.
    pub tip_in_world: Option<Point3<f64>>,
    /// The grabbed point while clipped, else the first grab point, world frame.
    pub grab_point_in_world: Option<Point3<f64>>,
    /// ‖ψ‖, metres.
    pub psi_norm_m: f64,
    /// Relative energy balance error.
    pub energy_error_rel: f64,
    /// Work the user has done since the start (through the spring, and the pushing tip),
    /// joules.
    pub user_work_j: f64,
    /// The stylus spring the step ran with (what a replay of the run feeds the simulation).
    pub spring: Option<SpringAttachment>,
}

/// Whether step `k` (counted from 0) gets a trace row, one every `every` steps; a full trace
/// (`max_rows`) is thinned first to every other row, which are those of every `2·every` steps,
/// and `every` doubles.
pub(super) fn trace_wants(
    trace: &mut Vec<TraceRow>,
    every: &mut u64,
    max_rows: usize,
    k: u64,
) -> bool {
    *every = (*every).max(1);
    if !k.is_multiple_of(*every) {
        return false;
    }
    if trace.len() >= max_rows.max(2) {
        let mut index = 0;
        trace.retain(|_| {
            index += 1;
            index % 2 == 1
        });
        *every *= 2;
    }
    k.is_multiple_of(*every)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rig::threads::solver_worker::DEFAULT_TRACE_MAX_ROWS;

    fn row(k: u64) -> TraceRow {
        TraceRow {
            sim_time_s: k as f64 * 0.01,
            clipped: false,
            tip_in_world: None,
            grab_point_in_world: None,
            psi_norm_m: 0.0,
            energy_error_rel: 0.0,
            user_work_j: 0.0,
            spring: None,
        }
    }

    /// An hour of 10 ms steps keeps at most the limit of rows, evenly spaced over the whole
    /// hour from its first step.
    #[test]
    fn a_long_session_keeps_a_bounded_trace_of_its_whole_span() {
        let (mut trace, mut every, max_rows) = (Vec::new(), 1u64, 1000);
        let steps = 360_000u64;
        for k in 0..steps {
            if trace_wants(&mut trace, &mut every, max_rows, k) {
                trace.push(row(k));
            }
        }
        assert!(trace.len() <= max_rows, "{} rows", trace.len());
        assert!(trace.len() > max_rows / 2, "{} rows", trace.len());
        assert_eq!(every, 512);
        let spacing = every as f64 * 0.01;
        assert_eq!(trace[0].sim_time_s, 0.0);
        for w in trace.windows(2) {
            assert!((w[1].sim_time_s - w[0].sim_time_s - spacing).abs() < 1e-9);
        }
        let last = trace.last().unwrap().sim_time_s;
        assert!(
            last > (steps - every) as f64 * 0.01 - 1e-9,
            "ends at {last} s"
        );
    }

    /// Below the limit nothing is thinned: short runs (the demo, the tests) keep every step.
    #[test]
    fn a_short_run_keeps_every_step() {
        let (mut trace, mut every) = (Vec::new(), 1u64);
        for k in 0..1000 {
            if trace_wants(&mut trace, &mut every, DEFAULT_TRACE_MAX_ROWS, k) {
                trace.push(row(k));
            }
        }
        assert_eq!((trace.len(), every), (1000, 1));
    }
}
