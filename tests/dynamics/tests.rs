//! The solver crate's integration tests, one module per concern, in one test binary (not
//! `main.rs`: the application package would take that for a test of its own): the
//! crate is compiled fully optimised in the test build too, and sixteen separately linked
//! binaries cost two minutes of a cold `make test`. Run one concern with its module path,
//! e.g. `cargo test -p ar-dynamics --test dynamics golden::`. The allocation counters
//! (`solver_alloc.rs`, `articulated_alloc.rs`) stay binaries of their own: each installs a
//! global allocator.

mod convergence_order;
mod settle;

mod articulated_loops;
mod articulated_vs_default;
mod contact;
mod contact_presence;
mod contact_tolerance;
mod convergence;
mod convergence_free_body;
mod convex;
mod deformable;
mod deformable_beam;
mod deformable_scenes;
mod forces;
mod free_rotation;
mod function_length;
mod golden;
mod incline_friction;
mod joint_damping;
mod joint_limits;
mod lever;
mod mobile_scale;
mod pile_generate;
mod sleeping;
mod solver;
mod solver_failures;
mod spin_friction;
mod visuals;
mod wind;
