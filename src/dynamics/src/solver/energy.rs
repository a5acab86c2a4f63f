//! Energy bookkeeping: the energies of a state, the work booked per step (user work through the
//! stylus spring, external work, damper dissipation) and the ledger's balance (see
//! [`crate::state::diagnostics`] for its definition).

use nalgebra::Vector3;

use super::{squared_norm, Step};
use crate::model::body::{Body, Pose};
use crate::model::joint::Joint;
use crate::model::spring::Spring;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::state::diagnostics::EnergyLedger;

/// The energies of a state (J).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Energies {
    pub(crate) kinetic_j: f64,
    pub(crate) potential_j: f64,
    /// Springs and the stylus spring.
    pub(crate) elastic_j: f64,
}

/// Kinetic energy of all bodies (J).
pub(crate) fn kinetic_energy_j(bodies: &[Body]) -> f64 {
    bodies.iter().map(Body::kinetic_energy_j).sum()
}

/// Gravitational energy −Σ m g·x (J).
pub(crate) fn potential_energy_j(bodies: &[Body], gravity_in_world: &Vector3<f64>) -> f64 {
    bodies
        .iter()
        .map(|b| -b.mass_kg * gravity_in_world.dot(&b.position_in_world))
        .sum()
}

/// Elastic energy of the scene's springs (J).
pub(crate) fn spring_energy_j(bodies: &[Body], springs: &[Spring]) -> f64 {
    springs
        .iter()
        .map(|s| {
            if s.at_centres() {
                let d = bodies[s.body2].position_in_world - bodies[s.body1].position_in_world;
                return s.elastic_energy_j(d.norm());
            }
            let p1 = bodies[s.body1].point_in_world(&s.point1_in_body1);
            let p2 = bodies[s.body2].point_in_world(&s.point2_in_body2);
            s.elastic_energy_j((p2 - p1).norm())
        })
        .sum()
}

/// Elastic energy of the stylus spring (J; zero unless clipped with a target).
pub(crate) fn stylus_energy_j(
    bodies: &[Body],
    stylus: Option<&StylusAttachment>,
    target: Option<&StylusTarget>,
) -> f64 {
    match (stylus, target) {
        (Some(s), Some(t)) => {
            let p = bodies[s.body].point_in_world(&s.point_in_body);
            s.energy_j(&(p - t.position_in_world))
        }
        _ => 0.0,
    }
}

/// ‖ψ‖ over all joint rows at the current poses (m; angular rows at a 1 m lever arm).
pub(crate) fn constraint_norm_m(bodies: &[Body], joints: &[Joint]) -> f64 {
    joints
        .iter()
        .map(|j| {
            let psi = j.psi(&Pose::of(&bodies[j.body1]), &Pose::of(&bodies[j.body2]));
            squared_norm(j, &psi)
        })
        .sum::<f64>()
        .sqrt()
}

impl EnergyLedger {
    /// Books the end-of-step energies; returns the reference energy and the drift (J).
    pub(crate) fn close_step(&mut self, e: &Energies) -> (f64, f64) {
        self.potential_end_j = e.potential_j;
        self.elastic_end_j = e.elastic_j;
        self.peak_kinetic_j = self.peak_kinetic_j.max(e.kinetic_j);
        self.potential_min_j = self.potential_min_j.min(e.potential_j);
        self.potential_max_j = self.potential_max_j.max(e.potential_j);
        self.elastic_min_j = self.elastic_min_j.min(e.elastic_j);
        self.elastic_max_j = self.elastic_max_j.max(e.elastic_j);
        self.peak_work_j = self
            .peak_work_j
            .max(self.user_work_j.abs() + self.external_work_j.abs());
        let energy = e.kinetic_j + e.potential_j + e.elastic_j;
        let drift = energy + self.dissipated_j + self.fractured_j
            - self.user_work_j
            - self.external_work_j
            - self.initial_j;
        (self.reference_j(), drift)
    }
}

impl Step<'_> {
    /// The energies at the current poses and velocities.
    pub(super) fn energies(&self) -> Energies {
        Energies {
            kinetic_j: kinetic_energy_j(self.bodies),
            potential_j: potential_energy_j(self.bodies, &self.gravity_in_world),
            elastic_j: spring_energy_j(self.bodies, self.springs)
                + stylus_energy_j(
                    self.bodies,
                    self.stylus.as_ref(),
                    self.stylus_target.as_ref(),
                ),
        }
    }

    /// Books the step's user work, external work and damper dissipation from the converged
    /// impulses, the final midpoint rows and the midpoint velocities.
    pub(super) fn book_work(&mut self, h: f64) {
        for i in 0..self.springs.len() {
            let r = self.s.spring_rows[i];
            if !r.active {
                continue;
            }
            let k = self.springs[i].stiffness_n_per_m;
            let e_end = self.spring_length_m(i) - self.springs[i].rest_length_m;
            let elastic = -h * k * 0.5 * (r.e_start + e_end);
            let damper = r.lambda - elastic;
            self.s.ledger.dissipated_j -= damper * self.spring_rate(i);
        }
        if let (Some(s), Some(t)) = (self.stylus, self.stylus_target) {
            let blk = self.s.stylus_block;
            let b = &self.bodies[s.body];
            let p = b.position_in_world + b.world_from_body_rotation * s.point_in_body;
            // The target has already advanced to the end of the step.
            let e_end = p - t.position_in_world.coords;
            let rate = self.stylus_rate(s.body, &blk.arm, &t.velocity_in_world);
            let work = s.step_work_j(
                h,
                &blk.lambda,
                &blk.e_start,
                &e_end,
                &rate,
                &t.velocity_in_world,
            );
            self.s.ledger.dissipated_j += work.dissipated_j;
            self.s.ledger.user_work_j += work.user_j;
        }
        for (i, b) in self.bodies.iter().enumerate() {
            if b.is_dynamic() {
                let v = (b.linear_velocity_in_world + self.s.body.v_start[i]) * 0.5;
                let w = (b.angular_velocity_in_world + self.s.body.w_start[i]) * 0.5;
                let force = self.s.loads.force[i] + self.s.loads.element_force[i];
                let torque = self.s.loads.torque[i] + self.s.loads.element_torque[i];
                self.s.ledger.external_work_j += h * (force.dot(&v) + torque.dot(&w));
                let (f, t) = (self.s.loads.damper_force[i], self.s.loads.damper_torque[i]);
                self.s.ledger.dissipated_j -= h * (f.dot(&v) + t.dot(&w));
            }
        }
    }
}
