//! The assembled rig: starts the worker threads, runs the compositor loop on the calling (main)
//! thread, and shuts everything down — on window close, Ctrl-C (the shared [`StopFlag`]), the
//! requested number of frames or duration, or a worker's fatal error, whose message is returned.

use super::devices::view_tee::ViewTee;
use super::devices::{CameraTracker, MicDevice, RigArm};
use super::display::display_summary::{CaptureSummary, DisplaySummary};
use super::display::frame_content::{build_overlay, hud_stats, ArrowScale};
use super::display::frame_control::{FrameControl, ShownView};
use super::display::latency::LatencyStats;
use super::display::memory::{rss_bytes, MemorySummary};
use super::display::pace::{earliest_next, wait_for_frame};
use super::record::session_log::SessionRecorder;
use super::simulation::RigSimulation;
use super::threads::capture::CaptureCounts;
use super::threads::device_worker::{spawn_camera, spawn_mic};
use super::threads::event_log::EventLog;
use super::threads::messages::{CameraUpdate, SimSnapshot};
use super::threads::solver_commands::SolverCommand;
use super::threads::solver_worker::{spawn_solver, SolverConfig, SolverInputs, SolverSummary};
use super::threads::worker::{StopFlag, Worker, WorkerError, WorkerReport};
use crate::compositor::arm::ArmLook;
use crate::compositor::frames::{FrameWriteError, FrameWriter};
use crate::compositor::{Compositor, CompositorError, DeviceStatus, FrameInput, VideoImage};
use ar_drivers::latest::{drain_latest, latest_channel, LatestReceiver};
use crossbeam_channel::{Receiver, Sender};
use image::RgbImage;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The devices and the simulation of one run.
pub struct RigDevices {
    /// Camera + marker tracking.
    pub camera: Box<dyn CameraTracker>,
    /// The digitizer arm, if any (without it, nothing is grabbed with the stylus): the driver's
    /// worker, whose channels the solver thread reads.
    pub arm: Option<RigArm>,
    /// The microphone, if any.
    pub mic: Option<Box<dyn MicDevice>>,
    /// The simulation, stepped at its own step ([`Simulation::dt_secs`]).
    pub simulation: RigSimulation,
}

/// The arm driver's thread (`ar_drivers::arm::ArmWorker` names it so).
const ARM_THREAD: &str = "arm";

/// Rendered frames waiting for the PNG writer; the display loop blocks when it is full.
const FRAME_QUEUE: usize = 4;

/// When the display loop ends and how it paces itself.
#[derive(Debug, Clone)]
pub struct DisplayLoopConfig {
    /// Target frame period (40 ms = 25 fps).
    pub frame_period: Duration,
    /// Stop after this many frames.
    pub max_frames: Option<u64>,
    /// Stop after this long.
    pub max_duration: Option<Duration>,
    /// Mark grab points on the overlay.
    pub show_grab_points: bool,
    /// Draw reaction arrows.
    pub show_reactions: bool,
    /// Show the developer's figures (frame rate, solver speed, ‖ψ‖, latency) in the HUD.
    pub show_diagnostics: bool,
    /// Arrow scale, metres per newton; `None`: chosen from the first reactions of the run
    /// (`compositor::arrows::scale_for`) and kept.
    pub arrow_m_per_n: Option<f64>,
    /// How the arm appears: drawn where the video has none (the demo), a depth-only phantom
    /// where the camera sees the real one (`run`).
    pub arm_look: ArmLook,
}

impl Default for DisplayLoopConfig {
    fn default() -> Self {
        Self {
            frame_period: Duration::from_millis(40),
            max_frames: None,
            max_duration: None,
            show_grab_points: true,
            show_reactions: false,
            show_diagnostics: false,
            arrow_m_per_n: None,
            arm_look: ArmLook::Drawn,
        }
    }
}

/// Why a run ended badly.
#[derive(Debug, thiserror::Error)]
pub enum RigError {
    /// A worker failed; the run stopped.
    #[error("{worker} failed: {message}")]
    WorkerFailed {
        /// The worker's thread name.
        worker: String,
        /// Its error.
        message: String,
    },
    /// A worker could not be started or panicked.
    #[error(transparent)]
    Worker(#[from] WorkerError),
    /// Rendering failed.
    #[error(transparent)]
    Compositor(#[from] CompositorError),
    /// Writing a frame failed.
    #[error(transparent)]
    Frames(#[from] FrameWriteError),
}

/// Why the display loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The requested frame count or duration was reached.
    Done,
    /// Ctrl-C or another stop request.
    Interrupted,
    /// The window was closed.
    WindowClosed,
    /// A worker failed; the rig stopped.
    WorkerFailed {
        /// The worker's thread name.
        worker: String,
        /// Its error.
        message: String,
    },
}

/// Everything a run produced.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// The display loop's numbers.
    pub display: DisplaySummary,
    /// The solver thread's numbers and trace.
    pub solver: SolverSummary,
}

/// The running rig: worker threads and the channels that feed the compositor.
pub struct Rig {
    stop: StopFlag,
    camera_rx: LatestReceiver<CameraUpdate>,
    snapshot_rx: LatestReceiver<SimSnapshot>,
    reports_rx: Receiver<WorkerReport>,
    solver: Option<Worker<SolverSummary>>,
    devices: Vec<Worker<()>>,
    /// The arm driver's worker: its thread ("arm") feeds the solver thread directly.
    arm: Option<RigArm>,
    /// The camera's capture thread's counts, for a camera read on one.
    capture_counts: Option<Arc<CaptureCounts>>,
}

impl Rig {
    /// Starts the camera, microphone and solver threads (and holds the arm driver's, already
    /// running).
    pub fn start(
        devices: RigDevices,
        solver_config: SolverConfig,
        stop: StopFlag,
    ) -> Result<Self, RigError> {
        Self::start_recording(devices, solver_config, None, stop)
    }

    /// [`Self::start`], with the solver thread recording the session into `recorder` (see
    /// [`super::record::session_log`]).
    pub fn start_recording(
        devices: RigDevices,
        solver_config: SolverConfig,
        recorder: Option<SessionRecorder>,
        stop: StopFlag,
    ) -> Result<Self, RigError> {
        Self::start_commanded(devices, solver_config, recorder, None, stop)
    }

    /// [`Self::start_recording`], with the solver thread also taking the user's `commands`
    /// (the sandbox's pointer, pause, wind and reset; see [`super::threads::solver_commands`]).
    pub fn start_commanded(
        devices: RigDevices,
        solver_config: SolverConfig,
        recorder: Option<SessionRecorder>,
        commands: Option<Receiver<SolverCommand>>,
        stop: StopFlag,
    ) -> Result<Self, RigError> {
        let (reports_tx, reports_rx) = crossbeam_channel::bounded(256);
        let (camera_tx, camera_rx) = latest_channel(1);
        let (snapshot_tx, snapshot_rx) = latest_channel(1);
        let mut workers = Vec::new();
        let capture_counts = devices.camera.capture_counts();
        // The solver gets the camera's pose too, for a wind that blows from where the user looks.
        let (view_tx, view_rx) = latest_channel(1);
        workers.push(spawn_camera(
            Box::new(ViewTee::new(devices.camera, view_tx)),
            camera_tx,
            reports_tx.clone(),
            stop.clone(),
        )?);
        let mic_rx = match devices.mic {
            Some(mic) => {
                let (mic_tx, mic_rx) = latest_channel(1);
                workers.push(spawn_mic(mic, mic_tx, reports_tx.clone(), stop.clone())?);
                Some(mic_rx)
            }
            None => None,
        };
        let solver = spawn_solver(
            devices.simulation,
            solver_config,
            SolverInputs {
                arm: devices.arm.as_ref().map(RigArm::inputs),
                mic: mic_rx,
                view: Some(view_rx),
                recorder,
                commands,
            },
            snapshot_tx,
            reports_tx,
            stop.clone(),
        )?;
        Ok(Self {
            stop,
            camera_rx,
            snapshot_rx,
            reports_rx,
            solver: Some(solver),
            devices: workers,
            arm: devices.arm,
            capture_counts,
        })
    }

    /// The stop flag shared by every thread of the rig.
    pub fn stop_flag(&self) -> &StopFlag {
        &self.stop
    }

    /// Names of the worker threads still running (the arm driver's is "arm").
    pub fn running_workers(&self) -> Vec<String> {
        self.devices
            .iter()
            .filter(|w| w.is_running())
            .map(|w| w.name().to_owned())
            .chain(
                self.solver
                    .iter()
                    .filter(|w| w.is_running())
                    .map(|w| w.name().to_owned()),
            )
            .chain(
                self.arm
                    .iter()
                    .filter(|a| a.is_running())
                    .map(|_| ARM_THREAD.to_owned()),
            )
            .collect()
    }

    /// Runs the compositor loop on this thread until a stop condition, then stops and joins
    /// every worker. A worker's fatal error is returned as [`RigError::WorkerFailed`].
    pub fn run(
        self,
        compositor: &mut Compositor,
        frames: Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
    ) -> Result<RunSummary, RigError> {
        let summary = self.run_to_end(compositor, frames, config)?;
        match &summary.display.stop_reason {
            StopReason::WorkerFailed { worker, message } => Err(RigError::WorkerFailed {
                worker: worker.clone(),
                message: message.clone(),
            }),
            _ => Ok(summary),
        }
    }

    /// Like [`Self::run`], but a worker's fatal error still gives the run's summary, with
    /// [`StopReason::WorkerFailed`] (so a soak run can say what it measured before the loss).
    /// Errors of the display loop itself (rendering, writing frames, threads) are returned.
    pub fn run_to_end(
        self,
        compositor: &mut Compositor,
        frames: Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
    ) -> Result<RunSummary, RigError> {
        self.run_controlled(compositor, frames, config, None)
    }

    /// [`Self::run_to_end`], with `control` called before every frame (the window's input
    /// events, the HUD's extra lines, quitting; see [`super::display::frame_control`]).
    pub fn run_controlled(
        mut self,
        compositor: &mut Compositor,
        mut frames: Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
        control: Option<&mut dyn FrameControl>,
    ) -> Result<RunSummary, RigError> {
        let result = self.display_loop(compositor, &mut frames, config, control);
        self.stop.stop();
        for w in self.devices.drain(..) {
            w.join()?;
        }
        let solver = match self.solver.take() {
            Some(w) => w.join()?,
            None => SolverSummary::default(),
        };
        // Stops and joins the arm driver's thread.
        drop(self.arm.take());
        // A fatal report that raced with the end of the loop still reaches the user.
        let late_fatal = self.reports_rx.try_iter().find_map(|r| match r {
            WorkerReport::Fatal { worker, message } => Some((worker, message)),
            WorkerReport::Event { .. } => None,
        });
        let mut display = result?;
        if let Some((worker, message)) = late_fatal {
            if !matches!(display.stop_reason, StopReason::WorkerFailed { .. }) {
                display.stop_reason = StopReason::WorkerFailed { worker, message };
            }
        }
        if let StopReason::WorkerFailed { worker, .. } = display.stop_reason.clone() {
            display.note_lost(&worker);
        }
        Ok(RunSummary { display, solver })
    }

    /// The display loop, with the PNG frames (if any) encoded and written on a "frames" thread
    /// so that encoding never delays the next render; the queue is short and blocks when full,
    /// so every frame is written and memory stays bounded.
    fn display_loop(
        &mut self,
        compositor: &mut Compositor,
        frames: &mut Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
        control: Option<&mut dyn FrameControl>,
    ) -> Result<DisplaySummary, RigError> {
        let frames_dir = frames.as_deref().map(|w| w.dir().to_owned());
        let writer = frames.as_deref_mut();
        std::thread::scope(|scope| {
            let (tx, handle) = match writer {
                Some(w) => {
                    let (tx, rx) =
                        crossbeam_channel::bounded::<(RgbImage, Option<f64>)>(FRAME_QUEUE);
                    let handle = std::thread::Builder::new()
                        .name("frames".into())
                        .spawn_scoped(scope, move || -> Result<(), FrameWriteError> {
                            for (image, sim_time_s) in rx {
                                match sim_time_s {
                                    Some(t) => w.write_at(&image, t)?,
                                    None => w.write(&image)?,
                                };
                            }
                            Ok(())
                        })
                        .map_err(|source| WorkerError::Spawn {
                            name: "frames".into(),
                            source,
                        })?;
                    (Some(tx), Some(handle))
                }
                None => (None, None),
            };
            let result = self.frame_loop(compositor, tx.as_ref(), config, control);
            // Closing the queue lets the writer finish the frames still in it, then stop.
            drop(tx);
            if let Some(handle) = handle {
                handle.join().map_err(|_| WorkerError::Panicked {
                    name: "frames".into(),
                    message: "while writing a frame".into(),
                })??;
            }
            result.map(|mut d| {
                d.frames_dir = frames_dir;
                d
            })
        })
    }

    fn frame_loop(
        &mut self,
        compositor: &mut Compositor,
        frame_tx: Option<&Sender<(RgbImage, Option<f64>)>>,
        config: &DisplayLoopConfig,
        mut control: Option<&mut dyn FrameControl>,
    ) -> Result<DisplaySummary, RigError> {
        // The frame control may change what frames show as the run goes.
        let mut config = config.clone();
        let start = Instant::now();
        // The capture thread started with the camera, before the loop: count from here.
        let capture_at_start = self.capture_counts.as_deref().map(CaptureSummary::of);
        let mut next_frame = start;
        let mut latest_camera: Option<CameraUpdate> = None;
        // A camera frame whose arrival ended the wait for this frame.
        let mut pending_camera: Option<CameraUpdate> = None;
        // When the loop last received a camera update (not its capture time, which a lagging
        // camera stamps in the past).
        let mut last_camera_at: Option<Instant> = None;
        let mut camera_updates = 0u64;
        let mut video_age = LatencyStats::default();
        let mut snapshot: Option<SimSnapshot> = None;
        let mut events = EventLog::default();
        let mut latency = LatencyStats::default();
        let mut sample_age = LatencyStats::default();
        let mut render = LatencyStats::default();
        let mut frames_done = 0u64;
        let mut fps = 0.0;
        let mut last_present: Option<Instant> = None;
        let mut memory: Option<MemorySummary> = None;
        let mut last_hud_lines = Vec::new();
        let mut arrow_scale = ArrowScale::default();
        let workers_started: Vec<String> = self
            .devices
            .iter()
            .map(|w| w.name().to_owned())
            .chain(self.solver.iter().map(|w| w.name().to_owned()))
            .chain(self.arm.iter().map(|_| ARM_THREAD.to_owned()))
            .collect();
        let mut workers_lost: Vec<String> = Vec::new();
        let has_arm = self.arm.is_some();
        let has_mic = workers_started.iter().any(|w| w == "mic");
        let stop_reason = loop {
            if config.max_frames.is_some_and(|n| frames_done >= n) {
                break StopReason::Done;
            }
            if config.max_duration.is_some_and(|d| start.elapsed() >= d) {
                break StopReason::Done;
            }
            let mut fatal = None;
            for r in self.reports_rx.try_iter() {
                match r {
                    WorkerReport::Fatal { worker, message } => {
                        self.stop.stop();
                        fatal = Some(StopReason::WorkerFailed { worker, message });
                    }
                    WorkerReport::Event { worker, message } => {
                        log::info!("{worker}: {message}");
                        events.push(format!("{worker}: {message}"));
                    }
                }
            }
            if let Some(reason) = fatal {
                break reason;
            }
            if self.stop.is_stopped() {
                break StopReason::Interrupted;
            }
            if let Some(s) = drain_latest(&self.snapshot_rx) {
                snapshot = Some(s);
            }
            let events = compositor.take_window_events();
            // The user pointed at the frame shown last: its camera, before the newest arrives.
            let shown = ShownView::last_frame(compositor, latest_camera.as_ref());
            let decision = control
                .as_deref_mut()
                .map(|c| c.before_frame(&events, snapshot.as_ref(), &shown, &mut config));
            if decision.as_ref().is_some_and(|d| d.quit) {
                break StopReason::Done;
            }
            let waited_for = pending_camera.take();
            let new_camera = drain_latest(&self.camera_rx).or(waited_for);
            if new_camera.is_some() {
                last_camera_at = Some(Instant::now());
                camera_updates += 1;
                latest_camera = new_camera.clone();
            }
            let overlay = build_overlay(snapshot.as_ref(), &config, &mut arrow_scale);
            let marker = match (&latest_camera, last_camera_at) {
                (_, Some(t)) if t.elapsed() > Duration::from_secs(1) => {
                    DeviceStatus::Lost("no frames for 1 s".into())
                }
                (Some(u), _) if u.camera_from_world.is_some() => DeviceStatus::Ok("tracked".into()),
                (Some(_), _) => DeviceStatus::Ok("marker not seen".into()),
                (None, _) => DeviceStatus::Waiting,
            };
            let mut hud = hud_stats(
                snapshot.as_ref(),
                fps,
                marker,
                latency.last_ms(),
                config.show_diagnostics,
            );
            // A rig started without the device says so rather than waiting for it forever.
            if !has_arm {
                hud.arm = DeviceStatus::Ok("none".into());
            }
            if !has_mic {
                hud.mic = DeviceStatus::Ok("none".into());
            }
            let mut hud_lines = hud.lines();
            hud_lines.extend(decision.into_iter().flat_map(|d| d.hud_lines));
            let frame_arc: Option<Arc<_>> = new_camera.as_ref().map(|u| u.frame.clone());
            let video = frame_arc.as_ref().map(|f| VideoImage {
                width: f.width,
                height: f.height,
                rgb: &f.rgb,
            });
            let render_start = Instant::now();
            let stylus_sampled_at = snapshot.as_ref().and_then(|s| s.stylus_sampled_at);
            if let Some(t) = stylus_sampled_at {
                sample_age.push_ms(render_start.saturating_duration_since(t).as_secs_f64() * 1e3);
            }
            let image = match compositor.render(&FrameInput {
                video,
                camera_from_world: latest_camera.as_ref().and_then(|u| u.camera_from_world),
                overlay: &overlay,
                hud_lines: &hud_lines,
            }) {
                Ok(img) => img,
                Err(CompositorError::WindowClosed) => break StopReason::WindowClosed,
                Err(e) => return Err(e.into()),
            };
            let presented = Instant::now();
            last_hud_lines = hud_lines;
            render.push_ms((presented - render_start).as_secs_f64() * 1e3);
            if let Some(t) = stylus_sampled_at {
                latency.push_ms(presented.saturating_duration_since(t).as_secs_f64() * 1e3);
            }
            if let Some(u) = &latest_camera {
                video_age.push_ms(
                    presented
                        .saturating_duration_since(u.captured_at)
                        .as_secs_f64()
                        * 1e3,
                );
            }
            if let Some(prev) = last_present {
                let dt = (presented - prev).as_secs_f64();
                if dt > 0.0 {
                    fps = if fps == 0.0 {
                        1.0 / dt
                    } else {
                        0.9 * fps + 0.1 / dt
                    };
                }
            }
            last_present = Some(presented);
            if let Some(tx) = frame_tx {
                if tx
                    .send((image, snapshot.as_ref().map(|s| s.sim_time_s)))
                    .is_err()
                {
                    // The writer stopped on an error, which the caller returns.
                    break StopReason::Interrupted;
                }
            }
            let rss = rss_bytes();
            let t = compositor.last_timings();
            log::debug!(
                "frame {frames_done}: stylus sample age {:.1} ms, upload {:.1} ms, render {:.1} ms, read-back {:.1} ms, rss {:.1} MB",
                sample_age.last_ms().unwrap_or(f64::NAN),
                t.upload_ms,
                t.render_ms,
                t.readback_ms,
                rss.unwrap_or(0) as f64 / 1e6
            );
            if let Some(rss) = rss {
                memory
                    .get_or_insert_with(|| MemorySummary::new(rss))
                    .record(frames_done, start.elapsed(), rss);
            }
            if !self.stop.is_stopped() {
                let running = self.running_workers();
                for w in &workers_started {
                    if !running.contains(w) && !workers_lost.contains(w) {
                        workers_lost.push(w.clone());
                    }
                }
            }
            frames_done += 1;
            next_frame = wait_for_frame(
                &self.camera_rx,
                &mut pending_camera,
                next_frame + config.frame_period,
                earliest_next(render_start, config.frame_period),
            );
        };
        Ok(DisplaySummary {
            frames: frames_done,
            wall_s: start.elapsed().as_secs_f64(),
            latency,
            sample_age,
            render,
            video_age,
            camera_updates,
            capture: (self.capture_counts.as_deref().map(CaptureSummary::of))
                .zip(capture_at_start)
                .map(|(end, start)| end.since(&start)),
            events,
            frames_dir: None,
            memory,
            stop_reason,
            workers_started,
            workers_lost,
            last_hud_lines,
        })
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        // Workers stop and join in their own Drop; the flag makes them all stop together.
        self.stop.stop();
    }
}
