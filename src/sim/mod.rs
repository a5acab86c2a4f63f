//! The multibody solver: bodies, joints, force elements, the step, diagnostics, scene files.
pub mod wind;
