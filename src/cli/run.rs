//! `run` subcommand (being built under issue 6).

use clap::Args;

/// Arguments of `run`.
#[derive(Args, Debug)]
pub struct RunArgs {}

/// Runs the command.
pub fn run(_args: RunArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 6)")
}
