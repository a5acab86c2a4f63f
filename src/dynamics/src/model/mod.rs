//! The model a simulation moves: bodies (index 0 the ground), joints, springs, grab points and
//! gravity, checked for consistency once when built.

pub mod body;
pub mod damper;
pub mod force;
pub mod grab;
pub mod joint;
pub mod limit;
pub mod shape;
pub mod spring;
pub mod stylus;
pub mod support;
pub mod visual;

use nalgebra::Vector3;

use super::contact::ContactModel;
use super::deformable::RigidGroup;
use super::error::SimError;
use crate::model::body::{Body, BodyId};
use crate::model::force::ForceElement;
use crate::model::grab::GrabPoint;
use crate::model::joint::Joint;
use crate::model::spring::Spring;

/// Bodies and the elements between them (world frame, SI).
#[derive(Clone, Debug)]
pub struct Model {
    /// All bodies; index 0 is the fixed ground.
    pub bodies: Vec<Body>,
    /// Joints: the scene's, in scene order, then the welds of the rigid groups that are rigid
    /// now (see [`crate::deformable::rigid_group`]).
    pub joints: Vec<Joint>,
    /// How many of [`Self::joints`] are the scene's.
    pub scene_joints: usize,
    /// The rigid groups of deformable bodies' elements.
    pub rigid_groups: Vec<RigidGroup>,
    /// Spring-dampers between body points.
    pub springs: Vec<Spring>,
    /// Named points the stylus may clip to.
    pub grab_points: Vec<GrabPoint>,
    /// Gravity (m/s², world).
    pub gravity_in_world: Vector3<f64>,
    /// Forces and torques that act in every step (a scene's `[[force]]` tables).
    pub force_elements: Vec<ForceElement>,
    /// Contact geometry and settings (none: nothing collides).
    pub contact: Option<ContactModel>,
}

impl Model {
    /// Checks that `bodies[0]` is the ground and that every element refers to a body.
    pub fn new(
        bodies: Vec<Body>,
        joints: Vec<Joint>,
        springs: Vec<Spring>,
        grab_points: Vec<GrabPoint>,
        gravity_in_world: Vector3<f64>,
    ) -> Result<Self, SimError> {
        if bodies.first().is_none_or(|b| b.is_dynamic()) {
            return Err(SimError::NoGround);
        }
        let n = bodies.len();
        let check = |what: &'static str, name: &str, id: BodyId| {
            if id >= n {
                Err(SimError::UnknownBodyIndex {
                    what,
                    name: name.to_owned(),
                    index: id,
                })
            } else {
                Ok(())
            }
        };
        for j in &joints {
            check("joint", &j.name, j.body1)?;
            check("joint", &j.name, j.body2)?;
            if let Some((field, reason)) = j.limits.problem(j.kind) {
                return Err(SimError::BadJointLimit {
                    name: j.name.clone(),
                    field,
                    reason,
                });
            }
        }
        for s in &springs {
            check("spring", &s.name, s.body1)?;
            check("spring", &s.name, s.body2)?;
        }
        for g in &grab_points {
            check("grab point", &g.name, g.body)?;
        }
        Ok(Self {
            bodies,
            scene_joints: joints.len(),
            joints,
            rigid_groups: Vec::new(),
            springs,
            grab_points,
            gravity_in_world,
            force_elements: Vec::new(),
            contact: None,
        })
    }

    /// Adds a force element after checking that it acts on a dynamic body of the model and
    /// that its numbers are usable.
    pub fn add_force_element(&mut self, element: ForceElement) -> Result<(), SimError> {
        let Some(body) = self.bodies.get(element.body) else {
            return Err(SimError::UnknownBodyIndex {
                what: "force element",
                name: element.name,
                index: element.body,
            });
        };
        if !body.is_dynamic() {
            return Err(SimError::BadForceElement {
                name: element.name,
                reason: "it acts on a fixed body".to_owned(),
            });
        }
        element.validate()?;
        self.force_elements.push(element);
        Ok(())
    }

    /// The body with this name, if any.
    pub fn body_id(&self, name: &str) -> Option<BodyId> {
        self.bodies.iter().position(|b| b.name == name)
    }
}
