//! The wind as a force element of a simulation: each step, the level of the moment becomes
//! face forces on every body with a visual shape. Either method's simulation takes them
//! through [`MethodSim`], so both get the same forces for the same state and level.

use super::{FaceForce, Primitive, Wind, WindCone, WindParams, WindTarget};
use crate::simulation::MethodSim;
use crate::{BodyId, Shape};
use nalgebra::{Isometry3, Point3, Vector3};
use serde::Deserialize;

/// Where the wind comes from and how strong it is: a scene's `[wind]` table. Every field has
/// a default (a user half a metre in front of the marker, on its −y side, blowing along +y
/// at the height of the mechanisms).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindSettings {
    /// Centre of the source disc, the user's mouth (world, m).
    #[serde(deserialize_with = "crate::scene::array3::exact")]
    pub source_in_world_m: [f64; 3],
    /// Direction the wind blows (world, any length).
    #[serde(deserialize_with = "crate::scene::array3::exact")]
    pub direction_in_world: [f64; 3],
    /// Apex-to-disc distance l0 (m).
    pub l0_m: f64,
    /// Source disc radius r0 (m).
    pub r0_m: f64,
    /// Source speed per unit of level above the floor (m/s per unit RMS).
    pub gain_m_per_s: f64,
    /// Force coefficient α (kg·m).
    pub alpha_kg_m: f64,
    /// Random part bound β (relative).
    pub beta: f64,
    /// Seed of the random part.
    pub seed: u64,
    /// Largest face patch edge (m).
    pub max_patch_m: f64,
    /// Still-air damping (N·s/m³): a face moving into the air at normal speed v_n feels
    /// `−c · A · v_n · n_a`. Not part of the paper's law; see [`WindElement`].
    pub air_damping_n_s_per_m3: f64,
    /// In the live rig, blow from where the user looks: the source disc at the camera's
    /// optical centre, the axis along its viewing direction, re-aimed at every tracked frame
    /// (l0 and r0 as above; the configured source and direction hold until the first frame).
    /// `simulate` has no camera and always uses the configured source.
    pub follow_camera: bool,
}

impl Default for WindSettings {
    fn default() -> Self {
        Self {
            source_in_world_m: [0.0, -0.5, 0.45],
            direction_in_world: [0.0, 1.0, 0.0],
            l0_m: 0.15,
            r0_m: 0.08,
            gain_m_per_s: 100.0,
            alpha_kg_m: 0.01,
            beta: 0.2,
            seed: 1,
            max_patch_m: 0.02,
            air_damping_n_s_per_m3: 5.0,
            follow_camera: false,
        }
    }
}

/// A bad `[wind]` setting: the field and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("wind setting `{field}`: {message}")]
pub struct WindSettingsError {
    /// The field.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
}

impl WindSettings {
    /// Checks the values and builds the wind.
    pub fn wind(&self) -> Result<Wind, WindSettingsError> {
        let bad = |field, message: String| WindSettingsError { field, message };
        for (field, v) in [
            ("gain_m_per_s", self.gain_m_per_s),
            ("alpha_kg_m", self.alpha_kg_m),
            ("beta", self.beta),
            ("air_damping_n_s_per_m3", self.air_damping_n_s_per_m3),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(field, format!("{v} must be zero or positive")));
            }
        }
        if !(self.max_patch_m.is_finite() && self.max_patch_m > 0.0) {
            return Err(bad(
                "max_patch_m",
                format!("{} must be positive", self.max_patch_m),
            ));
        }
        if !self.source_in_world_m.iter().all(|c| c.is_finite()) {
            return Err(bad(
                "source_in_world_m",
                "every component must be finite".into(),
            ));
        }
        let cone = WindCone::from_source(
            self.source_in_world_m.into(),
            self.direction_in_world.into(),
            self.l0_m,
            self.r0_m,
        )
        .map_err(|e| bad("cone", e.to_string()))?;
        Ok(Wind::new(
            cone,
            WindParams {
                gain_m_per_s: self.gain_m_per_s,
                alpha_kg_m: self.alpha_kg_m,
                beta: self.beta,
                max_patch_m: self.max_patch_m,
            },
            self.seed,
        ))
    }
}

/// A body the wind may push, as the simulation has it now.
#[derive(Clone, Debug, PartialEq)]
pub struct WindBody {
    /// Its visual shape (the faces the wind blows on).
    pub shape: Shape,
    /// Its pose (the body frame's origin is the centre of mass).
    pub world_from_body: Isometry3<f64>,
    /// Velocity of the centre of mass (m/s, world).
    pub linear_velocity_in_world: Vector3<f64>,
    /// Angular velocity (rad/s, world).
    pub angular_velocity_in_world: Vector3<f64>,
}

/// Body `body` of `sim` as the wind sees it, if the wind pushes it: a moving body with a
/// shape (in the articulated method, one that is a link of the tree).
fn wind_body(sim: &MethodSim, body: BodyId) -> Option<WindBody> {
    match sim {
        MethodSim::Default(sim) => {
            let b = sim.bodies().get(body)?;
            match (b.is_dynamic(), b.shape.clone()) {
                (true, Some(shape)) => Some(WindBody {
                    shape,
                    world_from_body: b.world_from_body(),
                    linear_velocity_in_world: b.linear_velocity_in_world,
                    angular_velocity_in_world: b.angular_velocity_in_world,
                }),
                _ => None,
            }
        }
        MethodSim::Articulated(sim) => {
            let b = sim.model().bodies.get(body)?;
            let shape = b.shape.clone()?;
            sim.body_map().link_of_body[body]?;
            let (linear_velocity_in_world, angular_velocity_in_world) = sim.body_velocity(body);
            Some(WindBody {
                shape,
                world_from_body: sim.body_pose(body),
                linear_velocity_in_world,
                angular_velocity_in_world,
            })
        }
    }
}

/// Applies a pure torque as two opposite forces of a couple about `com`.
fn apply_torque(sim: &mut MethodSim, body: usize, com: &Vector3<f64>, torque: &Vector3<f64>) {
    let Some((axis, t)) = nalgebra::Unit::try_new_and_get(*torque, 1e-300) else {
        return;
    };
    // Two points ±0.5 m from the centre along a direction ⊥ the torque, forces ±F ⊥ both.
    let u = axis.into_inner();
    let helper = if u.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let e = u.cross(&helper).normalize();
    // Torque of the couple: 0.5 e × f + (−0.5 e) × (−f) = e × f = e × (u × e) t = t u.
    let f = u.cross(&e) * t;
    sim.push(body, f, Point3::from(com + e * 0.5));
    sim.push(body, -f, Point3::from(com - e * 0.5));
}

/// Drives a [`Wind`] on a simulation's bodies, with still-air damping.
///
/// The paper's law depends only on where the faces are, not on how fast they move, so a part
/// that can turn freely about its string (every fish, and the whole mobile about the nail) is
/// a windmill: a steady blow spins it up without bound, and past about 10 rad/s the
/// sequential-impulse solver loses the joints. Real air resists motion; the element adds a
/// linear drag on every face that moves into the air, `−c · A · v_n · n_a` (v_n: normal
/// velocity of the face centre, only where v_n > 0), with c = `air_damping_n_s_per_m3`
/// (0 turns it off). The default 5 N·s/m³ spins a fish down in a few seconds; it is far above
/// still air's ~0.1 N·s/m³ at these speeds, in step with the exaggerated α.
#[derive(Debug, Clone)]
pub struct WindElement {
    /// The wind law and its seeded generator.
    pub wind: Wind,
    /// Still-air damping c (N·s/m³).
    pub air_damping_n_s_per_m3: f64,
    /// Re-aim along the camera's view when the rig reports one ([`WindSettings::follow_camera`]).
    pub follow_camera: bool,
    damping_faces: Vec<(Primitive, Vec<super::Face>)>,
    targets: Vec<WindTarget>,
    forces: Vec<FaceForce>,
    last_total_force: Vector3<f64>,
}

impl WindElement {
    /// A wind element with still-air damping `air_damping_n_s_per_m3`; the bodies it pushes
    /// are taken from the simulation at each step.
    pub fn new(wind: Wind, air_damping_n_s_per_m3: f64) -> Self {
        Self {
            wind,
            air_damping_n_s_per_m3,
            follow_camera: false,
            damping_faces: Vec::new(),
            targets: Vec::new(),
            forces: Vec::new(),
            last_total_force: Vector3::zeros(),
        }
    }

    /// Computes the wind for `level` above `floor` (RMS, full scale 1) on every dynamic body
    /// with a shape, and hands the forces to `sim` for its next step.
    pub fn apply(&mut self, sim: &mut MethodSim, level: f64, floor: f64) {
        let v0 = self.wind.params.source_speed_m_per_s(level, floor);
        self.targets.clear();
        for i in 0..sim.body_count() {
            if let Some(b) = wind_body(sim, i) {
                self.targets.push(WindTarget {
                    body: i,
                    primitive: Primitive::from(&b.shape),
                    world_from_body: b.world_from_body,
                });
            }
        }
        self.wind.forces(v0, &self.targets, &mut self.forces);
        let mut total = Vector3::zeros();
        for f in &self.forces {
            total += f.force_in_world;
            sim.push(f.body, f.force_in_world, f.point_in_world);
        }
        self.last_total_force = total;
        if self.air_damping_n_s_per_m3 > 0.0 {
            self.damp(sim);
        }
    }

    fn damp(&mut self, sim: &mut MethodSim) {
        let c = self.air_damping_n_s_per_m3;
        if self.damping_faces.len() != self.targets.len() {
            self.damping_faces.resize_with(self.targets.len(), || {
                (Primitive::Sphere { radius_m: 0.0 }, Vec::new())
            });
        }
        for (k, t) in self.targets.iter().enumerate() {
            let cache = &mut self.damping_faces[k];
            if cache.0 != t.primitive || cache.1.is_empty() {
                *cache = (
                    t.primitive,
                    super::body_faces(&t.primitive, self.wind.params.max_patch_m),
                );
            }
            let Some(b) = wind_body(sim, t.body) else {
                continue;
            };
            let (v, w, com) = (
                b.linear_velocity_in_world,
                b.angular_velocity_in_world,
                b.world_from_body.translation.vector,
            );
            let mut force = Vector3::zeros();
            let mut torque = Vector3::zeros();
            for face in &cache.1 {
                let f = face.transformed(&t.world_from_body);
                let r = f.centre.coords - com;
                let v_n = (v + w.cross(&r)).dot(&f.normal);
                if v_n > 0.0 {
                    let df = f.normal.into_inner() * (-c * f.area_m2 * v_n);
                    force += df;
                    torque += r.cross(&df);
                }
            }
            // One force at the centre of mass plus a torque, applied as a force couple so
            // that the solver's force-at-point interface carries it.
            sim.push(t.body, force, Point3::from(com));
            apply_torque(sim, t.body, &com, &torque);
        }
    }

    /// The element a scene's `[wind]` settings describe.
    pub fn from_settings(settings: &WindSettings) -> Result<Self, WindSettingsError> {
        Ok(Self {
            follow_camera: settings.follow_camera,
            ..Self::new(settings.wind()?, settings.air_damping_n_s_per_m3)
        })
    }

    /// Re-aims the wind at where the user looks: the source disc at the camera's optical
    /// centre, blowing along its viewing direction (l0 and r0 unchanged). The rig calls this
    /// with each frame's `world_from_camera`.
    pub fn aim_from_camera(&mut self, world_from_camera: &nalgebra::Isometry3<f64>) {
        let c = &self.wind.cone;
        if let Ok(cone) = WindCone::from_camera(world_from_camera, c.l0_m, c.r0_m) {
            self.wind.cone = cone;
        }
    }

    /// Sum of the wind forces (damping excluded) applied by the last [`WindElement::apply`] (world, N).
    pub fn last_total_force(&self) -> Vector3<f64> {
        self.last_total_force
    }

    /// The face forces of the last [`WindElement::apply`] (for drawing arrows).
    pub fn last_face_forces(&self) -> &[FaceForce] {
        &self.forces
    }

    /// Where the user's mouth is (world, m), for drawing.
    pub fn source_in_world(&self) -> Point3<f64> {
        self.wind.cone.source_in_world()
    }
}
