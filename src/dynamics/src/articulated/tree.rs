//! A kinematic tree: links in topological order (each parent before its children), each with
//! the joint to its parent, the fixed transform to that joint, and its spatial inertia; the
//! layout of the coordinate vectors q (positions) and q̇ (velocities).

use nalgebra::Vector3;

use super::error::ArticulatedError;
use super::joint::JointType;
use super::spatial::{RigidInertia, Transform};

/// One link (a rigid body) of a [`Tree`] and its joint to the parent.
#[derive(Clone, Debug)]
pub struct Link {
    /// Name (the scene body's name when built from a scene).
    pub name: String,
    /// Parent link, `None` for a link jointed to the fixed ground (world frame).
    pub parent: Option<usize>,
    /// The joint from the parent (its predecessor frame) to this link's frame.
    pub joint: JointType,
    /// X_T = F_p_X_parent: the joint's predecessor frame from the parent link's frame (or the
    /// world frame).
    pub parent_to_joint: Transform,
    /// The link's spatial inertia in its own frame (the joint's successor frame).
    pub inertia: RigidInertia,
    /// Index of the joint's first coordinate in q.
    pub q_offset: usize,
    /// Index of the joint's first velocity in q̇.
    pub v_offset: usize,
}

/// A tree of links under uniform gravity.
#[derive(Clone, Debug)]
pub struct Tree {
    links: Vec<Link>,
    nq: usize,
    nv: usize,
    /// Gravity (m/s², world).
    pub gravity_in_world: Vector3<f64>,
}

impl Tree {
    /// An empty tree.
    pub fn new(gravity_in_world: Vector3<f64>) -> Self {
        Self {
            links: Vec::new(),
            nq: 0,
            nv: 0,
            gravity_in_world,
        }
    }

    /// Appends a link; its parent must already be in the tree. Returns the link's index.
    pub fn add_link(
        &mut self,
        name: impl Into<String>,
        parent: Option<usize>,
        joint: JointType,
        parent_to_joint: Transform,
        inertia: RigidInertia,
    ) -> Result<usize, ArticulatedError> {
        let name = name.into();
        if let Some(p) = parent {
            if p >= self.links.len() {
                return Err(ArticulatedError::BadTree {
                    link: name,
                    reason: format!("its parent {p} is not in the tree yet"),
                });
            }
        }
        if inertia.mass.is_nan() || inertia.mass <= 0.0 {
            return Err(ArticulatedError::BadTree {
                link: name,
                reason: "its mass must be positive".to_owned(),
            });
        }
        self.links.push(Link {
            name,
            parent,
            joint,
            parent_to_joint,
            inertia,
            q_offset: self.nq,
            v_offset: self.nv,
        });
        self.nq += joint.nq();
        self.nv += joint.nv();
        Ok(self.links.len() - 1)
    }

    /// The links in topological order.
    #[inline]
    pub fn links(&self) -> &[Link] {
        &self.links
    }

    /// Number of position coordinates.
    #[inline]
    pub fn nq(&self) -> usize {
        self.nq
    }

    /// Number of velocity coordinates (degrees of freedom).
    #[inline]
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// The neutral configuration q₀ (every joint at its neutral coordinates).
    pub fn neutral_q(&self) -> Vec<f64> {
        let mut q = vec![0.0; self.nq];
        for l in &self.links {
            l.joint
                .neutral_q(&mut q[l.q_offset..l.q_offset + l.joint.nq()]);
        }
        q
    }

    /// Renormalises the quaternions in q.
    #[inline]
    pub fn normalise_q(&self, q: &mut [f64]) {
        for l in &self.links {
            l.joint
                .normalise_q(&mut q[l.q_offset..l.q_offset + l.joint.nq()]);
        }
    }

    /// q̇ (nq values) from the velocities `qd` (nv) at `q`.
    #[inline]
    pub fn q_rate(&self, q: &[f64], qd: &[f64], out: &mut [f64]) {
        for l in &self.links {
            let (iq, iv) = (l.q_offset, l.v_offset);
            let (nq, nv) = (l.joint.nq(), l.joint.nv());
            l.joint
                .q_rate(&q[iq..iq + nq], &qd[iv..iv + nv], &mut out[iq..iq + nq]);
        }
    }

    /// q ← q advanced by the velocities `qd` over `h` (exact rotations for quaternions).
    #[inline]
    pub fn advance_q(&self, q: &mut [f64], qd: &[f64], h: f64) {
        for l in &self.links {
            let (iq, iv) = (l.q_offset, l.v_offset);
            let (nq, nv) = (l.joint.nq(), l.joint.nv());
            l.joint.advance_q(&mut q[iq..iq + nq], &qd[iv..iv + nv], h);
        }
    }
}
