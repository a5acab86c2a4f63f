//! The scene's simulation as the rig runs it: one [`ar_dynamics::SceneSimulation`] (either
//! method, chosen when it was loaded), driven by the stylus through the interaction's spring
//! ([`stylus::RigStylus`]), by the microphone's level through the scene's wind, and read back
//! as neutral data for the snapshots ([`crate::scene_view`]): bodies, grab points, reactions,
//! contacts, diagnostics. The step is the scene's (`[solver] dt_secs`).
//!
//! In a scene whose stylus tip pushes (`[contact] stylus_tip_radius_m`), the tip is handed to
//! the solver before every step whether clipped or not, moving along the same chord as the
//! spring's end: the kinematic sphere then pushes whatever it meets, with the button up. A tip
//! that appears (the stylus connects, or comes back) inside a body would not push it but
//! blast it out, with no work booked; so a tip that is not yet in the scene enters it only
//! once it is clear of every moving body ([`SceneSimulation::tip_is_clear`]), and passes
//! through until then.
//!
//! The microphone makes wind here: when the scene has a `[wind]` table, every step hands the
//! level above the microphone's noise floor to the scene's wind, as `simulate --wind` does; a
//! scene without a `[wind]` table places no user's mouth, so it gets no wind.

pub mod stylus;
mod visual_meshes;

#[cfg(test)]
mod tests;

use crate::compositor::mesh::SharedMesh;
use crate::interaction::{GrabPoint, SpringAttachment};
use crate::rig::method::Method;
use crate::rig::record::wind_log::WindLog;
use crate::rig::threads::messages::SimDiagnostics;
use crate::scene_view::{BodyView, ReactionView, RigidGroupView, Support};
use ar_dynamics::{MethodSim, SceneSimulation, StepInput};
use nalgebra::{Isometry3, Point3};
use std::path::Path;
use std::sync::Arc;
use stylus::RigStylus;

/// A simulation failure (the message says what and where, e.g. the time and the body whose
/// state stopped being finite).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("simulation: {0}")]
pub struct SimulationError(pub String);

/// A scene's simulation driven by the rig (see the module docs).
#[derive(Debug, Clone)]
pub struct RigSimulation {
    sim: SceneSimulation,
    stylus: RigStylus,
    /// The newest stylus tip (world), for a tip that pushes.
    tip_in_world: Option<Point3<f64>>,
    /// The account of the wind applied so far (kept only when the scene has wind).
    wind_log: WindLog,
    /// The bodies' names, shared by every snapshot.
    names: Vec<Arc<str>>,
    /// The rigid groups' names (fixed when the scene is built), shared by every snapshot.
    group_names: Vec<Arc<str>>,
    /// The scene's supports, shared by every snapshot.
    supports: Arc<[Support]>,
    /// The scene's name, shared by every snapshot.
    name: Arc<str>,
    /// Each body's loaded mesh visuals (see [`BodyView::meshes`]), shared by every snapshot;
    /// empty until [`Self::load`] reads them.
    meshes: Vec<Arc<[Option<SharedMesh>]>>,
}

impl RigSimulation {
    /// Loads the scene file at `path` for `method` (the articulated method as the rig runs
    /// it: RK4, four steps per scene step), with its bodies' mesh visuals. A scene the method
    /// cannot run is an error saying what is unsupported; a mesh that cannot be read is an
    /// error naming the body, the path tried and the cause.
    pub fn load(path: &Path, method: Method) -> Result<Self, SimulationError> {
        let method = match method {
            Method::Default => ar_dynamics::Method::Default,
            Method::Articulated => ar_dynamics::Method::RIG_ARTICULATED,
        };
        let scene =
            crate::scene_load::load_scene(path).map_err(|e| SimulationError(e.to_string()))?;
        let mut rig = SceneSimulation::build(&scene, method)
            .map(Self::new)
            .map_err(|e| SimulationError(e.to_string()))?;
        rig.meshes = visual_meshes::load(&rig.sim)?;
        Ok(rig)
    }

    /// Drives a built simulation with the default stylus spring. Its mesh visuals are not
    /// read (the bodies' shapes stand in for them); [`Self::load`] reads them.
    pub fn new(sim: SceneSimulation) -> Self {
        let names = sim
            .bodies()
            .iter()
            .map(|b| Arc::from(b.name.as_str()))
            .collect();
        let group_names = match sim.method() {
            MethodSim::Default(s) => s
                .rigid_groups()
                .iter()
                .map(|g| Arc::from(g.name.as_str()))
                .collect(),
            MethodSim::Articulated(_) => Vec::new(),
        };
        let mut stylus = RigStylus::default();
        stylus.pushes = sim.stylus_tip_radius_m().is_some();
        Self {
            names,
            group_names,
            supports: Arc::from(sim.supports().to_vec()),
            name: Arc::from(sim.name()),
            meshes: Vec::new(),
            stylus,
            tip_in_world: None,
            wind_log: WindLog::default(),
            sim,
        }
    }

    /// The simulation being driven.
    pub fn inner(&self) -> &SceneSimulation {
        &self.sim
    }

    /// A handle on the account of the wind applied so far, when the scene has wind (it stays
    /// valid after the simulation moves to the solver thread).
    pub fn wind_log(&self) -> Option<WindLog> {
        self.sim.wind().is_some().then(|| self.wind_log.clone())
    }

    /// The scene's step h, seconds: the solver thread paces its steps by it, and times and
    /// recordings count in it.
    pub fn dt_secs(&self) -> f64 {
        self.sim.dt_secs()
    }

    /// Advances by one step, with the stylus spring while clipped and the wind level: the
    /// microphone's RMS above its noise floor (full scale 1; 0 when silent or without a
    /// microphone). An error means the simulation cannot go on (its state would not be
    /// finite, a step does not converge): the solver thread stops stepping.
    pub fn step(
        &mut self,
        spring: Option<&SpringAttachment>,
        wind_level: f64,
    ) -> Result<(), SimulationError> {
        let dt_secs = self.sim.dt_secs();
        let tip = self
            .tip_in_world
            .filter(|p| self.stylus.is_tracking() || self.sim.tip_is_clear(p));
        let (clip, tip) = self.stylus.input(spring, tip, dt_secs);
        let input = StepInput {
            clip,
            tip,
            loads: &[],
            wind_level,
        };
        self.sim
            .step(&input)
            .map_err(|e| SimulationError(e.to_string()))?;
        if let Some(wind) = self.sim.wind() {
            let force_n = wind.last_total_force().norm();
            self.wind_log
                .record(dt_secs, self.sim.time_secs(), wind_level, force_n);
        }
        Ok(())
    }

    /// The stylus tip before the next step (world; `None`: no stylus). A scene whose tip
    /// pushes moves its kinematic sphere there while not clipped; the others ignore it.
    pub fn set_stylus_tip(&mut self, tip_in_world: Option<Point3<f64>>) {
        self.tip_in_world = tip_in_world;
    }

    /// The radius of the pushing stylus tip (m), when the scene's tip pushes the bodies.
    pub fn stylus_tip_radius_m(&self) -> Option<f64> {
        self.sim.stylus_tip_radius_m()
    }

    /// The camera's pose in the newest tracked frame, for a wind that blows from where the
    /// user looks.
    pub fn set_viewpoint(&mut self, world_from_camera: &Isometry3<f64>) {
        self.sim.aim_wind(world_from_camera);
    }

    /// The points the stylus may clip to, where they are now.
    pub fn grab_points(&self) -> Vec<GrabPoint> {
        self.sim
            .grab_points()
            .iter()
            .enumerate()
            .filter_map(|(i, g)| {
                Some(GrabPoint {
                    body: g.body,
                    point_in_body: Point3::from(g.point_in_body),
                    point_in_world: self.sim.grab_point_in_world(i)?,
                })
            })
            .collect()
    }

    /// Where a body point is now; `None` for an unknown body.
    pub fn point_in_world(&self, body: usize, point_in_body: &Point3<f64>) -> Option<Point3<f64>> {
        (body < self.sim.bodies().len()).then(|| self.sim.body_pose(body) * point_in_body)
    }

    /// The bodies that have a visual shape, at their current poses.
    pub fn bodies(&self) -> Vec<BodyView> {
        self.sim
            .bodies()
            .iter()
            .zip(&self.names)
            .enumerate()
            .filter_map(|(i, (b, name))| {
                Some(BodyView {
                    body: i,
                    name: name.clone(),
                    shape: b.shape.clone()?,
                    world_from_body: self.sim.body_pose(i),
                    visuals: b.visuals.clone(),
                    meshes: self.meshes.get(i).cloned().unwrap_or_else(|| Arc::new([])),
                })
            })
            .collect()
    }

    /// The scene's supports (stands, posts, threads), drawn with the bodies. Shared: they
    /// never move, and every snapshot carries them.
    pub fn supports(&self) -> Arc<[Support]> {
        self.supports.clone()
    }

    /// The scene's name, for the HUD.
    pub fn name(&self) -> Arc<str> {
        self.name.clone()
    }

    /// The joints' reaction forces on their second bodies (the default method; the
    /// articulated method computes none).
    pub fn reactions(&self) -> Vec<ReactionView> {
        let MethodSim::Default(sim) = self.sim.method() else {
            return Vec::new();
        };
        let bodies = sim.bodies();
        sim.joints()
            .iter()
            .zip(sim.joint_reactions())
            .filter_map(|(j, r)| {
                let b2 = bodies.get(j.body2)?;
                Some(ReactionView {
                    point_in_world: b2.point_in_world(&j.anchor2_in_body2),
                    force_in_world: r.force_in_world,
                })
            })
            .collect()
    }

    /// Contact normal forces after the last step, one per loaded contact point: the force on
    /// the second shape's body, or on the first's when the second does not move (the desk, a
    /// static body), so that the arrow shows what pushes the moving body.
    pub fn contacts(&self) -> Vec<ReactionView> {
        let MethodSim::Default(sim) = self.sim.method() else {
            return Vec::new();
        };
        let Some(model) = sim.model().contact.as_ref() else {
            return Vec::new();
        };
        let bodies = sim.bodies();
        let moves = |shape: usize| {
            model
                .colliders
                .get(shape)
                .and_then(|k| bodies.get(k.body))
                .is_some_and(|b| b.is_dynamic())
        };
        sim.contact_report()
            .iter()
            .filter(|c| c.normal_force_n > 0.0)
            .map(|c| {
                let sign = if moves(c.shape2) { 1.0 } else { -1.0 };
                ReactionView {
                    point_in_world: Point3::from(c.point_in_world),
                    force_in_world: c.normal * (sign * c.normal_force_n),
                }
            })
            .collect()
    }

    /// Diagnostics of the last step, with the stylus spring's force.
    pub fn diagnostics(&self) -> SimDiagnostics {
        let d = self.sim.diagnostics();
        let spring_force_n = match (
            self.sim.stylus_point_in_world(),
            self.sim.stylus_target().map(|t| t.position_in_world),
        ) {
            (Some(p), Some(t)) => self.stylus.stiffness_n_per_m * (t - p).norm(),
            _ => 0.0,
        };
        SimDiagnostics {
            psi_norm_m: d.constraint_norm_m,
            energy_error_rel: d.energy_error_rel,
            energy_drift_j: d.energy_drift_j,
            energy_reference_j: d.energy_reference_j,
            energy_j: d.kinetic_j + d.potential_j + d.elastic_j,
            kinetic_j: d.kinetic_j,
            user_work_j: d.user_work_j,
            penetration_m: self.sim.max_penetration_m(),
            spring_force_n,
        }
    }

    /// The rigid groups of the scene's deformable bodies and their state now.
    pub fn rigid_groups(&self) -> Vec<RigidGroupView> {
        let MethodSim::Default(sim) = self.sim.method() else {
            return Vec::new();
        };
        sim.rigid_groups()
            .iter()
            .zip(&self.group_names)
            .map(|(g, name)| RigidGroupView {
                name: name.clone(),
                rigid: g.rigid,
            })
            .collect()
    }

    /// Makes the named rigid group of a deformable body rigid (`true`) or deformable
    /// (`false`) now, conserving momentum; an error names why not.
    pub fn set_group_rigid(&mut self, name: &str, rigid: bool) -> Result<(), SimulationError> {
        match self.sim.method_mut() {
            MethodSim::Default(sim) => sim
                .set_group_rigid(name, rigid)
                .map_err(|e| SimulationError(e.to_string())),
            MethodSim::Articulated(_) => Err(SimulationError(format!(
                "no rigid group `{name}`: the articulated method has no rigid groups"
            ))),
        }
    }
}
