//! The coupled solve of one linearisation: the blocks' right-hand sides from the current
//! prediction, one solve with the step's factor (a chord once the rows have been refreshed),
//! and the increments applied along the current rows.

use nalgebra::Vector3;

use super::coupled::BlockOwner;
use crate::linalg::block_cholesky::BLOCK;
use crate::solver::impulses::{add_joint_impulses, add_spring_impulse, add_stylus_impulse};
use crate::solver::{larger, Step};

// Row loops index several parallel fixed-size arrays (rows, impulses, block entries).
#[allow(clippy::needless_range_loop)]
impl Step<'_> {
    /// Solves the current linearisation with the coupled factorisation of all rows (factored
    /// once per step, see [`Self::advance`]) and applies the impulse increments along the
    /// current rows. Returns the largest row-velocity error before the solve, or `None` if
    /// the factorisation failed.
    pub(in crate::solver) fn direct_solve(&mut self) -> Option<f64> {
        if self.s.direct.factor_of != self.s.versions.matrix {
            self.assemble_and_factor()?;
            self.s.direct.factor_of = self.s.versions.matrix;
        }
        let nb = self.s.direct.blocks.len();
        if nb == 0 {
            return Some(0.0);
        }
        let residual = self.coupled_right_hand_sides();
        let direct = &mut self.s.direct;
        match &mut direct.primal {
            Some(primal) => primal.solve(&direct.blocks, &mut direct.rhs[..nb]),
            None => direct.dense.solve(&mut direct.rhs[..nb]),
        }
        self.apply_coupled_increments();
        self.flush_torques(self.s.newton.is_on());
        Some(residual)
    }

    /// Writes every block's right-hand side into `rhs`; returns the largest row-velocity
    /// error they stand for (m/s).
    fn coupled_right_hand_sides(&mut self) -> f64 {
        let h = self.ctx.h;
        let keep = 1.0 - self.ctx.beta;
        // Right-hand sides. A joint row's is its target minus its rate; the target is that
        // rate plus 2((1 − β)ψₙ − ψ̂)/h at the same velocities, so the rate cancels.
        let mut residual = 0.0_f64;
        let nb = self.s.direct.blocks.len();
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
        residual
    }

    /// Adds the solved increments to the elements' impulses and applies them to the bodies.
    fn apply_coupled_increments(&mut self) {
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
    }

    /// Makes the next solve factor the matrix of the rows and weights as they are then,
    /// instead of solving with the factor of older ones as a chord.
    pub(in crate::solver) fn refactor_current_rows(&mut self) {
        self.s.versions.matrix.advance();
    }
}
