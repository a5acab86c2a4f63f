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
use crate::{Body, Joint, JointKind, Model, GROUND};

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
    let mut walk = Walk::new(model);
    loop {
        walk.walk_joints()?;
        // A body not reached yet floats: it becomes a root with a free joint.
        let Some(root) = walk.next_floating_body() else {
            break;
        };
        walk.add_free_root(root)?;
    }
    let Walk {
        tree,
        map,
        link_pose,
        used_joint,
        ..
    } = walk;
    let q = tree.neutral_q();
    let qd = initial_velocities(model, &tree, &map, &link_pose, &q);
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

/// The breadth-first walk of the joint graph: the tree so far, where each body went, and
/// what has been reached.
struct Walk<'a> {
    model: &'a Model,
    tree: Tree,
    map: BodyMap,
    /// World pose of each link frame (rotation, origin) at the initial configuration.
    link_pose: Vec<(Matrix3<f64>, Vector3<f64>)>,
    used_joint: Vec<bool>,
    reached: Vec<bool>,
    queue: VecDeque<usize>,
    /// No body before this one is left to float.
    next_root: usize,
}

impl<'a> Walk<'a> {
    /// The walk's start: the ground and the fixed bodies reached (they are the world).
    fn new(model: &'a Model) -> Self {
        let n_bodies = model.bodies.len();
        let mut reached = vec![false; n_bodies];
        for (i, b) in model.bodies.iter().enumerate() {
            reached[i] = !b.is_dynamic() || i == GROUND;
        }
        Self {
            model,
            tree: Tree::new(model.gravity_in_world),
            map: BodyMap {
                link_of_body: vec![None; n_bodies],
                body_of_link: Vec::new(),
                com_in_link: Vec::new(),
            },
            link_pose: Vec::new(),
            used_joint: vec![false; model.joints.len()],
            queue: (0..n_bodies).filter(|&i| reached[i]).collect(),
            reached,
            next_root: 1,
        }
    }

    /// Walks the joints from the queued bodies: each joint to a body not reached yet
    /// becomes that body's link (slot joints and loop-closing joints are left).
    fn walk_joints(&mut self) -> Result<(), ArticulatedError> {
        let model = self.model;
        while let Some(parent_body) = self.queue.pop_front() {
            for (ji, j) in model.joints.iter().enumerate() {
                if self.used_joint[ji]
                    || j.kind == JointKind::Slot
                    || (j.body1 != parent_body && j.body2 != parent_body)
                {
                    continue;
                }
                let forward = j.body1 == parent_body;
                let child_body = if forward { j.body2 } else { j.body1 };
                if self.reached[child_body] {
                    // Closes a loop: left for the loop solve (see the end).
                    continue;
                }
                self.used_joint[ji] = true;
                self.add_jointed_link(j, parent_body, child_body, forward)?;
            }
        }
        Ok(())
    }

    /// Joint `j` as the joint of `child_body`'s link under `parent_body`'s (`forward`: the
    /// child is the joint's body 2).
    fn add_jointed_link(
        &mut self,
        j: &Joint,
        parent_body: usize,
        child_body: usize,
        forward: bool,
    ) -> Result<(), ArticulatedError> {
        let model = self.model;
        let cb = &model.bodies[child_body];
        let anchor_child_in_body = if forward {
            j.anchor2_in_body2
        } else {
            j.anchor1_in_body1
        };
        let r_child = world_rot(cb);
        let frame_origin = cb.position_in_world + r_child * anchor_child_in_body;
        let joint = tree_joint(j, &world_rot(&model.bodies[j.body1]), &r_child);
        let parent_link = self.map.link_of_body[parent_body];
        // A root link's joint hangs from the world frame (the ground and fixed bodies
        // are the world, not links).
        let (rp, op) = match parent_link {
            Some(l) => self.link_pose[l],
            None => (Matrix3::identity(), Vector3::zeros()),
        };
        let x_t = Transform::between(&rp, &op, &r_child, &frame_origin);
        let com = -anchor_child_in_body;
        let inertia = RigidInertia::new(cb.mass_kg, com, inertia_about_com(cb));
        let link = self
            .tree
            .add_link(cb.name.clone(), parent_link, joint, x_t, inertia)?;
        self.reached_by(child_body, link, com, (r_child, frame_origin));
        Ok(())
    }

    /// The next body that no joint has reached, if any.
    fn next_floating_body(&mut self) -> Option<usize> {
        let n_bodies = self.model.bodies.len();
        while self.next_root < n_bodies && self.reached[self.next_root] {
            self.next_root += 1;
        }
        (self.next_root < n_bodies).then_some(self.next_root)
    }

    /// Body `b` as a root link with a free joint (its frame the body frame).
    fn add_free_root(&mut self, b: usize) -> Result<(), ArticulatedError> {
        let body = &self.model.bodies[b];
        let r = world_rot(body);
        let x_t = Transform::between(
            &Matrix3::identity(),
            &Vector3::zeros(),
            &r,
            &body.position_in_world,
        );
        let inertia = RigidInertia::new(body.mass_kg, Vector3::zeros(), inertia_about_com(body));
        let link = self
            .tree
            .add_link(body.name.clone(), None, JointType::Free, x_t, inertia)?;
        self.reached_by(b, link, Vector3::zeros(), (r, body.position_in_world));
        Ok(())
    }

    /// Records that `body` is `link` (centre of mass `com` in its frame, world pose `pose`)
    /// and queues it.
    fn reached_by(
        &mut self,
        body: usize,
        link: usize,
        com: Vector3<f64>,
        pose: (Matrix3<f64>, Vector3<f64>),
    ) {
        self.map.link_of_body[body] = Some(link);
        self.map.body_of_link.push(body);
        self.map.com_in_link.push(com);
        self.link_pose.push(pose);
        self.reached[body] = true;
        self.queue.push_back(body);
    }
}

/// The tree joint of scene joint `j` (not a slot) for a child link with world rotation
/// `r_child`; `r_body1` is the world rotation of the joint's body 1, whose frame gives the
/// axes.
fn tree_joint(j: &Joint, r_body1: &Matrix3<f64>, r_child: &Matrix3<f64>) -> JointType {
    match j.kind {
        JointKind::Ball => JointType::Spherical,
        JointKind::Hinge => JointType::Revolute {
            axis: r_child.tr_mul(&(r_body1 * j.hinge_axis_in_body1())),
        },
        JointKind::Prismatic => JointType::Prismatic {
            axis: r_child.tr_mul(&(r_body1 * j.slide_axis_in_body1())),
        },
        JointKind::Fixed => JointType::Fixed,
        JointKind::Slot => unreachable!("slot joints are skipped above"),
    }
}

/// Initial velocities: each link's spatial velocity from its body's, minus what the
/// parent carries, projected onto the joint (at q₀, X_up = X_T).
fn initial_velocities(
    model: &Model,
    tree: &Tree,
    map: &BodyMap,
    link_pose: &[(Matrix3<f64>, Vector3<f64>)],
    q: &[f64],
) -> Vec<f64> {
    let mut qd = vec![0.0; tree.nv()];
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
    qd
}
