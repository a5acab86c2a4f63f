//! The simulation and its step pipeline (Mariti & Valentini, Eq. 14–27).
//!
//! # Integrator
//! Positions advance with the *mean* of the start and end velocities (implicit midpoint,
//! x' = x + h (v + v')/2, orientations by the Cayley map of h ω̄), so every impulse P does
//! exactly the work P·v̄ and the kinetic energy changes by exactly Σ P·v̄. Constraint rows are
//! evaluated at the step's midpoint (mean of start and end anchor arms and axes); with them
//! ψ(end) − ψ(start) = h J̄ v̄ holds exactly, so joints that stay closed do no work, gravity's
//! work equals the change of potential energy and the springs' midpoint impulses
//! −h k (eₙ + eₙ₊₁)/2 equal the change of elastic energy. The energy balance of
//! [`super::diagnostics`] therefore measures the solver's real error, not a bookkeeping one.
//!
//! # Stage order of [`Simulation::step`]
//! 1. **Free motion** (Eq. 14–16): every dynamic body gets the impulse of gravity and of the
//!    external forces queued with [`Simulation::apply_external_force`]: v += h (g + F/m),
//!    ω += h I⁻¹ τ, with I the world inertia at the start orientation for the whole step.
//!    The gyroscopic term of Euler's equation is not part of this stage: it is solved with
//!    the impulses in stage 4 (see `reapply_impulses`), at the midpoint velocity, which makes
//!    the scheme the implicit midpoint rule for I (ω′ − ω) = h (I ω̄) × ω̄ + impulses: the
//!    gyroscopic impulse does no work, a free body keeps its energy and |Iω|, and precesses
//!    at Euler's rate (tests/solver.rs). (Split from the constraint solve, explicitly or
//!    even as its own implicit-midpoint update, it made the impulses do spurious work and lost
//!    up to 70 % of the energy in out-of-plane swings of the thin links.)
//! 2. **Prepare**: at the start poses each joint evaluates ψₙ; for the sweeps it also builds
//!    its Jacobian rows and factors its own block K = J M⁻¹ Jᵀ (Cholesky, explicit epsilon;
//!    the direct method makes these factors only when the position pass needs them); springs
//!    and the stylus their soft rows. Nothing is allocated: all scratch lives in the
//!    simulation.
//! 3. **Warm start** (Gauss–Seidel only): the previous step's impulses are applied again.
//! 4. **Joint impulses** (Eq. 17–23, 27). The rows are fixed at the predicted midpoint; each
//!    *linearisation* sets every joint's target J̄ v = J̄ v₀ + (2/h)((1 − β) ψₙ − ψ̂) — Eq. 27's
//!    Baumgarte term with ψ̂ the constraint at the predicted end pose, which also carries the
//!    second-order (centripetal) drift; with β = 1 the joints close at the end of the step —
//!    and the soft rows their implicit spring laws. The linear problem is solved either
//!    - [`SolverMethod::GaussSeidel`]: the paper's sequential impulses, sweeps in which each
//!      joint solves its own block (over-relaxed by `relaxation`), until the largest
//!      row-velocity correction is below `velocity_tolerance`, or
//!    - [`SolverMethod::Direct`] (default): the same rows coupled in one block-profile
//!      Cholesky factorisation ([`super::block_cholesky`], a block per element), one solve.
//!      The matrix is factored once per step, at the first rows; later linearisations, whose
//!      rows have been refreshed, reuse that factor (a chord, or simplified Newton,
//!      iteration: the rows move by O(h·ω) within a step) and factor again only when a solve
//!      reduced the nonlinear residual by less than `CHORD_CONTRACTION`. The increments are always applied along the current rows.
//!
//!    Linearisations repeat (Newton) until the nonlinear residual is below the round's
//!    tolerance (m/s; ψ error / h). Then the rows are re-evaluated at the new prediction and
//!    the impulses re-applied along them, until that changes the velocities by less than
//!    `velocity_tolerance` (at most `max_row_refreshes`, 10, times), so that the exact-work
//!    identities hold at the end pose. Rounds before the last refresh are solved only to
//!    1/100 of the velocity change of the last refresh (inexact Newton: rows that are about to
//!    change need no exact solution).
//!
//!    The refreshes solve ω′ = ω_free + I⁻¹τ(ω′), whose torques turn with the end pose (and
//!    whose gyroscopic part depends on ω̄). Done as a plain fixed-point iteration they
//!    contract only by 0.25–0.4 per refresh on the swinging chain; three refreshes left the
//!    identities off by up to 5e-2 m/s and the energy of a long free swing drifted (16 %
//!    after 60 s, then blow-up). So each body's change is multiplied by the Newton gain
//!    (I − A)⁻¹I, A = ∂τ/∂ω′ from the last step's impulses (after its first solve), and the coupled matrix uses
//!    (I − A)⁻¹ for I⁻¹ (`Simulation::update_newton_inertia`); the first rows are taken at
//!    the end pose the last step's constraint velocity change predicts. After the first solve
//!    A is made again from this step's impulses (`Simulation::renew_newton_gain`). Once two
//!    refreshes have shown their contraction θ, the last refresh is skipped when θ/(1 − θ)
//!    times the last change is under the tolerance and ψ is closed (the stopping rule of
//!    simplified Newton iterations). A planar swing then needs about 3.5 solves per step.
//!    After a jump in the loads (clip, release, a split step) the step starts plain, and
//!    after the gain has made a refresh diverge the next 20 steps do. A step whose last refresh still moved the velocities by more than 100× the
//!    tolerance is rejected and split (see [`Simulation::step`]): a violent motion that the
//!    step cannot resolve is then computed with shorter steps instead of gaining energy.
//! 5. **Integrate positions**: x += h v̄, q ← normalise(q + h/2 ω̄ ⊗ q); the angular velocity
//!    turns with the body (ω ← R₂R₁ᵀω: the body-frame rate is the state, see the stage's
//!    comment).
//! 6. **Position correction** (only if needed): if ‖ψ‖ > `position_tolerance_m`, nonlinear
//!    Gauss–Seidel projection sweeps move the poses (not the velocities) along M⁻¹Jᵀ until
//!    ‖ψ‖ is under the tolerance or `max_position_iterations` is reached. With the default
//!    parameters the velocity stage already holds ‖ψ‖ ≈ 1e-8 m and this pass does not run in
//!    the acceptance runs; it is the safety net that keeps ‖ψ‖ < 1e-6 m when a cap is hit.
//! 7. **Reactions and diagnostics**: reactions are the accumulated impulses / h (Eq. 24–26)
//!    on the second body, world frame; energies per [`super::diagnostics`].
//!
//! Soft elements (springs, stylus) are solved with the joints as soft constraints: elastic
//! impulse −h k (eₙ + eₙ₊₁)/2 (implicit midpoint: unconditionally stable, no numerical
//! dissipation), damper impulse −h c ē (the midpoint rate; its work is booked as
//! dissipation).
//!
//! Determinism: one thread, fixed iteration order (scene order), no time-dependent decisions;
//! the same scene and inputs give bit-identical results.

use nalgebra::{Isometry3, Matrix3, Point3, Vector3};

use super::block::{
    is_positive_definite3, spd_inverse3, BlockMatrix, BlockVector, CholeskyBlock, MAX_ROWS,
};
use super::block_cholesky::{BlockCholesky, Lanes, BLOCK};
use super::body::{advance_rotation, Body, BodyId, Pose, GROUND};
use super::coupled::{assemble, BlockOwner, GlobalBlock};
use super::diagnostics::{EnergyLedger, StepDiagnostics, MIN_REFERENCE_ENERGY_J};
use super::error::SimError;
use super::grab::GrabPoint;
use super::joint::{cross_cross, Joint, JointGeometry, Row};
use super::spring::Spring;
use super::stylus::{StylusAttachment, StylusTarget};

/// Relative pivot epsilon of the block factorisations.
const BLOCK_EPSILON: f64 = 1.0e-12;
/// Relative diagonal regularisation of the coupled (direct) solve.
const DENSE_REGULARISATION: f64 = 1.0e-6;
/// Lever arm that turns an angular-velocity change into a velocity for the refresh test (m).
const ROW_REFRESH_LEVER_M: f64 = 0.1;
/// Outer linearisations per step at most (the sweep cap applies as well).
const MAX_LINEARISATIONS: usize = 8;
/// A step is split when its residuals exceed their tolerances by more than this factor.
const REJECT_RESIDUAL_FACTOR: f64 = 100.0;
/// A linearisation refactors the coupled matrix when its solve reduced the nonlinear
/// residual by less than this factor.
const CHORD_CONTRACTION: f64 = 0.3;
/// Linearisations before the last row refresh stop once the residual is below this fraction
/// of the velocity change of the last refresh (or the velocity tolerance, if larger).
const ROUND_TOLERANCE_FRACTION: f64 = 0.01;
/// Largest entry of a Newton gain (I − A)⁻¹I that is used (see
/// `Simulation::update_newton_inertia`).
const MAX_NEWTON_GAIN: f64 = 10.0;
/// Steps without the Newton gain after it made a refresh diverge.
const NEWTON_BACKOFF_STEPS: usize = 20;
/// The most sub-steps a rejected step is split into.
pub const MAX_STEP_SPLITS: usize = 16;
/// Below this length (m) a spring has no direction and is skipped for the step.
const MIN_SPRING_LENGTH_M: f64 = 1.0e-9;

/// How the joint impulses of one linearisation are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolverMethod {
    /// The paper's sequential impulses: Gauss–Seidel sweeps, each joint solving its own
    /// block, with over-relaxation `relaxation`. Cheap per sweep, but on long chains it
    /// needs hundreds of sweeps for ‖ψ‖ < 1e-6 m (measured: 0.986 error reduction per sweep
    /// on the ten pendula).
    GaussSeidel,
    /// The same per-joint rows and soft rows, coupled in one Cholesky factorisation of
    /// J M⁻¹ Jᵀ (+ the soft terms), each diagonal entry raised by 1e-6 of itself so that
    /// redundant constraints keep bounded impulses; the outer Newton iterations remove the
    /// small error this causes.
    Direct,
}

/// Solver parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParams {
    /// Fixed time step h (s).
    pub dt_secs: f64,
    /// Cap on velocity Gauss–Seidel sweeps per step.
    pub max_iterations: usize,
    /// Baumgarte factor β of Eq. 27 (1 closes the position error in one step).
    pub beta: f64,
    /// Sweeps stop when every row-velocity correction is below this (m/s or rad/s).
    pub velocity_tolerance: f64,
    /// The position pass runs when ‖ψ‖ exceeds this after integration (m).
    pub position_tolerance_m: f64,
    /// Cap on position-correction sweeps per step.
    pub max_position_iterations: usize,
    /// Re-evaluations of the midpoint rows per step at most (0: rows from the first
    /// prediction only — faster, but the exact-work identities then hold only approximately).
    pub max_row_refreshes: usize,
    /// Over-relaxation factor of the joint updates (1 = plain Gauss–Seidel).
    pub relaxation: f64,
    /// How each linearisation is solved.
    pub method: SolverMethod,
    /// Alternate the sweep direction (forward, backward, ...): symmetric Gauss–Seidel,
    /// which carries information along chains in both directions in every pair of sweeps.
    pub symmetric_sweeps: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        Self {
            dt_secs: 0.01,
            max_iterations: 100,
            beta: 1.0,
            velocity_tolerance: 1.0e-6,
            position_tolerance_m: 1.0e-7,
            max_position_iterations: 50,
            max_row_refreshes: 10,
            relaxation: 1.6,
            symmetric_sweeps: false,
            method: SolverMethod::Direct,
        }
    }
}

impl SolverParams {
    /// Checks that every parameter is usable.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |field: &'static str, value: f64| SimError::BadParameter { field, value };
        if !(self.dt_secs > 0.0 && self.dt_secs.is_finite()) {
            return Err(bad("dt_secs", self.dt_secs));
        }
        if self.max_iterations == 0 {
            return Err(bad("max_iterations", 0.0));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(bad("beta", self.beta));
        }
        if self.velocity_tolerance.is_nan() || self.velocity_tolerance <= 0.0 {
            return Err(bad("velocity_tolerance", self.velocity_tolerance));
        }
        if self.position_tolerance_m.is_nan() || self.position_tolerance_m <= 0.0 {
            return Err(bad("position_tolerance_m", self.position_tolerance_m));
        }
        Ok(())
    }
}

/// Reaction of a joint on its second body, from the accumulated impulses / h (Eq. 24–26).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointReaction {
    /// Force on body 2 (N, world).
    pub force_in_world: Vector3<f64>,
    /// Pure moment on body 2 about its anchor point (N·m, world).
    pub torque_in_world: Vector3<f64>,
}

#[derive(Clone, Copy, Debug, Default)]
struct JointBlock {
    rows: [Row; MAX_ROWS],
    factor: CholeskyBlock,
    psi_start: BlockVector,
    /// Attachment vectors at the step's start poses.
    geometry_start: JointGeometry,
    /// ψ at the current predicted end poses (valid while `psi_pred_valid`).
    psi_pred: BlockVector,
    /// Attachment vectors at the current predicted end poses (valid with `psi_pred`).
    geometry_pred: JointGeometry,
    /// Target of J̄ v in the current linearisation.
    bias: BlockVector,
    lambda: BlockVector,
}

impl JointBlock {
    /// How far row `k` at the predicted end pose is from its Baumgarte target (1 − β)ψₙ
    /// (`keep` = 1 − β); m, or rad for angular rows.
    fn closure_error(&self, k: usize, keep: f64) -> f64 {
        keep * self.psi_start[k] - self.psi_pred[k]
    }
}

const _: () = assert!(MAX_ROWS == BLOCK, "a joint's rows fill one block");

#[derive(Clone, Copy, Debug, Default)]
struct SoftRow {
    row: Row,
    /// J M⁻¹ Jᵀ of the row.
    w: f64,
    /// Extension at the start of the step (m).
    e_start: f64,
    /// Extension at the predicted end of the step when linearised (m).
    e_end: f64,
    /// Row rate at the linearisation and at the start of the step.
    u_lin: f64,
    u_start: f64,
    lambda: f64,
    active: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct StylusBlock {
    arm: Vector3<f64>,
    factor: CholeskyBlock,
    e_start: Vector3<f64>,
    /// Extension and point velocity at the linearisation, point velocity at the start.
    e_lin: Vector3<f64>,
    u_lin: Vector3<f64>,
    u_start: Vector3<f64>,
    lambda: Vector3<f64>,
}

/// The moving part of a body's state.
#[derive(Clone, Copy, Debug)]
struct BodyState {
    position_in_world: Vector3<f64>,
    world_from_body_rotation: nalgebra::UnitQuaternion<f64>,
    linear_velocity_in_world: Vector3<f64>,
    angular_velocity_in_world: Vector3<f64>,
}

impl BodyState {
    fn of(b: &Body) -> Self {
        Self {
            position_in_world: b.position_in_world,
            world_from_body_rotation: b.world_from_body_rotation,
            linear_velocity_in_world: b.linear_velocity_in_world,
            angular_velocity_in_world: b.angular_velocity_in_world,
        }
    }

    fn restore(&self, b: &mut Body) {
        b.position_in_world = self.position_in_world;
        b.world_from_body_rotation = self.world_from_body_rotation;
        b.linear_velocity_in_world = self.linear_velocity_in_world;
        b.angular_velocity_in_world = self.angular_velocity_in_world;
    }
}

/// A running multibody simulation: the bodies' state, the model, and the solver's scratch.
#[derive(Clone, Debug)]
pub struct Simulation {
    bodies: Vec<Body>,
    joints: Vec<Joint>,
    springs: Vec<Spring>,
    grab_points: Vec<GrabPoint>,
    gravity_in_world: Vector3<f64>,
    params: SolverParams,
    time_secs: f64,
    stylus: Option<StylusAttachment>,
    stylus_target: Option<StylusTarget>,
    // Scratch, sized once.
    inv_inertia: Vec<Matrix3<f64>>,
    /// World inertia tensors at the start orientation (for the Newton gains).
    inertia: Vec<Matrix3<f64>>,
    /// Per body, the inverse of the Newton inertia I − ∂τ/∂ω′ (symmetric part) that the
    /// coupled matrix uses, and the gain (I − ∂τ/∂ω′)⁻¹ I that turns a plain angular-velocity
    /// change into a Newton one (see [`Self::update_newton_inertia`]).
    newton_inv_inertia: Vec<Matrix3<f64>>,
    newton_gain: Vec<Matrix3<f64>>,
    /// Per body, A = ∂τ/∂ω′ that the Newton gain and inertia were made from.
    turning: Vec<Matrix3<f64>>,
    /// Whether `newton_inv_inertia` is older than `turning` (made again at the next
    /// factorisation).
    newton_inertia_stale: bool,
    /// Whether each joint's `geometry_pred` and `psi_pred` belong to the bodies' current poses
    /// (the last step ended on its last prediction and nothing has moved them since): the
    /// next step then starts from them instead of making them again.
    end_geometry_valid: bool,
    /// G I⁻¹ per body: what an impulse's torque does to ω in a solve with the Newton gain.
    solve_inv_inertia: Vec<Matrix3<f64>>,
    /// Angular impulses (N·m·s, world) gathered per body before they are turned into ω
    /// ([`Self::flush_torques`]): one 3 × 3 product per body instead of one per row.
    torque: Vec<Vector3<f64>>,
    /// Whether the Newton gain was renewed in the last step (and can start the next one).
    newton_renewed: bool,
    /// Per body, the velocity change the constraints made in the last step (linear,
    /// angular): the first prediction of the next.
    constraint_velocity_change: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// Whether the last (sub-)step's impulses and constraint velocity changes estimate this
    /// step's: false after a rejected attempt and after clipping or releasing the stylus,
    /// when they jump.
    impulses_carry_over: bool,
    /// Steps left in which the Newton gain is not used, after it misled a refresh.
    newton_backoff_steps: usize,
    /// Whether any body has a Newton gain other than the identity this step.
    newton_active: bool,
    start: Vec<Pose>,
    predicted: Vec<Pose>,
    v_start: Vec<Vector3<f64>>,
    w_start: Vec<Vector3<f64>>,
    v_free: Vec<Vector3<f64>>,
    w_free: Vec<Vector3<f64>>,
    external_force: Vec<Vector3<f64>>,
    external_torque: Vec<Vector3<f64>>,
    joint_blocks: Vec<JointBlock>,
    global_blocks: Vec<GlobalBlock>,
    velocity_snapshot: Vec<(Vector3<f64>, Vector3<f64>)>,
    dense: BlockCholesky,
    dense_rhs: Vec<Lanes>,
    dense_first: Vec<usize>,
    dense_factored: bool,
    /// Factorisations in the current (sub-)step.
    factorisations: usize,
    /// Per body, the first block of the coupled system that acts on it (its profile).
    body_first_block: Vec<usize>,
    /// Whether every joint's own block factor belongs to its current rows' step.
    joint_factors_valid: bool,
    /// Whether every joint's `psi_pred` belongs to the current predicted poses.
    psi_pred_valid: bool,
    spring_rows: Vec<SoftRow>,
    stylus_block: StylusBlock,
    reactions: Vec<JointReaction>,
    /// The bodies' state at the start of the step, to retry a rejected step.
    saved_state: Vec<BodyState>,
    ledger: EnergyLedger,
    diagnostics: StepDiagnostics,
}

// Row loops index several parallel fixed-size arrays (rows, impulses, block entries).
#[allow(clippy::needless_range_loop)]
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
        }
        for s in &springs {
            check("spring", &s.name, s.body1)?;
            check("spring", &s.name, s.body2)?;
        }
        for g in &grab_points {
            check("grab point", &g.name, g.body)?;
        }
        let max_blocks = joints.len() + springs.len() + 1;
        let mut sim = Self {
            inv_inertia: vec![Matrix3::zeros(); n],
            inertia: vec![Matrix3::zeros(); n],
            newton_inv_inertia: vec![Matrix3::zeros(); n],
            turning: vec![Matrix3::zeros(); n],
            newton_inertia_stale: false,
            end_geometry_valid: false,
            solve_inv_inertia: vec![Matrix3::zeros(); n],
            torque: vec![Vector3::zeros(); n],
            newton_renewed: false,
            newton_gain: vec![Matrix3::identity(); n],
            newton_active: false,
            newton_backoff_steps: 0,
            impulses_carry_over: false,
            constraint_velocity_change: vec![(Vector3::zeros(), Vector3::zeros()); n],
            start: bodies.iter().map(Pose::of).collect(),
            predicted: bodies.iter().map(Pose::of).collect(),
            v_start: vec![Vector3::zeros(); n],
            w_start: vec![Vector3::zeros(); n],
            v_free: vec![Vector3::zeros(); n],
            w_free: vec![Vector3::zeros(); n],
            external_force: vec![Vector3::zeros(); n],
            external_torque: vec![Vector3::zeros(); n],
            joint_blocks: vec![JointBlock::default(); joints.len()],
            global_blocks: Vec::with_capacity(max_blocks),
            velocity_snapshot: vec![(Vector3::zeros(), Vector3::zeros()); n],
            dense: BlockCholesky::with_capacity(max_blocks),
            dense_rhs: vec![[0.0; BLOCK]; max_blocks],
            dense_first: vec![0; max_blocks],
            dense_factored: false,
            factorisations: 0,
            body_first_block: vec![usize::MAX; n],
            psi_pred_valid: false,
            joint_factors_valid: false,
            spring_rows: vec![SoftRow::default(); springs.len()],
            stylus_block: StylusBlock::default(),
            reactions: vec![JointReaction::default(); joints.len()],
            saved_state: Vec::with_capacity(n),
            bodies,
            joints,
            springs,
            grab_points,
            gravity_in_world,
            params,
            time_secs: 0.0,
            stylus: None,
            stylus_target: None,
            ledger: EnergyLedger::default(),
            diagnostics: StepDiagnostics::default(),
        };
        // Every joint block must be solvable (a joint between two fixed bodies is not).
        sim.update_inertia();
        for i in 0..sim.joints.len() {
            sim.prepare_joint_rows(i);
            if !sim.factor_joint(i) {
                return Err(SimError::SingularJoint {
                    joint: sim.joints[i].name.clone(),
                });
            }
        }
        sim.ledger.potential_end_j = sim.potential_energy_j();
        sim.ledger.elastic_end_j = sim.elastic_energy_j();
        sim.ledger.initial_j =
            sim.kinetic_energy_j() + sim.ledger.potential_end_j + sim.ledger.elastic_end_j;
        sim.ledger.reference_j = MIN_REFERENCE_ENERGY_J;
        sim.diagnostics.constraint_norm_m = sim.constraint_norm_m();
        sim.diagnostics.kinetic_j = sim.kinetic_energy_j();
        sim.diagnostics.potential_j = sim.ledger.potential_end_j;
        sim.diagnostics.elastic_j = sim.ledger.elastic_end_j;
        sim.diagnostics.energy_reference_j = sim.ledger.reference_j;
        Ok(sim)
    }

    // ----- model and state access -----

    /// All bodies; index 0 is the ground.
    pub fn bodies(&self) -> &[Body] {
        &self.bodies
    }

    /// The body with this name, if any.
    pub fn body_id(&self, name: &str) -> Option<BodyId> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// Pose `world_from_body` of a body.
    pub fn body_pose(&self, body: BodyId) -> Isometry3<f64> {
        self.bodies[body].world_from_body()
    }

    /// All joints, in scene order (the order of [`Simulation::joint_reactions`]).
    pub fn joints(&self) -> &[Joint] {
        &self.joints
    }

    /// All springs.
    pub fn springs(&self) -> &[Spring] {
        &self.springs
    }

    /// Joint reactions of the last step, in joint order.
    pub fn joint_reactions(&self) -> &[JointReaction] {
        &self.reactions
    }

    /// Named grab points, in scene order (the first is the scripted stylus's).
    pub fn grab_points(&self) -> &[GrabPoint] {
        &self.grab_points
    }

    /// World position of a grab point.
    pub fn grab_point_in_world(&self, index: usize) -> Option<Point3<f64>> {
        let g = self.grab_points.get(index)?;
        Some(self.bodies[g.body].point_in_world(&g.point_in_body))
    }

    /// Gravity (m/s², world).
    pub fn gravity_in_world(&self) -> Vector3<f64> {
        self.gravity_in_world
    }

    /// Solver parameters.
    pub fn params(&self) -> &SolverParams {
        &self.params
    }

    /// Replaces the solver parameters (takes effect at the next step).
    pub fn set_params(&mut self, params: SolverParams) -> Result<(), SimError> {
        params.validate()?;
        self.params = params;
        Ok(())
    }

    /// The fixed time step h (s).
    pub fn dt_secs(&self) -> f64 {
        self.params.dt_secs
    }

    /// Simulated time (s).
    pub fn time_secs(&self) -> f64 {
        self.time_secs
    }

    /// Diagnostics of the last step (at construction: the initial state).
    pub fn diagnostics(&self) -> &StepDiagnostics {
        &self.diagnostics
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
        if !self.bodies[body].is_dynamic() {
            return;
        }
        self.bodies[body].linear_velocity_in_world = linear_in_world;
        self.bodies[body].angular_velocity_in_world = angular_in_world;
        // The last step's impulses no longer describe this motion.
        self.impulses_carry_over = false;
        if self.time_secs == 0.0 {
            self.ledger.initial_j =
                self.kinetic_energy_j() + self.ledger.potential_end_j + self.ledger.elastic_end_j;
        }
    }

    // ----- interaction -----

    /// Clips the stylus to a body point. The tip keeps the last target set, or starts at the
    /// clipped point at rest if none was. The spring's initial energy counts as user work.
    pub fn attach_stylus(&mut self, attachment: StylusAttachment) -> Result<(), SimError> {
        if attachment.body >= self.bodies.len() || !self.bodies[attachment.body].is_dynamic() {
            return Err(SimError::BadStylusBody {
                index: attachment.body,
            });
        }
        if !(attachment.stiffness_n_per_m > 0.0 && attachment.stiffness_n_per_m.is_finite()) {
            return Err(SimError::BadParameter {
                field: "stylus stiffness_n_per_m",
                value: attachment.stiffness_n_per_m,
            });
        }
        if !(attachment.damping_n_s_per_m >= 0.0 && attachment.damping_n_s_per_m.is_finite()) {
            return Err(SimError::BadParameter {
                field: "stylus damping_n_s_per_m",
                value: attachment.damping_n_s_per_m,
            });
        }
        self.detach_stylus();
        if self.stylus_target.is_none() {
            let p = self.bodies[attachment.body].point_in_world(&attachment.point_in_body);
            self.stylus_target = Some(StylusTarget {
                position_in_world: p,
                velocity_in_world: Vector3::zeros(),
            });
        }
        self.stylus = Some(attachment);
        self.stylus_block.lambda = Vector3::zeros();
        self.impulses_carry_over = false;
        let u = self.stylus_energy_j();
        self.ledger.elastic_end_j += u;
        self.ledger.user_work_j += u;
        Ok(())
    }

    /// Clips the stylus to a named grab point (by index) with the given spring.
    pub fn attach_stylus_to_grab_point(
        &mut self,
        grab_index: usize,
        stiffness_n_per_m: f64,
        damping_n_s_per_m: f64,
    ) -> Result<(), SimError> {
        let g = self
            .grab_points
            .get(grab_index)
            .ok_or(SimError::UnknownGrabPoint { index: grab_index })?;
        let attachment = StylusAttachment {
            body: g.body,
            point_in_body: g.point_in_body,
            stiffness_n_per_m,
            damping_n_s_per_m,
        };
        self.attach_stylus(attachment)
    }

    /// Releases the stylus; the energy the spring still holds goes back to the user.
    pub fn detach_stylus(&mut self) {
        if self.stylus.is_some() {
            let u = self.stylus_energy_j();
            self.ledger.elastic_end_j -= u;
            self.ledger.user_work_j -= u;
        }
        self.stylus = None;
        self.stylus_block.lambda = Vector3::zeros();
        self.impulses_carry_over = false;
    }

    /// The current attachment, if clipped.
    pub fn stylus_attachment(&self) -> Option<&StylusAttachment> {
        self.stylus.as_ref()
    }

    /// Sets the stylus tip for the next step: its position now and its velocity during the
    /// step (world frame). After each step the tip advances by h·velocity on its own, so a
    /// caller that updates less often than every step sees a smoothly moving tip.
    pub fn set_stylus_target(
        &mut self,
        position_in_world: Point3<f64>,
        velocity_in_world: Vector3<f64>,
    ) {
        let new_target = StylusTarget {
            position_in_world,
            velocity_in_world,
        };
        if self.stylus.is_some() {
            // Jumping the tip changes the spring energy: that is work done by the user.
            let before = self.stylus_energy_j();
            self.stylus_target = Some(new_target);
            let after = self.stylus_energy_j();
            self.ledger.elastic_end_j += after - before;
            self.ledger.user_work_j += after - before;
        } else {
            self.stylus_target = Some(new_target);
        }
    }

    /// The stylus tip the solver uses, if one was set.
    pub fn stylus_target(&self) -> Option<&StylusTarget> {
        self.stylus_target.as_ref()
    }

    /// World position of the clipped point, if clipped.
    pub fn stylus_point_in_world(&self) -> Option<Point3<f64>> {
        let s = self.stylus.as_ref()?;
        Some(self.bodies[s.body].point_in_world(&s.point_in_body))
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
        let Some(b) = self.bodies.get(body) else {
            return;
        };
        if !b.is_dynamic() {
            return;
        }
        let arm = point_in_world.coords - b.position_in_world;
        self.external_force[body] += force_in_world;
        self.external_torque[body] += arm.cross(&force_in_world);
    }

    // ----- energies and constraint error -----

    /// Kinetic energy of all bodies (J).
    pub fn kinetic_energy_j(&self) -> f64 {
        self.bodies.iter().map(Body::kinetic_energy_j).sum()
    }

    /// Gravitational energy −Σ m g·x (J).
    pub fn potential_energy_j(&self) -> f64 {
        self.bodies
            .iter()
            .map(|b| -b.mass_kg * self.gravity_in_world.dot(&b.position_in_world))
            .sum()
    }

    /// Elastic energy of springs and of the stylus spring (J).
    pub fn elastic_energy_j(&self) -> f64 {
        let springs: f64 = self
            .springs
            .iter()
            .map(|s| {
                let p1 = self.bodies[s.body1].point_in_world(&s.point1_in_body1);
                let p2 = self.bodies[s.body2].point_in_world(&s.point2_in_body2);
                s.elastic_energy_j((p2 - p1).norm())
            })
            .sum();
        springs + self.stylus_energy_j()
    }

    fn stylus_energy_j(&self) -> f64 {
        match (&self.stylus, &self.stylus_target) {
            (Some(s), Some(t)) => {
                let p = self.bodies[s.body].point_in_world(&s.point_in_body);
                0.5 * s.stiffness_n_per_m * (p - t.position_in_world).norm_squared()
            }
            _ => 0.0,
        }
    }

    /// ‖ψ‖ over all joint rows at the current poses (m; angular rows at a 1 m lever arm).
    pub fn constraint_norm_m(&self) -> f64 {
        self.joints
            .iter()
            .map(|j| {
                let psi = j.psi(
                    &Pose::of(&self.bodies[j.body1]),
                    &Pose::of(&self.bodies[j.body2]),
                );
                squared_norm(j, &psi)
            })
            .sum::<f64>()
            .sqrt()
    }

    // ----- the step -----

    /// Advances the simulation by one fixed step h (see the module docs for the stages).
    ///
    /// A step whose nonlinear velocity solve does not converge, or that leaves the joints
    /// open after the position pass, is not kept: the state is restored and the same interval
    /// is covered by 2, 4, ... up to [`MAX_STEP_SPLITS`] sub-steps of h/2ᵏ (see
    /// [`StepDiagnostics::substeps`]). That happens when the user yanks the stylus so hard
    /// within one step that the rows at the start and end poses differ too much for the
    /// midpoint linearisation; a shorter step is then the correct answer, not a bigger
    /// impulse.
    pub fn step(&mut self) {
        let h = self.params.dt_secs;
        self.saved_state.clear();
        self.saved_state
            .extend(self.bodies.iter().map(BodyState::of));
        let saved = (self.ledger, self.stylus_target, self.time_secs);
        self.advance(h);
        let mut substeps = 1;
        while !self.step_accepted() && substeps < MAX_STEP_SPLITS {
            substeps *= 2;
            for (b, st) in self.bodies.iter_mut().zip(&self.saved_state) {
                st.restore(b);
            }
            self.end_geometry_valid = false;
            (self.ledger, self.stylus_target, self.time_secs) = saved;
            // The advance reads h from the parameters (every stage uses it).
            self.params.dt_secs = h / substeps as f64;
            let mut total = StepDiagnostics::default();
            for _ in 0..substeps {
                // A step that needed splitting is in a violent phase; there the plain
                // iteration from the free motion converged better than the Newton gain and
                // the guess carried over from the previous sub-step (measured: 21 against 36
                // solves per step over the ten pendula's chaotic swing).
                self.impulses_carry_over = false;
                self.advance(self.params.dt_secs);
                total.iterations += self.diagnostics.iterations;
                total.factorisations += self.diagnostics.factorisations;
                total.position_iterations += self.diagnostics.position_iterations;
                total.velocity_residual = total
                    .velocity_residual
                    .max(self.diagnostics.velocity_residual);
                if !self.step_accepted() {
                    break;
                }
            }
            self.params.dt_secs = h;
            self.diagnostics.iterations = total.iterations;
            self.diagnostics.factorisations = total.factorisations;
            self.diagnostics.position_iterations = total.position_iterations;
            self.diagnostics.velocity_residual = total.velocity_residual;
        }
        self.diagnostics.substeps = substeps;
        for (f, t) in self
            .external_force
            .iter_mut()
            .zip(self.external_torque.iter_mut())
        {
            *f = Vector3::zeros();
            *t = Vector3::zeros();
        }
    }

    /// Whether the last (sub-)step converged: finite, the nonlinear velocity residual within
    /// [`REJECT_RESIDUAL_FACTOR`] of its tolerance and ‖ψ‖ within that factor of the
    /// position tolerance.
    fn step_accepted(&self) -> bool {
        let d = &self.diagnostics;
        let f = REJECT_RESIDUAL_FACTOR;
        // The last row refresh's velocity change measures how far the velocities are from
        // the discrete equations of motion with the end-pose rows; when refreshing diverged
        // the step may close the joints and still gain energy.
        let rows_converged = self.params.max_row_refreshes == 0
            || d.row_refresh_change <= f * self.params.velocity_tolerance;
        d.kinetic_j.is_finite()
            && d.constraint_norm_m.is_finite()
            && d.velocity_residual <= f * self.params.velocity_tolerance
            && d.constraint_norm_m <= f * self.params.position_tolerance_m
            && rows_converged
    }

    /// One step of length h = `params.dt_secs` (stages 1–7 of the module docs). External
    /// forces stay queued (a split step applies them in every sub-step).
    fn advance(&mut self, h: f64) {
        // The coupled matrix is factored once per step, from the rows at the start of the
        // velocity stage; the refreshed midpoint rows differ from those by O(h·ω), so the
        // same factor still solves their linearisations as a chord (simplified Newton)
        // iteration, and the nonlinear residual, which uses the current rows, decides
        // convergence; when that contracts too slowly the current rows are factored (see
        // CHORD_CONTRACTION). A factor is not carried into the next step: with the cross
        // lift's redundant constraints a factor whose near-null space has turned amplifies
        // the residual instead of removing it.
        self.dense_factored = false;
        self.factorisations = 0;
        // The last step's final prediction is where the bodies are (see `end_geometry_valid`).
        let reuse_end = std::mem::take(&mut self.end_geometry_valid)
            && self.params.method == SolverMethod::Direct;
        // 1. Free motion.
        self.update_inertia();
        for (i, b) in self.bodies.iter_mut().enumerate() {
            if !reuse_end {
                self.start[i] = Pose::of(b);
            } else if b.is_dynamic() {
                self.start[i] = self.predicted[i];
            }
            self.v_start[i] = b.linear_velocity_in_world;
            self.w_start[i] = b.angular_velocity_in_world;
            if b.is_dynamic() {
                b.linear_velocity_in_world +=
                    (self.gravity_in_world + self.external_force[i] * b.inv_mass) * h;
                b.angular_velocity_in_world += self.inv_inertia[i] * self.external_torque[i] * h;
            }
            self.v_free[i] = b.linear_velocity_in_world;
            self.w_free[i] = b.angular_velocity_in_world;
        }

        // 2. Prepare blocks at the start poses. The coupled solve starts from zero impulses
        // and builds its rows at the predicted midpoint, so it needs only ψ here: the last
        // step's final ψ, when the poses are still those it ended with.
        for i in 0..self.joints.len() {
            if reuse_end {
                let blk = &mut self.joint_blocks[i];
                blk.geometry_start = blk.geometry_pred;
                blk.psi_start = blk.psi_pred;
            } else if self.params.method == SolverMethod::GaussSeidel {
                // The warm start below applies the old impulses along the start-pose rows.
                self.prepare_joint_rows(i);
            } else {
                self.prepare_joint_psi(i);
            }
        }
        if self.stylus.is_some() {
            self.prepare_stylus();
        }
        for i in 0..self.springs.len() {
            self.spring_rows[i].e_start = self.spring_length_m(i) - self.springs[i].rest_length_m;
        }

        self.update_newton_inertia();

        // 3. Warm start (sweeps only): apply the previous step's impulses along the
        // start-pose rows and predict the end pose from there. The direct method starts from
        // zero instead: it needs no warm start, and with redundant constraints (the cross
        // lift) the impulses would otherwise accumulate components in the null space of Jᵀ,
        // which turn into velocity kicks once the rows rotate. (Using the old impulses only
        // to predict the first rows, and solving from zero, made the row refreshes of the
        // free swing stop converging: energy error 20 % after 8 s.)
        if self.params.method == SolverMethod::Direct {
            for blk in &mut self.joint_blocks {
                blk.lambda = [0.0; MAX_ROWS];
            }
            for r in &mut self.spring_rows {
                r.lambda = 0.0;
            }
            self.stylus_block.lambda = Vector3::zeros();
        }
        // The predicted poses still hold the start poses here (they became the poses); the
        // spring rows depend on poses only, so they can be refreshed before any impulse.
        for i in 0..self.springs.len() {
            self.update_spring_row(i);
        }
        if self.params.method == SolverMethod::GaussSeidel {
            self.apply_accumulated_impulses();
            self.flush_torques(false);
        }
        // (With the guess below, the first prediction is made from the guessed velocities.)
        if !self.newton_active {
            self.predict_all();
        }

        // 4. Sequential impulses, in outer linearisations: each fixes the midpoint rows J̄
        // and the Baumgarte bias from the predicted end pose, then Gauss–Seidel sweeps solve
        // that linear problem joint by joint; the accumulated impulses are re-applied along
        // the rows (v = v_free + M⁻¹ J̄ᵀ λ exactly) and the nonlinear residual is checked.
        let tolerance = self.params.velocity_tolerance;
        let mut iterations = 0;
        let mut residual = f64::INFINITY;
        // (Only with the Newton gain: without it, a guess made the cross lift's plain
        // iteration split 309 of 1000 steps.)
        let guess = self.newton_active;
        if guess {
            // The first rows are taken at the end pose that the previous step's constraint
            // velocity change predicts (motion is smooth over a step), not at the free
            // motion's: the solve starts from zero impulses all the same, only nearer. Not
            // after a jump in the loads (see `impulses_carry_over`), when that guess is off.
            for ((b, dv), (v, w)) in self
                .bodies
                .iter_mut()
                .zip(&self.constraint_velocity_change)
                .zip(self.v_free.iter().zip(&self.w_free))
            {
                if b.is_dynamic() {
                    b.linear_velocity_in_world = v + dv.0;
                    b.angular_velocity_in_world = w + dv.1;
                }
            }
            self.predict_all();
            self.save_velocities();
        }
        self.update_rows();
        self.reset_to_free_motion();
        // (The coupled solve starts from zero impulses: there is nothing to apply yet.)
        if self.params.method == SolverMethod::GaussSeidel {
            self.apply_accumulated_impulses();
        }
        self.flush_torques(false);
        if guess {
            // The rows belong to the guessed velocities: the Newton iterate is taken from
            // there (see the refresh below).
            self.apply_newton_gain();
        }
        self.predict_all();
        let mut last_change = f64::INFINITY;
        let mut change_before = f64::INFINITY;
        let mut refreshes = 0;
        loop {
            for _outer in 0..MAX_LINEARISATIONS {
                self.linearise();
                loop {
                    iterations += 1;
                    let inner = match self.params.method {
                        SolverMethod::Direct => match self.direct_solve() {
                            Some(r) => r,
                            // A failed factorisation (NaN state): fall back to sweeps.
                            None => self.sweep(iterations),
                        },
                        SolverMethod::GaussSeidel => self.sweep(iterations),
                    };
                    let done = match self.params.method {
                        SolverMethod::Direct => true,
                        SolverMethod::GaussSeidel => inner < 0.25 * tolerance,
                    };
                    if done || iterations >= self.params.max_iterations {
                        break;
                    }
                }
                self.predict_all();
                let previous = residual;
                residual = self.nonlinear_residual();
                // Rows that will still be refreshed need not be solved more accurately than
                // the last refresh moved the velocities (inexact Newton): the first rows,
                // from the free-motion prediction, get one solve.
                let round_tolerance = if refreshes < self.params.max_row_refreshes {
                    tolerance.max(ROUND_TOLERANCE_FRACTION * last_change)
                } else {
                    tolerance
                };
                if residual < round_tolerance || iterations >= self.params.max_iterations {
                    break;
                }
                // A factor from rows that have since been refreshed contracts the residual
                // only linearly; when that is slow (the cross lift's closed loops), factor
                // the current rows.
                if residual > CHORD_CONTRACTION * previous {
                    self.dense_factored = false;
                }
            }
            // Re-evaluate the midpoint rows at the converged prediction, for the exact work
            // identities; stop when they no longer move the velocities, or when refreshing
            // stops converging (light bodies under large impulses), or at the caps. Once two
            // refreshes have shown how fast they contract (θ), the next one's change is
            // estimated as θ/(1 − θ) times the last (the stopping rule of simplified Newton
            // iterations, Hairer & Wanner, Solving ODEs II, IV.8): when that is under the
            // tolerance and ψ is closed, the refresh is not needed.
            if refreshes >= 2 && residual < tolerance && last_change < change_before {
                let theta = last_change / change_before;
                let estimate = theta / (1.0 - theta) * last_change;
                if estimate < tolerance {
                    last_change = estimate;
                    break;
                }
            }
            if refreshes >= self.params.max_row_refreshes
                || iterations >= self.params.max_iterations
            {
                break;
            }
            refreshes += 1;
            self.save_velocities();
            self.update_rows();
            self.reapply_impulses();
            let mut change = 0.0_f64;
            for (snap, b) in self.velocity_snapshot.iter().zip(&self.bodies) {
                change = larger(change, abs_max(&(b.linear_velocity_in_world - snap.0)));
                change = larger(
                    change,
                    abs_max(&(b.angular_velocity_in_world - snap.1)) * ROW_REFRESH_LEVER_M,
                );
            }
            // The refresh is one fixed-point step of ω′ = ω_free + I⁻¹τ(ω′); its Newton
            // step is the gain times its change.
            if refreshes == 1 && self.newton_active {
                self.renew_newton_gain();
            }
            self.apply_newton_gain();
            self.predict_all();
            // (ψ̂ at the new prediction is kept for the next linearisation.)
            residual = self.nonlinear_residual();
            let diverging = change > last_change;
            change_before = last_change;
            last_change = change;
            if change < tolerance && residual < tolerance {
                break;
            }
            if diverging {
                if self.newton_active {
                    // The Newton inertia from the last step's impulses misleads here (a jump
                    // in the loads, or the cross lift's closed loops, whose coupling between
                    // bodies it leaves out): go on with the plain iteration and a plain factor,
                    // and for the next steps too.
                    self.newton_active = false;
                    self.newton_renewed = false;
                    self.dense_factored = false;
                    self.newton_backoff_steps = NEWTON_BACKOFF_STEPS;
                } else {
                    // Refreshing diverges here: converge once more with these rows and stop.
                    refreshes = self.params.max_row_refreshes;
                }
            }
        }

        self.impulses_carry_over = true;
        for ((dv, b), (v, w)) in self
            .constraint_velocity_change
            .iter_mut()
            .zip(&self.bodies)
            .zip(self.v_free.iter().zip(&self.w_free))
        {
            *dv = (
                b.linear_velocity_in_world - v,
                b.angular_velocity_in_world - w,
            );
        }

        // 5. Integrate positions (the predicted poses are exactly the integrated ones). The
        // velocity stage worked with the inertia of the start orientation R₁, i.e. on the
        // body-frame rate Ω = R₁ᵀω; the state carried to the next step is that same Ω, so the
        // world vector turns with the body: ω ← R₂R₁ᵀ ω. Then ½ ωᵀ I(R₂) ω at the end equals
        // the ½ ωᵀ I(R₁) ω whose change the impulses' work accounts for exactly; leaving ω
        // fixed in the world instead changed Ω by the step's rotation, a first-order energy
        // error that grew without bound once the chain swung out of its plane.
        for (b, p) in self.bodies.iter_mut().zip(&self.predicted) {
            if b.is_dynamic() {
                let turn = p.q * b.world_from_body_rotation.inverse();
                b.angular_velocity_in_world = turn * b.angular_velocity_in_world;
                b.position_in_world = p.x;
                b.world_from_body_rotation = p.q;
            }
        }

        // 6. Position correction if needed.
        // The poses are now exactly the last prediction, whose ψ is usually at hand.
        let mut norm = if self.psi_pred_valid {
            self.joints
                .iter()
                .zip(&self.joint_blocks)
                .map(|(j, blk)| squared_norm(j, &blk.psi_pred))
                .sum::<f64>()
                .sqrt()
        } else {
            self.constraint_norm_m()
        };
        let mut position_iterations = 0;
        while norm > self.params.position_tolerance_m
            && position_iterations < self.params.max_position_iterations
        {
            position_iterations += 1;
            self.ensure_joint_factors();
            for i in 0..self.joints.len() {
                self.project_joint(i);
            }
            norm = self.constraint_norm_m();
        }
        self.end_geometry_valid = self.psi_pred_valid && position_iterations == 0;

        // 7. Reactions, work, energies.
        for i in 0..self.joints.len() {
            let blk = &self.joint_blocks[i];
            let n = self.joints[i].rows();
            let mut f = Vector3::zeros();
            let mut t = Vector3::zeros();
            for k in 0..n {
                f -= blk.rows[k].lin * blk.lambda[k];
                t += blk.rows[k].ang2 * blk.lambda[k];
            }
            f /= h;
            t /= h;
            let arm2 = self.bodies[self.joints[i].body2].world_from_body_rotation
                * self.joints[i].anchor2_in_body2;
            self.reactions[i] = JointReaction {
                force_in_world: f,
                torque_in_world: t - arm2.cross(&f),
            };
        }
        if let Some(t) = self.stylus_target.as_mut() {
            t.position_in_world += t.velocity_in_world * h;
        }
        self.book_work(h);
        let kinetic = self.kinetic_energy_j();
        let potential = self.potential_energy_j();
        let elastic = self.elastic_energy_j();
        self.ledger.potential_end_j = potential;
        self.ledger.elastic_end_j = elastic;
        let energy = kinetic + potential + elastic;
        self.ledger.reference_j = self.ledger.reference_j.max(energy - self.ledger.initial_j);
        let balance = energy + self.ledger.dissipated_j
            - self.ledger.user_work_j
            - self.ledger.external_work_j
            - self.ledger.initial_j;

        self.time_secs += h;
        self.diagnostics = StepDiagnostics {
            time_secs: self.time_secs,
            constraint_norm_m: norm,
            kinetic_j: kinetic,
            potential_j: potential,
            elastic_j: elastic,
            user_work_j: self.ledger.user_work_j,
            external_work_j: self.ledger.external_work_j,
            dissipated_j: self.ledger.dissipated_j,
            energy_reference_j: self.ledger.reference_j,
            energy_error_rel: balance / self.ledger.reference_j,
            clipped: self.stylus.is_some(),
            iterations,
            factorisations: self.factorisations,
            velocity_residual: residual,
            position_iterations,
            substeps: 1,
            row_refresh_change: last_change,
        };
    }

    // ----- pipeline pieces -----

    /// One Gauss–Seidel sweep over all elements of the current linearisation (backward on
    /// even sweeps when symmetric); returns the largest midpoint-velocity error found.
    fn sweep(&mut self, iteration: usize) -> f64 {
        self.ensure_joint_factors();
        let mut residual = 0.0_f64;
        let nj = self.joints.len();
        if self.params.symmetric_sweeps && iteration.is_multiple_of(2) {
            if self.stylus.is_some() {
                residual = residual.max(self.solve_stylus());
            }
            for i in (0..self.springs.len()).rev() {
                residual = residual.max(self.solve_spring(i));
            }
            for i in (0..nj).rev() {
                residual = residual.max(self.solve_joint(i));
            }
        } else {
            for i in 0..nj {
                residual = residual.max(self.solve_joint(i));
            }
            for i in 0..self.springs.len() {
                residual = residual.max(self.solve_spring(i));
            }
            if self.stylus.is_some() {
                residual = residual.max(self.solve_stylus());
            }
        }
        residual
    }

    /// Solves the current linearisation with the coupled factorisation of all rows (factored
    /// once per step, see [`Self::advance`]) and applies the impulse increments along the
    /// current rows. Returns the largest row-velocity error before the solve, or `None` if
    /// the factorisation failed.
    fn direct_solve(&mut self) -> Option<f64> {
        if !self.dense_factored {
            self.factorisations += 1;
            self.assemble_and_factor()?;
            self.dense_factored = true;
        }
        let nb = self.global_blocks.len();
        if nb == 0 {
            return Some(0.0);
        }
        let h = self.params.dt_secs;
        let keep = 1.0 - self.params.beta;
        // Right-hand sides. A joint row's is its target minus its rate; the target is that
        // rate plus 2((1 − β)ψₙ − ψ̂)/h at the same velocities, so the rate cancels.
        let mut residual = 0.0_f64;
        let stylus_g = self.stylus_residual_impulse();
        for a in 0..nb {
            let gb = &self.global_blocks[a];
            let mut rhs = [0.0; BLOCK];
            match gb.owner {
                BlockOwner::Joint(i) => {
                    let blk = &self.joint_blocks[i];
                    for (k, r) in rhs.iter_mut().enumerate().take(gb.rows) {
                        *r = 2.0 * blk.closure_error(k, keep) / h;
                        residual = larger(residual, 0.5 * r.abs());
                    }
                }
                BlockOwner::Spring(i) => {
                    let g = self.spring_residual_impulse(i);
                    let w = self.spring_rows[i].w;
                    let inv_soft = gb.inv_soft[0];
                    residual =
                        residual.max((0.5 * g * w * inv_soft / (1.0 + w * inv_soft.recip())).abs());
                    rhs[0] = -g * inv_soft;
                }
                BlockOwner::Stylus => {
                    for k in 0..3 {
                        rhs[k] = -stylus_g[k] * gb.inv_soft[k];
                    }
                }
            }
            self.dense_rhs[a] = rhs;
        }
        self.dense.solve(&mut self.dense_rhs[..nb]);
        // Along the current rows, which may have been refreshed since the factorisation, so
        // that v = v_free + M⁻¹ J̄ᵀ λ holds for the rows the work identities use, up to the
        // Newton gain's anticipation of the rows' turning (removed by the next refresh): the
        // angular change is G I⁻¹ τ.
        for (rhs, gb) in self.dense_rhs.iter().zip(&self.global_blocks) {
            match gb.owner {
                BlockOwner::Joint(i) => {
                    let blk = &mut self.joint_blocks[i];
                    for (l, d) in blk.lambda.iter_mut().zip(&rhs[..gb.rows]) {
                        *l += d;
                    }
                    add_row_impulses(
                        &mut self.bodies,
                        &mut self.torque,
                        gb.b1,
                        gb.b2,
                        &blk.rows[..gb.rows],
                        &rhs[..gb.rows],
                    );
                }
                BlockOwner::Spring(i) => {
                    let r = &mut self.spring_rows[i];
                    r.lambda += rhs[0];
                    add_row_impulses(
                        &mut self.bodies,
                        &mut self.torque,
                        gb.b1,
                        gb.b2,
                        std::slice::from_ref(&r.row),
                        &rhs[..1],
                    );
                }
                BlockOwner::Stylus => {
                    let d = Vector3::new(rhs[0], rhs[1], rhs[2]);
                    self.stylus_block.lambda += d;
                    add_stylus_impulse(
                        &mut self.bodies,
                        &mut self.torque,
                        gb.b1,
                        &self.stylus_block.arm,
                        &d,
                    );
                }
            }
        }
        self.flush_torques(self.newton_active);
        Some(residual)
    }

    /// Collects the rows of all elements (current rows), a block per element, and factors
    /// J M⁻¹ Jᵀ + diag(1/soft) within its block profile.
    fn assemble_and_factor(&mut self) -> Option<()> {
        let h = self.params.dt_secs;
        self.global_blocks.clear();
        let newton = self.newton_active;
        if newton && self.newton_inertia_stale {
            self.newton_inertia_from_turning();
        }
        let weight = |b: BodyId, ang: &Vector3<f64>| {
            if newton {
                self.newton_inv_inertia[b] * ang
            } else {
                self.inv_inertia[b] * ang
            }
        };
        for (i, j) in self.joints.iter().enumerate() {
            let blk = &self.joint_blocks[i];
            self.global_blocks
                .push(GlobalBlock::new(BlockOwner::Joint(i), j.body1, j.body2));
            let gb = self.global_blocks.last_mut().expect("just pushed");
            for k in 0..j.rows() {
                let row = &blk.rows[k];
                let w1 = weight(j.body1, &row.ang1);
                let w2 = weight(j.body2, &row.ang2);
                gb.push(row, &w1, &w2, 0.0);
            }
        }
        for (i, s) in self.springs.iter().enumerate() {
            let r = &self.spring_rows[i];
            let soft = 0.5 * h * (0.5 * h * s.stiffness_n_per_m + s.damping_n_s_per_m);
            if r.active && soft > 0.0 {
                let mut gb = GlobalBlock::new(BlockOwner::Spring(i), s.body1, s.body2);
                let w1 = weight(s.body1, &r.row.ang1);
                let w2 = weight(s.body2, &r.row.ang2);
                gb.push(&r.row, &w1, &w2, 1.0 / soft);
                self.global_blocks.push(gb);
            }
        }
        if let Some(s) = self.stylus {
            let blk = &self.stylus_block;
            let soft = 0.5 * h * (0.5 * h * s.stiffness_n_per_m + s.damping_n_s_per_m);
            let mut gb = GlobalBlock::new(BlockOwner::Stylus, s.body, GROUND);
            for k in 0..3 {
                let e = Vector3::ith(k, 1.0);
                let row = Row {
                    lin: e,
                    ang1: blk.arm.cross(&e),
                    ang2: Vector3::zeros(),
                };
                let w1 = weight(s.body, &row.ang1);
                gb.push(&row, &w1, &Vector3::zeros(), 1.0 / soft);
            }
            self.global_blocks.push(gb);
        }
        let nb = self.global_blocks.len();
        // The profile: a block couples back to the first earlier block that acts on one of
        // its moving bodies.
        self.body_first_block.fill(usize::MAX);
        for (a, gb) in self.global_blocks.iter().enumerate() {
            let mut first = a;
            for b in [gb.b1, gb.b2] {
                if self.bodies[b].is_dynamic() {
                    let f = &mut self.body_first_block[b];
                    if *f == usize::MAX {
                        *f = a;
                    }
                    first = first.min(*f);
                }
            }
            self.dense_first[a] = first;
        }
        self.dense
            .begin(nb, |a| self.dense_first[a], |a| self.global_blocks[a].rows);
        assemble(
            &mut self.dense,
            &self.global_blocks,
            &self.dense_first,
            &self.bodies,
        );
        self.dense.factor(DENSE_REGULARISATION)
    }

    /// The spring residual g(λ) of the current linearisation (an impulse, N·s).
    fn spring_residual_impulse(&self, i: usize) -> f64 {
        let r = &self.spring_rows[i];
        let s = &self.springs[i];
        let h = self.params.dt_secs;
        let (bd1, bd2) = (&self.bodies[s.body1], &self.bodies[s.body2]);
        let u = r
            .row
            .lin
            .dot(&(bd1.linear_velocity_in_world - bd2.linear_velocity_in_world))
            + r.row.ang1.dot(&bd1.angular_velocity_in_world)
            + r.row.ang2.dot(&bd2.angular_velocity_in_world);
        let e_lin = r.e_end + 0.5 * h * (u - r.u_lin);
        let rate = 0.5 * (r.u_start + u);
        r.lambda
            + h * s.stiffness_n_per_m * 0.5 * (r.e_start + e_lin)
            + h * s.damping_n_s_per_m * rate
    }

    /// The stylus residual g(λ) of the current linearisation (impulse, N·s).
    fn stylus_residual_impulse(&self) -> Vector3<f64> {
        let (Some(s), Some(t)) = (self.stylus, self.stylus_target) else {
            return Vector3::zeros();
        };
        let h = self.params.dt_secs;
        let blk = &self.stylus_block;
        let b = &self.bodies[s.body];
        let u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        let e_lin = blk.e_lin + (u - blk.u_lin) * (0.5 * h);
        let rate = (blk.u_start + u) * 0.5 - t.velocity_in_world;
        blk.lambda
            + (blk.e_start + e_lin) * (0.5 * h * s.stiffness_n_per_m)
            + rate * (h * s.damping_n_s_per_m)
    }

    /// Evaluates the midpoint rows of every element at the current prediction (before the
    /// first linearisation and at each row refresh); for the sweeps it also factors the
    /// per-element blocks.
    fn update_rows(&mut self) {
        self.evaluate_predicted_psi();
        for i in 0..self.joints.len() {
            self.update_joint_rows(i);
        }
        for i in 0..self.springs.len() {
            self.update_spring_row(i);
        }
        if self.stylus.is_some() {
            self.update_stylus_arm();
        }
        // The coupled solve does not use the per-element factors: they are made when a
        // sweep or the position pass needs them.
        self.joint_factors_valid = false;
        if self.params.method == SolverMethod::GaussSeidel {
            self.ensure_joint_factors();
        }
    }

    /// Linearises every element about the current prediction with the fixed rows: the
    /// joints' Baumgarte bias from the nonlinear ψ̂, the soft rows' extension and rates.
    fn linearise(&mut self) {
        let h = self.params.dt_secs;
        let keep = 1.0 - self.params.beta;
        self.evaluate_predicted_psi();
        // The coupled solve takes its joint right-hand sides straight from ψ̂ (the row rates
        // cancel there); only the sweeps need the targets.
        if self.params.method == SolverMethod::GaussSeidel {
            for i in 0..self.joints.len() {
                for k in 0..self.joints[i].rows() {
                    let rate = self.joint_row_rate(i, k);
                    let blk = &mut self.joint_blocks[i];
                    // ψ̂ moves by (h/2)·ΔJ̄v: the midpoint velocity changes by half as much.
                    blk.bias[k] = rate + 2.0 * blk.closure_error(k, keep) / h;
                }
            }
        }
        for i in 0..self.springs.len() {
            let s = &self.springs[i];
            let (b1, b2) = (s.body1, s.body2);
            let (p1, p2) = (&self.predicted[b1], &self.predicted[b2]);
            let e_pred = ((p2.x + p2.r * s.point2_in_body2) - (p1.x + p1.r * s.point1_in_body1))
                .norm()
                - s.rest_length_m;
            let r = self.spring_rows[i];
            let u_now = r.row.lin.dot(
                &(self.bodies[b1].linear_velocity_in_world
                    - self.bodies[b2].linear_velocity_in_world),
            ) + r.row.ang1.dot(&self.bodies[b1].angular_velocity_in_world)
                + r.row.ang2.dot(&self.bodies[b2].angular_velocity_in_world);
            let u_start = r.row.lin.dot(&(self.v_start[b1] - self.v_start[b2]))
                + r.row.ang1.dot(&self.w_start[b1])
                + r.row.ang2.dot(&self.w_start[b2]);
            let sr = &mut self.spring_rows[i];
            sr.e_end = e_pred;
            sr.u_lin = u_now;
            sr.u_start = u_start;
        }
        if let Some(s) = self.stylus {
            let b = &self.bodies[s.body];
            let arm = self.stylus_block.arm;
            let pred = &self.predicted[s.body];
            let tip_end = self.stylus_target.map_or(Vector3::zeros(), |t| {
                t.position_in_world.coords + t.velocity_in_world * h
            });
            let e_pred = pred.x + pred.r * s.point_in_body - tip_end;
            let u_now = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&arm);
            let u_start = self.v_start[s.body] + self.w_start[s.body].cross(&arm);
            let blk = &mut self.stylus_block;
            blk.e_lin = e_pred;
            blk.u_lin = u_now;
            blk.u_start = u_start;
        }
    }

    /// Rate J̄ₖ v of row `k` of joint `i` at the current velocities.
    fn joint_row_rate(&self, i: usize, k: usize) -> f64 {
        let j = &self.joints[i];
        let row = &self.joint_blocks[i].rows[k];
        let (b1, b2) = (&self.bodies[j.body1], &self.bodies[j.body2]);
        row.lin
            .dot(&(b1.linear_velocity_in_world - b2.linear_velocity_in_world))
            + row.ang1.dot(&b1.angular_velocity_in_world)
            + row.ang2.dot(&b2.angular_velocity_in_world)
    }

    /// Largest nonlinear error at the current prediction, as a velocity: joints
    /// |ψ̂ − (1 − β)ψₙ| / h, soft elements the velocity change still owed.
    fn nonlinear_residual(&mut self) -> f64 {
        let h = self.params.dt_secs;
        let keep = 1.0 - self.params.beta;
        self.evaluate_predicted_psi();
        // The largest error, then one division (as h > 0, the same as the largest quotient).
        let mut closure = 0.0_f64;
        for (j, blk) in self.joints.iter().zip(&self.joint_blocks) {
            for k in 0..j.rows() {
                closure = larger(closure, blk.closure_error(k, keep).abs());
            }
        }
        let mut residual = closure / h;
        for (i, s) in self.springs.iter().enumerate() {
            let r = &self.spring_rows[i];
            if !r.active {
                continue;
            }
            let (p1, p2) = (&self.predicted[s.body1], &self.predicted[s.body2]);
            let e_pred = ((p2.x + p2.r * s.point2_in_body2) - (p1.x + p1.r * s.point1_in_body1))
                .norm()
                - s.rest_length_m;
            let (k, c) = (s.stiffness_n_per_m, s.damping_n_s_per_m);
            let g = r.lambda + h * k * 0.5 * (r.e_start + e_pred) + h * c * self.spring_rate(i);
            let soft = 0.5 * h * (0.5 * h * k + c);
            residual = residual.max((g * r.w / (1.0 + soft * r.w)).abs());
        }
        residual
    }

    fn update_inertia(&mut self) {
        for ((m, i), b) in self
            .inv_inertia
            .iter_mut()
            .zip(self.inertia.iter_mut())
            .zip(&self.bodies)
        {
            (*i, *m) = if b.is_dynamic() {
                b.inertia_and_inverse_in_world()
            } else {
                (Matrix3::zeros(), Matrix3::zeros())
            };
        }
    }

    /// Sets each body's Newton inertia from the previous step's impulses (the current ones
    /// start at zero and end close to those): the A that step renewed after its first solve
    /// (`Self::renew_newton_gain`), or else A made now at the start poses.
    ///
    /// The midpoint rows turn with the end velocities, so a torque r̄ × F on a body changes
    /// with its own end angular velocity ω′ by A = ∂τ/∂ω′ (the joints'
    /// [`Joint::turning_stiffness`], and the same for springs and the stylus; the gyroscopic
    /// impulse adds (h/2)([Iω̄]× − [ω̄]×I)). The velocities
    /// solve ω′ = ω_free + I⁻¹ τ(ω′): re-evaluating the rows and re-applying the impulses is
    /// a fixed-point iteration that contracts only by ‖I⁻¹A‖, measured 0.25–0.4 on the
    /// swinging ten pendula, where the hanging chain's tension turns the light links' arms.
    /// Left unconverged it does not keep the midpoint identities, and the energy drifted
    /// (16 % after 60 s of free swing). The Newton step (I − A)⁻¹ I applied to the change of
    /// ω, and (I − A)⁻¹ in place of I⁻¹ in the coupled matrix, converges in a few
    /// iterations. A body whose I − A is not safely positive definite (a huge pull on a
    /// light body) keeps the plain iteration and, if that diverges, the step splitting.
    fn update_newton_inertia(&mut self) {
        self.newton_active = false;
        let renewed = std::mem::take(&mut self.newton_renewed);
        // Without row refreshes the rows never turn within a step: nothing to anticipate.
        if self.params.method != SolverMethod::Direct
            || !self.impulses_carry_over
            || self.params.max_row_refreshes == 0
        {
            return;
        }
        if self.newton_backoff_steps > 0 {
            self.newton_backoff_steps -= 1;
            return;
        }
        // The last step renewed A from its first solve's impulses, which differ from its final
        // ones by less than the step-to-step change: starting from that A is as good as making
        // it again (same solves per step, and as many split steps over ten 300 s free swings,
        // 74207 against 67994, within the spread that rounding alone causes) and saves 4 % of
        // a ten-pendula step.
        if renewed {
            if self.newton_inertia_stale {
                self.newton_inertia_from_turning();
            }
            self.newton_active = true;
        } else {
            self.collect_turning_stiffness();
            let gain = self.newton_gain_from_turning();
            let inertia = self.newton_inertia_from_turning();
            self.newton_active = gain || inertia;
        }
        if self.newton_active {
            // I⁻¹ is this step's.
            self.update_solve_inertia();
        }
    }

    /// Sets each body's Newton gain (I − A)⁻¹I from its A (`turning`); a body for which it is
    /// unsafe keeps the identity. Returns whether any body got a gain.
    fn newton_gain_from_turning(&mut self) -> bool {
        let mut any = false;
        for (b, body) in self.bodies.iter().enumerate() {
            let a = &self.turning[b];
            self.newton_gain[b] = Matrix3::identity();
            if !body.is_dynamic() || a.iter().all(|x| *x == 0.0) {
                continue;
            }
            if let Some(g) = newton_gain_of(&self.inertia[b], a) {
                self.newton_gain[b] = g;
                any = true;
            }
        }
        any
    }

    /// Sets each body's coupled-matrix inertia (I − A_sym)⁻¹ from its A (`turning`); a body
    /// for which it is unsafe keeps I⁻¹. Returns whether any body got one.
    fn newton_inertia_from_turning(&mut self) -> bool {
        let mut any = false;
        for (b, body) in self.bodies.iter().enumerate() {
            let a = &self.turning[b];
            self.newton_inv_inertia[b] = self.inv_inertia[b];
            if !body.is_dynamic() || a.iter().all(|x| *x == 0.0) {
                continue;
            }
            let inertia = self.inertia[b];
            // The coupled matrix needs a symmetric positive definite I − A: with a margin
            // of 1/4, as A is an estimate; otherwise that body keeps I⁻¹ there (a chord).
            let a_sym = (a + a.transpose()) * 0.5;
            if is_positive_definite3(&(inertia - a_sym * 1.25)) {
                if let Some(w) = spd_inverse3(&(inertia - a_sym)) {
                    self.newton_inv_inertia[b] = w;
                    any = true;
                }
            }
        }
        self.newton_inertia_stale = false;
        any
    }

    /// Sets `turning` to each body's A = ∂τ/∂ω′ for the impulses the elements hold now, at the
    /// start poses (see [`Self::update_newton_inertia`]).
    fn collect_turning_stiffness(&mut self) {
        let h = self.params.dt_secs;
        for a in &mut self.turning {
            *a = Matrix3::zeros();
        }
        for (j, blk) in self.joints.iter().zip(&self.joint_blocks) {
            let (a1, a2) = j.turning_stiffness(&blk.geometry_start, &blk.lambda, h);
            self.turning[j.body1] += a1;
            self.turning[j.body2] += a2;
        }
        // The gyroscopic impulse h (I ω̄) × ω̄, ω̄ = (ω₀ + ω′)/2, at ω̄ ≈ ω₀:
        // A = (h/2)([I ω̄]× − [ω̄]× I).
        for ((a, b), (inertia, w)) in self
            .turning
            .iter_mut()
            .zip(&self.bodies)
            .zip(self.inertia.iter().zip(&self.w_start))
        {
            if b.is_dynamic() {
                *a += ((inertia * w).cross_matrix() - w.cross_matrix() * inertia) * (0.5 * h);
            }
        }
        let q = 0.25 * h;
        for (s, r) in self.springs.iter().zip(&self.spring_rows) {
            let (p1, p2) = (&self.start[s.body1], &self.start[s.body2]);
            let (r1, r2) = (p1.r * s.point1_in_body1, p2.r * s.point2_in_body2);
            let d = (p2.x + r2) - (p1.x + r1);
            let len = d.norm();
            if len < MIN_SPRING_LENGTH_M {
                continue;
            }
            // Force n λ on body 2, −n λ on body 1.
            let f = d * (r.lambda / len);
            self.turning[s.body1] -= cross_cross(&f, &r1) * q;
            self.turning[s.body2] += cross_cross(&f, &r2) * q;
        }
        if let Some(s) = self.stylus {
            let arm = self.start[s.body].r * s.point_in_body;
            self.turning[s.body] += cross_cross(&self.stylus_block.lambda, &arm) * q;
        }
    }

    /// Renews the Newton gain and inertia from this step's impulses, once the first solve has
    /// found them.
    ///
    /// The previous step's impulses estimate A only roughly: on the swinging ten pendula the
    /// joints' impulses change by 4–11 % from one step to the next (neither their trend
    /// 2λₙ₋₁ − λₙ₋₂ nor their mean predicted them better), and the refreshes then contracted by
    /// ~0.03 each; in the chaotic phase of a long free swing the stale gain made most steps
    /// fail to converge and split. With A from the first solve's impulses the refreshes
    /// contract by ~0.005. The current factor keeps the step's first (I − A)⁻¹ (a chord: a
    /// refactorisation costs more than the solves it would save); a refactorisation, when the
    /// chord contracts too slowly, takes the renewed one. The next step starts from this A
    /// too ([`Self::update_newton_inertia`]).
    fn renew_newton_gain(&mut self) {
        self.collect_turning_stiffness();
        self.newton_renewed = self.newton_gain_from_turning();
        self.update_solve_inertia();
        self.newton_inertia_stale = true;
    }

    /// Replaces each body's angular-velocity change since `velocity_snapshot` by its Newton
    /// change G Δω (see [`Self::update_newton_inertia`]).
    fn apply_newton_gain(&mut self) {
        if !self.newton_active {
            return;
        }
        for ((b, (_, w0)), g) in self
            .bodies
            .iter_mut()
            .zip(&self.velocity_snapshot)
            .zip(&self.newton_gain)
        {
            if b.is_dynamic() {
                b.angular_velocity_in_world = w0 + g * (b.angular_velocity_in_world - w0);
            }
        }
    }

    /// Keeps the velocities before an update: the row refresh measures its change from them,
    /// and the Newton gain replaces the angular part of any update's change.
    fn save_velocities(&mut self) {
        for (snap, b) in self.velocity_snapshot.iter_mut().zip(&self.bodies) {
            *snap = (b.linear_velocity_in_world, b.angular_velocity_in_world);
        }
    }

    fn predict_all(&mut self) {
        let h = self.params.dt_secs;
        for ((((p, b), s), v0), w0) in self
            .predicted
            .iter_mut()
            .zip(&self.bodies)
            .zip(&self.start)
            .zip(&self.v_start)
            .zip(&self.w_start)
        {
            // A fixed body's prediction is its start pose, which it already holds.
            if b.is_dynamic() {
                p.set_predicted(s, v0, w0, b, h);
            }
        }
        self.psi_pred_valid = false;
    }

    /// Evaluates every joint's ψ at the predicted end poses, once per prediction.
    fn evaluate_predicted_psi(&mut self) {
        if self.psi_pred_valid {
            return;
        }
        for (j, blk) in self.joints.iter().zip(self.joint_blocks.iter_mut()) {
            j.set_geometry(
                &self.predicted[j.body1],
                &self.predicted[j.body2],
                &mut blk.geometry_pred,
            );
            blk.psi_pred = j.psi_of(&blk.geometry_pred);
        }
        self.psi_pred_valid = true;
    }

    /// Builds ψ and the rows of joint `i` at the current poses; the block factor is made
    /// from the rows when a sweep or the position pass needs it ([`Self::ensure_joint_factors`]).
    fn prepare_joint_rows(&mut self, i: usize) {
        self.prepare_joint_psi(i);
        let j = &self.joints[i];
        let blk = &mut self.joint_blocks[i];
        j.rows_of(&blk.geometry_start, &blk.geometry_start, &mut blk.rows);
        self.joint_factors_valid = false;
    }

    /// ψ of joint `i` and its attachment vectors at the start of the step.
    fn prepare_joint_psi(&mut self, i: usize) {
        let j = &self.joints[i];
        let blk = &mut self.joint_blocks[i];
        j.set_geometry(
            &self.start[j.body1],
            &self.start[j.body2],
            &mut blk.geometry_start,
        );
        blk.psi_start = j.psi_of(&blk.geometry_start);
    }

    /// Factors every joint's own block from its current rows, if that has not been done
    /// since they were last built. The coupled solve does not need these factors; the
    /// sweeps and the position pass do.
    fn ensure_joint_factors(&mut self) {
        if self.joint_factors_valid {
            return;
        }
        for i in 0..self.joints.len() {
            // A block that cannot be factored keeps its last factor (checked at build time;
            // it can only fail here for a degenerate pose).
            let _ = self.factor_joint(i);
        }
        if self.stylus.is_some() {
            self.factor_stylus();
        }
        self.joint_factors_valid = true;
    }

    /// Factors K = J M⁻¹ Jᵀ of joint `i` from its current rows.
    fn factor_joint(&mut self, i: usize) -> bool {
        let j = &self.joints[i];
        let n = j.rows();
        let inv_masses = self.bodies[j.body1].inv_mass + self.bodies[j.body2].inv_mass;
        let blk = &mut self.joint_blocks[i];
        let (ii1, ii2) = (&self.inv_inertia[j.body1], &self.inv_inertia[j.body2]);
        let ang1w = blk.rows.map(|row| ii1 * row.ang1);
        let ang2w = blk.rows.map(|row| ii2 * row.ang2);
        let mut a: BlockMatrix = [[0.0; MAX_ROWS]; MAX_ROWS];
        for r in 0..n {
            for c in 0..=r {
                let v = inv_masses * blk.rows[r].lin.dot(&blk.rows[c].lin)
                    + blk.rows[r].ang1.dot(&ang1w[c])
                    + blk.rows[r].ang2.dot(&ang2w[c]);
                a[r][c] = v;
                a[c][r] = v;
            }
        }
        match CholeskyBlock::factor(&a, n, BLOCK_EPSILON) {
            Some(f) => {
                blk.factor = f;
                true
            }
            None => false,
        }
    }

    /// Midpoint rows of joint `i` from the start and predicted poses (whose attachment
    /// vectors [`Self::evaluate_predicted_psi`] has made).
    fn update_joint_rows(&mut self, i: usize) {
        let j = &self.joints[i];
        let blk = &mut self.joint_blocks[i];
        j.rows_of(&blk.geometry_start, &blk.geometry_pred, &mut blk.rows);
    }

    fn spring_length_m(&self, i: usize) -> f64 {
        let s = &self.springs[i];
        let p1 = self.bodies[s.body1].point_in_world(&s.point1_in_body1);
        let p2 = self.bodies[s.body2].point_in_world(&s.point2_in_body2);
        (p2 - p1).norm()
    }

    /// Midpoint row of spring `i`: direction (d₀ + d₁)/(l₀ + l₁), the discrete gradient of
    /// the length, so that l₁ − l₀ = h J̄ v̄ exactly.
    fn update_spring_row(&mut self, i: usize) {
        let s = &self.springs[i];
        let (b1, b2) = (s.body1, s.body2);
        let (s1, e1, s2, e2) = (
            &self.start[b1],
            &self.predicted[b1],
            &self.start[b2],
            &self.predicted[b2],
        );
        let d_start = (s2.x + s2.r * s.point2_in_body2) - (s1.x + s1.r * s.point1_in_body1);
        let d_end = (e2.x + e2.r * s.point2_in_body2) - (e1.x + e1.r * s.point1_in_body1);
        let len_sum = d_start.norm() + d_end.norm();
        let sr = &mut self.spring_rows[i];
        if len_sum < MIN_SPRING_LENGTH_M {
            sr.active = false;
            return;
        }
        let n = (d_start + d_end) / len_sum;
        let r1 = (s1.r * s.point1_in_body1 + e1.r * s.point1_in_body1) * 0.5;
        let r2 = (s2.r * s.point2_in_body2 + e2.r * s.point2_in_body2) * 0.5;
        sr.e_end = d_end.norm() - s.rest_length_m;
        sr.row = Row {
            lin: -n,
            ang1: -r1.cross(&n),
            ang2: r2.cross(&n),
        };
        sr.w = (self.bodies[b1].inv_mass + self.bodies[b2].inv_mass) * n.norm_squared()
            + sr.row.ang1.dot(&(self.inv_inertia[b1] * sr.row.ang1))
            + sr.row.ang2.dot(&(self.inv_inertia[b2] * sr.row.ang2));
        sr.active = sr.w > 0.0;
    }

    fn prepare_stylus(&mut self) {
        let Some(s) = self.stylus else { return };
        let Some(t) = self.stylus_target else { return };
        let b = &self.bodies[s.body];
        let arm = b.world_from_body_rotation * s.point_in_body;
        self.stylus_block.arm = arm;
        self.stylus_block.e_start = (b.position_in_world + arm) - t.position_in_world.coords;
    }

    /// Factors I + ½h(½hk + c)·K of the stylus rows at the current arm.
    fn factor_stylus(&mut self) {
        let Some(s) = self.stylus else { return };
        let h = self.params.dt_secs;
        let inv_mass = self.bodies[s.body].inv_mass;
        let ii = self.inv_inertia[s.body];
        let blk = &mut self.stylus_block;
        let soft = 0.5 * h * (0.5 * h * s.stiffness_n_per_m + s.damping_n_s_per_m);
        let ang = [0, 1, 2].map(|k| blk.arm.cross(&Vector3::ith(k, 1.0)));
        let mut a: BlockMatrix = [[0.0; MAX_ROWS]; MAX_ROWS];
        for r in 0..3 {
            for c in 0..=r {
                let k_rc = if r == c { inv_mass } else { 0.0 } + ang[r].dot(&(ii * ang[c]));
                let v = soft * k_rc + if r == c { 1.0 } else { 0.0 };
                a[r][c] = v;
                a[c][r] = v;
            }
        }
        // I + s·K is always SPD (K is positive semi-definite), so this cannot fail.
        if let Some(f) = CholeskyBlock::factor(&a, 3, BLOCK_EPSILON) {
            blk.factor = f;
        }
    }

    /// Midpoint arm of the stylus point from the start and predicted poses.
    fn update_stylus_arm(&mut self) {
        let Some(s) = self.stylus else { return };
        let (ps, pe) = (&self.start[s.body], &self.predicted[s.body]);
        self.stylus_block.arm = (ps.r * s.point_in_body + pe.r * s.point_in_body) * 0.5;
    }

    /// One Gauss–Seidel update of joint `i` on the current linearisation; returns the
    /// largest midpoint-velocity error of its rows before the update.
    fn solve_joint(&mut self, i: usize) -> f64 {
        let j = &self.joints[i];
        let n = j.rows();
        let mut delta: BlockVector = [0.0; MAX_ROWS];
        let mut residual = 0.0_f64;
        for k in 0..n {
            let r = self.joint_blocks[i].bias[k] - self.joint_row_rate(i, k);
            residual = residual.max(r.abs());
            delta[k] = self.params.relaxation * r;
        }
        let blk = &mut self.joint_blocks[i];
        blk.factor.solve_in_place(&mut delta);
        for k in 0..n {
            blk.lambda[k] += delta[k];
        }
        let (b1, b2) = (j.body1, j.body2);
        add_row_impulses(
            &mut self.bodies,
            &mut self.torque,
            b1,
            b2,
            &blk.rows[..n],
            &delta[..n],
        );
        self.flush_torque(b1);
        self.flush_torque(b2);
        0.5 * residual
    }

    /// Rate of the midpoint row of spring `i` at the midpoint velocities.
    fn spring_rate(&self, i: usize) -> f64 {
        let s = &self.springs[i];
        let r = &self.spring_rows[i];
        let (b1, b2) = (&self.bodies[s.body1], &self.bodies[s.body2]);
        let v1 = (b1.linear_velocity_in_world + self.v_start[s.body1]) * 0.5;
        let v2 = (b2.linear_velocity_in_world + self.v_start[s.body2]) * 0.5;
        let w1 = (b1.angular_velocity_in_world + self.w_start[s.body1]) * 0.5;
        let w2 = (b2.angular_velocity_in_world + self.w_start[s.body2]) * 0.5;
        r.row.lin.dot(&(v1 - v2)) + r.row.ang1.dot(&w1) + r.row.ang2.dot(&w2)
    }

    fn solve_spring(&mut self, i: usize) -> f64 {
        let r = self.spring_rows[i];
        if !r.active {
            return 0.0;
        }
        let h = self.params.dt_secs;
        let s = &self.springs[i];
        let (b1, b2) = (s.body1, s.body2);
        let (k, c) = (s.stiffness_n_per_m, s.damping_n_s_per_m);
        let g = self.spring_residual_impulse(i);
        let soft = 0.5 * h * (0.5 * h * k + c);
        let delta = -g / (1.0 + soft * r.w);
        self.spring_rows[i].lambda += delta;
        add_row_impulses(
            &mut self.bodies,
            &mut self.torque,
            b1,
            b2,
            std::slice::from_ref(&r.row),
            &[delta],
        );
        self.flush_torque(b1);
        self.flush_torque(b2);
        (0.5 * delta * r.w).abs()
    }

    fn stylus_rate(
        &self,
        body: BodyId,
        arm: &Vector3<f64>,
        tip_velocity: &Vector3<f64>,
    ) -> Vector3<f64> {
        let b = &self.bodies[body];
        let v = (b.linear_velocity_in_world + self.v_start[body]) * 0.5;
        let w = (b.angular_velocity_in_world + self.w_start[body]) * 0.5;
        v + w.cross(arm) - tip_velocity
    }

    fn solve_stylus(&mut self) -> f64 {
        let (Some(s), Some(_)) = (self.stylus, self.stylus_target) else {
            return 0.0;
        };
        let blk = self.stylus_block;
        let b = &self.bodies[s.body];
        let u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        let g = self.stylus_residual_impulse();
        let mut delta: BlockVector = [-g.x, -g.y, -g.z, 0.0, 0.0, 0.0];
        blk.factor.solve_in_place(&mut delta);
        let delta = Vector3::new(delta[0], delta[1], delta[2]);
        self.stylus_block.lambda += delta;
        add_stylus_impulse(&mut self.bodies, &mut self.torque, s.body, &blk.arm, &delta);
        self.flush_torque(s.body);
        let b = &self.bodies[s.body];
        let new_u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        0.5 * (new_u - u).amax()
    }

    /// Sets the velocities to v_free + M⁻¹ (J̄ᵀ λ + gyroscopic impulse) along the current
    /// rows (the caller re-predicts). The gyroscopic impulse h (I ω̄) × ω̄ of Euler's equation is
    /// taken at the midpoint of the start and the current angular velocity (the iterate the
    /// rows belong to), so a converged step solves the implicit-midpoint Euler equation
    /// I (ω′ − ω) = h (I ω̄) × ω̄ + impulses, whose gyroscopic part does no work
    /// (ω̄ · ((I ω̄) × ω̄) = 0) and keeps |I ω| of a free body.
    fn reapply_impulses(&mut self) {
        self.reset_to_free_motion();
        self.apply_accumulated_impulses();
        self.flush_torques(false);
    }

    /// Sets the velocities to v_free and each body's gathered torque to the gyroscopic
    /// impulse (see [`Self::reapply_impulses`]; [`Self::flush_torques`] applies it).
    fn reset_to_free_motion(&mut self) {
        let h = self.params.dt_secs;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            b.linear_velocity_in_world = self.v_free[i];
            if b.is_dynamic() {
                let w_mid = (self.w_start[i] + b.angular_velocity_in_world) * 0.5;
                self.torque[i] = (self.inertia[i] * w_mid).cross(&w_mid) * h;
            }
            b.angular_velocity_in_world = self.w_free[i];
        }
    }

    /// Adds every element's accumulated impulse λ along its current rows (joints, active
    /// springs, the stylus): the linear parts to the velocities, the angular ones to the
    /// gathered torques (the caller flushes them and re-predicts the end poses).
    fn apply_accumulated_impulses(&mut self) {
        for (j, blk) in self.joints.iter().zip(&self.joint_blocks) {
            let n = j.rows();
            add_row_impulses(
                &mut self.bodies,
                &mut self.torque,
                j.body1,
                j.body2,
                &blk.rows[..n],
                &blk.lambda[..n],
            );
        }
        for (s, r) in self.springs.iter().zip(&self.spring_rows) {
            if r.active {
                add_row_impulses(
                    &mut self.bodies,
                    &mut self.torque,
                    s.body1,
                    s.body2,
                    std::slice::from_ref(&r.row),
                    &[r.lambda],
                );
            }
        }
        if let Some(s) = self.stylus {
            let blk = &self.stylus_block;
            add_stylus_impulse(
                &mut self.bodies,
                &mut self.torque,
                s.body,
                &blk.arm,
                &blk.lambda,
            );
        }
    }

    /// Turns each body's gathered torque into angular velocity, ω += I⁻¹ τ (or G I⁻¹ τ with
    /// the Newton gain, `gain`), and clears it.
    fn flush_torques(&mut self, gain: bool) {
        let inverse = if gain {
            &self.solve_inv_inertia
        } else {
            &self.inv_inertia
        };
        for ((b, t), m) in self.bodies.iter_mut().zip(&mut self.torque).zip(inverse) {
            flush_into(b, t, m);
        }
    }

    /// [`Self::flush_torques`] with I⁻¹ for one body (the sweeps update two bodies at a time).
    fn flush_torque(&mut self, i: BodyId) {
        flush_into(
            &mut self.bodies[i],
            &mut self.torque[i],
            &self.inv_inertia[i],
        );
    }

    /// Sets G I⁻¹ per body from the current Newton gain (see [`Self::flush_torques`]).
    fn update_solve_inertia(&mut self) {
        for ((m, g), ii) in self
            .solve_inv_inertia
            .iter_mut()
            .zip(&self.newton_gain)
            .zip(&self.inv_inertia)
        {
            *m = g * ii;
        }
    }

    /// One nonlinear Gauss–Seidel position projection of joint `i` (poses only).
    fn project_joint(&mut self, i: usize) {
        let j = &self.joints[i];
        let (b1, b2, n) = (j.body1, j.body2, j.rows());
        let g = j.geometry(&Pose::of(&self.bodies[b1]), &Pose::of(&self.bodies[b2]));
        let psi = j.psi_of(&g);
        let mut rows = [Row::default(); MAX_ROWS];
        j.rows_of(&g, &g, &mut rows);
        let mut delta: BlockVector = [0.0; MAX_ROWS];
        for k in 0..n {
            delta[k] = -psi[k];
        }
        self.joint_blocks[i].factor.solve_in_place(&mut delta);
        let mut lin = Vector3::zeros();
        let mut ang1 = Vector3::zeros();
        let mut ang2 = Vector3::zeros();
        for k in 0..n {
            lin += rows[k].lin * delta[k];
            ang1 += rows[k].ang1 * delta[k];
            ang2 += rows[k].ang2 * delta[k];
        }
        let (ang1, ang2) = (self.inv_inertia[b1] * ang1, self.inv_inertia[b2] * ang2);
        let body1 = &mut self.bodies[b1];
        if body1.is_dynamic() {
            body1.position_in_world += lin * body1.inv_mass;
            body1.world_from_body_rotation =
                advance_rotation(&body1.world_from_body_rotation, &ang1, 1.0);
        }
        let body2 = &mut self.bodies[b2];
        if body2.is_dynamic() {
            body2.position_in_world -= lin * body2.inv_mass;
            body2.world_from_body_rotation =
                advance_rotation(&body2.world_from_body_rotation, &ang2, 1.0);
        }
    }

    /// Books the step's user work, external work and damper dissipation from the converged
    /// impulses, the final midpoint rows and the midpoint velocities.
    fn book_work(&mut self, h: f64) {
        for i in 0..self.springs.len() {
            let r = self.spring_rows[i];
            if !r.active {
                continue;
            }
            let k = self.springs[i].stiffness_n_per_m;
            let e_end = self.spring_length_m(i) - self.springs[i].rest_length_m;
            let elastic = -h * k * 0.5 * (r.e_start + e_end);
            let damper = r.lambda - elastic;
            self.ledger.dissipated_j -= damper * self.spring_rate(i);
        }
        if let (Some(s), Some(t)) = (self.stylus, self.stylus_target) {
            let blk = self.stylus_block;
            let b = &self.bodies[s.body];
            let p = b.position_in_world + b.world_from_body_rotation * s.point_in_body;
            // The target has already advanced to the end of the step.
            let e_end = p - t.position_in_world.coords;
            let elastic = -(blk.e_start + e_end) * (0.5 * h * s.stiffness_n_per_m);
            let damper = blk.lambda - elastic;
            let rate = self.stylus_rate(s.body, &blk.arm, &t.velocity_in_world);
            self.ledger.dissipated_j -= damper.dot(&rate);
            self.ledger.user_work_j += blk.lambda.dot(&t.velocity_in_world);
        }
        for (i, b) in self.bodies.iter().enumerate() {
            if b.is_dynamic() {
                let v = (b.linear_velocity_in_world + self.v_start[i]) * 0.5;
                let w = (b.angular_velocity_in_world + self.w_start[i]) * 0.5;
                self.ledger.external_work_j +=
                    h * (self.external_force[i].dot(&v) + self.external_torque[i].dot(&w));
            }
        }
    }
}

/// The Newton gain (I − A)⁻¹ I of a body, if I − A is invertible and the gain bounded (the
/// A it is made from is only an estimate, so a near-singular I − A would amplify its error).
fn newton_gain_of(inertia: &Matrix3<f64>, a: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    (inertia - a)
        .try_inverse()
        .map(|inv| inv * inertia)
        // (Not amax: a NaN entry must reject the gain.)
        .filter(|g| g.iter().all(|x| x.abs() <= MAX_NEWTON_GAIN))
}

/// Σ ψₖ² over the rows of `joint`.
fn squared_norm(joint: &Joint, psi: &BlockVector) -> f64 {
    psi[..joint.rows()].iter().map(|v| v * v).sum()
}

/// The larger of `a` and `b`, for running maxima from zero: there the same as `f64::max` (a NaN
/// `b` is passed over), without the NaN handling of `a` that made `f64::max` several
/// instructions in the solver's hottest loops.
#[inline]
fn larger(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// The largest absolute component of `v` (NaN components are passed over).
#[inline]
fn abs_max(v: &Vector3<f64>) -> f64 {
    larger(larger(v.x.abs(), v.y.abs()), v.z.abs())
}

/// Adds impulses `delta` along `rows` between bodies `b1` and `b2`: the linear parts to their
/// velocities, the angular parts to their gathered torques (see `Simulation::flush_torques`).
fn add_row_impulses(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    b1: BodyId,
    b2: BodyId,
    rows: &[Row],
    delta: &[f64],
) {
    let mut lin = Vector3::zeros();
    let mut ang1 = Vector3::zeros();
    let mut ang2 = Vector3::zeros();
    for (row, d) in rows.iter().zip(delta) {
        lin += row.lin * *d;
        ang1 += row.ang1 * *d;
        ang2 += row.ang2 * *d;
    }
    let body1 = &mut bodies[b1];
    if body1.is_dynamic() {
        body1.linear_velocity_in_world += lin * body1.inv_mass;
        torque[b1] += ang1;
    }
    let body2 = &mut bodies[b2];
    if body2.is_dynamic() {
        body2.linear_velocity_in_world -= lin * body2.inv_mass;
        torque[b2] += ang2;
    }
}

/// ω += m τ for a dynamic body, then τ = 0 (see `Simulation::flush_torques`).
#[inline]
fn flush_into(body: &mut Body, torque: &mut Vector3<f64>, m: &Matrix3<f64>) {
    if body.is_dynamic() {
        body.angular_velocity_in_world += m * *torque;
    }
    *torque = Vector3::zeros();
}

/// Adds the stylus impulse `delta` (world axes) at the arm `arm` of `body`, as
/// [`add_row_impulses`] does.
fn add_stylus_impulse(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    body: BodyId,
    arm: &Vector3<f64>,
    delta: &Vector3<f64>,
) {
    let b = &mut bodies[body];
    if b.is_dynamic() {
        b.linear_velocity_in_world += delta * b.inv_mass;
        torque[body] += arm.cross(delta);
    }
}
