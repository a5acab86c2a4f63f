//! Assembly and factorisation of the coupled system: each body's weight of its rows'
//! angular parts, a block per element (the joints in block order, the active springs, the
//! stylus), and the factor (the block Cholesky within its pattern, or the primal solve's).

use nalgebra::Vector3;

use super::coupled::{assemble, start_block, BlockOwner};
use crate::linalg::block::{mul_skew, skew_mul};
use crate::model::body::{Body, BodyId, GROUND};
use crate::model::joint::Row;
use crate::solver::Step;

impl Step<'_> {
    /// Collects the rows of all elements (current rows), a block per element, and factors
    /// J M⁻¹ Jᵀ + diag(1/soft) within its factor's pattern.
    pub(super) fn assemble_and_factor(&mut self) -> Option<()> {
        let newton = self.s.newton.is_on();
        if newton && self.s.newton.inertia_of != self.s.newton.turning_version {
            self.newton_inertia_from_turning();
        }
        self.update_body_weights(newton);
        let nb = self.collect_coupled_blocks();
        self.factor_coupled_blocks(nb)
    }

    /// Each body's weight (I + [φ]×) M (I − [φ]×) of its rows' angular parts, with M the
    /// Newton inertia when `newton`, else I⁻¹.
    fn update_body_weights(&mut self, newton: bool) {
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
    }

    /// Collects a block per element from the current rows; returns how many.
    fn collect_coupled_blocks(&mut self) -> usize {
        let h = self.ctx.h;
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
            let soft = s.step_compliance(h);
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
            let soft = s.step_compliance(h);
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
        nb
    }

    /// Factors the collected blocks (or keeps the primal solve's factor where it still fits).
    fn factor_coupled_blocks(&mut self, nb: usize) -> Option<()> {
        let h = self.ctx.h;
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
