//! From the scene's maximal-coordinate [`Model`] to a [`Tree`]: the joint graph is walked
//! breadth-first from the ground, each joint met becomes the joint of the body it reaches,
//! and a body no joint connects to the ground becomes the root of a floating subtree (free
//! joint). The scene's initial pose is the neutral configuration q₀, and the bodies' initial
//! velocities are projected onto the joints.
//!
//! Link frames: a jointed link's frame has its origin at the joint anchor on that body and
//! the body frame's axes; a free root's frame is its body frame (centre of mass). Body points
//! map to link points by the constant offset [`BodyMap::com_in_link`].
//!
//! | scene joint | tree joint                     |
//! |-------------|--------------------------------|
//! | ball        | spherical                      |
//! | hinge       | revolute about the hinge axis  |
//! | prismatic   | prismatic along the slide axis |
//! | fixed       | fixed                          |
//! | slot        | none: always a loop-closing joint (no tree joint has its two axes) |
//!
//! A joint met when both its bodies are already in the tree closes a kinematic loop: it is
//! kept as a loop-closing joint ([`TreeFromModel::loop_joints`]) and solved by
//! [`super::loops`]. Slot joints are never walked, so they always close loops; a body that
//! only slot joints reach becomes a free root held by its slots. A joint between two bodies
//! that are both the world (the ground, fixed bodies) constrains nothing and is left out.

use std::collections::VecDeque;

use nalgebra::{Matrix3, Vector3};

use super::error::ArticulatedError;
use super::joint::JointType;
use super::spatial::{Motion, RigidInertia, Transform};
use super::tree::Tree;
use crate::{Body, JointKind, Model, GROUND};

/// Where each scene body is in the tree.
#[derive(Clone, Debug)]
pub struct BodyMap {
    /// The link of each scene body (`None` for the ground and fixed bodies).
    pub link_of_body: Vec<Option<usize>>,
    /// The scene body of each link.
    pub body_of_link: Vec<usize>,
    /// The body's centre of mass (its frame origin) in its link frame (m).
    pub com_in_link: Vec<Vector3<f64>>,
}

/// A tree built from a model, its body map, and the initial state.
#[derive(Clone, Debug)]
pub struct TreeFromModel {
    /// The tree.
    pub tree: Tree,
    /// Scene bodies ↔ links.
    pub map: BodyMap,
    /// Initial coordinates (the neutral q₀: the scene's pose).
    pub q: Vec<f64>,
    /// Initial velocities projected onto the joints.
    pub qd: Vec<f64>,
    /// The loop-closing joints (indices into the model's joints), in the model's order.
    pub loop_joints: Vec<usize>,
}

fn world_rot(b: &Body) -> Matrix3<f64> {
    b.world_from_body_rotation.to_rotation_matrix().into_inner()
}

/// The body's inertia about its centre of mass in body axes.
fn inertia_about_com(b: &Body) -> Matrix3<f64> {
    let r = b.body_from_principal.to_rotation_matrix().into_inner();
    r * Matrix3::from_diagonal(&b.principal_inertia_kg_m2) * r.transpose()
}

/// Builds the tree of `model` (see the module docs).
pub fn tree_from_model(model: &Model) -> Result<TreeFromModel, ArticulatedError> {
    let n_bodies = model.bodies.len();
    let mut tree = Tree::new(model.gravity_in_world);
    let mut map = BodyMap {
        link_of_body: vec![None; n_bodies],
        body_of_link: Vec::new(),
        com_in_link: Vec::new(),
    };
    // World pose of each link frame (rotation, origin) at the initial configuration.
    let mut link_pose: Vec<(Matrix3<f64>, Vector3<f64>)> = Vec::new();
    let mut used_joint = vec![false; model.joints.len()];
    let mut reached = vec![false; n_bodies];
    for (i, b) in model.bodies.iter().enumerate() {
        reached[i] = !b.is_dynamic() || i == GROUND;
    }
    let mut queue: VecDeque<usize> = (0..n_bodies).filter(|&i| reached[i]).collect();
    let mut next_root = 1;
    loop {
        while let Some(parent_body) = queue.pop_front() {
            for (ji, j) in model.joints.iter().enumerate() {
                if used_joint[ji]
                    || j.kind == JointKind::Slot
                    || (j.body1 != parent_body && j.body2 != parent_body)
                {
                    continue;
                }
                let forward = j.body1 == parent_body;
                let child_body = if forward { j.body2 } else { j.body1 };
                if reached[child_body] {
                    // Closes a loop: left for the loop solve (see the end).
                    continue;
                }
                used_joint[ji] = true;
                let cb = &model.bodies[child_body];
                let anchor_child_in_body = if forward {
                    j.anchor2_in_body2
                } else {
                    j.anchor1_in_body1
                };
                let r_child = world_rot(cb);
                let frame_origin = cb.position_in_world + r_child * anchor_child_in_body;
                let r_body1 = world_rot(&model.bodies[j.body1]);
                let joint = match j.kind {
                    JointKind::Ball => JointType::Spherical,
                    JointKind::Hinge => JointType::Revolute {
                        axis: r_child.tr_mul(&(r_body1 * j.hinge_axis_in_body1())),
                    },
                    JointKind::Prismatic => JointType::Prismatic {
                        axis: r_child.tr_mul(&(r_body1 * j.slide_axis_in_body1())),
                    },
                    JointKind::Fixed => JointType::Fixed,
                    JointKind::Slot => unreachable!("slot joints are skipped above"),
                };
                let parent_link = map.link_of_body[parent_body];
                // A root link's joint hangs from the world frame (the ground and fixed bodies
                // are the world, not links).
                let (rp, op) = match parent_link {
                    Some(l) => link_pose[l],
                    None => (Matrix3::identity(), Vector3::zeros()),
                };
                let x_t = Transform::between(&rp, &op, &r_child, &frame_origin);
                let com = -anchor_child_in_body;
                let inertia = RigidInertia::new(cb.mass_kg, com, inertia_about_com(cb));
                let link = tree.add_link(cb.name.clone(), parent_link, joint, x_t, inertia)?;
                map.link_of_body[child_body] = Some(link);
                map.body_of_link.push(child_body);
                map.com_in_link.push(com);
                link_pose.push((r_child, frame_origin));
                reached[child_body] = true;
                queue.push_back(child_body);
            }
        }
        // A body not reached yet floats: it becomes a root with a free joint.
        while next_root < n_bodies && reached[next_root] {
            next_root += 1;
        }
        if next_root >= n_bodies {
            break;
        }
        let b = &model.bodies[next_root];
        let r = world_rot(b);
        let x_t = Transform::between(
            &Matrix3::identity(),
            &Vector3::zeros(),
            &r,
            &b.position_in_world,
        );
        let inertia = RigidInertia::new(b.mass_kg, Vector3::zeros(), inertia_about_com(b));
        let link = tree.add_link(b.name.clone(), None, JointType::Free, x_t, inertia)?;
        map.link_of_body[next_root] = Some(link);
        map.body_of_link.push(next_root);
        map.com_in_link.push(Vector3::zeros());
        link_pose.push((r, b.position_in_world));
        reached[next_root] = true;
        queue.push_back(next_root);
    }

    let q = tree.neutral_q();
    let mut qd = vec![0.0; tree.nv()];
    // Initial velocities: each link's spatial velocity from its body's, minus what the
    // parent carries, projected onto the joint (at q₀, X_up = X_T).
    let mut v_link = vec![Motion::zero(); tree.links().len()];
    for (i, l) in tree.links().iter().enumerate() {
        let b = &model.bodies[map.body_of_link[i]];
        let (r, o) = link_pose[i];
        let v_origin = b.linear_velocity_in_world
            + b.angular_velocity_in_world
                .cross(&(o - b.position_in_world));
        let v = Motion::new(r.tr_mul(&b.angular_velocity_in_world), r.tr_mul(&v_origin));
        let carried = match l.parent {
            Some(p) => l.parent_to_joint.apply_motion(&v_link[p]),
            None => Motion::zero(),
        };
        let (iq, iv) = (l.q_offset, l.v_offset);
        let (nq, nv) = (l.joint.nq(), l.joint.nv());
        l.joint
            .velocity_from_motion(&q[iq..iq + nq], &(v - carried), &mut qd[iv..iv + nv]);
        v_link[i] = v;
    }
    let loop_joints = model
        .joints
        .iter()
        .enumerate()
        .filter(|(ji, j)| {
            !used_joint[*ji]
                && (map.link_of_body[j.body1].is_some() || map.link_of_body[j.body2].is_some())
        })
        .map(|(ji, _)| ji)
        .collect();
    Ok(TreeFromModel {
        tree,
        map,
        q,
        qd,
        loop_joints,
    })
}
