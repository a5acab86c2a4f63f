//! The direct method: every element's rows coupled in one sparse block Cholesky
//! factorisation of J M⁻¹ Jᵀ (+ the soft terms), factored once per step and reused as a chord
//! over the step's linearisations (see the stage order in [`super`]).

mod assemble;
pub(super) mod block_order;
pub(crate) mod coupled;
mod solve;

use nalgebra::Matrix3;

use super::direct::coupled::GlobalBlock;
use super::stamp::Stamp;
use crate::error::SimError;
use crate::linalg::block_cholesky::{BlockCholesky, Lanes, BLOCK, MAX_STORAGE_BYTES};
use crate::model::body::{Body, BodyId};
use crate::model::joint::Joint;
use crate::model::spring::Spring;

use super::direct::block_order::{layout, BodyBlocks, Layout};
use super::primal::{PrimalSolve, PRIMAL_FILL_RATIO, PRIMAL_MAX_HARD_ROWS, PRIMAL_MIN_SPRINGS};

/// Relative diagonal regularisation of the coupled solve when the joints close loops, at the
/// start: their rows can be redundant (the cross lift), J M⁻¹ Jᵀ is then singular, and this
/// keeps the impulses bounded (near the minimum-norm ones).
const LOOP_REGULARISATION: f64 = 1.0e-6;

/// The most the loop regularisation is raised to (see
/// [`DirectSolver::loosen_loop_regularisation`]).
///
/// The part of a right-hand side that redundant rows cannot all meet (their ψ, closed to
/// rounding but not consistently) comes back as impulses of 1/ε times its size in the
/// rows' null space. Those do nothing while the rows stay put, but a row refresh applies
/// them along turned rows. In the steam engines (planar loops, 15 loop rows of which 6 are
/// independent) that made the refreshes diverge at h = 0.01 s: 60 s of `toy_steam_engine`
/// split 1065 steps at 18 µs per step, `steam_engine` 966 at 7.7 µs. From 1e-4 on, neither
/// splits more than twice, at 6.5 and 2.9 µs. The cross lift, whose stiff scissor modes
/// have small eigenvalues, wants it small: its lift splits 219 of 1000 steps at 1e-4, 3 at
/// 1e-6 and none at 1e-5. So ε starts small and grows only where refreshes diverge.
const MAX_LOOP_REGULARISATION: f64 = 1.0e-4;

/// Relative diagonal regularisation of the coupled solve when the joints form a forest: the
/// rows are independent, so the factorisation only needs a guard against rounding. A larger
/// value makes every solve inexact by about that fraction on the stiffest modes, whose
/// eigenvalues fall like 1/n² and below along a chain: with 1e-6, a 1000-link chain needed
/// 53 solves and 25 factorisations per step and split 1293 of 1400 steps of the acceptance
/// drag; with this one it needs 2.7 and 1, and splits one.
const FOREST_REGULARISATION: f64 = 1.0e-12;

/// Whether the joints close a loop: a cycle in the graph whose nodes are the bodies (every
/// fixed body one node, the ground) and whose edges are the joints.
pub(crate) fn joints_close_a_loop(bodies: &[Body], joints: &[Joint]) -> bool {
    // Union–find over the bodies, with every fixed body mapped to one root.
    let ground = bodies.iter().position(|b| !b.is_dynamic());
    let mut parent: Vec<usize> = (0..bodies.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let node = |b: BodyId| match ground {
        Some(g) if !bodies[b].is_dynamic() => g,
        _ => b,
    };
    for j in joints {
        let (a, b) = (
            root(&mut parent, node(j.body1)),
            root(&mut parent, node(j.body2)),
        );
        if a == b {
            return true;
        }
        parent[a] = b;
    }
    false
}

/// The coupled system: a block per element, its sparse block factor, and the right-hand
/// sides; whether the factor belongs to this step.
#[derive(Clone, Debug)]
pub(crate) struct DirectSolver {
    pub(crate) blocks: Vec<GlobalBlock>,
    pub(crate) dense: BlockCholesky,
    pub(crate) rhs: Vec<Lanes>,
    /// The joints in block order (see [`super::direct::block_order`]).
    pub(crate) joint_order: Vec<usize>,
    /// The version of the coupled matrix that the factor in `dense` (or `primal`) was made
    /// from: a solve factors again when the matrix has moved on (a new step, or a chord that
    /// contracts too slowly, see [`Step::refactor_current_rows`]).
    pub(crate) factor_of: Stamp,
    /// Whether the next factorisation may keep the last factor if it was made for the same
    /// blocks (set at the start of a step; only the primal solve does: see
    /// [`super::primal`]).
    pub(crate) may_reuse: bool,
    /// The primal solve that replaces `dense` for large spring networks (see
    /// [`super::primal`]).
    pub(crate) primal: Option<PrimalSolve>,
    /// Factorisations in the current (sub-)step.
    pub(crate) factorisations: usize,
    /// Per body, the blocks that act on it (the coupled matrix's pattern).
    pub(crate) body_blocks: BodyBlocks,
    /// The body pairs of the blocks whose pattern `dense` holds.
    pub(crate) pattern_pairs: Vec<[BodyId; 2]>,
    /// Relative diagonal regularisation of the factorisation: [`FOREST_REGULARISATION`] for a
    /// forest; for joints that close a loop, [`LOOP_REGULARISATION`] at first, raised where
    /// row refreshes diverge (see [`Self::loosen_loop_regularisation`]).
    pub(crate) regularisation: f64,
    /// Per body, the weight (I + [φ]×) M (I − [φ]×) of its rows' angular parts in the coupled
    /// matrix (see [`Step::assemble_and_factor`]).
    pub(crate) body_weight: Vec<Matrix3<f64>>,
}

impl DirectSolver {
    /// Room for the coupled system of these elements (see [`super::direct::block_order::layout`];
    /// nothing is allocated later), regularised for the joints' topology (see
    /// [`joints_close_a_loop`]). A network of at least [`PRIMAL_MIN_SPRINGS`] springs whose
    /// dual factor would fill (more than [`PRIMAL_FILL_RATIO`] stored blocks per element),
    /// with at most [`PRIMAL_MAX_HARD_ROWS`] joint rows, gets the primal solve
    /// ([`super::primal`]) instead of the block factor.
    ///
    /// # Errors
    /// [`SimError::TooLarge`], before allocating, when the factor's storage (it follows the
    /// factor's pattern: linear for chains and trees of bounded degree, more when many
    /// elements couple through one body or loops fill it) would exceed [`MAX_STORAGE_BYTES`].
    pub(crate) fn new(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
    ) -> Result<Self, SimError> {
        Self::with_primal(bodies, joints, springs, true)
    }

    /// [`Self::new`], with the primal solve only if `allow_primal` (the tests compare the two).
    pub(crate) fn with_primal(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
        allow_primal: bool,
    ) -> Result<Self, SimError> {
        let Layout {
            joint_order,
            max_blocks,
            pattern_blocks,
            closes_loop,
        } = layout(bodies, joints, springs);
        let n_bodies = bodies.len();
        let hard_rows: usize = joints.iter().map(Joint::rows).sum();
        let primal = (allow_primal
            && springs.len() >= PRIMAL_MIN_SPRINGS
            && pattern_blocks > PRIMAL_FILL_RATIO.saturating_mul(max_blocks)
            && hard_rows <= PRIMAL_MAX_HARD_ROWS)
            .then(|| PrimalSolve::new(bodies, joints, springs, hard_rows))
            .transpose()?;
        // The block factor's room: none when the primal solve replaces it.
        let (dense_blocks, dense_pattern) = match primal {
            Some(_) => (0, 0),
            None => (max_blocks, pattern_blocks),
        };
        let bytes = BlockCholesky::storage_bytes(dense_blocks, dense_pattern).unwrap_or(usize::MAX);
        if bytes > MAX_STORAGE_BYTES {
            return Err(SimError::TooLarge {
                elements: max_blocks,
                factor_blocks: pattern_blocks,
                bytes,
                limit: MAX_STORAGE_BYTES,
            });
        }
        Ok(Self {
            regularisation: if closes_loop {
                LOOP_REGULARISATION
            } else {
                FOREST_REGULARISATION
            },
            blocks: Vec::with_capacity(max_blocks),
            dense: BlockCholesky::with_capacity(dense_blocks, dense_pattern),
            rhs: vec![[0.0; BLOCK]; max_blocks],
            joint_order,
            factor_of: Stamp::NEVER,
            may_reuse: false,
            primal,
            factorisations: 0,
            body_blocks: BodyBlocks::with_capacity(n_bodies, dense_blocks),
            pattern_pairs: Vec::with_capacity(dense_blocks),
            body_weight: vec![Matrix3::zeros(); n_bodies],
        })
    }

    /// After row refreshes diverged without the Newton gain, on joints that close loops: ten
    /// times the regularisation, up to [`MAX_LOOP_REGULARISATION`], for the following
    /// factorisations and steps (a forest's stays as it is).
    pub(crate) fn loosen_loop_regularisation(&mut self) {
        if self.regularisation >= LOOP_REGULARISATION {
            self.regularisation = (self.regularisation * 10.0).min(MAX_LOOP_REGULARISATION);
        }
    }
}
