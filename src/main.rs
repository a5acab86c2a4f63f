//! `ar-multibody`: the command line of the augmented-reality multibody client.
//!
//! Every subcommand lives in its own file under `cli/`; this file only parses the
//! command line, sets up logging and reports the one error a command returns.

mod cli;

use clap::{Parser, Subcommand};

/// Augmented-reality client for interactive multibody simulation.
#[derive(Parser, Debug)]
#[command(name = "ar-multibody", version, about, long_about = None)]
struct Cli {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides it. With -vv an
    /// error also shows its backtrace (captured when RUST_BACKTRACE=1).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
// Parsed once at start-up; boxing the larger argument structs would buy nothing.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Run the whole rig on simulated devices (camera, arm, microphone).
    Demo(cli::demo::DemoArgs),
    /// Run the rig with real devices described by a rig config file.
    Run(cli::run::RunArgs),
    /// Simulate a scene headless as fast as possible and print diagnostics.
    Simulate(cli::simulate::SimulateArgs),
    /// Track the printed marker in a camera stream and print or record its pose.
    Track(cli::track::TrackArgs),
    /// Calibrate the camera intrinsics or the arm-to-marker transform.
    #[command(subcommand)]
    Calibrate(cli::calibrate::CalibrateCommand),
    /// Generate parametric scenes (long chains, binary mobiles) as scene TOML.
    #[command(subcommand)]
    Scene(cli::scene::SceneCommand),
    /// Digitizer-arm tools: a simulated arm on a pseudo-terminal, and a probe.
    #[command(subcommand)]
    Arm(cli::arm::ArmCommand),
    /// Replay a session recorded with --record and check it against the recording.
    Replay(cli::replay::ReplayArgs),
    /// A scene in a window without any device: the mouse grabs, orbits and zooms.
    Sandbox(cli::sandbox::SandboxArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let verbose = cli.verbose;
    quiet_stdout_failures();
    cli::demo::silence_wayland_probe();
    match run(cli) {
        // A command stopped by Ctrl-C or SIGTERM ends with 130 or 143, the shell's convention.
        Ok(()) => cli::interrupt::exit_status().map_or(std::process::ExitCode::SUCCESS, Into::into),
        Err(e) => {
            // One message per error, its causes on one line. The backtrace (captured when
            // RUST_BACKTRACE or RUST_LIB_BACKTRACE is set) is shown only with -vv: a user
            // error is not a crash.
            if verbose >= 2 {
                eprintln!("error: {e:?}");
            } else {
                eprintln!("error: {}", cli::error_text(&e));
            }
            std::process::ExitCode::FAILURE
        }
    }
}

/// `println!` panics when stdout fails. Where a command does not handle that itself, turn
/// the panic into what a command-line tool should do: a closed pipe (`track --print | head`)
/// ends the program quietly with status 0, any other failure (`> /dev/full`) is one error
/// line and status 1. Files being written are atomic or flushed row by row, so stopping here
/// loses no completed output.
fn quiet_stdout_failures() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if let Some(cause) = message.strip_prefix("failed printing to stdout: ") {
            if cause.contains("Broken pipe") {
                std::process::exit(0);
            }
            eprintln!("error: writing to standard output: {cause}");
            std::process::exit(1);
        }
        default_hook(info);
    }));
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let default_level = match cli.verbose {
        // wgpu tries OpenGL through EGL first and logs an ERROR when the machine has no DRI
        // driver (headless machines, containers) before it uses another backend that works:
        // without -v that line only alarms. A failure to render is reported by the compositor.
        0 => "warn,wgpu_hal::gles::egl=off",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(default_level))
        .format_timestamp_millis()
        .init();
    match cli.command {
        Command::Demo(args) => cli::demo::run(args),
        Command::Run(args) => cli::run::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Track(args) => cli::track::run(args),
        Command::Calibrate(cmd) => cli::calibrate::run(cmd),
        Command::Scene(cmd) => cli::scene::run(cmd),
        Command::Arm(cmd) => cli::arm::run(cmd),
        Command::Replay(args) => cli::replay::run(args),
        Command::Sandbox(args) => cli::sandbox::run(args),
    }
}
