//! Removes lens distortion from the video with OpenCV's `initUndistortRectifyMap` + `remap`.
//!
//! The undistorted image keeps the camera matrix K of the camera file, so the compositor draws
//! the overlay with the pinhole model of that same K ([`super::camera`]) and both line up.
//! The maps are computed once per camera; each frame costs one bilinear `remap`.

use ar_calibration::intrinsics::CameraIntrinsics;
use opencv::core::{Mat, Scalar, Size, Vec3b, BORDER_CONSTANT, CV_32FC1, CV_64F};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

/// Why undistortion failed.
#[derive(Debug, thiserror::Error)]
pub enum UndistortError {
    /// The frame does not match the camera's size.
    #[error(
        "frame is {got_w}×{got_h} px ({got_len} bytes) but the camera is {want_w}×{want_h} px RGB"
    )]
    Size {
        /// Frame width.
        got_w: u32,
        /// Frame height.
        got_h: u32,
        /// Bytes given.
        got_len: usize,
        /// Camera width.
        want_w: u32,
        /// Camera height.
        want_h: u32,
    },
    /// OpenCV reported an error.
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// Precomputed undistortion maps for one camera.
pub struct Undistorter {
    width: u32,
    height: u32,
    map_x: Mat,
    map_y: Mat,
    identity: bool,
}

impl Undistorter {
    /// Builds the maps; a camera without distortion gets a no-op undistorter.
    pub fn new(cam: &CameraIntrinsics) -> Result<Self, UndistortError> {
        let identity = cam.dist.iter().all(|&d| d == 0.0);
        let mut map_x = Mat::default();
        let mut map_y = Mat::default();
        if !identity {
            let k = cam.camera_matrix();
            let k_rows: [[f64; 3]; 3] = [
                [k[(0, 0)], k[(0, 1)], k[(0, 2)]],
                [k[(1, 0)], k[(1, 1)], k[(1, 2)]],
                [k[(2, 0)], k[(2, 1)], k[(2, 2)]],
            ];
            let k_mat = Mat::from_slice_2d(&k_rows)?;
            let dist = Mat::from_slice(&cam.dist)?;
            let r = Mat::eye(3, 3, CV_64F)?.to_mat()?;
            calib3d::init_undistort_rectify_map(
                &k_mat,
                &dist,
                &r,
                &k_mat,
                Size::new(cam.image_width as i32, cam.image_height as i32),
                CV_32FC1,
                &mut map_x,
                &mut map_y,
            )?;
        }
        Ok(Self {
            width: cam.image_width,
            height: cam.image_height,
            map_x,
            map_y,
            identity,
        })
    }

    /// True when the camera has no distortion and frames pass through unchanged.
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// Undistorts an RGB8 frame (rows top to bottom) into `out` (resized as needed).
    pub fn undistort_rgb(
        &self,
        width: u32,
        height: u32,
        rgb: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), UndistortError> {
        if width != self.width
            || height != self.height
            || rgb.len() != (width * height * 3) as usize
        {
            return Err(UndistortError::Size {
                got_w: width,
                got_h: height,
                got_len: rgb.len(),
                want_w: self.width,
                want_h: self.height,
            });
        }
        out.clear();
        if self.identity {
            out.extend_from_slice(rgb);
            return Ok(());
        }
        let src = Mat::new_rows_cols_with_bytes::<Vec3b>(height as i32, width as i32, rgb)?;
        let mut dst = Mat::default();
        imgproc::remap(
            &src,
            &mut dst,
            &self.map_x,
            &self.map_y,
            imgproc::INTER_LINEAR,
            BORDER_CONSTANT,
            Scalar::default(),
        )?;
        out.extend_from_slice(dst.data_bytes()?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    /// A bright dot drawn where the distorted camera sees a point ends up, after undistortion,
    /// where the pinhole model of the same K puts it.
    #[test]
    fn undistorted_dot_lands_on_the_pinhole_projection() {
        let mut cam = CameraIntrinsics::ideal(320, 240, 300.0);
        cam.dist = [-0.25, 0.08, 0.001, -0.0005, 0.0];
        let p_in_camera = Point3::new(0.25, -0.15, 0.6);
        let distorted = cam.project(&p_in_camera).unwrap();
        let mut pinhole = cam.clone();
        pinhole.dist = [0.0; 5];
        let ideal = pinhole.project(&p_in_camera).unwrap();
        assert!(
            (distorted - ideal).norm() > 5.0,
            "test needs visible distortion"
        );
        let mut rgb = vec![0u8; 320 * 240 * 3];
        for y in 0..240 {
            for x in 0..320 {
                let d2 = (x as f64 - distorted.x).powi(2) + (y as f64 - distorted.y).powi(2);
                if d2 <= 4.0 {
                    rgb[(y * 320 + x) * 3..][..3].copy_from_slice(&[255, 255, 255]);
                }
            }
        }
        let und = Undistorter::new(&cam).unwrap();
        let mut out = Vec::new();
        und.undistort_rgb(320, 240, &rgb, &mut out).unwrap();
        let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
        for y in 0..240 {
            for x in 0..320 {
                let v = out[(y * 320 + x) * 3] as f64;
                sx += v * x as f64;
                sy += v * y as f64;
                sw += v;
            }
        }
        assert!(sw > 0.0);
        let (cx, cy) = (sx / sw, sy / sw);
        assert!(
            (cx - ideal.x).abs() < 0.5 && (cy - ideal.y).abs() < 0.5,
            "centroid ({cx:.2}, {cy:.2}) vs pinhole ({:.2}, {:.2})",
            ideal.x,
            ideal.y
        );
    }

    #[test]
    fn wrong_frame_size_is_an_error_naming_both_sizes() {
        let und = Undistorter::new(&CameraIntrinsics::ideal(320, 240, 300.0)).unwrap();
        let err = und
            .undistort_rgb(640, 480, &[0; 10], &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(err.contains("640×480") && err.contains("320×240"), "{err}");
    }
}
