//! Kinematic loops: the joints that close loops in the scene's joint graph (see
//! [`super::from_model`]) as constraint rows on the spanning tree, solved with Lagrange
//! multipliers at the acceleration level.
//!
//! # Rows
//! A loop-closing joint has the default method's rows and the same ψ ([`Joint::psi`]: point,
//! slide, angular and lock rows; see [`crate::model::joint`]), so the loop ‖ψ‖ reported in the
//! diagnostics is the default method's constraint norm over the loop-closing joints. Each
//! row's rate is linear in the world spatial velocities of its two bodies,
//! ψ̇ = w₁·v₁ + w₂·v₂, and its second derivative is ψ̈ = w₁·a₁ + w₂·a₂ + κ with κ the
//! velocity-product part (point rows: p̈ = a_o + α×p + ω×ṗ; vectors fixed in a body:
//! ü = α×u + ω×(ω×u); lock rows to first order in ψ). With the tree's world motion columns
//! s_k, a body's acceleration is a = Σ_k s_k q̈_k + a⁰ (a⁰: its acceleration at q̈ = 0, no
//! gravity), so the rows are G q̈ + b = ψ̈ with G_rk = w·s_k and b = w·a⁰ + κ.
//!
//! # Solve
//! The operational-space form: with the tree's unconstrained q̈₀ (the articulated-body
//! algorithm, all forces and gravity) and M(q) from the composite-rigid-body method
//! ([`super::crba`]),
//!
//! ```text
//! q̈ = q̈₀ + M⁻¹Gᵀλ,   (G M⁻¹ Gᵀ) λ = ψ̈* − b − G q̈₀.
//! ```
//!
//! It keeps the O(n) tree algorithm for the forces and needs only M's Cholesky factor and an
//! m × m system (m loop rows), where the dense [M Gᵀ; G 0] would be (n + m)² and indefinite.
//! Loops make G M⁻¹ Gᵀ singular whenever rows repeat what the tree or other rows already
//! impose (a planar mechanism's out-of-plane rows, the cross lift's two sides tied by rods,
//! the toy steam engine's 15 rows): λ is the SVD pseudo-inverse solution, singular values
//! below [`RANK_TOLERANCE`] × the largest treated as zero, as in the source paper (Numerical
//! Recipes' SVD). Rows that ask for an acceleration no λ gives fail loudly
//! ([`ArticulatedError::LoopSolve`]).
//!
//! # Drift
//! The integrators keep ψ̈ = ψ̈* only up to their error, so ψ and ψ̇ drift. The source paper
//! puts a spring and a damper on the loop errors; here they act as the target acceleration
//! ψ̈* = −ω² ψ − 2ω ψ̇ (Baumgarte's stabilisation, the spring-damper with gains per unit
//! mass): every loop row then returns to zero with the same critically damped time 1/ω,
//! whatever the masses behind it, and no row oscillates. The gain is kept soft, ω = 1/(20 h)
//! (5 /s at the rig's 10 ms): the Runge–Kutta stages lie off the loop manifold by O(h²), where
//! the correction pulls with ω², so a stiff gain feeds the integrator's own error (measured on
//! the steam engine with RK4 at 10 ms over 60 s: max ‖ψ‖ 4.7e-7 m at ω = 1/(20h), 1.8e-6 m
//! at 1/(4h), 6.6e-6 m at 1/(2h)). After each step the
//! largest |ψ| row is checked against [`DRIFT_BOUND_M`]; past it the step fails with the
//! time and the joint ([`ArticulatedError::LoopDrift`]).
//!
//! At the start, the scene's pose is closed by Gauss–Newton (q ← q − G⁺ψ) and the initial
//! velocities are projected onto G q̇ = 0.

use nalgebra::{DMatrix, DVector, Rotation3, UnitQuaternion, Vector3};

use super::aba::Workspace;
use super::crba::MassMatrix;
use super::error::ArticulatedError;
use super::from_model::BodyMap;
use super::spatial::{Force, Motion};
use super::tree::Tree;
use crate::model::body::Pose;
use crate::model::joint::{Joint, JointKind};
use crate::{BodyId, Model};

/// Singular values of G M⁻¹ Gᵀ (and of G in the initial closing) below this fraction of the
/// largest are treated as zero: redundant rows.
pub const RANK_TOLERANCE: f64 = 1e-9;

/// The largest loop |ψ| row (m, or rad for angular rows) a step may leave; the drift
/// correction keeps loops orders of magnitude below it with RK4 or RK45 at the rig's step.
pub const DRIFT_BOUND_M: f64 = 1e-3;

/// Newton iterations allowed to close the loops at the initial pose.
const ASSEMBLY_ITERATIONS: usize = 50;

/// Largest |ψ| row accepted as closed at the initial pose (m).
const ASSEMBLY_TOLERANCE_M: f64 = 1e-13;

/// A body's world kinematics as the loop rows need it.
#[derive(Clone, Copy, Debug)]
struct BodyKin {
    pose: Pose,
    /// Spatial velocity (world, about the world origin).
    v: Motion,
    /// Spatial acceleration at q̈ = 0 without gravity (world).
    a0: Motion,
    link: Option<usize>,
}

/// The loop-closing joints of a tree, their rows and the scratch of their solve.
#[derive(Clone, Debug)]
pub struct Loops {
    joints: Vec<usize>,
    row_start: Vec<usize>,
    n_rows: usize,
    mass: MassMatrix,
    a0_link: Vec<Motion>,
    g: DMatrix<f64>,
    psi: DVector<f64>,
    psi_rate: DVector<f64>,
    bias: DVector<f64>,
    omega_per_s: f64,
}

impl Loops {
    /// The loops of `tree` closed by the model joints `loop_joints`, with the drift
    /// correction set for the step `dt_secs`.
    pub fn new(tree: &Tree, model: &Model, loop_joints: &[usize], dt_secs: f64) -> Self {
        let mut row_start = Vec::with_capacity(loop_joints.len());
        let mut n_rows = 0;
        for &ji in loop_joints {
            row_start.push(n_rows);
            n_rows += model.joints[ji].rows();
        }
        let nv = tree.nv();
        Self {
            joints: loop_joints.to_vec(),
            row_start,
            n_rows,
            mass: MassMatrix::new(tree),
            a0_link: vec![Motion::zero(); tree.links().len()],
            g: DMatrix::zeros(n_rows, nv),
            psi: DVector::zeros(n_rows),
            psi_rate: DVector::zeros(n_rows),
            bias: DVector::zeros(n_rows),
            omega_per_s: 0.05 / dt_secs,
        }
    }

    /// Whether there are no loops.
    pub fn is_empty(&self) -> bool {
        self.joints.is_empty()
    }

    /// Number of loop rows.
    pub fn rows(&self) -> usize {
        self.n_rows
    }

    /// The loop-closing joints (model joint indices).
    pub fn joints(&self) -> &[usize] {
        &self.joints
    }

    /// ‖ψ‖ (m) over all loop rows, as of the last evaluation.
    pub fn psi_norm_m(&self) -> f64 {
        self.psi.norm()
    }

    /// The loop-closing joint with the largest |ψ| row and that value, as of the last
    /// evaluation (`None` without loops).
    pub fn worst_joint<'m>(&self, model: &'m Model) -> Option<(&'m str, f64)> {
        let mut worst: Option<(&str, f64)> = None;
        for (k, &ji) in self.joints.iter().enumerate() {
            let j = &model.joints[ji];
            let s = self.row_start[k];
            let e = self.psi.rows(s, j.rows()).amax();
            if worst.is_none_or(|(_, w)| e > w) {
                worst = Some((&j.name, e));
            }
        }
        worst
    }

    /// Fails if a loop row drifted past [`DRIFT_BOUND_M`] (as of the last evaluation).
    pub fn check_drift(&self, model: &Model, time_secs: f64) -> Result<(), ArticulatedError> {
        match self.worst_joint(model) {
            Some((joint, psi_m)) if psi_m > DRIFT_BOUND_M || psi_m.is_nan() => {
                Err(ArticulatedError::LoopDrift {
                    time_secs,
                    joint: joint.to_owned(),
                    psi_m,
                    bound_m: DRIFT_BOUND_M,
                })
            }
            _ => Ok(()),
        }
    }

    fn body_kin(&self, body: BodyId, ws: &Workspace, map: &BodyMap, model: &Model) -> BodyKin {
        match map.link_of_body[body] {
            Some(l) => {
                let x = ws.link_from_world(l);
                let (r, _) = ws.world_from_link(l);
                let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(r));
                BodyKin {
                    pose: Pose::new(ws.point_in_world(l, &map.com_in_link[l]), q),
                    v: x.inv_apply_motion(ws.link_velocity(l)),
                    a0: x.inv_apply_motion(&self.a0_link[l]),
                    link: Some(l),
                }
            }
            None => {
                let b = &model.bodies[body];
                BodyKin {
                    pose: Pose::new(b.position_in_world, b.world_from_body_rotation),
                    v: Motion::zero(),
                    a0: Motion::zero(),
                    link: None,
                }
            }
        }
    }

    /// ψ, ψ̇, G, b and the motion columns and M at the kinematics of `ws` (see the module
    /// docs).
    pub fn evaluate(&mut self, tree: &Tree, ws: &Workspace, map: &BodyMap, model: &Model) {
        if self.is_empty() {
            return;
        }
        self.mass.compute(tree, ws);
        for (i, l) in tree.links().iter().enumerate() {
            let carried = match l.parent {
                Some(p) => ws.link_from_parent(i).apply_motion(&self.a0_link[p]),
                None => Motion::zero(),
            };
            self.a0_link[i] = carried + *ws.velocity_product(i);
        }
        self.g.fill(0.0);
        for k in 0..self.joints.len() {
            let j = &model.joints[self.joints[k]];
            let b1 = self.body_kin(j.body1, ws, map, model);
            let b2 = self.body_kin(j.body2, ws, map, model);
            let psi = j.psi(&b1.pose, &b2.pose);
            let mut rows = [(Force::zero(), Force::zero(), 0.0); 6];
            let n = joint_rows(j, &b1, &b2, &mut rows);
            for (r, (w1, w2, kappa)) in rows.iter().enumerate().take(n) {
                let row = self.row_start[k] + r;
                self.psi[row] = psi[r];
                self.psi_rate[row] = b1.v.dot(w1) + b2.v.dot(w2);
                self.bias[row] = b1.a0.dot(w1) + b2.a0.dot(w2) + kappa;
                for (b, w) in [(&b1, w1), (&b2, w2)] {
                    if let Some(l) = b.link {
                        for &dof in self.mass.chain_dofs(l) {
                            self.g[(row, dof)] += self.mass.motion_column(dof).dot(w);
                        }
                    }
                }
            }
        }
    }

    /// The joint with the largest |value| among the rows `values` (for messages).
    fn joint_of_largest(&self, model: &Model, values: &DVector<f64>) -> String {
        let row = values.iamax();
        let k = self.row_start.partition_point(|&s| s <= row) - 1;
        model.joints[self.joints[k]].name.clone()
    }

    /// q̈ ← q̈₀ + M⁻¹Gᵀλ (see the module docs), at the last [`Self::evaluate`]; `qdd` holds
    /// the tree's unconstrained accelerations q̈₀ on entry.
    pub fn constrain(
        &mut self,
        time_secs: f64,
        model: &Model,
        qdd: &mut [f64],
    ) -> Result<(), ArticulatedError> {
        if self.is_empty() {
            return Ok(());
        }
        let fail = |reason: String| ArticulatedError::LoopSolve { time_secs, reason };
        let chol = self
            .mass
            .matrix()
            .clone()
            .cholesky()
            .ok_or_else(|| fail("the tree's mass matrix is not positive definite".into()))?;
        let m_inv_gt = chol.solve(&self.g.transpose());
        let a = &self.g * &m_inv_gt;
        let qdd0 = DVector::from_column_slice(qdd);
        let w = self.omega_per_s;
        let target = -(&self.psi * (w * w)) - &self.psi_rate * (2.0 * w);
        let rhs = target - &self.bias - &self.g * &qdd0;
        let lambda = pseudo_solve(a.clone(), &rhs)
            .ok_or_else(|| fail("the SVD of G M⁻¹ Gᵀ did not converge".into()))?;
        let residual = &a * &lambda - &rhs;
        let off = residual.amax();
        if off > 1e-6 * rhs.amax().max(1.0) || off.is_nan() {
            return Err(fail(format!(
                "the rows of loop joint `{}` ask for an acceleration the mechanism cannot \
                 have (residual {:.3e} m/s²)",
                self.joint_of_largest(model, &residual),
                off
            )));
        }
        let qdd_new = qdd0 + m_inv_gt * lambda;
        qdd.copy_from_slice(qdd_new.as_slice());
        Ok(())
    }

    /// Closes the loops at the pose `q` by Gauss–Newton and projects `qd` onto G q̇ = 0 (see
    /// the module docs). `ws` is left at the closed state.
    pub fn assemble(
        &mut self,
        tree: &Tree,
        ws: &mut Workspace,
        map: &BodyMap,
        model: &Model,
        q: &mut [f64],
        qd: &mut [f64],
    ) -> Result<(), ArticulatedError> {
        if self.is_empty() {
            return Ok(());
        }
        let mut iterations = 0;
        loop {
            ws.kinematics(tree, q, qd);
            self.evaluate(tree, ws, map, model);
            let worst = self.psi.amax();
            if worst <= ASSEMBLY_TOLERANCE_M {
                break;
            }
            if iterations == ASSEMBLY_ITERATIONS || !worst.is_finite() {
                return Err(ArticulatedError::LoopAssembly {
                    joint: self.joint_of_largest(model, &self.psi),
                    psi_m: worst,
                    iterations,
                });
            }
            let step = pseudo_solve(self.g.clone(), &self.psi).ok_or_else(|| {
                ArticulatedError::LoopAssembly {
                    joint: self.joint_of_largest(model, &self.psi),
                    psi_m: worst,
                    iterations,
                }
            })?;
            tree.advance_q(q, (-step).as_slice(), 1.0);
            tree.normalise_q(q);
            iterations += 1;
        }
        let v = DVector::from_column_slice(qd);
        let correction = pseudo_solve(self.g.clone(), &(&self.g * &v)).ok_or_else(|| {
            ArticulatedError::LoopAssembly {
                joint: self.joint_of_largest(model, &self.psi_rate),
                psi_m: self.psi.amax(),
                iterations,
            }
        })?;
        qd.copy_from_slice((v - correction).as_slice());
        ws.kinematics(tree, q, qd);
        self.evaluate(tree, ws, map, model);
        Ok(())
    }
}

/// The least-squares, least-norm solution x of `a` x = `b` by SVD, singular values below
/// [`RANK_TOLERANCE`] × the largest dropped; `None` if the SVD does not converge.
fn pseudo_solve(a: DMatrix<f64>, b: &DVector<f64>) -> Option<DVector<f64>> {
    let svd = nalgebra::linalg::SVD::try_new(a, true, true, f64::EPSILON, 0)?;
    let largest = svd.singular_values.amax();
    svd.solve(b, RANK_TOLERANCE * largest).ok()
}

/// The rows of joint `j` between bodies `b1`, `b2` in the order of [`Joint::psi`]: for each,
/// (w₁, w₂, κ) with ψ̇ = w₁·v₁ + w₂·v₂ and ψ̈ = w₁·a₁ + w₂·a₂ + κ (world spatial vectors).
/// Returns the number of rows.
fn joint_rows(j: &Joint, b1: &BodyKin, b2: &BodyKin, out: &mut [(Force, Force, f64); 6]) -> usize {
    let (r1, r2) = (&b1.pose.r, &b2.pose.r);
    let (w1, w2) = (b1.v.ang, b2.v.ang);
    let p1 = b1.pose.x + r1 * j.anchor1_in_body1;
    let p2 = b2.pose.x + r2 * j.anchor2_in_body2;
    let p1_rate = b1.v.lin + w1.cross(&p1);
    let p2_rate = b2.v.lin + w2.cross(&p2);
    let mut n = 0;
    match j.kind {
        JointKind::Ball | JointKind::Hinge | JointKind::Fixed => {
            // ψ = p₁ − p₂.
            for k in 0..3 {
                let e = Vector3::ith(k, 1.0);
                let kappa = e.dot(&(w1.cross(&p1_rate) - w2.cross(&p2_rate)));
                out[n] = (
                    Force::new(p1.cross(&e), e),
                    Force::new(-p2.cross(&e), -e),
                    kappa,
                );
                n += 1;
            }
        }
        JointKind::Prismatic | JointKind::Slot => {
            // ψ = (p₂ − p₁)·b, b turning with body 1.
            let d = p2 - p1;
            let d_rate = p2_rate - p1_rate;
            for b_in_body in j.slide_perp_in_body1() {
                let b = r1 * b_in_body;
                let b_rate = w1.cross(&b);
                let kappa = b.dot(&(w2.cross(&p2_rate) - w1.cross(&p1_rate)))
                    + 2.0 * d_rate.dot(&b_rate)
                    + d.dot(&w1.cross(&b_rate));
                out[n] = (
                    Force::new(b.cross(&d) - p1.cross(&b), -b),
                    Force::new(p2.cross(&b), b),
                    kappa,
                );
                n += 1;
            }
        }
    }
    match j.kind {
        JointKind::Hinge | JointKind::Slot => {
            // ψ = a·u, a turning with body 1, u with body 2.
            let a = r1 * j.hinge_axis_in_body1();
            let a_rate = w1.cross(&a);
            for u_in_body in j.hinge_perp_in_body2() {
                let u = r2 * u_in_body;
                let u_rate = w2.cross(&u);
                let c = a.cross(&u);
                let kappa = w1.cross(&a_rate).dot(&u)
                    + 2.0 * a_rate.dot(&u_rate)
                    + a.dot(&w2.cross(&u_rate));
                out[n] = (
                    Force::new(c, Vector3::zeros()),
                    Force::new(-c, Vector3::zeros()),
                    kappa,
                );
                n += 1;
            }
        }
        JointKind::Prismatic | JointKind::Fixed => {
            // ψ = 2 vec(q₁ q₀ q₂⁻¹): ψ̇ = ω₁ − ω₂ and κ = ω₂ × ω₁ at ψ = 0.
            let kappa = w2.cross(&w1);
            for k in 0..3 {
                let e = Vector3::ith(k, 1.0);
                out[n] = (
                    Force::new(e, Vector3::zeros()),
                    Force::new(-e, Vector3::zeros()),
                    kappa[k],
                );
                n += 1;
            }
        }
        JointKind::Ball => {}
    }
    n
}

#[cfg(test)]
#[path = "loops_tests.rs"]
mod tests;
