//! The articulated method's per-step diagnostics: kinetic, potential and elastic energy at
//! the new state, and the balance against the work integrated with the state (the same
//! definitions as the default method's, see [`crate::state::diagnostics`]).

use super::ArticulatedSim;
use crate::StepDiagnostics;

/// The energy ledger behind the balance error (the same definitions as the default
/// method's, see [`crate::state::diagnostics`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Ledger {
    initial_j: f64,
    peak_kinetic_j: f64,
    potential_range: (f64, f64),
    elastic_range: (f64, f64),
    max_injected_j: f64,
}

impl Ledger {
    /// Nothing seen yet (the initial energy is set once the first diagnostics exist).
    pub(super) fn new() -> Self {
        Self {
            initial_j: 0.0,
            peak_kinetic_j: 0.0,
            potential_range: (f64::INFINITY, f64::NEG_INFINITY),
            elastic_range: (f64::INFINITY, f64::NEG_INFINITY),
            max_injected_j: 0.0,
        }
    }
}

impl ArticulatedSim {
    /// Starts the energy balance at the current state: its energy (less the work already
    /// integrated) is the reference E(0), and the peaks and ranges are those seen from here.
    pub(super) fn restart_balance(&mut self) {
        self.ledger = Ledger::new();
        self.update_diagnostics();
        let d = self.diagnostics;
        self.ledger.initial_j =
            d.kinetic_j + d.potential_j + d.elastic_j + d.dissipated_j - d.external_work_j;
        self.update_diagnostics();
    }

    /// Kinematics at the current state, then the energies and the balance.
    pub(super) fn update_diagnostics(&mut self) {
        let d = &mut self.dynamics;
        let (nq, nv) = (d.tree.nq(), d.tree.nv());
        d.ws.kinematics(&d.tree, &self.y[..nq], &self.y[nq..nq + nv]);
        d.kinematics_current = true;
        d.loops.evaluate(&d.tree, &d.ws, &d.map, &d.model);
        let stylus = self.stylus_energy();
        let d = &self.dynamics;
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for (i, l) in d.tree.links().iter().enumerate() {
            kinetic += 0.5 * d.ws.link_velocity(i).dot(d.ws.link_momentum(i));
            let x = d.ws.point_in_world(i, &d.map.com_in_link[i]);
            potential -= l.inertia.mass * d.tree.gravity_in_world.dot(&x);
        }
        let mut elastic = 0.0;
        for s in &d.model.springs {
            let (x1, _) = d.body_point(s.body1, &s.point1_in_body1);
            let (x2, _) = d.body_point(s.body2, &s.point2_in_body2);
            elastic += s.elastic_energy_j((x2 - x1).norm());
        }
        elastic += d.joint_forces.energy_j(&self.y[..nq]);
        elastic += stylus.elastic_j;
        // The spring is part of the system: its force's work on the bodies is internal.
        let external = self.y[nq + nv] - stylus.load_work_j;
        let dissipated = self.y[nq + nv + 1] + stylus.dissipated_j;
        let user = stylus.user_work_j;
        let lg = &mut self.ledger;
        lg.peak_kinetic_j = lg.peak_kinetic_j.max(kinetic);
        lg.potential_range = (
            lg.potential_range.0.min(potential),
            lg.potential_range.1.max(potential),
        );
        lg.elastic_range = (
            lg.elastic_range.0.min(elastic),
            lg.elastic_range.1.max(elastic),
        );
        lg.max_injected_j = lg.max_injected_j.max(user.abs() + external.abs());
        let reference = lg
            .peak_kinetic_j
            .max(lg.potential_range.1 - lg.potential_range.0)
            .max(lg.elastic_range.1 - lg.elastic_range.0)
            .max(lg.max_injected_j)
            .max(1e-9);
        let drift = kinetic + potential + elastic + dissipated - user - external - lg.initial_j;
        let clipped = self.stylus_attachment().is_some();
        self.diagnostics = StepDiagnostics {
            time_secs: self.time_secs,
            constraint_norm_m: d.loops.psi_norm_m(),
            kinetic_j: kinetic,
            potential_j: potential,
            elastic_j: elastic,
            user_work_j: user,
            external_work_j: external,
            dissipated_j: dissipated,
            energy_drift_j: drift,
            energy_reference_j: reference,
            energy_error_rel: drift / reference,
            clipped,
            substeps: 1,
            ..StepDiagnostics::default()
        };
    }
}
