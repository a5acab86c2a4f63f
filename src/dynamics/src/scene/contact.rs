//! Contact in scene files: body materials, `[[plane]]`, `[[static]]` and `[contact]`.
//!
//! ```toml
//! [contact]                     # optional; contact is on with it, a plane, a static, or a
//!                               # body that sets friction, restitution or collide
//! margin_m = 0.001              # rows exist this far before touching (default 1e-3)
//! inequality_method = "right"   # right | platt | tendency (Jonquet et al. Alg. 3, 1, 2)
//! stylus_tip_radius_m = 0.003   # the stylus tip pushes: a kinematic sphere (default: off)
//! sleep = true                  # islands at rest fall asleep (default true)
//! tolerance_m = 1e-6            # penetration the solve may leave, in [1e-10, 1e-3] m
//!                               # (default: unset, the finest: ~1e-7 m on a pile)
//! threads = 2                   # threads the narrow phase may use, 1 to 64 (default 2;
//!                               # the same results, bit for bit, with any number)
//!
//! [[body]]                      # ... as before, plus (all optional):
//! friction = 0.5                # Coulomb μ (default 0.5)
//! restitution = 0.0             # Newton e in [0, 1] (default 0)
//! spin_friction_m = 0.0         # friction torque about the normal over the normal force
//!                               # (m, default 0: a point contact; not with joints or springs)
//! collide = true                # false: the body's shape collides with nothing
//!
//! [[plane]]                     # a half-space of the ground
//! name = "desk"
//! normal = [0, 0, 1]            # towards the free side; need not be unit
//! point_in_world_m = [0, 0, 0]  # a point of the plane
//! friction = 0.5
//! restitution = 0.0
//!
//! [[static]]                    # a fixed shape of the ground (any body shape, convex too)
//! name = "post"
//! shape = { kind = "box", size_m = [0.1, 0.1, 0.3] }
//! position_m = [0.2, 0, 0.15]
//! rotation_rad = [0, 0, 0]
//! friction = 0.5
//! restitution = 0.0
//! ```
//! Planes and statics take `spin_friction_m` too. A pair's friction is √(μ₁ μ₂), its
//! restitution max(e₁, e₂) and its spin friction max(s₁, s₂). Bodies joined by a joint never
//! collide with each other.

use nalgebra::{Isometry3, Translation3, Vector3};
use serde::Deserialize;
use toml::Spanned;

use super::checker::{rotation, Checker};
use super::file::SceneFile;
use crate::contact::{
    ColliderShape, ContactModel, InequalityMethod, Material, DEFAULT_MARGIN_M, MAX_THREADS,
    TOLERANCE_RANGE_M,
};
use crate::error::SceneError;
use crate::model::body::{Body, GROUND};
use crate::model::shape::Shape;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ContactDef {
    margin_m: Option<Spanned<f64>>,
    inequality_method: Option<Spanned<String>>,
    stylus_tip_radius_m: Option<Spanned<f64>>,
    sleep: Option<bool>,
    tolerance_m: Option<Spanned<f64>>,
    threads: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlaneDef {
    name: Spanned<String>,
    #[serde(deserialize_with = "super::array3::spanned")]
    normal: Spanned<[f64; 3]>,
    #[serde(deserialize_with = "super::array3::spanned")]
    point_in_world_m: Spanned<[f64; 3]>,
    friction: Option<Spanned<f64>>,
    restitution: Option<Spanned<f64>>,
    spin_friction_m: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StaticDef {
    name: Spanned<String>,
    shape: Spanned<Shape>,
    #[serde(deserialize_with = "super::array3::spanned")]
    position_m: Spanned<[f64; 3]>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    rotation_rad: Option<Spanned<[f64; 3]>>,
    friction: Option<Spanned<f64>>,
    restitution: Option<Spanned<f64>>,
    spin_friction_m: Option<Spanned<f64>>,
}

/// A body's, plane's or static's material fields as written.
struct MaterialDef<'a> {
    friction: Option<&'a Spanned<f64>>,
    restitution: Option<&'a Spanned<f64>>,
    spin_friction_m: Option<&'a Spanned<f64>>,
}

fn material(
    ck: &Checker,
    def: MaterialDef,
    field: &dyn Fn(&str) -> String,
) -> Result<Material, SceneError> {
    let MaterialDef {
        friction,
        restitution,
        spin_friction_m,
    } = def;
    let mut m = Material::default();
    if let Some(f) = friction {
        m.friction = ck.non_negative(f, &field("friction"))?;
    }
    if let Some(s) = spin_friction_m {
        m.spin_friction_m = ck.non_negative(s, &field("spin_friction_m"))?;
    }
    if let Some(e) = restitution {
        let v = *e.get_ref();
        if !(0.0..=1.0).contains(&v) {
            return Err(ck.err(
                e.span(),
                field("restitution"),
                format!("must be in [0, 1], got {v}"),
            ));
        }
        m.restitution = v;
    }
    Ok(m)
}

/// The contact model of a scene, if it has contact.
pub(super) fn contact_model(
    ck: &Checker,
    file: &SceneFile,
    bodies: &[Body],
) -> Result<Option<ContactModel>, SceneError> {
    // A body that sets a contact field asks for contact: without this a cradle written
    // without `[contact]` ran with no contact at all, its balls passing through each other.
    let asked = file.bodies.iter().any(|d| {
        d.friction.is_some()
            || d.restitution.is_some()
            || d.spin_friction_m.is_some()
            || d.collide.is_some()
    });
    if file.contact.is_none() && file.planes.is_empty() && file.statics.is_empty() && !asked {
        return Ok(None);
    }
    let mut model = contact_settings(ck, file.contact.as_ref())?;
    add_body_colliders(ck, file, bodies, &mut model)?;
    add_statics(ck, &file.statics, &mut model)?;
    add_planes(ck, &file.planes, &mut model)?;
    Ok(Some(model))
}

/// Refuses spin friction in a scene with joints or springs (`joint`: the first joint's name,
/// `spring`: the first spring's, when there are any): their contacts are solved through the
/// joints' and springs' rows, which take no spin row, and the spin would be dropped there
/// without a word.
pub(super) fn check_spin_friction(
    ck: &Checker,
    file: &SceneFile,
    joint: Option<&str>,
    spring: Option<&str>,
) -> Result<(), SceneError> {
    let Some(what) = joint
        .map(|j| format!("joint `{j}`"))
        .or(spring.map(|s| format!("spring `{s}`")))
    else {
        return Ok(());
    };
    let first = [
        (
            "body",
            first_set(file.bodies.iter().map(|d| d.spin_friction_m.as_ref())),
        ),
        (
            "static",
            first_set(file.statics.iter().map(|d| d.spin_friction_m.as_ref())),
        ),
        (
            "plane",
            first_set(file.planes.iter().map(|d| d.spin_friction_m.as_ref())),
        ),
    ]
    .into_iter()
    .find_map(|(table, f)| f.map(|(i, s)| (s, format!("{table}[{i}]"))));
    match first {
        Some((s, owner)) => Err(ck.err(
            s.span(),
            format!("{owner}.spin_friction_m"),
            format!(
                "spin friction is solved only between free bodies, and this scene has \
                 {what} (contacts there are solved through the joints' and springs' rows, \
                 which take no spin row); remove spin_friction_m or the {what}"
            ),
        )),
        None => Ok(()),
    }
}

/// The first of a table's `spin_friction_m` fields (in order) that is set above zero, with
/// its index.
fn first_set<'a>(
    fields: impl Iterator<Item = Option<&'a Spanned<f64>>>,
) -> Option<(usize, &'a Spanned<f64>)> {
    (fields.enumerate()).find_map(|(i, s)| s.filter(|s| *s.get_ref() > 0.0).map(|s| (i, s)))
}

/// The `[contact]` table's margin, inequality method, stylus tip, sleep and precision
/// (defaults without it).
fn contact_settings(ck: &Checker, c: Option<&ContactDef>) -> Result<ContactModel, SceneError> {
    let mut margin = DEFAULT_MARGIN_M;
    let mut method = InequalityMethod::default();
    if let Some(c) = c {
        if let Some(m) = &c.margin_m {
            margin = ck.non_negative(m, "contact.margin_m")?;
        }
        if let Some(m) = &c.inequality_method {
            method = InequalityMethod::parse(m.get_ref()).ok_or_else(|| {
                ck.err(
                    m.span(),
                    "contact.inequality_method",
                    format!("`{}`: expected right, platt or tendency", m.get_ref()),
                )
            })?;
        }
    }
    let mut model = ContactModel::new(margin, method);
    if let Some(r) = c.and_then(|c| c.stylus_tip_radius_m.as_ref()) {
        model.stylus_tip_radius_m = Some(ck.positive(r, "contact.stylus_tip_radius_m")?);
    }
    if let Some(sleep) = c.and_then(|c| c.sleep) {
        model.sleep = sleep;
    }
    if let Some(t) = c.and_then(|c| c.tolerance_m.as_ref()) {
        let x = ck.positive(t, "contact.tolerance_m")?;
        let (lo, hi) = TOLERANCE_RANGE_M;
        if !(lo..=hi).contains(&x) {
            return Err(ck.err(
                t.span(),
                "contact.tolerance_m",
                format!("must be in [{lo:e}, {hi:e}] m, got {x:e}"),
            ));
        }
        model.tolerance_m = Some(x);
    }
    if let Some(t) = c.and_then(|c| c.threads.as_ref()) {
        let n = *t.get_ref();
        if !(1..=MAX_THREADS as i64).contains(&n) {
            return Err(ck.err(
                t.span(),
                "contact.threads",
                format!("must be a whole number from 1 to {MAX_THREADS}, got {n}"),
            ));
        }
        model.threads = n as usize;
    }
    Ok(model)
}

/// A collider for each body with a shape that collides, with its material.
fn add_body_colliders(
    ck: &Checker,
    file: &SceneFile,
    bodies: &[Body],
    model: &mut ContactModel,
) -> Result<(), SceneError> {
    // The `[[body]]` tables are bodies 1..; mobile parts after them collide with defaults.
    for (i, b) in bodies.iter().enumerate().skip(1) {
        let def = file.bodies.get(i - 1);
        let field = |name: &str| format!("body[{}].{name}", i - 1);
        let (mat, collide) = match def {
            Some(d) => (
                material(
                    ck,
                    MaterialDef {
                        friction: d.friction.as_ref(),
                        restitution: d.restitution.as_ref(),
                        spin_friction_m: d.spin_friction_m.as_ref(),
                    },
                    &field,
                )?,
                d.collide.unwrap_or(true),
            ),
            None => (Material::default(), true),
        };
        if let (true, Some(shape)) = (collide, &b.shape) {
            // Checked with the bodies (a mobile's parts are never convex); the hull is built
            // here, once.
            let shape = ColliderShape::of(shape).map_err(|e| {
                let span = def.map(|d| d.shape.span()).unwrap_or(0..0);
                ck.err(span, field(&format!("shape.{}", e.field)), e.message)
            })?;
            model.add(b.name.clone(), i, shape, Isometry3::identity(), mat);
        }
    }
    Ok(())
}

/// The `[[static]]` tables: colliders of the ground.
fn add_statics(
    ck: &Checker,
    statics: &[StaticDef],
    model: &mut ContactModel,
) -> Result<(), SceneError> {
    for (i, s) in statics.iter().enumerate() {
        let field = |name: &str| format!("static[{i}].{name}");
        if let Some((f, message)) = s.shape.get_ref().problem() {
            return Err(ck.err(s.shape.span(), field(&format!("shape.{f}")), message));
        }
        let mat = material(
            ck,
            MaterialDef {
                friction: s.friction.as_ref(),
                restitution: s.restitution.as_ref(),
                spin_friction_m: s.spin_friction_m.as_ref(),
            },
            &field,
        )?;
        let position = ck.finite3(&s.position_m, &field("position_m"))?;
        let rotation_rad = s
            .rotation_rad
            .as_ref()
            .map(|r| ck.rotation3(r, &field("rotation_rad")))
            .transpose()?;
        let pose = Isometry3::from_parts(
            Translation3::from(position),
            rotation(rotation_rad.map(Into::into)),
        );
        let shape = ColliderShape::of(s.shape.get_ref()).map_err(|e| {
            ck.err(
                s.shape.span(),
                field(&format!("shape.{}", e.field)),
                e.message,
            )
        })?;
        model.add(s.name.get_ref().clone(), GROUND, shape, pose, mat);
    }
    Ok(())
}

/// The `[[plane]]` tables: half-spaces of the ground.
fn add_planes(
    ck: &Checker,
    planes: &[PlaneDef],
    model: &mut ContactModel,
) -> Result<(), SceneError> {
    for (i, p) in planes.iter().enumerate() {
        let field = |name: &str| format!("plane[{i}].{name}");
        let mat = material(
            ck,
            MaterialDef {
                friction: p.friction.as_ref(),
                restitution: p.restitution.as_ref(),
                spin_friction_m: p.spin_friction_m.as_ref(),
            },
            &field,
        )?;
        // Finite and not zero; `add_plane` normalises it (scaled first: `[0, 0, 1e300]` is the
        // z axis, not a zero normal), once, as before.
        ck.unit3(&p.normal, &field("normal"))?;
        let normal = Vector3::from(*p.normal.get_ref());
        let point = ck.finite3(&p.point_in_world_m, &field("point_in_world_m"))?;
        model
            .add_plane(p.name.get_ref().clone(), normal, point, mat)
            .map_err(|e| ck.err(p.name.span(), field("name"), e.to_string()))?;
    }
    Ok(())
}
