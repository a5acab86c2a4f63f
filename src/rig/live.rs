//! The assembled rig: starts the worker threads, runs the compositor loop on the calling (main)
//! thread, and shuts everything down — on window close, Ctrl-C (the shared [`StopFlag`]), the
//! requested number of frames or duration, or a worker's fatal error, whose message is returned.

use super::device_worker::{spawn_arm, spawn_camera, spawn_mic};
use super::devices::{CameraTracker, MicDevice, Simulation, StylusDevice};
use super::latency::LatencyStats;
use super::messages::{CameraUpdate, SimSnapshot};
use super::solver_worker::{spawn_solver, SolverConfig, SolverInputs, SolverSummary};
use super::view_tee::ViewTee;
use super::worker::{StopFlag, Worker, WorkerError, WorkerReport};
use crate::compositor::frames::{FrameWriteError, FrameWriter};
use crate::compositor::{
    Compositor, CompositorError, DeviceStatus, FrameInput, HudStats, Overlay, VideoImage,
};
use ar_drivers::latest::{drain_latest, latest_channel, LatestReceiver};
use crossbeam_channel::Receiver;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The devices and the simulation of one run.
pub struct RigDevices {
    /// Camera + marker tracking.
    pub camera: Box<dyn CameraTracker>,
    /// The digitizer arm.
    pub stylus: Box<dyn StylusDevice>,
    /// The microphone, if any.
    pub mic: Option<Box<dyn MicDevice>>,
    /// The simulation.
    pub simulation: Box<dyn Simulation>,
}

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
    /// Arrow scale, metres per newton.
    pub arrow_m_per_n: f64,
}

impl Default for DisplayLoopConfig {
    fn default() -> Self {
        Self {
            frame_period: Duration::from_millis(40),
            max_frames: None,
            max_duration: None,
            show_grab_points: true,
            show_reactions: false,
            arrow_m_per_n: 0.02,
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
}

/// What the display loop measured.
#[derive(Debug, Clone)]
pub struct DisplaySummary {
    /// Frames rendered.
    pub frames: u64,
    /// Wall time of the loop, seconds.
    pub wall_s: f64,
    /// End-to-end latency per frame (stylus sample → frame presented), milliseconds.
    pub latency: LatencyStats,
    /// Render time per frame (both eyes and read-back), milliseconds.
    pub render: LatencyStats,
    /// Messages the workers reported (clips, releases, reconnects, slowdowns).
    pub events: Vec<String>,
    /// Frames written to this folder, if any.
    pub frames_dir: Option<PathBuf>,
    /// Resident memory at the first and the last frame, bytes (Linux).
    pub rss_first_last_bytes: Option<(u64, u64)>,
    /// Why it ended.
    pub stop_reason: StopReason,
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
}

impl Rig {
    /// Starts the camera, arm, microphone and solver threads.
    pub fn start(
        devices: RigDevices,
        solver_config: SolverConfig,
        stop: StopFlag,
    ) -> Result<Self, RigError> {
        let (reports_tx, reports_rx) = crossbeam_channel::bounded(256);
        let (camera_tx, camera_rx) = latest_channel(1);
        let (stylus_tx, stylus_rx) = latest_channel(4);
        let (snapshot_tx, snapshot_rx) = latest_channel(1);
        let mut workers = Vec::new();
        // The solver gets the camera's pose too, for a wind that blows from where the user looks.
        let (view_tx, view_rx) = latest_channel(1);
        workers.push(spawn_camera(
            Box::new(ViewTee::new(devices.camera, view_tx)),
            camera_tx,
            reports_tx.clone(),
            stop.clone(),
        )?);
        workers.push(spawn_arm(
            devices.stylus,
            stylus_tx,
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
                stylus: stylus_rx,
                mic: mic_rx,
                view: Some(view_rx),
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
        })
    }

    /// The stop flag shared by every thread of the rig.
    pub fn stop_flag(&self) -> &StopFlag {
        &self.stop
    }

    /// Names of the worker threads still running.
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
            .collect()
    }

    /// Runs the compositor loop on this thread until a stop condition, then stops and joins
    /// every worker. A worker's fatal error is returned as [`RigError::WorkerFailed`].
    pub fn run(
        mut self,
        compositor: &mut Compositor,
        mut frames: Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
    ) -> Result<RunSummary, RigError> {
        let result = self.display_loop(compositor, &mut frames, config);
        self.stop.stop();
        for w in self.devices.drain(..) {
            w.join()?;
        }
        let solver = match self.solver.take() {
            Some(w) => w.join()?,
            None => SolverSummary::default(),
        };
        // A fatal report that raced with the end of the loop still reaches the user.
        let late_fatal = self.reports_rx.try_iter().find_map(|r| match r {
            WorkerReport::Fatal { worker, message } => Some((worker, message)),
            WorkerReport::Event { .. } => None,
        });
        let display = result?;
        if let Some((worker, message)) = late_fatal {
            return Err(RigError::WorkerFailed { worker, message });
        }
        Ok(RunSummary { display, solver })
    }

    fn display_loop(
        &mut self,
        compositor: &mut Compositor,
        frames: &mut Option<&mut FrameWriter>,
        config: &DisplayLoopConfig,
    ) -> Result<DisplaySummary, RigError> {
        let start = Instant::now();
        let mut next_frame = start;
        let mut latest_camera: Option<CameraUpdate> = None;
        let mut last_camera_at: Option<Instant> = None;
        let mut snapshot: Option<SimSnapshot> = None;
        let mut events = Vec::new();
        let mut latency = LatencyStats::default();
        let mut render = LatencyStats::default();
        let mut frames_done = 0u64;
        let mut fps = 0.0;
        let mut last_present: Option<Instant> = None;
        let mut rss_first = None;
        let mut rss_last = None;
        let stop_reason = loop {
            if config.max_frames.is_some_and(|n| frames_done >= n) {
                break StopReason::Done;
            }
            if config.max_duration.is_some_and(|d| start.elapsed() >= d) {
                break StopReason::Done;
            }
            for r in self.reports_rx.try_iter() {
                match r {
                    WorkerReport::Fatal { worker, message } => {
                        self.stop.stop();
                        return Err(RigError::WorkerFailed { worker, message });
                    }
                    WorkerReport::Event { worker, message } => {
                        log::info!("{worker}: {message}");
                        events.push(format!("{worker}: {message}"));
                    }
                }
            }
            if self.stop.is_stopped() {
                break StopReason::Interrupted;
            }
            let new_camera = drain_latest(&self.camera_rx);
            if let Some(u) = &new_camera {
                last_camera_at = Some(u.captured_at);
            }
            if new_camera.is_some() {
                latest_camera = new_camera.clone();
            }
            if let Some(s) = drain_latest(&self.snapshot_rx) {
                snapshot = Some(s);
            }
            let overlay = build_overlay(snapshot.as_ref(), config);
            let marker = match (&latest_camera, last_camera_at) {
                (_, Some(t)) if t.elapsed() > Duration::from_secs(1) => {
                    DeviceStatus::Lost("no frames for 1 s".into())
                }
                (Some(u), _) if u.camera_from_world.is_some() => DeviceStatus::Ok("tracked".into()),
                (Some(_), _) => DeviceStatus::Ok("marker not seen".into()),
                (None, _) => DeviceStatus::Waiting,
            };
            let hud = HudStats {
                fps,
                solver_real_time_factor: snapshot.as_ref().map_or(0.0, |s| s.real_time_factor),
                psi_norm_m: snapshot.as_ref().map_or(0.0, |s| s.diagnostics.psi_norm_m),
                energy_error_rel: snapshot
                    .as_ref()
                    .map_or(0.0, |s| s.diagnostics.energy_error_rel),
                marker,
                arm: match snapshot.as_ref().and_then(|s| s.arm_status.clone()) {
                    Some(s) if s.starts_with("lost") => DeviceStatus::Lost(s),
                    Some(_)
                        if snapshot
                            .as_ref()
                            .is_some_and(|s| s.spring_in_world.is_some()) =>
                    {
                        DeviceStatus::Ok("clipped".into())
                    }
                    Some(s) => DeviceStatus::Ok(s),
                    None => DeviceStatus::Waiting,
                },
                mic: match snapshot.as_ref().and_then(|s| s.mic_rms) {
                    Some(rms) => DeviceStatus::Ok(format!("rms {rms:.3}")),
                    None => DeviceStatus::Waiting,
                },
                latency_ms: latency.last_ms(),
            };
            let hud_lines = hud.lines();
            let frame_arc: Option<Arc<_>> = new_camera.as_ref().map(|u| u.frame.clone());
            let video = frame_arc.as_ref().map(|f| VideoImage {
                width: f.width,
                height: f.height,
                rgb: &f.rgb,
            });
            let render_start = Instant::now();
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
            render.push_ms((presented - render_start).as_secs_f64() * 1e3);
            if let Some(t) = snapshot.as_ref().and_then(|s| s.stylus_sampled_at) {
                latency.push_ms(presented.saturating_duration_since(t).as_secs_f64() * 1e3);
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
            if let Some(w) = frames.as_deref_mut() {
                w.write(&image)?;
            }
            let rss = rss_bytes();
            if rss_first.is_none() {
                rss_first = rss;
            }
            rss_last = rss;
            frames_done += 1;
            next_frame += config.frame_period;
            let now = Instant::now();
            if next_frame > now {
                std::thread::sleep(next_frame - now);
            } else {
                next_frame = now;
            }
        };
        Ok(DisplaySummary {
            frames: frames_done,
            wall_s: start.elapsed().as_secs_f64(),
            latency,
            render,
            events,
            frames_dir: frames.as_deref().map(|w| w.dir().to_owned()),
            rss_first_last_bytes: rss_first.zip(rss_last),
            stop_reason,
        })
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        // Workers stop and join in their own Drop; the flag makes them all stop together.
        self.stop.stop();
    }
}

fn build_overlay(snapshot: Option<&SimSnapshot>, config: &DisplayLoopConfig) -> Overlay {
    let mut overlay = Overlay {
        arrow_m_per_n: config.arrow_m_per_n,
        ..Overlay::default()
    };
    if let Some(s) = snapshot {
        overlay.shapes = s.shapes.clone();
        overlay.stylus_tip_in_world = s.stylus_tip_in_world;
        overlay.spring_in_world = s.spring_in_world;
        if config.show_reactions {
            overlay.arrows = s.arrows.clone();
        }
        if config.show_grab_points && s.spring_in_world.is_none() {
            for p in &s.grab_points_in_world {
                overlay.push_marker(*p, 0.005, [0.2, 0.8, 1.0]);
            }
        }
    }
    overlay
}

/// Resident set size of this process, bytes (Linux `/proc/self/status`).
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
