//! Numbered PNG frames in an output folder: `frame_000000.png`, `frame_000001.png`, …
//! Each file is written atomically, so an interrupted run never leaves a truncated PNG.

use ar_calibration::atomic_write::write_atomic;
use image::RgbImage;
use std::path::{Path, PathBuf};

/// Why a frame could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FrameWriteError {
    /// The output folder could not be created.
    #[error("cannot create output folder {path}: {source}")]
    CreateDir {
        /// The folder.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// PNG encoding failed.
    #[error("cannot encode frame {path} as PNG: {message}")]
    Encode {
        /// The file.
        path: PathBuf,
        /// The encoder's message.
        message: String,
    },
    /// Writing the file failed.
    #[error("cannot write frame {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Writes numbered PNG files into one folder.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    next_index: u64,
}

impl FrameWriter {
    /// Creates the folder if needed; numbering starts at 0.
    pub fn new(dir: &Path) -> Result<Self, FrameWriteError> {
        std::fs::create_dir_all(dir).map_err(|source| FrameWriteError::CreateDir {
            path: dir.to_owned(),
            source,
        })?;
        Ok(Self {
            dir: dir.to_owned(),
            next_index: 0,
        })
    }

    /// The folder frames go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many frames have been written.
    pub fn count(&self) -> u64 {
        self.next_index
    }

    /// The path frame `index` is written to.
    pub fn path_of(&self, index: u64) -> PathBuf {
        self.dir.join(format!("frame_{index:06}.png"))
    }

    /// Writes the next frame and returns its path.
    pub fn write(&mut self, image: &RgbImage) -> Result<PathBuf, FrameWriteError> {
        let path = self.path_of(self.next_index);
        let mut png = Vec::new();
        image
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .map_err(|e| FrameWriteError::Encode {
                path: path.clone(),
                message: e.to_string(),
            })?;
        write_atomic(&path, &png).map_err(|source| FrameWriteError::Write {
            path: path.clone(),
            source,
        })?;
        self.next_index += 1;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_numbered_and_read_back_identical() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = FrameWriter::new(&dir.path().join("out")).unwrap();
        let a = RgbImage::from_fn(4, 3, |x, y| image::Rgb([x as u8 * 10, y as u8 * 20, 7]));
        let p0 = w.write(&a).unwrap();
        let p1 = w.write(&a).unwrap();
        assert!(p0.ends_with("frame_000000.png") && p1.ends_with("frame_000001.png"));
        assert_eq!(image::open(&p1).unwrap().to_rgb8(), a);
        assert_eq!(w.count(), 2);
    }
}
