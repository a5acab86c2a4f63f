//! Where scene files are: a scene named on the command line (`ten_pendula`) is a file of the
//! shipped scenes folder (`assets/scenes/ten_pendula.toml`), looked up next to the working
//! directory first and then in the source tree the program was built from; a name that is no
//! shipped scene may be a shipped robot (`ar6` → `assets/robots/ar6.urdf`, looked up the same
//! way), which every command imports as it takes a URDF file; anything with an extension or a
//! folder is a path.

use std::path::{Path, PathBuf};

/// The shipped scenes' folders, in the order they are searched: next to the working
/// directory, then in the source tree this crate was built from.
fn scene_dirs() -> [PathBuf; 2] {
    [
        PathBuf::from("assets/scenes"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes"),
    ]
}

/// The shipped robots' folders (URDF files), searched as [`scene_dirs`] are.
fn robot_dirs() -> [PathBuf; 2] {
    [
        PathBuf::from("assets/robots"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/robots"),
    ]
}

/// Finds a scene by name (`ten_pendula` → `assets/scenes/ten_pendula.toml`), or a shipped
/// robot by name (`ar6` → `assets/robots/ar6.urdf`) when no scene has that name, or takes it
/// as a path (see the module docs). A name that is found nowhere gives the first place
/// searched, so that the error names a file.
pub fn resolve_scene(name_or_path: &str) -> PathBuf {
    let as_path = Path::new(name_or_path);
    if as_path.extension().is_some() || as_path.components().count() > 1 {
        return as_path.to_owned();
    }
    let scenes = scene_dirs().map(|d| d.join(format!("{name_or_path}.toml")));
    let robots = robot_dirs().map(|d| d.join(format!("{name_or_path}.urdf")));
    scenes
        .iter()
        .chain(&robots)
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| scenes[0].clone())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_robot_is_found_by_name_after_the_scenes() {
        let ar6 = resolve_scene("ar6");
        assert!(ar6.ends_with("assets/robots/ar6.urdf"), "{}", ar6.display());
        assert!(ar6.is_file(), "{}", ar6.display());
        let scene = resolve_scene("ten_pendula");
        assert!(scene.ends_with("assets/scenes/ten_pendula.toml"));
        // Unknown names still point at the scenes folder, for the error message.
        let unknown = resolve_scene("no_such_thing");
        assert!(unknown.ends_with("assets/scenes/no_such_thing.toml"));
    }
}
