//! Mechanisms brought from other tools: URDF (ROS, CAD exporters) and MJCF (MuJoCo) files are
//! read into one kinematic-tree [`model::Model`], which [`emit`] turns into the text of an
//! ar-multibody scene (TOML, world frame at the initial pose), so that every command that takes
//! a scene takes these files too, and `scene import` followed by `simulate` gives the same bits
//! as simulating the file directly.
//!
//! The importers' output is scene text, parsed and validated by
//! `ar_dynamics::scene::Scene::parse` like any hand-written scene; the exporter goes the other
//! way, from a validated `ar_dynamics::scene::Scene` to MJCF.

pub mod emit;
pub mod error;
pub mod export;
pub mod mjcf;
pub mod model;
pub mod options;

pub use emit::{scene_toml, Emitted};
pub use error::{ImportError, Location};
pub use model::Model;
pub use options::ImportOptions;

/// The formats this crate reads, told apart by the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `.urdf`
    Urdf,
    /// `.xml` or `.mjcf` (MuJoCo's MJCF)
    Mjcf,
}

impl Format {
    /// The format of a file by its extension, or `None` for a file this crate does not read
    /// (a `.toml` scene, say).
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "urdf" => Some(Format::Urdf),
            "xml" | "mjcf" => Some(Format::Mjcf),
            _ => None,
        }
    }
}
