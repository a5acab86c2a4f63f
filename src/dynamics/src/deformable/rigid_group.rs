//! Rigid groups (Jansson & Vergeest): a named subset of a deformable body's elements that
//! moves as one rigid body while it is rigid, switched at scheduled times or on command.
//!
//! # Mechanism
//! A rigid group is its elements welded together: a [`JointKind::Fixed`] joint (6 exact
//! rows: the anchors coincide and the relative orientation is kept) from each element to the
//! next in the group's order, at their relative pose at the switch. The welds are ordinary
//! joints of the solver, so the welded set is exactly a rigid body whose mass and inertia are
//! the elements' (the parallel-axis sum Σ [Iᵢ + mᵢ (|dᵢ|² E − dᵢ dᵢᵀ)] about its centre of
//! mass), with no second solver and no new body. The welds are appended after the scene's
//! joints in [`crate::Model::joints`]; [`Simulation::joints`] and
//! [`Simulation::joint_reactions`] list the scene's joints only.
//!
//! Connections between elements of a rigid group stay: their lengths no longer change, so
//! they keep the tension they had at the switch and do no work; they act again when the
//! group becomes deformable.
//!
//! # Switching
//! *To rigid*: the elements' velocities are replaced by the rigid motion with the same
//! linear momentum P = Σ mᵢ vᵢ and the same angular momentum about the centre of mass
//! L = Σ [mᵢ dᵢ × vᵢ + Iᵢ ωᵢ] (vᵢ = P/M + Ω × dᵢ, ωᵢ = Ω, Ω = I_c⁻¹ L): a perfectly inelastic
//! collision inside the group, so linear and angular momentum are conserved to round-off
//! and the kinetic energy it removes is booked as dissipated. (Leaving the velocities to
//! the welds would not do: their midpoint rows reverse, rather than remove, a relative
//! velocity they forbid.) Then the welds are made at the present poses.
//! *To deformable*: the welds are removed; velocities and poses are kept, so nothing jumps.
//!
//! Each switch rebuilds the solver's scratch for the new set of joints (the energy ledger,
//! time, fractures, contact state and queued loads carry over); the next step starts without
//! the last step's impulses, as after clipping the stylus. A scheduled switch takes effect
//! at the start of the first step that begins at or after its time.
//!
//! Velocities given to a rigid group's elements from outside
//! ([`Simulation::set_body_velocity`]) must be a rigid motion of the group: the welds would
//! reverse any other part in every step, as any joint does with a velocity it forbids.

use nalgebra::{Matrix3, Vector3};

use crate::error::SimError;
use crate::model::body::BodyId;
use crate::model::joint::{Joint, JointKind};
use crate::simulation::Simulation;
use crate::solver::Solver;

/// A switch of a rigid group at a given simulated time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupSwitch {
    /// When it takes effect (s): at the start of the first step that begins at or after it.
    pub time_secs: f64,
    /// Rigid (true) or deformable (false) from then on.
    pub rigid: bool,
}

/// A named set of elements that moves rigidly while [`RigidGroup::rigid`] (see the module
/// docs).
#[derive(Clone, Debug)]
pub struct RigidGroup {
    /// Unique name (a scene's groups are `<deformable>.<group>`).
    pub name: String,
    /// The elements, at least two distinct dynamic bodies, in weld order.
    pub elements: Vec<BodyId>,
    /// Whether the group is rigid now.
    pub rigid: bool,
    /// Switches still to come, in time order.
    pub switches: Vec<GroupSwitch>,
    /// The group's welds while it is rigid (empty while deformable).
    welds: Vec<Joint>,
}

impl RigidGroup {
    /// A deformable group with these elements and scheduled switches (sorted here).
    pub fn new(name: impl Into<String>, elements: Vec<BodyId>, switches: Vec<GroupSwitch>) -> Self {
        let mut switches = switches;
        switches.sort_by(|a, b| a.time_secs.total_cmp(&b.time_secs));
        Self {
            name: name.into(),
            elements,
            rigid: false,
            switches,
            welds: Vec::new(),
        }
    }
}

impl Simulation {
    /// Adds a rigid group; its switches at or before the present time are applied at once
    /// (a group switched rigid at time 0 starts rigid).
    ///
    /// # Errors
    /// [`SimError::BadRigidGroup`] for a duplicate name, fewer than two elements, an element
    /// that is not a dynamic body, listed twice or already in another group, or a switch time
    /// that is not finite; [`SimError::TooLarge`] if the welds would make the coupled solver's
    /// factor too large.
    pub fn add_rigid_group(&mut self, group: RigidGroup) -> Result<(), SimError> {
        let bad = |reason: String| SimError::BadRigidGroup {
            name: group.name.clone(),
            reason,
        };
        if self.model.rigid_groups.iter().any(|g| g.name == group.name) {
            return Err(bad("a group of this name exists".to_owned()));
        }
        if group.elements.len() < 2 {
            return Err(bad(format!(
                "{} element(s): a group needs at least two",
                group.elements.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for &e in &group.elements {
            if !self.model.bodies.get(e).is_some_and(|b| b.is_dynamic()) {
                return Err(bad(format!("body index {e} is not a moving body")));
            }
            if !seen.insert(e) {
                return Err(bad(format!(
                    "`{}` is listed twice",
                    self.model.bodies[e].name
                )));
            }
            if let Some(g) = self
                .model
                .rigid_groups
                .iter()
                .find(|g| g.elements.contains(&e))
            {
                return Err(bad(format!(
                    "`{}` is already in the group `{}`",
                    self.model.bodies[e].name, g.name
                )));
            }
        }
        if let Some(s) = group.switches.iter().find(|s| !s.time_secs.is_finite()) {
            return Err(bad(format!("switch time {} is not finite", s.time_secs)));
        }
        let mut group = group;
        group.rigid = false;
        group.welds.clear();
        self.model.rigid_groups.push(group);
        self.apply_due_group_switches()
    }

    /// The rigid groups, in the order they were added.
    pub fn rigid_groups(&self) -> &[RigidGroup] {
        &self.model.rigid_groups
    }

    /// Makes the named group rigid (`true`) or deformable (`false`) now, conserving linear
    /// and angular momentum (see the module docs). Setting the state it has does nothing.
    ///
    /// # Errors
    /// [`SimError::UnknownRigidGroup`] for a name that is not a group's;
    /// [`SimError::BadRigidGroup`] if its inertia cannot be inverted.
    pub fn set_group_rigid(&mut self, name: &str, rigid: bool) -> Result<(), SimError> {
        let g = self
            .model
            .rigid_groups
            .iter()
            .position(|g| g.name == name)
            .ok_or_else(|| SimError::UnknownRigidGroup {
                name: name.to_owned(),
            })?;
        self.switch_group(g, rigid)
    }

    /// Applies every scheduled switch whose time has come (called before each step).
    pub(crate) fn apply_due_group_switches(&mut self) -> Result<(), SimError> {
        // A step that begins within round-off of a switch time counts as beginning at it.
        let now = self.solver.time_secs + 1e-9 * self.params.dt_secs;
        for g in 0..self.model.rigid_groups.len() {
            while let Some(s) = self.model.rigid_groups[g].switches.first().copied() {
                if s.time_secs > now {
                    break;
                }
                self.model.rigid_groups[g].switches.remove(0);
                self.switch_group(g, s.rigid)?;
            }
        }
        Ok(())
    }

    fn switch_group(&mut self, g: usize, rigid: bool) -> Result<(), SimError> {
        if self.model.rigid_groups[g].rigid == rigid {
            return Ok(());
        }
        if rigid {
            self.move_group_rigidly(g)?;
            let group = &self.model.rigid_groups[g];
            let welds = group
                .elements
                .windows(2)
                .enumerate()
                .map(|(k, pair)| weld(&self.model.bodies, &group.name, k, pair[0], pair[1]))
                .collect();
            self.model.rigid_groups[g].welds = welds;
        } else {
            self.model.rigid_groups[g].welds.clear();
        }
        self.model.rigid_groups[g].rigid = rigid;
        self.rebuild_joints()
    }

    /// Gives the group's elements the rigid motion with their linear momentum and their
    /// angular momentum about their centre of mass; books the kinetic energy this removes as
    /// dissipated.
    fn move_group_rigidly(&mut self, g: usize) -> Result<(), SimError> {
        let elements = &self.model.rigid_groups[g].elements;
        let bodies = &mut self.model.bodies;
        let kinetic_before_j: f64 = elements.iter().map(|&e| bodies[e].kinetic_energy_j()).sum();
        let mass_kg: f64 = elements.iter().map(|&e| bodies[e].mass_kg).sum();
        let centre_m = elements
            .iter()
            .map(|&e| bodies[e].position_in_world * bodies[e].mass_kg)
            .sum::<Vector3<f64>>()
            / mass_kg;
        let mut momentum = Vector3::zeros();
        let mut angular_momentum = Vector3::zeros();
        let mut inertia = Matrix3::zeros();
        let (mut inertia_e, mut inverse_e) = (Matrix3::zeros(), Matrix3::zeros());
        for &e in elements {
            let b = &bodies[e];
            b.set_inertia_and_inverse_in_world(&mut inertia_e, &mut inverse_e);
            let d = b.position_in_world - centre_m;
            let p = b.linear_velocity_in_world * b.mass_kg;
            momentum += p;
            angular_momentum += d.cross(&p) + inertia_e * b.angular_velocity_in_world;
            inertia += inertia_e
                + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * b.mass_kg;
        }
        let omega = inertia
            .cholesky()
            .map(|c| c.solve(&angular_momentum))
            .ok_or_else(|| SimError::BadRigidGroup {
                name: self.model.rigid_groups[g].name.clone(),
                reason: "its inertia is not positive definite".to_owned(),
            })?;
        let velocity = momentum / mass_kg;
        for &e in elements {
            let b = &mut bodies[e];
            b.linear_velocity_in_world = velocity + omega.cross(&(b.position_in_world - centre_m));
            b.angular_velocity_in_world = omega;
        }
        let kinetic_after_j: f64 = elements.iter().map(|&e| bodies[e].kinetic_energy_j()).sum();
        let lost_j = kinetic_before_j - kinetic_after_j;
        self.solver.ledger.dissipated_j += lost_j;
        self.solver.diagnostics.dissipated_j += lost_j;
        self.solver.diagnostics.kinetic_j -= lost_j;
        Ok(())
    }

    /// Sets the model's joints to the scene's followed by the welds of the rigid groups and
    /// rebuilds the solver's scratch for them, keeping its running state.
    fn rebuild_joints(&mut self) -> Result<(), SimError> {
        let n = self.model.scene_joints;
        self.model.joints.truncate(n);
        for g in &self.model.rigid_groups {
            self.model.joints.extend(g.welds.iter().cloned());
        }
        let fresh = Solver::new(
            &self.model.bodies,
            &self.model.joints,
            &self.model.springs,
            self.params.method,
        )?;
        let old = std::mem::replace(&mut self.solver, fresh);
        let s = &mut self.solver;
        for (new, old) in s.reactions.iter_mut().zip(&old.reactions[..n]) {
            *new = *old;
        }
        s.spring_rows = old.spring_rows;
        s.stylus_block = old.stylus_block;
        s.loads = old.loads;
        s.ledger = old.ledger;
        s.diagnostics = old.diagnostics;
        s.time_secs = old.time_secs;
        s.contact = old.contact;
        s.fractures = old.fractures;
        // (The fresh solver's Newton gain starts with nothing carried over.)
        Ok(())
    }
}

/// The weld of `body2` to `body1` at their present relative pose, anchored at body 2's centre.
fn weld(
    bodies: &[crate::model::body::Body],
    group: &str,
    k: usize,
    body1: BodyId,
    body2: BodyId,
) -> Joint {
    let anchor1 = bodies[body1]
        .world_from_body()
        .inverse_transform_point(&bodies[body2].position_in_world.into())
        .coords;
    Joint::new(
        format!("{group}.weld{k}"),
        JointKind::Fixed,
        bodies,
        body1,
        body2,
        anchor1,
        Vector3::zeros(),
        Vector3::x(),
        Vector3::x(),
    )
}
