//! The solver: the step pipeline of Mariti & Valentini (Eq. 14–27) as stages over a model.
//!
//! # Integrator
//! Positions advance with the *mean* of the start and end velocities (implicit midpoint,
//! x' = x + h (v + v')/2, orientations by the Cayley map of h ω̄), so every impulse P does
//! exactly the work P·v̄ and the kinetic energy changes by exactly Σ P·v̄. Constraint rows are
//! evaluated at the step's midpoint (mean of start and end anchor arms and axes); with them
//! ψ(end) − ψ(start) = h J̄ v̄ holds exactly, so joints that stay closed do no work, gravity's
//! work equals the change of potential energy and the springs' midpoint impulses
//! −h k (eₙ + eₙ₊₁)/2 equal the change of elastic energy. The energy balance of
//! [`crate::state::diagnostics`] therefore measures the solver's real error, not a bookkeeping one.
//! Torques act on each body at its midpoint orientation: the velocity stage works with the
//! inertia of the start orientation, so an angular impulse P is applied as P − φ × P,
//! φ = (h/2) ω̄ (see `Step::reset_to_free_motion`; with P itself the step was only
//! first-order accurate in three-dimensional motion, tests/dynamics/convergence.rs); as φ ∥ ω̄ its work
//! is P·ω̄.
//!
//! # Stage order of the step ([`crate::Simulation::step`])
//! 1. **Free motion** (Eq. 14–16): every dynamic body gets the impulse of gravity and of the
//!    external forces queued with [`crate::Simulation::apply_external_force`]: v += h (g + F/m),
//!    ω += h I⁻¹ (τ − φ × τ), with I the world inertia at the start orientation for the
//!    whole step (φ here from the start velocity).
//!    The gyroscopic term of Euler's equation is not part of this stage: it is solved with
//!    the impulses in stage 4 (see `reapply_impulses`), at the midpoint velocity, which makes
//!    the scheme the implicit midpoint rule for I (ω′ − ω) = h (I ω̄) × ω̄ + impulses: the
//!    gyroscopic impulse does no work, a free body keeps its energy and |Iω|, and precesses
//!    at Euler's rate (tests/dynamics/solver.rs). (Split from the constraint solve, explicitly or
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
//!    - [`SolverMethod::Direct`] (default): the same rows coupled in one sparse block
//!      Cholesky factorisation ([`crate::linalg::block_cholesky`], a block per element, the
//!      joints numbered leaves first: [`block_order`]), one solve.
//!      A large spring network (a cloth, a lattice: [`primal`]) is solved in the bodies'
//!      velocities instead, with a sparse Cholesky of the mesh's own matrix, by the stage of
//!      [`primal_stage`], which takes the rows at the current prediction in every iteration.
//!      The matrix is factored once per step, at the first rows; later linearisations, whose
//!      rows have been refreshed, reuse that factor (a chord, or simplified Newton,
//!      iteration: the rows move by O(h·ω) within a step) and factor again only when a solve
//!      reduced the nonlinear residual by less than `CHORD_CONTRACTION`, or when the first
//!      row refresh moved the velocities by more than `REFACTOR_REFRESH_CHANGE`. The
//!      increments are always applied along the current rows.
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
//!    (I − A)⁻¹ for I⁻¹ (`Step::update_newton_inertia`); the first rows are taken at
//!    the end pose the last step's constraint velocity change predicts. After the first solve
//!    A is made again from this step's impulses (`Step::renew_newton_gain`). Once two
//!    refreshes have shown their contraction θ, the last refresh is skipped when θ/(1 − θ)
//!    times the last change is under the tolerance and ψ is closed (the stopping rule of
//!    simplified Newton iterations). A planar swing then needs about 3.5 solves per step.
//!    After a jump in the loads (clip, release, a split step) the step starts plain, and
//!    after the gain has made a refresh diverge the next 20 steps do. A step whose last refresh still moved the velocities by more than 100× the
//!    tolerance is rejected and split (see `split`): a violent motion that the
//!    step cannot resolve is then computed with shorter steps instead of gaining energy.
//! 5. **Integrate positions**: x += h v̄, q ← normalise(q + h/2 ω̄ ⊗ q); the angular velocity
//!    turns with the body (ω ← R₂R₁ᵀω: the body-frame rate is the state, see the stage's
//!    comment).
//! 6. **Position correction** (only if needed): if ‖ψ‖ > `position_tolerance_m`, nonlinear
//!    Gauss–Seidel projection sweeps move the poses (not the velocities) along M⁻¹Jᵀ until
//!    ‖ψ‖ is under the tolerance or `max_position_iterations` is reached; with joint limits,
//!    each sweep also projects the ends past their limits (`contact::limits`). With the default
//!    parameters the velocity stage already holds ‖ψ‖ ≈ 1e-8 m and this pass does not run in
//!    the acceptance runs; it is the safety net that keeps ‖ψ‖ < 1e-6 m when a cap is hit.
//! 7. **Reactions and diagnostics**: reactions are the accumulated impulses / h (Eq. 24–26)
//!    on the second body, world frame; energies per [`crate::state::diagnostics`].
//!
//! With contact (a scene with `[contact]`, `[[plane]]` or `[[static]]`) three stages join:
//! **impacts** before stage 1, the **contact rows** after stage 4 and the **projection and
//! report** after stage 5 (see `contact_rows` and [`crate::contact`]); joint limits take
//! part in the first two (`contact::limits`). Without contact and limits they return at once
//! and the step is exactly the one above.
//!
//! Soft elements (springs, stylus) are solved with the joints as soft constraints: elastic
//! impulse −h k (eₙ + eₙ₊₁)/2 (implicit midpoint: unconditionally stable, no numerical
//! dissipation), damper impulse −h c ē (the midpoint rate; its work is booked as
//! dissipation).
//!
//! Determinism: one thread, fixed iteration order (scene order), no time-dependent decisions;
//! the same scene and inputs give bit-identical results.

mod contact;
mod context;
mod direct;
mod energy;
mod failure;
mod gauss_seidel;
mod impulses;
mod linear;
mod newton;
mod params;
mod primal;
mod rows;
mod split;
mod stamp;
mod step;
mod velocity;

#[cfg(test)]
mod tests;

use crate::error::SimError;
use nalgebra::{Matrix3, Vector3};

use crate::contact::ContactModel;
use crate::linalg::block::BlockVector;
use crate::model::body::{Body, Pose};
use crate::model::force::ForceElement;
use crate::model::joint::Joint;
use crate::model::spring::Spring;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::state::diagnostics::{EnergyLedger, StepDiagnostics};

pub use crate::solver::rows::joint::JointReaction;
pub(crate) use context::StepContext;
pub(crate) use energy::{
    constraint_norm_m, kinetic_energy_j, potential_energy_j, spring_energy_j, stylus_energy_j,
};
pub use failure::{ElementResidual, FailureCause, StepFailure};
pub use params::{SolverMethod, SolverParams};
pub use split::MAX_STEP_SPLITS;

use crate::solver::rows::joint::JointRows;
use crate::solver::rows::spring::SoftRow;
use crate::solver::rows::stylus::StylusBlock;
use direct::DirectSolver;
pub(crate) use linear::LinearSolve;
use newton::NewtonGain;
use split::BodyState;
use stamp::{Stamp, Versions};

/// Per-body scratch of the step (world frame).
#[derive(Clone, Debug)]
pub(crate) struct BodyScratch {
    /// World inertia tensors at the start orientation, and their inverses.
    pub(crate) inertia: Vec<Matrix3<f64>>,
    pub(crate) inv_inertia: Vec<Matrix3<f64>>,
    /// Poses at the start of the step and at its current predicted end.
    pub(crate) start: Vec<Pose>,
    pub(crate) predicted: Vec<Pose>,
    /// Per body, the squared norm of the predicted orientation before its normalisation, then
    /// its inverse norm (see [`Pose::set_predicted_unnormalised`]).
    pub(crate) prediction_norm: Vec<f64>,
    /// Velocities at the start of the step and after the free motion.
    pub(crate) v_start: Vec<Vector3<f64>>,
    pub(crate) w_start: Vec<Vector3<f64>>,
    pub(crate) v_free: Vec<Vector3<f64>>,
    pub(crate) w_free: Vec<Vector3<f64>>,
    /// Angular impulses (N·m·s, world) gathered per body before they are turned into ω
    /// ([`Step::flush_torques`]): one 3 × 3 product per body instead of one per row.
    pub(crate) torque: Vec<Vector3<f64>>,
    /// Per body, φ = (h/2) ω̄: to first order, the turn from the start orientation to the
    /// midpoint one, at which the gathered torques act (see [`Step::reset_to_free_motion`]).
    pub(crate) half_turn: Vec<Vector3<f64>>,
    /// Velocities before an update (the refresh measures its change from them).
    pub(crate) velocity_snapshot: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// Per body, the velocity change the constraints made in the last step (linear,
    /// angular): the first prediction of the next.
    pub(crate) constraint_velocity_change: Vec<(Vector3<f64>, Vector3<f64>)>,
}

impl BodyScratch {
    fn new(bodies: &[Body]) -> Self {
        let n = bodies.len();
        Self {
            inertia: vec![Matrix3::zeros(); n],
            inv_inertia: vec![Matrix3::zeros(); n],
            start: bodies.iter().map(Pose::of).collect(),
            predicted: bodies.iter().map(Pose::of).collect(),
            prediction_norm: vec![1.0; n],
            v_start: vec![Vector3::zeros(); n],
            w_start: vec![Vector3::zeros(); n],
            v_free: vec![Vector3::zeros(); n],
            w_free: vec![Vector3::zeros(); n],
            torque: vec![Vector3::zeros(); n],
            half_turn: vec![Vector3::zeros(); n],
            velocity_snapshot: vec![(Vector3::zeros(), Vector3::zeros()); n],
            constraint_velocity_change: vec![(Vector3::zeros(), Vector3::zeros()); n],
        }
    }
}

/// External loads (N and N·m about the centre of mass, world): those queued for the next
/// step (applied in every sub-step of a split step, cleared after it), and the force elements'
/// in the current (sub-)step.
#[derive(Clone, Debug)]
pub(crate) struct ExternalLoads {
    pub(crate) force: Vec<Vector3<f64>>,
    pub(crate) torque: Vec<Vector3<f64>>,
    pub(crate) element_force: Vec<Vector3<f64>>,
    pub(crate) element_torque: Vec<Vector3<f64>>,
    /// The joint dampers' wrenches in the current (sub-)step (booked as dissipation).
    pub(crate) damper_force: Vec<Vector3<f64>>,
    pub(crate) damper_torque: Vec<Vector3<f64>>,
}

/// The solver's state between steps and its scratch, sized once for a model: nothing is
/// allocated per step.
#[derive(Clone, Debug)]
pub(crate) struct Solver {
    pub(crate) body: BodyScratch,
    pub(crate) joint: JointRows,
    pub(crate) spring_rows: Vec<SoftRow>,
    /// The prediction at which every active spring row's `e_end` was evaluated.
    pub(crate) spring_extensions_at: Stamp,
    /// The versions of the predicted poses, the rows and the turning stiffness that the
    /// caches above are checked against (see [`stamp`]).
    pub(crate) versions: Versions,
    pub(crate) stylus_block: StylusBlock,
    pub(crate) newton: NewtonGain,
    /// How each linearisation is solved (chosen when the simulation is built).
    pub(crate) linear: LinearSolve,
    /// The coupled system (used by [`LinearSolve::Blocks`] and [`LinearSolve::Primal`]).
    pub(crate) direct: DirectSolver,
    pub(crate) loads: ExternalLoads,
    pub(crate) reactions: Vec<JointReaction>,
    /// The bodies' state at the start of the step, to retry a rejected step.
    saved_state: Vec<BodyState>,
    pub(crate) ledger: EnergyLedger,
    pub(crate) diagnostics: StepDiagnostics,
    /// Simulated time (s).
    pub(crate) time_secs: f64,
    /// The contact stages' scratch and last results (empty without contact).
    pub(crate) contact: crate::solver::contact::ContactScratch,
    /// The connections that broke, in the order they broke.
    pub(crate) fractures: Vec<crate::deformable::Fracture>,
}

impl Solver {
    /// Scratch for these bodies and element counts, or [`SimError::TooLarge`] (see
    /// [`DirectSolver::new`]) before anything large is allocated.
    pub(crate) fn new(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
        method: SolverMethod,
    ) -> Result<Self, SimError> {
        let n = bodies.len();
        let n_joints = joints.len();
        let n_springs = springs.len();
        let direct = DirectSolver::new(bodies, joints, springs)?;
        Ok(Self {
            linear: LinearSolve::choose(method, &direct),
            body: BodyScratch::new(bodies),
            joint: JointRows::new(n_joints),
            spring_rows: vec![SoftRow::default(); n_springs],
            spring_extensions_at: Stamp::NEVER,
            versions: Versions::default(),
            stylus_block: StylusBlock::default(),
            newton: NewtonGain::new(n),
            direct,
            loads: ExternalLoads {
                force: vec![Vector3::zeros(); n],
                torque: vec![Vector3::zeros(); n],
                element_force: vec![Vector3::zeros(); n],
                element_torque: vec![Vector3::zeros(); n],
                damper_force: vec![Vector3::zeros(); n],
                damper_torque: vec![Vector3::zeros(); n],
            },
            reactions: vec![JointReaction::default(); n_joints],
            saved_state: Vec::with_capacity(n),
            ledger: EnergyLedger::default(),
            diagnostics: StepDiagnostics::default(),
            time_secs: 0.0,
            contact: crate::solver::contact::ContactScratch::default(),
            fractures: Vec::new(),
        })
    }

    /// Records a jump in the loads (the stylus clipped or released, a body's velocity set):
    /// the last step's impulses no longer estimate the next one's, and the Newton gain starts
    /// from the next step's first solve instead (see [`NewtonGain::loads_jumped`]).
    pub(crate) fn loads_jumped(&mut self) {
        self.newton.loads_jumped();
    }
}

/// One step's view of the model and the solver: the context, the bodies it moves, the elements
/// it reads, and the solver state. Every stage is a method of it, in its own module.
pub(crate) struct Step<'a> {
    pub(crate) ctx: StepContext,
    pub(crate) bodies: &'a mut [Body],
    pub(crate) joints: &'a [Joint],
    pub(crate) springs: &'a [Spring],
    pub(crate) force_elements: &'a [ForceElement],
    pub(crate) gravity_in_world: Vector3<f64>,
    pub(crate) stylus: Option<StylusAttachment>,
    /// The tip; the step advances it by h · its velocity.
    pub(crate) stylus_target: Option<StylusTarget>,
    /// Contact geometry and settings, if the scene has contact.
    pub(crate) contact: Option<&'a ContactModel>,
    pub(crate) s: &'a mut Solver,
}

impl Step<'_> {
    /// Makes every joint's rows at the current poses and checks that its block can be
    /// factored; returns the index of the first joint whose block cannot.
    pub(crate) fn check_joint_blocks(&mut self) -> Result<(), usize> {
        self.update_inertia();
        for i in 0..self.joints.len() {
            self.prepare_joint_rows(i);
            if !self.factor_joint(i) {
                return Err(i);
            }
        }
        Ok(())
    }
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
