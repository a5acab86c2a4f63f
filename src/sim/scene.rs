//! Scene files (TOML): bodies, joints, springs, grab points, gravity and solver settings.
//!
//! The format is documented in the README ("Scene files") and by the two scenes in
//! `assets/scenes/`. All values are SI; the world frame is the marker frame with z up. Points
//! are given in the world frame at the initial pose (joint anchors may instead be given in
//! each body's frame); rotations are rotation vectors (axis × angle, rad).
//!
//! Errors name the file, the line and column, and the field: the TOML parser reports syntax
//! errors, missing, misspelt and mistyped fields itself; values checked after parsing (names,
//! anchors, masses, axes) are kept as `toml::Spanned` so that their position is known.

use std::ops::Range;
use std::path::{Path, PathBuf};

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use serde::Deserialize;
use toml::Spanned;

use super::body::{Body, BodyId, GROUND};
use super::error::{SceneError, SimError};
use super::grab::GrabPoint;
use super::joint::{Joint, JointKind};
use super::shape::Shape;
use super::simulation::Simulation;
use super::solver::SolverParams;
use super::spring::Spring;

/// Anchors given in two body frames must coincide in the initial pose within this (m).
pub const ANCHOR_TOLERANCE_M: f64 = 1.0e-9;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SceneFile {
    #[serde(default = "default_gravity")]
    gravity_m_per_s2: Spanned<[f64; 3]>,
    #[serde(default)]
    solver: Option<SolverSection>,
    #[serde(rename = "body", default)]
    bodies: Vec<BodyDef>,
    /// A Calder-style mobile whose bodies and ball joints the program lays out and weighs.
    #[serde(default)]
    mobile: Option<super::mobile::MobileDef>,
    /// Where the wind comes from (`simulate --wind`); defaults if absent.
    #[serde(default)]
    wind: Option<Spanned<super::wind::WindSettings>>,
    #[serde(rename = "joint", default)]
    joints: Vec<JointDef>,
    #[serde(rename = "spring", default)]
    springs: Vec<SpringDef>,
    #[serde(rename = "grab", default)]
    grabs: Vec<GrabDef>,
}

fn default_gravity() -> Spanned<[f64; 3]> {
    Spanned::new(0..0, [0.0, 0.0, -9.81])
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SolverSection {
    dt_secs: Option<Spanned<f64>>,
    iterations: Option<Spanned<usize>>,
    beta: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BodyDef {
    name: Spanned<String>,
    mass_kg: Spanned<f64>,
    inertia_kg_m2: Spanned<[f64; 3]>,
    #[serde(default)]
    inertia_rotation_rad: Option<[f64; 3]>,
    position_m: Spanned<[f64; 3]>,
    #[serde(default)]
    rotation_rad: Option<[f64; 3]>,
    shape: Spanned<Shape>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum KindDef {
    Ball,
    Hinge,
    Prismatic,
    Slot,
    Fixed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JointDef {
    name: Spanned<String>,
    kind: Spanned<KindDef>,
    body1: Spanned<String>,
    body2: Spanned<String>,
    anchor_in_world_m: Option<Spanned<[f64; 3]>>,
    anchor1_in_body_m: Option<Spanned<[f64; 3]>>,
    anchor2_in_body_m: Option<Spanned<[f64; 3]>>,
    axis_in_world: Option<Spanned<[f64; 3]>>,
    hinge_axis_in_world: Option<Spanned<[f64; 3]>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpringDef {
    name: Spanned<String>,
    body1: Spanned<String>,
    body2: Spanned<String>,
    point1_in_world_m: Spanned<[f64; 3]>,
    point2_in_world_m: Spanned<[f64; 3]>,
    rest_length_m: Option<Spanned<f64>>,
    stiffness_n_per_m: Spanned<f64>,
    #[serde(default)]
    damping_n_s_per_m: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GrabDef {
    name: Spanned<String>,
    body: Spanned<String>,
    point_in_world_m: Spanned<[f64; 3]>,
}

/// A validated scene: the model a [`Simulation`] is built from.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The file it came from (for messages).
    pub path: PathBuf,
    /// Bodies; index 0 is the ground.
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
}

struct Checker<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Checker<'_> {
    fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> SceneError {
        let start = span.start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
        SceneError::Invalid {
            path: self.path.to_owned(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }

    fn finite3(&self, v: &Spanned<[f64; 3]>, field: &str) -> Result<Vector3<f64>, SceneError> {
        let a = *v.get_ref();
        if a.iter().all(|x| x.is_finite()) {
            Ok(Vector3::from(a))
        } else {
            Err(self.err(v.span(), field, "every component must be a finite number"))
        }
    }

    fn unit3(&self, v: &Spanned<[f64; 3]>, field: &str) -> Result<Vector3<f64>, SceneError> {
        let a = self.finite3(v, field)?;
        let n = a.norm();
        if n < 1e-9 {
            return Err(self.err(v.span(), field, "an axis must not be the zero vector"));
        }
        Ok(a / n)
    }

    fn positive(&self, v: &Spanned<f64>, field: &str) -> Result<f64, SceneError> {
        let x = *v.get_ref();
        if x > 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(v.span(), field, format!("must be positive, got {x}")))
        }
    }

    fn non_negative(&self, v: &Spanned<f64>, field: &str) -> Result<f64, SceneError> {
        let x = *v.get_ref();
        if x >= 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(
                v.span(),
                field,
                format!("must be zero or positive, got {x}"),
            ))
        }
    }

    fn body(
        &self,
        bodies: &[Body],
        name: &Spanned<String>,
        field: &str,
    ) -> Result<BodyId, SceneError> {
        bodies
            .iter()
            .position(|b| &b.name == name.get_ref())
            .ok_or_else(|| {
                self.err(
                    name.span(),
                    field,
                    format!(
                        "unknown body `{}` (use `ground` for the fixed frame)",
                        name.get_ref()
                    ),
                )
            })
    }
}

fn rotation(v: Option<[f64; 3]>) -> UnitQuaternion<f64> {
    v.map_or_else(UnitQuaternion::identity, |r| {
        UnitQuaternion::from_scaled_axis(Vector3::from(r))
    })
}

impl Scene {
    /// Reads and validates a scene file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scene, SceneError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|cause| SceneError::Io {
            path: path.to_owned(),
            cause,
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
        let ck = Checker { path, text };

        let gravity_in_world = ck.finite3(&file.gravity_m_per_s2, "gravity_m_per_s2")?;
        let mut params = SolverParams::default();
        if let Some(s) = &file.solver {
            if let Some(dt) = &s.dt_secs {
                params.dt_secs = ck.positive(dt, "solver.dt_secs")?;
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

        let mut bodies = vec![Body::ground()];
        for (i, b) in file.bodies.iter().enumerate() {
            let f = |name: &str| format!("body[{i}].{name}");
            let name = b.name.get_ref();
            if name.is_empty() || name == "ground" || bodies.iter().any(|o| &o.name == name) {
                return Err(ck.err(
                    b.name.span(),
                    f("name"),
                    format!("body name `{name}` is empty, reserved or used twice"),
                ));
            }
            let mass = ck.positive(&b.mass_kg, &f("mass_kg"))?;
            let inertia = ck.finite3(&b.inertia_kg_m2, &f("inertia_kg_m2"))?;
            if inertia.iter().any(|&x| x <= 0.0) {
                return Err(ck.err(
                    b.inertia_kg_m2.span(),
                    f("inertia_kg_m2"),
                    "every principal moment of inertia must be positive",
                ));
            }
            for (field, size) in b.shape.get_ref().sizes() {
                if !(size > 0.0 && size.is_finite()) {
                    return Err(ck.err(
                        b.shape.span(),
                        f(&format!("shape.{field}")),
                        format!("must be positive, got {size}"),
                    ));
                }
            }
            let position = ck.finite3(&b.position_m, &f("position_m"))?;
            let pose =
                Isometry3::from_parts(Translation3::from(position), rotation(b.rotation_rad));
            bodies.push(Body::new(
                name.clone(),
                mass,
                inertia,
                rotation(b.inertia_rotation_rad),
                pose,
                Some(*b.shape.get_ref()),
            ));
        }

        let mobile_links = match &file.mobile {
            Some(m) => {
                let built = m.build().map_err(|e| ck.err(e.span, e.field, e.message))?;
                for part in built.parts {
                    if bodies.iter().any(|o| o.name == part.name) {
                        return Err(ck.err(
                            0..0,
                            "mobile",
                            format!("body name `{}` is used twice", part.name),
                        ));
                    }
                    let pose = Isometry3::translation(
                        part.position_in_world_m.x,
                        part.position_in_world_m.y,
                        part.position_in_world_m.z,
                    );
                    bodies.push(Body::new(
                        part.name,
                        part.mass_kg,
                        part.inertia_kg_m2,
                        UnitQuaternion::identity(),
                        pose,
                        Some(part.shape),
                    ));
                }
                built.links
            }
            None => Vec::new(),
        };
        if let Some(w) = &file.wind {
            w.get_ref()
                .wind()
                .map_err(|e| ck.err(w.span(), format!("wind.{}", e.field), e.message))?;
        }

        let mut joints: Vec<Joint> = Vec::with_capacity(file.joints.len());
        for (i, j) in file.joints.iter().enumerate() {
            let f = |name: &str| format!("joint[{i}].{name}");
            let name = j.name.get_ref();
            if name.is_empty() || joints.iter().any(|o| &o.name == name) {
                return Err(ck.err(
                    j.name.span(),
                    f("name"),
                    format!("joint name `{name}` is empty or used twice"),
                ));
            }
            let b1 = ck.body(&bodies, &j.body1, &f("body1"))?;
            let b2 = ck.body(&bodies, &j.body2, &f("body2"))?;
            if b1 == b2 {
                return Err(ck.err(
                    j.body2.span(),
                    f("body2"),
                    "a joint needs two different bodies",
                ));
            }
            let (p1, p2) = (bodies[b1].world_from_body(), bodies[b2].world_from_body());
            let (a1, a2) = match (&j.anchor_in_world_m, &j.anchor1_in_body_m, &j.anchor2_in_body_m) {
                (Some(a), None, None) => {
                    let a = ck.finite3(a, &f("anchor_in_world_m"))?;
                    (
                        p1.inverse_transform_point(&a.into()).coords,
                        p2.inverse_transform_point(&a.into()).coords,
                    )
                }
                (None, Some(a1s), Some(a2s)) => {
                    let a1 = ck.finite3(a1s, &f("anchor1_in_body_m"))?;
                    let a2 = ck.finite3(a2s, &f("anchor2_in_body_m"))?;
                    let gap = (p1.transform_point(&a1.into()) - p2.transform_point(&a2.into())).norm();
                    if gap > ANCHOR_TOLERANCE_M {
                        return Err(ck.err(
                            a2s.span(),
                            f("anchor2_in_body_m"),
                            format!(
                                "the anchors of `{}` and `{}` are {gap:.3e} m apart in the initial pose (limit {ANCHOR_TOLERANCE_M:e} m)",
                                bodies[b1].name, bodies[b2].name
                            ),
                        ));
                    }
                    (a1, a2)
                }
                _ => {
                    return Err(ck.err(
                        j.name.span(),
                        f("anchor_in_world_m"),
                        "give either `anchor_in_world_m` or both `anchor1_in_body_m` and `anchor2_in_body_m`",
                    ))
                }
            };
            let kind = match j.kind.get_ref() {
                KindDef::Ball => JointKind::Ball,
                KindDef::Hinge => JointKind::Hinge,
                KindDef::Prismatic => JointKind::Prismatic,
                KindDef::Slot => JointKind::Slot,
                KindDef::Fixed => JointKind::Fixed,
            };
            let needs_axis = matches!(
                kind,
                JointKind::Hinge | JointKind::Prismatic | JointKind::Slot
            );
            let axis = match (&j.axis_in_world, needs_axis) {
                (Some(a), true) => ck.unit3(a, &f("axis_in_world"))?,
                (None, true) => {
                    return Err(ck.err(
                        j.kind.span(),
                        f("axis_in_world"),
                        format!("a {} joint needs `axis_in_world`", kind.name()),
                    ))
                }
                (Some(a), false) => {
                    return Err(ck.err(
                        a.span(),
                        f("axis_in_world"),
                        format!("a {} joint has no axis", kind.name()),
                    ))
                }
                (None, false) => Vector3::z(),
            };
            let hinge_axis = match (&j.hinge_axis_in_world, kind == JointKind::Slot) {
                (Some(a), true) => ck.unit3(a, &f("hinge_axis_in_world"))?,
                (None, true) => {
                    return Err(ck.err(
                        j.kind.span(),
                        f("hinge_axis_in_world"),
                        "a slot joint needs `hinge_axis_in_world`",
                    ))
                }
                (Some(a), false) => {
                    return Err(ck.err(
                        a.span(),
                        f("hinge_axis_in_world"),
                        "only a slot joint has a hinge axis",
                    ))
                }
                (None, false) => axis,
            };
            joints.push(Joint::new(
                name.clone(),
                kind,
                &bodies,
                b1,
                b2,
                a1,
                a2,
                axis,
                hinge_axis,
            ));
        }

        for link in &mobile_links {
            let id = |name: Option<&String>| {
                name.map_or(Some(GROUND), |n| bodies.iter().position(|b| &b.name == n))
            };
            let (Some(b1), Some(b2)) = (id(link.parent.as_ref()), id(Some(&link.child))) else {
                return Err(ck.err(
                    0..0,
                    "mobile",
                    format!("joint `{}` names a missing body", link.name),
                ));
            };
            if joints.iter().any(|o| o.name == link.name) {
                return Err(ck.err(
                    0..0,
                    "mobile",
                    format!("joint name `{}` is used twice", link.name),
                ));
            }
            let a = link.anchor_in_world_m.into();
            let a1 = bodies[b1]
                .world_from_body()
                .inverse_transform_point(&a)
                .coords;
            let a2 = bodies[b2]
                .world_from_body()
                .inverse_transform_point(&a)
                .coords;
            joints.push(Joint::new(
                link.name.clone(),
                JointKind::Ball,
                &bodies,
                b1,
                b2,
                a1,
                a2,
                Vector3::z(),
                Vector3::z(),
            ));
        }

        let mut springs = Vec::with_capacity(file.springs.len());
        for (i, s) in file.springs.iter().enumerate() {
            let f = |name: &str| format!("spring[{i}].{name}");
            let b1 = ck.body(&bodies, &s.body1, &f("body1"))?;
            let b2 = ck.body(&bodies, &s.body2, &f("body2"))?;
            if b1 == b2 {
                return Err(ck.err(
                    s.body2.span(),
                    f("body2"),
                    "a spring needs two different bodies",
                ));
            }
            let q1 = ck.finite3(&s.point1_in_world_m, &f("point1_in_world_m"))?;
            let q2 = ck.finite3(&s.point2_in_world_m, &f("point2_in_world_m"))?;
            let rest = match &s.rest_length_m {
                Some(r) => ck.non_negative(r, &f("rest_length_m"))?,
                None => (q2 - q1).norm(),
            };
            let damping = match &s.damping_n_s_per_m {
                Some(d) => ck.non_negative(d, &f("damping_n_s_per_m"))?,
                None => 0.0,
            };
            springs.push(Spring {
                name: s.name.get_ref().clone(),
                body1: b1,
                body2: b2,
                point1_in_body1: bodies[b1]
                    .world_from_body()
                    .inverse_transform_point(&q1.into())
                    .coords,
                point2_in_body2: bodies[b2]
                    .world_from_body()
                    .inverse_transform_point(&q2.into())
                    .coords,
                rest_length_m: rest,
                stiffness_n_per_m: ck
                    .non_negative(&s.stiffness_n_per_m, &f("stiffness_n_per_m"))?,
                damping_n_s_per_m: damping,
            });
        }

        let mut grab_points = Vec::with_capacity(file.grabs.len());
        for (i, g) in file.grabs.iter().enumerate() {
            let f = |name: &str| format!("grab[{i}].{name}");
            let b = ck.body(&bodies, &g.body, &f("body"))?;
            if b == GROUND {
                return Err(ck.err(g.body.span(), f("body"), "the ground cannot be grabbed"));
            }
            let p = ck.finite3(&g.point_in_world_m, &f("point_in_world_m"))?;
            grab_points.push(GrabPoint {
                name: g.name.get_ref().clone(),
                body: b,
                point_in_body: bodies[b]
                    .world_from_body()
                    .inverse_transform_point(&p.into())
                    .coords,
            });
        }

        Ok(Scene {
            path: path.to_owned(),
            bodies,
            joints,
            springs,
            grab_points,
            gravity_in_world,
            params,
            wind: file.wind.map(Spanned::into_inner),
        })
    }

    /// Builds a simulation of this scene with its own solver settings.
    pub fn build(&self) -> Result<Simulation, SceneError> {
        self.build_with(self.params)
    }

    /// Builds a simulation with the given solver settings.
    pub fn build_with(&self, params: SolverParams) -> Result<Simulation, SceneError> {
        Simulation::new(
            self.bodies.clone(),
            self.joints.clone(),
            self.springs.clone(),
            self.grab_points.clone(),
            self.gravity_in_world,
            params,
        )
        .map_err(|source: SimError| SceneError::Build {
            path: self.path.clone(),
            source,
        })
    }
}
