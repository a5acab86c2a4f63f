//! The right-hand side f(t, y) of the articulated method's state equation: the tree's
//! kinematics, the external forces of the scene (springs, force elements, one-step loads) and
//! their power, and the joint accelerations by the articulated-body algorithm, constrained
//! by the loop-closing joints (see [`super::loops`]).

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use super::aba::{point_force, Workspace};
use super::error::ArticulatedError;
use super::from_model::BodyMap;
use super::joint_forces::JointForces;
use super::loops::Loops;
use super::spatial::Force;
use super::tree::Tree;
use crate::{BodyId, ForceElement, Model, Spring};

/// Everything the right-hand side f(t, y) needs: the tree, its scratch and the force
/// elements.
#[derive(Clone, Debug)]
pub(super) struct Dynamics {
    pub(super) tree: Tree,
    pub(super) ws: Workspace,
    pub(super) map: BodyMap,
    pub(super) model: Model,
    /// Forces for the next step only: (link, point in the link frame, force in the world).
    pub(super) loads: Vec<(usize, Vector3<f64>, Vector3<f64>)>,
    pub(super) f_ext: Vec<Force>,
    pub(super) tau: Vec<f64>,
    /// The loop-closing joints and their solve.
    pub(super) loops: Loops,
    /// Joint limits and actuators (they write `tau`).
    pub(super) joint_forces: JointForces,
    /// Whether `ws` holds the kinematics of the system's current state y (set after each
    /// step's diagnostics; the next evaluation at y then skips pass 1).
    pub(super) kinematics_current: bool,
}

impl Dynamics {
    /// World pose (rotation, centre of mass) and velocities (of the centre of mass, angular)
    /// of a scene body at the last kinematics; fixed bodies keep the model's pose.
    pub(super) fn body_state(
        &self,
        body: BodyId,
    ) -> (
        UnitQuaternion<f64>,
        Vector3<f64>,
        Vector3<f64>,
        Vector3<f64>,
    ) {
        match self.map.link_of_body[body] {
            Some(l) => {
                let (r, _) = self.ws.world_from_link(l);
                let c = &self.map.com_in_link[l];
                let w = r * self.ws.link_velocity(l).ang;
                (
                    UnitQuaternion::from_matrix(&r),
                    self.ws.point_in_world(l, c),
                    self.ws.point_velocity_in_world(l, c),
                    w,
                )
            }
            None => {
                let b = &self.model.bodies[body];
                (
                    b.world_from_body_rotation,
                    b.position_in_world,
                    Vector3::zeros(),
                    Vector3::zeros(),
                )
            }
        }
    }

    /// World position and velocity of a point given in a body's frame.
    pub(super) fn body_point(
        &self,
        body: BodyId,
        p_in_body: &Vector3<f64>,
    ) -> (Vector3<f64>, Vector3<f64>) {
        match self.map.link_of_body[body] {
            Some(l) => {
                let p = p_in_body + self.map.com_in_link[l];
                (
                    self.ws.point_in_world(l, &p),
                    self.ws.point_velocity_in_world(l, &p),
                )
            }
            None => (
                self.model.bodies[body].point_in_world(p_in_body).coords,
                Vector3::zeros(),
            ),
        }
    }

    fn add_force(&mut self, body: BodyId, point: &Vector3<f64>, force: &Vector3<f64>) {
        if let Some(l) = self.map.link_of_body[body] {
            self.f_ext[l] += point_force(point, force);
        }
    }

    /// Kinematics at (q, q̇) and the external forces there into `f_ext`; returns (P_ext,
    /// P_diss) (W), or `None` when no force acts (`f_ext` then holds nothing of this
    /// evaluation and is not to be read).
    fn forces(&mut self, t: f64, q: &[f64], qd: &[f64]) -> Option<(f64, f64)> {
        let acting = self.has_external_forces();
        if !std::mem::take(&mut self.kinematics_current) {
            // The world poses serve the forces and the loop rows only.
            if acting || !self.loops.is_empty() {
                self.ws.kinematics(&self.tree, q, qd);
            } else {
                self.ws.kinematics_without_poses(&self.tree, q, qd);
            }
        }
        if !acting {
            return None;
        }
        self.f_ext.fill(Force::zero());
        let (mut p_ext, mut p_diss) = (0.0, 0.0);
        for si in 0..self.model.springs.len() {
            let s: &Spring = &self.model.springs[si];
            let (b1, b2) = (s.body1, s.body2);
            let (pt1, pt2) = (s.point1_in_body1, s.point2_in_body2);
            let (k, c, l0) = (s.stiffness_n_per_m, s.damping_n_s_per_m, s.rest_length_m);
            let (x1, v1) = self.body_point(b1, &pt1);
            let (x2, v2) = self.body_point(b2, &pt2);
            let d = x2 - x1;
            let len = d.norm();
            if len == 0.0 {
                continue;
            }
            let u = d / len;
            let rate = u.dot(&(v2 - v1));
            let f2 = -u * (k * (len - l0) + c * rate);
            p_diss += c * rate * rate;
            self.add_force(b2, &x2, &f2);
            self.add_force(b1, &x1, &-f2);
        }
        for ei in 0..self.model.force_elements.len() {
            let e: &ForceElement = &self.model.force_elements[ei];
            let body = e.body;
            let (rot, x, v, w) = self.body_state(body);
            let iso = Isometry3::from_parts(Translation3::from(x), rot);
            let (f, tau) = e.wrench_at(t, &iso);
            if let Some(l) = self.map.link_of_body[body] {
                self.f_ext[l] += point_force(&x, &f) + Force::new(tau, Vector3::zeros());
                p_ext += f.dot(&v) + tau.dot(&w);
            }
        }
        for li in 0..self.loads.len() {
            let (l, p, f) = self.loads[li];
            let x = self.ws.point_in_world(l, &p);
            let v = self.ws.point_velocity_in_world(l, &p);
            self.f_ext[l] += point_force(&x, &f);
            p_ext += f.dot(&v);
        }
        Some((p_ext, p_diss))
    }

    /// Whether any external force acts (else the ABA is given none).
    fn has_external_forces(&self) -> bool {
        !(self.model.springs.is_empty()
            && self.model.force_elements.is_empty()
            && self.loads.is_empty())
    }

    /// y' = f(t, y). With `kinematics_current` set, y must be the state whose kinematics `ws`
    /// holds (the first evaluation of a step). Without `position_rates` the q̇ part of `dy`
    /// is left as it was (semi-implicit Euler moves q by the new velocities itself).
    pub(super) fn derivative(
        &mut self,
        t: f64,
        y: &[f64],
        dy: &mut [f64],
        position_rates: bool,
    ) -> Result<(), ArticulatedError> {
        let (nq, nv) = (self.tree.nq(), self.tree.nv());
        let (q, qd) = (&y[..nq], &y[nq..nq + nv]);
        let acting = self.forces(t, q, qd);
        let (mut p_ext, mut p_diss) = acting.unwrap_or((0.0, 0.0));
        // Without external forces the ABA is given none, rather than a zero force per link
        // that it would transform into each link's frame.
        let f_ext: &[Force] = if acting.is_some() { &self.f_ext } else { &[] };
        let (p_joint, p_limit) = self.joint_forces.apply(t, q, qd, &mut self.tau);
        p_ext += p_joint;
        p_diss += p_limit;
        let (dq, rest) = dy.split_at_mut(nq);
        let (dqd, dw) = rest.split_at_mut(nv);
        if let Err(e) = self.ws.accelerations(&self.tree, &self.tau, f_ext, dqd) {
            // A NaN in the state shows first as a "singular" joint: name it for what it is.
            return Err(match first_non_finite_link(&self.tree, y) {
                Some(body) => ArticulatedError::NonFinite { time_secs: t, body },
                None => e,
            });
        }
        if !self.loops.is_empty() {
            self.loops
                .evaluate(&self.tree, &self.ws, &self.map, &self.model);
            self.loops.constrain(t, &self.model, dqd)?;
        }
        if position_rates {
            self.tree.q_rate(q, qd, dq);
        }
        dw[0] = p_ext;
        dw[1] = p_diss;
        Ok(())
    }
}

/// The name of the first link whose coordinates or velocities in `y` are not finite
/// ("(energy ledger)" if only the work integrals are).
pub(super) fn first_non_finite_link(tree: &Tree, y: &[f64]) -> Option<String> {
    let i = y.iter().position(|x| !x.is_finite())?;
    let nq = tree.nq();
    let link = tree.links().iter().find(|l| {
        let qi = l.q_offset..l.q_offset + l.joint.nq();
        let vi = nq + l.v_offset..nq + l.v_offset + l.joint.nv();
        qi.contains(&i) || vi.contains(&i)
    });
    Some(match link {
        Some(l) => l.name.clone(),
        None => "(energy ledger)".to_owned(),
    })
}
