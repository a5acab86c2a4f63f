//! Atomic, safe file writes: a temporary file created exclusively beside the target, synced,
//! then renamed over it, if the target is a file an output may replace
//! ([`crate::output_target`]).
//!
//! A calibration that is interrupted (Ctrl-C, crash, full disk) must leave either the old
//! file or the new one, never half of one. The temporary file comes from
//! [`tempfile::NamedTempFile::new_in`]: a random name opened with `O_CREAT | O_EXCL` (and
//! mode 0600), so nothing planted in the folder beforehand (a symlink at a predictable
//! name, another process's file) can be opened or followed in its place.

use std::fs::File;
use std::io;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::output_target::{check_replaceable, folder_problem, output_folder};

/// Writes `contents` to `path` atomically (exclusive same-directory temporary file + rename).
/// The target must be missing or a regular file this user could open for writing
/// ([`check_replaceable`]): a FIFO, a device, a link or another user's read-only file is
/// refused before anything is written. On any error the target is untouched and the
/// temporary file is removed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents)?;
    file.commit()
}

/// Why no file could be created in `dir`, in words: the folder is missing, is not a folder
/// ([`folder_problem`]), or refuses (tempfile's own message names its random temporary name,
/// which means nothing to the user).
fn folder_error(dir: &Path, e: &io::Error) -> io::Error {
    folder_problem(dir).unwrap_or_else(|| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot create a file in the folder {}: {}",
                dir.display(),
                io::Error::from(e.kind())
            ),
        )
    })
}

/// A file written in full before it replaces its target: the rows go to an exclusive
/// temporary file beside the target, and [`Self::commit`] renames it over the target (checked
/// again then). Dropped without a commit, the temporary file is removed and the target stays.
pub struct AtomicFile {
    target: PathBuf,
    tmp: tempfile::NamedTempFile,
}

impl AtomicFile {
    /// Checks that `path` may be replaced and creates the temporary file beside it.
    pub fn create(path: &Path) -> io::Result<Self> {
        let existing = check_replaceable(path)?;
        let dir = output_folder(path);
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.to_string_lossy()))
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| folder_error(dir, &e))?;
        // The temporary file is created 0600; give the result the old file's permissions, or
        // the usual 0644 for a new file, as a plain `File::create` under umask 022 would.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let permissions = match existing {
                Some(m) => m.permissions(),
                None => std::fs::Permissions::from_mode(0o644),
            };
            tmp.as_file().set_permissions(permissions)?;
        }
        #[cfg(not(unix))]
        let _ = existing;
        Ok(Self {
            target: path.to_path_buf(),
            tmp,
        })
    }

    /// The temporary file (e.g. to clone its handle for a buffered writer, or to read it back).
    pub fn file(&self) -> &File {
        self.tmp.as_file()
    }

    /// Syncs the temporary file and renames it over the target, if the target may still be
    /// replaced.
    pub fn commit(self) -> io::Result<()> {
        self.tmp.as_file().sync_all()?;
        check_replaceable(&self.target)?;
        self.tmp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn replaces_existing_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cal.toml");
        fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_directory_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/cal.toml");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(!p.exists());
    }

    /// Issue 20 item 4: the old writer opened `.NAME.tmp-PID` with `File::create`, so a
    /// symlink planted there redirected the write into any file the user could write.
    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_old_temporary_path_cannot_redirect_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        let target = dir.path().join("cal.toml");
        let planted = dir
            .path()
            .join(format!(".cal.toml.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        // The planted link is still a link to the victim, untouched.
        assert_eq!(fs::read_link(&planted).unwrap(), victim);
        // Nothing else was left behind: target, victim, the planted link.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    /// Symlinks planted at names of the new pattern are never opened: each write picks a
    /// fresh random name and creates it exclusively.
    #[cfg(unix)]
    #[test]
    fn symlinks_planted_beside_the_target_are_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        fs::write(&victim, "precious").unwrap();
        // Write many times; each picks a fresh random name, never one that exists.
        for i in 0..50 {
            let link = dir.path().join(format!(".cal.toml.link{i}.tmp"));
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            write_atomic(&dir.path().join("cal.toml"), b"new").unwrap();
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    }

    /// Issue 45: the rename turned a FIFO (or a device) at the target into a regular file.
    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_target_is_refused_and_stays() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("cal.toml");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        let e = write_atomic(&fifo, b"new").unwrap_err();
        assert!(e.to_string().contains("a FIFO (named pipe)"), "{e}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A file written in pieces replaces the target only at the commit.
    #[test]
    fn an_atomic_file_replaces_the_target_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log.csv");
        fs::write(&p, "old").unwrap();
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        f.commit().unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"dropped").unwrap();
        drop(f);
        assert_eq!(fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
