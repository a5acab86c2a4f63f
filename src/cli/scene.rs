//! `scene`: writes parametric scenes (a chain of N Table 1 pendula, a balanced binary mobile
//! of depth D, a pile of N bodies) as scene TOML to stdout or to a file (see [`ar_dynamics::scene::generate`]), and
//! imports URDF and MJCF models as scene files (`scene import`, [`super::scene_import`]).

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use ar_dynamics::scene::generate::{chain_toml, mobile_toml};
use ar_dynamics::scene::generate_pile::pile_toml;

/// What `scene` generates.
#[derive(Subcommand, Debug)]
pub enum SceneCommand {
    /// A chain of N pendula of the paper's Table 1 (ball joint at the pivot, hinges below),
    /// its free end `tip` at (0, 0, 0.1) m like the ten pendula's, so the ten-pendula drag
    /// script drives it. `--links 10` is assets/scenes/ten_pendula.toml.
    Chain(ChainArgs),
    /// A balanced binary Calder mobile of D levels (2^(D-1) - 1 bars, 2^(D-1) fish), masses
    /// computed so that every bar hangs level.
    Mobile(MobileArgs),
    /// A pile of N bodies (spheres, cubes, capsules and convex octahedra in turn) dropped into
    /// a bin on the desk, the bin's width grown with N; `simulate` it, or `sandbox` it to grab
    /// any body with the mouse.
    Pile(PileArgs),
    /// A URDF or MJCF model as a scene file (bodies at their centres of mass, fixed links
    /// merged and kept as grab points); `simulate`, `demo`, `sandbox` and `run` also take the
    /// model file directly, imported the same way with the default options.
    Import(super::scene_import::ImportArgs),
    /// A scene as MuJoCo's MJCF (XML), to cross-check a mechanism in MuJoCo.
    Export(super::scene_export::ExportArgs),
}

/// Arguments of `scene chain`.
#[derive(Args, Debug)]
pub struct ChainArgs {
    /// Number of pendula (1 to 100000).
    #[arg(long, value_name = "N")]
    pub links: usize,
    /// The pendulum: `table1` (50 mm, 0.1 kg, [21, 21, 0.5] kg·mm², the paper's Table 1).
    #[arg(long, value_name = "KIND", default_value = "table1", value_parser = ["table1"])]
    pub pendulum: String,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `scene mobile`.
#[derive(Args, Debug)]
pub struct MobileArgs {
    /// Number of levels, the last one of fish (2 to 16, so that its 2^D − 1 parts stay within
    /// the scene's body limit; depth 4 has 15 parts, 9 has 511).
    #[arg(long, value_name = "D")]
    pub depth: usize,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Arguments of `scene pile`.
#[derive(Args, Debug)]
pub struct PileArgs {
    /// Number of bodies (1 to 100000).
    #[arg(long, value_name = "N")]
    pub bodies: usize,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where the scene goes.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Write the scene to this file (atomically: an existing file is replaced only by a
    /// complete scene) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `scene`.
pub fn run(command: SceneCommand) -> Result<()> {
    let (text, output) = match command {
        SceneCommand::Chain(args) => (chain_toml(args.links)?, args.output),
        SceneCommand::Mobile(args) => (mobile_toml(args.depth)?, args.output),
        SceneCommand::Pile(args) => (pile_toml(args.bodies)?, args.output),
        SceneCommand::Import(args) => return super::scene_import::run(args),
        SceneCommand::Export(args) => return super::scene_export::run(args),
    };
    match output.out {
        Some(path) => ar_io::atomic_write::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write the scene to {}", path.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                // A reader that stops early (`| head`) is not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.context("cannot write the scene to stdout"),
            }
        }
    }
}
