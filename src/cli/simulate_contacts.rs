//! `simulate --contacts OUT.csv` and `--inequality-method`: the contact points of every step,
//! long format, and the contact lines of the summary.

use std::io;
use std::io::Write;

use ar_io::csv_write::CsvWriter;

use ar_dynamics::drive::csv as run_csv;
use ar_dynamics::Simulation;

/// Header of the contacts CSV (issue 15).
pub const CONTACTS_HEADER: [&str; 12] = [
    "t_s",
    "shape1",
    "shape2",
    "px_m",
    "py_m",
    "pz_m",
    "nx",
    "ny",
    "nz",
    "gap_m",
    "normal_force_n",
    "friction_force_n",
];

/// Writes one row per contact point of the last step.
pub fn contact_rows<W: Write>(sim: &Simulation, out: &mut CsvWriter<W>) -> io::Result<()> {
    let Some(model) = sim.model().contact.as_ref() else {
        return Ok(());
    };
    let t = sim.time_secs();
    for c in sim.contact_report() {
        let (p, n) = (&c.point_in_world, &c.normal);
        out.row()
            .fixed(t, run_csv::TIME_DECIMALS)
            .text(&model.colliders[c.shape1].name)
            .text(&model.colliders[c.shape2].name)
            .values([p.x, p.y, p.z, n.x, n.y, n.z])
            .values([c.gap_m, c.normal_force_n, c.friction_force_n])
            .end()?;
    }
    Ok(())
}

/// Running figures of the contacts for the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactSummary {
    /// Largest penetration at the end of any step (m).
    pub max_penetration_m: f64,
    /// Most contact points carrying force in one step.
    pub max_points: usize,
    /// Contact points carrying force, summed over the steps.
    pub point_steps: usize,
    /// Rounds that solved the contacts with the springs, summed over the steps, and the most
    /// in one step (0 when the contacts are solved after the velocity stage).
    pub round_steps: usize,
    pub max_rounds: usize,
}

impl ContactSummary {
    /// Takes in the last step.
    pub fn update(&mut self, sim: &Simulation) {
        self.max_penetration_m = self.max_penetration_m.max(sim.max_penetration_m());
        let loaded = sim
            .contact_report()
            .iter()
            .filter(|c| c.normal_force_n > 0.0)
            .count();
        self.max_points = self.max_points.max(loaded);
        self.point_steps += loaded;
        let rounds = sim.contact_rounds();
        self.max_rounds = self.max_rounds.max(rounds);
        self.round_steps += rounds;
    }
}
