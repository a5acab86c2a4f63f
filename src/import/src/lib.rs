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
pub mod mesh;
pub mod mjcf;
pub mod model;
pub mod options;
pub mod urdf;
mod xml_file;

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

/// Reads `path` (URDF or MJCF by its extension) and writes it as scene text under `options`:
/// the one import that `scene import` and every command taking a scene share, so that a file
/// imported and then simulated gives the same bits as the model simulated directly.
pub fn import(path: &std::path::Path, options: &ImportOptions) -> Result<Emitted, ImportError> {
    let model = match Format::of_path(path) {
        Some(Format::Urdf) => {
            if let Some(k) = &options.keyframe {
                return Err(ImportError::Invalid {
                    at: Location {
                        file: path.to_owned(),
                        line: 0,
                    },
                    element: "robot".into(),
                    message: format!(
                        "--keyframe {k}: a URDF file has no keyframes (set positions with --joint)"
                    ),
                });
            }
            urdf::read(path, options)?
        }
        Some(Format::Mjcf) => mjcf::read(path, options)?,
        None => {
            return Err(ImportError::Invalid {
                at: Location {
                    file: path.to_owned(),
                    line: 0,
                },
                element: "file".into(),
                message: "not a model file this program reads (.urdf, or MJCF .xml / .mjcf)".into(),
            })
        }
    };
    scene_toml(&model, options)
}
