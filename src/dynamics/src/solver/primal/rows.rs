//! How the primal solve ([`crate::solver::primal`]) reads the blocks' rows: each block's head (a
//! compact form for the many springs of a mesh, made once per collection of the blocks), the
//! scatter of the soft rows' right-hand sides into H's velocities, J_Sᵀ D_S⁻¹ b_S, the gather
//! of their impulse increments from the velocity change u, D_S⁻¹ (b_S − J_S u), and the
//! write-back of u into the bodies.

use nalgebra::Vector3;

use super::pattern::{local_dofs, local_jacobian};
use super::stylus::stylus_jacobian;
use super::PrimalSolve;
use crate::linalg::block_cholesky::Lanes;
use crate::model::body::Body;
use crate::solver::direct::coupled::{BlockOwner, GlobalBlock};

/// A block's rows as [`PrimalSolve::solve`] reads them, made when the blocks are collected
/// (see [`PrimalSolve::load_rows`]): the many springs of a mesh compactly.
#[derive(Clone, Copy, Debug)]
pub(in crate::solver) enum BlockHead {
    /// A spring at both centres: its row's linear part, on the linear velocities of its
    /// bodies from `f1` and `f2` (`usize::MAX` for a fixed body), and its 1/soft.
    Centred {
        f1: usize,
        f2: usize,
        lin: Vector3<f64>,
        inv_soft: f64,
    },
    /// Any other block, read from the block itself.
    Other,
}

impl PrimalSolve {
    /// Takes the rows of freshly collected blocks (every assembly, whether or not it factors).
    pub(crate) fn load_rows(&mut self, blocks: &[GlobalBlock]) {
        self.heads.clear();
        for g in blocks {
            let head = match g.owner {
                BlockOwner::Spring(i) if self.pattern.lin_only[i] => BlockHead::Centred {
                    f1: self.pattern.first_dof[g.b1],
                    f2: self.pattern.first_dof[g.b2],
                    lin: g.row(0).lin,
                    inv_soft: g.inv_soft[0],
                },
                _ => BlockHead::Other,
            };
            self.heads.push(head);
        }
    }

    /// Sets `x` to J_Sᵀ D_S⁻¹ b_S: the soft rows' right-hand sides in H's velocities (a
    /// condensed stylus's angular part goes in through its Schur complement).
    pub(in crate::solver) fn scatter_soft_rows(&mut self, blocks: &[GlobalBlock], rhs: &[Lanes]) {
        self.x.fill(0.0);
        for ((g, b), head) in blocks.iter().zip(rhs.iter()).zip(&self.heads) {
            if let BlockHead::Centred {
                f1,
                f2,
                lin,
                inv_soft,
            } = *head
            {
                // The general case's sums, term for term.
                let c = b[0] / inv_soft;
                if f1 != usize::MAX {
                    for q in 0..3 {
                        self.x[f1 + q] += c * lin[q];
                    }
                }
                if f2 != usize::MAX {
                    for q in 0..3 {
                        self.x[f2 + q] += c * -lin[q];
                    }
                }
                continue;
            }
            if let (BlockOwner::Stylus, Some(cs)) = (g.owner, &mut self.stylus) {
                cs.r_a = Vector3::zeros();
                for (k, bk) in b.iter().enumerate().take(g.rows) {
                    let (j_l, j_a) = stylus_jacobian(&self.pattern, g, k);
                    let c = bk / g.inv_soft[k];
                    for (q, jq) in j_l.iter().enumerate() {
                        self.x[cs.first + q] += c * jq;
                    }
                    cs.r_a += c * j_a;
                }
                let shift = cs.la * (cs.inv_aa * cs.r_a);
                for (q, sq) in shift.iter().enumerate() {
                    self.x[cs.first + q] -= sq;
                }
                continue;
            }
            let Some(lo) = self.pattern.soft_lin_only(g.owner) else {
                continue;
            };
            let (dofs, len) = local_dofs(&self.pattern.first_dof, g.b1, g.b2, lo);
            for (k, bk) in b.iter().enumerate().take(g.rows) {
                let j = local_jacobian(&self.pattern.first_dof, g.b1, g.b2, &g.row(k), lo);
                let c = bk / g.inv_soft[k];
                for q in 0..len {
                    self.x[dofs[q]] += c * j[q];
                }
            }
        }
    }

    /// Replaces each soft block's right-hand side in `rhs` by its impulse increment
    /// D_S⁻¹ (b_S − J_S u), u being the velocity change in `x`.
    pub(in crate::solver) fn gather_soft_rows(
        &mut self,
        blocks: &[GlobalBlock],
        rhs: &mut [Lanes],
    ) {
        for ((g, b), head) in blocks.iter().zip(rhs.iter_mut()).zip(&self.heads) {
            if let BlockHead::Centred {
                f1,
                f2,
                lin,
                inv_soft,
            } = *head
            {
                let mut ju = 0.0;
                if f1 != usize::MAX {
                    for q in 0..3 {
                        ju += lin[q] * self.x[f1 + q];
                    }
                }
                if f2 != usize::MAX {
                    for q in 0..3 {
                        ju += -lin[q] * self.x[f2 + q];
                    }
                }
                b[0] = (b[0] - ju) / inv_soft;
                continue;
            }
            if let (BlockOwner::Stylus, Some(cs)) = (g.owner, &self.stylus) {
                let u_l = Vector3::from_column_slice(&self.x[cs.first..cs.first + 3]);
                let u_a = cs.inv_aa * (cs.r_a - cs.la.transpose() * u_l);
                for (k, bk) in b.iter_mut().enumerate().take(g.rows) {
                    let (j_l, j_a) = stylus_jacobian(&self.pattern, g, k);
                    *bk = (*bk - j_l.dot(&u_l) - j_a.dot(&u_a)) / g.inv_soft[k];
                }
                continue;
            }
            let Some(lo) = self.pattern.soft_lin_only(g.owner) else {
                continue;
            };
            let (dofs, len) = local_dofs(&self.pattern.first_dof, g.b1, g.b2, lo);
            for (k, bk) in b.iter_mut().enumerate().take(g.rows) {
                let j = local_jacobian(&self.pattern.first_dof, g.b1, g.b2, &g.row(k), lo);
                let ju: f64 = (0..len).map(|q| j[q] * self.x[dofs[q]]).sum();
                *bk = (*bk - ju) / g.inv_soft[k];
            }
        }
    }

    /// Sets each moving body's linear velocity to its value in `snapshot` plus the last
    /// [`Self::solve`]'s velocity change u. With a factor of the present rows that is what
    /// the impulse increments applied along them give; with a factor kept from earlier rows
    /// (a chord) the two differ, and u converged in fewer solves (6.1 against 7.2 per step on
    /// a 32 × 32 curtain).
    pub(crate) fn set_velocity_change(
        &self,
        bodies: &mut [Body],
        snapshot: &[(Vector3<f64>, Vector3<f64>)],
    ) {
        let x = &self.x;
        for ((body, &f), snap) in bodies.iter_mut().zip(&self.pattern.first_dof).zip(snapshot) {
            if f != usize::MAX {
                body.linear_velocity_in_world = snap.0 + Vector3::new(x[f], x[f + 1], x[f + 2]);
            }
        }
    }
}
