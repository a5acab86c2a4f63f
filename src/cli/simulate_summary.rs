//! The summary `simulate` prints at the end of a run: what was simulated, how fast, how
//! closely the joints held and the energy balance closed, and what only one method reports
//! (the default method's solves, factorisations and contacts; the articulated method's tree
//! and integrator).

use std::io::{self, Write};

use ar_dynamics::drive::csv as run_csv;
use ar_dynamics::drive::scripted;
use ar_dynamics::{MethodSim, RunSummary, SceneSimulation};

use super::simulate::{SimulateArgs, WindRun};
use super::simulate_contacts::ContactSummary;

/// Dissipation given back over a run below which the summary does not warn: this fraction of
/// E_ref, or [`DISSIPATION_REVERSED_FLOOR_J`] if larger (the contact ledger's rounding gives
/// back ~1e-12 J over a few hundred steps).
const DISSIPATION_REVERSED_NOTE_REL: f64 = 1.0e-6;
/// See [`DISSIPATION_REVERSED_NOTE_REL`] (J).
const DISSIPATION_REVERSED_FLOOR_J: f64 = 1.0e-9;

/// A finished run, as the summary reports it.
pub(super) struct FinishedRun<'a> {
    pub(super) args: &'a SimulateArgs,
    pub(super) sim: &'a SceneSimulation,
    pub(super) summary: &'a RunSummary,
    pub(super) wall_secs: f64,
    /// Largest ‖ψ‖ over the run, the initial state's included (m).
    pub(super) max_psi_m: f64,
    pub(super) scripted: bool,
    pub(super) contacts: &'a ContactSummary,
    pub(super) wind: Option<&'a WindRun>,
}

impl FinishedRun<'_> {
    /// Prints the summary of the method that ran.
    pub(super) fn print(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(out, "scene              {}", self.args.scene)?;
        match self.sim.method() {
            MethodSim::Default(sim) => self.print_default(out, sim),
            MethodSim::Articulated(sim) => self.print_articulated(out, sim),
        }
    }

    fn steps_and_speed(&self, out: &mut impl Write) -> io::Result<()> {
        let s = self.summary;
        writeln!(
            out,
            "steps              {} (h = {} s, {:.*} s simulated)",
            s.steps,
            self.sim.dt_secs(),
            run_csv::TIME_DECIMALS,
            s.simulated_secs
        )
    }

    fn wall_time(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "wall time          {:.4} s ({:.2} us/step)",
            self.wall_secs,
            1e6 * self.wall_secs / self.summary.steps.max(1) as f64
        )?;
        writeln!(
            out,
            "real-time factor   {:.1}",
            self.summary.simulated_secs / self.wall_secs.max(1e-12)
        )
    }

    fn print_default(&self, out: &mut impl Write, sim: &ar_dynamics::Simulation) -> io::Result<()> {
        let s = self.summary;
        let joints = sim.joints();
        let constraint_rows: usize = joints.iter().map(|j| j.rows()).sum();
        let dynamic_bodies = sim.bodies().iter().filter(|b| b.is_dynamic()).count();
        writeln!(
            out,
            "model              {dynamic_bodies} dynamic bodies, {} joints, {constraint_rows} constraint rows",
            joints.len()
        )?;
        self.steps_and_speed(out)?;
        self.wall_time(out)?;
        writeln!(out, "max |psi|          {:.3e} m", s.max_constraint_norm_m)?;
        if self.scripted {
            writeln!(
                out,
                "max |psi| released {:.3e} m",
                s.max_constraint_norm_after_release_m
            )?;
            write_grab_distance(out, s)?;
        }
        writeln!(
            out,
            "max |energy drift| {:.3e} J = {:.4} % of E_ref = {:.5} J (E_ref: the largest of the \
             peak kinetic energy, the potential and elastic energy ranges and the injected work)",
            s.max_abs_energy_drift_j,
            100.0 * s.max_abs_energy_error_rel,
            s.energy_reference_j
        )?;
        if s.dissipation_reversed_j
            > (DISSIPATION_REVERSED_NOTE_REL * s.energy_reference_j)
                .max(DISSIPATION_REVERSED_FLOOR_J)
        {
            writeln!(
                out,
                "warning: dissipation ran backwards in {} steps by {:.3e} J in all: dampers or contact impulses \
                 gave energy to the motion (physically they only take it); the balance books it, but the \
                 motion gained energy nothing supplied",
                s.dissipation_reversed_steps, s.dissipation_reversed_j
            )?;
        }
        let per_step = |n: u64| n as f64 / s.steps.max(1) as f64;
        writeln!(
            out,
            "solves / sweeps    {:.2} per step, max {}; position pass in {} steps; {} steps split into sub-steps",
            per_step(s.total_iterations),
            s.max_iterations,
            s.position_pass_steps,
            s.split_steps
        )?;
        writeln!(
            out,
            "factorisations     {:.2} per step (coupled matrix)",
            per_step(s.total_factorisations)
        )?;
        if let Some(contact) = sim.model().contact.as_ref() {
            let c = self.contacts;
            writeln!(
                out,
                "contacts           {} method; max penetration {:.3e} m; most loaded points in a step {}, {:.2} per step",
                contact.method.name(),
                c.max_penetration_m,
                c.max_points,
                c.point_steps as f64 / s.steps.max(1) as f64
            )?;
            if contact.sleep {
                writeln!(
                    out,
                    "sleeping           {} bodies at the end, {} at most at once",
                    sim.sleeping_bodies(),
                    sim.most_asleep()
                )?;
            }
        }
        if let Some(wind) = self.wind {
            write_wind(out, wind)?;
            writeln!(out)?;
        }
        Ok(())
    }

    fn print_articulated(
        &self,
        out: &mut impl Write,
        sim: &ar_dynamics::articulated::ArticulatedSim,
    ) -> io::Result<()> {
        let s = self.summary;
        let (tree, stats, d) = (sim.tree(), sim.stats(), sim.diagnostics());
        writeln!(
            out,
            "method             articulated (reduced coordinates, ABA)"
        )?;
        writeln!(
            out,
            "model              {} links, {} degrees of freedom ({} coordinates)",
            tree.links().len(),
            tree.nv(),
            tree.nq()
        )?;
        self.steps_and_speed(out)?;
        let integrator = sim.params().integrator;
        let tolerance = match integrator {
            ar_dynamics::articulated::Integrator::Rk45 { tolerance } => {
                format!(", tolerance {tolerance:e}")
            }
            _ => String::new(),
        };
        writeln!(
            out,
            "integrator         {}{tolerance}: {} accepted, {} rejected steps, {} evaluations",
            integrator.name(),
            stats.accepted_steps,
            stats.rejected_steps,
            stats.evaluations
        )?;
        self.wall_time(out)?;
        let loops = sim.loops();
        if loops.is_empty() {
            writeln!(
                out,
                "max |psi|          0 m (a tree: joints exact by construction)"
            )?;
        } else {
            writeln!(
                out,
                "max |psi|          {:.3e} m ({} loop-closing joints, {} rows)",
                self.max_psi_m,
                loops.joints().len(),
                loops.rows()
            )?;
        }
        writeln!(
            out,
            "max |energy drift| {:.3e} J = {:.4} % of E_ref = {:.5} J",
            s.max_abs_energy_drift_j,
            100.0 * s.max_abs_energy_drift_j / d.energy_reference_j,
            d.energy_reference_j
        )?;
        if self.scripted {
            write_grab_distance(out, s)?;
            writeln!(out, "user work          {:.5} J", d.user_work_j)?;
        }
        if let Some(wind) = self.wind {
            write_wind(out, wind)?;
            writeln!(out, "; work {:.5} J", d.external_work_j)?;
        }
        Ok(())
    }
}

/// The summary's line on how closely the grab point followed the stylus.
fn write_grab_distance(out: &mut impl Write, summary: &RunSummary) -> io::Result<()> {
    writeln!(
        out,
        "max grab distance  {:.3e} m (while clipped, from {} s after clipping)",
        summary.max_grab_distance_m,
        scripted::SETTLE_SECS
    )
}

/// The summary's wind line, without its line end (a method may add to it).
fn write_wind(out: &mut impl Write, (_, settings, _, max_force): &WindRun) -> io::Result<()> {
    let [x, y, z] = settings.source_in_world_m;
    let [dx, dy, dz] = settings.direction_in_world;
    write!(
        out,
        "wind               from ({x}, {y}, {z}) m along ({dx}, {dy}, {dz}); max total force {max_force:.4} N"
    )
}
