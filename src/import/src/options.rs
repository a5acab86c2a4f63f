//! What the user says about an import on the command line (`scene import`, or any command given
//! a `.urdf` or MJCF file): where the root stands, the scale, initial joint positions.

use std::path::PathBuf;

/// Options of an import; `Default` is the root fixed at the marker's origin, scale 1, every joint
/// at its file's initial position.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Where the root link's frame stands (world = marker frame, m): `--base-at x,y,z`.
    pub base_at_m: [f64; 3],
    /// The root link's rotation (rotation vector, world axes, rad): `--base-rotation rx,ry,rz`.
    pub base_rotation_rad: [f64; 3],
    /// Scale of every length (a model in mm: 0.001): `--scale`.
    pub scale: f64,
    /// Initial joint positions (rad or m) by joint name: `--joint NAME=VALUE`, repeatable.
    pub joint_positions: Vec<(String, f64)>,
    /// MJCF: the keyframe whose `qpos` sets the initial positions: `--keyframe NAME`.
    pub keyframe: Option<String>,
    /// The root link moves freely instead of being fixed to the ground: `--floating-base`.
    pub floating_base: bool,
    /// Where `package://NAME/…` resolves (`--package-path`, then `ROS_PACKAGE_PATH`).
    pub package_paths: Vec<PathBuf>,
    /// Leave the file's joint limits out of the scene (`--no-limits`): the articulated method
    /// refuses scene-file limits, and a comparison with a solver that has none (Pinocchio's
    /// ABA) needs them off.
    pub ignore_limits: bool,
    /// Leave the file's joint damping and friction out of the scene (`--no-damping`): free
    /// motion to compare with a solver that has none (Pinocchio's ABA).
    pub ignore_damping: bool,
    /// Make the links' collision geoms the bodies' colliders, with a `[contact]` table and
    /// the desk plane z = 0 (`--collisions`; see `emit::collisions`).
    pub collisions: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            base_at_m: [0.0; 3],
            base_rotation_rad: [0.0; 3],
            scale: 1.0,
            joint_positions: Vec::new(),
            keyframe: None,
            floating_base: false,
            package_paths: Vec::new(),
            ignore_limits: false,
            ignore_damping: false,
            collisions: false,
        }
    }
}
