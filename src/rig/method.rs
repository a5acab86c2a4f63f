//! Which method simulates the rig's scene, chosen in one place for `demo`, `run` and `sandbox`
//! (and named as `simulate --method` names it): [`load_simulation`] builds the scene's
//! [`RigSimulation`] with the default method or the articulated one. The rig steps it at the
//! scene's own step (`[solver] dt_secs`).

use super::record::wind_log::WindLog;
use super::simulation::{RigSimulation, SimulationError};
use super::threads::clock::pacing_step;
use std::path::Path;

/// The simulation method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    /// Maximal coordinates, sequential impulses / coupled direct solve (the paper's method).
    #[default]
    Default,
    /// Reduced coordinates: the articulated-body algorithm (exact tree joints; loops closed
    /// by constraint rows).
    Articulated,
}

impl Method {
    /// The method the command line calls `name` (`default`, `articulated`).
    pub fn from_name(name: &str) -> Option<Self> {
        [Method::Default, Method::Articulated]
            .into_iter()
            .find(|m| m.name() == name)
    }

    /// The name the command line uses (`default`, `articulated`).
    pub fn name(&self) -> &'static str {
        match self {
            Method::Default => "default",
            Method::Articulated => "articulated",
        }
    }
}

/// A scene's simulation for the rig, and the account of its wind when the scene has any.
pub struct LoadedSimulation {
    /// The simulation the solver thread steps.
    pub simulation: RigSimulation,
    /// The wind's account (read it after the run), when the scene has a `[wind]` table.
    pub wind_log: Option<WindLog>,
}

/// Loads the scene file at `path` for `method`. A scene the method cannot run is an error
/// saying what is unsupported (the caller names the scene, as `demo` and `run` do), and so is
/// a step the rig's real-time clock cannot pace.
pub fn load_simulation(path: &Path, method: Method) -> Result<LoadedSimulation, SimulationError> {
    let simulation = RigSimulation::load(path, method)?;
    let wind_log = simulation.wind_log();
    pacing_step(simulation.dt_secs())
        .map_err(|e| SimulationError(format!("[solver] dt_secs: {e}")))?;
    Ok(LoadedSimulation {
        simulation,
        wind_log,
    })
}
