//! The messages that flow between the rig's threads. Every one carries the monotonic time at
//! which its device produced it, so the compositor can show end-to-end latencies. The stylus
//! samples are the arm driver's own (`ar_drivers::arm::StylusSample`), read by the solver
//! thread from the driver's channel.

use crate::scene_view::{BodyView, ReactionView, RigidGroupView, Support};
use ar_drivers::arm::kinematics::ArmLinkage;
use nalgebra::{Isometry3, Point3};
use std::sync::Arc;
use std::time::Instant;

/// An RGB8 video frame, already undistorted (pinhole with the camera file's K).
#[derive(Debug, Clone, PartialEq)]
pub struct VideoFrame {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// `width * height * 3` bytes, rows top to bottom.
    pub rgb: Vec<u8>,
}

/// One camera frame and the marker pose tracked in it.
#[derive(Debug, Clone)]
pub struct CameraUpdate {
    /// When the frame was captured.
    pub captured_at: Instant,
    /// The frame (shared: the compositor may keep it while the camera moves on).
    pub frame: Arc<VideoFrame>,
    /// The camera pose from the marker; `None` when the marker is not seen.
    pub camera_from_world: Option<Isometry3<f64>>,
}

/// The microphone's level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicLevel {
    /// When the level was measured (end of its audio block).
    pub measured_at: Instant,
    /// RMS level of the block above the noise floor, full scale = 1 (the wind's input).
    pub rms: f64,
}

/// Per-step diagnostics of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimDiagnostics {
    /// Norm of the position-level constraint violation ‖ψ‖, metres.
    pub psi_norm_m: f64,
    /// Energy balance error relative to the reference energy (E − E₀ − work + dissipation) / E_ref.
    pub energy_error_rel: f64,
    /// The energy drift E − E₀ − work + dissipation, joules.
    pub energy_drift_j: f64,
    /// The reference energy E_ref so far, joules (see `ar_dynamics::state::diagnostics`).
    pub energy_reference_j: f64,
    /// Mechanical energy: kinetic, gravitational (zero at the marker plane) and elastic, joules.
    pub energy_j: f64,
    /// Kinetic energy alone, joules.
    pub kinetic_j: f64,
    /// Work the user has done through the stylus spring (and the tip, where it pushes) since
    /// the start, joules.
    pub user_work_j: f64,
    /// Deepest contact penetration at the end of the last step, metres; 0 without contact.
    pub penetration_m: f64,
    /// Force of the stylus spring while clipped (stiffness × stretch), newtons; 0 otherwise.
    pub spring_force_n: f64,
}

/// What the solver thread publishes after each batch of steps.
#[derive(Debug, Clone)]
pub struct SimSnapshot {
    /// Simulated time, seconds.
    pub sim_time_s: f64,
    /// Simulated over wall time since the start.
    pub real_time_factor: f64,
    /// Steps dropped so far because the solver fell behind more than its catch-up bound.
    pub skipped_steps: u64,
    /// The bodies, at their poses after the last step.
    pub bodies: Vec<BodyView>,
    /// Joint reaction forces after the last step.
    pub reactions: Vec<ReactionView>,
    /// Contact normal forces after the last step (points where the force is zero left out).
    pub contacts: Vec<ReactionView>,
    /// The scene's supports (they never move; shared, not copied).
    pub supports: Arc<[Support]>,
    /// The stylus tip, world frame, when the arm reports it.
    pub stylus_tip_in_world: Option<Point3<f64>>,
    /// The digitizer arm's linkage (base to tip, world frame: through `world_from_arm`), when
    /// the arm reports it.
    pub arm_linkage_in_world: Option<ArmLinkage>,
    /// Spring from the stylus tip to the grabbed body point, while clipped.
    pub spring_in_world: Option<(Point3<f64>, Point3<f64>)>,
    /// Grab points (world), to highlight them.
    pub grab_points_in_world: Vec<Point3<f64>>,
    /// Diagnostics of the last step.
    pub diagnostics: SimDiagnostics,
    /// The scene's name (its file stem), for the HUD.
    pub scene_name: Arc<str>,
    /// The rigid groups of the scene's deformable bodies and their state (empty without).
    pub rigid_groups: Vec<RigidGroupView>,
    /// The name of the body the stylus is clipped to, while clipped.
    pub grabbed_body: Option<Arc<str>>,
    /// Sample time of the newest stylus sample this snapshot reflects.
    pub stylus_sampled_at: Option<Instant>,
    /// The arm's state as the solver last heard of it (`None`: no sample yet).
    pub arm_status: Option<ArmLink>,
    /// The last microphone level used, RMS.
    pub mic_rms: Option<f64>,
    /// Why the simulation failed, once it has: the solver thread then stops stepping and
    /// this is its last snapshot, with no bodies or reactions (the failed state is not drawn).
    pub solver_failure: Option<String>,
}

/// The digitizer arm's link as the solver thread sees it: what the HUD matches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArmLink {
    /// Samples arrive.
    Streaming,
    /// The arm was lost (unplugged, silent, its thread stopped); the text says why.
    Lost(String),
}
