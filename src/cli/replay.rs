//! `replay`: runs a session recorded with `demo --record DIR` or `run --record DIR` again from
//! its folder, through the same simulation (and method) the rig ran, and says whether the solver's log is
//! identical to the recording bit for bit (exit status 1 when it is not).

use anyhow::Context as _;
use ar_multibody::rig::method::{load_simulation, Method};
use ar_multibody::rig::record::replay::replay;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The session folder (written by `demo --record` or `run --record`).
    pub session: PathBuf,
    /// Folder for the replayed solver log (default: `replay/` inside the session folder).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs the command.
pub fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.session.join("replay"));
    let outcome = replay(&args.session, &out, |scene, info| {
        let method = Method::from_name(&info.method).ok_or_else(|| {
            format!(
                "session.toml names the method {:?}; expected \"default\" or \"articulated\"",
                info.method
            )
        })?;
        load_simulation(scene, method)
            .map(|loaded| loaded.simulation)
            .map_err(|e| e.0)
    })
    .with_context(|| format!("replaying {}", args.session.display()))?;
    println!(
        "replayed {} steps ({} s simulated) of {} into {}",
        outcome.steps,
        outcome.simulated_s,
        args.session.display(),
        outcome.solver_log.display()
    );
    match outcome.difference {
        None => {
            println!("solver log identical to the recording, bit for bit");
            Ok(())
        }
        Some(d) => anyhow::bail!(
            "the replayed solver log differs from the recording at line {}:\n  recorded: {}\n  replayed: {}",
            d.line,
            d.recorded,
            d.replayed
        ),
    }
}
