//! Version stamps of what the step's caches are computed from.
//!
//! A step evaluates some quantities more than once per prediction or per set of rows, and
//! keeps them: ψ at the predicted poses, the springs' extensions there, each joint's own
//! block factor of its rows, the geometry the next step may start from, the Newton inertia
//! of the turning stiffness, the factor of the coupled matrix. Each input has a [`Stamp`]
//! that moves on whenever the input changes (the predicted poses in `predict_all` and the
//! contact projection, the rows when they are rebuilt, the turning stiffness when it is
//! collected, the coupled matrix at each step and when a chord contracts too slowly), and
//! each cache records the stamp it was made at. A cache is current exactly when its stamp
//! equals its input's: no flag has to be cleared by whoever changes an input.

/// A version of one input of the step's caches (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stamp(u64);

impl Stamp {
    /// The stamp of a cache that was never made: older than every version of its input
    /// (inputs start at version 1).
    pub(crate) const NEVER: Stamp = Stamp(0);

    /// The first version of an input.
    pub(crate) const FIRST: Stamp = Stamp(1);

    /// Moves the input on to its next version.
    pub(crate) fn advance(&mut self) {
        self.0 += 1;
    }
}

/// The current versions of the inputs of the step's caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Versions {
    /// The predicted end poses (`BodyScratch::predicted`).
    pub(crate) prediction: Stamp,
    /// The joints' rows (`JointBlock::rows`) and the stylus arm they are factored with.
    pub(crate) rows: Stamp,
    /// The turning stiffness A = ∂τ/∂ω′ the Newton gain is made from (`NewtonGain::turning`).
    pub(crate) turning: Stamp,
    /// The coupled matrix the linear solve should use: it moves on with each step's rows, and
    /// when a chord (the factor of earlier rows and weights) contracts too slowly.
    pub(crate) matrix: Stamp,
}

impl Default for Versions {
    fn default() -> Self {
        Self {
            prediction: Stamp::FIRST,
            rows: Stamp::FIRST,
            turning: Stamp::FIRST,
            matrix: Stamp::FIRST,
        }
    }
}
