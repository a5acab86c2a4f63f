//! The simulation: a thin facade over the [`Model`] it moves and the [`solver`]
//! that steps it (see there for the stage order of a step). Clipping the stylus and queuing
//! external forces are in [`crate::model::stylus`] and [`Simulation::apply_external_force`], turning
//! contact on in `simulation_contact.rs`.
//!
//! Islands at rest fall asleep and cost a step almost nothing (`sleep.rs`, with contact).
//!
//! Determinism: one thread, fixed iteration order (scene order), no time-dependent decisions;
//! the same scene and inputs give bit-identical results (`tests/dynamics/golden.rs` pins them).

mod contact;
mod islands;
mod scene_sim;
mod sleep;

pub use scene_sim::{
    BuildError, Method, MethodSim, PointLoad, SceneSimulation, StepError, StepInput,
};
pub use sleep::{SLEEP_SPEED_M_PER_S, TIME_TO_SLEEP_SECS};

use nalgebra::{Isometry3, Point3, Vector3};

use super::error::SimError;
use super::model::Model;
use super::solver;
use super::solver::{JointReaction, Solver, SolverParams, Step, StepContext};
use crate::model::body::{Body, BodyId};
use crate::model::force::ForceElement;
use crate::model::grab::GrabPoint;
use crate::model::joint::Joint;
use crate::model::spring::Spring;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::state::diagnostics::{EnergyLedger, StepDiagnostics};

/// A running multibody simulation: the model, the stylus, and the solver's state.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub(crate) model: Model,
    pub(crate) params: SolverParams,
    pub(crate) stylus: Option<StylusAttachment>,
    pub(crate) stylus_target: Option<StylusTarget>,
    pub(crate) solver: Solver,
    /// Which bodies sleep, and the islands (see `sleep.rs`).
    pub(crate) sleep: sleep::SleepState,
}

impl Simulation {
    /// Builds a simulation. `bodies[0]` must be the ground ([`Body::ground`]); joints,
    /// springs and grab points refer to bodies by index.
    pub fn new(
        bodies: Vec<Body>,
        joints: Vec<Joint>,
        springs: Vec<Spring>,
        grab_points: Vec<GrabPoint>,
        gravity_in_world: Vector3<f64>,
        params: SolverParams,
    ) -> Result<Self, SimError> {
        params.validate()?;
        let model = Model::new(bodies, joints, springs, grab_points, gravity_in_world)?;
        let solver = Solver::new(&model.bodies, &model.joints, &model.springs, params.method)?;
        let mut sim = Self {
            model,
            params,
            stylus: None,
            stylus_target: None,
            solver,
            sleep: sleep::SleepState::default(),
        };
        // Every joint block must be solvable (a joint between two fixed bodies is not).
        if let Err(i) = sim.step_view().check_joint_blocks() {
            return Err(SimError::SingularJoint {
                joint: sim.model.joints[i].name.clone(),
            });
        }
        let potential = sim.potential_energy_j();
        let elastic = sim.elastic_energy_j();
        let kinetic = sim.kinetic_energy_j();
        sim.solver.ledger = EnergyLedger::starting_at(kinetic, potential, elastic);
        let constraint_norm_m = sim.constraint_norm_m();
        let d = &mut sim.solver.diagnostics;
        d.kinetic_j = kinetic;
        d.potential_j = potential;
        d.elastic_j = elastic;
        d.energy_reference_j = sim.solver.ledger.reference_j();
        d.constraint_norm_m = constraint_norm_m;
        Ok(sim)
    }

    /// The step's view of the model and the solver, with a full step's context.
    pub(crate) fn step_view(&mut self) -> Step<'_> {
        Step {
            ctx: StepContext::new(&self.params),
            bodies: &mut self.model.bodies,
            joints: &self.model.joints,
            springs: &self.model.springs,
            force_elements: &self.model.force_elements,
            gravity_in_world: self.model.gravity_in_world,
            stylus: self.stylus,
            stylus_target: self.stylus_target,
            contact: self.model.contact.as_ref(),
            s: &mut self.solver,
        }
    }

    /// Advances the simulation by one fixed step h (see [`solver`] for the stages and
    /// [`solver::MAX_STEP_SPLITS`] for how a step that does not converge is split), after the
    /// rigid groups' switches that are due.
    ///
    /// # Errors
    /// [`SimError::StepFailed`] when the step cannot be taken: its state would not be finite,
    /// or it does not converge even split into the shortest sub-steps. The simulation then
    /// keeps the state before the step (its time does not advance), and the error names the
    /// time, the cause and the elements with the largest residuals.
    pub fn step(&mut self) -> Result<(), SimError> {
        if !self.model.rigid_groups.is_empty() {
            self.apply_due_group_switches()?;
        }
        // Sleeping bodies are fixed for the step (see `sleep.rs`).
        let frozen = self.prepare_sleep();
        let mut step = self.step_view();
        let result = step.run();
        self.stylus_target = step.stylus_target;
        if frozen {
            self.thaw();
        }
        result.map_err(|f| SimError::StepFailed(Box::new(f)))?;
        self.break_overstretched_connections();
        self.update_sleep();
        Ok(())
    }

    // ----- model and state access -----

    /// The model (bodies, joints, springs, grab points, gravity).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// All bodies; index 0 is the ground.
    pub fn bodies(&self) -> &[Body] {
        &self.model.bodies
    }

    /// The body with this name, if any.
    pub fn body_id(&self, name: &str) -> Option<BodyId> {
        self.model.body_id(name)
    }

    /// Pose `world_from_body` of a body.
    pub fn body_pose(&self, body: BodyId) -> Isometry3<f64> {
        self.model.bodies[body].world_from_body()
    }

    /// The scene's joints, in scene order (the order of [`Simulation::joint_reactions`]);
    /// the welds of rigid groups are not among them (they are in [`Model::joints`]).
    pub fn joints(&self) -> &[Joint] {
        &self.model.joints[..self.model.scene_joints]
    }

    /// All springs.
    pub fn springs(&self) -> &[Spring] {
        &self.model.springs
    }

    /// Joint reactions of the last step, in joint order.
    pub fn joint_reactions(&self) -> &[JointReaction] {
        &self.solver.reactions[..self.model.scene_joints]
    }

    /// Named grab points, in scene order (the first is the scripted stylus's).
    pub fn grab_points(&self) -> &[GrabPoint] {
        &self.model.grab_points
    }

    /// World position of a grab point.
    pub fn grab_point_in_world(&self, index: usize) -> Option<Point3<f64>> {
        let g = self.model.grab_points.get(index)?;
        Some(self.model.bodies[g.body].point_in_world(&g.point_in_body))
    }

    /// Gravity (m/s², world).
    pub fn gravity_in_world(&self) -> Vector3<f64> {
        self.model.gravity_in_world
    }

    /// Solver parameters.
    pub fn params(&self) -> &SolverParams {
        &self.params
    }

    /// Replaces the solver parameters (takes effect at the next step).
    pub fn set_params(&mut self, params: SolverParams) -> Result<(), SimError> {
        params.validate()?;
        self.params = params;
        self.solver.linear = crate::solver::LinearSolve::choose(params.method, &self.solver.direct);
        Ok(())
    }

    /// The fixed time step h (s).
    pub fn dt_secs(&self) -> f64 {
        self.params.dt_secs
    }

    /// Simulated time (s).
    pub fn time_secs(&self) -> f64 {
        self.solver.time_secs
    }

    /// Diagnostics of the last step (at construction: the initial state).
    pub fn diagnostics(&self) -> &StepDiagnostics {
        &self.solver.diagnostics
    }

    /// Sets the linear and angular velocity of a body (world frame), e.g. for an initial kick.
    /// The energy this adds counts as if it had been there at the start; call it before the
    /// first step only, or expect the balance to show it.
    pub fn set_body_velocity(
        &mut self,
        body: BodyId,
        linear_in_world: Vector3<f64>,
        angular_in_world: Vector3<f64>,
    ) {
        if !self.model.bodies[body].is_dynamic() {
            return;
        }
        self.model.bodies[body].linear_velocity_in_world = linear_in_world;
        self.model.bodies[body].angular_velocity_in_world = angular_in_world;
        // The last step's impulses no longer describe this motion.
        self.solver.loads_jumped();
        if self.solver.time_secs == 0.0 {
            let ledger = &mut self.solver.ledger;
            ledger.initial_j = self
                .model
                .bodies
                .iter()
                .map(Body::kinetic_energy_j)
                .sum::<f64>()
                + ledger.potential_end_j
                + ledger.elastic_end_j;
        }
    }

    /// Adds a force (N, world) acting at a world point during the next step only (the wind
    /// uses this). Its work h (F·v + τ·ω), with the velocities after the step, is booked as
    /// external work in the energy balance. Forces on the ground are ignored.
    pub fn apply_external_force(
        &mut self,
        body: BodyId,
        force_in_world: Vector3<f64>,
        point_in_world: Point3<f64>,
    ) {
        let Some(b) = self.model.bodies.get(body) else {
            return;
        };
        if !b.is_dynamic() {
            return;
        }
        let arm = point_in_world.coords - b.position_in_world;
        self.solver.loads.force[body] += force_in_world;
        self.solver.loads.torque[body] += arm.cross(&force_in_world);
    }

    /// Adds a force element (a force or torque on a body, constant or sinusoidal) that acts
    /// in every following step; its work is booked as external work. The body must be a
    /// dynamic body of this simulation.
    pub fn add_force_element(&mut self, element: ForceElement) -> Result<(), SimError> {
        self.model.add_force_element(element)
    }

    /// The force elements, in the order they were added.
    pub fn force_elements(&self) -> &[ForceElement] {
        &self.model.force_elements
    }

    // ----- energies and constraint error -----

    /// Kinetic energy of all bodies (J).
    pub fn kinetic_energy_j(&self) -> f64 {
        solver::kinetic_energy_j(&self.model.bodies)
    }

    /// Gravitational energy −Σ m g·x (J).
    pub fn potential_energy_j(&self) -> f64 {
        solver::potential_energy_j(&self.model.bodies, &self.model.gravity_in_world)
    }

    /// Elastic energy of springs and of the stylus spring (J).
    pub fn elastic_energy_j(&self) -> f64 {
        solver::spring_energy_j(&self.model.bodies, &self.model.springs) + self.stylus_energy_j()
    }

    /// Elastic energy of the stylus spring alone (J).
    pub(crate) fn stylus_energy_j(&self) -> f64 {
        solver::stylus_energy_j(
            &self.model.bodies,
            self.stylus.as_ref(),
            self.stylus_target.as_ref(),
        )
    }

    /// The blocks (6 × 6, diagonal ones included) that the direct method's last
    /// factorisation stored: linear in the number of elements for chains and trees.
    pub fn factor_blocks(&self) -> usize {
        self.solver.direct.dense.stored_blocks()
    }

    /// ‖ψ‖ over all joint rows at the current poses (m; angular rows at a 1 m lever arm).
    pub fn constraint_norm_m(&self) -> f64 {
        solver::constraint_norm_m(&self.model.bodies, &self.model.joints)
    }
}
