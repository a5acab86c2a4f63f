//! The paper's sequential impulses (Eq. 17–23): Gauss–Seidel sweeps over the elements of one
//! linearisation, each joint solving its own block, over-relaxed by `relaxation`.

use super::Step;

impl Step<'_> {
    /// One Gauss–Seidel sweep over all elements of the current linearisation (backward on
    /// even sweeps when symmetric); returns the largest midpoint-velocity error found.
    pub(super) fn sweep(&mut self, iteration: usize) -> f64 {
        self.ensure_joint_factors();
        let mut residual = 0.0_f64;
        let nj = self.joints.len();
        if self.ctx.symmetric_sweeps && iteration.is_multiple_of(2) {
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
}
