//! Viscous joint damping (a hinge's or prismatic joint's `damping_…` field): a generalized
//! force −b q̇ on the joint's coordinate, acting between its two bodies.
//!
//! The articulated method adds it to the τ of the joint's coordinate in every stage of its
//! integrator (`articulated::joint_forces`). The default method applies it explicitly, like
//! the medium's drag: its wrench is evaluated once per (sub-)step from the start pose and
//! velocities and applied in the free motion, and its work with the step's midpoint
//! velocities, h (F·v̄ + τ·ω̄), is booked as dissipated energy. Being explicit it is stable
//! while h b (1/I₁ + 1/I₂) stays below about 2 for the moments I about the axis (h b (1/m₁ +
//! 1/m₂) for a prismatic joint); a joint's other bodies only add inertia, so the free bodies'
//! figure is the pessimistic one.

use nalgebra::Vector3;

use super::body::Body;
use super::joint::{Joint, JointKind};

/// A force and a torque about the centre of mass (world axes).
pub type Wrench = (Vector3<f64>, Vector3<f64>);

/// The damper's wrench on body 1 and on body 2 at the bodies' current state, or `None` for a
/// joint without damping.
pub fn damper_wrenches(joint: &Joint, bodies: &[Body]) -> Option<[Wrench; 2]> {
    if joint.damping == 0.0 {
        return None;
    }
    let (b1, b2) = (&bodies[joint.body1], &bodies[joint.body2]);
    match joint.kind {
        JointKind::Hinge => {
            let axis = b1.world_from_body_rotation * joint.hinge_axis_in_body1();
            let rate = axis.dot(&(b2.angular_velocity_in_world - b1.angular_velocity_in_world));
            let torque = axis * (-joint.damping * rate);
            Some([(Vector3::zeros(), -torque), (Vector3::zeros(), torque)])
        }
        JointKind::Prismatic => {
            let axis = b1.world_from_body_rotation * joint.slide_axis_in_body1();
            let r1 = b1.world_from_body_rotation * joint.anchor1_in_body1;
            let r2 = b2.world_from_body_rotation * joint.anchor2_in_body2;
            let v1 = b1.linear_velocity_in_world + b1.angular_velocity_in_world.cross(&r1);
            let v2 = b2.linear_velocity_in_world + b2.angular_velocity_in_world.cross(&r2);
            let force = axis * (-joint.damping * axis.dot(&(v2 - v1)));
            Some([(-force, r1.cross(&-force)), (force, r2.cross(&force))])
        }
        _ => None,
    }
}
