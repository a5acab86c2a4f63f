//! The linear algebra of the solver: small symmetric blocks and their Cholesky factors, the
//! sparse block Cholesky factorisation of the coupled system and its pattern, six-lane
//! kernels, and a dense LU whose buffers are kept.

pub mod block;
pub mod block_cholesky;
pub mod block_pattern;
pub mod dense_lu;
pub mod lanes;
