//! [`ArticulatedSim`]: the articulated method as a simulation of a scene's [`Model`], next to
//! [`crate::sim::Simulation`]: the same bodies, springs, grab points, force elements and
//! external forces, the same [`StepDiagnostics`] (ψ is zero by construction for a tree; joint
//! reactions are not computed).
//!
//! The state is y = (q, q̇, W_ext, W_diss): the tree's coordinates and velocities, the work of
//! external forces and the energy dissipated by dampers, integrated together, so that the
//! energy balance E + W_diss − W_ext − E(0) is as accurate as the motion itself.
//!
//! A step advances the time by `dt_secs`: one step of semi-implicit Euler or RK4, or as many
//! adaptive RK45 steps as its tolerance needs (reported in [`IntegratorStats`]).

use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

use super::aba::{point_force, Workspace};
use super::error::ArticulatedError;
use super::from_model::{tree_from_model, BodyMap};
use super::integrator::{next_step_size, Integrator, RkScratch};
use super::spatial::Force;
use super::tree::Tree;
use crate::sim::{BodyId, ForceElement, GrabPoint, Model, Scene, Spring, StepDiagnostics};

/// The [`Model`] of a loaded scene (what [`Scene::build`] gives the default method).
pub fn scene_model(scene: &Scene) -> Result<Model, ArticulatedError> {
    let bad = |e: crate::sim::SimError| ArticulatedError::Unsupported(e.to_string());
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

/// Everything the right-hand side f(t, y) needs: the tree, its scratch and the force
/// elements.
#[derive(Clone, Debug)]
struct Dynamics {
    tree: Tree,
    ws: Workspace,
    map: BodyMap,
    model: Model,
    /// Forces for the next step only: (link, point in the link frame, force in the world).
    loads: Vec<(usize, Vector3<f64>, Vector3<f64>)>,
    f_ext: Vec<Force>,
    tau: Vec<f64>,
    /// Whether `ws` holds the kinematics of the system's current state y (set after each
    /// step's diagnostics; the next evaluation at y then skips pass 1).
    kinematics_current: bool,
}

impl Dynamics {
    /// World pose (rotation, centre of mass) and velocities (of the centre of mass, angular)
    /// of a scene body at the last kinematics; fixed bodies keep the model's pose.
    fn body_state(
        &self,
        body: BodyId,
    ) -> (
        UnitQuaternion<f64>,
        Vector3<f64>,
        Vector3<f64>,
        Vector3<f64>,
    ) {
        match self.map.link_of_body[body] {
            Some(l) => {
                let (r, _) = self.ws.world_from_link(l);
                let c = &self.map.com_in_link[l];
                let w = r * self.ws.link_velocity(l).ang;
                (
                    UnitQuaternion::from_matrix(&r),
                    self.ws.point_in_world(l, c),
                    self.ws.point_velocity_in_world(l, c),
                    w,
                )
            }
            None => {
                let b = &self.model.bodies[body];
                (
                    b.world_from_body_rotation,
                    b.position_in_world,
                    Vector3::zeros(),
                    Vector3::zeros(),
                )
            }
        }
    }

    /// World position and velocity of a point given in a body's frame.
    fn body_point(&self, body: BodyId, p_in_body: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
        match self.map.link_of_body[body] {
            Some(l) => {
                let p = p_in_body + self.map.com_in_link[l];
                (
                    self.ws.point_in_world(l, &p),
                    self.ws.point_velocity_in_world(l, &p),
                )
            }
            None => (
                self.model.bodies[body].point_in_world(p_in_body).coords,
                Vector3::zeros(),
            ),
        }
    }

    fn add_force(&mut self, body: BodyId, point: &Vector3<f64>, force: &Vector3<f64>) {
        if let Some(l) = self.map.link_of_body[body] {
            self.f_ext[l] += point_force(point, force);
        }
    }

    /// Kinematics at (q, q̇) and the external forces there; returns (P_ext, P_diss) (W).
    fn forces(&mut self, t: f64, q: &[f64], qd: &[f64]) -> (f64, f64) {
        if !std::mem::take(&mut self.kinematics_current) {
            self.ws.kinematics(&self.tree, q, qd);
        }
        if !self.has_external_forces() {
            return (0.0, 0.0);
        }
        self.f_ext.fill(Force::zero());
        let (mut p_ext, mut p_diss) = (0.0, 0.0);
        for si in 0..self.model.springs.len() {
            let s: &Spring = &self.model.springs[si];
            let (b1, b2) = (s.body1, s.body2);
            let (pt1, pt2) = (s.point1_in_body1, s.point2_in_body2);
            let (k, c, l0) = (s.stiffness_n_per_m, s.damping_n_s_per_m, s.rest_length_m);
            let (x1, v1) = self.body_point(b1, &pt1);
            let (x2, v2) = self.body_point(b2, &pt2);
            let d = x2 - x1;
            let len = d.norm();
            if len == 0.0 {
                continue;
            }
            let u = d / len;
            let rate = u.dot(&(v2 - v1));
            let f2 = -u * (k * (len - l0) + c * rate);
            p_diss += c * rate * rate;
            self.add_force(b2, &x2, &f2);
            self.add_force(b1, &x1, &-f2);
        }
        for ei in 0..self.model.force_elements.len() {
            let e: &ForceElement = &self.model.force_elements[ei];
            let body = e.body;
            let (rot, x, v, w) = self.body_state(body);
            let iso = Isometry3::from_parts(Translation3::from(x), rot);
            let (f, tau) = e.wrench_at(t, &iso);
            if let Some(l) = self.map.link_of_body[body] {
                self.f_ext[l] += point_force(&x, &f) + Force::new(tau, Vector3::zeros());
                p_ext += f.dot(&v) + tau.dot(&w);
            }
        }
        for li in 0..self.loads.len() {
            let (l, p, f) = self.loads[li];
            let x = self.ws.point_in_world(l, &p);
            let v = self.ws.point_velocity_in_world(l, &p);
            self.f_ext[l] += point_force(&x, &f);
            p_ext += f.dot(&v);
        }
        (p_ext, p_diss)
    }

    /// Whether any external force acts (else the ABA is given none).
    fn has_external_forces(&self) -> bool {
        !(self.model.springs.is_empty()
            && self.model.force_elements.is_empty()
            && self.loads.is_empty())
    }

    /// y' = f(t, y). With `kinematics_current` set, y must be the state whose kinematics `ws`
    /// holds (the first evaluation of a step).
    fn derivative(&mut self, t: f64, y: &[f64], dy: &mut [f64]) -> Result<(), ArticulatedError> {
        let (nq, nv) = (self.tree.nq(), self.tree.nv());
        let (q, qd) = (&y[..nq], &y[nq..nq + nv]);
        let (p_ext, p_diss) = self.forces(t, q, qd);
        let (dq, rest) = dy.split_at_mut(nq);
        let (dqd, dw) = rest.split_at_mut(nv);
        if let Err(e) = self
            .ws
            .accelerations(&self.tree, &self.tau, &self.f_ext, dqd)
        {
            // A NaN in the state shows first as a "singular" joint: name it for what it is.
            return Err(match first_non_finite_link(&self.tree, y) {
                Some(body) => ArticulatedError::NonFinite { time_secs: t, body },
                None => e,
            });
        }
        self.tree.q_rate(q, qd, dq);
        dw[0] = p_ext;
        dw[1] = p_diss;
        Ok(())
    }
}

/// The name of the first link whose coordinates or velocities in `y` are not finite
/// ("(energy ledger)" if only the work integrals are).
fn first_non_finite_link(tree: &Tree, y: &[f64]) -> Option<String> {
    let i = y.iter().position(|x| !x.is_finite())?;
    let nq = tree.nq();
    let link = tree.links().iter().find(|l| {
        let qi = l.q_offset..l.q_offset + l.joint.nq();
        let vi = nq + l.v_offset..nq + l.v_offset + l.joint.nv();
        qi.contains(&i) || vi.contains(&i)
    });
    Some(match link {
        Some(l) => l.name.clone(),
        None => "(energy ledger)".to_owned(),
    })
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

/// The energy ledger behind the balance error (the same definitions as the default
/// method's, see [`crate::sim::diagnostics`]).
#[derive(Clone, Copy, Debug)]
struct Ledger {
    initial_j: f64,
    peak_kinetic_j: f64,
    potential_range: (f64, f64),
    elastic_range: (f64, f64),
    max_injected_j: f64,
}

/// A scene's model simulated by the articulated-body method (see the module docs).
#[derive(Clone, Debug)]
pub struct ArticulatedSim {
    dynamics: Dynamics,
    y: Vec<f64>,
    y_new: Vec<f64>,
    /// The adaptive integrator's running state within a step.
    y_work: Vec<f64>,
    dy: Vec<f64>,
    rk: RkScratch,
    params: ArticulatedParams,
    time_secs: f64,
    steps: usize,
    h_adaptive: f64,
    stats: IntegratorStats,
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
        let built = tree_from_model(model)?;
        let (nq, nv) = (built.tree.nq(), built.tree.nv());
        let n = nq + nv + 2;
        let mut y = vec![0.0; n];
        y[..nq].copy_from_slice(&built.q);
        y[nq..nq + nv].copy_from_slice(&built.qd);
        let n_links = built.tree.links().len();
        let ws = Workspace::new(&built.tree);
        let mut sim = Self {
            dynamics: Dynamics {
                tree: built.tree,
                ws,
                map: built.map,
                model: model.clone(),
                loads: Vec::with_capacity(16),
                f_ext: vec![Force::zero(); n_links],
                tau: vec![0.0; nv],
                kinematics_current: false,
            },
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
            ledger: Ledger {
                initial_j: 0.0,
                peak_kinetic_j: 0.0,
                potential_range: (f64::INFINITY, f64::NEG_INFINITY),
                elastic_range: (f64::INFINITY, f64::NEG_INFINITY),
                max_injected_j: 0.0,
            },
        };
        sim.update_diagnostics();
        let d = sim.diagnostics;
        sim.ledger.initial_j = d.kinetic_j + d.potential_j + d.elastic_j;
        sim.update_diagnostics();
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
    pub fn set_state(&mut self, q: &[f64], qd: &[f64]) {
        let (nq, nv) = (self.dynamics.tree.nq(), self.dynamics.tree.nv());
        self.y[..nq].copy_from_slice(q);
        self.y[nq..nq + nv].copy_from_slice(qd);
        self.dynamics.tree.normalise_q(&mut self.y[..nq]);
        self.update_diagnostics();
        let d = self.diagnostics;
        self.ledger.initial_j =
            d.kinetic_j + d.potential_j + d.elastic_j + d.dissipated_j - d.external_work_j;
        self.ledger.peak_kinetic_j = 0.0;
        self.ledger.potential_range = (f64::INFINITY, f64::NEG_INFINITY);
        self.ledger.elastic_range = (f64::INFINITY, f64::NEG_INFINITY);
        self.update_diagnostics();
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

    /// Advances the time by `dt_secs` (see the module docs). On an error the state is the one
    /// before the step.
    pub fn step(&mut self) -> Result<(), ArticulatedError> {
        let h = self.params.dt_secs;
        let t0 = self.time_secs;
        let (nq, nv) = (self.dynamics.tree.nq(), self.dynamics.tree.nv());
        match self.params.integrator {
            Integrator::SemiImplicitEuler => {
                self.dynamics.derivative(t0, &self.y, &mut self.dy)?;
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
                    dynamics.derivative(t, y, dy)
                })?;
                self.dynamics.tree.normalise_q(&mut self.y_new[..nq]);
                self.stats.evaluations += 4;
                self.stats.accepted_steps += 1;
            }
            Integrator::Rk45 { tolerance } => {
                self.advance_adaptive(t0, t0 + h, tolerance)?;
            }
        }
        self.finish_step(t0 + h)
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
                        dynamics.derivative(t, y, dy)
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
        self.dynamics.loads.clear();
        if let Some(body) = first_non_finite_link(&self.dynamics.tree, &self.y_new) {
            return Err(ArticulatedError::NonFinite {
                time_secs: t1,
                body,
            });
        }
        std::mem::swap(&mut self.y, &mut self.y_new);
        self.steps += 1;
        self.time_secs = t1;
        self.update_diagnostics();
        Ok(())
    }

    /// Kinematics at the current state, then the energies and the balance.
    fn update_diagnostics(&mut self) {
        let d = &mut self.dynamics;
        let (nq, nv) = (d.tree.nq(), d.tree.nv());
        d.ws.kinematics(&d.tree, &self.y[..nq], &self.y[nq..nq + nv]);
        d.kinematics_current = true;
        let mut kinetic = 0.0;
        let mut potential = 0.0;
        for (i, l) in d.tree.links().iter().enumerate() {
            kinetic += l.inertia.kinetic_energy(d.ws.link_velocity(i));
            let x = d.ws.point_in_world(i, &d.map.com_in_link[i]);
            potential -= l.inertia.mass * d.tree.gravity_in_world.dot(&x);
        }
        let mut elastic = 0.0;
        for s in &d.model.springs {
            let (x1, _) = d.body_point(s.body1, &s.point1_in_body1);
            let (x2, _) = d.body_point(s.body2, &s.point2_in_body2);
            elastic += s.elastic_energy_j((x2 - x1).norm());
        }
        let external = self.y[nq + nv];
        let dissipated = self.y[nq + nv + 1];
        let lg = &mut self.ledger;
        lg.peak_kinetic_j = lg.peak_kinetic_j.max(kinetic);
        lg.potential_range = (
            lg.potential_range.0.min(potential),
            lg.potential_range.1.max(potential),
        );
        lg.elastic_range = (
            lg.elastic_range.0.min(elastic),
            lg.elastic_range.1.max(elastic),
        );
        lg.max_injected_j = lg.max_injected_j.max(external.abs());
        let reference = lg
            .peak_kinetic_j
            .max(lg.potential_range.1 - lg.potential_range.0)
            .max(lg.elastic_range.1 - lg.elastic_range.0)
            .max(lg.max_injected_j)
            .max(1e-9);
        let drift = kinetic + potential + elastic + dissipated - external - lg.initial_j;
        self.diagnostics = StepDiagnostics {
            time_secs: self.time_secs,
            constraint_norm_m: 0.0,
            kinetic_j: kinetic,
            potential_j: potential,
            elastic_j: elastic,
            user_work_j: 0.0,
            external_work_j: external,
            dissipated_j: dissipated,
            energy_drift_j: drift,
            energy_reference_j: reference,
            energy_error_rel: drift / reference,
            substeps: 1,
            ..StepDiagnostics::default()
        };
    }
}
