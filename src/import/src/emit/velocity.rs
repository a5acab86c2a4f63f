//! Initial velocities from the file's joint rates ([`Model::initial_velocities`], MJCF
//! keyframe `qvel`): forward velocity kinematics down the tree, parents first, giving every
//! link's angular velocity and the velocity of its frame's origin (file frame and units);
//! a scene body's velocity is then that of its centre of mass.

use nalgebra::Vector3;

use super::tree::{joint_error, Tree};
use crate::error::ImportError;
use crate::model::{JointKind, Model};

/// Per link: (velocity of its frame's origin, angular velocity), world axes, file units.
pub(crate) type LinkVelocities = Vec<(Vector3<f64>, Vector3<f64>)>;

/// The links' velocities, or `None` when the model starts at rest.
pub(crate) fn link_velocities(
    model: &Model,
    tree: &Tree,
) -> Result<Option<LinkVelocities>, ImportError> {
    if model.initial_velocities.is_empty() {
        return Ok(None);
    }
    let rate = |name: &str| {
        model
            .initial_velocities
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    };
    let mut out = vec![(Vector3::zeros(), Vector3::zeros()); model.links.len()];
    for &i in &tree.order {
        let Some(k) = tree.parent_joint[i] else {
            continue;
        };
        let j = &model.joints[k];
        let (v_parent, w_parent, parent_origin) = match tree.index.get(&j.parent) {
            Some(&p) => (
                out[p].0,
                out[p].1,
                tree.world_from_link[p].translation.vector,
            ),
            None => (Vector3::zeros(), Vector3::zeros(), Vector3::zeros()),
        };
        let child = &tree.world_from_link[i];
        let origin = child.translation.vector;
        let anchor = (child * nalgebra::Point3::from(j.anchor_in_child)).coords;
        let axis = child.rotation * j.axis_in_child.into_inner();
        let mut v = v_parent + w_parent.cross(&(origin - parent_origin));
        let mut w = w_parent;
        let q = rate(&j.name);
        let want = match j.kind {
            JointKind::Revolute | JointKind::Prismatic => 1,
            JointKind::Ball => 3,
            JointKind::Free => 6,
            JointKind::Fixed | JointKind::Planar => 0,
        };
        if let Some(q) = q {
            if q.len() != want {
                return Err(joint_error(
                    j,
                    format!(
                        "{} initial velocity values given, a {:?} joint takes {want}",
                        q.len(),
                        j.kind
                    ),
                ));
            }
            match j.kind {
                JointKind::Revolute => {
                    w += axis * q[0];
                    v += (axis * q[0]).cross(&(origin - anchor));
                }
                JointKind::Prismatic => v += axis * q[0],
                JointKind::Ball => {
                    let w_rel = child.rotation * Vector3::new(q[0], q[1], q[2]);
                    w += w_rel;
                    v += w_rel.cross(&(origin - anchor));
                }
                JointKind::Free => {
                    // MuJoCo's free joint: the origin's velocity in world axes, the angular
                    // velocity in the body's.
                    v = Vector3::new(q[0], q[1], q[2]);
                    w = child.rotation * Vector3::new(q[3], q[4], q[5]);
                }
                JointKind::Fixed | JointKind::Planar => {}
            }
        }
        out[i] = (v, w);
    }
    Ok(Some(out))
}
