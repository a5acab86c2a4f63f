//! Numbered PNG frames in an output folder: `frame_000000.png`, `frame_000001.png`, …
//! Each file is written atomically, so an interrupted run never leaves a truncated PNG.
//! Frames written with a simulated time are listed in `frames.csv` (`frame,sim_time_s`), so
//! that a frame can be picked by the simulated instant it shows, whatever the frame rate.

use ar_io::atomic_write::write_atomic;
use image::RgbImage;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The index of frames and their simulated times, in the output folder.
pub const FRAME_TIMES_FILE: &str = "frames.csv";

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
    /// `frames.csv`, opened at the first frame with a time.
    times: Option<File>,
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
            times: None,
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

    /// Writes the next frame, showing simulated time `sim_time_s`, and lists it in
    /// [`FRAME_TIMES_FILE`] (created, replacing an older one, at the first such frame).
    pub fn write_at(
        &mut self,
        image: &RgbImage,
        sim_time_s: f64,
    ) -> Result<PathBuf, FrameWriteError> {
        let index = self.next_index;
        let path = self.write(image)?;
        let list = self.dir.join(FRAME_TIMES_FILE);
        let io = |source| FrameWriteError::Write {
            path: list.clone(),
            source,
        };
        if self.times.is_none() {
            let mut file = File::create(&list).map_err(io)?;
            file.write_all(b"frame,sim_time_s\n").map_err(io)?;
            self.times = Some(file);
        }
        if let Some(file) = &mut self.times {
            writeln!(file, "{index},{sim_time_s:.3}").map_err(io)?;
        }
        Ok(path)
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
        w.write_at(&a, 0.5).unwrap();
        w.write_at(&a, 0.54).unwrap();
        let list = std::fs::read_to_string(w.dir().join(FRAME_TIMES_FILE)).unwrap();
        assert_eq!(list, "frame,sim_time_s\n2,0.500\n3,0.540\n");
    }
}
