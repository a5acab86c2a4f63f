//! The pile's work-precision front (issue 42, acceptance 2): ar-multibody at several
//! `[contact] tolerance_m` settings and rapier3d-f64 at 1, 2, 4 and 8 solver iterations, each a
//! run of the same pile, summarised as one point per run:
//!
//! - the fall (steps ending at t ≤ [`FALL_SECS`], where nothing sleeps): mean wall time per
//!   step, deepest penetration (the bench's own check, alike for both engines), and for
//!   ar-multibody the mean sweeps of its contact solve;
//! - the settled part (steps ending after the settling time): mean wall time per step,
//!   deepest penetration (checked), the largest kinetic energy.
//!
//! For each rapier point the table says which of ours is at least as fast (in the fall, and
//! settled) and at least as precise (settled penetration), if any. The points go to a CSV
//! (`--front-csv`) and a plot of the fall's time per step (linear) against the settled
//! penetration (logarithmic; `--front-png`, plotters' bitmap backend; its fonts need a
//! system font such as DejaVu), each point the median of the rounds (`--repeat`) with a bar
//! from their least to their largest time.

use std::path::Path;

use super::{median_of_sorted, summarise_span, Run};

/// The fall: the first this many seconds (nothing sleeps, everything moves).
pub const FALL_SECS: f64 = 2.5;

/// One engine's setting of the front.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    /// ar-multibody with `[contact] tolerance_m` (m), or unset (the finest, the default).
    Ours(Option<f64>),
    /// rapier3d-f64 with this many solver iterations (its default is 4).
    Rapier(usize),
}

impl Setting {
    /// A short label: `ar tol=1e-6`, `ar default`, `rapier it=4`.
    pub fn label(&self) -> String {
        match self {
            Setting::Ours(None) => "ar default".into(),
            Setting::Ours(Some(t)) => format!("ar tol={t:.0e}"),
            Setting::Rapier(n) => format!("rapier it={n}"),
        }
    }
}

/// The settings a full run measures: rapier first (see `pile.rs`: an ar-multibody thread
/// given up on keeps a core busy), then ours from the coarsest setting to the finest.
pub const SETTINGS: [Setting; 9] = [
    Setting::Rapier(1),
    Setting::Rapier(2),
    Setting::Rapier(4),
    Setting::Rapier(8),
    Setting::Ours(Some(1.0e-3)),
    Setting::Ours(Some(1.0e-4)),
    Setting::Ours(Some(1.0e-5)),
    Setting::Ours(Some(1.0e-6)),
    Setting::Ours(None),
];

/// One point of the front: over several rounds, the median times with their least and
/// largest, and the largest penetrations and energy (the same in every round: both engines
/// are deterministic).
#[derive(Clone, Debug)]
pub struct Point {
    pub setting: Setting,
    pub fall_ms: f64,
    pub fall_ms_range: (f64, f64),
    pub fall_penetration_m: f64,
    pub fall_sweeps: f64,
    pub settled_ms: f64,
    pub settled_ms_range: (f64, f64),
    pub settled_penetration_m: f64,
    pub settled_kinetic_j: f64,
    /// The run stopped before its planned steps (budget or error).
    pub cut_short: bool,
}

/// The run's point (`settle_secs`: where the settled part starts).
pub fn point(setting: Setting, run: &Run, settle_secs: f64, h: f64) -> Point {
    let fall = summarise_span(run, 0.0, FALL_SECS, h);
    let settled = summarise_span(run, settle_secs, f64::INFINITY, h);
    Point {
        setting,
        fall_ms: fall.ms_mean,
        fall_ms_range: (fall.ms_mean, fall.ms_mean),
        fall_penetration_m: fall.chk_max_m,
        fall_sweeps: fall.sweeps_mean,
        settled_ms: settled.ms_mean,
        settled_ms_range: (settled.ms_mean, settled.ms_mean),
        settled_penetration_m: settled.chk_max_m,
        settled_kinetic_j: settled.kinetic_max_j,
        cut_short: run.stopped.is_some() || run.steps.len() < run.planned_steps,
    }
}

/// The points of several rounds of the same settings (`rounds[r][k]`: round r, setting k)
/// as one point per setting: median and range of the times, the largest of the rest.
pub fn median_of_rounds(rounds: &[Vec<Point>]) -> Vec<Point> {
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|k| {
            let of_k: Vec<&Point> = rounds.iter().map(|round| &round[k]).collect();
            let times = |ms: fn(&Point) -> f64| {
                let mut t: Vec<f64> = of_k.iter().map(|p| ms(p)).collect();
                t.sort_by(f64::total_cmp);
                (median_of_sorted(&t), (t[0], t[t.len() - 1]))
            };
            let largest = |x: fn(&Point) -> f64| of_k.iter().map(|p| x(p)).fold(f64::NAN, f64::max);
            let (fall_ms, fall_ms_range) = times(|p| p.fall_ms);
            let (settled_ms, settled_ms_range) = times(|p| p.settled_ms);
            Point {
                setting: first[k].setting,
                fall_ms,
                fall_ms_range,
                fall_penetration_m: largest(|p| p.fall_penetration_m),
                fall_sweeps: largest(|p| p.fall_sweeps),
                settled_ms,
                settled_ms_range,
                settled_penetration_m: largest(|p| p.settled_penetration_m),
                settled_kinetic_j: largest(|p| p.settled_kinetic_j),
                cut_short: of_k.iter().any(|p| p.cut_short),
            }
        })
        .collect()
}

/// Whether `a` (ours) is at least as fast as `b` in the fall and settled, and at least as
/// precise settled.
fn dominates(a: &Point, b: &Point) -> bool {
    a.fall_ms <= b.fall_ms
        && a.settled_ms <= b.settled_ms
        && a.settled_penetration_m <= b.settled_penetration_m
}

/// Prints the front's table (`rounds`: how many rounds each point's median time is of) and,
/// for each rapier point, those of ours that dominate it.
pub fn print(points: &[Point], rounds: usize) {
    println!();
    println!(
        "work-precision front (fall: t <= {FALL_SECS} s; settled: the stay; penetration by the \
         bench's check; times: median of {rounds} round(s) [least-largest])"
    );
    println!(
        "{:<14} {:>9} {:>13} {:>11} {:>8} {:>11} {:>13} {:>12} {:>11}",
        "setting",
        "fall ms",
        "range",
        "fall pen m",
        "sweeps",
        "settled ms",
        "range",
        "settled pen m",
        "KE rest J"
    );
    let range = |(lo, hi): (f64, f64)| format!("[{lo:.2}-{hi:.2}]");
    for p in points {
        println!(
            "{:<14} {:>9.3} {:>13} {:>11.2e} {:>8.1} {:>11.3} {:>13} {:>13.2e} {:>11.2e}{}",
            p.setting.label(),
            p.fall_ms,
            range(p.fall_ms_range),
            p.fall_penetration_m,
            p.fall_sweeps,
            p.settled_ms,
            range(p.settled_ms_range),
            p.settled_penetration_m,
            p.settled_kinetic_j,
            if p.cut_short { "  (cut short)" } else { "" }
        );
    }
    for r in points
        .iter()
        .filter(|p| matches!(p.setting, Setting::Rapier(_)))
    {
        let ours = points
            .iter()
            .filter(|p| matches!(p.setting, Setting::Ours(_)) && !p.cut_short)
            .filter(|p| dominates(p, r))
            .map(|p| p.setting.label())
            .collect::<Vec<_>>();
        if ours.is_empty() {
            println!(
                "{}: none of ours is at least as fast and as precise",
                r.setting.label()
            );
        } else {
            println!(
                "{}: at least as fast and as precise: {}",
                r.setting.label(),
                ours.join(", ")
            );
        }
    }
}

/// The points as CSV text.
pub fn csv(points: &[Point]) -> Vec<u8> {
    use ar_io::csv_write::CsvWriter;
    let mut rows = CsvWriter::new(Vec::new());
    rows.write_fields([
        "engine",
        "setting",
        "fall_ms_per_step",
        "fall_ms_least",
        "fall_ms_largest",
        "fall_max_penetration_m",
        "fall_mean_sweeps",
        "settled_ms_per_step",
        "settled_ms_least",
        "settled_ms_largest",
        "settled_max_penetration_m",
        "settled_max_kinetic_j",
        "cut_short",
    ])
    .expect("in memory");
    for p in points {
        let (engine, setting) = match p.setting {
            Setting::Ours(t) => (
                "ar-multibody",
                t.map_or("default".into(), |t| format!("tolerance_m={t:e}")),
            ),
            Setting::Rapier(n) => ("rapier3d-f64", format!("iterations={n}")),
        };
        rows.row()
            .text(engine)
            .text(&setting)
            .values([
                p.fall_ms,
                p.fall_ms_range.0,
                p.fall_ms_range.1,
                p.fall_penetration_m,
                p.fall_sweeps,
                p.settled_ms,
                p.settled_ms_range.0,
                p.settled_ms_range.1,
                p.settled_penetration_m,
                p.settled_kinetic_j,
            ])
            .value(p.cut_short as u8)
            .end()
            .expect("in memory");
    }
    rows.into_inner().expect("in memory")
}

/// The plot's size, pixels (small: it goes in the repository).
const PLOT_SIZE_PX: (u32, u32) = (640, 440);

/// Draws the front (fall time per step against settled penetration, log-log) into `path`.
pub fn plot(
    path: &Path,
    points: &[Point],
    rounds: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let finite = |p: &&Point| p.fall_ms > 0.0 && p.settled_penetration_m > 0.0;
    let shown: Vec<&Point> = points.iter().filter(finite).collect();
    let (mut x_lo, mut x_hi, mut y_hi) = (f64::MAX, f64::MIN, f64::MIN);
    for p in &shown {
        x_lo = x_lo.min(p.settled_penetration_m);
        x_hi = x_hi.max(p.settled_penetration_m);
        y_hi = y_hi.max(p.fall_ms_range.1);
    }
    if shown.is_empty() {
        (x_lo, x_hi, y_hi) = (1e-9, 1e-2, 100.0);
    }
    let root = BitMapBackend::new(path, PLOT_SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("pile (288 bodies): fall t <= 2.5 s, median of {rounds} round(s)"),
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (x_lo / 3.0..x_hi * 3.0).log_scale(),
            // Linear from zero: the times span less than a decade, where a logarithmic axis
            // has no labelled ticks.
            0.0..y_hi * 1.15,
        )?;
    chart
        .configure_mesh()
        .x_desc("settled max penetration (m)")
        .y_desc("ms per step in the fall")
        .x_label_formatter(&|v| format!("{v:.0e}"))
        .y_label_formatter(&|v| format!("{v:.1}"))
        .draw()?;
    for (name, colour, ours) in [("ar-multibody", BLUE, true), ("rapier3d-f64", RED, false)] {
        let series: Vec<(f64, f64, String)> = shown
            .iter()
            .filter(|p| matches!(p.setting, Setting::Ours(_)) == ours)
            .map(|p| (p.settled_penetration_m, p.fall_ms, p.setting.label()))
            .collect();
        chart
            .draw_series(LineSeries::new(
                series.iter().map(|(x, y, _)| (*x, *y)),
                colour.stroke_width(2),
            ))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], colour));
        // The least and largest time of the rounds, as a bar through the median.
        chart.draw_series(
            shown
                .iter()
                .filter(|p| matches!(p.setting, Setting::Ours(_)) == ours)
                .map(|p| {
                    let (lo, hi) = p.fall_ms_range;
                    PathElement::new(
                        [(p.settled_penetration_m, lo), (p.settled_penetration_m, hi)],
                        colour.stroke_width(1),
                    )
                }),
        )?;
        // Labels below and above their points in turn: neighbouring rapier points sit close.
        chart.draw_series(series.iter().enumerate().map(|(k, (x, y, label))| {
            let above = if k % 2 == 0 { 4 } else { -14 };
            EmptyElement::at((*x, *y))
                + Circle::new((0, 0), 4, colour.filled())
                + Text::new(label.clone(), (6, above), ("sans-serif", 12))
        }))?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    root.present()?;
    Ok(())
}
