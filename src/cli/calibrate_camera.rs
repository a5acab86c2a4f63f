//! `calibrate_camera` subcommand (being built under issue 4).

use clap::Args;

/// Arguments of `calibrate_camera`.
#[derive(Args, Debug)]
pub struct CalibrateCameraArgs {}

/// Runs the command.
pub fn run(_args: CalibrateCameraArgs) -> anyhow::Result<()> {
    anyhow::bail!("this command is not built yet (issue 4)")
}
