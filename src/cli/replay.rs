//! `replay`: runs a session recorded with `demo --record DIR` or `run --record DIR` again from
//! its folder, through the same simulation (and method) the rig ran, and says whether the solver's log is
//! identical to the recording bit for bit (exit status 1 when it is not); a session in parts
//! (`sandbox --record` across resets and scene switches) part by part.

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
    let many = outcome.parts.len() > 1;
    for (k, part) in outcome.parts.iter().enumerate() {
        if many {
            println!(
                "part {}: {}, {} steps to t = {} s, into {}: {}",
                k + 1,
                part.scene,
                part.steps,
                part.simulated_s,
                part.solver_log.display(),
                match part.difference {
                    None => "identical, bit for bit",
                    Some(_) => "differs",
                }
            );
        }
        if let Some(d) = &part.difference {
            let which = if many {
                format!("part {}'s", k + 1)
            } else {
                "the".to_owned()
            };
            anyhow::bail!(
                "the replayed solver log differs from {which} recording at line {}:\n  recorded: {}\n  replayed: {}",
                d.line,
                d.recorded,
                d.replayed
            );
        }
    }
    let every = if many {
        format!("every part's ({}) ", outcome.parts.len())
    } else {
        String::new()
    };
    println!("{every}solver log identical to the recording, bit for bit");
    Ok(())
}
