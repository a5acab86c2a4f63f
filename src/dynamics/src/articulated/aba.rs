//! The articulated-body algorithm (Featherstone, RBDA Table 7.1; the structurally recursive
//! forward dynamics of Brandl, Johanni and Otter): joint accelerations q̈ from q, q̇, joint
//! forces τ, external forces and gravity in O(n).
//!
//! Three passes over the links:
//! 1. forward ([`Workspace::kinematics`]): joint transforms, link velocities
//!    v_i = X_i v_λ + v_J, velocity-product accelerations c_i = c_J + v_i × v_J, momenta
//!    I_i v_i, and each link's pose in the world;
//! 2. backward ([`Workspace::accelerations`]): articulated inertias and bias forces
//!    I^A_i = I_i + Σ X*(I^A_c − U D⁻¹ Uᵀ) X, p^A_i = v × * I v − f_ext + Σ X*(p^a_c), with
//!    U = I^A S, D = Sᵀ U, u = τ − Sᵀ p^A;
//! 3. forward: a_i = X_i a_λ + c_i, q̈_i = D⁻¹ (u − Uᵀ a_i), a_i += S q̈_i, starting from
//!    a_0 = −g (gravity as an acceleration of the base).
//!
//! The [`Workspace`] holds all scratch memory, sized once for a tree: a step allocates
//! nothing. Pass 1 is separate so that force elements that depend on the poses and velocities
//! (springs, the stylus) can be evaluated between the passes.

mod about_axis;

use nalgebra::{Matrix3, Vector3};

use super::error::ArticulatedError;
use super::joint::{axis_angle_matrix, invert_spd, JointCalc, JointType, MAX_DOF};
use super::spatial::{ArticulatedInertia, Force, Motion, Transform};
use super::tree::{Link, Tree};
use crate::linalg::block::spd_inverse3;

/// Scratch memory and per-link results of the algorithm for one tree.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// Each link's rigid inertia as an articulated inertia (the start of pass 2).
    rigid: Vec<ArticulatedInertia>,
    /// Whether X_T of the link is a pure translation (then X_J X_T needs no matrix product).
    xt_translation_only: Vec<bool>,
    /// The coordinate axis k when the link's X_up = X_J X_T rotates about it (a revolute
    /// joint about ±e_k and X_T a translation): the passes take the written-out forms of
    /// [`about_axis`] there.
    rotation_axis: Vec<Option<usize>>,
    /// The coordinate axis M when X_T's translation is ρ e_M (links along a frame axis): pass
    /// 2 of [`about_axis`] then moves I^a to the parent with the two-entry r× of
    /// `inertia::add_shifted_along`.
    offset_axis: Vec<Option<usize>>,
    /// Each link's motion subspace S (its first nv columns): constant for revolute joints,
    /// whose pass 1 is written out, and set by [`JointType::calc`] for the others.
    s: Vec<[Motion; MAX_DOF]>,
    x_up: Vec<Transform>,
    x_base: Vec<Transform>,
    v: Vec<Motion>,
    /// Each link's momentum I v (its frame): pass 2's bias force and the kinetic energy
    /// both need it at the same state.
    h: Vec<Force>,
    c: Vec<Motion>,
    ia: Vec<ArticulatedInertia>,
    pa: Vec<Force>,
    u_cols: Vec<[Force; MAX_DOF]>,
    dinv: Vec<[[f64; MAX_DOF]; MAX_DOF]>,
    u: Vec<[f64; MAX_DOF]>,
    a: Vec<Motion>,
}

impl Workspace {
    /// Scratch for `tree`.
    pub fn new(tree: &Tree) -> Self {
        let n = tree.links().len();
        Self {
            rigid: tree
                .links()
                .iter()
                .map(|l| l.inertia.to_articulated())
                .collect(),
            xt_translation_only: tree
                .links()
                .iter()
                .map(|l| l.parent_to_joint.rot == Matrix3::identity())
                .collect(),
            rotation_axis: tree.links().iter().map(rotation_axis).collect(),
            offset_axis: tree
                .links()
                .iter()
                .map(|l| coordinate_axis_of(&l.parent_to_joint.trans))
                .collect(),
            s: tree.links().iter().map(constant_subspace).collect(),
            x_up: vec![Transform::identity(); n],
            x_base: vec![Transform::identity(); n],
            v: vec![Motion::zero(); n],
            h: vec![Force::zero(); n],
            c: vec![Motion::zero(); n],
            ia: vec![ArticulatedInertia::zero(); n],
            pa: vec![Force::zero(); n],
            u_cols: vec![[Force::zero(); MAX_DOF]; n],
            dinv: vec![[[0.0; MAX_DOF]; MAX_DOF]; n],
            u: vec![[0.0; MAX_DOF]; n],
            a: vec![Motion::zero(); n],
        }
    }

    /// Pass 1: joint transforms, link velocities, velocity-product terms and world poses at
    /// (q, q̇).
    pub fn kinematics(&mut self, tree: &Tree, q: &[f64], qd: &[f64]) {
        self.pass1(tree, q, qd, true);
    }

    /// Pass 1 without the world poses: all that [`Self::accelerations`] needs when no
    /// external force acts (the intermediate stages of a Runge–Kutta step). The world poses
    /// ([`Self::link_from_world`] and what derives from it) stay those of the last
    /// [`Self::kinematics`].
    pub fn kinematics_without_poses(&mut self, tree: &Tree, q: &[f64], qd: &[f64]) {
        self.pass1(tree, q, qd, false);
    }

    #[inline]
    fn pass1(&mut self, tree: &Tree, q: &[f64], qd: &[f64], world_poses: bool) {
        for (i, l) in tree.links().iter().enumerate() {
            let (iq, iv) = (l.q_offset, l.v_offset);
            match (l.joint, self.rotation_axis[i]) {
                (JointType::Revolute { axis }, Some(k)) => {
                    let (sign, q, qd) = (axis[k], q[iq], qd[iv]);
                    match k {
                        0 => {
                            self.revolute_about_axis_kinematics::<0>(i, l, sign, q, qd, world_poses)
                        }
                        1 => {
                            self.revolute_about_axis_kinematics::<1>(i, l, sign, q, qd, world_poses)
                        }
                        _ => {
                            self.revolute_about_axis_kinematics::<2>(i, l, sign, q, qd, world_poses)
                        }
                    }
                }
                _ => self.joint_kinematics(i, l, q, qd, world_poses),
            }
        }
    }

    /// Pass 1 at link `i` for any joint (q, q̇ the whole tree's).
    #[inline]
    fn joint_kinematics(&mut self, i: usize, l: &Link, q: &[f64], qd: &[f64], world_poses: bool) {
        let (iq, iv) = (l.q_offset, l.v_offset);
        let x_t = &l.parent_to_joint;
        let (x_up, v_j, c_j) = if let JointType::Revolute { axis } = l.joint {
            // X_J is a rotation only, S = (axis, 0) (set once), c_J = 0.
            let e_j = axis_angle_matrix(&axis, -q[iq]);
            let rot = if self.xt_translation_only[i] {
                e_j
            } else {
                e_j * x_t.rot
            };
            let x_up = Transform {
                rot,
                trans: x_t.trans,
            };
            (
                x_up,
                Motion::new(axis * qd[iv], Vector3::zeros()),
                Motion::zero(),
            )
        } else {
            let (nq, nv) = (l.joint.nq(), l.joint.nv());
            let mut jc = JointCalc::default();
            l.joint.calc(&q[iq..iq + nq], &qd[iv..iv + nv], &mut jc);
            self.s[i][..nv].copy_from_slice(&jc.s[..nv]);
            let x_up = if self.xt_translation_only[i] {
                // X_J X_T with E_T = 1: no matrix product.
                Transform {
                    rot: jc.x_j.rot,
                    trans: x_t.trans + jc.x_j.trans,
                }
            } else {
                jc.x_j.compose(x_t)
            };
            (x_up, jc.v_j, jc.c_j)
        };
        let v = match l.parent {
            Some(p) => x_up.apply_motion(&self.v[p]) + v_j,
            None => v_j,
        };
        if world_poses {
            self.x_base[i] = match l.parent {
                Some(p) => x_up.compose(&self.x_base[p]),
                None => x_up,
            };
        }
        self.c[i] = c_j + v.cross_motion(&v_j);
        self.h[i] = l.inertia.mul_motion(&v);
        self.v[i] = v;
        self.x_up[i] = x_up;
    }

    /// Passes 2 and 3: the joint accelerations `qdd` (nv) for joint forces `tau` (nv) and
    /// external spatial forces `f_ext_world` (one per link, world coordinates, moments about
    /// the world origin; an empty slice for none), at the state of the last
    /// [`Self::kinematics`].
    ///
    /// Its parts are `#[inline(always)]`: as calls (a call per link for `backward_at`, one
    /// per solve for `backward`) they made the RK4 steps of the ten pendula and the steam
    /// engine take up to 1.3 % more instructions (callgrind).
    pub fn accelerations(
        &mut self,
        tree: &Tree,
        tau: &[f64],
        f_ext_world: &[Force],
        qdd: &mut [f64],
    ) -> Result<(), ArticulatedError> {
        self.start_backward(tree.links().len(), f_ext_world);
        self.backward(tree, tau)?;
        self.forward(tree, qdd);
        Ok(())
    }

    /// Pass 2's start: each link's I^A = I and p^A = v × * I v − f_ext (its frame).
    #[inline(always)]
    fn start_backward(&mut self, n: usize, f_ext_world: &[Force]) {
        // Slices of the link count: their indices by i < n need no bounds checks.
        let (ia, rigid, pa) = (&mut self.ia[..n], &self.rigid[..n], &mut self.pa[..n]);
        let (v, h, x_base) = (&self.v[..n], &self.h[..n], &self.x_base[..n]);
        for i in 0..n {
            // Block by block: a whole-struct copy is a call to memcpy per link.
            ia[i].ang_ang = rigid[i].ang_ang;
            ia[i].ang_lin = rigid[i].ang_lin;
            ia[i].lin_lin = rigid[i].lin_lin;
            let mut p = v[i].cross_force(&h[i]);
            if let Some(f) = f_ext_world.get(i) {
                p -= x_base[i].apply_force(f);
            }
            pa[i] = p;
        }
    }

    /// Pass 2, leaves first: each link turns its I^A, p^A into I^a = I^A − U D⁻¹ Uᵀ and
    /// p^A + U D⁻¹ u in place (I^A and p^A are not needed after) and hands them to its
    /// parent; a root keeps only U, D⁻¹ and u, which pass 3 needs.
    #[inline(always)]
    fn backward(&mut self, tree: &Tree, tau: &[f64]) -> Result<(), ArticulatedError> {
        for (i, l) in tree.links().iter().enumerate().rev() {
            if self.backward_at(i, l, tau).is_none() {
                return Err(ArticulatedError::SingularJoint {
                    link: l.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Pass 2 at link `i` by its joint's kind; `None` if its D is not positive definite.
    #[inline(always)]
    fn backward_at(&mut self, i: usize, l: &Link, tau: &[f64]) -> Option<()> {
        let has_parent = l.parent.is_some();
        let iv = l.v_offset;
        match (l.joint, self.rotation_axis[i]) {
            // These hand their I^a and p^a to the parent themselves.
            (JointType::Revolute { axis }, Some(k)) => {
                let (sign, tau) = (axis[k], tau[iv]);
                match k {
                    0 => self.revolute_about_axis_backward::<0>(i, sign, tau, l.parent),
                    1 => self.revolute_about_axis_backward::<1>(i, sign, tau, l.parent),
                    _ => self.revolute_about_axis_backward::<2>(i, sign, tau, l.parent),
                }
            }
            (JointType::Revolute { axis }, None) => self
                .revolute_backward(i, &axis, tau[iv], has_parent)
                .map(|()| self.pass_to_parent(i, l.parent)),
            (JointType::Spherical, _) => self
                .spherical_backward(i, &tau[iv..iv + 3], has_parent)
                .map(|()| self.pass_to_parent(i, l.parent)),
            (j, _) => self
                .general_backward(i, &tau[iv..iv + j.nv()], has_parent)
                .map(|()| self.pass_to_parent(i, l.parent)),
        }
    }

    /// Pass 3, roots first: a_i = X_i a_λ + c_i, q̈_i = D⁻¹ (u − Uᵀ a_i), a_i += S q̈_i,
    /// from a_0 = −g.
    #[inline(always)]
    fn forward(&mut self, tree: &Tree, qdd: &mut [f64]) {
        let links = tree.links();
        let n = links.len();
        let a_base = Motion::new(Vector3::zeros(), -tree.gravity_in_world);
        let (acc, x_up, c) = (&mut self.a[..n], &self.x_up[..n], &self.c[..n]);
        let (dinv, u, u_cols) = (&self.dinv[..n], &self.u[..n], &self.u_cols[..n]);
        let s = &self.s[..n];
        for (i, l) in links.iter().enumerate() {
            let a_parent = match l.parent {
                Some(p) => &acc[p],
                None => &a_base,
            };
            // A revolute joint about a link axis (the only joints with a rotation axis).
            let moved = match self.rotation_axis[i] {
                Some(0) => about_axis::apply_motion::<0>(&x_up[i], a_parent),
                Some(1) => about_axis::apply_motion::<1>(&x_up[i], a_parent),
                Some(_) => about_axis::apply_motion::<2>(&x_up[i], a_parent),
                None => x_up[i].apply_motion(a_parent),
            };
            let mut a = moved + c[i];
            let solved = Solved {
                dinv: &dinv[i],
                u: &u[i],
                u_cols: &u_cols[i],
            };
            solved.joint_acceleration(l, &s[i], &mut a, qdd);
            acc[i] = a;
        }
    }

    /// Pass 2 at a revolute joint about `axis`: S = (axis, 0), so U = (A axis, Bᵀ axis) and
    /// D = axisᵀ A axis are a column and a scalar. `None` if D is not positive.
    #[inline]
    fn revolute_backward(
        &mut self,
        i: usize,
        axis: &Vector3<f64>,
        tau: f64,
        has_parent: bool,
    ) -> Option<()> {
        let ia = &mut self.ia[i];
        let uk = Force::new(ia.ang_ang * axis, ia.ang_lin.tr_mul(axis));
        let (dd, axis_pa) = (axis.dot(&uk.ang), axis.dot(&self.pa[i].ang));
        if !(dd.is_finite() && dd > 0.0) {
            return None;
        }
        let dinv = 1.0 / dd;
        let uu = tau - axis_pa;
        self.u_cols[i][0] = uk;
        self.dinv[i][0][0] = dinv;
        self.u[i][0] = uu;
        if has_parent {
            ia.sub_outer_symmetric(&uk, dinv);
            self.pa[i] += uk * (dinv * uu);
        }
        Some(())
    }

    /// Pass 2 at a spherical joint: S = [1; 0], so U = [A; Bᵀ], D = A, and
    /// I^a = [0 0; 0 C − Bᵀ A⁻¹ B], U D⁻¹ u = (u, Bᵀ A⁻¹ u). `None` if A is not positive
    /// definite.
    #[inline]
    fn spherical_backward(&mut self, i: usize, tau: &[f64], has_parent: bool) -> Option<()> {
        let ia = &mut self.ia[i];
        let (a, b) = (ia.ang_ang, ia.ang_lin);
        for (k, uk) in self.u_cols[i].iter_mut().enumerate().take(3) {
            *uk = Force::new(a.column(k).into(), b.row(k).transpose());
        }
        // D = A is 3×3 symmetric positive definite (else the joint is singular).
        let a_inv = spd_inverse3(&a).filter(|m| m.iter().all(|x| x.is_finite()))?;
        let dinv = &mut self.dinv[i];
        for (r, row) in dinv.iter_mut().enumerate().take(3) {
            row[..3].copy_from_slice(a_inv.row(r).transpose().as_slice());
        }
        let u = Vector3::new(tau[0], tau[1], tau[2]) - self.pa[i].ang;
        self.u[i][..3].copy_from_slice(u.as_slice());
        if has_parent {
            let bt_ainv = b.tr_mul(&a_inv);
            let c = ia.lin_lin - bt_ainv * b;
            *ia = ArticulatedInertia {
                ang_ang: Matrix3::zeros(),
                ang_lin: Matrix3::zeros(),
                lin_lin: (c + c.transpose()) * 0.5,
            };
            self.pa[i] += Force::new(u, bt_ainv * u);
        }
        Some(())
    }

    /// Pass 2 at any other joint, with its columns of S: U = I^A S, D = Sᵀ U, u = τ − Sᵀ p^A.
    /// `None` if D is not positive definite.
    fn general_backward(&mut self, i: usize, tau: &[f64], has_parent: bool) -> Option<()> {
        let n = tau.len();
        let s = &self.s[i];
        let ia = &mut self.ia[i];
        let mut d = [[0.0; MAX_DOF]; MAX_DOF];
        let mut u = [0.0; MAX_DOF];
        for k in 0..n {
            let uk = ia.mul_motion(&s[k]);
            self.u_cols[i][k] = uk;
            u[k] = tau[k] - s[k].dot(&self.pa[i]);
            for (m, dm) in d[k].iter_mut().enumerate().take(n) {
                *dm = s[m].dot(&uk);
            }
        }
        invert_spd(&mut d, n)?;
        if has_parent {
            let cols = &self.u_cols[i];
            for (dk, uk) in d.iter().zip(cols).take(n) {
                let mut w = Force::zero();
                let mut du = 0.0;
                for m in 0..n {
                    w += cols[m] * dk[m];
                    du += dk[m] * u[m];
                }
                ia.sub_outer(uk, &w, 1.0);
                self.pa[i] += *uk * du;
            }
        }
        self.dinv[i] = d;
        self.u[i] = u;
        Some(())
    }

    /// Adds link `i`'s I^a and p^a + I^a c (from I^a and p^A + U D⁻¹ u in its slots) to
    /// its parent's, in the parent's frame (nothing for a root).
    #[inline]
    fn pass_to_parent(&mut self, i: usize, parent: Option<usize>) {
        let Some(parent) = parent else {
            return;
        };
        // A tree lists each parent before its children.
        let (before, from_i) = self.ia.split_at_mut(i);
        let ia = &from_i[0];
        let x = &self.x_up[i];
        let pa = self.pa[i] + ia.mul_motion(&self.c[i]);
        x.add_inertia_to_parent(ia, &mut before[parent]);
        self.pa[parent] += x.inv_apply_force(&pa);
    }

    /// S of link `i`'s joint (its nv motion columns) at the last [`Self::kinematics`].
    #[inline]
    pub fn motion_subspace(&self, i: usize, nv: usize) -> &[Motion] {
        &self.s[i][..nv]
    }

    /// `i_X_λ(i)`: link `i`'s frame from its parent's (or the world's, for a root) at the
    /// last [`Self::kinematics`].
    #[inline]
    pub fn link_from_parent(&self, i: usize) -> &Transform {
        &self.x_up[i]
    }

    /// c_i = c_J + v_i × v_J (link `i`'s coordinates): what link `i`'s acceleration gains
    /// over its parent's when every q̈ is zero, at the last [`Self::kinematics`].
    #[inline]
    pub fn velocity_product(&self, i: usize) -> &Motion {
        &self.c[i]
    }

    /// `link_X_world` of link `i` at the last [`Self::kinematics`].
    #[inline]
    pub fn link_from_world(&self, i: usize) -> &Transform {
        &self.x_base[i]
    }

    /// World pose of link `i`'s frame: (`world_R_link`, origin in the world).
    #[inline]
    pub fn world_from_link(&self, i: usize) -> (Matrix3<f64>, Vector3<f64>) {
        let x = &self.x_base[i];
        (x.rot.transpose(), x.trans)
    }

    /// Spatial velocity of link `i` in its own frame at the last [`Self::kinematics`].
    #[inline]
    pub fn link_velocity(&self, i: usize) -> &Motion {
        &self.v[i]
    }

    /// Momentum I v of link `i` in its own frame at the last [`Self::kinematics`].
    #[inline]
    pub fn link_momentum(&self, i: usize) -> &Force {
        &self.h[i]
    }

    /// Velocity (world axes) of a point given in link `i`'s frame.
    #[inline]
    pub fn point_velocity_in_world(&self, i: usize, point_in_link: &Vector3<f64>) -> Vector3<f64> {
        let v = &self.v[i];
        self.x_base[i]
            .rot
            .tr_mul(&(v.lin + v.ang.cross(point_in_link)))
    }

    /// A point given in link `i`'s frame, in the world.
    #[inline]
    pub fn point_in_world(&self, i: usize, point_in_link: &Vector3<f64>) -> Vector3<f64> {
        let x = &self.x_base[i];
        x.trans + x.rot.tr_mul(point_in_link)
    }
}

/// What pass 2 left at a link for pass 3: D⁻¹, u and the columns of U.
struct Solved<'a> {
    dinv: &'a [[f64; MAX_DOF]; MAX_DOF],
    u: &'a [f64; MAX_DOF],
    u_cols: &'a [Force; MAX_DOF],
}

impl Solved<'_> {
    /// Link `l`'s q̈ = D⁻¹ (u − Uᵀ a) into `qdd`, and a += S q̈ (`s` its motion subspace).
    #[inline]
    fn joint_acceleration(&self, l: &Link, s: &[Motion; MAX_DOF], a: &mut Motion, qdd: &mut [f64]) {
        let (dinv, u, u_cols) = (self.dinv, self.u, self.u_cols);
        let iv = l.v_offset;
        match l.joint {
            JointType::Revolute { axis } => {
                let x = dinv[0][0] * (u[0] - a.dot(&u_cols[0]));
                qdd[iv] = x;
                a.ang += axis * x;
            }
            // S = [1; 0]: q̈ is the angular part of a's increment.
            JointType::Spherical => {
                let rhs = Vector3::from_fn(|k, _| u[k] - a.dot(&u_cols[k]));
                let x = Matrix3::from_fn(|r, k| dinv[r][k]) * rhs;
                qdd[iv..iv + 3].copy_from_slice(x.as_slice());
                a.ang += x;
            }
            j => {
                let nv = j.nv();
                let mut rhs = [0.0; MAX_DOF];
                for (k, r) in rhs.iter_mut().enumerate().take(nv) {
                    *r = u[k] - a.dot(&u_cols[k]);
                }
                for k in 0..nv {
                    let x: f64 = (0..nv).map(|m| dinv[k][m] * rhs[m]).sum();
                    qdd[iv + k] = x;
                    *a += s[k] * x;
                }
            }
        }
    }
}

/// The rotation matrix of `angle` (rad) about the coordinate axis `k`: what
/// [`axis_angle_matrix`] gives for e_k, without its products.
#[inline]
fn coordinate_rotation(k: usize, angle: f64) -> Matrix3<f64> {
    // libm (a port of musl) rather than the platform's: the same bits on every machine.
    let (s, c) = libm::sincos(angle);
    match k {
        0 => Matrix3::new(1.0, 0.0, 0.0, 0.0, c, -s, 0.0, s, c),
        1 => Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c),
        _ => Matrix3::new(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0),
    }
}

/// S of a revolute joint (constant); zeros for the others, whose pass 1 sets it.
fn constant_subspace(link: &Link) -> [Motion; MAX_DOF] {
    let mut s = [Motion::zero(); MAX_DOF];
    if let JointType::Revolute { axis } = link.joint {
        s[0] = Motion::new(axis, Vector3::zeros());
    }
    s
}

/// The coordinate axis k if `link`'s joint is revolute about ±e_k and its X_T a translation.
fn rotation_axis(link: &Link) -> Option<usize> {
    let JointType::Revolute { axis } = link.joint else {
        return None;
    };
    if link.parent_to_joint.rot != Matrix3::identity() {
        return None;
    }
    (0..3).find(|&k| axis[k].abs() == 1.0 && axis.iter().filter(|&&x| x == 0.0).count() == 2)
}

/// The coordinate axis M if `r` = ρ e_M (its other two components exactly zero).
fn coordinate_axis_of(r: &Vector3<f64>) -> Option<usize> {
    (0..3).find(|&m| (0..3).all(|k| k == m || r[k] == 0.0))
}

/// A force `force_in_world` (N) acting at `point_in_world` (m) as a spatial force in world
/// coordinates about the world origin (what [`Workspace::accelerations`] takes).
#[inline]
pub fn point_force(point_in_world: &Vector3<f64>, force_in_world: &Vector3<f64>) -> Force {
    Force::new(point_in_world.cross(force_in_world), *force_in_world)
}
