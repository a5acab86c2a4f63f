//! Opening files without following a symbolic link at the last component: a new file created
//! exclusively (a recording's files), and a regular file opened for reading under a size limit
//! (a recording read back by `replay`).
//!
//! Why no links: a folder the user records into or replays from may hold links planted by
//! someone else (a world-writable folder, a copied archive). A link followed at creation
//! overwrites the file it points to; a link followed at reading turns a recording into
//! `/dev/zero` (reads forever) or a FIFO (blocks forever). `O_NOFOLLOW` makes the open fail
//! on a link instead, and `O_NONBLOCK` makes opening a FIFO return at once, so that the kind
//! of file is checked on what was opened, not on what the path named a moment before.

use std::fs::{File, FileType, Metadata, OpenOptions};
use std::io;
use std::path::Path;

/// What a file of `kind` is, in words, for messages ("a FIFO (named pipe)").
pub fn describe_kind(kind: FileType) -> &'static str {
    if kind.is_file() {
        return "a regular file";
    }
    if kind.is_dir() {
        return "a directory";
    }
    if kind.is_symlink() {
        return "a symbolic link";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Creates `path` as a new, empty file for writing (mode 0644 before the umask): fails with
/// `AlreadyExists` when anything is at the path, a symbolic link (even a dangling one)
/// included, so nothing that was there is opened, followed or truncated.
pub fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    options.open(path).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            let what = std::fs::symlink_metadata(path)
                .map(|m| describe_kind(m.file_type()))
                .unwrap_or("something");
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{what} is already at this path: it is never overwritten"),
            )
        } else {
            e
        }
    })
}

/// Opens `path` for an output streamed as a run goes (a CSV written row by row): a new file,
/// or a regular file (not a link) this user may write, truncated only once it is known to be
/// one. A FIFO, a device, a directory or a link is refused with what it is, before anything is
/// written or truncated: a device opened with a plain create-and-truncate would be written
/// into, and a FIFO would block the run until a reader came.
pub fn create_stream(path: &Path) -> io::Result<File> {
    crate::output_target::check_replaceable(path)?;
    let mut options = OpenOptions::new();
    options.write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = options
        .open(path)
        .map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => io::Error::new(
                io::ErrorKind::InvalidInput,
                "a symbolic link, not a regular file: an output is never written through a link",
            ),
            _ => e,
        })?;
    // The path may have changed between the check and the open: decide on what was opened.
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}, not a regular file: an output is written only to a regular file or a new one",
                describe_kind(kind)
            ),
        ));
    }
    file.set_len(0)?;
    #[cfg(unix)]
    {
        // Back to blocking writes (O_NONBLOCK only kept the open from waiting on a FIFO).
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl on a descriptor this function owns, with valid flag arguments.
        unsafe {
            let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    Ok(file)
}

/// Opens `path` for reading if it is a regular file (not a link to one) of at most `limit`
/// bytes; otherwise an `InvalidInput` error saying what the path is. The check is made on
/// the opened file; a FIFO is not waited on.
pub fn open_regular(path: &Path, limit: u64) -> io::Result<(File, Metadata)> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => {
            // O_NOFOLLOW on a link fails with ELOOP: say so in words.
            if let Ok(m) = std::fs::symlink_metadata(path) {
                if m.file_type().is_symlink() {
                    return Err(not_regular(m.file_type()));
                }
            }
            return Err(e);
        }
    };
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(not_regular(meta.file_type()));
    }
    if meta.len() > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the file is {} bytes, over the limit of {limit} bytes",
                meta.len()
            ),
        ));
    }
    Ok((file, meta))
}

fn not_regular(kind: FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{}, not a regular file: only regular files are read here, never through a link",
            describe_kind(kind)
        ),
    )
}

/// Reads `path` as UTF-8 text with [`open_regular`]'s checks.
pub fn read_regular_text(path: &Path, limit: u64) -> io::Result<String> {
    use std::io::Read;
    let (file, _) = open_regular(path, limit)?;
    let mut text = String::new();
    // The file may have grown since the check: read no more than the limit allows.
    file.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the file grew over the limit of {limit} bytes while read"),
        ));
    }
    Ok(text)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn create_stream_truncates_a_regular_file_and_refuses_fifos_and_links() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.csv");
        fs::write(&file, "old rows").unwrap();
        create_stream(&file).unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"");
        create_stream(&dir.path().join("new.csv")).unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let e = create_stream(&fifo).unwrap_err();
        assert!(
            e.to_string()
                .contains("a FIFO (named pipe), not a regular file"),
            "{e}"
        );
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = create_stream(&link).unwrap_err();
        assert!(
            e.to_string()
                .contains("a symbolic link, not a regular file"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        let e = create_stream(dir.path()).unwrap_err();
        assert!(
            e.to_string().contains("a directory, not a regular file"),
            "{e}"
        );
    }

    #[test]
    fn create_new_refuses_a_file_and_a_link_and_changes_neither() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let e = create_new(&victim).unwrap_err();
        assert!(e.to_string().contains("a regular file is already"), "{e}");
        let e = create_new(&link).unwrap_err();
        assert!(e.to_string().contains("a symbolic link is already"), "{e}");
        assert!(create_new(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        create_new(&dir.path().join("new")).unwrap();
    }

    #[test]
    fn open_regular_refuses_links_fifos_devices_and_oversized_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        fs::write(&file, "1234").unwrap();
        assert_eq!(read_regular_text(&file, 4).unwrap(), "1234");
        let e = open_regular(&file, 3).unwrap_err();
        assert!(
            e.to_string().contains("4 bytes, over the limit of 3"),
            "{e}"
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = open_regular(&link, 100).unwrap_err();
        assert!(e.to_string().contains("a symbolic link"), "{e}");
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = open_regular(&fifo, 100).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = open_regular(Path::new("/dev/zero"), 100).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
    }
}
