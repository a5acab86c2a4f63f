//! A fixed-view camera: a camera device that reports a constant, known `camera_from_world` and
//! a plain desk image with the marker's square drawn where it lies, at a steady frame rate.
//! It stands in for the camera + tracker when the synthetic camera is not available in the
//! build, and serves for headless runs where only the overlay matters.

use super::interfaces::{CameraTracker, DeviceError};
use crate::rig::threads::messages::{CameraUpdate, VideoFrame};
use ar_calibration::intrinsics::CameraIntrinsics;
use nalgebra::{
    Isometry3, Matrix3, Point2, Point3, Rotation3, Translation3, UnitQuaternion, Vector3,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `camera_from_world` (OpenCV axes) for a camera at `eye` looking at `target`, world z up.
/// `None` when looking straight up or down (no horizon to orient the image).
pub fn look_at(eye: Point3<f64>, target: Point3<f64>) -> Option<Isometry3<f64>> {
    let f = (target - eye).try_normalize(1e-12)?;
    let r = f.cross(&Vector3::z()).try_normalize(1e-9)?;
    let d = f.cross(&r);
    let rot = Rotation3::from_matrix_unchecked(Matrix3::from_rows(&[
        r.transpose(),
        d.transpose(),
        f.transpose(),
    ]));
    let q = UnitQuaternion::from_rotation_matrix(&rot);
    Some(Isometry3::from_parts(
        Translation3::from(-(q * eye.coords)),
        q,
    ))
}

/// Keeps a camera stand-in at a steady frame rate; a wait longer than 100 ms is cut short
/// as a [`DeviceError::Timeout`], so the camera's worker notices a shutdown promptly.
#[derive(Debug, Clone)]
pub struct FramePacer {
    period: Duration,
    next: Instant,
}

impl FramePacer {
    /// `fps` frames per second (at least one), the first one now.
    pub fn new(fps: f64) -> Self {
        Self {
            period: Duration::from_secs_f64(1.0 / fps.max(1.0)),
            next: Instant::now(),
        }
    }

    /// Waits for the next frame's time.
    pub fn wait(&mut self) -> Result<(), DeviceError> {
        let now = Instant::now();
        if self.next > now {
            let wait = self.next - now;
            if wait > Duration::from_millis(100) {
                std::thread::sleep(Duration::from_millis(100));
                return Err(DeviceError::Timeout);
            }
            std::thread::sleep(wait);
        }
        self.next = self.next.max(now) + self.period;
        Ok(())
    }
}

/// The camera stand-in.
pub struct FixedViewCamera {
    frame: Arc<VideoFrame>,
    camera_from_world: Isometry3<f64>,
    pacer: FramePacer,
}

fn inside_convex(quad: &[Point2<f64>; 4], x: f64, y: f64) -> bool {
    let mut sign = 0.0;
    for i in 0..4 {
        let a = quad[i];
        let b = quad[(i + 1) % 4];
        let c = (b.x - a.x) * (y - a.y) - (b.y - a.y) * (x - a.x);
        if c != 0.0 {
            if sign == 0.0 {
                sign = c.signum();
            } else if c.signum() != sign {
                return false;
            }
        }
    }
    true
}

impl FixedViewCamera {
    /// A camera with `intrinsics` at `camera_from_world`, delivering `fps` frames per second;
    /// the marker (side `marker_length_m`, centred on the world origin) is drawn dark.
    pub fn new(
        intrinsics: &CameraIntrinsics,
        camera_from_world: Isometry3<f64>,
        marker_length_m: f64,
        fps: f64,
    ) -> Self {
        let (w, h) = (intrinsics.image_width, intrinsics.image_height);
        let half = 0.5 * marker_length_m;
        let corners = [(-half, half), (half, half), (half, -half), (-half, -half)]
            .map(|(x, y)| intrinsics.project(&(camera_from_world * Point3::new(x, y, 0.0))));
        let mut rgb = Vec::with_capacity((w * h * 3) as usize);
        for y in 0..h {
            for x in 0..w {
                // A desk-like grey with a faint vertical gradient.
                let shade = 150 + (40 * y / h.max(1)) as u8;
                let in_marker = match corners {
                    [Some(a), Some(b), Some(c), Some(d)] => {
                        inside_convex(&[a, b, c, d], x as f64, y as f64)
                    }
                    _ => false,
                };
                let px = if in_marker {
                    [25, 25, 25]
                } else {
                    [shade, shade - 8, shade - 20]
                };
                rgb.extend_from_slice(&px);
            }
        }
        Self {
            frame: Arc::new(VideoFrame {
                width: w,
                height: h,
                rgb,
            }),
            camera_from_world,
            pacer: FramePacer::new(fps),
        }
    }
}

impl CameraTracker for FixedViewCamera {
    fn next_update(&mut self) -> Result<CameraUpdate, DeviceError> {
        self.pacer.wait()?;
        Ok(CameraUpdate {
            captured_at: Instant::now(),
            frame: self.frame.clone(),
            camera_from_world: Some(self.camera_from_world),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_at_centres_the_target() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let pose = look_at(Point3::new(0.2, -0.9, 0.6), Point3::new(0.0, 0.0, 0.3)).unwrap();
        let p = cam.project(&(pose * Point3::new(0.0, 0.0, 0.3))).unwrap();
        assert!((p.x - 320.0).abs() < 1e-9 && (p.y - 240.0).abs() < 1e-9);
        // World up appears up in the image (smaller v).
        let above = cam.project(&(pose * Point3::new(0.0, 0.0, 0.4))).unwrap();
        assert!(above.y < p.y);
        assert!(look_at(Point3::new(0.0, 0.0, 1.0), Point3::origin()).is_none());
    }

    #[test]
    fn the_marker_is_drawn_where_it_projects() {
        let cam = CameraIntrinsics::ideal(320, 240, 300.0);
        let pose = look_at(Point3::new(0.0, -0.5, 0.5), Point3::origin()).unwrap();
        let mut c = FixedViewCamera::new(&cam, pose, 0.1, 25.0);
        let u = c.next_update().unwrap();
        let centre = cam.project(&(pose * Point3::origin())).unwrap();
        let i = ((centre.y.round() as u32 * 320 + centre.x.round() as u32) * 3) as usize;
        assert_eq!(u.frame.rgb[i], 25);
        assert_eq!(u.frame.rgb[0] as u32 + 20, u.frame.rgb[2] as u32 + 40);
    }
}
