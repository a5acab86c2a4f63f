//! A recorded source (a video file or an image folder) played like a live camera: each frame
//! is delivered at its own time after the first (the source's timestamps; an image folder's
//! nominal 30 fps), stamped with that time, and the recording starts over when
//! it ends, so that `run` can use a recording of the desk in place of the camera for as long
//! as the session lasts.

use std::time::{Duration, Instant};

use super::{CameraError, CameraSource, Frame};

/// Opens the recording from its start (again at every pass).
pub type Opener = Box<dyn FnMut() -> Result<Box<dyn CameraSource>, CameraError> + Send>;

/// A recording played at its own rate, looping (see the module docs).
pub struct LiveReplay {
    open: Opener,
    source: Box<dyn CameraSource>,
    /// When this pass's first frame was (or is to be) delivered, and its source timestamp.
    pass_start: Option<(Instant, Instant)>,
    /// When the next pass is to start: the last frame's delivery plus one frame interval.
    next_pass_at: Option<Instant>,
    /// Delivery time of the last frame and the mean interval of this pass so far.
    last_due: Option<Instant>,
    frames_in_pass: u64,
    seq: u64,
    passes: u64,
}

impl std::fmt::Debug for LiveReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveReplay")
            .field("source", &self.source.describe())
            .field("seq", &self.seq)
            .field("passes", &self.passes)
            .finish_non_exhaustive()
    }
}

impl LiveReplay {
    /// Opens the recording with `open` (called again at the start of every pass).
    pub fn new(mut open: Opener) -> Result<Self, CameraError> {
        let source = open()?;
        Ok(Self {
            open,
            source,
            pass_start: None,
            next_pass_at: None,
            last_due: None,
            frames_in_pass: 0,
            seq: 0,
            passes: 1,
        })
    }

    /// Passes started so far (1 during the first).
    pub fn passes(&self) -> u64 {
        self.passes
    }
}

impl CameraSource for LiveReplay {
    fn next_frame(&mut self) -> Result<Option<Frame>, CameraError> {
        loop {
            let Some(mut frame) = self.source.next_frame()? else {
                if self.frames_in_pass == 0 {
                    // An empty recording would loop forever without a frame.
                    return Ok(None);
                }
                let interval = match (self.pass_start, self.last_due) {
                    (Some((start, _)), Some(last)) if self.frames_in_pass > 1 => {
                        (last - start) / (self.frames_in_pass - 1) as u32
                    }
                    _ => Duration::from_millis(33),
                };
                self.next_pass_at = self.last_due.map(|t| t + interval);
                self.source = (self.open)()?;
                self.pass_start = None;
                self.frames_in_pass = 0;
                self.passes += 1;
                continue;
            };
            let (start, first_t) = *self
                .pass_start
                .get_or_insert_with(|| (self.next_pass_at.unwrap_or_else(Instant::now), frame.t));
            let due = start + frame.t.saturating_duration_since(first_t);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            frame.t = due;
            frame.seq = self.seq;
            self.seq += 1;
            self.frames_in_pass += 1;
            self.last_due = Some(due);
            return Ok(Some(frame));
        }
    }

    fn describe(&self) -> String {
        format!(
            "{} (played at its own rate, looping)",
            self.source.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Mat, Scalar, CV_8UC3};

    /// A recording of `n` frames at `fps`, stamped from its own start.
    struct Recording {
        n: u64,
        fps: f64,
        seq: u64,
        start: Instant,
    }

    impl CameraSource for Recording {
        fn next_frame(&mut self) -> Result<Option<Frame>, CameraError> {
            if self.seq == self.n {
                return Ok(None);
            }
            let image = Mat::new_rows_cols_with_default(2, 2, CV_8UC3, Scalar::all(0.0)).unwrap();
            let t = self.start + Duration::from_secs_f64(self.seq as f64 / self.fps);
            self.seq += 1;
            Ok(Some(Frame {
                t,
                seq: self.seq - 1,
                image,
                camera_from_world_truth: None,
            }))
        }

        fn describe(&self) -> String {
            format!("{} frames", self.n)
        }
    }

    fn recording(n: u64, fps: f64) -> Opener {
        Box::new(move || {
            Ok(Box::new(Recording {
                n,
                fps,
                seq: 0,
                start: Instant::now(),
            }) as Box<dyn CameraSource>)
        })
    }

    #[test]
    fn frames_come_at_the_recording_rate_and_the_recording_loops() {
        let mut live = LiveReplay::new(recording(5, 100.0)).unwrap();
        let t0 = Instant::now();
        let frames: Vec<Frame> = (0..12)
            .map(|_| live.next_frame().unwrap().unwrap())
            .collect();
        let elapsed = t0.elapsed();
        // 12 frames at 100 fps: 11 intervals of 10 ms, across two restarts.
        assert!(elapsed >= Duration::from_millis(110), "{elapsed:?}");
        assert_eq!(live.passes(), 3);
        for (i, pair) in frames.windows(2).enumerate() {
            assert_eq!(pair[1].seq, pair[0].seq + 1);
            let gap = pair[1].t - pair[0].t;
            assert!(
                gap.abs_diff(Duration::from_millis(10)) < Duration::from_micros(1),
                "frame {i}: {gap:?} after the one before"
            );
        }
    }

    #[test]
    fn an_empty_recording_ends_instead_of_looping() {
        let mut live = LiveReplay::new(recording(0, 30.0)).unwrap();
        assert!(live.next_frame().unwrap().is_none());
    }
}
