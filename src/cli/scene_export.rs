//! `scene export SCENE --mjcf OUT.xml`: a scene as MuJoCo's MJCF (see [`ar_import::export`]),
//! so that a mechanism can be cross-checked in MuJoCo. What MJCF cannot hold is listed on
//! stderr, one warning each; the file is written atomically (an existing file is replaced only
//! by a complete document, and nothing is written when the scene is refused).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

/// Arguments of `scene export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Scene name (a file in assets/scenes/, e.g. cross_lift) or path to a scene file.
    pub scene: String,
    /// Write the scene as MJCF (MuJoCo's XML) to this file.
    #[arg(long, value_name = "OUT.xml")]
    pub mjcf: PathBuf,
}

/// Runs `scene export`.
pub fn run(args: ExportArgs) -> Result<()> {
    let path = ar_dynamics::scene::resolve_scene(&args.scene);
    let scene = ar_dynamics::Scene::load(&path)?;
    let exported = ar_import::export::mjcf(&scene);
    for w in &exported.warnings {
        eprintln!("warning: {}: {w}", path.display());
    }
    ar_io::atomic_write::write_atomic(&args.mjcf, exported.text.as_bytes())
        .with_context(|| format!("cannot write the MJCF to {}", args.mjcf.display()))
}
