//! `run --config RIG.toml`: the rig with real devices — the camera (OpenCV capture, or a
//! recording played as the camera) with the marker tracker, the digitizer arm on its serial
//! port (optional), the microphone (optional) — and the compositor in a window (or headless
//! into PNG files when the config says so or there is no display; `--no-save` renders without
//! writing them). `--method` chooses the simulation method, as on `simulate`; a scene the
//! method cannot run stops the run first. In a window, without an `[arm]` (or with
//! `--mouse`), a left drag grabs bodies through the stylus spring as in the sandbox
//! (`ar_multibody::sandbox::live_mouse`).

use super::demo::{headless_for_want_of_a_display, stop_on_ctrl_c};
use anyhow::Context as _;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_calibration::tracker_file::TrackerCalibration;
use ar_drivers::arm::{ArmConfig, PortSpec, TipCorrection};
use ar_drivers::camera::{CameraSource, CaptureRequest, CaptureTarget, LiveReplay, OpenCvCamera};
use ar_drivers::mic::{MicConfig, MicSource, SyntheticMic, SyntheticSignal};
use ar_multibody::compositor::arm::ArmLook;
use ar_multibody::compositor::frames::FrameWriter;
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::interaction::InteractionConfig;
use ar_multibody::rig::config::{ArmSection, DisplayMode, RigConfig};
use ar_multibody::rig::devices::demo_world::demo_breaths;
use ar_multibody::rig::devices::mic_level::MicLevels;
use ar_multibody::rig::devices::tracked_camera::TrackedCamera;
use ar_multibody::rig::display::memory::keep_large_buffers_out_of_the_heap;
use ar_multibody::rig::display::report::describe;
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::{
    DisplayLoopConfig, MicDevice, Rig, RigArm, RigDevices, SolverConfig, StopFlag, StopReason,
};
use ar_multibody::sandbox::live_mouse::LiveMouse;
use ar_multibody::tracking::TrackerConfig;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The rig config file (see assets/rig.example.toml).
    #[arg(long)]
    pub config: PathBuf,
    /// Stop after this many seconds (default: until the window closes or Ctrl-C).
    #[arg(long, value_name = "S", allow_negative_numbers = true,
          value_parser = super::numeric_arg::duration_secs)]
    pub duration_s: Option<f64>,
    /// Show the developer's figures in the HUD (frame rate, solver speed, |psi|, latency).
    #[arg(long)]
    pub diagnostics: bool,
    /// Record the session into this new folder (the solver's inputs and outputs of every
    /// step, and the scene); `replay DIR` reproduces it bit for bit.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Headless: render but do not write PNG files (for long soak runs).
    #[arg(long)]
    pub no_save: bool,
    /// Draw no shadows of the bodies on the desk (for slow machines; as `[display] shadows =
    /// false`).
    #[arg(long)]
    pub no_shadows: bool,
    /// Method: `default` (maximal coordinates, the paper's impulses) or `articulated`
    /// (reduced coordinates, the articulated-body algorithm, RK4 at a quarter of the scene's
    /// step; no joint reactions, no contacts).
    #[arg(long, value_enum, default_value_t = Method::Default)]
    pub method: Method,
    /// Grab bodies with the mouse (left drag, through the stylus spring, as in the sandbox)
    /// also when the config has an `[arm]`; without one the mouse grabs anyway. Needs a
    /// window in `monitor` mode.
    #[arg(long)]
    pub mouse: bool,
}

/// The solver's command channel for the mouse: moves come at the frame rate and the solver
/// drains it every step, so it is never near full.
const COMMAND_QUEUE: usize = 256;

/// Runs the command.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let cfg = RigConfig::load(&args.config)?;
    if !keep_large_buffers_out_of_the_heap() {
        log::debug!("could not pin the allocator's mmap threshold; memory may creep in long runs");
    }
    let intrinsics = CameraIntrinsics::load(&cfg.camera.camera_file)?;
    // The scene first: one the method cannot run stops the run before any device starts.
    let simulation = load_simulation(&cfg.scene, args.method)
        .with_context(|| format!("scene {}", cfg.scene.display()))?
        .simulation;
    let request = CaptureRequest {
        size: Some((intrinsics.image_width, intrinsics.image_height)),
        fps: None,
    };
    let source: Box<dyn CameraSource> = match cfg.camera.capture_target() {
        live @ CaptureTarget::Device(_) => Box::new(OpenCvCamera::open(live, request)?),
        recording => {
            let live = LiveReplay::new(Box::new(move || {
                Ok(Box::new(OpenCvCamera::open(recording.clone(), request)?)
                    as Box<dyn CameraSource>)
            }))?;
            eprintln!("camera: {}", live.describe());
            Box::new(live)
        }
    };
    let camera = TrackedCamera::new(
        source,
        &intrinsics,
        TrackerConfig {
            marker_length_m: cfg.camera.marker_length_m,
            ..TrackerConfig::default()
        },
    )?;
    let (arm, world_from_arm, grab_radius_m) = match &cfg.arm {
        Some(arm) => {
            // The file first: a bad one is reported before the driver's thread starts.
            let tracker_cal = TrackerCalibration::load(&arm.tracker_file)?;
            let tip = match &arm.tip {
                Some(path) => TipCorrection::load(path)?,
                None => TipCorrection::point(),
            };
            (
                start_arm(arm, tip)?,
                tracker_cal.world_from_arm,
                arm.grab_radius_mm * 1e-3,
            )
        }
        None => {
            eprintln!("arm: none in the config");
            (
                None,
                nalgebra::Isometry3::identity(),
                InteractionConfig::default().grab_radius_m,
            )
        }
    };
    let mic: Option<Box<dyn MicDevice>> = match cfg.mic.as_ref().map(|m| m.device.as_str()) {
        None | Some("none") => None,
        Some(name) => {
            let source = match name {
                "default" => MicSource::Default,
                // Seeded breaths from the start, as the demo's microphone blows (soak runs
                // without a microphone).
                "synthetic" => MicSource::Synthetic(SyntheticMic::from_signal(
                    SyntheticSignal::Breaths(demo_breaths(0.0)),
                )),
                _ => MicSource::Named(name.to_owned()),
            };
            let (mic, warning) =
                MicLevels::start_optional(source, &MicConfig::default())?.into_device();
            if let Some(w) = warning {
                eprintln!("warning: {w}");
            }
            mic
        }
    };
    let mut compositor_config = match cfg.display.mode {
        DisplayMode::Monitor => CompositorConfig::monitor(intrinsics.clone()),
        DisplayMode::Hmd => CompositorConfig::hmd(
            intrinsics.clone(),
            (cfg.display.eye_width, cfg.display.eye_height),
            cfg.display.ipd_mm * 1e-3,
        ),
    };
    compositor_config.shadows = cfg.display.shadows && !args.no_shadows;
    let headless_dir = cfg
        .display
        .headless_out
        .clone()
        .or_else(|| headless_for_want_of_a_display().then(|| PathBuf::from("run-frames")));
    let mouse = mouse_wanted(&args, &cfg, headless_dir.is_some());
    let mut compositor = match &headless_dir {
        Some(_) => Compositor::headless(compositor_config)?,
        None => Compositor::windowed(compositor_config, "ar-multibody")?,
    };
    let mut frames = match &headless_dir {
        Some(_) if args.no_save => None,
        Some(dir) => {
            let w = FrameWriter::new(dir)?;
            eprintln!("headless: writing frames to {}", w.dir().display());
            Some(w)
        }
        None => None,
    };
    let stop = StopFlag::new();
    stop_on_ctrl_c(&stop)?.report_in_exit_status();
    let mut solver_config = SolverConfig {
        world_from_arm,
        interaction: InteractionConfig { grab_radius_m },
        ..SolverConfig::default()
    };
    let max_duration = args.duration_s.map(std::time::Duration::from_secs_f64);
    solver_config.thin_trace_for_session(max_duration);
    let recorder = super::record::start(
        args.record.as_deref(),
        &cfg.scene.display().to_string(),
        &cfg.scene,
        args.method,
        &simulation,
        &solver_config,
    )?;
    let (commands_tx, commands_rx) = crossbeam_channel::bounded(COMMAND_QUEUE);
    let mut mouse = mouse.then(|| LiveMouse::new(compositor.config().view_size_px, commands_tx));
    let rig = Rig::start_commanded(
        RigDevices {
            camera: Box::new(camera),
            arm,
            mic,
            simulation,
        },
        solver_config,
        recorder,
        mouse.is_some().then_some(commands_rx),
        stop,
    )?;
    let loop_config = DisplayLoopConfig {
        max_duration,
        show_diagnostics: args.diagnostics,
        // The camera sees the real arm: its links only hide the bodies behind them.
        arm_look: ArmLook::Phantom,
        ..DisplayLoopConfig::default()
    };
    let summary = rig.run_controlled(
        &mut compositor,
        frames.as_mut(),
        &loop_config,
        mouse.as_mut().map(|m| m as _),
    )?;
    print!(
        "{}",
        describe(&summary, loop_config.frame_period.as_secs_f64() * 1e3)
    );
    if let Some(line) = mouse.as_ref().and_then(LiveMouse::final_line) {
        println!("{line}");
    }
    if let StopReason::WorkerFailed { worker, message } = &summary.display.stop_reason {
        anyhow::bail!("{worker} failed: {message}");
    }
    // The rig ran on after the failure (the HUD showed it); the exit status still says so.
    if let Some(e) = &summary.solver.error {
        anyhow::bail!("solver failed: {e}");
    }
    super::record::finish(args.record.as_deref(), &summary)
}

/// Starts the arm's driver; a port that is not there stops the run when the config says the
/// arm is required, and otherwise is named at once and the run goes on without the arm.
fn start_arm(arm: &ArmSection, tip: TipCorrection) -> anyhow::Result<Option<RigArm>> {
    let port = PortSpec::from_arg(&arm.port);
    if let Err(e) = port.check_present() {
        if arm.required {
            anyhow::bail!("arm: {e} (the config's [arm] says required = true)");
        }
        eprintln!("warning: arm: {e}; running without the arm (set required = true in [arm] to stop instead)");
        return Ok(None);
    }
    let arm = RigArm::start(
        ArmConfig {
            port,
            tip,
            ..ArmConfig::default()
        },
        arm.button_mask,
    )?;
    Ok(Some(arm))
}

/// Whether the mouse grabs in this run (saying so, or why not): in a window in `monitor`
/// mode, without an `[arm]` or with `--mouse`.
fn mouse_wanted(args: &RunArgs, cfg: &RigConfig, headless: bool) -> bool {
    if !(args.mouse || cfg.arm.is_none()) {
        return false;
    }
    let why_not = if headless {
        Some("the run is headless (no window)")
    } else if cfg.display.mode != DisplayMode::Monitor {
        Some("the display is `hmd` (the mouse needs `monitor`)")
    } else {
        None
    };
    match why_not {
        Some(why) if args.mouse => eprintln!("warning: --mouse: {why}; nothing can be grabbed"),
        Some(why) => eprintln!("mouse: {why}; nothing can be grabbed"),
        None => eprintln!("mouse: a left drag grabs a body (the stylus spring, as in the sandbox)"),
    }
    why_not.is_none()
}
