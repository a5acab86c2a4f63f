//! The pile bench's whole-run table and its per-step CSV (see `pile.rs`).

use ar_io::csv_write::CsvWriter;

use super::pile_front::Setting;
use super::{summarise, Run, KINETIC_BOUND_J, PENETRATION_BOUND_M, SETTLE_SECS};

/// Every run's row of the whole-run table, the ratio to the default ar-multibody run's time.
pub fn print_table(runs: &[(Setting, Run)], settle_secs: f64, h: f64, budget_secs: f64) {
    println!(
        "{:<14} {:>5} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>4} {:>8}",
        "engine",
        "steps",
        "t end s",
        "ms mean",
        "ms median",
        "pen run m",
        "pen stay m",
        "chk run m",
        "chk stay m",
        "KE 5s J",
        "KE stay J",
        "contacts",
        "out",
        "time/ar"
    );
    let ar_mean_ms = runs
        .iter()
        .find(|(s, _)| *s == Setting::Ours(None))
        .map_or(f64::NAN, |(_, r)| summarise(r, settle_secs, h).ms_mean);
    for (_, run) in runs {
        let s = summarise(run, settle_secs, h);
        println!(
            "{:<14} {:>5} {:>7.2} {:>9.3} {:>9.3} {:>9.2e} {:>10.2e} {:>9.2e} {:>10.2e} {:>9.2e} {:>9.2e} {:>8} {:>4} {:>7.3}x",
            run.engine,
            run.steps.len(),
            s.t_end_s,
            s.ms_mean,
            s.ms_median,
            s.pen_run_m,
            s.pen_stay_m,
            s.chk_run_m,
            s.chk_stay_m,
            s.kinetic_settled_j,
            s.kinetic_stay_j,
            s.contacts,
            run.out_of_bin,
            s.ms_mean / ar_mean_ms,
        );
    }
    for (_, run) in runs {
        match (&run.stopped, run.steps.len() < run.planned_steps) {
            (Some(why), _) => println!("{}: stopped: {why}", run.engine),
            (None, true) => println!(
                "{}: stopped after {} of {} steps (wall budget {budget_secs} s)",
                run.engine,
                run.steps.len(),
                run.planned_steps
            ),
            _ => {}
        }
    }
    println!(
        "acceptance 7: after {SETTLE_SECS} s, penetration <= {PENETRATION_BOUND_M:e} m and \
         kinetic energy < {KINETIC_BOUND_J:e} J"
    );
}

/// One row per step and run.
pub fn steps_csv(runs: &[(Setting, Run)]) -> Vec<u8> {
    let mut rows = CsvWriter::new(Vec::new());
    rows.write_fields([
        "t_s",
        "engine",
        "step_ms",
        "max_penetration_m",
        "check_penetration_m",
        "kinetic_j",
        "contacts",
        "sweeps",
    ])
    .expect("in memory");
    for (_, run) in runs {
        for r in &run.steps {
            rows.row()
                .value(r.t_s)
                .text(&run.engine)
                .values([
                    r.step_ms,
                    r.penetration_m,
                    r.check_penetration_m,
                    r.kinetic_j,
                ])
                .values([r.contacts, r.sweeps])
                .end()
                .expect("in memory");
        }
    }
    rows.into_inner().expect("in memory")
}

/// The value after `flag` in the bench's arguments, if any.
pub fn arg_value(args: &[String], flag: &str) -> Option<String> {
    args.iter()
        .position(|a| a == flag)
        .and_then(|k| args.get(k + 1).cloned())
}

/// Writes `bytes` to `path`, or says why not and exits with 1.
pub fn write_or_exit(path: &str, bytes: &[u8]) {
    if let Err(e) = std::fs::write(path, bytes) {
        eprintln!("cannot write {path}: {e}");
        std::process::exit(1);
    }
    println!("written: {path}");
}
