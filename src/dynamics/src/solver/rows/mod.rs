//! The rows of the step's elements: each joint's constraint rows, each spring's soft row and
//! the stylus spring's three soft rows, evaluated at the start and predicted poses.

pub(super) mod joint;
pub(super) mod spring;
pub(super) mod stylus;
