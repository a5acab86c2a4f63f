//! A sparse block Cholesky factorisation of the coupled constraint system (see
//! [`crate::solver`], `SolverMethod::Direct`), in storage allocated once for the largest
//! pattern the caller will ask for, so that memory follows the factor's pattern.
//!
//! The rows of one element (a joint's up to six rows, a spring's one, the stylus's three) form a
//! block, padded to [`BLOCK`] rows with unit diagonal entries. Block row i of the factor is
//! stored only at the block columns where it can be non-zero: the coupled matrix's own
//! (elements that share a moving body) and the fill that elimination adds, found by
//! [`super::block_pattern`]. A chain costs O(n) blocks, and so does any tree whose joints are
//! numbered children first (no fill; the solver numbers them so). Working on whole
//! fixed-size blocks (the diagonal blocks' factors kept inverted) replaces the scalar
//! substitutions' chains of dependent divisions by independent multiply-adds, six lanes at a
//! time ([`super::lanes`]: AVX2 where the CPU has it, with the same results either way).
//!
//! Redundant constraints (the cross lift's closed loops) make the system only positive
//! semi-definite; the factorisation therefore adds a tiny relative regularisation to the
//! diagonal, and the solver's outer iterations remove the error this causes. A pivot that is
//! still not positive (NaN, or an indefinite matrix) is reported.

/// Rows of a block (the most rows of one element).
pub const BLOCK: usize = 6;

use super::block_pattern::Symbolic;
use super::lanes;
#[cfg(test)]
use super::lanes::Portable;
use super::lanes::{LaneKernel, SixLanes};

/// A dense `BLOCK × BLOCK` block, row-major.
pub type Block = [[f64; BLOCK]; BLOCK];

/// A vector of one block's rows.
pub type Lanes = [f64; BLOCK];

/// The zero block.
pub const ZERO: Block = [[0.0; BLOCK]; BLOCK];

/// The matrix, then its factor, by blocks. Nothing is allocated after
/// [`BlockCholesky::with_capacity`] while the patterns given to [`BlockCholesky::begin`] stay
/// within the bound given there.
#[derive(Clone, Debug)]
pub struct BlockCholesky {
    nb: usize,
    /// Rows of each block that are not padding.
    size: Vec<usize>,
    /// Where each block row's blocks start in `cols` and `blocks` (row i: `offset[i]..
    /// offset[i + 1]`, the diagonal last).
    offset: Vec<usize>,
    /// The block column of each stored block, ascending within a row.
    cols: Vec<usize>,
    blocks: Vec<Block>,
    /// Inverses of the diagonal blocks of the factor (lower triangular).
    diag_inv: Vec<Block>,
    /// Their transposes.
    diag_inv_t: Vec<Block>,
    /// The factor's off-diagonal blocks L_ij, by the same slots as `blocks` (which hold
    /// L_ijᵀ): the backward substitution runs along their rows.
    lower: Vec<Block>,
    symbolic: Symbolic,
}

/// The most storage [`BlockCholesky::with_capacity`] may ask for (2 GiB): a model whose
/// pattern would need more (many elements all coupled through one body, say) is refused
/// with a message (see [`BlockCholesky::storage_bytes`]) instead of aborting on allocation.
pub const MAX_STORAGE_BYTES: usize = 2 << 30;

impl BlockCholesky {
    /// The bytes [`Self::with_capacity`] allocates for `capacity` block rows and a pattern of
    /// `pattern_blocks` blocks (`None` on overflow): two arrays of the pattern (the matrix
    /// and the factor's transposed blocks) and its columns, two of the diagonal, four of
    /// indices.
    pub fn storage_bytes(capacity: usize, pattern_blocks: usize) -> Option<usize> {
        let blocks = pattern_blocks
            .checked_mul(2)?
            .checked_add(capacity.checked_mul(2)?)?;
        blocks
            .checked_mul(std::mem::size_of::<Block>())?
            .checked_add(pattern_blocks.checked_mul(std::mem::size_of::<usize>())?)?
            .checked_add(capacity.checked_mul(4 * std::mem::size_of::<usize>())?)
    }

    /// Storage for systems of up to `capacity` block rows whose factor patterns (see
    /// [`super::block_pattern`]) hold at most `pattern_blocks` blocks.
    pub fn with_capacity(capacity: usize, pattern_blocks: usize) -> Self {
        Self {
            nb: 0,
            size: vec![BLOCK; capacity],
            offset: vec![0; capacity + 1],
            cols: vec![0; pattern_blocks],
            blocks: vec![ZERO; pattern_blocks],
            diag_inv: vec![ZERO; capacity],
            diag_inv_t: vec![ZERO; capacity],
            lower: vec![ZERO; pattern_blocks],
            symbolic: Symbolic::with_capacity(capacity),
        }
    }

    /// Starts a system of `nb` block rows (at most the capacity) in which `coupled(i, add)`
    /// calls `add(j)` for every block column j < i at which block row i of the matrix is
    /// non-zero, and block row i has `size(i)` rows; the rest of its [`BLOCK`] rows are
    /// padding, with zero entries and a unit diagonal. Every block of the factor's pattern
    /// ([`Self::row_mut`]) must then be set before [`Self::factor`]: the diagonal blocks as
    /// they are, the off-diagonal ones transposed (block (i, j) gets A_ijᵀ, zero for fill).
    pub fn begin(
        &mut self,
        nb: usize,
        coupled: impl Fn(usize, &mut dyn FnMut(usize)),
        size: impl Fn(usize) -> usize,
    ) {
        let nb = nb.min(self.diag_inv.len());
        self.nb = nb;
        for i in 0..nb {
            self.size[i] = size(i).min(BLOCK);
        }
        // Only if the caller's bound was wrong: grow rather than index out of bounds.
        while self
            .symbolic
            .factor_pattern(nb, &coupled, &mut self.offset, &mut self.cols)
            .is_none()
        {
            debug_assert!(false, "pattern over the bound");
            let bigger = 2 * self.cols.len() + BLOCK;
            self.cols.resize(bigger, 0);
            self.blocks.resize(bigger, ZERO);
            self.lower.resize(bigger, ZERO);
        }
    }

    /// Starts a system with the pattern of the last [`Self::begin`] (the same `nb` block rows
    /// and couplings; the rows per block may differ), skipping the symbolic elimination.
    pub fn begin_same_pattern(&mut self, size: impl Fn(usize) -> usize) {
        for i in 0..self.nb {
            self.size[i] = size(i).min(BLOCK);
        }
    }

    /// The blocks the factor stores (the diagonal ones included) for the system begun last.
    pub fn stored_blocks(&self) -> usize {
        self.offset[self.nb]
    }

    /// Block row i: its block columns (ascending, ending with i) and their blocks.
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> (&[usize], &mut [Block]) {
        let range = self.offset[i]..self.offset[i + 1];
        (&self.cols[range.clone()], &mut self.blocks[range])
    }

    /// Block (i, j) of the matrix, for j in row i's pattern.
    pub fn block_mut(&mut self, i: usize, j: usize) -> &mut Block {
        let (cols, blocks) = self.row_mut(i);
        let slot = cols.binary_search(&j).expect("block in the pattern");
        &mut blocks[slot]
    }

    /// Factors the matrix in place into its lower Cholesky factor, after scaling every diagonal
    /// entry by `1 + regularisation` (a relative, per-row compliance: it keeps the impulses of
    /// redundant rows bounded). Returns `None` if a pivot is not positive.
    ///
    /// Off-diagonal blocks are given and kept transposed (slot (i, j) holds A_ijᵀ, then
    /// L_ijᵀ), so that every product below runs along contiguous rows.
    pub fn factor(&mut self, regularisation: f64) -> Option<()> {
        struct Factor<'a>(&'a mut BlockCholesky, f64);
        impl LaneKernel for Factor<'_> {
            type Output = Option<()>;
            #[inline(always)]
            fn run<L: SixLanes>(self) -> Option<()> {
                self.0.factor_with::<L>(self.1)
            }
        }
        lanes::run(Factor(self, regularisation))
    }

    #[inline(always)]
    fn factor_with<L: SixLanes>(&mut self, regularisation: f64) -> Option<()> {
        for i in 0..self.nb {
            let (oi, oe) = (self.offset[i], self.offset[i + 1]);
            let cols_i = &self.cols[oi..oe];
            // Row i's blocks, after the rows before it (whose factor is done).
            let (done, row_i) = self.blocks.split_at_mut(oi);
            let row_i = &mut row_i[..oe - oi];
            let off = oe - oi - 1;
            for p in 0..off {
                let j = cols_i[p];
                // Sᵀ = A_ijᵀ − Σₖ L_jk L_ikᵀ over the columns k < j of both rows, then
                // L_ijᵀ = L_jj⁻¹ Sᵀ.
                let (left, rest) = row_i.split_at_mut(p);
                let st = &mut rest[0];
                let (oj, ej) = (self.offset[j], self.offset[j + 1] - 1);
                let (mut a, mut b) = (0, oj);
                while a < p && b < ej {
                    let (ka, kb) = (cols_i[a], self.cols[b]);
                    if ka == kb {
                        subtract_transposed_products::<L>(st, &done[b], &left[a], self.size[ka]);
                        a += 1;
                        b += 1;
                    } else if ka < kb {
                        a += 1;
                    } else {
                        b += 1;
                    }
                }
                // Row c of L_jj⁻¹ Sᵀ needs rows 0..=c of Sᵀ: done from the last row up, in
                // place. Rows past block j's size are padding and stay zero.
                let inv = &self.diag_inv[j];
                let size_j = self.size[j];
                for row in st.iter_mut().skip(size_j) {
                    *row = [0.0; BLOCK];
                }
                for c in (0..size_j).rev() {
                    let mut lt = L::splat(0.0);
                    for (m, d) in inv[c].iter().enumerate().take(c + 1) {
                        lt = L::add(lt, L::mul(L::splat(*d), L::load(&st[m])));
                    }
                    L::store(lt, &mut st[c]);
                }
            }
            let (left, rest) = row_i.split_at_mut(off);
            let s = &mut rest[0];
            for (r, row) in s.iter_mut().enumerate() {
                row[r] *= 1.0 + regularisation;
            }
            for (t, &k) in left.iter().zip(cols_i) {
                subtract_transposed_products::<L>(s, t, t, self.size[k]);
            }
            factor_diagonal(s, self.size[i], &mut self.diag_inv[i])?;
        }
        // The solve's blocks in the other orientation, made here, off the chain of dependent
        // pivots above.
        for i in 0..self.nb {
            for slot in self.offset[i]..self.offset[i + 1] - 1 {
                self.lower[slot] = transposed(&self.blocks[slot]);
            }
            self.diag_inv_t[i] = transposed(&self.diag_inv[i]);
        }
        Some(())
    }

    /// Solves `L Lᵀ x = b` in place with the factor from [`Self::factor`]; `b` holds one
    /// [`Lanes`] per block row (the padding rows' entries come back zero if they went in zero).
    pub fn solve(&self, b: &mut [Lanes]) {
        struct Solve<'a>(&'a BlockCholesky, &'a mut [Lanes]);
        impl LaneKernel for Solve<'_> {
            type Output = ();
            #[inline(always)]
            fn run<L: SixLanes>(self) {
                self.0.solve_with::<L>(self.1)
            }
        }
        lanes::run(Solve(self, b))
    }

    /// Every product runs along whole rows of a stored block (L_ikᵀ and L_ii⁻ᵀ forward, L_ik
    /// and L_ii⁻¹ backward), with the vector it multiplies kept in registers: each block
    /// waits on the one before it, so the chain is what sets the pace, and its sums are
    /// taken pairwise to keep it short.
    #[inline(always)]
    fn solve_with<L: SixLanes>(&self, b: &mut [Lanes]) {
        let nb = self.nb;
        // y_{i−1}, still in registers for the next block (in a chain, the only one before).
        let mut prev = L::splat(0.0);
        for i in 0..nb {
            let mut t = L::load(&b[i]);
            let (oi, oe) = (self.offset[i], self.offset[i + 1] - 1);
            for slot in oi..oe {
                let k = self.cols[slot];
                let y = if k + 1 == i { prev } else { L::load(&b[k]) };
                t = L::sub(t, rows_times_v::<L>(&self.blocks[slot], y));
            }
            prev = rows_times_v::<L>(&self.diag_inv_t[i], t);
            L::store(prev, &mut b[i]);
        }
        for i in (0..nb).rev() {
            let (oi, oe) = (self.offset[i], self.offset[i + 1] - 1);
            let x = rows_times_v::<L>(&self.diag_inv[i], L::load(&b[i]));
            L::store(x, &mut b[i]);
            for slot in oi..oe {
                let bk = &mut b[self.cols[slot]];
                let v = rows_times_v::<L>(&self.lower[slot], x);
                L::store(L::sub(L::load(bk), v), bk);
            }
        }
    }
}

/// Σₘ x[m] · rows[m] (so Mᵀ x for a block M stored by rows), x in registers.
#[inline(always)]
fn rows_times_v<L: SixLanes>(rows: &Block, x: L::V) -> L::V {
    let xs = L::spread(x);
    let p = |m: usize| L::mul(L::load(&rows[m]), xs[m]);
    L::add(
        L::add(L::add(p(0), p(1)), L::add(p(2), p(3))),
        L::add(p(4), p(5)),
    )
}

/// The transpose of a block.
#[inline(always)]
fn transposed(b: &Block) -> Block {
    std::array::from_fn(|r| std::array::from_fn(|c| b[c][r]))
}

/// s −= aᵀ b, i.e. s[r][c] −= Σₘ a[m][r] b[m][c], over the first `rows` m (a and b are zero
/// past them).
#[inline(always)]
fn subtract_transposed_products<L: SixLanes>(s: &mut Block, a: &Block, b: &Block, rows: usize) {
    for (r, sr) in s.iter_mut().enumerate() {
        let mut v = L::load(sr);
        for (am, bm) in a.iter().zip(b).take(rows) {
            v = L::sub(v, L::mul(L::splat(am[r]), L::load(bm)));
        }
        L::store(v, sr);
    }
}

/// Factors a diagonal block of `size` rows in place and sets `inv` to the inverse of its
/// factor, or returns `None` if a pivot is not positive.
#[inline(always)]
fn factor_diagonal(s: &mut Block, size: usize, inv: &mut Block) -> Option<()> {
    // Loops of a fixed length unroll completely: no branches in the chain of pivots.
    match size {
        0 => factor_diagonal_of_size::<0>(s, inv),
        1 => factor_diagonal_of_size::<1>(s, inv),
        2 => factor_diagonal_of_size::<2>(s, inv),
        3 => factor_diagonal_of_size::<3>(s, inv),
        4 => factor_diagonal_of_size::<4>(s, inv),
        5 => factor_diagonal_of_size::<5>(s, inv),
        _ => factor_diagonal_of_size::<BLOCK>(s, inv),
    }
}

/// [`factor_diagonal`] for blocks of `SIZE` rows.
#[inline(always)]
fn factor_diagonal_of_size<const SIZE: usize>(s: &mut Block, inv: &mut Block) -> Option<()> {
    let inv_diag = cholesky_in_place::<SIZE>(s)?;
    lower_inverse::<SIZE>(s, &inv_diag, inv);
    Some(())
}

/// Overwrites the lower triangle of a symmetric block of `SIZE` rows with its Cholesky factor
/// (the upper triangle and the padding rows are left as they are, and are not read again), or
/// returns `None` if a pivot is not positive.
///
/// Returns the reciprocals of the factor's diagonal, so that no one divides again.
///
/// The pivots are found as in LDLᵀ, so that each waits on the one before through a division
/// only; their square roots, which L = L̃ √D needs, are taken afterwards, all at once. (Each
/// block's factor waits on the block before it, so this chain sets the factorisation's pace.)
#[inline(always)]
fn cholesky_in_place<const SIZE: usize>(s: &mut Block) -> Option<Lanes> {
    let size = SIZE;
    let mut inv_pivot = [1.0; BLOCK];
    let mut pivot = [1.0; BLOCK];
    for r in 0..size {
        // t_c = (L̃ D)_rc, while the row of s becomes L̃'s.
        let mut t = [0.0; BLOCK];
        for c in 0..r {
            let mut v = s[r][c];
            for m in 0..c {
                v -= t[m] * s[c][m];
            }
            t[c] = v;
            s[r][c] = v * inv_pivot[c];
        }
        let mut v = s[r][r];
        for m in 0..r {
            v -= t[m] * s[r][m];
        }
        if v.is_nan() || v <= 0.0 {
            return None;
        }
        pivot[r] = v;
        inv_pivot[r] = 1.0 / v;
    }
    let mut root = [1.0; BLOCK];
    let mut inv_diag = [1.0; BLOCK];
    for r in 0..size {
        root[r] = pivot[r].sqrt();
        inv_diag[r] = 1.0 / root[r];
    }
    for r in 0..size {
        for c in 0..r {
            s[r][c] *= root[c];
        }
        s[r][r] = root[r];
    }
    Some(inv_diag)
}

/// Inverse of the lower-triangular factor in the first `SIZE` rows of `l` (the rest are taken
/// as unit rows), given the reciprocals of its diagonal.
#[inline(always)]
fn lower_inverse<const SIZE: usize>(l: &Block, inv_diag: &Lanes, inv: &mut Block) {
    let size = SIZE;
    *inv = ZERO;
    for (c, ic) in inv.iter_mut().enumerate().skip(size) {
        ic[c] = 1.0;
    }
    for c in 0..size {
        inv[c][c] = inv_diag[c];
        for r in c + 1..size {
            let mut v = 0.0;
            for m in c..r {
                v += l[r][m] * inv[m][c];
            }
            inv[r][c] = -v * inv_diag[r];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense row-major SPD matrix over `nb` blocks of `sizes` rows (the rest padding), block
    /// (i, j), j < i, non-zero where `coupled(i, j)`.
    fn system(
        coupled: &dyn Fn(usize, usize) -> bool,
        sizes: &[usize],
        seed: u64,
    ) -> (usize, Vec<f64>, Vec<(usize, usize)>) {
        let mut index = Vec::new();
        for (i, &m) in sizes.iter().enumerate() {
            for r in 0..m {
                index.push((i, r));
            }
        }
        let n = index.len();
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut m = vec![0.0; n * n];
        for a in 0..n {
            for c in 0..a {
                let (bi, _) = index[a];
                let (bj, _) = index[c];
                if bi == bj || (bj < bi && coupled(bi, bj)) {
                    let v = next();
                    m[a * n + c] = v;
                    m[c * n + a] = v;
                }
            }
            m[a * n + a] = n as f64;
        }
        (n, m, index)
    }

    #[test]
    fn storage_follows_the_pattern_and_overflow_is_none() {
        let block = std::mem::size_of::<Block>();
        let index = std::mem::size_of::<usize>();
        assert_eq!(
            BlockCholesky::storage_bytes(1, 1),
            Some(4 * block + 5 * index)
        );
        // A 100,000-link chain: two blocks per row in the pattern, 6 blocks of 288 bytes per
        // row in all, about 0.2 GB.
        let bytes = BlockCholesky::storage_bytes(100_001, 2 * 100_001 - 1).unwrap();
        assert_eq!(bytes, 100_001 * (6 * block + 6 * index) - 2 * block - index);
        assert_eq!(BlockCholesky::storage_bytes(usize::MAX / 2, 1), None);
    }

    /// Writes the dense matrix `m` (rows `index` over blocks of `sizes`, coupled where
    /// `coupled`) into `chol`'s pattern, the padding rows of each diagonal block as unit rows.
    fn load(
        chol: &mut BlockCholesky,
        coupled: &dyn Fn(usize, usize) -> bool,
        sizes: &[usize],
        m: &[f64],
        index: &[(usize, usize)],
    ) {
        let (nb, n) = (sizes.len(), index.len());
        chol.begin(
            nb,
            |i, add| (0..i).filter(|&j| coupled(i, j)).for_each(&mut *add),
            |i| sizes[i],
        );
        for (i, &size) in sizes.iter().enumerate() {
            chol.row_mut(i).1.fill(ZERO);
            for r in size..BLOCK {
                chol.block_mut(i, i)[r][r] = 1.0;
            }
        }
        for a in 0..n {
            for c in 0..=a {
                let ((bi, r), (bj, s)) = (index[a], index[c]);
                if bi == bj || coupled(bi, bj) {
                    // Off-diagonal blocks go in transposed.
                    if bi == bj {
                        chol.block_mut(bi, bj)[r][s] = m[a * n + c];
                    } else {
                        chol.block_mut(bi, bj)[s][r] = m[a * n + c];
                    }
                }
            }
        }
    }

    /// Factors the loaded `chol` and solves m x = b for a known x, with the run-time kernels
    /// and the portable ones: both give the same bits, x to 1e-12, and zero padding.
    fn check_solve(
        chol: &mut BlockCholesky,
        case: usize,
        sizes: &[usize],
        m: &[f64],
        index: &[(usize, usize)],
    ) {
        let (nb, n) = (sizes.len(), index.len());
        let mut portable = chol.clone();
        chol.factor(0.0).expect("SPD");
        let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 1.5).collect();
        let mut b = vec![[0.0; BLOCK]; nb];
        for a in 0..n {
            let (bi, r) = index[a];
            b[bi][r] = (0..n).map(|c| m[a * n + c] * x[c]).sum();
        }
        let mut b_portable = b.clone();
        chol.solve(&mut b);
        // The run-time choice of kernels (AVX2 on this machine, most likely) gives the
        // portable kernels' results bit for bit.
        portable.factor_with::<Portable>(0.0).expect("SPD");
        portable.solve_with::<Portable>(&mut b_portable);
        let bits = |v: &[Lanes]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&b), bits(&b_portable), "case {case}: kernels differ");
        for a in 0..n {
            let (bi, r) = index[a];
            assert!(
                (b[bi][r] - x[a]).abs() < 1e-12,
                "case {case}: row {a}: {} against {}",
                b[bi][r],
                x[a]
            );
        }
        for (i, &size) in sizes.iter().enumerate() {
            assert!(
                b[i][size..].iter().all(|v| *v == 0.0),
                "padding of block {i}"
            );
        }
    }

    #[test]
    fn solves_block_systems_exactly_and_rejects_an_indefinite_one() {
        let profile = |first: &'static [usize]| move |i: usize, j: usize| j >= first[i];
        // A binary tree of joints numbered children first: joint 14 − k holds bar k, whose
        // children's joints are 14 − (2k + 1) and 14 − (2k + 2); each bar's three couple.
        let tree = |i: usize, j: usize| {
            (0..7).any(|k: usize| {
                let three = [14 - k, 13 - 2 * k, 12 - 2 * k];
                three.contains(&i) && three.contains(&j)
            })
        };
        let tree_sizes = [3, 3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5];
        type Coupling<'a> = &'a dyn Fn(usize, usize) -> bool;
        let cases: [(Coupling, &[usize]); 4] = [
            // A chain of ten hinges and a ball joint, then the stylus coupling to the last.
            (
                &profile(&[0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
                &[3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 3],
            ),
            // Closed loops: block rows reaching far back, one-row springs, a fixed joint.
            (
                &profile(&[0, 0, 0, 1, 0, 3, 2, 6]),
                &[5, 6, 5, 1, 5, 5, 1, 3],
            ),
            (&profile(&[0]), &[6]),
            (&tree, &tree_sizes),
        ];
        let mut chol = BlockCholesky::with_capacity(16, 16 * 17 / 2);
        for (seed, (coupled, sizes)) in cases.iter().enumerate() {
            let (_, m, index) = system(*coupled, sizes, seed as u64 + 7);
            load(&mut chol, *coupled, sizes, &m, &index);
            if seed == 3 {
                // No fill: the 15 diagonal blocks and the 21 couplings.
                assert_eq!(chol.stored_blocks(), 15 + 21);
            }
            check_solve(&mut chol, seed, sizes, &m, &index);
        }
        chol.begin(1, |_, _| {}, |_| BLOCK);
        let bad = chol.block_mut(0, 0);
        *bad = ZERO;
        for (r, row) in bad.iter_mut().enumerate() {
            row[r] = 1.0;
        }
        bad[1][0] = 2.0;
        assert!(chol.factor(0.0).is_none());
    }
}
