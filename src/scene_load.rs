//! The one way every command loads a scene (`simulate`, `demo`, `sandbox`, `run`'s config): a
//! scene TOML file as it is, or a URDF / MJCF model imported in memory with the default
//! import options by the same emitter as `scene import` and parsed as its scene text, so that
//! `scene import FILE --out S.toml` followed by `simulate S.toml` gives the same bits as
//! `simulate FILE`. The importer's warnings (what the scene cannot express yet, elements
//! ignored) go to stderr once per load.

use std::path::Path;

use ar_dynamics::{Scene, SceneError};
use ar_import::{ImportError, ImportOptions};

/// Why a scene could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SceneLoadError {
    /// The model file could not be imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// The scene (or the imported scene text) is invalid.
    #[error(transparent)]
    Scene(#[from] SceneError),
}

/// Whether `path` names a model file (URDF, MJCF) rather than a scene.
pub fn is_model_file(path: &Path) -> bool {
    ar_import::Format::of_path(path).is_some()
}

/// Loads the scene at `path` (see the module docs).
pub fn load_scene(path: &Path) -> Result<Scene, SceneLoadError> {
    if !is_model_file(path) {
        return Ok(Scene::load(path)?);
    }
    let emitted = ar_import::import(path, &ImportOptions::default())?;
    for w in &emitted.warnings {
        eprintln!("warning: {w}");
    }
    Ok(Scene::parse(&emitted.text, path)?)
}

/// The scene text of `path`: a scene file's own text, or a model's imported scene (without
/// printing the warnings again), e.g. for a recording's copy of the scene, which a replay
/// then parses to the same bits.
pub fn scene_text(path: &Path) -> Result<String, SceneLoadError> {
    if !is_model_file(path) {
        return ar_io::input_file::read_text(path).map_err(|cause| {
            SceneLoadError::Scene(SceneError::Io {
                path: path.to_owned(),
                cause,
            })
        });
    }
    Ok(ar_import::import(path, &ImportOptions::default())?.text)
}
