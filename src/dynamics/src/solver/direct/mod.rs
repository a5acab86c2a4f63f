//! The direct method: every element's rows coupled in one sparse block Cholesky
//! factorisation of J M⁻¹ Jᵀ (+ the soft terms), factored once per step and reused as a chord
//! over the step's linearisations (see the stage order in [`super`]).

pub(super) mod block_order;
pub(crate) mod coupled;

use nalgebra::{Matrix3, Vector3};

use super::direct::coupled::{assemble, start_block, BlockOwner, GlobalBlock};
use super::impulses::{add_joint_impulses, add_spring_impulse, add_stylus_impulse};
use super::stamp::Stamp;
use super::{larger, Step};
use crate::error::SimError;
use crate::linalg::block::{mul_skew, skew_mul};
use crate::linalg::block_cholesky::{BlockCholesky, Lanes, BLOCK, MAX_STORAGE_BYTES};
use crate::model::body::{Body, BodyId, GROUND};
use crate::model::joint::Joint;
use crate::model::joint::Row;
use crate::model::spring::Spring;

use super::direct::block_order::{layout, BodyBlocks, Layout};
use super::primal::{PrimalSolve, PRIMAL_FILL_RATIO, PRIMAL_MAX_HARD_ROWS, PRIMAL_MIN_SPRINGS};

// Row loops index several parallel fixed-size arrays (rows, impulses, block entries).
#[allow(clippy::needless_range_loop)]
impl Step<'_> {
    /// Solves the current linearisation with the coupled factorisation of all rows (factored
    /// once per step, see [`Self::advance`]) and applies the impulse increments along the
    /// current rows. Returns the largest row-velocity error before the solve, or `None` if
    /// the factorisation failed.
    pub(super) fn direct_solve(&mut self) -> Option<f64> {
        if self.s.direct.factor_of < self.s.direct.factor_wanted {
            self.assemble_and_factor()?;
            self.s.direct.factor_of = self.s.versions.rows;
        }
        let nb = self.s.direct.blocks.len();
        if nb == 0 {
            return Some(0.0);
        }
        let h = self.ctx.h;
        let keep = 1.0 - self.ctx.beta;
        // Right-hand sides. A joint row's is its target minus its rate; the target is that
        // rate plus 2((1 − β)ψₙ − ψ̂)/h at the same velocities, so the rate cancels.
        let mut residual = 0.0_f64;
        let stylus_g = self.stylus_residual_impulse();
        for a in 0..nb {
            let gb = &self.s.direct.blocks[a];
            let mut rhs = [0.0; BLOCK];
            match gb.owner {
                BlockOwner::Joint(i) => {
                    let blk = &self.s.joint.blocks[i];
                    // Over every lane: ψ, and so the right-hand side, is zero past the
                    // joint's rows (see `largest_closure_error`).
                    for (k, r) in rhs.iter_mut().enumerate() {
                        *r = 2.0 * blk.closure_error(k, keep) / h;
                        residual = larger(residual, 0.5 * r.abs());
                    }
                }
                BlockOwner::Spring(i) => {
                    let g = self.spring_residual_impulse(i);
                    let w = self.s.spring_rows[i].w;
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
            self.s.direct.rhs[a] = rhs;
        }
        let direct = &mut self.s.direct;
        match &mut direct.primal {
            Some(primal) => primal.solve(&direct.blocks, &mut direct.rhs[..nb]),
            None => direct.dense.solve(&mut direct.rhs[..nb]),
        }
        // Along the current rows, which may have been refreshed since the factorisation, so
        // that v = v_free + M⁻¹ J̄ᵀ λ holds for the rows the work identities use, up to the
        // Newton gain's anticipation of the rows' turning (removed by the next refresh): the
        // angular change is G I⁻¹ τ.
        for (rhs, gb) in self.s.direct.rhs.iter().zip(&self.s.direct.blocks) {
            match gb.owner {
                BlockOwner::Joint(i) => {
                    let blk = &mut self.s.joint.blocks[i];
                    for (l, d) in blk.lambda.iter_mut().zip(&rhs[..gb.rows]) {
                        *l += d;
                    }
                    add_joint_impulses(
                        self.bodies,
                        &mut self.s.body.torque,
                        &self.joints[i],
                        &blk.rows[..gb.rows],
                        &rhs[..gb.rows],
                    );
                }
                BlockOwner::Spring(i) => {
                    let r = &mut self.s.spring_rows[i];
                    r.lambda += rhs[0];
                    add_spring_impulse(
                        self.bodies,
                        &mut self.s.body.torque,
                        &self.springs[i],
                        &r.row,
                        rhs[0],
                    );
                }
                BlockOwner::Stylus => {
                    let d = Vector3::new(rhs[0], rhs[1], rhs[2]);
                    self.s.stylus_block.lambda += d;
                    add_stylus_impulse(
                        self.bodies,
                        &mut self.s.body.torque,
                        gb.b1,
                        &self.s.stylus_block.arm,
                        &d,
                    );
                }
            }
        }
        self.flush_torques(self.s.newton.is_on());
        Some(residual)
    }

    /// Makes the next solve factor the rows as they are now, instead of solving with the
    /// factor of older rows as a chord.
    pub(super) fn refactor_current_rows(&mut self) {
        self.s.direct.factor_wanted = self.s.versions.rows;
    }

    /// Collects the rows of all elements (current rows), a block per element, and factors
    /// J M⁻¹ Jᵀ + diag(1/soft) within its factor's pattern.
    pub(super) fn assemble_and_factor(&mut self) -> Option<()> {
        let h = self.ctx.h;
        let newton = self.s.newton.is_on();
        if newton && self.s.newton.inertia_of != self.s.newton.turning_version {
            self.newton_inertia_from_turning();
        }
        // A body turns by M (τ − φ × τ) under a torque impulse τ (`flush_into`); the
        // symmetric (I + [φ]×) M (I − [φ]×), M in the midpoint frame, stands for that here.
        // (With M alone, a thin link's large inverse axial inertia met its midpoint rows'
        // O(φ) component along its start axis: the factor overestimated the response.) Made
        // once per body, as A = M (I − [φ]×), W = A + [φ]× A, then applied to every row.
        for (b, w) in self.s.direct.body_weight.iter_mut().enumerate() {
            let m = if newton {
                &self.s.newton.inv_inertia[b]
            } else {
                &self.s.body.inv_inertia[b]
            };
            let phi = &self.s.body.half_turn[b];
            if *phi == Vector3::zeros() {
                // (The products below by a zero φ, left out.)
                *w = *m;
                continue;
            }
            let a = m - mul_skew(m, phi);
            *w = a + skew_mul(phi, &a);
        }
        let body_weight = &self.s.direct.body_weight;
        let weight = |b: BodyId, ang: &Vector3<f64>| body_weight[b] * ang;
        let blocks = &mut self.s.direct.blocks;
        let mut nb = 0;
        for &i in &self.s.direct.joint_order {
            let j = &self.joints[i];
            let blk = &self.s.joint.blocks[i];
            let gb = start_block(blocks, nb, BlockOwner::Joint(i), j.body1, j.body2);
            for k in 0..j.rows() {
                let row = &blk.rows[k];
                let w1 = weight(j.body1, &row.ang1);
                let w2 = weight(j.body2, &row.ang2);
                gb.push(row, &w1, &w2, 0.0);
            }
            gb.seal();
            nb += 1;
        }
        for (i, s) in self.springs.iter().enumerate() {
            let r = &self.s.spring_rows[i];
            let soft = 0.5 * h * (0.5 * h * s.stiffness_n_per_m + s.damping_n_s_per_m);
            if r.active && soft > 0.0 {
                let gb = start_block(blocks, nb, BlockOwner::Spring(i), s.body1, s.body2);
                let (w1, w2) = if s.at_centres() {
                    (Vector3::zeros(), Vector3::zeros())
                } else {
                    (weight(s.body1, &r.row.ang1), weight(s.body2, &r.row.ang2))
                };
                gb.push(&r.row, &w1, &w2, 1.0 / soft);
                gb.seal();
                nb += 1;
            }
        }
        if let Some(s) = self.stylus {
            let blk = &self.s.stylus_block;
            let soft = 0.5 * h * (0.5 * h * s.stiffness_n_per_m + s.damping_n_s_per_m);
            let gb = start_block(blocks, nb, BlockOwner::Stylus, s.body, GROUND);
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
            gb.seal();
            nb += 1;
        }
        blocks.truncate(nb);
        let direct = &mut self.s.direct;
        let bodies: &[Body] = self.bodies;
        let may_reuse = std::mem::take(&mut direct.may_reuse);
        if let Some(primal) = &mut direct.primal {
            primal.load_rows(&direct.blocks);
            if may_reuse && primal.fits(&direct.blocks, h) {
                return Some(());
            }
            direct.factorisations += 1;
            return primal.factor(
                &direct.blocks,
                bodies,
                &direct.body_weight,
                &self.s.spring_rows,
                direct.regularisation,
                h,
            );
        }
        // The pattern depends only on which bodies the blocks join: most steps keep it.
        let pairs = direct.blocks.iter().map(|g| [g.b1, g.b2]);
        if direct.pattern_pairs.iter().copied().eq(pairs.clone()) {
            let blocks = &direct.blocks;
            direct.dense.begin_same_pattern(|a| blocks[a].rows);
        } else {
            direct.pattern_pairs.clear();
            direct.pattern_pairs.extend(pairs);
            direct
                .body_blocks
                .build(bodies, nb, |a| direct.pattern_pairs[a]);
            let (map, pairs, blocks) = (&direct.body_blocks, &direct.pattern_pairs, &direct.blocks);
            direct.dense.begin(
                nb,
                |a, add| map.coupled(bodies, pairs[a], add),
                |a| blocks[a].rows,
            );
        }
        direct.factorisations += 1;
        assemble(&mut direct.dense, &direct.blocks, bodies);
        self.s.direct.dense.factor(self.s.direct.regularisation)
    }
}

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
    /// The rows version the factor in `dense` (or `primal`) was made from.
    pub(crate) factor_of: Stamp,
    /// The oldest rows version the next solve may use a factor of: a step wants a factor of
    /// its own rows, and a linearisation whose chord contracts too slowly one of the rows as
    /// they are then ([`Step::refactor_current_rows`]).
    pub(crate) factor_wanted: Stamp,
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
            && pattern_blocks > PRIMAL_FILL_RATIO * max_blocks
            && hard_rows <= PRIMAL_MAX_HARD_ROWS)
            .then(|| PrimalSolve::new(bodies, joints, springs, hard_rows));
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
            factor_wanted: Stamp::FIRST,
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
