//! The primal system's pattern: which velocities each moving body has in H, which entries of
//! H's lower triangle the bodies and the springs fill, and where each adds its terms (see
//! [`crate::solver::primal`]).
//!
//! A body that no joint and no off-centre spring reaches (a mass element of a mesh) has only
//! its linear velocities in H: its angular ones couple to nothing but, through the stylus, its
//! own linear ones, and are condensed out exactly (see `PrimalSolve::factor`). On a cloth
//! that halves H and removes a thousand 3 × 3 supernodes from every triangular solve.

use faer::sparse::SymbolicSparseColMat;
use nalgebra::Vector3;

use crate::model::body::{Body, BodyId};
use crate::model::joint::{Joint, Row};
use crate::model::spring::Spring;
use crate::solver::direct::coupled::BlockOwner;

/// Velocities per moving body (linear, angular).
pub(in crate::solver) const DOF: usize = 6;
/// Entries of a 6 × 6 block's lower triangle.
pub(in crate::solver) const TRI: usize = DOF * (DOF + 1) / 2;
/// Most local velocities of one row (two bodies).
pub(in crate::solver) const LOCAL: usize = 2 * DOF;

/// Index of entry (r, c), r ≥ c, of a 6 × 6 block's lower triangle.
pub(in crate::solver) fn tri(r: usize, c: usize) -> usize {
    r * (r + 1) / 2 + c
}

/// The sparsity of H (lower triangle, by columns) and where each element adds into it.
#[derive(Clone, Debug)]
pub(in crate::solver) struct Pattern {
    pub(in crate::solver) n: usize,
    /// First velocity of each body in H (`usize::MAX` for fixed bodies).
    pub(in crate::solver) first_dof: Vec<usize>,
    /// Per body, whether only its linear velocities are in H (its angular ones condensed).
    pub(in crate::solver) condensed: Vec<bool>,
    pub(in crate::solver) col_ptr: Vec<usize>,
    pub(in crate::solver) row_idx: Vec<usize>,
    /// Per body, the value slots of its diagonal block's lower triangle ([`tri`] order; the
    /// linear 3 × 3 only for a condensed body, `usize::MAX` past it).
    pub(in crate::solver) diag_slots: Vec<[usize; TRI]>,
    /// Per spring, its slots in `spring_slots` (`spring_start[i]..spring_start[i + 1]`), one
    /// per pair p ≥ q of its local velocities ([`local_dofs`] order).
    pub(in crate::solver) spring_start: Vec<usize>,
    pub(in crate::solver) spring_slots: Vec<usize>,
    /// Per spring, whether it couples only linear velocities (attached at both centres).
    pub(in crate::solver) lin_only: Vec<bool>,
}

/// The local velocities of a row between `b1` and `b2` (fixed bodies left out) in H, in the
/// order b1 linear, b1 angular, b2 linear, b2 angular (angular ones only unless `lin_only`).
pub(in crate::solver) fn local_dofs(
    first_dof: &[usize],
    b1: BodyId,
    b2: BodyId,
    lin_only: bool,
) -> ([usize; LOCAL], usize) {
    let mut dofs = [0; LOCAL];
    let mut len = 0;
    // (A row within one body, a connection inside a rigid group, acts on it once.)
    let second = (b2 != b1).then_some(b2);
    for b in [Some(b1), second].into_iter().flatten() {
        let f = first_dof[b];
        if f == usize::MAX {
            continue;
        }
        let count = if lin_only { 3 } else { DOF };
        for k in 0..count {
            dofs[len] = f + k;
            len += 1;
        }
    }
    (dofs, len)
}

/// The row's Jacobian entries in [`local_dofs`] order: (lin, ang1) on b1, (−lin, ang2) on b2.
pub(in crate::solver) fn local_jacobian(
    first_dof: &[usize],
    b1: BodyId,
    b2: BodyId,
    row: &Row,
    lin_only: bool,
) -> [f64; LOCAL] {
    let mut j = [0.0; LOCAL];
    let mut len = 0;
    let parts = if b1 == b2 {
        [
            (b1, Vector3::zeros(), row.ang1 + row.ang2),
            (usize::MAX, row.lin, row.ang2),
        ]
    } else {
        [(b1, row.lin, row.ang1), (b2, -row.lin, row.ang2)]
    };
    for (b, lin, ang) in parts {
        if b == usize::MAX {
            continue;
        }
        if first_dof[b] == usize::MAX {
            continue;
        }
        j[len..len + 3].copy_from_slice(lin.as_slice());
        len += 3;
        if !lin_only {
            j[len..len + 3].copy_from_slice(ang.as_slice());
            len += 3;
        }
    }
    j
}

impl Pattern {
    /// The pattern of these bodies, joints and springs; `condense`: whether bodies that no
    /// joint and no off-centre spring reaches have only their linear velocities in H.
    pub(in crate::solver) fn new(
        bodies: &[Body],
        joints: &[Joint],
        springs: &[Spring],
        condense: bool,
    ) -> Self {
        let lin_only: Vec<bool> = springs
            .iter()
            .map(|s| s.body1 != s.body2 && s.at_centres())
            .collect();
        let condensed = condensed_bodies(bodies, joints, springs, &lin_only, condense);
        let (first_dof, n) = number_velocities(bodies, &condensed);
        let (col_ptr, row_idx) = columns(n, &first_dof, &condensed, springs, &lin_only);
        let slots = Slots {
            col_ptr: &col_ptr,
            row_idx: &row_idx,
        };
        let diag_slots = slots.diagonal_blocks(&first_dof, &condensed);
        let (spring_start, spring_slots) = slots.springs(&first_dof, springs, &lin_only);
        Self {
            n,
            first_dof,
            condensed,
            col_ptr,
            row_idx,
            diag_slots,
            spring_start,
            spring_slots,
            lin_only,
        }
    }

    /// For a soft block (a spring, the stylus), whether it couples only linear velocities;
    /// `None` for a joint (a hard block).
    pub(in crate::solver) fn soft_lin_only(&self, owner: BlockOwner) -> Option<bool> {
        match owner {
            BlockOwner::Spring(i) => Some(self.lin_only[i]),
            BlockOwner::Stylus => Some(false),
            BlockOwner::Joint(_) => None,
        }
    }

    pub(in crate::solver) fn symbolic(&self) -> SymbolicSparseColMat<usize> {
        SymbolicSparseColMat::new_checked(
            self.n,
            self.n,
            self.col_ptr.clone(),
            None,
            self.row_idx.clone(),
        )
    }
}

/// Velocities of body `b` in H.
fn dofs_of(condensed: &[bool], b: usize) -> usize {
    if condensed[b] {
        3
    } else {
        DOF
    }
}

/// Per body, whether its angular velocities are condensed out of H: `condense` and no joint
/// and no off-centre spring reaches it.
fn condensed_bodies(
    bodies: &[Body],
    joints: &[Joint],
    springs: &[Spring],
    lin_only: &[bool],
    condense: bool,
) -> Vec<bool> {
    let mut condensed: Vec<bool> = bodies.iter().map(|b| condense && b.is_dynamic()).collect();
    for j in joints {
        condensed[j.body1] = false;
        condensed[j.body2] = false;
    }
    for (s, &lo) in springs.iter().zip(lin_only) {
        if !lo {
            condensed[s.body1] = false;
            condensed[s.body2] = false;
        }
    }
    condensed
}

/// H's lower triangle by columns (`col_ptr`, `row_idx`, rows sorted): the bodies' diagonal
/// blocks and the springs' pairs.
fn columns(
    n: usize,
    first_dof: &[usize],
    condensed: &[bool],
    springs: &[Spring],
    lin_only: &[bool],
) -> (Vec<usize>, Vec<usize>) {
    // Rows of each column (r ≥ c): the bodies' diagonal blocks and the springs' pairs.
    let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, &f) in first_dof.iter().enumerate() {
        if f == usize::MAX {
            continue;
        }
        for r in 0..dofs_of(condensed, b) {
            for c in 0..=r {
                cols[f + c].push(f + r);
            }
        }
    }
    for (s, &lo) in springs.iter().zip(lin_only) {
        let (dofs, len) = local_dofs(first_dof, s.body1, s.body2, lo);
        for p in 0..len {
            for q in 0..=p {
                let (r, c) = (dofs[p].max(dofs[q]), dofs[p].min(dofs[q]));
                cols[c].push(r);
            }
        }
    }
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::new();
    col_ptr.push(0);
    for col in &mut cols {
        col.sort_unstable();
        col.dedup();
        row_idx.extend_from_slice(col);
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx)
}

/// Each moving body's first velocity in H (`usize::MAX` for fixed bodies), and how many
/// velocities H has.
fn number_velocities(bodies: &[Body], condensed: &[bool]) -> (Vec<usize>, usize) {
    let mut first_dof = vec![usize::MAX; bodies.len()];
    let mut n = 0;
    for (b, body) in bodies.iter().enumerate() {
        if body.is_dynamic() {
            first_dof[b] = n;
            n += if condensed[b] { 3 } else { DOF };
        }
    }
    (first_dof, n)
}

/// Where H's entries are among its values (its columns made).
struct Slots<'a> {
    col_ptr: &'a [usize],
    row_idx: &'a [usize],
}

impl Slots<'_> {
    /// The value slot of entry (r, c), r ≥ c.
    fn of(&self, r: usize, c: usize) -> usize {
        let rows = &self.row_idx[self.col_ptr[c]..self.col_ptr[c + 1]];
        self.col_ptr[c] + rows.binary_search(&r).expect("entry in H's pattern")
    }

    /// Per body, the slots of its diagonal block's lower triangle ([`tri`] order).
    fn diagonal_blocks(&self, first_dof: &[usize], condensed: &[bool]) -> Vec<[usize; TRI]> {
        first_dof
            .iter()
            .enumerate()
            .map(|(b, &f)| {
                let mut s = [usize::MAX; TRI];
                if f != usize::MAX {
                    for r in 0..dofs_of(condensed, b) {
                        for c in 0..=r {
                            s[tri(r, c)] = self.of(f + r, f + c);
                        }
                    }
                }
                s
            })
            .collect()
    }

    /// Per spring, the slots of its pairs of local velocities: (`spring_start`,
    /// `spring_slots`) of [`Pattern`].
    fn springs(
        &self,
        first_dof: &[usize],
        springs: &[Spring],
        lin_only: &[bool],
    ) -> (Vec<usize>, Vec<usize>) {
        let mut spring_start = Vec::with_capacity(springs.len() + 1);
        let mut spring_slots = Vec::new();
        spring_start.push(0);
        for (s, &lo) in springs.iter().zip(lin_only) {
            let (dofs, len) = local_dofs(first_dof, s.body1, s.body2, lo);
            for p in 0..len {
                for q in 0..=p {
                    spring_slots.push(self.of(dofs[p].max(dofs[q]), dofs[p].min(dofs[q])));
                }
            }
            spring_start.push(spring_slots.len());
        }
        (spring_start, spring_slots)
    }
}
