//! ar-io: the file input and output every crate of the workspace shares, and nothing else
//! (a leaf: it depends on no crate of the project).
//!
//! - [`csv_table`], [`csv_write`]: the one CSV reader and writer of the workspace.
//! - [`input_file`]: reads only regular files, under a size limit checked before reading.
//! - [`atomic_write`]: writes a file so that an interrupted run never leaves half of it.
//! - [`output_target`]: what an output may replace; outputs that are inputs or share a path.
//! - [`safe_open`]: exclusive creation and regular-file reads that never follow a link.
//! - [`toml_location`]: the line of a byte offset, for TOML error messages.

pub mod atomic_write;
pub mod csv_table;
pub mod csv_write;
pub mod input_file;
pub mod output_target;
pub mod safe_open;
pub mod toml_location;
