//! [`ArticulatedSim`]: the articulated method as a simulation of a scene's [`Model`], next to
//! [`crate::Simulation`]: the same bodies, springs, grab points, force elements and
//! external forces, the stylus spring ([`super::stylus`]), the same [`StepDiagnostics`] (ψ is
//! zero by construction for a tree; with loops, the constraint norm is ‖ψ‖ of the
//! loop-closing joints, see [`super::loops`]; joint reactions are not computed).
//!
//! The state is y = (q, q̇, W_ext, W_diss): the tree's coordinates and velocities, the work of
//! external forces and the energy dissipated by dampers, integrated together, so that the
//! energy balance E + W_diss − W_ext − E(0) is as accurate as the motion itself.
//!
//! A step advances the time by `dt_secs`: one step of semi-implicit Euler or RK4, or as many
//! adaptive RK45 steps as its tolerance needs (reported in [`IntegratorStats`]). While the
//! stylus is clipped, a step is integrated twice: a predictor without the spring, then the
//! step with the spring's impulse (see [`super::stylus`]); the counts include both.

use nalgebra::{Isometry3, Point3, Translation3, Vector3};

use super::aba::Workspace;
use super::dynamics::{first_non_finite_link, Dynamics};
use super::error::ArticulatedError;
use super::from_model::{tree_from_model, BodyMap};
use super::integrator::{next_step_size, Integrator, RkScratch};
use super::joint_forces::{JointActuator, JointForces, JointLimit};
use super::loops::Loops;
use super::spatial::Force;
use super::stylus::StylusSpring;
use super::tree::Tree;
use crate::{BodyId, GrabPoint, Model, Scene, StepDiagnostics};

mod ledger;

use ledger::Ledger;

/// The [`Model`] of a loaded scene (what [`Scene::build`] gives the default method). A scene
/// with contacts is refused: this method has none, and running it without them would report
/// bodies passing through each other as a result. So is one with rigid groups, which it
/// would run as deformable throughout.
pub fn scene_model(scene: &Scene) -> Result<Model, ArticulatedError> {
    if scene.contact.is_some() {
        // The caller names the scene (simulate, demo and run all do).
        return Err(ArticulatedError::Unsupported(
            "it has contacts (colliding shapes or planes), which this method does not model; \
             run it with the default method"
                .into(),
        ));
    }
    if let Some(j) = scene.joints.iter().find(|j| j.limits.any()) {
        return Err(ArticulatedError::Unsupported(format!(
            "joint `{}` has limits (`limits_rad`/`limits_m`), which this method does not take \
             from a scene file: its limits are exponential, set with \
             `ArticulatedSim::set_joint_limit`; run it with the default method",
            j.name
        )));
    }
    if !scene.rigid_groups.is_empty() {
        return Err(ArticulatedError::Unsupported(
            "it has rigid groups of deformable elements, which this method does not model; \
             run it with the default method"
                .into(),
        ));
    }
    let bad = |e: crate::SimError| ArticulatedError::Unsupported(e.to_string());
    let mut model = Model::new(
        scene.bodies.clone(),
        scene.joints.clone(),
        scene.springs.clone(),
        scene.grab_points.clone(),
        scene.gravity_in_world,
    )
    .map_err(bad)?;
    for f in &scene.forces {
        model.add_force_element(f.clone()).map_err(bad)?;
    }
    Ok(model)
}

/// Counts of the integrator's work since the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntegratorStats {
    /// Steps taken (accepted steps for RK45).
    pub accepted_steps: usize,
    /// RK45 trial steps rejected by the error test.
    pub rejected_steps: usize,
    /// Evaluations of the dynamics (each one ABA).
    pub evaluations: usize,
}

/// Settings of an [`ArticulatedSim`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArticulatedParams {
    /// The step (s): the fixed step of Euler and RK4, the reporting interval of RK45.
    pub dt_secs: f64,
    /// The integrator.
    pub integrator: Integrator,
}

impl Default for ArticulatedParams {
    fn default() -> Self {
        Self {
            dt_secs: 0.01,
            integrator: Integrator::SemiImplicitEuler,
        }
    }
}

/// A scene's model simulated by the articulated-body method (see the module docs).
#[derive(Clone, Debug)]
pub struct ArticulatedSim {
    pub(super) dynamics: Dynamics,
    pub(super) y: Vec<f64>,
    pub(super) y_new: Vec<f64>,
    /// The adaptive integrator's running state within a step.
    y_work: Vec<f64>,
    dy: Vec<f64>,
    rk: RkScratch,
    pub(super) params: ArticulatedParams,
    time_secs: f64,
    steps: usize,
    h_adaptive: f64,
    pub(super) stats: IntegratorStats,
    /// The stylus spring while clipped.
    pub(super) stylus: StylusSpring,
    diagnostics: StepDiagnostics,
    ledger: Ledger,
}

impl ArticulatedSim {
    /// Builds the tree of `model` (see [`super::from_model`]) and its initial state.
    pub fn new(model: &Model, params: ArticulatedParams) -> Result<Self, ArticulatedError> {
        if !(params.dt_secs > 0.0 && params.dt_secs.is_finite()) {
            return Err(ArticulatedError::BadParameter {
                field: "dt_secs",
                value: params.dt_secs,
            });
        }
        if let Integrator::Rk45 { tolerance } = params.integrator {
            if !(tolerance > 0.0 && tolerance.is_finite()) {
                return Err(ArticulatedError::BadParameter {
                    field: "tolerance",
                    value: tolerance,
                });
            }
        }
        let mut built = tree_from_model(model)?;
        let mut ws = Workspace::new(&built.tree);
        let mut loops = Loops::new(&built.tree, model, &built.loop_joints, params.dt_secs);
        loops.assemble(
            &built.tree,
            &mut ws,
            &built.map,
            model,
            &mut built.q,
            &mut built.qd,
        )?;
        let (nq, nv) = (built.tree.nq(), built.tree.nv());
        let n = nq + nv + 2;
        let mut y = vec![0.0; n];
        y[..nq].copy_from_slice(&built.q);
        y[nq..nq + nv].copy_from_slice(&built.qd);
        let n_links = built.tree.links().len();
        let mut sim = Self {
            dynamics: Dynamics {
                tree: built.tree,
                ws,
                map: built.map,
                model: model.clone(),
                loads: Vec::with_capacity(16),
                f_ext: vec![Force::zero(); n_links],
                tau: vec![0.0; nv],
                loops,
                joint_forces: JointForces::default(),
                kinematics_current: false,
            },
            stylus: StylusSpring::new(),
            y_new: y.clone(),
            y_work: y.clone(),
            dy: vec![0.0; n],
            rk: RkScratch::new(n),
            y,
            params,
            time_secs: 0.0,
            steps: 0,
            h_adaptive: params.dt_secs,
            stats: IntegratorStats::default(),
            diagnostics: StepDiagnostics::default(),
            ledger: Ledger::new(),
        };
        for j in model.joints.iter().filter(|j| j.damping > 0.0) {
            let (_, iv) = sim.joint_coordinate(&j.name).map_err(|e| match e {
                ArticulatedError::Unsupported(why) => {
                    ArticulatedError::Unsupported(format!("{why} (it has damping)"))
                }
                other => other,
            })?;
            sim.dynamics.joint_forces.dampers.push((iv, j.damping));
        }
        sim.restart_balance();
        Ok(sim)
    }

    /// Builds the simulation of a loaded scene (its bodies with their initial velocities,
    /// joints, springs, grab points, gravity and force elements).
    pub fn from_scene(scene: &Scene, params: ArticulatedParams) -> Result<Self, ArticulatedError> {
        let model = scene_model(scene)?;
        Self::new(&model, params)
    }

    /// The tree.
    pub fn tree(&self) -> &Tree {
        &self.dynamics.tree
    }

    /// The loop-closing joints and their rows.
    pub fn loops(&self) -> &Loops {
        &self.dynamics.loops
    }

    /// Which link each scene body is.
    pub fn body_map(&self) -> &BodyMap {
        &self.dynamics.map
    }

    /// The model it was built from (bodies keep their initial state).
    pub fn model(&self) -> &Model {
        &self.dynamics.model
    }

    /// The settings.
    pub fn params(&self) -> &ArticulatedParams {
        &self.params
    }

    /// The step (s).
    pub fn dt_secs(&self) -> f64 {
        self.params.dt_secs
    }

    /// Simulated time (s).
    pub fn time_secs(&self) -> f64 {
        self.time_secs
    }

    /// Joint coordinates q.
    pub fn q(&self) -> &[f64] {
        &self.y[..self.dynamics.tree.nq()]
    }

    /// Joint velocities q̇.
    pub fn qd(&self) -> &[f64] {
        let (nq, nv) = (self.dynamics.tree.nq(), self.dynamics.tree.nv());
        &self.y[nq..nq + nv]
    }

    /// Sets the joint state (before the first step; the energy balance starts again from it).
    /// With loops the state is taken as given: a state that does not close them shows in
    /// ψ and is pulled closed by the drift correction.
    pub fn set_state(&mut self, q: &[f64], qd: &[f64]) {
        let (nq, nv) = (self.dynamics.tree.nq(), self.dynamics.tree.nv());
        self.y[..nq].copy_from_slice(q);
        self.y[nq..nq + nv].copy_from_slice(qd);
        self.dynamics.tree.normalise_q(&mut self.y[..nq]);
        self.restart_balance();
    }

    /// The integrator's counts since the start.
    pub fn stats(&self) -> IntegratorStats {
        self.stats
    }

    /// The diagnostics of the last step (or of the initial state).
    pub fn diagnostics(&self) -> &StepDiagnostics {
        &self.diagnostics
    }

    /// Adds a force (N, world) at a world point for the next step only (e.g. wind); its work
    /// is booked as external work. Forces on the ground or fixed bodies are ignored.
    pub fn apply_external_force(
        &mut self,
        body: BodyId,
        force_in_world: Vector3<f64>,
        point_in_world: Point3<f64>,
    ) {
        let Some(Some(l)) = self.dynamics.map.link_of_body.get(body).copied() else {
            return;
        };
        let (r, o) = self.dynamics.ws.world_from_link(l);
        let p_in_link = r.tr_mul(&(point_in_world.coords - o));
        self.dynamics.loads.push((l, p_in_link, force_in_world));
    }

    /// The (q index, q̇ index) of the scene joint `name` if it is a one-degree-of-freedom
    /// joint of the tree; otherwise an error saying why not.
    fn joint_coordinate(&self, name: &str) -> Result<(usize, usize), ArticulatedError> {
        let d = &self.dynamics;
        let unsupported =
            |why: &str| ArticulatedError::Unsupported(format!("joint `{name}` {why}"));
        let ji = d
            .model
            .joints
            .iter()
            .position(|j| j.name == name)
            .ok_or_else(|| unsupported("is not in the scene"))?;
        if d.loops.joints().contains(&ji) {
            return Err(unsupported(
                "closes a loop: limits and actuators need a tree joint",
            ));
        }
        let j = &d.model.joints[ji];
        let links = d.tree.links();
        // The tree joint's link is one of the two bodies', its parent the other's.
        let link = [(j.body1, j.body2), (j.body2, j.body1)]
            .into_iter()
            .find_map(|(parent_body, child_body)| {
                let l = d.map.link_of_body[child_body]?;
                let parent_link = links[l].parent;
                (parent_link == d.map.link_of_body[parent_body]).then_some(l)
            })
            .ok_or_else(|| unsupported("is not a joint of the tree"))?;
        let l = &links[link];
        if l.joint.nv() != 1 {
            return Err(unsupported(&format!(
                "is a {} joint: limits and actuators need one degree of freedom",
                l.joint.name()
            )));
        }
        Ok((l.q_offset, l.v_offset))
    }

    /// Sets an exponential limit with damping on the scene joint `name` (a hinge or
    /// prismatic joint of the tree; see [`super::joint_forces`]). Before the first step: the
    /// energy balance starts from the state with the limit's energy.
    pub fn set_joint_limit(
        &mut self,
        name: &str,
        limit: JointLimit,
    ) -> Result<(), ArticulatedError> {
        limit.validate()?;
        let (iq, iv) = self.joint_coordinate(name)?;
        let limits = &mut self.dynamics.joint_forces.limits;
        limits.retain(|(q, _, _)| *q != iq);
        limits.push((iq, iv, limit));
        let (q, qd) = (self.q().to_vec(), self.qd().to_vec());
        self.set_state(&q, &qd);
        Ok(())
    }

    /// Adds an actuator on the scene joint `name` (a hinge or prismatic joint of the tree;
    /// see [`super::joint_forces`]); its work is booked as external work.
    pub fn add_joint_actuator(
        &mut self,
        name: &str,
        actuator: JointActuator,
    ) -> Result<(), ArticulatedError> {
        actuator.validate()?;
        let (_, iv) = self.joint_coordinate(name)?;
        self.dynamics.joint_forces.actuators.push((iv, actuator));
        Ok(())
    }

    /// Pose `world_from_body` of a scene body.
    pub fn body_pose(&self, body: BodyId) -> Isometry3<f64> {
        let (rot, x, _, _) = self.dynamics.body_state(body);
        Isometry3::from_parts(Translation3::from(x), rot)
    }

    /// Velocity of the centre of mass and angular velocity of a scene body (world).
    pub fn body_velocity(&self, body: BodyId) -> (Vector3<f64>, Vector3<f64>) {
        let (_, _, v, w) = self.dynamics.body_state(body);
        (v, w)
    }

    /// The grab points of the scene.
    pub fn grab_points(&self) -> &[GrabPoint] {
        &self.dynamics.model.grab_points
    }

    /// World position of grab point `index`.
    pub fn grab_point_in_world(&self, index: usize) -> Option<Point3<f64>> {
        let g = self.dynamics.model.grab_points.get(index)?;
        Some(Point3::from(
            self.dynamics.body_point(g.body, &g.point_in_body).0,
        ))
    }

    /// Advances the time by `dt_secs` (see the module docs). On an error (including a loop
    /// that drifted past [`super::loops::DRIFT_BOUND_M`]) the state is the one before the
    /// step, and the step's one-step loads are dropped.
    pub fn step(&mut self) -> Result<(), ArticulatedError> {
        self.step_n(1)
    }

    /// Advances the time by `n` steps of `dt_secs`, the one-step loads given before
    /// ([`ArticulatedSim::apply_external_force`]) acting over all of them: a caller that
    /// updates its forces every n·h (the rig's wind) runs the finer step. On an error the
    /// state is the one after the last step that succeeded, and the loads are dropped.
    pub fn step_n(&mut self, n: usize) -> Result<(), ArticulatedError> {
        let mut result = Ok(());
        for _ in 0..n {
            let t0 = self.time_secs;
            let stepped = if self.stylus.acts() {
                self.integrate_with_stylus(t0)
            } else {
                self.integrate(t0)
            };
            result = stepped.and_then(|()| self.finish_step(t0 + self.params.dt_secs));
            if result.is_err() {
                self.dynamics.kinematics_current = false;
                break;
            }
        }
        self.dynamics.loads.clear();
        result
    }

    /// One step of the integrator from `y` into `y_new`, with the forces of the moment.
    pub(super) fn integrate(&mut self, t0: f64) -> Result<(), ArticulatedError> {
        let h = self.params.dt_secs;
        let (nq, nv) = (self.dynamics.tree.nq(), self.dynamics.tree.nv());
        match self.params.integrator {
            Integrator::SemiImplicitEuler => {
                self.dynamics.derivative(t0, &self.y, &mut self.dy, false)?;
                self.stats.evaluations += 1;
                self.y_new.copy_from_slice(&self.y);
                for i in nq..self.y.len() {
                    self.y_new[i] += h * self.dy[i];
                }
                let (q, rest) = self.y_new.split_at_mut(nq);
                self.dynamics.tree.advance_q(q, &rest[..nv], h);
                self.stats.accepted_steps += 1;
            }
            Integrator::Rk4 => {
                self.y_new.copy_from_slice(&self.y);
                let dynamics = &mut self.dynamics;
                self.rk.rk4_step(t0, &mut self.y_new, h, &mut |t, y, dy| {
                    dynamics.derivative(t, y, dy, true)
                })?;
                self.dynamics.tree.normalise_q(&mut self.y_new[..nq]);
                self.stats.evaluations += 4;
                self.stats.accepted_steps += 1;
            }
            Integrator::Rk45 { tolerance } => {
                self.advance_adaptive(t0, t0 + h, tolerance)?;
            }
        }
        Ok(())
    }

    /// RK45 from t0 to t1 into `y_new` (from `y`).
    fn advance_adaptive(
        &mut self,
        t0: f64,
        t1: f64,
        tolerance: f64,
    ) -> Result<(), ArticulatedError> {
        let nq = self.dynamics.tree.nq();
        let mut y = std::mem::take(&mut self.y_work);
        y.copy_from_slice(&self.y);
        let mut t = t0;
        while t < t1 {
            let remaining = t1 - t;
            let truncated = self.h_adaptive >= remaining;
            let h = if truncated {
                remaining
            } else {
                self.h_adaptive
            };
            let dynamics = &mut self.dynamics;
            let trial =
                self.rk
                    .rkf45_trial(t, &y, h, tolerance, &mut self.y_new, &mut |t, y, dy| {
                        dynamics.derivative(t, y, dy, true)
                    });
            let err = match trial {
                Ok(err) => err,
                Err(e) => {
                    self.y_work = y;
                    return Err(e);
                }
            };
            self.stats.evaluations += 6;
            let next = next_step_size(h, err);
            if err <= 1.0 {
                self.dynamics.tree.normalise_q(&mut self.y_new[..nq]);
                y.copy_from_slice(&self.y_new);
                t = if truncated { t1 } else { t + h };
                self.stats.accepted_steps += 1;
                // A step cut short to land on t1 says nothing against the longer step.
                self.h_adaptive = if truncated {
                    self.h_adaptive.max(next)
                } else {
                    next
                };
            } else {
                self.stats.rejected_steps += 1;
                self.h_adaptive = next;
                if self.h_adaptive < 1e-12 * t1.abs().max(1.0) {
                    self.y_work = y;
                    return Err(ArticulatedError::StepTooSmall {
                        time_secs: t,
                        step_secs: self.h_adaptive,
                        tolerance,
                    });
                }
            }
        }
        self.y_new.copy_from_slice(&y);
        self.y_work = y;
        Ok(())
    }

    /// Checks the new state, takes it and updates the diagnostics.
    fn finish_step(&mut self, t1: f64) -> Result<(), ArticulatedError> {
        if let Some(body) = first_non_finite_link(&self.dynamics.tree, &self.y_new) {
            return Err(ArticulatedError::NonFinite {
                time_secs: t1,
                body,
            });
        }
        if !self.dynamics.loops.is_empty() {
            let d = &mut self.dynamics;
            let (nq, nv) = (d.tree.nq(), d.tree.nv());
            let (q, qd) = (&self.y_new[..nq], &self.y_new[nq..nq + nv]);
            d.ws.kinematics(&d.tree, q, qd);
            d.loops.evaluate(&d.tree, &d.ws, &d.map, &d.model);
            d.loops.check_drift(&d.model, t1)?;
        }
        std::mem::swap(&mut self.y, &mut self.y_new);
        self.steps += 1;
        self.time_secs = t1;
        self.close_stylus_step();
        self.update_diagnostics();
        Ok(())
    }
}
