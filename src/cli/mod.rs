//! One file per subcommand: its arguments (clap) and the function that runs it; a large
//! command's output in files of its own (`simulate_output`, `simulate_plot`, `simulate_summary`), and the range
//! checks of numeric flags shared by the commands (`numeric_arg`).

pub mod arm;
pub mod calibrate;
pub mod calibrate_camera;
pub mod calibrate_tip;
pub mod calibrate_tracker;
pub mod demo;
pub mod keep_better;
pub mod numeric_arg;
pub mod progress;
pub mod record;
pub mod replay;
pub mod run;
pub mod sandbox;
pub mod scene;
pub mod simulate;
pub mod simulate_contacts;
pub mod simulate_output;
pub mod simulate_plot;
pub mod simulate_summary;
pub mod track;
