//! The synthetic camera: the printed marker on a wooden desk, seen along a [`CameraPath`]
//! through a calibrated lens, with optical blur and seeded sensor noise.
//!
//! Frame `seq` shows the pose at `t = seq / fps` seconds of path time; the same intrinsics,
//! config and seed give bit-identical images. With [`Pacing::RealTime`] `next_frame` sleeps
//! until the frame's time (a live camera stand-in for the rig) and, when rendering cannot keep
//! up, skips to the present frame as a live sensor would (`seq` jumps); with
//! [`Pacing::AsFastAsPossible`] it renders every frame back to back (tests, accuracy runs,
//! recordings).

use super::path::CameraPath;
use super::printed::{CardTexture, MarkerSheet};
use super::render::{desk_texture, PlaneRenderer};
use super::{cv_ctx, CameraError, CameraSource, Frame};
use ar_calibration::intrinsics::CameraIntrinsics;
use opencv::core::{Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;
use std::time::{Duration, Instant};

/// Whether the synthetic camera keeps to its frame rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// Deliver each frame at its time (sleeps), like a live camera.
    RealTime,
    /// Deliver frames as fast as they render.
    AsFastAsPossible,
}

/// How the synthetic camera moves and how its images are degraded.
#[derive(Debug, Clone)]
pub struct SyntheticConfig {
    /// The camera's trajectory.
    pub path: CameraPath,
    /// Frame rate, frames per second (also sets the path time between frames).
    pub fps: f64,
    /// Real-time or as fast as possible.
    pub pacing: Pacing,
    /// Stop after this many frames (`None`: endless).
    pub frames: Option<u64>,
    /// Side of the printed marker's black square, metres.
    pub marker_length_m: f64,
    /// Standard deviation of the Gaussian optical blur, output pixels (0 = none).
    pub blur_sigma_px: f64,
    /// Standard deviation of the additive sensor noise per channel, 8-bit levels (0 = none).
    pub noise_sigma_levels: f64,
    /// Rays per output pixel along each axis (anti-aliasing), 1..=4.
    pub supersample: u32,
    /// Replaces the printed marker sheet (e.g. a calibration board); `None`: the marker.
    pub card: Option<CardTexture>,
}

impl Default for SyntheticConfig {
    /// The hand-held wander of the acceptance envelope at 30 fps, as fast as possible, 80 mm
    /// marker, 0.6 px blur and 2 levels of noise.
    fn default() -> Self {
        Self {
            path: CameraPath::hand_held(1),
            fps: 30.0,
            pacing: Pacing::AsFastAsPossible,
            frames: None,
            marker_length_m: super::printed::PRINTED_MARKER_SIDE_M,
            blur_sigma_px: 0.6,
            noise_sigma_levels: 2.0,
            supersample: 2,
            card: None,
        }
    }
}

/// A complete simulated camera; see the module docs.
pub struct SyntheticCamera {
    config: SyntheticConfig,
    renderer: PlaneRenderer,
    /// OpenCV's generator (multiply-with-carry, seeded): native speed, same sequence on every
    /// platform.
    rng: opencv::core::RNG,
    noise: Mat,
    /// The last pose's blurred image before noise: a camera standing still renders it once.
    clean: Option<(nalgebra::Isometry3<f64>, Mat)>,
    seq: u64,
    start: Instant,
}

impl std::fmt::Debug for SyntheticCamera {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyntheticCamera")
            .field("config", &self.config)
            .field("seq", &self.seq)
            .finish_non_exhaustive()
    }
}

impl SyntheticCamera {
    /// A synthetic camera with `intrinsics`, moving and degrading as `config` says; `seed`
    /// drives the desk texture and the sensor noise (the path has its own seed).
    pub fn new(
        intrinsics: &CameraIntrinsics,
        config: SyntheticConfig,
        seed: u64,
    ) -> Result<Self, CameraError> {
        if !(config.fps.is_finite() && config.fps > 0.0) {
            return Err(CameraError::SyntheticConfig(format!(
                "fps must be positive, got {}",
                config.fps
            )));
        }
        if !(config.marker_length_m.is_finite() && config.marker_length_m > 0.0) {
            return Err(CameraError::SyntheticConfig(format!(
                "marker length must be positive metres, got {}",
                config.marker_length_m
            )));
        }
        if !(config.noise_sigma_levels >= 0.0 && config.blur_sigma_px >= 0.0) {
            return Err(CameraError::SyntheticConfig(
                "blur and noise must be non-negative".into(),
            ));
        }
        let card = match &config.card {
            Some(c) => c.clone(),
            None => MarkerSheet::printed()?.card(config.marker_length_m),
        };
        let desk = desk_texture(seed ^ 0x5eed_de5c)?;
        let renderer = PlaneRenderer::new(intrinsics, &desk, &card, config.supersample)?;
        Ok(Self {
            config,
            renderer,
            // MWC generators must not start from 0.
            rng: cv_ctx(
                opencv::core::RNG::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
                "seeding",
            )?,
            noise: Mat::default(),
            clean: None,
            seq: 0,
            start: Instant::now(),
        })
    }

    /// The camera's intrinsics.
    pub fn intrinsics(&self) -> &CameraIntrinsics {
        self.renderer.intrinsics()
    }

    /// Renders the frame at path time `t_secs` without advancing the stream (blur and noise
    /// included; the noise continues the stream's random sequence).
    pub fn render_at(
        &mut self,
        t_secs: f64,
    ) -> Result<(Mat, nalgebra::Isometry3<f64>), CameraError> {
        let camera_from_world = self.config.path.camera_from_world(t_secs);
        let img = self.render_pose(&camera_from_world)?;
        Ok((img, camera_from_world))
    }

    /// Renders the view from an arbitrary `camera_from_world` (blur and noise included), e.g.
    /// calibration-board views at chosen poses.
    pub fn render_pose(
        &mut self,
        camera_from_world: &nalgebra::Isometry3<f64>,
    ) -> Result<Mat, CameraError> {
        // A camera that stands still (the demo's) sees the same clean image every frame: it
        // is rendered once and only the noise is drawn anew. Rendering with 2×2 rays per
        // pixel and blurring took most of the camera thread's time, and on a loaded machine
        // made the demo's camera fall to 6 frames per second.
        let cached = matches!(&self.clean, Some((pose, _)) if pose == camera_from_world);
        if !cached {
            let img = self.render_clean(camera_from_world)?;
            self.clean = Some((*camera_from_world, img));
        }
        let Some((_, clean)) = &self.clean else {
            unreachable!("set above")
        };
        if self.config.noise_sigma_levels > 0.0 {
            self.noise = cv_ctx(
                Mat::new_rows_cols_with_default(
                    clean.rows(),
                    clean.cols(),
                    opencv::core::CV_16SC3,
                    opencv::core::Scalar::all(0.0),
                ),
                "allocating noise",
            )?;
            cv_ctx(
                self.rng.fill(
                    &mut self.noise,
                    opencv::core::RNG_NORMAL,
                    &opencv::core::Scalar::all(0.0),
                    &opencv::core::Scalar::all(self.config.noise_sigma_levels),
                    false,
                ),
                "drawing noise",
            )?;
            let mut noisy = Mat::default();
            cv_ctx(
                opencv::core::add(
                    clean,
                    &self.noise,
                    &mut noisy,
                    &opencv::core::no_array(),
                    opencv::core::CV_8U,
                ),
                "adding noise",
            )?;
            Ok(noisy)
        } else {
            cv_ctx(clean.try_clone(), "copying the image")
        }
    }

    /// The view from `camera_from_world` with the optical blur, before the sensor noise.
    fn render_clean(
        &mut self,
        camera_from_world: &nalgebra::Isometry3<f64>,
    ) -> Result<Mat, CameraError> {
        let clean = self.renderer.render(camera_from_world)?;
        Ok(if self.config.blur_sigma_px > 0.0 {
            let mut b = Mat::default();
            cv_ctx(
                imgproc::gaussian_blur(
                    &clean,
                    &mut b,
                    Size::new(0, 0),
                    self.config.blur_sigma_px,
                    self.config.blur_sigma_px,
                    opencv::core::BORDER_REFLECT,
                ),
                "blurring",
            )?;
            b
        } else {
            clean
        })
    }
}

impl CameraSource for SyntheticCamera {
    fn next_frame(&mut self) -> Result<Option<Frame>, CameraError> {
        if self.config.frames.is_some_and(|n| self.seq >= n) {
            return Ok(None);
        }
        if self.config.pacing == Pacing::RealTime {
            // Like a live sensor that cannot be read fast enough: the frames missed meanwhile
            // are gone, and the next one shows the present. Without this a camera thread that
            // renders slower than `fps` fell further and further behind (minutes, in a
            // ten-minute demo on a loaded machine).
            let now_seq = (self.start.elapsed().as_secs_f64() * self.config.fps).floor() as u64;
            let last = self.config.frames.map_or(u64::MAX, |n| n.saturating_sub(1));
            self.seq = self.seq.max(now_seq.min(last));
        }
        let t_secs = self.seq as f64 / self.config.fps;
        let due = self.start + Duration::from_secs_f64(t_secs);
        let (image, truth) = self.render_at(t_secs)?;
        if self.config.pacing == Pacing::RealTime {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let frame = Frame {
            // Path time, also when running as fast as possible, so that time-based filters
            // downstream see the nominal frame interval.
            t: due,
            seq: self.seq,
            image,
            camera_from_world_truth: Some(truth),
        };
        self.seq += 1;
        Ok(Some(frame))
    }

    fn describe(&self) -> String {
        let i = self.intrinsics();
        format!(
            "synthetic camera {}x{} at {} fps ({:?})",
            i.image_width, i.image_height, self.config.fps, self.config.pacing
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: in real time, a reader slower than the frame rate used to get every frame
    /// in turn and fall ever further behind; now it gets the present one.
    #[test]
    fn a_slow_reader_in_real_time_gets_the_present_frame_not_a_backlog() {
        let cam = CameraIntrinsics::ideal(160, 120, 150.0);
        let config = SyntheticConfig {
            fps: 50.0,
            pacing: Pacing::RealTime,
            supersample: 1,
            ..SyntheticConfig::default()
        };
        let mut source = SyntheticCamera::new(&cam, config, 7).unwrap();
        let first = source.next_frame().unwrap().unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let second = source.next_frame().unwrap().unwrap();
        // 300 ms at 50 fps: about 15 frames were missed, not zero.
        assert!(
            second.seq >= first.seq + 10,
            "seq {} then {}",
            first.seq,
            second.seq
        );
        assert!(second.t.elapsed() < Duration::from_millis(100));
    }
}
