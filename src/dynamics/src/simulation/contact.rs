//! Contact on a [`Simulation`]: turning it on with a scene's geometry (checked, jointed bodies
//! kept apart, the pushing stylus tip added), and what the last step's contacts were.

use super::Simulation;
use crate::contact::{ColliderShape, ContactModel, ContactReport, Material};
use crate::error::SimError;

impl Simulation {
    /// Turns contact on with this geometry (see [`crate::contact`]); bodies joined by a
    /// joint are added to the pairs that never collide.
    pub fn set_contact_model(&mut self, mut contact: ContactModel) -> Result<(), SimError> {
        contact
            .colliders
            .retain(|c| c.name != "stylus_tip" || c.body < self.model.bodies.len());
        let rows = (self
            .model
            .joints
            .first()
            .map(|j| format!("joint `{}`", j.name)))
        .or(self
            .model
            .springs
            .first()
            .map(|s| format!("spring `{}`", s.name)));
        for c in &contact.colliders {
            c.material.validate(&c.name)?;
            if let (true, Some(rows)) = (c.material.spin_friction_m > 0.0, &rows) {
                // Contacts with joints or springs are solved through their rows, which take
                // no spin row.
                return Err(SimError::BadContact {
                    name: c.name.clone(),
                    reason: format!(
                        "spin_friction_m is solved only between free bodies, and the model \
                         has {rows}"
                    ),
                });
            }
            if c.body >= self.model.bodies.len() {
                return Err(SimError::UnknownBodyIndex {
                    what: "collider",
                    name: c.name.clone(),
                    index: c.body,
                });
            }
        }
        for j in &self.model.joints {
            contact
                .excluded_pairs
                .push((j.body1.min(j.body2), j.body1.max(j.body2)));
        }
        contact.excluded_pairs.sort_unstable();
        contact.excluded_pairs.dedup();
        if let Some(r) = contact.stylus_tip_radius_m {
            if !(r > 0.0 && r.is_finite()) {
                return Err(SimError::BadContact {
                    name: "stylus_tip".to_owned(),
                    reason: format!("radius must be positive, got {r}"),
                });
            }
            let tip = self.model.bodies.len();
            contact.tip_body = Some(tip);
            contact.add(
                "stylus_tip",
                tip,
                ColliderShape::Sphere { radius_m: r },
                nalgebra::Isometry3::identity(),
                Material::default(),
            );
        }
        let tip = usize::from(contact.stylus_tip_radius_m.is_some());
        check_through_joints_size(&self.model.joints, self.model.bodies.len() + tip)?;
        self.model.contact = Some(contact);
        self.solver.contact = Default::default();
        // New colliders, new reaches: every body awake, the sleep state sized again.
        self.sleep = Default::default();
        Ok(())
    }

    /// The contact points of the last step (one per point, shape indices into the contact
    /// model's colliders); empty without contact.
    pub fn contact_report(&self) -> &[ContactReport] {
        &self.solver.contact.report
    }

    /// Per joint, the limit torque about its hinge axis (N·m) and force along its slide axis
    /// (N) on its second body in the last step (the limits' impulses / h, impacts included;
    /// positive pushes the coordinate up, see [`crate::model::limit`]); empty when no joint
    /// has limits.
    pub fn joint_limit_forces(&self) -> &[[f64; 2]] {
        &self.solver.contact.limit_force
    }

    /// The largest penetration at the end of the last step (m, ≥ 0).
    pub fn max_penetration_m(&self) -> f64 {
        self.solver.contact.max_penetration_m
    }

    /// Sweeps the sparse contact solve ran in the last step, or the sweeps of all the rounds
    /// that solved its contacts with the springs (0 when the step's contacts were solved
    /// otherwise, or there were none): what `[contact] tolerance_m` trades on a pile.
    pub fn contact_sweeps(&self) -> usize {
        self.solver.contact.sweeps
    }

    /// Rounds of contact solve and velocity stage that solved the last step's contacts with
    /// the springs (0 when the contacts were solved after the velocity stage, or there were
    /// none; see "Contacts and springs" in the manual's contact page).
    pub fn contact_rounds(&self) -> usize {
        self.solver.contact.coupled.rounds
    }
}

/// Refuses contact on a mechanism whose joints alone make the dense solve through the joints
/// larger than it may be (`bodies` with the stylus tip's pseudo-body).
fn check_through_joints_size(joints: &[crate::Joint], bodies: usize) -> Result<(), SimError> {
    use crate::contact::through_joints::{dense_bytes, MAX_DENSE_BYTES};
    let joint_rows = joints.iter().map(crate::Joint::rows).sum();
    let bytes = dense_bytes(joint_rows, 0, bodies);
    if bytes > MAX_DENSE_BYTES {
        return Err(SimError::ContactThroughJointsTooLarge {
            joint_rows,
            bodies,
            bytes,
            limit: MAX_DENSE_BYTES,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::error::SimError;
    use crate::solver::FailureCause;

    /// Three balls resting on the desk make three contact points; with room for two, the step
    /// fails naming the limit, and the balls stay where they were.
    #[test]
    fn a_step_with_more_contact_points_than_the_limit_fails_and_keeps_the_state() {
        let mut text = String::from(
            "[[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\npoint_in_world_m = [0.0, 0.0, 0.0]\n",
        );
        for (i, x) in [0.0, 0.1, 0.2].iter().enumerate() {
            text.push_str(&format!(
                "[[body]]\nname = \"b{i}\"\nmass_kg = 0.1\ninertia_kg_m2 = [1e-5, 1e-5, 1e-5]\n\
                 position_m = [{x}, 0.0, 0.01]\nshape = {{ kind = \"sphere\", radius_m = 0.01 }}\n"
            ));
        }
        let mut sim = crate::Scene::parse(&text, "balls.toml")
            .unwrap()
            .build()
            .unwrap();
        sim.step().unwrap();
        assert_eq!(sim.contact_report().len(), 3);
        sim.model.contact.as_mut().unwrap().max_points = 2;
        let before: Vec<_> = sim.bodies().iter().map(|b| b.position_in_world).collect();
        let time = sim.time_secs();
        let Err(SimError::StepFailed(failure)) = sim.step() else {
            panic!("the step was taken")
        };
        assert_eq!(failure.cause, FailureCause::TooManyContacts { limit: 2 });
        assert!(
            failure
                .to_string()
                .contains("contact detection found more than 2 contact points"),
            "{failure}"
        );
        let after: Vec<_> = sim.bodies().iter().map(|b| b.position_in_world).collect();
        assert_eq!((after, sim.time_secs()), (before, time));
    }
}
