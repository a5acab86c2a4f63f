//! Reading an input file (scene, rig config, calibration, camera, CSV) safely: only a regular
//! file is read, and only up to a size limit checked before reading, so that a FIFO, a device
//! such as `/dev/zero` or a runaway file gives a clear error instead of a hang or an
//! out-of-memory abort.

use std::io;
use std::io::Read;
use std::path::Path;

/// The largest input file read, bytes (64 MiB): far beyond any scene, config, calibration or
/// recorded CSV the project writes, far below what would strain memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text with [`MAX_INPUT_BYTES`] as the limit.
pub fn read_text(path: &Path) -> io::Result<String> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// Reads `path` as UTF-8 text if it is a regular file (symlinks to one are followed) of at
/// most `limit` bytes; otherwise an `InvalidInput` error that says what the path is.
pub fn read_text_limited(path: &Path, limit: u64) -> io::Result<String> {
    check(&std::fs::metadata(path)?, limit)?;
    let file = std::fs::File::open(path)?;
    // The path may have changed between the check and the open: check what was opened.
    check(&file.metadata()?, limit)?;
    let mut text = String::new();
    file.take(limit + 1).read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(too_large(text.len() as u64, limit));
    }
    Ok(text)
}

/// Reads `path` as bytes if it is a regular file (symlinks to one are followed) of at most
/// `limit` bytes (a binary input such as a mesh); otherwise an `InvalidInput` error that says
/// what the path is.
pub fn read_bytes_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    check(&std::fs::metadata(path)?, limit)?;
    let file = std::fs::File::open(path)?;
    check(&file.metadata()?, limit)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64, limit));
    }
    Ok(bytes)
}

fn too_large(len: u64, limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("the file is {len} bytes, over the limit of {limit} bytes"),
    )
}

fn check(meta: &std::fs::Metadata, limit: u64) -> io::Result<()> {
    let kind = meta.file_type();
    if !kind.is_file() {
        let what = if kind.is_dir() {
            "a directory"
        } else {
            #[cfg(unix)]
            {
                use std::os::unix::fs::FileTypeExt;
                if kind.is_fifo() {
                    "a FIFO (named pipe)"
                } else if kind.is_char_device() || kind.is_block_device() {
                    "a device"
                } else if kind.is_socket() {
                    "a socket"
                } else {
                    "not a regular file"
                }
            }
            #[cfg(not(unix))]
            "not a regular file"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}, not a regular file: only regular files are read"),
        ));
    }
    if meta.len() > limit {
        return Err(too_large(meta.len(), limit));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.toml");
        std::fs::write(&p, "x = 1\n").unwrap();
        assert_eq!(read_text(&p).unwrap(), "x = 1\n");
    }

    #[test]
    fn bytes_are_read_up_to_the_limit_and_refused_beyond_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.stl");
        std::fs::write(&p, [0u8, 255, 7, 0]).unwrap();
        assert_eq!(read_bytes_limited(&p, 4).unwrap(), vec![0, 255, 7, 0]);
        let err = read_bytes_limited(&p, 3).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(
            err.to_string().contains("4 bytes, over the limit of 3"),
            "{err}"
        );
        let err = read_bytes_limited(Path::new("/dev/zero"), 4).unwrap_err();
        assert!(err.to_string().contains("a device"), "{err}");
    }

    #[test]
    fn dev_zero_and_a_directory_are_refused_without_reading() {
        let err = read_text(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("a device"), "{err}");
        let err = read_text(Path::new("/")).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .unwrap();
        assert!(status.success());
        let err = read_text(&p).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    #[test]
    fn a_file_over_the_limit_is_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("big");
        std::fs::write(&p, vec![b'#'; 101]).unwrap();
        let err = read_text_limited(&p, 100).unwrap_err();
        assert!(
            err.to_string().contains("101 bytes, over the limit of 100"),
            "{err}"
        );
        assert_eq!(read_text_limited(&p, 101).unwrap().len(), 101);
    }
}
