//! The solver library (`crate::sim`) behind the rig's [`Simulation`] interface: loads a scene,
//! attaches and detaches the stylus spring as the interaction clips and releases, feeds the
//! stylus target (with its finite-difference velocity) before every step, and reports the
//! bodies' visual shapes, grab points, joint reactions and diagnostics as plain data.
//!
//! The microphone level is not turned into wind here (that is the wind model's job); the rig
//! passes it on so the HUD can show it.

use super::devices::{Simulation, SimulationError};
use super::messages::SimDiagnostics;
use crate::compositor::{ForceArrow, Shading, ShapeInstance, VisualShape};
use crate::interaction::{GrabPoint, SpringAttachment};
use crate::sim::shape::Shape;
use crate::sim::stylus::{StylusAttachment, DEFAULT_DAMPING_N_S_PER_M, DEFAULT_STIFFNESS_N_PER_M};
use crate::sim::Scene;
use nalgebra::{Point3, Vector3};
use std::path::{Path, PathBuf};

/// A palette for the bodies, cycled in scene order.
const PALETTE: [[f32; 3]; 6] = [
    [0.90, 0.35, 0.20],
    [0.95, 0.75, 0.20],
    [0.30, 0.70, 0.95],
    [0.55, 0.85, 0.35],
    [0.80, 0.45, 0.85],
    [0.95, 0.55, 0.60],
];

/// A scene's simulation driven by the rig.
pub struct SceneSimulation {
    sim: crate::sim::Simulation,
    attached: Option<(usize, Point3<f64>)>,
    stiffness_n_per_m: f64,
    damping_n_s_per_m: f64,
}

/// Finds a scene by name (`ten_pendula` → `assets/scenes/ten_pendula.toml`, looked up next
/// to the working directory and next to the executable's source tree) or takes it as a path.
pub fn resolve_scene(name_or_path: &str) -> PathBuf {
    let as_path = Path::new(name_or_path);
    if as_path.extension().is_some() || as_path.components().count() > 1 {
        return as_path.to_owned();
    }
    let file = format!("{name_or_path}.toml");
    let candidates = [
        PathBuf::from("assets/scenes").join(&file),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets/scenes")
            .join(&file),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| candidates[0].clone())
}

impl SceneSimulation {
    /// Loads and builds a scene file.
    pub fn load(path: &Path) -> Result<Self, SimulationError> {
        let scene = Scene::load(path).map_err(|e| SimulationError(e.to_string()))?;
        let sim = scene.build().map_err(|e| SimulationError(e.to_string()))?;
        Ok(Self::new(sim))
    }

    /// Wraps a built simulation, with the default stylus spring.
    pub fn new(sim: crate::sim::Simulation) -> Self {
        Self {
            sim,
            attached: None,
            stiffness_n_per_m: DEFAULT_STIFFNESS_N_PER_M,
            damping_n_s_per_m: DEFAULT_DAMPING_N_S_PER_M,
        }
    }

    /// The solver's fixed step, seconds.
    pub fn dt_secs(&self) -> f64 {
        self.sim.dt_secs()
    }

    /// The wrapped simulation.
    pub fn inner(&self) -> &crate::sim::Simulation {
        &self.sim
    }
}

fn visual(shape: &Shape) -> VisualShape {
    match *shape {
        Shape::Box { size_m } => VisualShape::Box {
            size_m: Vector3::from(size_m),
        },
        Shape::Sphere { radius_m } => VisualShape::Sphere { radius_m },
        Shape::Cylinder { radius_m, length_m } => VisualShape::Cylinder { radius_m, length_m },
        Shape::Capsule { radius_m, length_m } => VisualShape::Capsule { radius_m, length_m },
    }
}

impl Simulation for SceneSimulation {
    fn step(
        &mut self,
        dt_secs: f64,
        spring: Option<&SpringAttachment>,
        _wind_rms: f64,
    ) -> Result<(), SimulationError> {
        if (dt_secs - self.sim.dt_secs()).abs() > 1e-12 {
            return Err(SimulationError(format!(
                "the rig steps by {dt_secs} s but the scene's solver uses {} s",
                self.sim.dt_secs()
            )));
        }
        let wanted = spring.map(|s| (s.body, s.point_in_body));
        if wanted != self.attached {
            match spring {
                Some(s) => {
                    self.sim
                        .attach_stylus(StylusAttachment {
                            body: s.body,
                            point_in_body: s.point_in_body.coords,
                            stiffness_n_per_m: self.stiffness_n_per_m,
                            damping_n_s_per_m: self.damping_n_s_per_m,
                        })
                        .map_err(|e| SimulationError(e.to_string()))?;
                }
                None => self.sim.detach_stylus(),
            }
            self.attached = wanted;
        }
        if let Some(s) = spring {
            self.sim
                .set_stylus_target(s.target_in_world, s.target_velocity_in_world);
        }
        self.sim.step();
        let d = self.sim.diagnostics();
        if !(d.constraint_norm_m.is_finite() && d.kinetic_j.is_finite()) {
            return Err(SimulationError(format!(
                "the solution diverged at t = {:.2} s (|psi| = {}, kinetic energy = {} J)",
                d.time_secs, d.constraint_norm_m, d.kinetic_j
            )));
        }
        Ok(())
    }

    fn grab_points(&self) -> Vec<GrabPoint> {
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

    fn point_in_world(&self, body: usize, point_in_body: &Point3<f64>) -> Option<Point3<f64>> {
        self.sim
            .bodies()
            .get(body)
            .map(|b| b.point_in_world(&point_in_body.coords))
    }

    fn shapes(&self) -> Vec<ShapeInstance> {
        self.sim
            .bodies()
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let shape = b.shape.as_ref()?;
                Some(ShapeInstance {
                    shape: visual(shape),
                    world_from_shape: b.world_from_body(),
                    color: PALETTE[i % PALETTE.len()],
                    shading: Shading::Lit,
                })
            })
            .collect()
    }

    fn reactions(&self) -> Vec<ForceArrow> {
        let bodies = self.sim.bodies();
        self.sim
            .joints()
            .iter()
            .zip(self.sim.joint_reactions())
            .filter_map(|(j, r)| {
                let b2 = bodies.get(j.body2)?;
                Some(ForceArrow {
                    origin_in_world: b2.point_in_world(&j.anchor2_in_body2),
                    force_n: r.force_in_world,
                })
            })
            .collect()
    }

    fn diagnostics(&self) -> SimDiagnostics {
        let d = self.sim.diagnostics();
        SimDiagnostics {
            psi_norm_m: d.constraint_norm_m,
            energy_error_rel: d.energy_error_rel,
        }
    }
}
