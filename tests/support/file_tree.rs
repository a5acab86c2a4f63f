//! Snapshots of a folder tree for the trust tests (included with `#[path]`): every entry's
//! kind and, for a regular file, a checksum of its bytes; for a link, its target; for a FIFO
//! or a device, its kind and device number (never opened: a FIFO would block); for a file
//! over 64 MiB (the tests' sparse oversized files), its size, inode and times. Two
//! snapshots equal mean nothing that was there was changed, replaced or removed.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Files over this size are not read but described by size, inode and times, bytes.
const BIG_BYTES: u64 = 64 << 20;

/// What is at each path under `root` (recursively, links not followed), `root` included.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    walk(root, &mut out);
    out
}

/// The snapshot of every path in `roots`.
#[allow(dead_code)]
pub fn snapshot_all(roots: &[&Path]) -> BTreeMap<PathBuf, String> {
    roots.iter().flat_map(|r| snapshot(r)).collect()
}

fn walk(path: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        out.insert(path.to_path_buf(), "missing".into());
        return;
    };
    let kind = meta.file_type();
    let entry = if kind.is_symlink() {
        format!("link -> {}", std::fs::read_link(path).unwrap().display())
    } else if kind.is_file() && meta.len() > BIG_BYTES {
        // The sparse oversized files the tests make: their size, inode and times.
        format!(
            "big file {} bytes, inode {}, mtime {}.{}, mode {:o}",
            meta.len(),
            meta.ino(),
            meta.mtime(),
            meta.mtime_nsec(),
            meta.mode()
        )
    } else if kind.is_file() {
        let bytes = std::fs::read(path).unwrap();
        let mut h = DefaultHasher::new();
        bytes.hash(&mut h);
        format!(
            "file {} bytes, checksum {:016x}, mode {:o}, uid {}",
            bytes.len(),
            h.finish(),
            meta.mode(),
            meta.uid()
        )
    } else if kind.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            walk(&e.unwrap().path(), out);
        }
        "dir".into()
    } else if kind.is_fifo() {
        "fifo".into()
    } else if kind.is_char_device() || kind.is_block_device() {
        format!("device {:x}", meta.rdev())
    } else {
        "other".into()
    };
    out.insert(path.to_path_buf(), entry);
}

/// A checksum of the bytes of the regular file `path` (for quick before/after checks).
#[allow(dead_code)]
pub fn checksum(path: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    std::fs::read(path).unwrap().hash(&mut h);
    h.finish()
}
