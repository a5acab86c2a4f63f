//! Contact detection within a step: each body's speed bound (how far it can close on another
//! in the step), the prediction distance and reach this gives parry's detection, and the
//! step's overflow when detection stops at the model's `max_points`.

use super::super::{FailureCause, Step};
use crate::contact::geometry;

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
        let speed = &c.speed_bound;
        let prediction = |a: usize, b: usize| {
            if end {
                margin
            } else {
                margin + 2.0 * h * (speed[a] + speed[b])
            }
        };
        let out = if end {
            &mut c.end_points
        } else {
            &mut c.points
        };
        let reach = |a: usize| {
            if end {
                0.5 * margin
            } else {
                0.5 * margin + 2.0 * h * speed[a]
            }
        };
        if !geometry::detect(model, &c.poses, prediction, reach, &mut c.detection, out) {
            c.overflow = Some(FailureCause::TooManyContacts {
                limit: model.max_points,
            });
        }
    }
}
