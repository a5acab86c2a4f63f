//! The kinematic tree both readers produce: links with their inertia and geometry in their own
//! frames, joints that place a child link in its parent's frame, and the loop-closing and
//! contact-exclusion rows a tree cannot hold. Frames are relative (as in URDF and MJCF); the
//! emitter places everything in the world at the initial joint positions.
//!
//! Lengths are in the file's units until the emitter applies [`crate::ImportOptions::scale`].

use nalgebra::{Isometry3, Matrix3, Unit, Vector3};
use std::path::PathBuf;

use crate::error::Location;

/// The name of the fixed world frame as a joint's parent (URDF has none: its root link's parent
/// is the world through the base options; MJCF's `worldbody` is this).
pub const WORLD: &str = "world";

/// A mechanism read from a file.
#[derive(Clone, Debug)]
pub struct Model {
    /// The model's name (URDF `<robot name>`, MJCF `<mujoco model>`).
    pub name: String,
    /// The file it was read from.
    pub source: PathBuf,
    /// Gravity (m/s², world) when the file sets it (MJCF `<option gravity>`).
    pub gravity_m_per_s2: Option<[f64; 3]>,
    /// The time step when the file sets it (MJCF `<option timestep>`).
    pub dt_secs: Option<f64>,
    /// Links in file order; names are unique.
    pub links: Vec<Link>,
    /// Joints in file order: each child link has exactly one (its parent is a link or
    /// [`WORLD`]); a root link without one is placed by the base options.
    pub joints: Vec<Joint>,
    /// Loop closures (MJCF `<equality connect|weld>`).
    pub loops: Vec<LoopClosure>,
    /// Link pairs that never collide (MJCF `<contact><exclude>`).
    pub contact_excludes: Vec<(String, String)>,
    /// Initial joint positions the file itself gives (MJCF `qpos0`, a keyframe), by joint name;
    /// the command line's `--joint` overrides them.
    pub initial_positions: Vec<(String, Vec<f64>)>,
    /// Initial joint velocities the file gives (MJCF keyframe `qvel`), by joint name, in
    /// MuJoCo's convention: revolute and prismatic one rate (rad/s, m/s); ball the angular
    /// velocity of the child relative to the parent in child axes (3); free the velocity of
    /// the child frame's origin in parent (world) axes and the angular velocity in child axes
    /// (6). Joints not listed start at rest.
    pub initial_velocities: Vec<(String, Vec<f64>)>,
    /// What the reader met and did not take (each once, with where), for the warning list.
    pub ignored: Vec<Ignored>,
}

/// A rigid link.
#[derive(Clone, Debug)]
pub struct Link {
    /// Unique name (the scene's body name, the grab point's prefix).
    pub name: String,
    /// Mass (kg); 0 on a link that only carries geometry (merged into its parent or fixed).
    pub mass_kg: f64,
    /// Centre of mass in the link frame.
    pub com_in_link: Vector3<f64>,
    /// Inertia tensor about the centre of mass, in link axes (kg·m²).
    pub inertia_in_link_kg_m2: Matrix3<f64>,
    /// What is drawn.
    pub visuals: Vec<Geom>,
    /// What collides.
    pub collisions: Vec<Geom>,
    /// Where the link is defined.
    pub at: Location,
}

/// A shape placed in its link's frame.
#[derive(Clone, Debug)]
pub struct Geom {
    /// The shape.
    pub shape: GeomShape,
    /// The shape's frame in the link frame (a cylinder's and capsule's axis is its z).
    pub link_from_geom: Isometry3<f64>,
    /// Colour (linear RGBA, 0..1) when the file gives one.
    pub rgba: Option<[f64; 4]>,
    /// Where it is defined.
    pub at: Location,
}

/// Shapes of URDF and MJCF geometry.
#[derive(Clone, Debug)]
pub enum GeomShape {
    /// Full extents (m).
    Box { size: Vector3<f64> },
    /// Along z.
    Cylinder { radius: f64, length: f64 },
    /// Along z; `length` between the two sphere centres.
    Capsule { radius: f64, length: f64 },
    /// A sphere.
    Sphere { radius: f64 },
    /// Semi-axes.
    Ellipsoid { radii: Vector3<f64> },
    /// The plane z = 0 of the geom frame (MJCF `plane`: a desk or floor).
    Plane,
    /// A mesh file (STL, OBJ, DAE), already resolved to a path, with its scale per axis.
    Mesh { path: PathBuf, scale: Vector3<f64> },
}

/// A joint that places `child` in `parent`'s frame.
#[derive(Clone, Debug)]
pub struct Joint {
    /// Unique name (the scene's joint name, CSV columns).
    pub name: String,
    /// What moves.
    pub kind: JointKind,
    /// Parent link name, or [`WORLD`].
    pub parent: String,
    /// Child link name.
    pub child: String,
    /// The child link's frame in the parent link's frame at joint position zero (URDF
    /// `<origin>`; MJCF the body's `pos`/`quat`/...).
    pub parent_from_child: Isometry3<f64>,
    /// The joint's point in the child frame (URDF: the origin; MJCF: the joint's `pos`).
    pub anchor_in_child: Vector3<f64>,
    /// Hinge or slide axis in the child frame (unit).
    pub axis_in_child: Unit<Vector3<f64>>,
    /// Position limits (rad or m, absolute joint positions as in the file), if any.
    pub limits: Option<[f64; 2]>,
    /// Viscous damping (N·m·s/rad or N·s/m).
    pub damping: f64,
    /// Coulomb friction (N·m or N).
    pub friction: f64,
    /// Rotor inertia added on the joint axis (MJCF `armature`, kg·m² or kg).
    pub armature: f64,
    /// A spring on the joint: stiffness (N·m/rad or N/m) and its rest position (`springref`).
    pub stiffness: f64,
    /// The spring's rest position (rad or m).
    pub spring_ref: f64,
    /// `<mimic joint multiplier offset>`: this joint's position = multiplier · other + offset.
    pub mimic: Option<Mimic>,
    /// Where the joint is defined.
    pub at: Location,
}

impl Joint {
    /// A joint of `kind` placing `child` at `parent_from_child` in `parent`, its anchor at the
    /// child frame's origin, with no limits, damping, friction, armature, spring or mimic.
    pub fn new(
        name: impl Into<String>,
        kind: JointKind,
        parent: impl Into<String>,
        child: impl Into<String>,
        parent_from_child: Isometry3<f64>,
        axis_in_child: Unit<Vector3<f64>>,
        at: Location,
    ) -> Self {
        Self {
            name: name.into(),
            kind,
            parent: parent.into(),
            child: child.into(),
            parent_from_child,
            anchor_in_child: Vector3::zeros(),
            axis_in_child,
            limits: None,
            damping: 0.0,
            friction: 0.0,
            armature: 0.0,
            stiffness: 0.0,
            spring_ref: 0.0,
            mimic: None,
            at,
        }
    }
}

/// Joint kinds of both formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// A hinge with or without limits (URDF `revolute`/`continuous`, MJCF `hinge`).
    Revolute,
    /// A slider (URDF `prismatic`, MJCF `slide`).
    Prismatic,
    /// Rigidly attached (URDF `fixed`; an MJCF body without joints).
    Fixed,
    /// A ball joint at the anchor (MJCF `ball`).
    Ball,
    /// Six degrees of freedom (URDF `floating`, MJCF `free`).
    Free,
    /// Planar (URDF `planar`): in the plane normal to the axis.
    Planar,
}

/// A joint that copies another's position.
#[derive(Clone, Debug)]
pub struct Mimic {
    /// The joint copied.
    pub joint: String,
    /// Gain.
    pub multiplier: f64,
    /// Offset (rad or m).
    pub offset: f64,
}

/// A loop-closing constraint between two links (MJCF `equality`).
#[derive(Clone, Debug)]
pub struct LoopClosure {
    /// Name (made up from the links when the file gives none).
    pub name: String,
    /// `connect` (a ball joint) or `weld` (fixed).
    pub kind: LoopKind,
    /// First link (or [`WORLD`]).
    pub link1: String,
    /// Second link (or [`WORLD`]).
    pub link2: String,
    /// The connection point in link1's frame.
    pub anchor_in_link1: Vector3<f64>,
    /// Where it is defined.
    pub at: Location,
}

/// The kinds of loop closure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// A ball joint at the anchor.
    Connect,
    /// A rigid weld.
    Weld,
}

/// Something of the file the reader did not take, reported once with where.
#[derive(Clone, Debug)]
pub struct Ignored {
    /// The element or attribute (`<transmission>`, `geom@friction`).
    pub what: String,
    /// Its first occurrence.
    pub at: Location,
    /// How many times it occurred.
    pub count: usize,
}
