//! Joint constraints in the step: ψ and attachment vectors at the start and predicted poses,
//! the midpoint rows, each joint's own block factor, its Gauss–Seidel update, the position
//! projection and the reactions (Eq. 24–26).

use nalgebra::Vector3;

use crate::linalg::block::{BlockMatrix, BlockVector, CholeskyBlock, MAX_ROWS};
use crate::linalg::block_cholesky::BLOCK;
use crate::model::body::{advance_rotation, Pose};
use crate::model::joint::{JointGeometry, Row};
use crate::solver::impulses::add_joint_impulses;
use crate::solver::stamp::Stamp;
use crate::solver::{larger, Step};

// Row loops index several parallel fixed-size arrays (rows, impulses, block entries).
#[allow(clippy::needless_range_loop)]
impl Step<'_> {
    /// Evaluates every joint's ψ at the predicted end poses, once per prediction.
    pub(in crate::solver) fn evaluate_predicted_psi(&mut self) {
        if self.s.joint.psi_pred_at == self.s.versions.prediction {
            return;
        }
        for (j, blk) in self.joints.iter().zip(self.s.joint.blocks.iter_mut()) {
            j.set_geometry(
                &self.s.body.predicted[j.body1],
                &self.s.body.predicted[j.body2],
                &mut blk.geometry_pred,
            );
        }
        // ψ in a second pass: read right after it was written, the geometry's wide loads
        // wait for its narrow stores to retire (store-to-load forwarding fails), on every
        // joint of every prediction. The same holds for ψ returned by value and copied.
        for (j, blk) in self.joints.iter().zip(self.s.joint.blocks.iter_mut()) {
            j.psi_into(&blk.geometry_pred, &mut blk.psi_pred);
        }
        self.s.joint.psi_pred_at = self.s.versions.prediction;
    }

    /// Builds ψ and the rows of joint `i` at the current poses; the block factor is made
    /// from the rows when a sweep or the position pass needs it ([`Self::ensure_joint_factors`]).
    pub(in crate::solver) fn prepare_joint_rows(&mut self, i: usize) {
        self.prepare_joint_psi(i);
        let j = &self.joints[i];
        let blk = &mut self.s.joint.blocks[i];
        j.rows_of(&blk.geometry_start, &blk.geometry_start, &mut blk.rows);
        self.s.versions.rows.advance();
    }

    /// ψ of joint `i` and its attachment vectors at the start of the step.
    pub(in crate::solver) fn prepare_joint_psi(&mut self, i: usize) {
        let j = &self.joints[i];
        let blk = &mut self.s.joint.blocks[i];
        j.set_geometry(
            &self.s.body.start[j.body1],
            &self.s.body.start[j.body2],
            &mut blk.geometry_start,
        );
        j.psi_into(&blk.geometry_start, &mut blk.psi_start);
    }

    /// Factors every joint's own block from its current rows, if that has not been done
    /// since they were last built. The coupled solve does not need these factors; the
    /// sweeps and the position pass do.
    pub(in crate::solver) fn ensure_joint_factors(&mut self) {
        if self.s.joint.factors_of == self.s.versions.rows {
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
        self.s.joint.factors_of = self.s.versions.rows;
    }

    /// Factors K = J M⁻¹ Jᵀ of joint `i` from its current rows.
    pub(in crate::solver) fn factor_joint(&mut self, i: usize) -> bool {
        let j = &self.joints[i];
        let n = j.rows();
        let inv_masses = self.bodies[j.body1].inv_mass + self.bodies[j.body2].inv_mass;
        let blk = &mut self.s.joint.blocks[i];
        let (ii1, ii2) = (
            &self.s.body.inv_inertia[j.body1],
            &self.s.body.inv_inertia[j.body2],
        );
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
    pub(in crate::solver) fn update_joint_rows(&mut self, i: usize) {
        let j = &self.joints[i];
        let blk = &mut self.s.joint.blocks[i];
        j.rows_of(&blk.geometry_start, &blk.geometry_pred, &mut blk.rows);
    }

    /// Rate J̄ₖ v of row `k` of joint `i` at the current velocities.
    pub(in crate::solver) fn joint_row_rate(&self, i: usize, k: usize) -> f64 {
        let j = &self.joints[i];
        let row = &self.s.joint.blocks[i].rows[k];
        let (b1, b2) = (&self.bodies[j.body1], &self.bodies[j.body2]);
        row.lin
            .dot(&(b1.linear_velocity_in_world - b2.linear_velocity_in_world))
            + row.ang1.dot(&b1.angular_velocity_in_world)
            + row.ang2.dot(&b2.angular_velocity_in_world)
    }

    /// One Gauss–Seidel update of joint `i` on the current linearisation; returns the
    /// largest midpoint-velocity error of its rows before the update.
    pub(in crate::solver) fn solve_joint(&mut self, i: usize) -> f64 {
        let j = &self.joints[i];
        let n = j.rows();
        let mut delta: BlockVector = [0.0; MAX_ROWS];
        let mut residual = 0.0_f64;
        for k in 0..n {
            let r = self.s.joint.blocks[i].bias[k] - self.joint_row_rate(i, k);
            residual = residual.max(r.abs());
            delta[k] = self.ctx.relaxation * r;
        }
        let blk = &mut self.s.joint.blocks[i];
        blk.factor.solve_in_place(&mut delta);
        for k in 0..n {
            blk.lambda[k] += delta[k];
        }
        let (b1, b2) = (j.body1, j.body2);
        add_joint_impulses(
            self.bodies,
            &mut self.s.body.torque,
            j,
            &blk.rows[..n],
            &delta[..n],
        );
        self.flush_torque(b1);
        self.flush_torque(b2);
        0.5 * residual
    }

    /// One nonlinear Gauss–Seidel position projection of joint `i` (poses only).
    pub(in crate::solver) fn project_joint(&mut self, i: usize) {
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
        self.s.joint.blocks[i].factor.solve_in_place(&mut delta);
        let mut lin = Vector3::zeros();
        let mut ang1 = Vector3::zeros();
        let mut ang2 = Vector3::zeros();
        for k in 0..n {
            lin += rows[k].lin * delta[k];
            ang1 += rows[k].ang1 * delta[k];
            ang2 += rows[k].ang2 * delta[k];
        }
        let (ang1, ang2) = (
            self.s.body.inv_inertia[b1] * ang1,
            self.s.body.inv_inertia[b2] * ang2,
        );
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
}

/// Relative pivot epsilon of the per-element block factorisations.
pub(in crate::solver) const BLOCK_EPSILON: f64 = 1.0e-12;

/// One joint's rows, factor, constraint values and accumulated impulses in the step.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct JointBlock {
    pub(crate) rows: [Row; MAX_ROWS],
    pub(crate) factor: CholeskyBlock,
    pub(crate) psi_start: BlockVector,
    /// Attachment vectors at the step's start poses.
    pub(crate) geometry_start: JointGeometry,
    /// ψ at the current predicted end poses (current while `JointRows::psi_pred_at` is the prediction's version).
    pub(crate) psi_pred: BlockVector,
    /// Attachment vectors at the current predicted end poses (valid with `psi_pred`).
    pub(crate) geometry_pred: JointGeometry,
    /// Target of J̄ v in the current linearisation.
    pub(crate) bias: BlockVector,
    pub(crate) lambda: BlockVector,
}

impl JointBlock {
    /// How far row `k` at the predicted end pose is from its Baumgarte target (1 − β)ψₙ
    /// (`keep` = 1 − β); m, or rad for angular rows.
    pub(crate) fn closure_error(&self, k: usize, keep: f64) -> f64 {
        keep * self.psi_start[k] - self.psi_pred[k]
    }

    /// The largest |closure error| of the block's rows. Taken over every lane: ψ is zero past
    /// a joint's rows (see [`crate::model::joint::Joint::psi_of`]), so the padding adds nothing, and the fixed
    /// length lets the compiler unroll what the solver runs for every joint several times a
    /// step.
    pub(crate) fn largest_closure_error(&self, keep: f64) -> f64 {
        (0..MAX_ROWS).fold(0.0, |m, k| larger(m, self.closure_error(k, keep).abs()))
    }
}

const _: () = assert!(MAX_ROWS == BLOCK, "a joint's rows fill one block");

/// Every joint's block, and the versions of the rows and poses their parts were made from
/// (see [`super::super::stamp`]).
#[derive(Clone, Debug)]
pub(crate) struct JointRows {
    pub(crate) blocks: Vec<JointBlock>,
    /// The rows version every block's own factor was made from.
    pub(crate) factors_of: Stamp,
    /// The prediction every block's `geometry_pred` and `psi_pred` were evaluated at.
    pub(crate) psi_pred_at: Stamp,
    /// The prediction the bodies' poses are (the last step ended on it and its position pass
    /// did not move them), when every block's `geometry_pred` and `psi_pred` were evaluated
    /// there: the next step then starts from them instead of making them again.
    /// [`Stamp::NEVER`] otherwise.
    pub(crate) end_geometry_at: Stamp,
}

impl JointRows {
    /// Blocks for `n` joints.
    pub(crate) fn new(n: usize) -> Self {
        Self {
            blocks: vec![JointBlock::default(); n],
            factors_of: Stamp::NEVER,
            psi_pred_at: Stamp::NEVER,
            end_geometry_at: Stamp::NEVER,
        }
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

#[allow(clippy::needless_range_loop)]
impl Step<'_> {
    /// Stage 7's reactions: the accumulated impulses / h (Eq. 24–26) on the second body,
    /// world frame, with the moment taken about its anchor.
    pub(in crate::solver) fn compute_reactions(&mut self) {
        let h = self.ctx.h;
        for i in 0..self.joints.len() {
            let blk = &self.s.joint.blocks[i];
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
            self.s.reactions[i] = JointReaction {
                force_in_world: f,
                torque_in_world: t - arm2.cross(&f),
            };
        }
    }
}
