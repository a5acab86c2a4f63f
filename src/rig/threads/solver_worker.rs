//! The solver thread: keeps the simulation in real time with its own fixed step h
//! ([`Simulation::dt_secs`], a scene's `[solver] dt_secs`), several steps per displayed frame,
//! bounded catch-up ([`super::clock`]); reads the arm driver's channels
//! directly ([`super::arm_reader`]) and runs the interaction on the newest stylus sample before
//! every step; publishes a [`SimSnapshot`] after each batch; and records a trace (for the
//! demo's summary and the end-to-end test).
//!
//! When a step fails (e.g. the state stopped being finite) the thread reports it, publishes a
//! last snapshot that says so (the HUD shows "solver failed" and the reason), and stops
//! stepping: the rest of the rig goes on, so the user sees why the scene froze, and this
//! thread waits for the rig to stop instead of stepping a broken state.

use super::arm_reader::{ArmEvent, ArmReader};
use super::clock::RealTimeStepper;
use super::event_log::EventLog;
use super::messages::{MicLevel, SimSnapshot};
use super::solver_commands::{ControlEvent, SceneSource, SolverCommand, UserControls};
use super::solver_trace::trace_wants;
pub use super::solver_trace::TraceRow;
use super::worker::{report, StopFlag, Worker, WorkerError, WorkerReport};
use crate::interaction::{Interaction, InteractionConfig, InteractionEvent, SpringAttachment};
use crate::rig::devices::arm::ArmInputs;
use crate::rig::record::session_log::SessionRecorder;
use crate::rig::RigSimulation;
use ar_drivers::latest::{LatestReceiver, LatestSender};
use crossbeam_channel::{Receiver, Sender};
use nalgebra::{Isometry3, Point3};
use std::time::{Duration, Instant};

/// Solver-thread settings (the step is the simulation's: [`Simulation::dt_secs`]).
#[derive(Debug, Clone)]
pub struct SolverConfig {
    /// Catch-up bound: at most this many steps in one batch.
    pub max_steps_per_batch: u32,
    /// The arm's base frame in the world (marker) frame, from the tracker calibration.
    pub world_from_arm: Isometry3<f64>,
    /// Grab radius and friends.
    pub interaction: InteractionConfig,
    /// Keep one trace row every this many steps.
    pub trace_every_steps: u64,
    /// Most trace rows kept. When the trace is full, every other row is dropped and the
    /// interval doubles, so that a session of any length keeps a trace of its whole span in
    /// bounded memory (rows are ~180 bytes).
    pub trace_max_rows: usize,
}

/// [`SolverConfig::trace_max_rows`] by default: at a 10 ms step, every step for the first 8
/// minutes, then every other, and so on, in at most ~9 MB.
pub const DEFAULT_TRACE_MAX_ROWS: usize = 50_000;

/// Sessions expected to last longer than this (or of unknown length) keep a sparser trace
/// (see [`LONG_SESSION_TRACE_EVERY_STEPS`]).
pub const LONG_SESSION: Duration = Duration::from_secs(60);
/// One trace row every this many solver steps in long sessions.
pub const LONG_SESSION_TRACE_EVERY_STEPS: u64 = 10;

impl SolverConfig {
    /// Thins the trace for a session of this expected length (`None`: until stopped). The
    /// trace of a 10 ms step (one ~180-byte row per step) would otherwise grow by ~11 MB in
    /// ten minutes before its bound thins it; a row every 100 ms still shows a gesture.
    pub fn thin_trace_for_session(&mut self, expected: Option<Duration>) {
        if expected.is_none_or(|d| d > LONG_SESSION) {
            self.trace_every_steps = self.trace_every_steps.max(LONG_SESSION_TRACE_EVERY_STEPS);
        }
    }
}

impl Default for SolverConfig {
    fn default() -> Self {
        Self {
            max_steps_per_batch: 10,
            world_from_arm: Isometry3::identity(),
            interaction: InteractionConfig::default(),
            trace_every_steps: 1,
            trace_max_rows: DEFAULT_TRACE_MAX_ROWS,
        }
    }
}

/// What the solver thread returns when it stops.
#[derive(Debug, Clone, Default)]
pub struct SolverSummary {
    /// Steps taken.
    pub steps: u64,
    /// The simulation's step h, seconds (the last simulation's, when the sandbox swapped in
    /// a scene with another).
    pub dt_secs: f64,
    /// Steps dropped by the catch-up bound.
    pub skipped_steps: u64,
    /// Simulated over wall time, in whole steps, as the last batch of steps ended
    /// ([`super::clock::RealTimeStepper::real_time_factor`]).
    pub real_time_factor: f64,
    /// Clip / release events with their simulated times.
    pub events: EventLog<(f64, String)>,
    /// The trace.
    pub trace: Vec<TraceRow>,
    /// Largest ‖ψ‖ seen, metres.
    pub max_psi_norm_m: f64,
    /// Deepest contact penetration seen at the end of a step, metres (0 without contact).
    pub max_penetration_m: f64,
    /// The radius of the stylus tip when it pushes the bodies (the scene's `[contact]
    /// stylus_tip_radius_m`), metres; `None` when it passes through them.
    pub stylus_tip_radius_m: Option<f64>,
    /// Largest |energy drift| seen over the run's reference energy (at the end of the run).
    pub max_abs_energy_error_rel: f64,
    /// Largest |energy drift| seen, joules.
    pub max_abs_energy_drift_j: f64,
    /// The simulation error that stopped the stepping, if any.
    pub error: Option<String>,
    /// Why the session's recording (`--record`) stopped or is incomplete, if it did.
    pub recording_error: Option<String>,
    /// Steps written to the recording (`--record`), all parts; fewer than [`Self::steps`]
    /// when the recording ended early (an error, or a new simulation swapped in without its
    /// scene's source).
    pub recorded_steps: u64,
    /// The recording's parts after the first (one per reset or scene switch).
    pub recorded_later_parts: u32,
}

/// The solver thread's inputs.
pub struct SolverInputs {
    /// The arm driver's samples and connection events, when the rig has an arm (without
    /// one, nothing is grabbed with the stylus).
    pub arm: Option<ArmInputs>,
    /// Microphone levels, when there is a microphone.
    pub mic: Option<LatestReceiver<MicLevel>>,
    /// The camera's tracked pose (`world_from_camera`), for a wind that follows the camera.
    pub view: Option<LatestReceiver<Isometry3<f64>>>,
    /// Where the session is recorded (`--record`), if it is.
    pub recorder: Option<SessionRecorder>,
    /// The user's commands (the sandbox's pointer, pause, wind, reset), if anyone sends any.
    pub commands: Option<Receiver<SolverCommand>>,
}

/// Starts the solver thread ("solver").
pub fn spawn_solver(
    sim: RigSimulation,
    config: SolverConfig,
    inputs: SolverInputs,
    snapshots: LatestSender<SimSnapshot>,
    reports: Sender<WorkerReport>,
    stop: StopFlag,
) -> Result<Worker<SolverSummary>, WorkerError> {
    Worker::spawn("solver", stop, move |stop| {
        SolverLoop::new(sim, config, inputs, snapshots, reports).run(&stop)
    })
}

struct SolverLoop {
    sim: RigSimulation,
    config: SolverConfig,
    inputs: SolverInputs,
    snapshots: LatestSender<SimSnapshot>,
    reports: Sender<WorkerReport>,
    interaction: Interaction,
    arm: ArmReader,
    last_slowdown_report: Option<Instant>,
    mic_rms: Option<f64>,
    controls: UserControls,
    summary: SolverSummary,
    /// The simulated time when the current step h took over, and the steps taken before it:
    /// the time after `k` steps is `epoch_time_s + (k - epoch_steps) h`.
    epoch_time_s: f64,
    epoch_steps: u64,
}

impl SolverLoop {
    fn new(
        sim: RigSimulation,
        config: SolverConfig,
        mut inputs: SolverInputs,
        snapshots: LatestSender<SimSnapshot>,
        reports: Sender<WorkerReport>,
    ) -> Self {
        let interaction = Interaction::new(config.interaction);
        Self {
            config,
            arm: ArmReader::new(inputs.arm.take()),
            inputs,
            snapshots,
            reports,
            interaction,
            last_slowdown_report: None,
            mic_rms: None,
            controls: UserControls::default(),
            summary: SolverSummary {
                stylus_tip_radius_m: sim.stylus_tip_radius_m(),
                dt_secs: sim.dt_secs(),
                ..SolverSummary::default()
            },
            sim,
            epoch_time_s: 0.0,
            epoch_steps: 0,
        }
    }

    /// The simulated time after `steps` steps, seconds.
    fn time_after(&self, steps: u64) -> f64 {
        self.epoch_time_s + (steps - self.epoch_steps) as f64 * self.summary.dt_secs
    }

    /// The simulated time now (after the steps taken), seconds.
    fn now_s(&self) -> f64 {
        self.time_after(self.summary.steps)
    }

    fn event(&mut self, sim_time_s: f64, message: String) {
        report(
            &self.reports,
            WorkerReport::Event {
                worker: "solver".into(),
                message: format!("t = {sim_time_s:.2} s: {message}"),
            },
        );
        self.summary.events.push((sim_time_s, message));
    }

    fn drain_inputs(&mut self, stepper: &mut RealTimeStepper) {
        for event in self.arm.drain() {
            let t = self.now_s();
            match event {
                ArmEvent::Connected { port, baud } => {
                    self.event(t, format!("arm connected on {port} at {baud} Bd"))
                }
                ArmEvent::Lost(why) => self.event(t, format!("arm lost: {why}")),
            }
        }
        if let Some(mic) = &self.inputs.mic {
            if let Some(level) = mic.try_iter().last() {
                self.mic_rms = Some(level.rms);
            }
        }
        while let Some(command) = self
            .inputs
            .commands
            .as_ref()
            .and_then(|c| c.try_recv().ok())
        {
            let t = self.now_s();
            match self.controls.apply(command) {
                Some(ControlEvent::PointerClipped { body }) => {
                    self.event(t, format!("clipped to body {body} (pointer)"))
                }
                Some(ControlEvent::PointerReleased) => self.event(t, "released".into()),
                Some(ControlEvent::Paused(true)) => self.event(t, "paused".into()),
                Some(ControlEvent::Paused(false)) => self.event(t, "running".into()),
                Some(ControlEvent::SetGroupRigid { name, rigid }) => {
                    let what = if rigid {
                        "make_rigid"
                    } else {
                        "make_deformable"
                    };
                    // The recording has no column for it yet: say so where it happens.
                    let unrecorded = if self.inputs.recorder.is_some() {
                        " (not recorded: a replay of the recording differs from here)"
                    } else {
                        ""
                    };
                    let message = match self.sim.set_group_rigid(&name, rigid) {
                        Ok(()) => format!("{what} {name}{unrecorded}"),
                        Err(e) => format!("{what} {name} refused: {e}"),
                    };
                    self.event(t, message)
                }
                None => {}
            }
        }
        if let Some((sim, source)) = self.controls.replacement.take() {
            self.replace_simulation(sim, source, stepper);
        }
        if let Some(view) = &self.inputs.view {
            if let Some(world_from_camera) = view.try_iter().last() {
                self.sim.set_viewpoint(&world_from_camera);
                if let Some(r) = &mut self.inputs.recorder {
                    r.view(&world_from_camera);
                }
            }
        }
    }

    fn run(mut self, stop: &StopFlag) -> SolverSummary {
        let origin = Instant::now();
        let max_steps = self.config.max_steps_per_batch;
        let mut stepper = match RealTimeStepper::new(origin, self.summary.dt_secs, max_steps) {
            Ok(stepper) => stepper,
            Err(e) => {
                // Nothing can be paced: the rig stops with the reason.
                self.summary.error = Some(e.to_string());
                report(
                    &self.reports,
                    WorkerReport::Fatal {
                        worker: "solver".into(),
                        message: e.to_string(),
                    },
                );
                return self.summary;
            }
        };
        let mut reported_skips = 0u64;
        while !stop.is_stopped() {
            self.drain_inputs(&mut stepper);
            let h = self.summary.dt_secs;
            let steps = if self.controls.paused {
                stepper.hold(Instant::now());
                let single = std::mem::take(&mut self.controls.steps_pending);
                (0..single).for_each(|_| stepper.count_step());
                single
            } else {
                stepper.plan(Instant::now()).steps
            };
            let mut failure = None;
            for _ in 0..steps {
                let k = self.summary.steps;
                let t = self.time_after(k + 1);
                if let Err(e) = self.step(h, t, k) {
                    failure = Some(e);
                    break;
                }
                self.summary.steps += 1;
            }
            if let Some(why) = failure {
                self.fail(&stepper, why, stop);
                break;
            }
            if steps > 0 {
                // Measured as each batch ends: the stop is seen on waking for the next step,
                // which is then due but not taken, and would count as a step behind.
                self.summary.real_time_factor = stepper.real_time_factor(Instant::now());
            }
            let quiet = self
                .last_slowdown_report
                .is_some_and(|t| t.elapsed() < Duration::from_secs(1));
            if stepper.steps_skipped() > reported_skips && !quiet {
                self.last_slowdown_report = Some(Instant::now());
                let t = self.now_s();
                let msg = format!(
                    "solver fell behind: {} steps dropped so far (real-time factor {:.2})",
                    stepper.steps_skipped(),
                    stepper.real_time_factor(Instant::now())
                );
                self.event(t, msg);
                reported_skips = stepper.steps_skipped();
            }
            if steps > 0 || std::mem::take(&mut self.controls.changed) {
                self.publish(&stepper);
            }
            let now = Instant::now();
            let due = stepper.next_due();
            if due > now {
                std::thread::sleep((due - now).min(Duration::from_millis(20)));
            }
        }
        self.summary.skipped_steps = stepper.steps_skipped();
        if self.summary.steps == 0 {
            self.summary.real_time_factor = stepper.real_time_factor(Instant::now());
        }
        if let Some(mut r) = self.inputs.recorder.take() {
            if let Err(e) = r.finish() {
                let t = self.now_s();
                self.summary.recording_error = Some(e.to_string());
                self.event(t, format!("recording failed at the end: {e}"));
            }
        }
        self.summary
    }

    fn step(&mut self, h: f64, t_after: f64, k: u64) -> Result<(), String> {
        let input = self.arm.stylus_input(&self.config.world_from_arm);
        let grabs = self.sim.grab_points();
        match self.interaction.update(input, &grabs) {
            InteractionEvent::None => {}
            InteractionEvent::Clipped { grab, distance_m } => self.event(
                t_after - h,
                format!(
                    "clipped to body {} ({:.1} mm from the grab point)",
                    grab.body,
                    distance_m * 1e3
                ),
            ),
            InteractionEvent::MissedGrab { nearest_m } => self.event(
                t_after - h,
                format!(
                    "press missed: nearest grab point {:.1} mm away",
                    nearest_m * 1e3
                ),
            ),
            InteractionEvent::Released => self.event(t_after - h, "released".into()),
            InteractionEvent::ReleasedOnDisconnect => {
                self.event(t_after - h, "released: stylus disconnected".into())
            }
        }
        let wind = self.controls.wind_level.or(self.mic_rms).unwrap_or(0.0);
        let spring = self.spring();
        // A scene whose tip pushes needs the tip with the button up too.
        let tip = self.tip_in_world();
        self.sim.set_stylus_tip(tip);
        self.sim
            .step(spring.as_ref(), wind)
            .map_err(|e| e.to_string())?;
        if let Some(r) = &mut self.inputs.recorder {
            let written = r.step(t_after, spring.as_ref(), tip, wind, &self.sim);
            if written.is_ok() {
                self.summary.recorded_steps += 1;
            }
            if let Err(e) = written {
                // The session goes on (what was recorded until now stays readable); the
                // summary says the recording is incomplete.
                self.inputs.recorder = None;
                self.summary.recording_error = Some(e.to_string());
                self.event(t_after, format!("recording stopped: {e}"));
            }
        }
        let d = self.sim.diagnostics();
        self.summary.max_psi_norm_m = self.summary.max_psi_norm_m.max(d.psi_norm_m);
        self.summary.max_penetration_m = self.summary.max_penetration_m.max(d.penetration_m);
        self.summary.max_abs_energy_drift_j = self
            .summary
            .max_abs_energy_drift_j
            .max(d.energy_drift_j.abs());
        if d.energy_reference_j > 0.0 {
            self.summary.max_abs_energy_error_rel =
                self.summary.max_abs_energy_drift_j / d.energy_reference_j;
        }
        let max_rows = self.config.trace_max_rows;
        if trace_wants(
            &mut self.summary.trace,
            &mut self.config.trace_every_steps,
            max_rows,
            k,
        ) {
            let grab_point = match &spring {
                Some(s) => self.sim.point_in_world(s.body, &s.point_in_body),
                None => self.sim.grab_points().first().map(|g| g.point_in_world),
            };
            self.summary.trace.push(TraceRow {
                sim_time_s: t_after,
                clipped: spring.is_some(),
                tip_in_world: self.tip_in_world(),
                grab_point_in_world: grab_point,
                psi_norm_m: d.psi_norm_m,
                energy_error_rel: d.energy_error_rel,
                user_work_j: d.user_work_j,
                spring,
            });
        }
        Ok(())
    }

    /// Reports a failed step, publishes the snapshot that shows it, and waits for the rig to
    /// stop without stepping again.
    fn fail(&mut self, stepper: &RealTimeStepper, why: String, stop: &StopFlag) {
        let t = self.now_s();
        self.event(t, format!("solver failed, stepping stopped: {why}"));
        self.summary.error = Some(why.clone());
        let mut snap = self.snapshot(stepper);
        snap.bodies.clear();
        snap.reactions.clear();
        snap.contacts.clear();
        snap.solver_failure = Some(why);
        self.snapshots.send(snap);
        while !stop.is_stopped() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn publish(&mut self, stepper: &RealTimeStepper) {
        let snap = self.snapshot(stepper);
        self.snapshots.send(snap);
    }

    /// The spring of this step: the pointer's while it holds a body, else the stylus's.
    fn spring(&self) -> Option<SpringAttachment> {
        self.controls.pointer.or_else(|| self.interaction.spring())
    }

    /// The spring's moving end: the pointer's target, else the stylus tip.
    fn tip_in_world(&self) -> Option<Point3<f64>> {
        self.controls
            .pointer
            .map(|p| p.target_in_world)
            .or_else(|| self.interaction.tip_in_world())
    }

    /// Goes on with `sim` at its own step; a recording goes on in its next part with the
    /// scene's `source` (each part holds one scene from its start, which is what `replay`
    /// reproduces), or ends here without it. A simulation whose step the clock cannot pace is
    /// refused, and the old one goes on.
    fn replace_simulation(
        &mut self,
        sim: RigSimulation,
        source: Option<SceneSource>,
        stepper: &mut RealTimeStepper,
    ) {
        let t = self.now_s();
        let name = sim.name();
        let h = sim.dt_secs();
        if h != self.summary.dt_secs {
            if let Err(e) = stepper.change_step(h) {
                self.event(t, format!("scene {name} not loaded: {e}"));
                return;
            }
            self.epoch_time_s = t;
            self.epoch_steps = self.summary.steps;
            self.summary.dt_secs = h;
        }
        self.summary.stylus_tip_radius_m = sim.stylus_tip_radius_m();
        self.sim = sim;
        // The energy balance starts again with the new simulation; the summary's energy
        // error is the last one's (the old drift over the new reference would mean nothing).
        self.summary.max_abs_energy_drift_j = 0.0;
        self.summary.max_abs_energy_error_rel = 0.0;
        if let Some(mut r) = self.inputs.recorder.take() {
            let next = match &source {
                Some(s) => r.next_part(&s.name, &s.text, h).map(Some),
                None => r.finish().map(|()| None),
            };
            let message = match next {
                Ok(Some(part)) => {
                    self.summary.recorded_later_parts += 1;
                    self.inputs.recorder = Some(r);
                    format!("recording goes on in {part} with {name}")
                }
                Ok(None) => format!(
                    "recording ended after {} steps: it holds the scene until it was replaced",
                    self.summary.recorded_steps
                ),
                Err(e) => {
                    self.summary.recording_error = Some(e.to_string());
                    format!("recording stopped: {e}")
                }
            };
            self.event(t, message);
        }
        self.event(t, format!("scene {name} loaded at its initial state"));
    }

    fn snapshot(&self, stepper: &RealTimeStepper) -> SimSnapshot {
        let spring_in_world = self.spring().and_then(|s| {
            self.sim
                .point_in_world(s.body, &s.point_in_body)
                .map(|p| (s.target_in_world, p))
        });
        let bodies = self.sim.bodies();
        let grabbed_body = self.spring().and_then(|s| {
            bodies
                .iter()
                .find(|b| b.body == s.body)
                .map(|b| b.name.clone())
        });
        SimSnapshot {
            scene_name: self.sim.name(),
            grabbed_body,
            rigid_groups: self.sim.rigid_groups(),
            sim_time_s: self.time_after(stepper.steps_taken()),
            real_time_factor: stepper.real_time_factor(Instant::now()),
            skipped_steps: stepper.steps_skipped(),
            bodies,
            reactions: self.sim.reactions(),
            contacts: self.sim.contacts(),
            supports: self.sim.supports(),
            stylus_tip_in_world: self.tip_in_world(),
            arm_linkage_in_world: self
                .arm
                .linkage_in_arm()
                .map(|l| l.map(|p| self.config.world_from_arm * p)),
            spring_in_world,
            grab_points_in_world: self
                .sim
                .grab_points()
                .iter()
                .map(|g| g.point_in_world)
                .collect(),
            diagnostics: self.sim.diagnostics(),
            stylus_sampled_at: self.arm.sampled_at(),
            arm_status: self.arm.link().cloned(),
            mic_rms: self.mic_rms,
            solver_failure: None,
        }
    }
}
