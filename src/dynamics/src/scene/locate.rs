//! Where scene files are: a scene named on the command line (`ten_pendula`) is a file of the
//! shipped scenes folder (`assets/scenes/ten_pendula.toml`), looked up next to the working
//! directory first and then in the source tree the program was built from; anything with an
//! extension or a folder is a path.

use std::path::{Path, PathBuf};

/// The shipped scenes' folders, in the order they are searched: next to the working
/// directory, then in the source tree this crate was built from.
fn scene_dirs() -> [PathBuf; 2] {
    [
        PathBuf::from("assets/scenes"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes"),
    ]
}

/// Finds a scene by name (`ten_pendula` → `assets/scenes/ten_pendula.toml`) or takes it as a
/// path (see the module docs). A name that is found nowhere gives the first place searched,
/// so that the error names a file.
pub fn resolve_scene(name_or_path: &str) -> PathBuf {
    let as_path = Path::new(name_or_path);
    if as_path.extension().is_some() || as_path.components().count() > 1 {
        return as_path.to_owned();
    }
    let file = format!("{name_or_path}.toml");
    let candidates = scene_dirs().map(|d| d.join(&file));
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

/// The shipped scenes by name, sorted (from the first scenes folder that exists).
pub fn shipped_scene_names() -> Vec<String> {
    let Some(entries) = scene_dirs().iter().find_map(|d| std::fs::read_dir(d).ok()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "toml").then(|| scene_name(&path))
        })
        .collect();
    names.sort();
    names
}

/// The scene's name for the HUD and summaries: the file stem (the whole path if it has none).
pub fn scene_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
