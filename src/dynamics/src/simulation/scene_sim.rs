//! One interface for a scene's simulation, whichever method runs it: the rig's solver thread,
//! `simulate`, the sandbox and replay all drive a [`SceneSimulation`] through
//! [`SceneSimulation::step`] with a [`StepInput`] (the stylus spring and tip, external loads,
//! the wind level), and read the same answers back (bodies, grab points, diagnostics). The
//! method is chosen once, when the simulation is built ([`Method`]); the time step belongs to
//! the scene (`[solver] dt_secs`).
//!
//! Within a step the inputs are applied in one order: the stylus tip, then the clip or
//! release, then the wind's forces, then the loads, then the method's step. (The order of
//! the first two matters for the energy ledger's rounding when a clip meets a tip that was
//! already placed: the tip first is the order `simulate` has always used.)

use std::path::Path;

use nalgebra::{Isometry3, Point3, Vector3};

use crate::articulated::{ArticulatedError, ArticulatedParams, ArticulatedSim, Integrator};
use crate::error::SceneError;
use crate::model::body::{Body, BodyId};
use crate::model::grab::GrabPoint;
use crate::model::stylus::{StylusAttachment, StylusTarget};
use crate::model::support::Support;
use crate::scene::Scene;
use crate::simulation::Simulation;
use crate::state::diagnostics::StepDiagnostics;
use crate::wind::{WindElement, WindSettingsError};
use crate::SimError;

/// How a scene is simulated, chosen once when its simulation is built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Maximal coordinates: the paper's impulses with the coupled direct solve (or the
    /// scene's `[solver]` method), at the scene's step.
    Default,
    /// Reduced coordinates: the articulated-body algorithm with `integrator`, `substeps`
    /// integrator steps per step of the scene (exact tree joints; loops closed by rows).
    Articulated {
        /// The integrator of the joint coordinates.
        integrator: Integrator,
        /// Integrator steps per scene step (1 or more).
        substeps: usize,
    },
}

impl Method {
    /// The articulated method as the rig runs it: RK4, four steps per scene step. Measured
    /// on the ten pendula dragged 10 cm sideways and 5 cm up in 1.5 s and held 1.5 s (the
    /// demo's gesture): the energy balance drifts by 3.7e-4 J with one RK4 step per 10 ms
    /// (about 1 % of the energy the drag exchanges), 2.3e-5 J with two, 9e-7 J with four.
    /// The live arm's samples come in bursts (a 90 ms stall, then a 14 mm jump): the same
    /// gesture fed in steps held for 90 ms reaches a balance error of 0.87 % with two steps
    /// and 0.026 % with four (the default method: 0.032 %). Four cost ~40 evaluations of the
    /// dynamics per clipped step, ~0.1 ms for the ten pendula in a release build.
    pub const RIG_ARTICULATED: Method = Method::Articulated {
        integrator: Integrator::Rk4,
        substeps: 4,
    };

    /// The name the command line uses (`default`, `articulated`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Default => "default",
            Method::Articulated { .. } => "articulated",
        }
    }
}

/// A force on a body for one step (N, world), at a world point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLoad {
    /// The body it pushes.
    pub body: BodyId,
    /// The force (N, world).
    pub force_in_world: Vector3<f64>,
    /// Where it acts (m, world).
    pub point_in_world: Point3<f64>,
}

/// What one step takes from outside the simulation.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepInput<'a> {
    /// The stylus spring while it is clipped: the body point it holds, its stiffness and
    /// damping. `None`: released (a clipped spring lets go).
    pub clip: Option<StylusAttachment>,
    /// Where the stylus tip is at the start of the step and how fast it moves during it
    /// (world): the spring's end while clipped; in a scene whose tip pushes the bodies
    /// (`[contact] stylus_tip_radius_m`), the kinematic sphere. `None`: no new tip (a pushing
    /// tip is lifted off the scene; otherwise the last tip goes on at its velocity).
    pub tip: Option<StylusTarget>,
    /// Forces for this step only.
    pub loads: &'a [PointLoad],
    /// The wind level: the microphone's RMS above its noise floor (full scale 1; 0 is still
    /// air), which the scene's wind turns into forces.
    pub wind_level: f64,
}

/// The simulation of either method, for what only one of them has (joint reactions and
/// contacts in the default method; the tree and the integrator in the articulated one).
#[derive(Clone, Debug)]
// One per simulation, never in a collection: boxing the larger variant would buy nothing but
// an indirection on every step.
#[allow(clippy::large_enum_variant)]
pub enum MethodSim {
    /// Maximal coordinates.
    Default(Simulation),
    /// Reduced coordinates.
    Articulated(ArticulatedSim),
}

/// Why a scene's simulation could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The scene file is bad, or the default method cannot build it.
    #[error(transparent)]
    Scene(#[from] SceneError),
    /// The articulated method cannot run this scene (contacts, limits, an unsupported
    /// joint). Transparent: with `{0}` and a source, `{:#}` printed the message twice.
    #[error(transparent)]
    Articulated(#[from] ArticulatedError),
    /// The scene's `[wind]` table does not make a wind.
    #[error("scene {path}: [wind]: {cause}")]
    Wind {
        /// The scene file.
        path: String,
        /// What is wrong.
        cause: WindSettingsError,
    },
}

/// Why a step could not be taken (the simulation keeps the state before it).
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The default method's step failed, or its stylus could not clip.
    #[error(transparent)]
    Default(#[from] SimError),
    /// A stylus script on a scene without this grab point.
    #[error("the scene has no grab point {index} for the stylus script")]
    UnknownGrabPoint {
        /// The grab point's index.
        index: usize,
    },
    /// The articulated method's step failed, or its stylus could not clip.
    #[error("articulated step from t = {from_secs:.6} s to {to_secs:.6} s: {why}")]
    Articulated {
        /// Time at the start of the step (s).
        from_secs: f64,
        /// Time at its end (s).
        to_secs: f64,
        /// What went wrong.
        why: String,
    },
}

/// A scene's simulation in either method (see the module docs).
#[derive(Clone, Debug)]
pub struct SceneSimulation {
    sim: MethodSim,
    substeps: usize,
    wind: Option<WindElement>,
    supports: Vec<Support>,
    name: String,
}

impl SceneSimulation {
    /// Loads and builds the scene file at `path` for `method`, with the wind of its `[wind]`
    /// table if it has one; the scene is named after the file's stem.
    pub fn load(path: &Path, method: Method) -> Result<Self, BuildError> {
        let scene = Scene::load(path)?;
        Self::build(&scene, method)
    }

    /// Builds `scene` (its solver parameters, step and wind as they are) for `method`.
    pub fn build(scene: &Scene, method: Method) -> Result<Self, BuildError> {
        let (sim, substeps) = match method {
            Method::Default => (MethodSim::Default(scene.build()?), 1),
            Method::Articulated {
                integrator,
                substeps,
            } => {
                let substeps = substeps.max(1);
                let params = ArticulatedParams {
                    dt_secs: scene.params.dt_secs / substeps as f64,
                    integrator,
                };
                let sim = ArticulatedSim::from_scene(scene, params)?;
                (MethodSim::Articulated(sim), substeps)
            }
        };
        let wind = scene
            .wind
            .as_ref()
            .map(|settings| {
                WindElement::from_settings(settings).map_err(|cause| BuildError::Wind {
                    path: scene.path.display().to_string(),
                    cause,
                })
            })
            .transpose()?;
        Ok(Self {
            sim,
            substeps,
            wind,
            supports: scene.supports.clone(),
            name: crate::scene::scene_name(&scene.path),
        })
    }

    /// The default method's simulation, if it runs the scene.
    pub fn as_default(&self) -> Option<&Simulation> {
        match &self.sim {
            MethodSim::Default(sim) => Some(sim),
            MethodSim::Articulated(_) => None,
        }
    }

    /// The default method's simulation, taken out, if it runs the scene.
    pub fn into_default(self) -> Option<Simulation> {
        match self.sim {
            MethodSim::Default(sim) => Some(sim),
            MethodSim::Articulated(_) => None,
        }
    }

    /// The articulated method's simulation, if it runs the scene.
    pub fn as_articulated(&self) -> Option<&ArticulatedSim> {
        match &self.sim {
            MethodSim::Articulated(sim) => Some(sim),
            MethodSim::Default(_) => None,
        }
    }

    /// Replaces the wind the level drives (`None`: the level makes no wind).
    pub fn with_wind(mut self, wind: Option<WindElement>) -> Self {
        self.wind = wind;
        self
    }

    /// Renames the scene (the HUD and summaries show it).
    pub fn with_name(mut self, name: &str) -> Self {
        self.name = name.to_owned();
        self
    }

    /// One step of the scene's h with `input` (see the module docs for the order).
    ///
    /// # Errors
    /// [`StepError`] when the step cannot be taken (a state that would not be finite, a step
    /// that does not converge even split) or the stylus cannot clip (a fixed body, a bad
    /// spring); the state is then that before the step.
    pub fn step(&mut self, input: &StepInput) -> Result<(), StepError> {
        self.apply_stylus(input)?;
        if let Some(wind) = self.wind.as_mut() {
            wind.apply(&mut self.sim, input.wind_level, 0.0);
        }
        for load in input.loads {
            self.sim
                .push(load.body, load.force_in_world, load.point_in_world);
        }
        match &mut self.sim {
            MethodSim::Default(sim) => Ok(sim.step()?),
            MethodSim::Articulated(sim) => step_articulated(sim, self.substeps),
        }
    }

    /// Places the tip, then clips or releases the spring (see [`StepInput`]).
    fn apply_stylus(&mut self, input: &StepInput) -> Result<(), StepError> {
        let pushes = self.stylus_tip_radius_m().is_some();
        let had_tip = self.stylus_target().is_some();
        let clipped = self.clip().copied();
        let t0 = self.time_secs();
        let h = self.dt_secs();
        let clip_error = |why: String| StepError::Articulated {
            from_secs: t0,
            to_secs: t0 + h,
            why,
        };
        match &mut self.sim {
            MethodSim::Default(sim) => {
                match input.tip {
                    Some(t) => sim.set_stylus_target(t.position_in_world, t.velocity_in_world),
                    None if pushes && had_tip => sim.clear_stylus_target(),
                    None => {}
                }
                match (input.clip, clipped) {
                    (Some(wanted), Some(now)) if wanted == now => {}
                    (Some(wanted), _) => sim.attach_stylus(wanted)?,
                    (None, Some(_)) => sim.detach_stylus(),
                    (None, None) => {}
                }
            }
            MethodSim::Articulated(sim) => {
                if let Some(t) = input.tip {
                    sim.set_stylus_target(t.position_in_world, t.velocity_in_world);
                }
                match (input.clip, clipped) {
                    (Some(wanted), Some(now)) if wanted == now => {}
                    (Some(wanted), _) => sim
                        .attach_stylus(wanted)
                        .map_err(|e| clip_error(e.to_string()))?,
                    (None, Some(_)) => sim.detach_stylus(),
                    (None, None) => {}
                }
            }
        }
        Ok(())
    }

    /// The simulation of the method that runs the scene.
    pub fn method(&self) -> &MethodSim {
        &self.sim
    }

    /// The simulation of the method that runs the scene, to change what only it has.
    pub fn method_mut(&mut self) -> &mut MethodSim {
        &mut self.sim
    }

    /// The method's name (`default`, `articulated`).
    pub fn method_name(&self) -> &'static str {
        match self.sim {
            MethodSim::Default(_) => "default",
            MethodSim::Articulated(_) => "articulated",
        }
    }

    /// The scene's name (its file's stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scene's supports (stands, posts, threads), drawn with the bodies.
    pub fn supports(&self) -> &[Support] {
        &self.supports
    }

    /// The wind the level drives, if any (its last forces, where it comes from).
    pub fn wind(&self) -> Option<&WindElement> {
        self.wind.as_ref()
    }

    /// Aims a wind that follows the camera (`[wind] follow_camera`) along where the camera
    /// looks; any other wind stays as configured.
    pub fn aim_wind(&mut self, world_from_camera: &Isometry3<f64>) {
        if let Some(wind) = self.wind.as_mut().filter(|w| w.follow_camera) {
            wind.aim_from_camera(world_from_camera);
        }
    }

    /// The scene's step h (s): a step of [`Self::step`].
    pub fn dt_secs(&self) -> f64 {
        match &self.sim {
            MethodSim::Default(sim) => sim.dt_secs(),
            MethodSim::Articulated(sim) => sim.dt_secs() * self.substeps as f64,
        }
    }

    /// Simulated time (s).
    pub fn time_secs(&self) -> f64 {
        match &self.sim {
            MethodSim::Default(sim) => sim.time_secs(),
            MethodSim::Articulated(sim) => sim.time_secs(),
        }
    }

    /// Diagnostics of the last step (before the first: of the initial state).
    pub fn diagnostics(&self) -> &StepDiagnostics {
        match &self.sim {
            MethodSim::Default(sim) => sim.diagnostics(),
            MethodSim::Articulated(sim) => sim.diagnostics(),
        }
    }

    /// The bodies' constants (name, mass, shape); index 0 is the ground. Their poses and
    /// velocities: [`Self::body_pose`], [`Self::body_velocity`].
    pub fn bodies(&self) -> &[Body] {
        match &self.sim {
            MethodSim::Default(sim) => sim.bodies(),
            MethodSim::Articulated(sim) => &sim.model().bodies,
        }
    }

    /// The pose `world_from_body` of body `body` now.
    pub fn body_pose(&self, body: BodyId) -> Isometry3<f64> {
        match &self.sim {
            MethodSim::Default(sim) => sim.body_pose(body),
            MethodSim::Articulated(sim) => sim.body_pose(body),
        }
    }

    /// The linear and angular velocity of body `body` now (m/s, rad/s, world).
    pub fn body_velocity(&self, body: BodyId) -> (Vector3<f64>, Vector3<f64>) {
        self.sim.body_velocity(body)
    }

    /// The points the stylus may clip to.
    pub fn grab_points(&self) -> &[GrabPoint] {
        match &self.sim {
            MethodSim::Default(sim) => sim.grab_points(),
            MethodSim::Articulated(sim) => sim.grab_points(),
        }
    }

    /// Where grab point `index` is now (world), if the scene has it.
    pub fn grab_point_in_world(&self, index: usize) -> Option<Point3<f64>> {
        match &self.sim {
            MethodSim::Default(sim) => sim.grab_point_in_world(index),
            MethodSim::Articulated(sim) => sim.grab_point_in_world(index),
        }
    }

    /// The clipped spring, while clipped.
    pub fn clip(&self) -> Option<&StylusAttachment> {
        match &self.sim {
            MethodSim::Default(sim) => sim.stylus_attachment(),
            MethodSim::Articulated(sim) => sim.stylus_attachment(),
        }
    }

    /// The stylus tip the next step uses, if there is one.
    pub fn stylus_target(&self) -> Option<&StylusTarget> {
        match &self.sim {
            MethodSim::Default(sim) => sim.stylus_target(),
            MethodSim::Articulated(sim) => sim.stylus_target(),
        }
    }

    /// The clipped body point (world), while clipped.
    pub fn stylus_point_in_world(&self) -> Option<Point3<f64>> {
        match &self.sim {
            MethodSim::Default(sim) => sim.stylus_point_in_world(),
            MethodSim::Articulated(sim) => sim.stylus_point_in_world(),
        }
    }

    /// The deepest penetration between colliders at the end of the last step (m; 0 without
    /// contact).
    pub fn max_penetration_m(&self) -> f64 {
        match &self.sim {
            MethodSim::Default(sim) => sim.max_penetration_m(),
            MethodSim::Articulated(_) => 0.0,
        }
    }

    /// Sweeps the contact solve ran in the last step, the sparse one's or the coupled
    /// rounds' ([`crate::Simulation::contact_sweeps`]; 0 with the articulated method).
    pub fn contact_sweeps(&self) -> usize {
        match &self.sim {
            MethodSim::Default(sim) => sim.contact_sweeps(),
            MethodSim::Articulated(_) => 0,
        }
    }

    /// Rounds that solved the last step's contacts with the springs
    /// ([`crate::Simulation::contact_rounds`]; 0 with the articulated method).
    pub fn contact_rounds(&self) -> usize {
        match &self.sim {
            MethodSim::Default(sim) => sim.contact_rounds(),
            MethodSim::Articulated(_) => 0,
        }
    }

    /// The radius of the stylus tip (m) when it pushes the bodies (the scene's `[contact]
    /// stylus_tip_radius_m`); `None` when it passes through them.
    pub fn stylus_tip_radius_m(&self) -> Option<f64> {
        let MethodSim::Default(sim) = &self.sim else {
            return None;
        };
        sim.model()
            .contact
            .as_ref()
            .filter(|c| c.tip_body.is_some())
            .and_then(|c| c.stylus_tip_radius_m)
    }

    /// True when a pushing tip at `tip_in_world` is clear of every moving body's collider:
    /// outside the sphere about the collider that holds it, by the tip's radius. Conservative
    /// (a tip beside a long box may wait a little longer to enter), but a tip that enters the
    /// scene there never appears inside a body, which would blast the body out with no work
    /// booked. The fixed geometry never collides with the tip.
    pub fn tip_is_clear(&self, tip_in_world: &Point3<f64>) -> bool {
        let MethodSim::Default(sim) = &self.sim else {
            return true;
        };
        let Some(model) = sim.model().contact.as_ref() else {
            return true;
        };
        let tip_radius_m = model.stylus_tip_radius_m.unwrap_or(0.0);
        let bodies = sim.bodies();
        model.colliders.iter().all(|c| {
            let Some(body) = bodies.get(c.body).filter(|b| b.is_dynamic()) else {
                return true;
            };
            let centre = body.world_from_body() * c.body_from_shape * Point3::origin();
            (tip_in_world - centre).norm() > c.shape.bounding_radius_m() + tip_radius_m
        })
    }
}

/// A built simulation of the default method, named `scene`, without wind or supports.
impl From<Simulation> for SceneSimulation {
    fn from(sim: Simulation) -> Self {
        Self {
            sim: MethodSim::Default(sim),
            substeps: 1,
            wind: None,
            supports: Vec::new(),
            name: "scene".to_owned(),
        }
    }
}

/// A built simulation of the articulated method (one integrator step per step), named
/// `scene`, without wind or supports.
impl From<ArticulatedSim> for SceneSimulation {
    fn from(sim: ArticulatedSim) -> Self {
        Self {
            sim: MethodSim::Articulated(sim),
            substeps: 1,
            wind: None,
            supports: Vec::new(),
            name: "scene".to_owned(),
        }
    }
}

/// `substeps` articulated steps, the failure named with the step's times; a state that is
/// not finite is a failure too.
fn step_articulated(sim: &mut ArticulatedSim, substeps: usize) -> Result<(), StepError> {
    let from_secs = sim.time_secs();
    let to_secs = from_secs + sim.dt_secs() * substeps as f64;
    let failed = |why: String| StepError::Articulated {
        from_secs,
        to_secs,
        why,
    };
    let stepped = if substeps == 1 {
        sim.step()
    } else {
        sim.step_n(substeps)
    };
    stepped.map_err(|e| failed(e.to_string()))?;
    if let Some(what) = sim.diagnostics().non_finite() {
        return Err(failed(format!("{what} is not finite")));
    }
    Ok(())
}

impl MethodSim {
    /// How many bodies the simulation has (index 0 is the ground).
    pub fn body_count(&self) -> usize {
        match self {
            MethodSim::Default(sim) => sim.bodies().len(),
            MethodSim::Articulated(sim) => sim.model().bodies.len(),
        }
    }

    /// The linear and angular velocity of body `body` now (m/s, rad/s, world).
    pub fn body_velocity(&self, body: BodyId) -> (Vector3<f64>, Vector3<f64>) {
        match self {
            MethodSim::Default(sim) => {
                let b = &sim.bodies()[body];
                (b.linear_velocity_in_world, b.angular_velocity_in_world)
            }
            MethodSim::Articulated(sim) => sim.body_velocity(body),
        }
    }

    /// Adds a force (N, world) at a world point for the next step only; its work is booked
    /// as external work.
    pub fn push(
        &mut self,
        body: BodyId,
        force_in_world: Vector3<f64>,
        point_in_world: Point3<f64>,
    ) {
        match self {
            MethodSim::Default(sim) => {
                sim.apply_external_force(body, force_in_world, point_in_world)
            }
            MethodSim::Articulated(sim) => {
                sim.apply_external_force(body, force_in_world, point_in_world)
            }
        }
    }
}
