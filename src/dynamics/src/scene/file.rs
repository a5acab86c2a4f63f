//! The scene file as the TOML parser sees it: one struct per table, values that are checked
//! after parsing kept as `toml::Spanned` so that an error can name their line and column.

use serde::Deserialize;
use toml::Spanned;

use super::mobile::MobileDef;
use crate::model::shape::Shape;
use crate::wind::WindSettings;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SceneFile {
    #[serde(
        default = "default_gravity",
        deserialize_with = "super::array3::spanned"
    )]
    pub(super) gravity_m_per_s2: Spanned<[f64; 3]>,
    #[serde(default)]
    pub(super) solver: Option<SolverSection>,
    #[serde(rename = "body", default)]
    pub(super) bodies: Vec<BodyDef>,
    /// A Calder-style mobile whose bodies and ball joints the program lays out and weighs.
    #[serde(default)]
    pub(super) mobile: Option<MobileDef>,
    /// Where the wind comes from (`simulate --wind`); defaults if absent.
    #[serde(default)]
    pub(super) wind: Option<Spanned<WindSettings>>,
    #[serde(rename = "joint", default)]
    pub(super) joints: Vec<JointDef>,
    #[serde(rename = "spring", default)]
    pub(super) springs: Vec<SpringDef>,
    #[serde(rename = "grab", default)]
    pub(super) grabs: Vec<GrabDef>,
    #[serde(rename = "force", default)]
    pub(super) forces: Vec<ForceDef>,
    /// Contact settings (see `super::contact`); contact is on when this, a plane or a static
    /// shape is present.
    #[serde(default)]
    pub(super) contact: Option<super::contact::ContactDef>,
    #[serde(rename = "plane", default)]
    pub(super) planes: Vec<super::contact::PlaneDef>,
    #[serde(rename = "static", default)]
    pub(super) statics: Vec<super::contact::StaticDef>,
    /// Deformable bodies made by generators (see `super::deformable`).
    #[serde(rename = "deformable", default)]
    pub(super) deformables: Vec<super::deformable::DeformableDef>,
    /// What the mechanism visibly hangs from or stands on (see `super::supports`); visual only.
    #[serde(rename = "support", default)]
    pub(super) supports: Vec<super::supports::SupportDef>,
}

fn default_gravity() -> Spanned<[f64; 3]> {
    Spanned::new(0..0, [0.0, 0.0, -9.81])
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SolverSection {
    pub(super) dt_secs: Option<Spanned<f64>>,
    pub(super) iterations: Option<Spanned<usize>>,
    pub(super) beta: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BodyDef {
    pub(super) name: Spanned<String>,
    pub(super) mass_kg: Spanned<f64>,
    #[serde(deserialize_with = "super::array3::spanned")]
    pub(super) inertia_kg_m2: Spanned<[f64; 3]>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) inertia_rotation_rad: Option<Spanned<[f64; 3]>>,
    #[serde(deserialize_with = "super::array3::spanned")]
    pub(super) position_m: Spanned<[f64; 3]>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) rotation_rad: Option<Spanned<[f64; 3]>>,
    pub(super) shape: Spanned<Shape>,
    /// Initial velocity of the centre of mass (world, m/s); default zero.
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) velocity_m_per_s: Option<Spanned<[f64; 3]>>,
    /// Initial angular velocity (world axes, rad/s); default zero.
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) angular_velocity_rad_per_s: Option<Spanned<[f64; 3]>>,
    /// Contact material and switch (see `super::contact`).
    #[serde(default)]
    pub(super) friction: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) restitution: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) spin_friction_m: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) collide: Option<bool>,
    /// What is drawn instead of `shape` (see `super::visuals`).
    #[serde(rename = "visual", default)]
    pub(super) visuals: Vec<super::visuals::VisualDef>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum KindDef {
    Ball,
    Hinge,
    Prismatic,
    Slot,
    Fixed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct JointDef {
    pub(super) name: Spanned<String>,
    pub(super) kind: Spanned<KindDef>,
    pub(super) body1: Spanned<String>,
    pub(super) body2: Spanned<String>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) anchor_in_world_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) anchor1_in_body_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) anchor2_in_body_m: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) axis_in_world: Option<Spanned<[f64; 3]>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) hinge_axis_in_world: Option<Spanned<[f64; 3]>>,
    /// `[lo, hi]` of the angle (rad) and of the travel (m), and the limits' restitution (see
    /// `crate::model::limit`).
    #[serde(default)]
    pub(super) limits_rad: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub(super) limits_m: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    pub(super) limit_restitution: Option<Spanned<f64>>,
    /// Viscous joint damping: a hinge's (N·m·s/rad) and a prismatic joint's (N·s/m).
    #[serde(default)]
    pub(super) damping_n_m_s_per_rad: Option<Spanned<f64>>,
    #[serde(default)]
    pub(super) damping_n_s_per_m: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SpringDef {
    pub(super) name: Spanned<String>,
    pub(super) body1: Spanned<String>,
    pub(super) body2: Spanned<String>,
    #[serde(deserialize_with = "super::array3::spanned")]
    pub(super) point1_in_world_m: Spanned<[f64; 3]>,
    #[serde(deserialize_with = "super::array3::spanned")]
    pub(super) point2_in_world_m: Spanned<[f64; 3]>,
    pub(super) rest_length_m: Option<Spanned<f64>>,
    pub(super) stiffness_n_per_m: Spanned<f64>,
    #[serde(default)]
    pub(super) damping_n_s_per_m: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GrabDef {
    pub(super) name: Spanned<String>,
    pub(super) body: Spanned<String>,
    #[serde(deserialize_with = "super::array3::spanned")]
    pub(super) point_in_world_m: Spanned<[f64; 3]>,
}

/// A `[[force]]` table (see `super::forces` for the meaning of the fields).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ForceDef {
    pub(super) name: Spanned<String>,
    pub(super) body: Spanned<String>,
    /// A force (N); exactly one of this and `torque_n_m`.
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) force_n: Option<Spanned<[f64; 3]>>,
    /// A torque (N·m).
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) torque_n_m: Option<Spanned<[f64; 3]>>,
    #[serde(default)]
    pub(super) axes: AxesDef,
    pub(super) frequency_hz: Option<Spanned<f64>>,
    pub(super) phase_rad: Option<Spanned<f64>>,
    #[serde(default, deserialize_with = "super::array3::opt_spanned")]
    pub(super) point_in_body_m: Option<Spanned<[f64; 3]>>,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
pub(super) enum AxesDef {
    #[default]
    World,
    Body,
}
