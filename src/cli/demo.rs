//! `demo` subcommand (being built under issue 6).

use clap::Args;

/// Arguments of `demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {}

/// Runs the command.
pub fn run(_args: DemoArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 6)")
}
