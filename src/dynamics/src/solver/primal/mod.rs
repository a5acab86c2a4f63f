//! The coupled system of a large spring network, solved in the bodies' velocities (primal)
//! instead of the rows' impulses: the direct method's linear solve for deformable bodies of
//! many elements.
//!
//! The direct method solves A Δλ = b with A = J W Jᵀ + D, a block per element (joint, spring,
//! stylus), D = diag(1/soft) on the soft rows (see [`super::direct`]). On a mesh (a cloth, a
//! lattice) the springs' blocks couple through every element they share, and the dual
//! factor fills like a dense matrix: a 32 × 32 cloth took minutes per step. Its primal form is
//! the mesh's own sparsity: with the soft rows S and the hard rows C (the joints),
//!
//! ```text
//! H = W⁻¹ + J_Sᵀ D_S⁻¹ J_S                  (6 × 6 per moving body, a block per spring)
//! u = H⁻¹ (J_Sᵀ D_S⁻¹ b_S + J_Cᵀ Δλ_C)       (the velocity change)
//! (J_C H⁻¹ J_Cᵀ + D_C) Δλ_C = b_C − J_C H⁻¹ J_Sᵀ D_S⁻¹ b_S
//! Δλ_S = D_S⁻¹ (b_S − J_S u)
//! ```
//!
//! which gives the same Δλ as the dual solve (eliminate Δλ_S from A Δλ = b). H is factored
//! by faer's sparse Cholesky (approximate minimum degree ordering, supernodal; the pattern
//! and its symbolic analysis are made once); the few hard rows (pinned nodes, a clamp) are a
//! small dense Schur complement, at most [`PRIMAL_MAX_HARD_ROWS`] rows.
//!
//! H also carries the springs' turning stiffness, and each solve the momentum that the last
//! row refresh left (see [`super::primal::turning`]).
//!
//! W is the direct method's body weight: 1/m on the linear velocities, the (Newton) inverse
//! inertia turned to the midpoint on the angular ones (its symmetric part here: H must be
//! symmetric; the outer iterations, which measure the nonlinear residual, remove what that
//! leaves). A spring attached at both bodies' centres (every element connection) couples
//! only their linear velocities.
//!
//! A factor carries over into the next step while the set of blocks and the time step stay
//! the same (see `DirectSolver::may_reuse`): a network's springs turn little per step, so
//! the old factor is a chord whose contraction the velocity stage ([`super::primal::stage`])
//! watches, and it factors again when that is slow. Nothing is allocated per step.

pub(super) mod pattern;
pub(super) mod rows;
pub(super) mod stage;
pub(super) mod stylus;
#[cfg(test)]
mod tests;
pub(super) mod turning;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::{Conj, Mat, MatMut, Par, Side};
use nalgebra::Matrix3;

use super::direct::coupled::{BlockOwner, GlobalBlock};
use super::primal::pattern::{local_dofs, local_jacobian, tri, Pattern, DOF, LOCAL};
use super::primal::rows::BlockHead;
use super::primal::stylus::{condense_stylus, CondensedStylus};
use super::primal::turning::{across, stiffness, TurningInputs};
use crate::error::SimError;
use crate::linalg::block_cholesky::{Lanes, BLOCK, MAX_STORAGE_BYTES};
use crate::model::body::{Body, BodyId};
use crate::model::joint::Joint;
use crate::model::spring::Spring;

/// The primal solve is used from this many springs on (smaller networks keep the dual
/// factor, and their results bit for bit).
pub(crate) const PRIMAL_MIN_SPRINGS: usize = 256;
/// ... and when the dual factor would store more than this many blocks per element.
pub(crate) const PRIMAL_FILL_RATIO: usize = 4;
/// The most hard (joint) rows the primal solve takes: each costs a solve with H per
/// factorisation.
pub(crate) const PRIMAL_MAX_HARD_ROWS: usize = 96;

/// The primal solve's factor of `factor_entries` values would need `bytes`: the error, with
/// the factor counted in 6 × 6 blocks as the block factor's is.
fn too_large(pattern: &Pattern, factor_entries: usize, bytes: usize) -> SimError {
    SimError::TooLarge {
        elements: pattern.spring_start.len() + 1,
        factor_blocks: match factor_entries {
            usize::MAX => usize::MAX,
            n => n.div_ceil(BLOCK * BLOCK),
        },
        bytes,
        limit: MAX_STORAGE_BYTES,
    }
}

/// What [`PrimalSolve::solve_h`] solves for.
enum SolveFor {
    /// The velocity vector `x`.
    X,
    /// The first this many columns of `y`.
    Y(usize),
}

/// A hard row of the last factorisation: its block and row, and its Jacobian in H's
/// velocities.
#[derive(Clone, Copy, Debug, Default)]
struct HardRow {
    block: usize,
    row: usize,
    dofs: [usize; LOCAL],
    jac: [f64; LOCAL],
    len: usize,
}

impl HardRow {
    fn dot(&self, x: &[f64]) -> f64 {
        (0..self.len).map(|p| self.jac[p] * x[self.dofs[p]]).sum()
    }
}

/// The primal solve's state: H's pattern and values, its factor, and the hard rows' Schur
/// complement (see the module docs).
pub(crate) struct PrimalSolve {
    pub(super) pattern: Pattern,
    symbolic_h: SymbolicSparseColMat<usize>,
    factor: SymbolicCholesky<usize>,
    values: Vec<f64>,
    l_values: Vec<f64>,
    mem: MemBuffer,
    /// The right-hand side and solution in H's velocities.
    pub(super) x: Vec<f64>,
    /// H⁻¹ J_Cᵀ, a column per hard row (column-major, `pattern.n` rows).
    y: Vec<f64>,
    hard: Vec<HardRow>,
    /// Per block of the last collection, its rows as the solve reads them.
    pub(super) heads: Vec<BlockHead>,
    /// The stylus of the last factorisation, when it is on a condensed body.
    pub(super) stylus: Option<CondensedStylus>,
    /// The hard rows' Schur complement J_C H⁻¹ J_Cᵀ (regularised), its Cholesky factor in
    /// the lower triangle of the leading `hard.len()` square.
    schur: Mat<f64>,
    /// The hard rows' impulse increments μ (Schur solve scratch, one column).
    mu: Mat<f64>,
    /// The blocks' owners and bodies at the last factorisation (whether it still fits).
    owners: Vec<(BlockOwner, BodyId, BodyId)>,
    /// The time step (s) the factor held was made for: a split step's sub-steps need their
    /// own. `None` while no factor is held (before the first factorisation, and after one
    /// that failed).
    factor_dt_secs: Option<f64>,
    /// Whether the last factor's turning stiffness includes compressed springs (see
    /// [`super::primal::turning`]).
    pub(super) compression: bool,
    /// Whether the last factor had no impulse to take the turning stiffness from.
    pub(super) without_impulses: bool,
    /// The last row refresh's momentum in H's velocities (see [`Self::set_row_lag`]).
    pub(super) lag: Vec<f64>,
    /// Whether H and the lag take the springs' turning stiffness (the tests compare).
    pub(super) turning: bool,
}

impl std::fmt::Debug for PrimalSolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrimalSolve")
            .field("velocities", &self.pattern.n)
            .field("h_entries", &self.values.len())
            .field("factor_entries", &self.l_values.len())
            .field("hard_rows", &self.hard.len())
            .field("factor_dt_secs", &self.factor_dt_secs)
            .finish()
    }
}

impl Clone for PrimalSolve {
    fn clone(&self) -> Self {
        // The original passed the memory check with the same pattern and rows.
        let mut copy = Self::with_pattern(self.pattern.clone(), self.hard.capacity())
            .expect("the copy of a primal solve needs what the original needed");
        copy.values.clone_from(&self.values);
        copy.l_values.clone_from(&self.l_values);
        copy.x.clone_from(&self.x);
        copy.y.clone_from(&self.y);
        copy.hard.clone_from(&self.hard);
        copy.stylus = self.stylus;
        copy.heads.clone_from(&self.heads);
        copy.schur.clone_from(&self.schur);
        copy.owners.clone_from(&self.owners);
        copy.factor_dt_secs = self.factor_dt_secs;
        copy
    }
}

impl PrimalSolve {
    /// Pattern, symbolic factor and scratch for these bodies and springs and at most
    /// `max_hard_rows` joint rows.
    ///
    /// # Errors
    /// [`SimError::TooLarge`] when the factor and its scratch would need more than
    /// [`MAX_STORAGE_BYTES`]: checked after the symbolic analysis, which knows the factor's
    /// size, and before the factor's values are allocated.
    pub(crate) fn new(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
        max_hard_rows: usize,
    ) -> Result<Self, SimError> {
        Self::with_pattern(Pattern::new(bodies, joints, springs, true), max_hard_rows)
    }

    /// [`Self::new`] with every moving body's angular velocities kept in H (the reference
    /// for the condensed solve).
    #[cfg(test)]
    pub(crate) fn uncondensed(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
        max_hard_rows: usize,
    ) -> Result<Self, SimError> {
        Self::with_pattern(Pattern::new(bodies, joints, springs, false), max_hard_rows)
    }

    fn with_pattern(pattern: Pattern, max_hard_rows: usize) -> Result<Self, SimError> {
        let n = pattern.n;
        let symbolic_h = pattern.symbolic();
        let factor = factorize_symbolic_cholesky(
            symbolic_h.as_ref(),
            Side::Lower,
            SymmetricOrdering::Amd,
            // Supernodal: dense kernels on the mesh's separators (simplicial was 3.5 times
            // slower on a 32 × 32 cloth).
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SUPERNODAL,
                ..Default::default()
            },
        )
        // faer refuses a pattern whose indices overflow, or memory it cannot reserve.
        .map_err(|_| too_large(&pattern, usize::MAX, usize::MAX))?;
        let columns = max_hard_rows.max(1);
        let req = StackReq::any_of(&[
            factor.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            factor.solve_in_place_scratch::<f64>(columns, Par::Seq),
            llt::factor::cholesky_in_place_scratch::<f64>(columns, Par::Seq, Default::default()),
            llt::solve::solve_in_place_scratch::<f64>(columns, 1, Par::Seq),
        ]);
        let floats = [
            Some(pattern.row_idx.len()),
            Some(factor.len_val()),
            n.checked_mul(columns),
            columns.checked_mul(columns),
            n.checked_mul(2),
        ];
        let bytes = floats
            .into_iter()
            .try_fold(req.size_bytes(), |sum, f| {
                sum.checked_add(f?.checked_mul(std::mem::size_of::<f64>())?)
            })
            .unwrap_or(usize::MAX);
        if bytes > MAX_STORAGE_BYTES {
            return Err(too_large(&pattern, factor.len_val(), bytes));
        }
        let mut primal = Self {
            values: vec![0.0; pattern.row_idx.len()],
            l_values: vec![0.0; factor.len_val()],
            mem: MemBuffer::new(req),
            x: vec![0.0; n],
            y: vec![0.0; n * columns],
            hard: Vec::with_capacity(max_hard_rows),
            stylus: None,
            heads: Vec::with_capacity(pattern.spring_start.len() + max_hard_rows + 1),
            schur: Mat::zeros(columns, columns),
            mu: Mat::zeros(columns, 1),
            owners: Vec::with_capacity(pattern.spring_start.len() + max_hard_rows + 1),
            factor_dt_secs: None,
            compression: true,
            without_impulses: true,
            lag: vec![0.0; n],
            turning: true,
            symbolic_h,
            factor,
            pattern,
        };
        primal.prime();
        Ok(primal)
    }

    /// Factors and solves H = I once: the first factorisation and solve in a process make
    /// faer's kernels set up their caches (one allocation), which belongs here and not in a
    /// step.
    fn prime(&mut self) {
        for slots in &self.pattern.diag_slots {
            for k in 0..DOF {
                if let Some(v) = self.values.get_mut(slots[tri(k, k)]) {
                    *v = 1.0;
                }
            }
        }
        if self.factor_values().is_some() {
            self.solve_h(SolveFor::X);
        }
    }

    /// Replaces `x`, or the first hard-row columns of `y`, by H⁻¹ times it.
    fn solve_h(&mut self, what: SolveFor) {
        let n = self.pattern.n;
        let rhs = match what {
            SolveFor::X => MatMut::from_column_major_slice_mut(&mut self.x, n, 1),
            SolveFor::Y(columns) => {
                MatMut::from_column_major_slice_mut(&mut self.y[..n * columns], n, columns)
            }
        };
        LltRef::new(&self.factor, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            rhs,
            Par::Seq,
            MemStack::new(&mut self.mem),
        );
    }

    /// Factors H from `values` into `l_values`; `None` if it is not positive definite.
    fn factor_values(&mut self) -> Option<()> {
        let h = SparseColMatRef::new(self.symbolic_h.as_ref(), &self.values);
        self.factor
            .factorize_numeric_llt(
                &mut self.l_values,
                h,
                Side::Lower,
                Default::default(),
                Par::Seq,
                MemStack::new(&mut self.mem),
                Default::default(),
            )
            .ok()
            .map(|_| ())
    }

    /// How many velocities H has.
    #[cfg(test)]
    pub(crate) fn velocities(&self) -> usize {
        self.pattern.n
    }

    /// Whether the last factor was made for exactly these blocks (owners and bodies) and
    /// this time step.
    pub(crate) fn fits(&self, blocks: &[GlobalBlock], dt_secs: f64) -> bool {
        self.factor_dt_secs == Some(dt_secs)
            && self.owners.len() == blocks.len()
            && self
                .owners
                .iter()
                .zip(blocks)
                .all(|(o, g)| *o == (g.owner, g.b1, g.b2))
    }

    /// [`Self::factor`] with the springs' turning stiffness as `self.compression` says.
    pub(super) fn factor_with(
        &mut self,
        blocks: &[GlobalBlock],
        bodies: &[Body],
        body_weight: &[Matrix3<f64>],
        turning: TurningInputs<'_>,
        regularisation: f64,
    ) -> Option<()> {
        let TurningInputs {
            spring_rows,
            dt_secs,
        } = turning;
        self.factor_dt_secs = None;
        self.values.fill(0.0);
        add_bodies(&self.pattern, bodies, body_weight, &mut self.values)?;
        self.owners.clear();
        self.hard.clear();
        self.stylus = None;
        for (a, g) in blocks.iter().enumerate() {
            self.owners.push((g.owner, g.b1, g.b2));
            let p = &self.pattern;
            match g.owner {
                BlockOwner::Spring(i) => {
                    let turn = if self.turning && p.lin_only[i] && g.b1 != g.b2 {
                        stiffness(&spring_rows[i], dt_secs, self.compression)
                    } else {
                        0.0
                    };
                    add_spring(p, g, i, turn, &mut self.values);
                }
                BlockOwner::Stylus if p.condensed[g.b1] => {
                    let weight = &body_weight[g.b1];
                    self.stylus = Some(add_condensed_stylus(p, g, weight, &mut self.values)?);
                }
                BlockOwner::Stylus => add_stylus(p, g, &mut self.values),
                BlockOwner::Joint(_) => push_hard_rows(p, a, g, &mut self.hard),
            }
        }
        self.factor_values()?;
        self.factor_schur(regularisation)?;
        self.factor_dt_secs = Some(dt_secs);
        Some(())
    }

    /// H⁻¹ J_Cᵀ into `y` and the hard rows' Schur complement J_C H⁻¹ J_Cᵀ (its diagonal
    /// raised by `regularisation` of itself), factored; `None` if that fails.
    fn factor_schur(&mut self, regularisation: f64) -> Option<()> {
        let (n, nh) = (self.pattern.n, self.hard.len());
        if nh == 0 {
            return Some(());
        }
        self.y[..n * nh].fill(0.0);
        for (c, row) in self.hard.iter().enumerate() {
            for q in 0..row.len {
                self.y[c * n + row.dofs[q]] += row.jac[q];
            }
        }
        self.solve_h(SolveFor::Y(nh));
        for r in 0..nh {
            for c in 0..=r {
                self.schur[(r, c)] = self.hard[r].dot(&self.y[c * n..(c + 1) * n]);
            }
            self.schur[(r, r)] *= 1.0 + regularisation;
        }
        llt::factor::cholesky_in_place(
            self.schur.as_mut().submatrix_mut(0, 0, nh, nh),
            Default::default(),
            Par::Seq,
            MemStack::new(&mut self.mem),
            Default::default(),
        )
        .ok()
        .map(|_| ())
    }

    /// Replaces each block's right-hand side in `rhs` by its impulse increment (see the
    /// module docs), with the rows of `blocks` for the soft elements and the factor's.
    pub(crate) fn solve(&mut self, blocks: &[GlobalBlock], rhs: &mut [Lanes]) {
        self.scatter_soft_rows(blocks, rhs);
        for (x, l) in self.x.iter_mut().zip(&self.lag) {
            *x += l;
        }
        self.solve_h(SolveFor::X);
        let (n, nh) = (self.pattern.n, self.hard.len());
        if nh > 0 {
            for (i, row) in self.hard.iter().enumerate() {
                self.mu[(i, 0)] = rhs[row.block][row.row] - row.dot(&self.x);
            }
            llt::solve::solve_in_place_with_conj(
                self.schur.as_ref().submatrix(0, 0, nh, nh),
                Conj::No,
                self.mu.as_mut().subrows_mut(0, nh),
                Par::Seq,
                MemStack::new(&mut self.mem),
            );
            for (i, row) in self.hard.iter().enumerate() {
                let m = self.mu[(i, 0)];
                for (xi, yi) in self.x.iter_mut().zip(&self.y[i * n..(i + 1) * n]) {
                    *xi += m * yi;
                }
                rhs[row.block][row.row] = m;
            }
        }
        self.gather_soft_rows(blocks, rhs);
    }
}

/// Each moving body's diagonal block of H: its mass on the linear velocities and, unless
/// condensed, the inverse of its weight's symmetric part on the angular ones. `None` if that
/// is singular.
fn add_bodies(
    p: &Pattern,
    bodies: &[Body],
    body_weight: &[Matrix3<f64>],
    values: &mut [f64],
) -> Option<()> {
    for (b, body) in bodies.iter().enumerate() {
        if p.first_dof[b] == usize::MAX {
            continue;
        }
        let slots = &p.diag_slots[b];
        let mass = body.inv_mass.recip();
        for k in 0..3 {
            values[slots[tri(k, k)]] += mass;
        }
        if p.condensed[b] {
            continue;
        }
        let w = body_weight[b];
        let inertia = (0.5 * (w + w.transpose())).try_inverse()?;
        for r in 0..3 {
            for c in 0..=r {
                values[slots[tri(3 + r, 3 + c)]] += inertia[(r, c)];
            }
        }
    }
    Some(())
}

/// Spring `i`'s block (block `g`) of J_Sᵀ D_S⁻¹ J_S in H, with its turning stiffness `turn`
/// (kg) across the spring.
fn add_spring(p: &Pattern, g: &GlobalBlock, i: usize, turn: f64, values: &mut [f64]) {
    let lo = p.lin_only[i];
    let j = local_jacobian(&p.first_dof, g.b1, g.b2, &g.row(0), lo);
    let soft = g.inv_soft[0].recip();
    let slots = &p.spring_slots[p.spring_start[i]..p.spring_start[i + 1]];
    let len = local_dofs(&p.first_dof, g.b1, g.b2, lo).1;
    let turn_across = across(&g.row(0).lin) * turn;
    let mut s = 0;
    for pp in 0..len {
        for q in 0..=pp {
            // (+ on each body's own block, − between the two.)
            let t = turn_across[(pp % 3, q % 3)];
            let t = if (pp < 3) == (q < 3) { t } else { -t };
            values[slots[s]] += soft * j[pp] * j[q] + t;
            s += 1;
        }
    }
}

/// The stylus block on a condensed body (its angular velocities eliminated: see
/// [`condense_stylus`]) into its linear diagonal block; `None` if that fails.
fn add_condensed_stylus(
    p: &Pattern,
    g: &GlobalBlock,
    weight: &Matrix3<f64>,
    values: &mut [f64],
) -> Option<CondensedStylus> {
    let condensed = condense_stylus(p, g, weight)?;
    let slots = &p.diag_slots[g.b1];
    for r in 0..3 {
        for c in 0..=r {
            values[slots[tri(r, c)]] += condensed.1[(r, c)];
        }
    }
    Some(condensed.0)
}

/// The stylus block on a body that keeps its angular velocities: on one body (the other is
/// the ground), within its diagonal block.
fn add_stylus(p: &Pattern, g: &GlobalBlock, values: &mut [f64]) {
    let slots = &p.diag_slots[g.b1];
    for k in 0..g.rows {
        let j = local_jacobian(&p.first_dof, g.b1, g.b2, &g.row(k), false);
        let soft = g.inv_soft[k].recip();
        for r in 0..DOF {
            for c in 0..=r {
                values[slots[tri(r, c)]] += soft * j[r] * j[c];
            }
        }
    }
}

/// A joint's rows (block `a`, `g`) as hard rows of the Schur complement.
fn push_hard_rows(p: &Pattern, a: usize, g: &GlobalBlock, hard: &mut Vec<HardRow>) {
    for k in 0..g.rows {
        // (Room for every joint row was made with the pattern.)
        debug_assert!(hard.len() < hard.capacity());
        let (dofs, len) = local_dofs(&p.first_dof, g.b1, g.b2, false);
        let jac = local_jacobian(&p.first_dof, g.b1, g.b2, &g.row(k), false);
        hard.push(HardRow {
            block: a,
            row: k,
            dofs,
            jac,
            len,
        });
    }
}
