//! The reference manual: everything the README's short guide leaves out, one page per topic.
//!
//! These modules hold no code; `cargo doc --no-deps --open` renders them (the Markdown sources
//! are next to this file, `src/manual/*.md`, readable as they are). Every command also has
//! `ar-multibody <command> --help`.
//!
//! - [`architecture`]: the crates, the threads and channels, the stages of a step, and where to
//!   add a joint, a contact shape, a solver stage, a device twin or a command (read it first).
//! - [`commands`]: `demo`, `run`, `sandbox`, `simulate` (and its CSV columns), `scene`,
//!   `arm simulate`, `arm probe`, `track`, `calibrate camera`, `calibrate tracker`.
//! - [`scene_files`]: the scene format (bodies, joints, springs, grab points, forces, solver).
//! - [`solver`]: how a step is solved, its failures, energy bookkeeping, Gauss–Seidel.
//! - [`contact`]: collisions, friction, restitution, joint limits, the inequality methods.
//! - [`wind_and_mobiles`]: the microphone's wind and the Calder mobiles.
//! - [`articulated`]: the reduced-coordinate method.
//! - [`import`]: URDF (and MJCF) models as scenes: what maps to what, what is left out.
//! - [`mjcf`]: MuJoCo's MJCF read (the subset) and scenes written as MJCF; the MuJoCo check.
//! - [`hardware`]: camera and marker, digitizer arm, calibration order, microphone, HMD.
//! - [`testing`]: the test tiers and hardware tests.
//! - [`performance`]: current figures and the commands that print them.

#[doc = include_str!("architecture.md")]
pub mod architecture {}

#[doc = include_str!("commands.md")]
pub mod commands {}

#[doc = include_str!("scene_files.md")]
pub mod scene_files {}

#[doc = include_str!("solver.md")]
pub mod solver {}

#[doc = include_str!("contact.md")]
pub mod contact {}

#[doc = include_str!("wind_and_mobiles.md")]
pub mod wind_and_mobiles {}

#[doc = include_str!("articulated.md")]
pub mod articulated {}

#[doc = include_str!("import.md")]
pub mod import {}

#[doc = include_str!("mjcf.md")]
pub mod mjcf {}

#[doc = include_str!("hardware.md")]
pub mod hardware {}

#[doc = include_str!("testing.md")]
pub mod testing {}

#[doc = include_str!("performance.md")]
pub mod performance {}

#[cfg(test)]
mod tests {
    /// Every path the architecture page names (a `code` span with a `/` and no spaces)
    /// exists, so that the page a newcomer reads first does not send them to a file that
    /// moved.
    #[test]
    fn every_path_the_architecture_page_names_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let page = include_str!("architecture.md");
        let paths: Vec<&str> = page
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| s.contains('/') && !s.contains(' ') && !s.contains("::"))
            .collect();
        assert!(paths.len() > 40, "only {} paths found", paths.len());
        let missing: Vec<&&str> = paths.iter().filter(|p| !root.join(p).exists()).collect();
        assert!(
            missing.is_empty(),
            "architecture.md names missing paths: {missing:?}"
        );
    }
}
