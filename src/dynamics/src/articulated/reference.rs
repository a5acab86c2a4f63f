//! Test-only reference dynamics, written separately from the articulated-body algorithm:
//! the recursive Newton–Euler algorithm (inverse dynamics, RBDA Table 5.1) and the
//! composite-rigid-body method (mass matrix, RBDA Table 6.2), both with plain 6×6 matrices
//! (no factored transforms, no articulated inertias). Forward dynamics by the reference is
//! M(q) q̈ = τ − C(q, q̇, f_ext) with C = RNEA(q, q̇, q̈ = 0), solved by LU.
//!
//! They share only the joint models (`JointType::calc`), which are checked on their own
//! against finite differences in `joint.rs`.

use nalgebra::{DMatrix, DVector, Matrix6, Vector3, Vector6};

use super::joint::JointCalc;
use super::spatial::{Force, Motion};
use super::tree::Tree;

/// Per-link matrices of the reference: X_up (motion), S columns, v_J, c_J, and
/// link_X_world (motion).
struct Kin {
    x_up: Vec<Matrix6<f64>>,
    x_base: Vec<Matrix6<f64>>,
    s: Vec<Vec<Vector6<f64>>>,
    v_j: Vec<Vector6<f64>>,
    c_j: Vec<Vector6<f64>>,
}

fn kin(tree: &Tree, q: &[f64], qd: &[f64]) -> Kin {
    let mut k = Kin {
        x_up: vec![],
        x_base: vec![],
        s: vec![],
        v_j: vec![],
        c_j: vec![],
    };
    for l in tree.links() {
        let mut jc = JointCalc::default();
        let (iq, iv) = (l.q_offset, l.v_offset);
        l.joint.calc(
            &q[iq..iq + l.joint.nq()],
            &qd[iv..iv + l.joint.nv()],
            &mut jc,
        );
        let x_up = jc.x_j.motion_matrix() * l.parent_to_joint.motion_matrix();
        let x_base = match l.parent {
            Some(p) => x_up * k.x_base[p],
            None => x_up,
        };
        k.x_up.push(x_up);
        k.x_base.push(x_base);
        k.s.push((0..jc.dof).map(|c| jc.s[c].to_vector6()).collect());
        k.v_j.push(jc.v_j.to_vector6());
        k.c_j.push(jc.c_j.to_vector6());
    }
    k
}

/// Inverse dynamics τ = RNEA(q, q̇, q̈, f_ext) (external forces in world coordinates about the
/// world origin, one per link).
pub(crate) fn rnea(
    tree: &Tree,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    f_ext_world: &[Force],
) -> DVector<f64> {
    let k = kin(tree, q, qd);
    let links = tree.links();
    let n = links.len();
    let mut v = vec![Vector6::zeros(); n];
    let mut a = vec![Vector6::zeros(); n];
    let mut f = vec![Vector6::zeros(); n];
    let g = tree.gravity_in_world;
    let a0 = Vector6::new(0.0, 0.0, 0.0, -g.x, -g.y, -g.z);
    for (i, l) in links.iter().enumerate() {
        let iv = l.v_offset;
        let (vp, ap) = match l.parent {
            Some(p) => (v[p], a[p]),
            None => (Vector6::zeros(), a0),
        };
        v[i] = k.x_up[i] * vp + k.v_j[i];
        let mut sqdd = Vector6::zeros();
        for (c, s) in k.s[i].iter().enumerate() {
            sqdd += s * qdd[iv + c];
        }
        let vx = Motion::from_vector6(&v[i]).cross_matrix();
        a[i] = k.x_up[i] * ap + sqdd + k.c_j[i] + vx * k.v_j[i];
        let im = l.inertia.matrix();
        f[i] = im * a[i] - vx.transpose() * (im * v[i]);
        if let Some(fe) = f_ext_world.get(i) {
            let x_force = k.x_base[i].try_inverse().unwrap().transpose();
            f[i] -= x_force * fe.to_vector6();
        }
    }
    let mut tau = DVector::zeros(tree.nv());
    for (i, l) in links.iter().enumerate().rev() {
        for (c, s) in k.s[i].iter().enumerate() {
            tau[l.v_offset + c] = s.dot(&f[i]);
        }
        if let Some(p) = l.parent {
            let fp = k.x_up[i].transpose() * f[i];
            f[p] += fp;
        }
    }
    tau
}

/// The joint-space mass matrix M(q) by the composite-rigid-body method.
pub(crate) fn crba(tree: &Tree, q: &[f64]) -> DMatrix<f64> {
    let zeros = vec![0.0; tree.nv()];
    let k = kin(tree, q, &zeros);
    let links = tree.links();
    let mut ic: Vec<Matrix6<f64>> = links.iter().map(|l| l.inertia.matrix()).collect();
    for (i, l) in links.iter().enumerate().rev() {
        if let Some(p) = l.parent {
            let moved = k.x_up[i].transpose() * ic[i] * k.x_up[i];
            ic[p] += moved;
        }
    }
    let mut m = DMatrix::zeros(tree.nv(), tree.nv());
    for (i, l) in links.iter().enumerate() {
        for (ci, si) in k.s[i].iter().enumerate() {
            let mut force = ic[i] * si;
            let row = l.v_offset + ci;
            for (cj, sj) in k.s[i].iter().enumerate() {
                m[(row, l.v_offset + cj)] = sj.dot(&force);
            }
            let mut j = i;
            while let Some(p) = links[j].parent {
                force = k.x_up[j].transpose() * force;
                j = p;
                for (cj, sj) in k.s[j].iter().enumerate() {
                    let col = links[j].v_offset + cj;
                    m[(row, col)] = sj.dot(&force);
                    m[(col, row)] = m[(row, col)];
                }
            }
        }
    }
    m
}

/// A world point's spatial force for the reference (same convention as `aba::point_force`,
/// written again here).
pub(crate) fn point_force_ref(p: &Vector3<f64>, f: &Vector3<f64>) -> Force {
    Force::new(p.cross(f), *f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::articulated::aba::Workspace;
    use crate::articulated::crba::MassMatrix;
    use crate::articulated::joint::JointType;
    use crate::articulated::spatial::{RigidInertia, Transform};
    use nalgebra::{Matrix3, Rotation3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn v3(rng: &mut ChaCha8Rng, s: f64) -> Vector3<f64> {
        Vector3::new(
            rng.random_range(-s..s),
            rng.random_range(-s..s),
            rng.random_range(-s..s),
        )
    }

    fn unit(rng: &mut ChaCha8Rng) -> Vector3<f64> {
        v3(rng, 1.0).normalize()
    }

    /// A tree of the given joint types; `chain` links each to the one before, otherwise each
    /// to a random earlier link (or the ground); `aligned`: every X_T a translation only.
    fn random_tree(rng: &mut ChaCha8Rng, joints: &[JointType], chain: bool, aligned: bool) -> Tree {
        let mut tree = Tree::new(Vector3::new(0.3, -0.2, -9.81));
        for (i, j) in joints.iter().enumerate() {
            let parent = match (i, chain) {
                (0, _) => None,
                (_, true) => Some(i - 1),
                (_, false) => {
                    let p = rng.random_range(0..=i);
                    (p < i).then_some(p)
                }
            };
            let a = Matrix3::from_fn(|_, _| rng.random_range(-0.3..0.3));
            let inertia = RigidInertia::new(
                rng.random_range(0.2..2.0),
                v3(rng, 0.2),
                a * a.transpose() + Matrix3::identity() * 0.02,
            );
            let x_t = Transform {
                rot: match aligned {
                    true => Matrix3::identity(),
                    false => *Rotation3::from_scaled_axis(v3(rng, 2.0)).matrix(),
                },
                trans: v3(rng, 0.4),
            };
            tree.add_link(format!("l{i}"), parent, *j, x_t, inertia)
                .unwrap();
        }
        tree
    }

    fn mixed_joints(rng: &mut ChaCha8Rng) -> Vec<JointType> {
        vec![
            JointType::Free,
            JointType::Spherical,
            JointType::Revolute { axis: unit(rng) },
            JointType::Prismatic { axis: unit(rng) },
            JointType::Universal {
                axis1: unit(rng),
                axis2: unit(rng),
            },
            JointType::Cylindrical { axis: unit(rng) },
            JointType::Planar { normal: unit(rng) },
            JointType::Fixed,
            JointType::Spherical,
            JointType::Revolute { axis: unit(rng) },
        ]
    }

    /// Revolute joints about link axes (both signs) and X_T translations: the forms the ABA
    /// writes out for them.
    fn axis_joints(_rng: &mut ChaCha8Rng) -> Vec<JointType> {
        let revolute = |axis: Vector3<f64>| JointType::Revolute { axis };
        vec![
            JointType::Spherical,
            revolute(Vector3::x()),
            revolute(-Vector3::y()),
            revolute(Vector3::z()),
            JointType::Spherical,
            revolute(Vector3::y()),
            JointType::Prismatic { axis: Vector3::z() },
            revolute(-Vector3::x()),
            revolute(-Vector3::z()),
            revolute(Vector3::new(0.6, 0.0, 0.8)),
        ]
    }

    fn random_state(
        rng: &mut ChaCha8Rng,
        tree: &Tree,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<Force>) {
        let mut q = tree.neutral_q();
        for x in q.iter_mut() {
            *x += rng.random_range(-1.0..1.0);
        }
        tree.normalise_q(&mut q);
        let qd: Vec<f64> = (0..tree.nv())
            .map(|_| rng.random_range(-2.0..2.0))
            .collect();
        let tau: Vec<f64> = (0..tree.nv())
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let f_ext: Vec<Force> = (0..tree.links().len())
            .map(|_| {
                point_force_ref(&v3(rng, 1.0), &v3(rng, 2.0))
                    + Force::new(v3(rng, 0.3), Vector3::zeros())
            })
            .collect();
        (q, qd, tau, f_ext)
    }

    /// ABA against CRBA and RNEA on 40 trees of `joints` (chains and branched trees), five
    /// random states each; returns the worst relative difference of q̈.
    fn check_against_references(
        seed: u64,
        joints: fn(&mut ChaCha8Rng) -> Vec<JointType>,
        aligned: bool,
    ) -> f64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut worst = 0.0_f64;
        for trial in 0..40 {
            let joints = joints(&mut rng);
            let tree = random_tree(&mut rng, &joints, trial % 2 == 0, aligned);
            assert_eq!(tree.links().len(), 10);
            let mut ws = Workspace::new(&tree);
            for _ in 0..5 {
                let (q, qd, tau, f_ext) = random_state(&mut rng, &tree);
                ws.kinematics(&tree, &q, &qd);
                let mut qdd = vec![0.0; tree.nv()];
                ws.accelerations(&tree, &tau, &f_ext, &mut qdd).unwrap();
                let m = crba(&tree, &q);
                let zeros = vec![0.0; tree.nv()];
                let c = rnea(&tree, &q, &qd, &zeros, &f_ext);
                let rhs = DVector::from_column_slice(&tau) - c;
                let reference = m.clone().lu().solve(&rhs).unwrap();
                let got = DVector::from_column_slice(&qdd);
                let rel = (&got - &reference).norm() / reference.norm();
                worst = worst.max(rel);
                assert!(rel < 1e-9, "trial {trial}: relative difference {rel:e}");
                // And inverse dynamics of ABA's answer gives back τ.
                let back = rnea(&tree, &q, &qd, &qdd, &f_ext);
                let rel_tau = (back - DVector::from_column_slice(&tau)).norm()
                    / DVector::from_column_slice(&tau).norm();
                assert!(rel_tau < 1e-9, "trial {trial}: τ back {rel_tau:e}");
                // The production mass matrix (world frame) is the reference's.
                let mut production = MassMatrix::new(&tree);
                production.compute(&tree, &ws);
                let rel_m = (production.matrix() - &m).amax() / m.amax();
                assert!(rel_m < 1e-12, "trial {trial}: mass matrix {rel_m:e}");
                // M is symmetric positive definite.
                assert!((&m - m.transpose()).amax() < 1e-12 * m.amax());
                assert!(m.clone().cholesky().is_some());
            }
        }
        worst
    }

    /// Acceptance 2 of issue 17: ABA's q̈ equals M⁻¹(τ − C) of the composite-rigid-body
    /// method and the Newton–Euler bias, to 1e-9 relative, on random states of a 10-link
    /// spatial chain with every joint type (and on random branched trees).
    #[test]
    fn aba_matches_crba_and_rnea_on_a_mixed_ten_link_chain() {
        let worst = check_against_references(17, mixed_joints, false);
        println!("ABA vs CRBA/RNEA: worst relative difference {worst:.2e}");
    }

    /// The same for revolute joints about link axes with X_T translations (the chains of
    /// scenes whose bodies share their orientation).
    #[test]
    fn aba_matches_crba_and_rnea_with_joints_about_link_axes() {
        let worst = check_against_references(18, axis_joints, true);
        println!("ABA vs CRBA/RNEA, link axes: worst relative difference {worst:.2e}");
    }
}
