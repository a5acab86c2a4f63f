//! The joint-limit lines of `simulate`'s summary: which limited joints reached an end, when
//! first, for how many steps, and the largest limit torque or force (the default method's
//! `<joint>_limit_n_m` and `<joint>_limit_n` CSV columns, gathered over the run).

use std::io::{self, Write};

use ar_dynamics::drive::csv as run_csv;
use ar_dynamics::Simulation;

/// One coordinate of a limited joint (a slot has two), as the run met it.
#[derive(Clone, Debug)]
struct LimitedCoordinate {
    joint: String,
    /// 0: the angle (torque, N·m); 1: the travel (force, N).
    coordinate: usize,
    /// Steps in which the lower end pushed (positive load) and the upper end (negative).
    steps_at_end: [u64; 2],
    /// The first step's time at an end (s).
    first_t_s: Option<f64>,
    /// Largest |load| (N·m or N).
    max_abs_load: f64,
}

/// Running figures of the joint limits for the summary.
#[derive(Clone, Debug, Default)]
pub struct LimitSummary {
    coordinates: Option<Vec<LimitedCoordinate>>,
}

impl LimitSummary {
    /// Takes in the last step.
    pub fn update(&mut self, sim: &Simulation) {
        let coordinates = self.coordinates.get_or_insert_with(|| {
            sim.joints()
                .iter()
                .flat_map(|j| {
                    let limited = [j.limits.angle_rad.is_some(), j.limits.travel_m.is_some()];
                    (0..2)
                        .filter(move |&c| limited[c])
                        .map(|coordinate| LimitedCoordinate {
                            joint: j.name.clone(),
                            coordinate,
                            steps_at_end: [0; 2],
                            first_t_s: None,
                            max_abs_load: 0.0,
                        })
                })
                .collect()
        });
        let loads = sim.joint_limit_forces();
        let mut next = coordinates.iter_mut().peekable();
        for (i, j) in sim.joints().iter().enumerate() {
            while let Some(c) = next.next_if(|c| c.joint == j.name) {
                let load = loads.get(i).map_or(0.0, |l| l[c.coordinate]);
                if load != 0.0 {
                    c.steps_at_end[usize::from(load < 0.0)] += 1;
                    c.first_t_s.get_or_insert(sim.time_secs());
                    c.max_abs_load = c.max_abs_load.max(load.abs());
                }
            }
        }
    }

    /// The summary's lines: one per limited coordinate, or none when no joint has limits.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let Some(coordinates) = &self.coordinates else {
            return Ok(());
        };
        for c in coordinates {
            let (what, unit) = [("torque", "N·m"), ("force", "N")][c.coordinate];
            let label = format!("limit {}", c.joint);
            match c.first_t_s {
                None => writeln!(out, "{label:<18} never reached")?,
                Some(t) => writeln!(
                    out,
                    "{label:<18} at its lower end in {} steps, its upper end in {}, first at t = {:.*} s; \
                     largest {what} {:.4e} {unit}",
                    c.steps_at_end[0],
                    c.steps_at_end[1],
                    run_csv::TIME_DECIMALS,
                    t,
                    c.max_abs_load
                )?,
            }
        }
        Ok(())
    }
}
