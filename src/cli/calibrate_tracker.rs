//! `calibrate_tracker` subcommand (being built under issue 5).

use clap::Args;

/// Arguments of `calibrate_tracker`.
#[derive(Args, Debug)]
pub struct CalibrateTrackerArgs {}

/// Runs the command.
pub fn run(_args: CalibrateTrackerArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 5)")
}
