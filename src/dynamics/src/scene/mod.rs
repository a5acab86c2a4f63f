//! Scene files (TOML): bodies (with optional initial velocities), joints, springs, grab
//! points, force elements, gravity, solver settings and the supports drawn with the bodies.
//!
//! The format is documented in the manual's `scene_files` page (`src/manual/scene_files.md`) and by the two scenes in
//! `assets/scenes/`. All values are SI; the world frame is the marker frame with z up. Points
//! are given in the world frame at the initial pose (joint anchors may instead be given in
//! each body's frame); rotations are rotation vectors (axis × angle, rad).
//!
//! Errors name the file, the line and column, and the field: the TOML parser reports syntax
//! errors, missing, misspelt and mistyped fields itself; values checked after parsing (names,
//! anchors, masses, axes) are kept as `toml::Spanned` so that their position is known.
//!
//! One concept per submodule: `file` holds the serde definitions of the tables, `checker`
//! the value checks that know their position; `bodies`, `joints`, `elements` (springs, grab
//! points) and `forces` (force elements, [`crate::model::force`]) turn the tables into the model;
//! `supports` checks the visual `[[support]]` tables; `deformable` expands the
//! `[[deformable]]` tables into element bodies, connections and pins
//! ([`super::deformable`]), and `rigid_groups` their `[[deformable.rigid_group]]` tables.

pub(crate) mod array3;
mod bodies;
pub(crate) mod checker;
mod contact;
mod deformable;
mod elements;
mod file;
mod forces;
pub mod generate;
pub mod generate_pile;
mod joints;
mod locate;
pub mod mobile;
mod rigid_groups;
mod supports;
pub mod visuals;

pub use checker::MAX_ROTATION_RAD;
pub use locate::{resolve_scene, scene_name, shipped_scene_names};
pub use supports::DESK_TOLERANCE_M;

use std::path::{Path, PathBuf};

use nalgebra::Vector3;
use toml::Spanned;

use super::error::{SceneError, SimError};
use super::simulation::Simulation;
use super::solver::SolverParams;
use crate::model::body::Body;
use crate::model::force::ForceElement;
use crate::model::grab::GrabPoint;
use crate::model::joint::Joint;
use crate::model::spring::Spring;
use checker::Checker;
use file::{SceneFile, SolverSection};
use mobile::MobileLink;

/// The most bodies a scene may have: its `[[body]]` tables, a `[mobile]`'s bars and fish and
/// the `[[deformable]]` tables' elements together (the ground not counted), checked before
/// they are built. Memory is linear in the bodies for chains and trees; elements coupled
/// through one body add to the coupled solver's factor (see [`SimError::TooLarge`]).
pub const MAX_BODIES: usize = 100_000;

/// The longest `[solver] dt_secs` (s): a step of more than this resolves nothing of a
/// mechanism, and a step such as 1e300 s only moves the bodies to infinity in one step (the
/// rig paces steps of at most 1 s; see the manual's `scene_files` page).
pub const MAX_DT_SECS: f64 = 10.0;

/// The shortest `[solver] dt_secs` (s): one nanosecond.
pub const MIN_DT_SECS: f64 = 1.0e-9;

/// Anchors given in two body frames must coincide in the initial pose within this (m).
pub const ANCHOR_TOLERANCE_M: f64 = 1.0e-9;

/// A validated scene: the model a [`Simulation`] is built from.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The file it came from (for messages).
    pub path: PathBuf,
    /// Bodies; index 0 is the ground. They carry the initial velocities from the file (zero
    /// where none is given).
    pub bodies: Vec<Body>,
    /// Joints in file order.
    pub joints: Vec<Joint>,
    /// Springs in file order.
    pub springs: Vec<Spring>,
    /// Grab points in file order (the first one is the scripted stylus's).
    pub grab_points: Vec<GrabPoint>,
    /// Gravity (m/s², world).
    pub gravity_in_world: Vector3<f64>,
    /// Solver settings from the file's `[solver]` table, defaults elsewhere.
    pub params: SolverParams,
    /// The `[wind]` table, if the file has one.
    pub wind: Option<super::wind::WindSettings>,
    /// Force elements (`[[force]]` tables) in file order.
    pub forces: Vec<ForceElement>,
    /// Contact geometry and settings, when the scene has a `[contact]` table, a `[[plane]]`
    /// or a `[[static]]` (see [`super::contact`]).
    pub contact: Option<super::contact::ContactModel>,
    /// The `[[support]]` tables in file order: drawn, never simulated.
    pub supports: Vec<crate::model::support::Support>,
    /// The rigid groups of the `[[deformable.rigid_group]]` tables, in file order.
    pub rigid_groups: Vec<super::deformable::RigidGroup>,
}

impl Scene {
    /// Reads and validates a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text = ar_io::input_file::read_text(path).map_err(|cause| {
            not_utf8(path, &cause).unwrap_or_else(|| SceneError::Io {
                path: path.to_owned(),
                cause,
            })
        })?;
        Self::parse(&text, path)
    }

    /// Parses and validates scene text; `path` is used in messages only.
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let file: SceneFile = toml::from_str(text).map_err(|e| SceneError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let ck = Checker {
            path,
            text,
            body_ids: Default::default(),
        };
        check_body_count(&ck, &file)?;
        let gravity_in_world = ck.finite3(&file.gravity_m_per_s2, "gravity_m_per_s2")?;
        let params = solver_params(&ck, file.solver.as_ref())?;
        let mut bodies = bodies::bodies(&ck, &file.bodies)?;
        let mobile_links = bodies::add_mobile(&ck, file.mobile.as_ref(), &mut bodies)?;
        if let Some(w) = &file.wind {
            w.get_ref()
                .wind()
                .map_err(|e| ck.err(w.span(), format!("wind.{}", e.field), e.message))?;
        }
        let mut expanded = deformable::expand(
            &ck,
            &file.deformables,
            &mut bodies,
            gravity_in_world,
            params.dt_secs,
        )?;
        let pins = std::mem::take(&mut expanded.joints);
        let joints = all_joints(&ck, &file, &bodies, &mobile_links, pins)?;
        let mut springs = elements::springs(&ck, &file.springs, &bodies)?;
        springs.extend(expanded.springs);
        let grab_points = elements::grab_points(&ck, &file.grabs, &bodies)?;
        let forces = forces::force_elements(&ck, &file.forces, &bodies)?;
        let mut contact = contact::contact_model(&ck, &file, &bodies)?;
        contact::check_spin_friction(
            &ck,
            &file,
            joints.first().map(|j| j.name.as_str()),
            springs.first().map(|s| s.name.as_str()),
        )?;
        if let Some(c) = contact.as_mut() {
            // Connected elements touch by construction: like jointed bodies, never a contact.
            c.excluded_pairs.extend(expanded.excluded_pairs);
            c.excluded_pairs.sort_unstable();
            c.excluded_pairs.dedup();
        }
        let supports = supports::supports(&ck, &file.supports)?;

        Ok(Scene {
            path: path.to_owned(),
            bodies,
            joints,
            springs,
            grab_points,
            gravity_in_world,
            params,
            wind: file.wind.map(Spanned::into_inner),
            forces,
            contact,
            supports,
            rigid_groups: expanded.rigid_groups,
        })
    }

    /// Builds a simulation of this scene with its own solver settings.
    pub fn build(&self) -> Result<Simulation, SceneError> {
        self.build_with(self.params)
    }

    /// Builds a simulation with the given solver settings (with the bodies' initial
    /// velocities and the force elements).
    pub fn build_with(&self, params: SolverParams) -> Result<Simulation, SceneError> {
        let build_error = |cause: SimError| SceneError::Build {
            path: self.path.clone(),
            cause,
        };
        let mut sim = Simulation::new(
            self.bodies.clone(),
            self.joints.clone(),
            self.springs.clone(),
            self.grab_points.clone(),
            self.gravity_in_world,
            params,
        )
        .map_err(build_error)?;
        for f in &self.forces {
            sim.add_force_element(f.clone()).map_err(build_error)?;
        }
        if let Some(c) = &self.contact {
            sim.set_contact_model(c.clone()).map_err(build_error)?;
        }
        for g in &self.rigid_groups {
            sim.add_rigid_group(g.clone()).map_err(build_error)?;
        }
        Ok(sim)
    }
}

/// When reading failed because the file is not UTF-8 (`InvalidData`, which says neither
/// where nor which byte): the error naming the line, the column and the byte, from the
/// file's bytes read again (it is a regular file within the input limit, or reading would
/// have failed otherwise). `None` for any other failure, or if the file changed meanwhile.
fn not_utf8(path: &Path, cause: &std::io::Error) -> Option<SceneError> {
    use std::io::Read;
    if cause.kind() != std::io::ErrorKind::InvalidData {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(ar_io::input_file::MAX_INPUT_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let offset = std::str::from_utf8(&bytes).err()?.valid_up_to();
    let before = &bytes[..offset];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |k| k + 1);
    Some(SceneError::NotUtf8 {
        path: path.to_owned(),
        line: 1 + before.iter().filter(|&&b| b == b'\n').count(),
        column: 1 + offset - line_start,
        offset,
        byte: bytes[offset],
    })
}

/// The `[[body]]` tables and a mobile's parts within [`MAX_BODIES`] (the deformables'
/// elements are counted as they are made), and something that moves.
fn check_body_count(ck: &Checker, file: &SceneFile) -> Result<(), SceneError> {
    if file.bodies.len() > MAX_BODIES {
        return Err(ck.err(
            file.bodies[MAX_BODIES].name.span(),
            "body",
            format!(
                "{} bodies, over the limit of {MAX_BODIES}",
                file.bodies.len()
            ),
        ));
    }
    if let Some(m) = &file.mobile {
        let parts = m.bars.len() + m.fish.len();
        let total = file.bodies.len() + parts;
        if total > MAX_BODIES {
            // The first part over the limit (bars come first).
            let k = MAX_BODIES - file.bodies.len();
            let (span, field) = match m.bars.get(k) {
                Some(b) => (b.name.span(), format!("mobile.bar[{k}].name")),
                None => {
                    let j = k - m.bars.len();
                    (m.fish[j].name.span(), format!("mobile.fish[{j}].name"))
                }
            };
            return Err(ck.err(
                span,
                field,
                format!(
                    "{} [[body]] tables and {parts} mobile parts make {total} bodies, over the \
                     limit of {MAX_BODIES}",
                    file.bodies.len()
                ),
            ));
        }
    }
    if file.bodies.is_empty() && file.mobile.is_none() && file.deformables.is_empty() {
        return Err(ck.err(
            0..0,
            "body",
            "the scene has no bodies: add [[body]] tables, a [mobile] or a [[deformable]] (nothing would move)",
        ));
    }
    Ok(())
}

/// The `[[joint]]` tables, then a mobile's ball joints, then the deformables' `pins`, whose
/// names must not be a joint's.
fn all_joints(
    ck: &Checker,
    file: &SceneFile,
    bodies: &[Body],
    mobile_links: &[MobileLink],
    pins: Vec<Joint>,
) -> Result<Vec<Joint>, SceneError> {
    let mut joints = joints::joints(ck, &file.joints, bodies)?;
    joints::add_mobile_links(ck, mobile_links, bodies, &mut joints)?;
    let names: std::collections::HashSet<&str> = joints.iter().map(|j| j.name.as_str()).collect();
    if let Some(j) = pins.iter().find(|p| names.contains(p.name.as_str())) {
        return Err(ck.err(
            0..0,
            "deformable",
            format!("the pin `{}` has the name of a joint", j.name),
        ));
    }
    joints.extend(pins);
    Ok(joints)
}

/// The `[solver]` table over the defaults.
fn solver_params(
    ck: &Checker,
    section: Option<&SolverSection>,
) -> Result<SolverParams, SceneError> {
    let mut params = SolverParams::default();
    if let Some(s) = section {
        if let Some(dt) = &s.dt_secs {
            let h = *dt.get_ref();
            if !(MIN_DT_SECS..=MAX_DT_SECS).contains(&h) {
                return Err(ck.err(
                    dt.span(),
                    "solver.dt_secs",
                    format!(
                        "must be a time step from {MIN_DT_SECS:e} s to {MAX_DT_SECS} s, got {h}"
                    ),
                ));
            }
            params.dt_secs = h;
        }
        if let Some(it) = &s.iterations {
            if *it.get_ref() == 0 {
                return Err(ck.err(it.span(), "solver.iterations", "must be at least 1"));
            }
            params.max_iterations = *it.get_ref();
        }
        if let Some(beta) = &s.beta {
            let b = *beta.get_ref();
            if !(b > 0.0 && b <= 1.0) {
                return Err(ck.err(
                    beta.span(),
                    "solver.beta",
                    format!("must be in (0, 1], got {b}"),
                ));
            }
            params.beta = b;
        }
    }
    Ok(params)
}
