//! One file per subcommand: its arguments (clap) and the function that runs it.

pub mod arm;
pub mod calibrate;
pub mod calibrate_camera;
pub mod calibrate_tracker;
pub mod demo;
pub mod run;
pub mod simulate;
pub mod track;
