//! ar-io: the file input and output every crate of the workspace shares, and nothing else
//! (a leaf: it depends on no crate of the project).
//!
//! - [`csv_table`], [`csv_write`]: the one CSV reader and writer of the workspace.
//! - [`input_file`]: reads only regular files, under a size limit checked before reading.
//! - [`atomic_write`]: writes a file so that an interrupted run never leaves half of it.
//! - [`toml_location`]: the line of a byte offset, for TOML error messages.

pub mod atomic_write;
pub mod csv_table;
pub mod csv_write;
pub mod input_file;
pub mod toml_location;
