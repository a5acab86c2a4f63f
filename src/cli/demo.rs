//! `demo`: the whole rig on simulated devices — the synthetic camera looking at the printed
//! marker, the simulated arm on a pseudo-terminal moved by a scripted user (reach the grab
//! point, clip, drag 10 cm, release; in a scene whose stylus tip pushes, such as `push`, a
//! push with the tip first), the synthetic microphone — drawn by the compositor in a
//! window, or headless into numbered PNG files when asked or when there is no display.
//! `--method` chooses the simulation method, as on `simulate` (the rig builder loads it).

use anyhow::Context as _;
use ar_dynamics::scene::resolve_scene;
use ar_multibody::compositor::frames::FrameWriter;
use ar_multibody::compositor::stereo::{DEFAULT_EYE_SIZE_PX, DEFAULT_IPD_M};
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::demo_world::{DemoOptions, DemoWorld};
use ar_multibody::rig::display::memory::keep_large_buffers_out_of_the_heap;
use ar_multibody::rig::display::probe::{probe_display, DisplayProbe, NO_WAYLAND};
use ar_multibody::rig::display::report::describe;
use ar_multibody::rig::method::Method;
use ar_multibody::rig::{DisplayLoopConfig, Rig, StopFlag, StopReason};

use super::interrupt::Interrupts;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// Where the demo shows its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DisplayArg {
    /// One view (a window, or PNG files headless).
    Monitor,
    /// Side-by-side stereo for a head-mounted display (two eyes an IPD apart).
    Hmd,
}

/// Arguments of `demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Scene name (a file in assets/scenes/, or a robot in assets/robots/ such as ar6) or path
    /// to a scene or model file. In a scene whose stylus tip pushes (`[contact]
    /// stylus_tip_radius_m`, e.g. `push`) the scripted user first pushes the grab point's body
    /// with the tip, button up, then clips and drags it. In a scene without a grab point (e.g.
    /// `pile`) the user holds the stylus still and the demo shows the scene moving on its own.
    /// A mechanism standing straight up under its grab point (ar6) is dragged down, not up.
    #[arg(long, default_value = "ten_pendula")]
    pub scene: String,
    /// monitor (one view in a window) or hmd (two eye views side by side, full screen).
    #[arg(long, value_enum, default_value_t = DisplayArg::Monitor)]
    pub display: DisplayArg,
    /// Render off-screen into numbered PNG files (automatic when there is no display).
    #[arg(long)]
    pub headless: bool,
    /// Stop after this many frames (default: when the scripted gesture and 3 s of free swing
    /// are over).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Stop after this many seconds (e.g. 600 for the ten-minute soak).
    #[arg(long, value_name = "S", allow_negative_numbers = true,
          value_parser = super::numeric_arg::duration_secs)]
    pub duration_s: Option<f64>,
    /// Folder for the headless PNG frames.
    #[arg(long, default_value = "demo-frames")]
    pub out: PathBuf,
    /// Interpupillary distance for --display hmd, millimetres (positive).
    #[arg(long, default_value_t = DEFAULT_IPD_M * 1e3, allow_negative_numbers = true,
          value_parser = super::numeric_arg::positive)]
    pub ipd_mm: f64,
    /// Per-eye size for --display hmd, WIDTHxHEIGHT pixels.
    #[arg(long, default_value = "800x600")]
    pub eye_size: String,
    /// Display frame rate, frames per second (0.01 to 240).
    #[arg(long, default_value_t = 25.0, allow_negative_numbers = true)]
    pub fps: f64,
    /// Run without the synthetic microphone (no wind).
    #[arg(long)]
    pub no_mic: bool,
    /// Draw joint reaction forces and contact normal forces as arrows.
    #[arg(long)]
    pub reactions: bool,
    /// Show the developer's figures in the HUD (frame rate, solver speed, |psi|, latency).
    #[arg(long)]
    pub diagnostics: bool,
    /// Draw no shadows of the bodies on the desk (for slow machines).
    #[arg(long)]
    pub no_shadows: bool,
    /// Headless: render but do not write PNG files (for long soak runs).
    #[arg(long)]
    pub no_save: bool,
    /// Record the session into this new folder (the solver's inputs and outputs of every
    /// step, and the scene); `replay DIR` reproduces it bit for bit.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Method: `default` (maximal coordinates, the paper's impulses) or `articulated`
    /// (reduced coordinates, the articulated-body algorithm, RK4 at a quarter of the scene's
    /// step; no joint reactions, no contacts).
    #[arg(long, value_enum, default_value_t = Method::Default)]
    pub method: Method,
}

fn parse_size(text: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .with_context(|| format!("--eye-size {text:?}: expected WIDTHxHEIGHT, e.g. 800x600"))?;
    let w: u32 = w
        .trim()
        .parse()
        .with_context(|| format!("--eye-size {text:?}: bad width"))?;
    let h: u32 = h
        .trim()
        .parse()
        .with_context(|| format!("--eye-size {text:?}: bad height"))?;
    anyhow::ensure!(
        w > 0 && h > 0,
        "--eye-size {text:?}: sizes must be positive"
    );
    Ok((w, h))
}

/// Whether the rig's display loop runs headless when not asked to: without a reachable
/// display it does, and says why on stderr.
pub fn headless_for_want_of_a_display() -> bool {
    match probe_display() {
        DisplayProbe::Reachable => false,
        DisplayProbe::Unset => {
            eprintln!("no display found (DISPLAY / WAYLAND_DISPLAY unset): running headless");
            true
        }
        DisplayProbe::Unreachable(why) => {
            eprintln!("{why}: running headless");
            true
        }
    }
}

/// With no display at all (no `DISPLAY`, no `WAYLAND_DISPLAY`) and no usable
/// `XDG_RUNTIME_DIR` (containers, CI, ssh), the GPU libraries' probe for a Wayland compositor
/// (libwayland's `wl_display_connect`) printed "error: XDG_RUNTIME_DIR is invalid or not set
/// in the environment." twice at every headless start, although nothing was wrong. Pointing
/// `WAYLAND_DISPLAY` at a path that cannot exist makes that probe fail quietly; the
/// off-screen renderer does not need Wayland. Call before any thread starts.
pub fn silence_wayland_probe() {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let runtime_dir_ok = std::env::var_os("XDG_RUNTIME_DIR")
        .is_some_and(|d| !d.is_empty() && std::path::Path::new(&d).is_dir());
    if !set("DISPLAY") && !set("WAYLAND_DISPLAY") && !runtime_dir_ok {
        std::env::set_var("WAYLAND_DISPLAY", NO_WAYLAND);
    }
}

/// Installs the Ctrl-C / SIGTERM handling that stops the rig (once per process): the first
/// signal stops it as the end of the run would (summary and recording kept); a second signal
/// ends the process at once. The caller says whether the process then ends with 130 or 143
/// ([`Interrupts::report_in_exit_status`]).
pub fn stop_on_ctrl_c(stop: &StopFlag) -> anyhow::Result<Interrupts> {
    let s = stop.clone();
    Interrupts::install(move || s.stop())
}

/// Runs the command.
pub fn run(args: DemoArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        // The lower bound keeps the frame period a representable `Duration`.
        (0.01..=240.0).contains(&args.fps),
        "--fps {}: must be between 0.01 and 240",
        args.fps
    );
    let eye_size = if args.eye_size == "800x600" {
        DEFAULT_EYE_SIZE_PX
    } else {
        parse_size(&args.eye_size)?
    };
    let headless = args.headless || headless_for_want_of_a_display();
    if !keep_large_buffers_out_of_the_heap() {
        log::debug!("could not pin the allocator's mmap threshold; memory may creep in long runs");
    }
    let stop = StopFlag::new();
    stop_on_ctrl_c(&stop)?.report_in_exit_status();
    let world = DemoWorld::build(
        &DemoOptions {
            scene: args.scene.clone(),
            with_mic: !args.no_mic,
            show_diagnostics: args.diagnostics,
            show_reactions: args.reactions,
            method: args.method,
        },
        stop.clone(),
    )?;
    eprintln!("method: {}", args.method.name());
    let intrinsics = world.intrinsics().clone();
    eprintln!("camera: {}", world.camera_kind());
    world.notes().iter().for_each(|n| eprintln!("{n}"));
    let mut config = match args.display {
        DisplayArg::Monitor => CompositorConfig::monitor(intrinsics),
        DisplayArg::Hmd => CompositorConfig::hmd(intrinsics, eye_size, args.ipd_mm * 1e-3),
    };
    config.shadows = !args.no_shadows;
    let mut compositor = if headless {
        Compositor::headless(config)?
    } else {
        Compositor::windowed(config, "ar-multibody demo")?
    };
    let mut frames = if headless && !args.no_save {
        let w = FrameWriter::new(&args.out)?;
        eprintln!("headless: writing frames to {}", w.dir().display());
        Some(w)
    } else {
        None
    };
    let frame_period = Duration::from_secs_f64(1.0 / args.fps);
    let max_duration = match (args.duration_s, args.frames) {
        (Some(s), _) => Some(Duration::from_secs_f64(s)),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs_f64(world.gesture_duration_s() + 3.0)),
    };
    let loop_config = DisplayLoopConfig {
        frame_period,
        max_frames: args.frames,
        max_duration,
        show_reactions: args.reactions,
        show_diagnostics: args.diagnostics,
        ..DisplayLoopConfig::default()
    };
    let wind_log = world.wind_log();
    let (devices, mut solver_config, user) = world.into_parts();
    // The length the session is expected to last, by time or by frames.
    let expected = max_duration.or_else(|| {
        args.frames
            .map(|n| Duration::from_secs_f64(n as f64 / args.fps))
    });
    solver_config.thin_trace_for_session(expected);
    let recorder = super::record::start(
        args.record.as_deref(),
        &args.scene,
        &resolve_scene(&args.scene),
        args.method,
        &devices.simulation,
        &solver_config,
    )?;
    let rig = Rig::start_recording(devices, solver_config, recorder, stop.clone())?;
    // run_to_end: a worker's failure still prints what the run measured until then.
    let result = rig.run_to_end(&mut compositor, frames.as_mut(), &loop_config);
    stop.stop();
    let user_result = user.join();
    let summary = result?;
    if let Ok(Err(e)) = user_result {
        eprintln!("warning: {e}");
    }
    print!("{}", describe(&summary, frame_period.as_secs_f64() * 1e3));
    if let Some(log) = wind_log {
        println!("{}", log.describe());
    }
    if let StopReason::WorkerFailed { worker, message } = &summary.display.stop_reason {
        anyhow::bail!("{worker} failed: {message}");
    }
    if let Some(e) = &summary.solver.error {
        anyhow::bail!("solver failed: {e}");
    }
    super::record::finish(args.record.as_deref(), &summary)
}
