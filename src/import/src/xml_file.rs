//! The XML file both readers start from: read as text within the workspace's input limits
//! (a regular file, at most `ar_io::input_file::MAX_INPUT_BYTES`, so a FIFO or a device is
//! refused instead of hanging the import) and parsed with line numbers for every message.

use std::path::Path;

use roxmltree::Document;

use crate::error::{ImportError, Location};

/// The text of the model file at `path`.
pub(crate) fn read_text(path: &Path) -> Result<String, ImportError> {
    ar_io::input_file::read_text(path).map_err(|cause| ImportError::Io {
        path: path.to_owned(),
        cause,
    })
}

/// `text` parsed as XML; malformed XML names `path` and the line where parsing stopped.
pub(crate) fn parse<'t>(text: &'t str, path: &Path) -> Result<Document<'t>, ImportError> {
    Document::parse(text).map_err(|e| ImportError::Xml {
        at: Location {
            file: path.to_owned(),
            line: e.pos().row,
        },
        message: e.to_string(),
    })
}
