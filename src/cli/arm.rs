//! `arm` subcommands (being built under issue 3).

use clap::Subcommand;

/// Digitizer-arm tools.
#[derive(Subcommand, Debug)]
pub enum ArmCommand {}

/// Runs the chosen arm tool.
pub fn run(cmd: ArmCommand) -> anyhow::Result<()> {
    match cmd {}
}
