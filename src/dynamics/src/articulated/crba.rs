//! The joint-space mass matrix M(q) by the composite-rigid-body method (Featherstone, RBDA
//! §6.2), for the loop solve of [`super::loops`]: there M⁻¹ is needed column by column
//! (M⁻¹ Gᵀ), which the articulated-body algorithm does not give.
//!
//! Everything is in world coordinates (Plücker, about the world origin): the motion columns
//! s_k of every degree of freedom, the links' inertias and the composite inertias
//! I^c_i = Σ_{j ∈ subtree(i)} I_j. In one frame the composite sum needs no transforms, and
//! M_kl = s_kᵀ I^c_i s_l for a degree of freedom k of link i and l of i or of an ancestor of
//! i (zero otherwise). The test reference (`reference`, tests only) works in link frames
//! instead and is written separately.
//!
//! The ancestor lists and all scratch are sized once, in [`MassMatrix::new`].

use nalgebra::DMatrix;

use super::aba::Workspace;
use super::spatial::{ArticulatedInertia, Motion};
use super::tree::Tree;

/// M(q) and the world motion columns of a tree, with their scratch.
#[derive(Clone, Debug)]
pub struct MassMatrix {
    /// Degrees of freedom of each link and of its ancestors (q̇ indices).
    chain_dofs: Vec<Vec<usize>>,
    s_world: Vec<Motion>,
    composite: Vec<ArticulatedInertia>,
    m: DMatrix<f64>,
}

impl MassMatrix {
    /// Scratch for `tree`.
    pub fn new(tree: &Tree) -> Self {
        let links = tree.links();
        let mut chain_dofs: Vec<Vec<usize>> = Vec::with_capacity(links.len());
        for l in links {
            let mut dofs = match l.parent {
                Some(p) => chain_dofs[p].clone(),
                None => Vec::new(),
            };
            dofs.extend(l.v_offset..l.v_offset + l.joint.nv());
            chain_dofs.push(dofs);
        }
        Self {
            chain_dofs,
            s_world: vec![Motion::zero(); tree.nv()],
            composite: vec![ArticulatedInertia::zero(); links.len()],
            m: DMatrix::zeros(tree.nv(), tree.nv()),
        }
    }

    /// The degrees of freedom that move link `i`: its own and its ancestors' (q̇ indices).
    pub fn chain_dofs(&self, i: usize) -> &[usize] {
        &self.chain_dofs[i]
    }

    /// The world motion column s_k of degree of freedom k (Plücker, about the world origin),
    /// as of the last [`Self::compute`].
    pub fn motion_column(&self, k: usize) -> &Motion {
        &self.s_world[k]
    }

    /// M(q) as of the last [`Self::compute`].
    pub fn matrix(&self) -> &DMatrix<f64> {
        &self.m
    }

    /// Computes the motion columns and M at the state of the last
    /// [`Workspace::kinematics`] of `ws`.
    pub fn compute(&mut self, tree: &Tree, ws: &Workspace) {
        let links = tree.links();
        for (i, l) in links.iter().enumerate() {
            let world_from_link = ws.link_from_world(i);
            let s = ws.motion_subspace(i, l.joint.nv());
            for (k, sk) in s.iter().enumerate() {
                self.s_world[l.v_offset + k] = world_from_link.inv_apply_motion(sk);
            }
            self.composite[i] = world_from_link.inertia_to_parent(&l.inertia.to_articulated());
        }
        for (i, l) in links.iter().enumerate().rev() {
            if let Some(p) = l.parent {
                let c = self.composite[i];
                self.composite[p].add_assign(&c);
            }
        }
        self.m.fill(0.0);
        for (i, l) in links.iter().enumerate() {
            for k in l.v_offset..l.v_offset + l.joint.nv() {
                let f = self.composite[i].mul_motion(&self.s_world[k]);
                // The chain ends with link i's own degrees of freedom, k among them.
                for &j in &self.chain_dofs[i] {
                    let mkj = self.s_world[j].dot(&f);
                    self.m[(k, j)] = mkj;
                    self.m[(j, k)] = mkj;
                }
            }
        }
    }
}
