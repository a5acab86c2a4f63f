//! Driving a simulation from outside: stylus scripts (a CSV of tip positions and clip states)
//! and the scripted loop behind `simulate`, the demo and the acceptance tests, and the CSV
//! formats of a run.

pub mod csv;
pub mod script;
pub mod scripted;
