//! A recording's end marker, `end.toml`: written when the recorder is closed, it states the
//! step count and the byte sizes of `inputs.csv` and `solver.csv`. A recording without it
//! was not closed (the run was killed, the recording failed); one whose files are not of
//! those sizes, or whose `inputs.csv` holds another number of steps, was truncated or changed
//! after the recording. Either is refused by `replay`, so that an empty or truncated
//! recording is never reported as "identical, bit for bit". A part of a session that went on
//! in another part (after a reset or a scene switch, format 3) names that part
//! (`next_part = "part2"`), so a session whose later part is missing is refused too.

use std::io::Write as _;
use std::path::Path;

use ar_io::safe_open::create_new;
use serde::{Deserialize, Serialize};

use super::session_log::{io_error, read_toml, SessionError, INPUTS_FILE, SOLVER_FILE};

/// The end marker's file name.
pub const END_FILE: &str = "end.toml";

/// What a closed recording states about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionEnd {
    /// Steps recorded: the rows of `inputs.csv` and of `solver.csv` after its header.
    pub steps: u64,
    /// The size of `inputs.csv`, bytes.
    pub inputs_bytes: u64,
    /// The size of `solver.csv`, bytes.
    pub solver_bytes: u64,
    /// The folder (in the session's folder) of the part the session went on in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_part: Option<String>,
}

impl SessionEnd {
    /// Writes `dir/end.toml`, exclusively (never over anything at the path).
    pub fn write(&self, dir: &Path) -> Result<(), SessionError> {
        let path = dir.join(END_FILE);
        let text = toml::to_string(self).map_err(|e| SessionError::Bad {
            path: path.clone(),
            line: None,
            message: e.to_string(),
        })?;
        let mut file = create_new(&path).map_err(io_error(&path))?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io_error(&path))
    }

    /// Reads `dir/end.toml`; a missing one is refused with what that means, and so is a
    /// session of no step (a `first_part` of no step that no other part follows; a later
    /// part may have none, when the scene was reloaded again before its first step).
    pub fn read(dir: &Path, first_part: bool) -> Result<Self, SessionError> {
        let path = dir.join(END_FILE);
        if let Err(e) = std::fs::symlink_metadata(&path) {
            if e.kind() == std::io::ErrorKind::NotFound {
                return Err(SessionError::Bad {
                    path,
                    line: None,
                    message: "missing: the recording was never closed (the run was killed or \
                              its recording failed), so a truncated recording cannot be told \
                              from a whole one; nothing was replayed"
                        .into(),
                });
            }
        }
        let end: Self = read_toml(&path)?;
        if end.steps == 0 && first_part && end.next_part.is_none() {
            return Err(SessionError::Bad {
                path,
                line: None,
                message: "steps = 0: the recording holds no step, there is nothing to replay"
                    .into(),
            });
        }
        Ok(end)
    }

    /// Checks that the recording's CSV file `name` is `actual` bytes long as stated.
    pub fn check_size(&self, dir: &Path, name: &str, actual: u64) -> Result<(), SessionError> {
        let stated = match name {
            INPUTS_FILE => self.inputs_bytes,
            SOLVER_FILE => self.solver_bytes,
            _ => return Ok(()),
        };
        if actual == stated {
            return Ok(());
        }
        Err(SessionError::Bad {
            path: dir.join(name),
            line: None,
            message: format!(
                "{actual} bytes, but {END_FILE} states {stated} bytes: the file was truncated \
                 or changed after the recording; nothing was replayed"
            ),
        })
    }
}
