//! `scene import FILE.urdf|FILE.xml --out scene.toml`: a URDF or MJCF model as a scene file,
//! with the same importer every command uses when given a model directly (see
//! `ar_multibody::scene_load`). The scene text is validated by the scene loader before it is
//! written, and written atomically: on any error nothing is written and an existing file is
//! left as it was.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use ar_import::ImportOptions;

/// Arguments of `scene import`.
#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The model: a URDF file (`.urdf`) or MuJoCo's MJCF (`.xml`, `.mjcf`).
    pub file: PathBuf,
    /// The scene file to write (atomically; an existing file is replaced only by a complete,
    /// valid scene).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Where the root link's frame stands in the world (the marker frame), m.
    #[arg(long, value_name = "X,Y,Z", value_parser = three, allow_hyphen_values = true)]
    pub base_at: Option<[f64; 3]>,
    /// The root link's rotation in the world, a rotation vector (axis × angle), rad.
    #[arg(long, value_name = "RX,RY,RZ", value_parser = three, allow_hyphen_values = true)]
    pub base_rotation: Option<[f64; 3]>,
    /// Scale of every length of the model (0.001 for a model in mm); masses stay.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f64,
    /// The initial position of a joint (rad, or the file's length unit for a prismatic
    /// joint), overriding the file's; repeatable.
    #[arg(long = "joint", value_name = "NAME=VALUE", value_parser = joint_value, allow_hyphen_values = true)]
    pub joints: Vec<(String, f64)>,
    /// MJCF: the keyframe whose `qpos` gives the initial positions.
    #[arg(long, value_name = "NAME")]
    pub keyframe: Option<String>,
    /// The root link moves freely instead of being fixed to the ground.
    #[arg(long)]
    pub floating_base: bool,
    /// Where `package://NAME/...` mesh paths resolve: the folder holding the package NAME
    /// (repeatable; searched before ROS_PACKAGE_PATH).
    #[arg(long = "package-path", value_name = "DIR")]
    pub package_paths: Vec<PathBuf>,
    /// Leave the model's joint limits out of the scene (the articulated method refuses
    /// scene-file limits; a comparison with a solver without limits needs them off).
    #[arg(long)]
    pub no_limits: bool,
    /// Leave the model's joint damping and friction out of the scene (free motion, as a
    /// comparison with a solver without them needs).
    #[arg(long)]
    pub no_damping: bool,
    /// Make the links' collision geoms the bodies' colliders (meshes and boxes as convex
    /// hulls, in the body frame), with a `[contact]` table and the desk plane z = 0; links
    /// joined by a joint never collide with each other.
    #[arg(long)]
    pub collisions: bool,
}

fn three(s: &str) -> Result<[f64; 3], String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<f64>().map_err(|e| format!("{x:?}: {e}")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        &[a, b, c] if v.iter().all(|x| x.is_finite()) => Ok([a, b, c]),
        _ => Err(format!("expected three finite numbers x,y,z, got {s:?}")),
    }
}

fn joint_value(s: &str) -> Result<(String, f64), String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=VALUE, got {s:?}"))?;
    let v: f64 = value
        .trim()
        .parse()
        .map_err(|e| format!("{name}={value}: {e}"))?;
    if !v.is_finite() {
        return Err(format!("{name}={value}: not a finite number"));
    }
    Ok((name.to_owned(), v))
}

/// Runs `scene import`.
pub fn run(args: ImportArgs) -> Result<()> {
    let same = |a: &std::path::Path, b: &std::path::Path| match (a.canonicalize(), b.canonicalize())
    {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same(&args.file, &args.out) {
        bail!(
            "--out {} is the model file itself: write the scene to another file",
            args.out.display()
        );
    }
    let options = ImportOptions {
        base_at_m: args.base_at.unwrap_or([0.0; 3]),
        base_rotation_rad: args.base_rotation.unwrap_or([0.0; 3]),
        scale: args.scale,
        joint_positions: args.joints,
        keyframe: args.keyframe,
        floating_base: args.floating_base,
        package_paths: args.package_paths,
        ignore_limits: args.no_limits,
        ignore_damping: args.no_damping,
        collisions: args.collisions,
    };
    let emitted = ar_import::import(&args.file, &options)?;
    for w in &emitted.warnings {
        eprintln!("warning: {w}");
    }
    // What is written must load: check it as the scene it will be.
    ar_dynamics::Scene::parse(&emitted.text, &args.out)
        .with_context(|| format!("the scene imported from {}", args.file.display()))?;
    ar_io::atomic_write::write_atomic(&args.out, emitted.text.as_bytes())
        .with_context(|| format!("cannot write the scene to {}", args.out.display()))
}
