//! Writes frames to an MJPG AVI with OpenCV's `VideoWriter` (readable back by
//! [`super::OpenCvCamera`] on any OpenCV build, since MJPG needs no external codec).

use super::{cv_ctx, CameraError};
use opencv::core::{Mat, Size};
use opencv::prelude::*;
use opencv::videoio;
use std::path::{Path, PathBuf};

/// An open MJPG AVI being written; finished when dropped or on [`VideoRecorder::finish`].
pub struct VideoRecorder {
    writer: videoio::VideoWriter,
    path: PathBuf,
    size: Size,
    frames: u64,
}

impl std::fmt::Debug for VideoRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoRecorder")
            .field("path", &self.path)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl VideoRecorder {
    /// Creates `path` for `width`×`height` BGR frames at `fps`.
    pub fn create(path: &Path, width: u32, height: u32, fps: f64) -> Result<Self, CameraError> {
        let bad = |problem: String| CameraError::VideoWrite {
            path: path.to_owned(),
            problem,
        };
        let fourcc = cv_ctx(videoio::VideoWriter::fourcc('M', 'J', 'P', 'G'), "fourcc")?;
        let size = Size::new(width as i32, height as i32);
        let mut writer =
            videoio::VideoWriter::new(path.to_string_lossy().as_ref(), fourcc, fps, size, true)
                .map_err(|e| bad(e.message))?;
        if !writer.is_opened().unwrap_or(false) {
            return Err(bad(
                "OpenCV could not open it for writing (folder missing or not writable?)".into(),
            ));
        }
        // The highest JPEG quality keeps compression artefacts well below the tracker's noise.
        let _ = writer.set(videoio::VIDEOWRITER_PROP_QUALITY, 100.0);
        Ok(Self {
            writer,
            path: path.to_owned(),
            size,
            frames: 0,
        })
    }

    /// Appends one BGR8 frame of the size given at creation.
    pub fn write(&mut self, image: &Mat) -> Result<(), CameraError> {
        if image.size().ok() != Some(self.size) {
            return Err(CameraError::VideoWrite {
                path: self.path.clone(),
                problem: format!(
                    "frame is {}x{}, the video is {}x{}",
                    image.cols(),
                    image.rows(),
                    self.size.width,
                    self.size.height
                ),
            });
        }
        cv_ctx(self.writer.write(image), "writing a video frame")?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Closes the file (also done on drop).
    pub fn finish(mut self) -> Result<(), CameraError> {
        cv_ctx(self.writer.release(), "closing the video")
    }
}
