//! Contact detection within a step: each body's speed bound (how far it can close on another
//! in the step), the prediction distance and reach this gives parry's detection, and the
//! step's overflow when detection stops at the model's `max_points`.
//!
//! The end detection looks as far ahead as the next step's start detection will (the speed
//! bounds of the end velocities), and remembers what its points are a function of
//! ([`DetectionInputs`]). When the next step starts at those very inputs (nothing moved, slept
//! or woke between the steps) its start detection takes the end points instead of detecting
//! again: the same points, bit for bit, at half the detections per step.

use super::super::{FailureCause, Step};
use crate::contact::geometry;
use crate::model::body::Pose;

/// What a detection's points are a function of besides the contact model (which only
/// `Simulation::set_contact_model` changes, and that clears the contact scratch), as bits:
/// the poses and speed bounds, the step, the margin, the point limit and which bodies sleep.
#[derive(Clone, Debug, Default)]
pub(crate) struct DetectionInputs {
    bits: Vec<u64>,
}

impl DetectionInputs {
    fn set(&mut self, poses: &[Pose], speed_bound: &[f64], scalars: [f64; 3], asleep: &[bool]) {
        self.bits.clear();
        // Room for a sleeping flag per pose too, taken on the first call: the flags come
        // and go as bodies sleep and wake, and a step allocates nothing.
        self.bits
            .reserve(8 * poses.len() + speed_bound.len() + scalars.len());
        for p in poses {
            let q = p.q.coords;
            self.bits
                .extend(p.x.iter().chain(q.iter()).map(|x| x.to_bits()));
        }
        self.bits.extend(speed_bound.iter().map(|x| x.to_bits()));
        self.bits.extend(scalars.iter().map(|x| x.to_bits()));
        self.bits.extend(asleep.iter().map(|&a| u64::from(a)));
    }

    /// Makes this a copy of `other`, with room for as much as `other` has.
    fn copy_from(&mut self, other: &Self) {
        self.bits.clear();
        self.bits.reserve(other.bits.capacity());
        self.bits.extend_from_slice(&other.bits);
    }
}

impl Step<'_> {
    /// Detects the contacts at the current poses (with their masses) as the step's end
    /// contacts; returns the deepest penetration (m, ≥ 0).
    pub(super) fn detect_end_contacts(&mut self) -> f64 {
        self.contact_masses();
        self.detect_contacts(true);
        self.s.contact.deepest_end_penetration_m()
    }

    pub(super) fn detect_contacts(&mut self, end: bool) {
        let Some(model) = self.contact else { return };
        let h = self.ctx.h;
        let g = self.gravity_in_world.norm();
        let c = &mut self.s.contact;
        // Each body's reach from its origin over its colliders, then its speed bound.
        c.speed_bound.clear();
        c.speed_bound.resize(self.bodies.len(), 0.0);
        for k in model
            .colliders
            .iter()
            .filter(|k| k.body < self.bodies.len())
        {
            let reach = k.shape.bounding_radius_m() + k.body_from_shape.translation.vector.norm();
            c.speed_bound[k.body] = c.speed_bound[k.body].max(reach);
        }
        for (bound, b) in c.speed_bound.iter_mut().zip(self.bodies.iter()) {
            *bound = if b.is_dynamic() {
                b.linear_velocity_in_world.norm()
                    + b.angular_velocity_in_world.norm() * *bound
                    + h * g
            } else {
                0.0
            };
        }
        if model.tip_body.is_some() {
            let v_tip = self
                .stylus_target
                .map_or(0.0, |t| t.velocity_in_world.norm());
            c.speed_bound.push(v_tip);
        }
        let margin = model.margin_m;
        let scalars = [h, margin, model.max_points as f64];
        c.inputs_now
            .set(&c.poses, &c.speed_bound, scalars, &c.detection.asleep);
        if !end {
            let same = c.end_inputs_valid && c.inputs_now.bits == c.end_inputs.bits;
            #[cfg(test)]
            let same = same && !c.never_reuse_detection;
            c.end_inputs_valid = false;
            if same {
                // Copied, not swapped: each list keeps its own buffer, grown once.
                c.points.clone_from(&c.end_points);
                #[cfg(test)]
                {
                    c.reused_detections += 1;
                }
                return;
            }
        }
        let speed = &c.speed_bound;
        let prediction = |a: usize, b: usize| margin + 2.0 * h * (speed[a] + speed[b]);
        let reach = |a: usize| 0.5 * margin + 2.0 * h * speed[a];
        let out = if end {
            &mut c.end_points
        } else {
            &mut c.points
        };
        if !geometry::detect(model, &c.poses, prediction, reach, &mut c.detection, out) {
            c.overflow = Some(FailureCause::TooManyContacts {
                limit: model.max_points,
            });
            return;
        }
        if end {
            c.end_inputs.copy_from(&c.inputs_now);
            c.end_inputs_valid = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scene::generate_pile::pile_toml;
    use crate::{Scene, Simulation};

    /// A generated pile of `bodies`, sleeping off (every step detects).
    fn pile(bodies: usize) -> Simulation {
        let mut scene =
            Scene::parse(&pile_toml(bodies).expect("generates"), "pile.toml").expect("parses");
        scene.contact.as_mut().expect("contact").sleep = false;
        scene.build().expect("builds")
    }

    fn state_bits(sim: &Simulation) -> Vec<u64> {
        sim.bodies()
            .iter()
            .flat_map(|b| {
                let q = b.world_from_body_rotation.coords;
                b.position_in_world
                    .iter()
                    .chain(q.iter())
                    .chain(b.linear_velocity_in_world.iter())
                    .chain(b.angular_velocity_in_world.iter())
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// A falling pile whose start detections take the last step's end points steps bit for
    /// bit as one that detects at every start, and takes them in nearly every step; a body
    /// moved between steps makes the next start detect again.
    #[test]
    fn the_start_takes_the_end_detection_bit_for_bit() {
        let (mut reusing, mut fresh) = (pile(40), pile(40));
        fresh.solver.contact.never_reuse_detection = true;
        let steps = 150;
        for step in 0..steps {
            reusing.step().expect("step");
            fresh.step().expect("step");
            assert_eq!(state_bits(&reusing), state_bits(&fresh), "step {step}");
            assert_eq!(
                reusing.contact_report(),
                fresh.contact_report(),
                "step {step}"
            );
        }
        let touching = reusing.contact_report().len();
        assert!(touching > 100, "{touching} contact points at the end");
        assert_eq!(fresh.solver.contact.reused_detections, 0);
        let reused = reusing.solver.contact.reused_detections;
        assert!(
            reused >= steps - 2,
            "{reused} of {steps} start detections reused"
        );
        // A body moved between the steps (as a replay's seek does): the next start detects.
        reusing.model.bodies[1].position_in_world.z += 1.0e-9;
        reusing.step().expect("step");
        assert_eq!(reusing.solver.contact.reused_detections, reused);
        reusing.step().expect("step");
        assert_eq!(reusing.solver.contact.reused_detections, reused + 1);
    }
}
