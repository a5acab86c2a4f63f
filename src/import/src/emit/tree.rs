//! The link tree of a model checked (every joint's links exist, one parent per link, no cycle)
//! and placed: forward kinematics at the initial joint positions, in the file's frame and
//! units (the base pose and the scale are applied when the scene text is written).

use std::collections::HashMap;

use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion};

use crate::error::{ImportError, Location};
use crate::model::{Joint, JointKind, Model, WORLD};
use crate::options::ImportOptions;

/// The checked tree and its links' poses at the initial positions.
pub(crate) struct Tree {
    /// Per link: the index of the joint whose child it is, if any.
    pub parent_joint: Vec<Option<usize>>,
    /// Per link: its frame in the file's world frame (file units).
    pub world_from_link: Vec<Isometry3<f64>>,
    /// Links parents first.
    pub order: Vec<usize>,
    /// Per joint: its initial position (rad or m; 0 for joints without one coordinate).
    pub q0: Vec<f64>,
    /// Link index by name.
    pub index: HashMap<String, usize>,
}

/// An error about a joint of the model, at its definition.
pub(crate) fn joint_error(j: &Joint, message: impl Into<String>) -> ImportError {
    ImportError::Invalid {
        at: j.at.clone(),
        element: format!("joint \"{}\"", j.name),
        message: message.into(),
    }
}

/// Checks the tree and places its links.
pub(crate) fn build(model: &Model, options: &ImportOptions) -> Result<Tree, ImportError> {
    let mut index = HashMap::with_capacity(model.links.len());
    for (i, l) in model.links.iter().enumerate() {
        if index.insert(l.name.clone(), i).is_some() {
            return Err(ImportError::Invalid {
                at: l.at.clone(),
                element: format!("link \"{}\"", l.name),
                message: "a second link of this name (link names must be unique)".into(),
            });
        }
    }
    let mut parent_joint: Vec<Option<usize>> = vec![None; model.links.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); model.links.len()];
    let mut world_children = Vec::new();
    for (k, j) in model.joints.iter().enumerate() {
        let Some(&c) = index.get(&j.child) else {
            return Err(joint_error(
                j,
                format!("its child link \"{}\" does not exist", j.child),
            ));
        };
        if let Some(other) = parent_joint[c] {
            return Err(joint_error(
                j,
                format!(
                    "link \"{}\" has two parents: this joint and joint \"{}\" ({}) (a tree \
                     gives every link one parent; close loops with MJCF equality rows)",
                    j.child, model.joints[other].name, model.joints[other].at
                ),
            ));
        }
        parent_joint[c] = Some(k);
        if j.parent == WORLD && !index.contains_key(WORLD) {
            world_children.push(c);
        } else {
            let Some(&p) = index.get(&j.parent) else {
                return Err(joint_error(
                    j,
                    format!("its parent link \"{}\" does not exist", j.parent),
                ));
            };
            children[p].push(c);
        }
    }
    let q = initial_positions(model, options)?;
    let mut world_from_link = vec![Isometry3::identity(); model.links.len()];
    let mut order = Vec::with_capacity(model.links.len());
    let mut q0 = vec![0.0; model.joints.len()];
    // Roots (no joint) and the world's children first, then breadth-first.
    let mut queue: std::collections::VecDeque<usize> = (0..model.links.len())
        .filter(|&i| parent_joint[i].is_none())
        .chain(world_children)
        .collect();
    while let Some(i) = queue.pop_front() {
        if let Some(k) = parent_joint[i] {
            let j = &model.joints[k];
            let world_from_parent = match index.get(&j.parent) {
                Some(&p) => world_from_link[p],
                None => Isometry3::identity(),
            };
            let (pose, q_scalar) = child_pose(j, q.get(j.name.as_str()).map(|v| v.as_slice()))?;
            q0[k] = q_scalar;
            world_from_link[i] = world_from_parent * pose;
        }
        order.push(i);
        queue.extend(children[i].iter().copied());
    }
    if order.len() < model.links.len() {
        let stuck = (0..model.links.len())
            .find(|&i| !order.contains(&i))
            .and_then(|i| parent_joint[i])
            .expect("a link not reached has a parent joint");
        return Err(joint_error(
            &model.joints[stuck],
            "the links form a cycle through this joint (a tree has none; close loops with \
             MJCF equality rows)",
        ));
    }
    Ok(Tree {
        parent_joint,
        world_from_link,
        order,
        q0,
        index,
    })
}

/// The file's initial positions overridden by the command line's; a name that is no joint is
/// an error naming it.
fn initial_positions<'m>(
    model: &'m Model,
    options: &ImportOptions,
) -> Result<HashMap<&'m str, Vec<f64>>, ImportError> {
    let known: HashMap<&str, &Joint> = model.joints.iter().map(|j| (j.name.as_str(), j)).collect();
    let mut q: HashMap<&str, Vec<f64>> = HashMap::new();
    for (name, values) in &model.initial_positions {
        let Some(j) = known.get(name.as_str()) else {
            return Err(ImportError::Invalid {
                at: Location {
                    file: model.source.clone(),
                    line: 0,
                },
                element: format!("joint \"{name}\""),
                message: "an initial position is given for a joint the model does not have".into(),
            });
        };
        q.insert(j.name.as_str(), values.clone());
    }
    for (name, value) in &options.joint_positions {
        let Some(j) = known.get(name.as_str()) else {
            let mut names: Vec<&str> = known.keys().copied().collect();
            names.sort_unstable();
            return Err(ImportError::Invalid {
                at: Location {
                    file: model.source.clone(),
                    line: 0,
                },
                element: format!("joint \"{name}\""),
                message: format!(
                    "--joint {name}={value}: the model has no joint of this name (its joints: {})",
                    names.join(", ")
                ),
            });
        };
        if !value.is_finite() {
            return Err(joint_error(
                j,
                format!("--joint {name}={value}: not a finite number"),
            ));
        }
        q.insert(j.name.as_str(), vec![*value]);
    }
    Ok(q)
}

/// The child's frame in the parent's at position `q` (none: the file's zero pose), and the
/// joint's scalar position (0 for joints without one coordinate).
fn child_pose(j: &Joint, q: Option<&[f64]>) -> Result<(Isometry3<f64>, f64), ImportError> {
    let about_anchor = |r: UnitQuaternion<f64>| {
        let a = Translation3::from(j.anchor_in_child);
        Isometry3::from_parts(a, UnitQuaternion::identity())
            * Isometry3::from_parts(Translation3::identity(), r)
            * Isometry3::from_parts(a.inverse(), UnitQuaternion::identity())
    };
    let count = |n: usize| -> Result<(), ImportError> {
        let Some(v) = q else { return Ok(()) };
        if v.len() != n {
            return Err(joint_error(
                j,
                format!(
                    "{} initial position values given, a {:?} joint takes {n}",
                    v.len(),
                    j.kind
                ),
            ));
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(joint_error(
                j,
                format!("initial position {v:?}: not finite"),
            ));
        }
        if n >= 4 && v[n - 4..].iter().all(|&x| x == 0.0) {
            return Err(joint_error(
                j,
                format!("initial position {v:?}: a zero quaternion"),
            ));
        }
        Ok(())
    };
    match j.kind {
        JointKind::Revolute | JointKind::Prismatic => {
            count(1)?;
            let x = q.map_or(0.0, |v| v[0]);
            let motion = if j.kind == JointKind::Revolute {
                about_anchor(UnitQuaternion::from_axis_angle(&j.axis_in_child, x))
            } else {
                Isometry3::from_parts(
                    Translation3::from(j.axis_in_child.into_inner() * x),
                    UnitQuaternion::identity(),
                )
            };
            Ok((j.parent_from_child * motion, x))
        }
        JointKind::Fixed => {
            count(0)?;
            Ok((j.parent_from_child, 0.0))
        }
        JointKind::Ball => {
            count(4)?;
            let r = q.map_or(UnitQuaternion::identity(), |v| {
                quaternion(v[0], v[1], v[2], v[3])
            });
            Ok((j.parent_from_child * about_anchor(r), 0.0))
        }
        JointKind::Free => {
            count(7)?;
            // MJCF's free joint: the position is the body's pose in the parent (world) frame.
            let pose = q.map_or(j.parent_from_child, |v| {
                Isometry3::from_parts(
                    Translation3::new(v[0], v[1], v[2]),
                    quaternion(v[3], v[4], v[5], v[6]),
                )
            });
            Ok((pose, 0.0))
        }
        JointKind::Planar => Err(joint_error(
            j,
            "planar joints are not supported (the scene format has no planar joint): \
             replace it by two prismatic joints and a revolute one",
        )),
    }
}

fn quaternion(w: f64, x: f64, y: f64, z: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
}
