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
use super::simulate_limits::LimitSummary;

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
    pub(super) limits: &'a LimitSummary,
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
            self.write_dissipation_reversed(out, sim)?;
        }
        write_fractures(out, sim)?;
        self.limits.write(out)?;
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
            if c.round_steps > 0 {
                writeln!(
                    out,
                    "contact rounds     {:.2} per step, max {} (the contacts solved with the springs)",
                    c.round_steps as f64 / s.steps.max(1) as f64,
                    c.max_rounds
                )?;
            }
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

    /// The warning that the dissipated energy decreased, naming what in this run dissipates
    /// (the only elements that could have given the energy back), or, when nothing does, the
    /// solver's tolerance.
    fn write_dissipation_reversed(
        &self,
        out: &mut impl Write,
        sim: &ar_dynamics::Simulation,
    ) -> io::Result<()> {
        let s = self.summary;
        let mut elements = Vec::new();
        let damped = sim
            .springs()
            .iter()
            .filter(|c| c.damping_n_s_per_m > 0.0)
            .count();
        match damped {
            0 => {}
            1 => elements.push("the damper of 1 connection".to_owned()),
            n => elements.push(format!("the dampers of {n} connections")),
        }
        if self.scripted && self.args.stylus_damping > 0.0 {
            elements.push("the stylus spring's damper".to_owned());
        }
        if sim.model().contact.is_some() {
            elements.push("contact impulses".to_owned());
        }
        if !sim.model().rigid_groups.is_empty() {
            elements.push("the rigid groups' merging".to_owned());
        }
        let (steps, joules) = (s.dissipation_reversed_steps, s.dissipation_reversed_j);
        match elements.split_last() {
            Some((last, [])) => writeln!(
                out,
                "warning: dissipation ran backwards in {steps} steps by {joules:.3e} J in all: \
                 {last} gave energy to the motion (physically it only takes it); the balance \
                 books it, but the motion gained energy nothing supplied"
            ),
            Some((last, rest)) => writeln!(
                out,
                "warning: dissipation ran backwards in {steps} steps by {joules:.3e} J in all: \
                 {} or {last} gave energy to the motion (physically they only take it); the \
                 balance books it, but the motion gained energy nothing supplied",
                rest.join(", ")
            ),
            None => writeln!(
                out,
                "warning: the balance's dissipation line ran backwards in {steps} steps by \
                 {joules:.3e} J in all, in a run where nothing dissipates: that is the solver's \
                 tolerance (a spring's converged impulse differs from its elastic share by the \
                 iteration's residual), not a physical element"
            ),
        }
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

/// Breaks listed in the summary; a cloth that tears may break hundreds of connections.
const LISTED_FRACTURES: usize = 50;

/// The summary's fracture lines in a scene with breakable connections: how many broke, and
/// each break with its time, the connection (and the bodies it joined) and its load.
fn write_fractures(out: &mut impl Write, sim: &ar_dynamics::Simulation) -> io::Result<()> {
    let springs = sim.springs();
    let breakable = springs
        .iter()
        .filter(|c| c.fracture_extension_m.is_some())
        .count();
    if breakable == 0 {
        return Ok(());
    }
    let fractures = sim.fractures();
    if fractures.is_empty() {
        return writeln!(
            out,
            "fractures          none of the {breakable} breakable connections broke"
        );
    }
    writeln!(
        out,
        "fractures          {} of the {breakable} breakable connections broke:",
        fractures.len()
    )?;
    let bodies = sim.bodies();
    for f in fractures.iter().take(LISTED_FRACTURES) {
        let c = &springs[f.spring];
        writeln!(
            out,
            "  t = {:.*} s  {} ({} – {}): tension {:.4} N, extension {:.4e} m (limit {:.4e} m), \
             {:.4e} J released",
            run_csv::TIME_DECIMALS,
            f.time_secs,
            c.name,
            bodies[c.body1].name,
            bodies[c.body2].name,
            f.tension_n,
            f.extension_m,
            c.fracture_extension_m.unwrap_or(f64::NAN),
            f.energy_j
        )?;
    }
    if fractures.len() > LISTED_FRACTURES {
        writeln!(out, "  … and {} more", fractures.len() - LISTED_FRACTURES)?;
    }
    Ok(())
}
