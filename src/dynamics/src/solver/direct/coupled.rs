//! The coupled (direct) system's blocks: one per element (a joint, an active spring, the
//! stylus) with its rows by components, and their assembly into J M⁻¹ Jᵀ + diag(1/soft) block
//! by block, with the six-lane kernels of [`crate::linalg::lanes`] (AVX2 where the CPU has it).

use crate::linalg::block_cholesky::{Block, BlockCholesky, Lanes, BLOCK};
use crate::linalg::lanes;
use crate::linalg::lanes::{LaneKernel, SixLanes};
use crate::model::body::{Body, BodyId};
use crate::model::joint::Row;
use nalgebra::Vector3;

/// Whose rows a block of the coupled (direct) system holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockOwner {
    Joint(usize),
    Spring(usize),
    Stylus,
}

/// One element's rows in the coupled system, by components (x, y, z) of lanes (rows; the
/// ones past `rows` are zero): Jacobian parts, M⁻¹-weighted angular parts, and for soft rows
/// 1/soft (0 for joints).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GlobalBlock {
    pub(crate) owner: BlockOwner,
    pub(crate) b1: BodyId,
    pub(crate) b2: BodyId,
    pub(crate) rows: usize,
    /// Rows up to the last one with a linear part (the rest are angular only).
    lin_rows: usize,
    /// Lanes up to which the slot's last use wrote (see [`start_block`]).
    written_rows: usize,
    lin: [Lanes; 3],
    ang1: [Lanes; 3],
    ang2: [Lanes; 3],
    w1: [Lanes; 3],
    w2: [Lanes; 3],
    pub(crate) inv_soft: Lanes,
}

impl GlobalBlock {
    pub(crate) fn new(owner: BlockOwner, b1: BodyId, b2: BodyId) -> Self {
        let zero = [[0.0; BLOCK]; 3];
        Self {
            owner,
            b1,
            b2,
            rows: 0,
            lin_rows: 0,
            written_rows: 0,
            lin: zero,
            ang1: zero,
            ang2: zero,
            w1: zero,
            w2: zero,
            inv_soft: [0.0; BLOCK],
        }
    }

    /// Clears the lanes past `rows` that the slot's last use wrote, so that they are zero again
    /// (call after the last [`Self::push`] of a reused slot).
    pub(crate) fn seal(&mut self) {
        for k in self.rows..self.written_rows {
            for d in 0..3 {
                self.lin[d][k] = 0.0;
                self.ang1[d][k] = 0.0;
                self.ang2[d][k] = 0.0;
                self.w1[d][k] = 0.0;
                self.w2[d][k] = 0.0;
            }
            self.inv_soft[k] = 0.0;
        }
        self.written_rows = self.rows;
    }

    /// Row `k` (its Jacobian parts).
    pub(crate) fn row(&self, k: usize) -> Row {
        let part = |x: &[Lanes; 3]| Vector3::new(x[0][k], x[1][k], x[2][k]);
        Row {
            lin: part(&self.lin),
            ang1: part(&self.ang1),
            ang2: part(&self.ang2),
        }
    }

    /// Appends a row with its M⁻¹-weighted angular parts `w1`, `w2` and its 1/soft.
    pub(crate) fn push(&mut self, row: &Row, w1: &Vector3<f64>, w2: &Vector3<f64>, inv_soft: f64) {
        let k = self.rows;
        for d in 0..3 {
            self.lin[d][k] = row.lin[d];
            self.ang1[d][k] = row.ang1[d];
            self.ang2[d][k] = row.ang2[d];
            self.w1[d][k] = w1[d];
            self.w2[d][k] = w2[d];
        }
        self.inv_soft[k] = inv_soft;
        self.rows += 1;
        if row.lin != Vector3::zeros() {
            self.lin_rows = self.rows;
        }
    }
}

/// Block `index` of a new assembly, empty, for `owner` acting on bodies `b1` and `b2`: the
/// slot the last assembly left at `index` if there is one (its lanes are overwritten row by
/// row; [`GlobalBlock::seal`] clears what is left over), or a new zeroed one. A factorisation
/// per step thus writes only the rows instead of clearing every block's lanes first.
pub(crate) fn start_block(
    blocks: &mut Vec<GlobalBlock>,
    index: usize,
    owner: BlockOwner,
    b1: BodyId,
    b2: BodyId,
) -> &mut GlobalBlock {
    if index == blocks.len() {
        blocks.push(GlobalBlock::new(owner, b1, b2));
    }
    let gb = &mut blocks[index];
    gb.written_rows = gb.written_rows.max(gb.rows);
    (gb.owner, gb.b1, gb.b2, gb.rows, gb.lin_rows) = (owner, b1, b2, 0, 0);
    gb
}

/// Sets every block of `dense` inside its factor's pattern (begun there) from the element
/// blocks: block (a, c) is the sum over the moving bodies the two elements share (zero for
/// fill), the diagonal ones with 1/soft added and unit padding rows.
pub(crate) fn assemble(dense: &mut BlockCholesky, blocks: &[GlobalBlock], bodies: &[Body]) {
    struct Assemble<'a>(&'a mut BlockCholesky, &'a [GlobalBlock], &'a [Body]);
    impl LaneKernel for Assemble<'_> {
        type Output = ();
        #[inline(always)]
        fn run<L: SixLanes>(self) {
            assemble_with::<L>(self.0, self.1, self.2)
        }
    }
    lanes::run(Assemble(dense, blocks, bodies))
}

#[inline(always)]
fn assemble_with<L: SixLanes>(dense: &mut BlockCholesky, blocks: &[GlobalBlock], bodies: &[Body]) {
    for (a, ga) in blocks.iter().enumerate() {
        let (cols, row) = dense.row_mut(a);
        for (&c, block) in cols.iter().zip(row.iter_mut()) {
            // Off-diagonal blocks go in transposed: block (c, a) of the matrix.
            let gc = &blocks[c];
            let (im1, im2) = (bodies[gc.b1].inv_mass, bodies[gc.b2].inv_mass);
            coupling_block::<L>(block, gc, ga, im1, im2);
            if c == a {
                for (r, row) in block.iter_mut().enumerate() {
                    // Padding rows are decoupled unit rows.
                    row[r] = if r < ga.rows {
                        row[r] + ga.inv_soft[r]
                    } else {
                        1.0
                    };
                }
            }
        }
    }
}

/// out[r] += Σ_d (x[d][r] · scale) · y[d], for the first `rows` rows r (x is zero past them).
#[inline(always)]
fn add_outer<L: SixLanes>(
    out: &mut [L::V; BLOCK],
    x: &[Lanes; 3],
    rows: usize,
    y: &[Lanes; 3],
    scale: f64,
) {
    for (xd, yd) in x.iter().zip(y) {
        let yv = L::load(yd);
        for (o, xr) in out.iter_mut().zip(xd).take(rows) {
            *o = L::add(*o, L::mul(L::splat(xr * scale), yv));
        }
    }
}

/// Block (a, c) of J M⁻¹ Jᵀ: the sum over the moving bodies the two elements share.
#[inline(always)]
fn coupling_block<L: SixLanes>(
    out: &mut Block,
    a: &GlobalBlock,
    c: &GlobalBlock,
    im1: f64,
    im2: f64,
) {
    let mut v = [L::splat(0.0); BLOCK];
    let (s11, s12, s21, s22) = (a.b1 == c.b1, a.b1 == c.b2, a.b2 == c.b1, a.b2 == c.b2);
    let mut lin = 0.0;
    if s11 {
        lin += im1;
    }
    if s12 {
        lin -= im1;
    }
    if s21 {
        lin -= im2;
    }
    if s22 {
        lin += im2;
    }
    if lin != 0.0 {
        add_outer::<L>(&mut v, &a.lin, a.lin_rows, &c.lin, lin);
    }
    if s11 {
        add_outer::<L>(&mut v, &a.ang1, a.rows, &c.w1, 1.0);
    }
    if s12 {
        add_outer::<L>(&mut v, &a.ang1, a.rows, &c.w2, 1.0);
    }
    if s21 {
        add_outer::<L>(&mut v, &a.ang2, a.rows, &c.w1, 1.0);
    }
    if s22 {
        add_outer::<L>(&mut v, &a.ang2, a.rows, &c.w2, 1.0);
    }
    for (o, vr) in out.iter_mut().zip(v) {
        L::store(vr, o);
    }
}
