//! Atomic, safe file writes: a temporary file created exclusively beside the target, synced,
//! then renamed over it.
//!
//! A calibration that is interrupted (Ctrl-C, crash, full disk) must leave either the old
//! file or the new one, never half of one. The temporary file comes from
//! [`tempfile::NamedTempFile::new_in`]: a random name opened with `O_CREAT | O_EXCL` (and
//! mode 0600), so nothing planted in the folder beforehand (a symlink at a predictable
//! name, another process's file) can be opened or followed in its place.

use std::io;
use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` atomically (exclusive same-directory temporary file + rename).
/// On any error the target is untouched and the temporary file is removed.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    // The temporary file is created 0600; give the result the old file's permissions, or
    // the usual 0644 for a new file, as a plain `File::create` under umask 022 would.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = match std::fs::metadata(path) {
            Ok(m) if m.is_file() => m.permissions(),
            _ => std::fs::Permissions::from_mode(0o644),
        };
        tmp.as_file().set_permissions(permissions)?;
    }
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
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
}
