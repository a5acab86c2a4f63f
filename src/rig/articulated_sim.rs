//! The articulated method ([`ar_dynamics::articulated`]) behind the rig's [`Simulation`] interface,
//! next to [`super::scene_sim`] for the default method: the same scene file, the same stylus
//! spring (stiffness, damping, the end moving along the chord, see
//! [`super::scene_common::StylusChord`]), the same wind for the same level (the scene's
//! [`ar_dynamics::wind::WindElement`] pushes the tree's bodies), grab points, bodies and
//! diagnostics with the default method's meaning (ψ: the loop-closing joints, 0 for a tree).
//!
//! The rig integrates with fixed-step RK4 ([`RIG_INTEGRATOR`]), [`RIG_SUBSTEPS`] steps per
//! rig step of the scene's h (the wind is computed once per rig step, as the default method
//! does, and acts over all of them); the stylus spring is one implicit impulse per step
//! ([`ar_dynamics::articulated`]'s `stylus` module says why). Joint reactions are not computed by
//! this method, so the rig shows none; scenes with contacts are refused when loaded.

use super::devices::{Simulation, SimulationError};
use super::record::wind_log::WindLog;
use super::scene_common::{
    grab_points_now, rig_diagnostics, scene_name, scene_wind, spring_force_n, MicWind, RigStylus,
};
use super::threads::messages::SimDiagnostics;
use crate::interaction::{GrabPoint, SpringAttachment};
use crate::scene_view::{BodyView, Support};
use ar_dynamics::articulated::{ArticulatedParams, ArticulatedSim, Integrator};
use ar_dynamics::wind::WindElement;
use ar_dynamics::Scene;
use nalgebra::{Isometry3, Point3};
use std::path::Path;
use std::sync::Arc;

/// The integrator of the rig's articulated simulation: fixed-step RK4 (fourth order; four
/// evaluations per step, a few more while the stylus is clipped).
pub const RIG_INTEGRATOR: Integrator = Integrator::Rk4;

/// Integrator steps per rig step. Measured on the ten pendula dragged 10 cm sideways and
/// 5 cm up in 1.5 s and held 1.5 s (the demo's gesture): the energy balance drifts by
/// 3.7e-4 J with one RK4 step per 10 ms (about 1 % of the energy the drag exchanges: the
/// stiff spring makes the tip link turn fast within a step), 2.3e-5 J with two, 9e-7 J with
/// four; with adaptive RK45 at 1e-10 the drift is 4e-12 J, so what remains is RK4's error,
/// not the spring's bookkeeping. The live arm's samples come in bursts (a 90 ms stall, then a
/// 14 mm jump, seen in the demo): the same gesture fed in steps held for 90 ms reaches a
/// balance error of 0.87 % with two steps and 0.026 % with four (the default method: 0.032 %).
/// Four cost ~40 evaluations of the dynamics per clipped rig step, ~0.1 ms for the ten
/// pendula in a release build.
pub const RIG_SUBSTEPS: usize = 4;

/// A scene's articulated simulation driven by the rig.
pub struct ArticulatedSceneSimulation {
    sim: ArticulatedSim,
    stylus: RigStylus,
    wind: MicWind,
    /// The bodies' names, shared by every snapshot.
    names: Vec<Arc<str>>,
    /// The scene's supports, shared by every snapshot.
    supports: Arc<[Support]>,
    /// The scene's name (file stem), shared by every snapshot.
    name: Arc<str>,
}

impl ArticulatedSceneSimulation {
    /// Loads a scene file and builds its tree (RK4 at the scene's step), with the wind of its
    /// `[wind]` table if it has one. A scene the method cannot run (contacts, an
    /// unsupported joint) is an error saying what is unsupported.
    pub fn load(path: &Path) -> Result<Self, SimulationError> {
        let scene = Scene::load(path).map_err(|e| SimulationError(e.to_string()))?;
        let params = ArticulatedParams {
            dt_secs: scene.params.dt_secs / RIG_SUBSTEPS as f64,
            integrator: RIG_INTEGRATOR,
        };
        // The rig's callers name the scene.
        let sim = ArticulatedSim::from_scene(&scene, params)
            .map_err(|e| SimulationError(e.to_string()))?;
        let wind = scene_wind(&scene, path)?;
        Ok(Self::new(sim, wind, scene.supports, &scene_name(path)))
    }

    /// Wraps a built simulation with the default stylus spring, a wind (or none), the
    /// supports drawn with the bodies and the scene's name.
    pub fn new(
        sim: ArticulatedSim,
        wind: Option<WindElement>,
        supports: Vec<Support>,
        name: &str,
    ) -> Self {
        let names = sim
            .model()
            .bodies
            .iter()
            .map(|b| Arc::from(b.name.as_str()))
            .collect();
        Self {
            sim,
            stylus: RigStylus::default(),
            wind: MicWind::new(wind),
            names,
            supports: Arc::from(supports),
            name: Arc::from(name),
        }
    }

    /// The wind the microphone level drives, if any.
    pub fn wind(&self) -> Option<&WindElement> {
        self.wind.element()
    }

    /// A handle on the account of the wind applied so far.
    pub fn wind_log(&self) -> WindLog {
        self.wind.log()
    }

    /// The rig's step, seconds ([`RIG_SUBSTEPS`] of the method's).
    pub fn dt_secs(&self) -> f64 {
        self.sim.dt_secs() * RIG_SUBSTEPS as f64
    }

    /// The wrapped simulation.
    pub fn inner(&self) -> &ArticulatedSim {
        &self.sim
    }
}

impl Simulation for ArticulatedSceneSimulation {
    fn dt_secs(&self) -> f64 {
        ArticulatedSceneSimulation::dt_secs(self)
    }

    fn step(
        &mut self,
        spring: Option<&SpringAttachment>,
        wind_level: f64,
    ) -> Result<(), SimulationError> {
        let dt_secs = ArticulatedSceneSimulation::dt_secs(self);
        // No contacts in this method: the tip never pushes.
        self.stylus.drive(&mut self.sim, spring, None, dt_secs)?;
        let wind_force_n = self.wind.blow(&mut self.sim, wind_level);
        let t0 = self.sim.time_secs();
        self.sim.step_n(RIG_SUBSTEPS).map_err(|e| {
            SimulationError(format!(
                "articulated step from t = {t0:.6} s to {:.6} s: {e}",
                t0 + dt_secs
            ))
        })?;
        if let Some(what) = self.sim.diagnostics().non_finite() {
            return Err(SimulationError(format!(
                "articulated step from t = {t0:.6} s to {:.6} s: {what} is not finite",
                t0 + dt_secs
            )));
        }
        self.wind
            .record(dt_secs, self.sim.time_secs(), wind_level, wind_force_n);
        Ok(())
    }

    fn set_viewpoint(&mut self, world_from_camera: &Isometry3<f64>) {
        self.wind.aim(world_from_camera);
    }

    fn grab_points(&self) -> Vec<GrabPoint> {
        grab_points_now(&self.sim)
    }

    fn point_in_world(&self, body: usize, point_in_body: &Point3<f64>) -> Option<Point3<f64>> {
        (body < self.sim.model().bodies.len()).then(|| self.sim.body_pose(body) * point_in_body)
    }

    fn bodies(&self) -> Vec<BodyView> {
        self.sim
            .model()
            .bodies
            .iter()
            .zip(&self.names)
            .enumerate()
            .filter_map(|(i, (b, name))| {
                Some(BodyView {
                    body: i,
                    name: name.clone(),
                    shape: b.shape?,
                    world_from_body: self.sim.body_pose(i),
                })
            })
            .collect()
    }

    fn supports(&self) -> Arc<[Support]> {
        self.supports.clone()
    }

    fn name(&self) -> Arc<str> {
        self.name.clone()
    }

    fn diagnostics(&self) -> SimDiagnostics {
        let force_n = spring_force_n(
            self.stylus.stiffness_n_per_m,
            self.sim.stylus_point_in_world(),
            self.sim.stylus_target().map(|t| t.position_in_world),
        );
        rig_diagnostics(self.sim.diagnostics(), force_n)
    }
}
