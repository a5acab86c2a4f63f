//! `track` subcommand (being built under issue 4).

use clap::Args;

/// Arguments of `track`.
#[derive(Args, Debug)]
pub struct TrackArgs {}

/// Runs the command.
pub fn run(_args: TrackArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 4)")
}
