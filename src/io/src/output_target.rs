//! What an output may replace, and which outputs name the same file as an input or as each
//! other; checked before anything is written.
//!
//! An output is written beside its target and renamed over it ([`crate::atomic_write`]). A
//! rename replaces whatever is at the path: a FIFO or a device becomes a regular file (run as
//! root at a device path, a device of the machine was replaced), and in a folder the user may
//! write, a file of another user that the user could not have opened for writing is replaced
//! all the same. So an output replaces only a regular file the user could open for writing,
//! or creates a new one. And a run whose output is one of its inputs (`--csv` naming the
//! scene file), or whose two outputs share a path, is refused before anything is written.

use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::safe_open::describe_kind;

/// Checks that `path` may be replaced by an output: nothing is there (`Ok(None)`), or a
/// regular file (not a link) that this user can open for writing (`Ok(Some(its metadata))`).
/// Otherwise an error saying what is there and why it is not replaced. Opening for writing
/// (without truncating) changes nothing in the file.
pub fn check_replaceable(path: &Path) -> io::Result<Option<Metadata>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if !kind.is_file() {
        let advice = if kind.is_symlink() {
            "an output never replaces a link (give the path of the file itself)"
        } else {
            "an output replaces only a regular file, or creates a new one"
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}, not a regular file: {advice}", describe_kind(kind)),
        ));
    }
    check_writable(path, &meta)?;
    Ok(Some(meta))
}

/// [`check_replaceable`], and the folder the output goes in exists: checked before a long
/// run, so that its last output (a plot drawn at the end) does not fail after the run.
pub fn check_output_path(path: &Path) -> io::Result<()> {
    check_replaceable(path)?;
    match folder_problem(output_folder(path)) {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// The folder an output at `path` is written in (`.` for a bare file name).
pub fn output_folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Why `dir` cannot take an output, in words, if it is missing or not a folder.
pub fn folder_problem(dir: &Path) -> Option<io::Error> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => None,
        Ok(_) => Some(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a folder", dir.display()),
        )),
        Err(_) => Some(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the folder {} does not exist", dir.display()),
        )),
    }
}

/// Opens the regular file at `path` for writing, without following a link or waiting on a
/// FIFO, and checks that it is the file `meta` described.
#[cfg(unix)]
fn check_writable(path: &Path, meta: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "a file this user may not open for writing (permission denied): an output \
                 never replaces a file its user could not write",
            ))
        }
        Err(e) => return Err(e),
    };
    let now = file.metadata()?;
    if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) || !now.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the file changed while it was checked: not replaced",
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_writable(_path: &Path, meta: &Metadata) -> io::Result<()> {
    if meta.permissions().readonly() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a read-only file: an output never replaces a file its user could not write",
        ));
    }
    Ok(())
}

/// A path of a run, with the flag (or role) that named it, e.g. `("--csv", "out.csv")`.
pub type NamedPath<'a> = (&'a str, &'a Path);

/// Two paths of a run name the same file.
#[derive(Debug, Error, PartialEq)]
pub enum SamePathError {
    /// An output is one of the run's inputs.
    #[error(
        "{output} {} is the same file as the {input} {}: an output never replaces one of \
         the run's inputs; nothing was written",
        output_path.display(), input_path.display()
    )]
    OutputIsInput {
        /// The output's flag.
        output: String,
        /// The output's path.
        output_path: PathBuf,
        /// The input's role or flag.
        input: String,
        /// The input's path.
        input_path: PathBuf,
    },
    /// Two outputs name one file.
    #[error(
        "{first} {} and {second} {} are the same file: each output needs its own; nothing \
         was written",
        first_path.display(), second_path.display()
    )]
    SharedOutput {
        /// The first output's flag.
        first: String,
        /// Its path.
        first_path: PathBuf,
        /// The second output's flag.
        second: String,
        /// Its path.
        second_path: PathBuf,
    },
}

/// What makes two paths the same file: the device and inode of an existing file (links
/// followed, so a link to an input is that input), or, for a file not there yet, its folder's
/// canonical path and its name.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    #[cfg(unix)]
    Inode(u64, u64),
    Path(PathBuf),
}

fn identity(path: &Path) -> Identity {
    if let Some(id) = inode(path) {
        return id;
    }
    let folder = output_folder(path);
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    Identity::Path(
        folder
            .canonicalize()
            .map_or_else(|_| path.to_path_buf(), |f| f.join(name)),
    )
}

#[cfg(unix)]
fn inode(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    Some(Identity::Inode(meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode(path: &Path) -> Option<Identity> {
    let path = path.canonicalize().ok()?;
    Some(Identity::Path(path))
}

/// Refuses a run whose output is one of its `inputs` or whose two `outputs` share a file.
pub fn check_distinct(inputs: &[NamedPath], outputs: &[NamedPath]) -> Result<(), SamePathError> {
    let input_ids: Vec<Identity> = inputs.iter().map(|(_, p)| identity(p)).collect();
    let output_ids: Vec<Identity> = outputs.iter().map(|(_, p)| identity(p)).collect();
    for (k, (output, output_path)) in outputs.iter().enumerate() {
        if let Some(i) = input_ids.iter().position(|id| *id == output_ids[k]) {
            return Err(SamePathError::OutputIsInput {
                output: output.to_string(),
                output_path: output_path.to_path_buf(),
                input: inputs[i].0.to_string(),
                input_path: inputs[i].1.to_path_buf(),
            });
        }
        if let Some(j) = output_ids[..k].iter().position(|id| *id == output_ids[k]) {
            return Err(SamePathError::SharedOutput {
                first: outputs[j].0.to_string(),
                first_path: outputs[j].1.to_path_buf(),
                second: output.to_string(),
                second_path: output_path.to_path_buf(),
            });
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_missing_or_writable_regular_file_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        assert!(check_replaceable(&p).unwrap().is_none());
        fs::write(&p, "old").unwrap();
        assert!(check_replaceable(&p).unwrap().is_some());
    }

    #[test]
    fn a_fifo_a_link_and_a_directory_are_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let e = check_replaceable(&fifo).unwrap_err().to_string();
        assert!(e.contains("a FIFO (named pipe), not a regular file"), "{e}");
        let link = dir.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let e = check_replaceable(&link).unwrap_err().to_string();
        assert!(e.contains("a symbolic link") && e.contains("never replaces a link"));
        let e = check_replaceable(dir.path()).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
    }

    #[test]
    fn an_output_that_is_an_input_or_another_output_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        fs::write(&scene, "x").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&scene, &link).unwrap();
        let dotted = dir.path().join(".").join("scene.toml");
        for out in [&scene, &link, &dotted] {
            let e = check_distinct(&[("scene", &scene)], &[("--csv", out)]).unwrap_err();
            assert!(matches!(e, SamePathError::OutputIsInput { .. }), "{e}");
        }
        let new = dir.path().join("new.csv");
        let new_again = dir.path().join("sub/../new.csv");
        fs::create_dir(dir.path().join("sub")).unwrap();
        let e = check_distinct(&[], &[("--csv", &new), ("--poses", &new_again)]).unwrap_err();
        assert!(e.to_string().starts_with("--csv "), "{e}");
        assert!(e.to_string().contains("are the same file"), "{e}");
        let other = dir.path().join("other.csv");
        check_distinct(
            &[("scene", &scene)],
            &[("--csv", &new), ("--poses", &other)],
        )
        .unwrap();
    }
}
