//! The fictitious stylus spring (Eq. 10) as three soft rows between the clipped body point and
//! the moving tip: its arm, block factor, residual and Gauss–Seidel update.

use nalgebra::Vector3;

use super::joint::BLOCK_EPSILON;
use crate::linalg::block::{BlockMatrix, BlockVector, CholeskyBlock, MAX_ROWS};
use crate::model::body::BodyId;
use crate::solver::impulses::add_stylus_impulse;
use crate::solver::Step;

impl Step<'_> {
    pub(in crate::solver) fn prepare_stylus(&mut self) {
        let Some(s) = self.stylus else { return };
        let Some(t) = self.stylus_target else { return };
        let b = &self.bodies[s.body];
        let arm = b.world_from_body_rotation * s.point_in_body;
        self.s.stylus_block.arm = arm;
        self.s.stylus_block.e_start = (b.position_in_world + arm) - t.position_in_world.coords;
    }

    /// Factors I + ½h(½hk + c)·K of the stylus rows at the current arm.
    pub(in crate::solver) fn factor_stylus(&mut self) {
        let Some(s) = self.stylus else { return };
        let h = self.ctx.h;
        let inv_mass = self.bodies[s.body].inv_mass;
        let ii = self.s.body.inv_inertia[s.body];
        let blk = &mut self.s.stylus_block;
        let soft = s.step_compliance(h);
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
    pub(in crate::solver) fn update_stylus_arm(&mut self) {
        let Some(s) = self.stylus else { return };
        let (ps, pe) = (&self.s.body.start[s.body], &self.s.body.predicted[s.body]);
        self.s.stylus_block.arm = (ps.r * s.point_in_body + pe.r * s.point_in_body) * 0.5;
    }

    pub(in crate::solver) fn stylus_rate(
        &self,
        body: BodyId,
        arm: &Vector3<f64>,
        tip_velocity: &Vector3<f64>,
    ) -> Vector3<f64> {
        let b = &self.bodies[body];
        let v = (b.linear_velocity_in_world + self.s.body.v_start[body]) * 0.5;
        let w = (b.angular_velocity_in_world + self.s.body.w_start[body]) * 0.5;
        v + w.cross(arm) - tip_velocity
    }

    /// The stylus residual g(λ) of the current linearisation (impulse, N·s).
    pub(in crate::solver) fn stylus_residual_impulse(&self) -> Vector3<f64> {
        let (Some(s), Some(t)) = (self.stylus, self.stylus_target) else {
            return Vector3::zeros();
        };
        let h = self.ctx.h;
        let blk = &self.s.stylus_block;
        let b = &self.bodies[s.body];
        let u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        let e_lin = blk.e_lin + (u - blk.u_lin) * (0.5 * h);
        let rate = (blk.u_start + u) * 0.5 - t.velocity_in_world;
        blk.lambda
            + (blk.e_start + e_lin) * (0.5 * h * s.stiffness_n_per_m)
            + rate * (h * s.damping_n_s_per_m)
    }

    pub(in crate::solver) fn solve_stylus(&mut self) -> f64 {
        let (Some(s), Some(_)) = (self.stylus, self.stylus_target) else {
            return 0.0;
        };
        let blk = self.s.stylus_block;
        let b = &self.bodies[s.body];
        let u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        let g = self.stylus_residual_impulse();
        let mut delta: BlockVector = [-g.x, -g.y, -g.z, 0.0, 0.0, 0.0];
        blk.factor.solve_in_place(&mut delta);
        let delta = Vector3::new(delta[0], delta[1], delta[2]);
        self.s.stylus_block.lambda += delta;
        add_stylus_impulse(
            self.bodies,
            &mut self.s.body.torque,
            s.body,
            &blk.arm,
            &delta,
        );
        self.flush_torque(s.body);
        let b = &self.bodies[s.body];
        let new_u = b.linear_velocity_in_world + b.angular_velocity_in_world.cross(&blk.arm);
        0.5 * (new_u - u).amax()
    }
}

/// The stylus spring's three rows in the step.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StylusBlock {
    pub(crate) arm: Vector3<f64>,
    pub(crate) factor: CholeskyBlock,
    pub(crate) e_start: Vector3<f64>,
    /// Extension and point velocity at the linearisation, point velocity at the start.
    pub(crate) e_lin: Vector3<f64>,
    pub(crate) u_lin: Vector3<f64>,
    pub(crate) u_start: Vector3<f64>,
    pub(crate) lambda: Vector3<f64>,
}
