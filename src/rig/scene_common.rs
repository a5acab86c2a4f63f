//! What the rig's simulations of a scene share, whichever method runs them
//! ([`super::scene_sim`], [`super::articulated_sim`]): the scene file's name and wind, the
//! stylus as the rig drives it (clip, release, the spring's end moving along the chord, and
//! in a scene whose tip pushes, the tip itself moving along the same chord while not
//! clipped), the microphone's wind with its log, the grab points and the diagnostics the rig
//! shows.

use super::devices::SimulationError;
use super::record::wind_log::WindLog;
use super::threads::messages::SimDiagnostics;
use crate::interaction::{GrabPoint, SpringAttachment};
use ar_dynamics::model::stylus::{
    StylusAttachment, DEFAULT_DAMPING_N_S_PER_M, DEFAULT_STIFFNESS_N_PER_M,
};
use ar_dynamics::wind::{WindBodies, WindElement};
use ar_dynamics::{Scene, StepDiagnostics};
use nalgebra::{Isometry3, Point3, Vector3};
use std::path::Path;

/// What the rig's stylus needs of a method's simulation: the stylus calls both methods have.
pub trait StylusDriven {
    /// Why a clip was refused.
    type Error: std::fmt::Display;
    /// Clips the stylus spring to a body point.
    fn clip(&mut self, attachment: StylusAttachment) -> Result<(), Self::Error>;
    /// Releases it.
    fn release(&mut self);
    /// The spring's end (or the pushing tip) at the start of the next step and its velocity
    /// during it (world).
    fn move_tip(&mut self, position_in_world: Point3<f64>, velocity_in_world: Vector3<f64>);
    /// Takes the tip away (the stylus is gone: nothing pushes any more).
    fn lift_tip(&mut self);
    /// The scene's grab points.
    fn scene_grab_points(&self) -> &[ar_dynamics::GrabPoint];
    /// Where grab point `index` is now.
    fn grab_point_now(&self, index: usize) -> Option<Point3<f64>>;
}

/// Implements [`StylusDriven`] for a simulation type whose own stylus calls have the shared
/// names (`attach_stylus`, `detach_stylus`, `set_stylus_target`, `grab_points`,
/// `grab_point_in_world`), both methods' simulations.
macro_rules! stylus_driven_by_its_own_calls {
    ($sim:ty, $error:ty) => {
        impl StylusDriven for $sim {
            type Error = $error;

            fn clip(&mut self, attachment: StylusAttachment) -> Result<(), Self::Error> {
                self.attach_stylus(attachment)
            }

            fn release(&mut self) {
                self.detach_stylus();
            }

            fn move_tip(
                &mut self,
                position_in_world: Point3<f64>,
                velocity_in_world: Vector3<f64>,
            ) {
                self.set_stylus_target(position_in_world, velocity_in_world);
            }

            fn lift_tip(&mut self) {
                self.clear_stylus_target();
            }

            fn scene_grab_points(&self) -> &[ar_dynamics::GrabPoint] {
                self.grab_points()
            }

            fn grab_point_now(&self, index: usize) -> Option<Point3<f64>> {
                self.grab_point_in_world(index)
            }
        }
    };
}

stylus_driven_by_its_own_calls!(ar_dynamics::Simulation, ar_dynamics::SimError);
stylus_driven_by_its_own_calls!(
    ar_dynamics::articulated::ArticulatedSim,
    ar_dynamics::articulated::ArticulatedError
);

/// The stylus as the rig drives it: clips and releases as the interaction says, with the
/// default stylus spring, and moves the spring's end along the chord ([`StylusChord`]). When
/// the tip pushes ([`RigStylus::pushes`]), the tip follows the stylus along the same chord
/// while not clipped too, so that clipping and releasing never make the pushing sphere jump.
#[derive(Clone, Copy, Debug)]
pub struct RigStylus {
    attached: Option<(usize, Point3<f64>)>,
    chord: StylusChord,
    /// The scene's stylus tip is a kinematic sphere that pushes the bodies (its `[contact]
    /// stylus_tip_radius_m`): the tip is the solver's whenever the stylus is there.
    pub pushes: bool,
    /// Spring stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Spring damping (N·s/m).
    pub damping_n_s_per_m: f64,
}

impl Default for RigStylus {
    fn default() -> Self {
        Self {
            attached: None,
            chord: StylusChord::default(),
            pushes: false,
            stiffness_n_per_m: DEFAULT_STIFFNESS_N_PER_M,
            damping_n_s_per_m: DEFAULT_DAMPING_N_S_PER_M,
        }
    }
}

impl RigStylus {
    /// True while the spring's end (or the pushing tip) is placed in the simulation.
    pub fn is_tracking(&self) -> bool {
        self.chord.is_tracking()
    }

    /// Before a step: clips, moves or releases the spring on `sim` as `spring` says; when the
    /// tip pushes, moves it to `tip_in_world` while not clipped, and lifts it off the scene
    /// when the stylus is gone (`None`).
    pub fn drive<S: StylusDriven + ?Sized>(
        &mut self,
        sim: &mut S,
        spring: Option<&SpringAttachment>,
        tip_in_world: Option<Point3<f64>>,
        dt_secs: f64,
    ) -> Result<(), SimulationError> {
        let wanted = spring.map(|s| (s.body, s.point_in_body));
        if wanted != self.attached {
            match spring {
                Some(s) => {
                    sim.clip(StylusAttachment {
                        body: s.body,
                        point_in_body: s.point_in_body.coords,
                        stiffness_n_per_m: self.stiffness_n_per_m,
                        damping_n_s_per_m: self.damping_n_s_per_m,
                    })
                    .map_err(|e| SimulationError(e.to_string()))?;
                    if !self.pushes {
                        // A spring's end starts at the tip; a pushing tip is already there.
                        self.chord.restart();
                    }
                }
                None => sim.release(),
            }
            self.attached = wanted;
        }
        let target = match spring {
            Some(s) => Some(s.target_in_world),
            None if self.pushes => tip_in_world,
            None => None,
        };
        let had_target = self.chord.is_tracking();
        match self.chord.next(target, dt_secs) {
            Some((start, velocity)) => sim.move_tip(start, velocity),
            None if self.pushes && had_target => sim.lift_tip(),
            None => {}
        }
        Ok(())
    }
}

/// The scene's grab points where they are now.
pub fn grab_points_now<S: StylusDriven + ?Sized>(sim: &S) -> Vec<GrabPoint> {
    sim.scene_grab_points()
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            Some(GrabPoint {
                body: g.body,
                point_in_body: Point3::from(g.point_in_body),
                point_in_world: sim.grab_point_now(i)?,
            })
        })
        .collect()
}

/// Fastest the spring's stylus end may move, m/s.
pub const MAX_TARGET_SPEED_M_PER_S: f64 = 1.0;

/// The scene's name for the HUD: the file stem (the whole path if it has none).
pub fn scene_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The wind of the scene's `[wind]` table, if it has one.
pub fn scene_wind(scene: &Scene, path: &Path) -> Result<Option<WindElement>, SimulationError> {
    scene
        .wind
        .as_ref()
        .map(|settings| {
            WindElement::from_settings(settings)
                .map_err(|e| SimulationError(format!("scene {}: {e}", path.display())))
        })
        .transpose()
}

/// Where the spring's stylus end goes over each step.
///
/// Over a step the end moves in a straight line from where it was at the end of the last
/// step to the newest tip position. Its velocity is that chord, not the arm's own (noisy,
/// sample-timed) velocity estimate: then the end really arrives where it is placed next, and
/// the user work booked for the step (force · end velocity) is exactly the work the moving
/// end did. It moves at most at a hand's speed ([`MAX_TARGET_SPEED_M_PER_S`]): when the
/// solver had to drop steps, the tip may have jumped, and a stiff spring stretched by
/// centimetres in one step would yank the mechanism apart.
#[derive(Clone, Copy, Debug, Default)]
pub struct StylusChord {
    last_target: Option<Point3<f64>>,
}

impl StylusChord {
    /// Forgets the last end position (a new clip starts at the tip).
    pub fn restart(&mut self) {
        self.last_target = None;
    }

    /// True while the end is placed (since the last [`Self::next`] with a target).
    pub fn is_tracking(&self) -> bool {
        self.last_target.is_some()
    }

    /// The end's position at the start of the next step of `dt_secs` and its velocity
    /// during it, toward `target` (the tip while clipped, or while it pushes); `None`, and
    /// forgotten, without a target.
    pub fn next(
        &mut self,
        target: Option<Point3<f64>>,
        dt_secs: f64,
    ) -> Option<(Point3<f64>, Vector3<f64>)> {
        let Some(target) = target else {
            self.last_target = None;
            return None;
        };
        let max_step_m = MAX_TARGET_SPEED_M_PER_S * dt_secs;
        let start = self.last_target.unwrap_or(target);
        let end = start + (target - start).cap_magnitude(max_step_m);
        self.last_target = Some(end);
        Some((start, (end - start) / dt_secs))
    }
}

/// The microphone's wind on a scene: the scene's [`WindElement`] (if it has a `[wind]`
/// table; a scene without one places no user's mouth and gets no wind) and the account of
/// what it did.
#[derive(Debug, Clone, Default)]
pub struct MicWind {
    element: Option<WindElement>,
    log: WindLog,
}

impl MicWind {
    /// The wind of `element` (`None`: the level makes no wind).
    pub fn new(element: Option<WindElement>) -> Self {
        Self {
            element,
            log: WindLog::default(),
        }
    }

    /// The element, if any.
    pub fn element(&self) -> Option<&WindElement> {
        self.element.as_ref()
    }

    /// A handle on the account of the wind applied so far.
    pub fn log(&self) -> WindLog {
        self.log.clone()
    }

    /// Hands the forces of `level` (already above the microphone's noise floor) to `sim` for
    /// its next step, as `simulate --wind` does; returns the size of their sum (N).
    pub fn blow<S: WindBodies + ?Sized>(&mut self, sim: &mut S, level: f64) -> f64 {
        match self.element.as_mut() {
            Some(wind) => {
                wind.apply(sim, level, 0.0);
                wind.last_total_force().norm()
            }
            None => 0.0,
        }
    }

    /// Books a step of `dt_secs` that ended at `time_after_s` (nothing without wind).
    pub fn record(&self, dt_secs: f64, time_after_s: f64, level: f64, force_n: f64) {
        if self.element.is_some() {
            self.log.record(dt_secs, time_after_s, level, force_n);
        }
    }

    /// Aims a wind that follows the camera at where it looks.
    pub fn aim(&mut self, world_from_camera: &Isometry3<f64>) {
        if let Some(wind) = self.element.as_mut().filter(|w| w.follow_camera) {
            wind.aim_from_camera(world_from_camera);
        }
    }
}

/// The rig's diagnostics from a step's, with the stylus spring's force (N).
pub fn rig_diagnostics(d: &StepDiagnostics, spring_force_n: f64) -> SimDiagnostics {
    SimDiagnostics {
        psi_norm_m: d.constraint_norm_m,
        energy_error_rel: d.energy_error_rel,
        energy_drift_j: d.energy_drift_j,
        energy_reference_j: d.energy_reference_j,
        energy_j: d.kinetic_j + d.potential_j + d.elastic_j,
        kinetic_j: d.kinetic_j,
        user_work_j: d.user_work_j,
        penetration_m: 0.0,
        spring_force_n,
    }
}

/// The spring's force k·|tip − point| (N) while clipped with a tip, else 0.
pub fn spring_force_n(
    stiffness_n_per_m: f64,
    point_in_world: Option<Point3<f64>>,
    tip_in_world: Option<Point3<f64>>,
) -> f64 {
    match (point_in_world, tip_in_world) {
        (Some(p), Some(t)) => stiffness_n_per_m * (t - p).norm(),
        _ => 0.0,
    }
}
