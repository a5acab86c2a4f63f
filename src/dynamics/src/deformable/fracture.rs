//! Fracture of connections: a spring with a fracture extension breaks at the end of the
//! first step whose extension l − l₀ exceeds it.
//!
//! The check runs after every successful step ([`Simulation::step`]), on the end poses. A
//! broken spring gets zero stiffness and damping and leaves every stage of the solver (its
//! row is inactive), so it acts no more. The elastic energy ½ k e² it held at the break
//! leaves the elastic energy and is booked as `fractured_j` in the energy balance (see
//! [`crate::state::diagnostics`]), so the balance still closes.
//!
//! A break is detected at a step's end: the extension at the break is the threshold plus
//! what the connection stretched within that step (at most |ė| h), not the threshold exactly.
//! [`Fracture`] records both, and the tension the solver applied in the breaking step.

use crate::simulation::Simulation;

/// One broken connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Fracture {
    /// Index of the spring in [`Simulation::springs`].
    pub spring: usize,
    /// Simulated time at the end of the step that broke it (s).
    pub time_secs: f64,
    /// Its extension l − l₀ at the break (m).
    pub extension_m: f64,
    /// The tension the solver applied during the breaking step, −λ/h of its last (sub-)step
    /// (N; positive pulls the two bodies together).
    pub tension_n: f64,
    /// The elastic energy ½ k e² it held, booked as fracture loss (J).
    pub energy_j: f64,
}

impl Simulation {
    /// Breaks every intact spring whose extension exceeds its fracture extension (see the
    /// module docs). Scenes without fracture extensions are untouched.
    pub(crate) fn break_overstretched_connections(&mut self) {
        // Equal sub-steps: the last (sub-)step's length turns its impulse into a force.
        let h_last = self.params.dt_secs / self.solver.diagnostics.substeps.max(1) as f64;
        for i in 0..self.model.springs.len() {
            let s = &self.model.springs[i];
            let Some(limit_m) = s.fracture_extension_m else {
                continue;
            };
            if s.broken {
                continue;
            }
            let p1 = self.model.bodies[s.body1].point_in_world(&s.point1_in_body1);
            let p2 = self.model.bodies[s.body2].point_in_world(&s.point2_in_body2);
            let length_m = (p2 - p1).norm();
            let extension_m = length_m - s.rest_length_m;
            if extension_m <= limit_m {
                continue;
            }
            let energy_j = s.elastic_energy_j(length_m);
            let tension_n = -self.solver.spring_rows[i].lambda / h_last;
            let s = &mut self.model.springs[i];
            s.broken = true;
            s.stiffness_n_per_m = 0.0;
            s.damping_n_s_per_m = 0.0;
            self.solver.spring_rows[i].lambda = 0.0;
            self.solver.spring_rows[i].active = false;
            // The energy moves from the elastic line to the fracture line: the step's drift
            // is unchanged, the next step's elastic energy no longer holds it.
            self.solver.ledger.fractured_j += energy_j;
            self.solver.ledger.elastic_end_j -= energy_j;
            let d = &mut self.solver.diagnostics;
            d.elastic_j -= energy_j;
            d.fractured_j += energy_j;
            // The carried impulses included this spring's: a jump in the loads.
            self.solver.loads_jumped();
            self.solver.fractures.push(Fracture {
                spring: i,
                time_secs: self.solver.time_secs,
                extension_m,
                tension_n,
                energy_j,
            });
        }
    }

    /// The connections that broke so far, in the order they broke.
    pub fn fractures(&self) -> &[Fracture] {
        &self.solver.fractures
    }

    /// The tension of spring `i` in the last step: −λ/h of its converged impulse (N; positive
    /// pulls its bodies together; zero for a broken or slack-less spring). `None` for an
    /// index past the springs.
    pub fn spring_tension_n(&self, i: usize) -> Option<f64> {
        let h_last = self.params.dt_secs / self.solver.diagnostics.substeps.max(1) as f64;
        self.solver.spring_rows.get(i).map(|r| -r.lambda / h_last)
    }
}
