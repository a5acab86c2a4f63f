//! The per-step state of a simulation and what is measured of it.

pub mod diagnostics;
