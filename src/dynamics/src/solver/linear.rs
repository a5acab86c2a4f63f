//! How each linearisation's linear problem is solved: chosen once, when the simulation is
//! built, from its parameters' method and the size of its spring network, and kept (the
//! stages ask [`LinearSolve`], they do not derive the choice again).

use super::direct::DirectSolver;
use super::SolverMethod;

/// The linear solve of the velocity stage (see [`super`]'s stage 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinearSolve {
    /// The paper's sequential impulses: Gauss–Seidel sweeps, each element solving its own
    /// block ([`SolverMethod::GaussSeidel`]).
    Sweeps,
    /// Every element's rows coupled in one sparse block Cholesky factor of the dual system
    /// J M⁻¹ Jᵀ (+ the soft terms): the default.
    Blocks,
    /// A large spring network (a cloth, a lattice) solved in the bodies' velocities with a
    /// sparse Cholesky factor of the primal system ([`super::primal`]), whose stage takes
    /// the rows at the current prediction in every iteration.
    Primal,
}

impl LinearSolve {
    /// The solve for `method`, given the coupled system that was built for the model (it
    /// holds the primal solve when the network asks for one: see [`DirectSolver::new`]).
    pub(crate) fn choose(method: SolverMethod, direct: &DirectSolver) -> Self {
        match method {
            SolverMethod::GaussSeidel => Self::Sweeps,
            SolverMethod::Direct if direct.primal.is_some() => Self::Primal,
            SolverMethod::Direct => Self::Blocks,
        }
    }

    /// Whether the rows are solved together (a factorisation), not element by element.
    pub(crate) fn is_coupled(self) -> bool {
        self != Self::Sweeps
    }
}
