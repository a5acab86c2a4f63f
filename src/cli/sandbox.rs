//! `sandbox [SCENE]`: a scene in a window without any device — the desk and the printed
//! marker seen by a virtual camera the mouse orbits, pans and zooms, bodies grabbed with the
//! mouse through the stylus spring, keys to pause, step, reset, switch the scene, show the
//! forces, switch the rigid groups and blow wind (see `ar_multibody::sandbox`). It runs the
//! same rig as `demo` and `run`, so `--record DIR` records it for `replay`.

use super::demo::stop_on_ctrl_c;
use ar_dynamics::scene::{resolve_scene, shipped_scene_names};
use ar_multibody::compositor::frames::FrameWriter;
use ar_multibody::compositor::{Compositor, CompositorConfig};
use ar_multibody::rig::devices::demo_world::demo_intrinsics;
use ar_multibody::rig::devices::view_camera::{ViewCamera, ViewHandle};
use ar_multibody::rig::display::memory::keep_large_buffers_out_of_the_heap;
use ar_multibody::rig::display::probe::{probe_display, DisplayProbe};
use ar_multibody::rig::display::report::describe;
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::threads::solver_commands::SceneSource;
use ar_multibody::rig::{DisplayLoopConfig, Rig, RigDevices, SolverConfig, StopFlag, StopReason};
use ar_multibody::sandbox::session::{initial_view, SandboxSession};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// The solver's command channel: pointer moves come at the frame rate, and the solver drains
/// it every step, so it is never near full.
const COMMAND_QUEUE: usize = 256;

/// Arguments of `sandbox`.
#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// Scene name (a file in assets/scenes/, or a robot in assets/robots/ such as ar6) or path
    /// to a scene or model file.
    #[arg(default_value = "ten_pendula")]
    pub scene: String,
    /// Stop after this many seconds (default: until the window closes, Esc or Ctrl-C).
    #[arg(long, value_name = "S", allow_negative_numbers = true,
          value_parser = super::numeric_arg::duration_secs)]
    pub duration_s: Option<f64>,
    /// Record the session into this new folder (each reset or scene switch goes on in a new
    /// part of it); `replay DIR` reproduces every part bit for bit.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Also write every shown frame as a numbered PNG file into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Show the developer's figures in the HUD (frame rate, solver speed, |psi|).
    #[arg(long)]
    pub diagnostics: bool,
    /// Draw no shadows of the bodies on the desk (for slow machines).
    #[arg(long)]
    pub no_shadows: bool,
    /// Method: `default` (maximal coordinates, the paper's impulses) or `articulated`.
    #[arg(long, value_enum, default_value_t = Method::Default)]
    pub method: Method,
}

/// The scene's file, or an error naming the shipped scenes.
fn scene_file(scene: &str) -> anyhow::Result<PathBuf> {
    let path = resolve_scene(scene);
    if !path.is_file() {
        anyhow::bail!(
            "unknown scene {scene:?} (no file {}); the shipped scenes are: {}",
            path.display(),
            shipped_scene_names().join(", ")
        );
    }
    Ok(path)
}

/// Runs the command.
pub fn run(args: SandboxArgs) -> anyhow::Result<()> {
    let path = scene_file(&args.scene)?;
    match probe_display() {
        DisplayProbe::Reachable => {}
        DisplayProbe::Unset => anyhow::bail!(
            "sandbox needs a window, and no display is set (DISPLAY / WAYLAND_DISPLAY); without \
             one, run it inside a virtual X server: xvfb-run -s \"-screen 0 1024x768x24\" \
             ar-multibody sandbox"
        ),
        DisplayProbe::Unreachable(why) => anyhow::bail!(
            "sandbox needs a window, and {why}; start that display server, or run the sandbox \
             inside a virtual X server: xvfb-run -s \"-screen 0 1024x768x24\" ar-multibody sandbox"
        ),
    }
    if !keep_large_buffers_out_of_the_heap() {
        log::debug!("could not pin the allocator's mmap threshold; memory may creep in long runs");
    }
    let method = args.method;
    let load = move |scene: &str| -> Result<_, String> {
        let path = scene_file(scene).map_err(|e| e.to_string())?;
        // The text the recording's next part copies (a reset or switch goes on recording).
        let text =
            ar_io::input_file::read_text(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let simulation = load_simulation(&path, method)
            .map(|l| l.simulation)
            .map_err(|e| e.0)?;
        let name = scene.to_owned();
        Ok((simulation, SceneSource { name, text }))
    };
    let (simulation, _) =
        load(&args.scene).map_err(|e| anyhow::anyhow!("scene {}: {e}", path.display()))?;
    let view = initial_view(&simulation);
    let intrinsics = demo_intrinsics();
    let view_handle = ViewHandle::new(view.camera_from_world());
    let camera = ViewCamera::new(&intrinsics, view_handle.clone(), 25.0)?;
    // The scene named first, then the other shipped ones in turn.
    let mut scenes = vec![args.scene.clone()];
    scenes.extend(
        shipped_scene_names()
            .into_iter()
            .filter(|n| resolve_scene(n) != path),
    );
    let (commands_tx, commands_rx) = crossbeam_channel::bounded(COMMAND_QUEUE);
    let mut session = SandboxSession::new(scenes, view, view_handle, commands_tx, Box::new(load));
    let mut compositor = Compositor::windowed(
        CompositorConfig {
            shadows: !args.no_shadows,
            ..CompositorConfig::monitor(intrinsics)
        },
        "ar-multibody sandbox",
    )?;
    let mut frames = args.out.as_deref().map(FrameWriter::new).transpose()?;
    let stop = StopFlag::new();
    stop_on_ctrl_c(&stop)?.report_in_exit_status();
    let solver_config = SolverConfig::default();
    let recorder = super::record::start(
        args.record.as_deref(),
        &args.scene,
        &path,
        method,
        &simulation,
        &solver_config,
    )?;
    let rig = Rig::start_commanded(
        RigDevices {
            camera: Box::new(camera),
            arm: None,
            mic: None,
            simulation,
        },
        solver_config,
        recorder,
        Some(commands_rx),
        stop.clone(),
    )?;
    eprintln!(
        "sandbox: {} (left drag grabs, right drag orbits, middle drag pans, wheel zooms; \
         P pause, N step, R reset, F forces, Tab next scene, G rigid groups, Space wind, Esc quit)",
        args.scene
    );
    // The window's renderer threads exist and the solver's has started: the drawing yields.
    match ar_multibody::rig::display::priority::lower_drawing_threads() {
        Ok(n) => log::debug!("{n} drawing threads run below the solver"),
        Err(e) => log::warn!("could not lower the drawing threads' priority: {e}"),
    }
    let loop_config = DisplayLoopConfig {
        max_duration: args.duration_s.map(Duration::from_secs_f64),
        show_grab_points: false,
        show_diagnostics: args.diagnostics,
        ..DisplayLoopConfig::default()
    };
    let result = rig.run_controlled(
        &mut compositor,
        frames.as_mut(),
        &loop_config,
        Some(&mut session),
    );
    stop.stop();
    let summary = result?;
    print!(
        "{}",
        describe(&summary, loop_config.frame_period.as_secs_f64() * 1e3)
    );
    if let Some(line) = session.final_line() {
        println!("{line}");
    }
    if let StopReason::WorkerFailed { worker, message } = &summary.display.stop_reason {
        anyhow::bail!("{worker} failed: {message}");
    }
    if let Some(e) = &summary.solver.error {
        anyhow::bail!("solver failed: {e}");
    }
    super::record::finish(args.record.as_deref(), &summary)
}
