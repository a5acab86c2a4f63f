//! `simulate` subcommand (being built under issue 2).

use clap::Args;

/// Arguments of `simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {}

/// Runs the command.
pub fn run(_args: SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 2)")
}
