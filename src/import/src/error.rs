//! Errors of the importers: each names the file, the line and the element that is wrong.

use std::fmt;
use std::path::PathBuf;

/// Where in an input file something is: the file and the 1-based line (0 when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file (as given, or as resolved for an included file or a mesh).
    pub file: PathBuf,
    /// 1-based line of the element's start tag; 0 when the line is not known.
    pub line: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}", self.file.display(), self.line)
        } else {
            write!(f, "{}", self.file.display())
        }
    }
}

/// Why a file could not be imported. Every variant names where.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file (or a mesh or included file) could not be read.
    #[error("{path}: cannot read: {cause}")]
    Io {
        /// The path that was tried.
        path: PathBuf,
        /// What the system said.
        #[source]
        cause: std::io::Error,
    },
    /// Malformed XML.
    #[error("{at}: malformed XML: {message}")]
    Xml {
        /// Where the parser stopped.
        at: Location,
        /// The parser's message.
        message: String,
    },
    /// A well-formed file that describes something invalid or unsupported.
    #[error("{at}: <{element}>: {message}")]
    Invalid {
        /// Where the element starts.
        at: Location,
        /// The element's tag and, where it has one, its name (`joint "elbow"`).
        element: String,
        /// What is wrong and, where there is one, the fix.
        message: String,
    },
}
