//! Renders flat textures lying in the world's z = 0 plane (a desk and a printed sheet) through
//! a pinhole camera with OpenCV's lens distortion.
//!
//! Exactness matters more than speed here: the compositor registers virtual objects on these
//! images to about a pixel, and the tracker's accuracy is measured against them. So every
//! output pixel is traced backwards: pixel → (inverse distortion, precomputed once) → viewing
//! ray → intersection with the plane (a homography per frame) → texture coordinates, and the
//! textures are sampled with `remap`. Pixel centres follow OpenCV (pixel (0, 0)'s centre is at
//! (0, 0)). Aliasing is controlled by rendering `supersample`² rays per output pixel (averaged
//! by an exact area resize) and by sampling the printed sheet from a 2× texture pyramid at the
//! level that matches its on-screen size.

use super::printed::CardTexture;
use super::{cv_ctx, CameraError};
use ar_calibration::intrinsics::CameraIntrinsics;
use nalgebra::{Isometry3, Matrix3, Point2, Point3, Vector2};
use opencv::core::{Mat, Scalar, Size, CV_32FC1};
use opencv::imgproc;
use opencv::prelude::*;

/// Pyramid levels kept for each texture (each halves the resolution).
const LEVELS: usize = 6;

struct Layer {
    levels: Vec<Mat>,
    metres_per_px: f64,
    top_left_in_world: Vector2<f64>,
}

impl Layer {
    fn new(card: &CardTexture) -> Result<Self, CameraError> {
        // Pad to a multiple of 2^(LEVELS-1) so that every level is an exact 2× reduction and
        // texture coordinates scale exactly by powers of two.
        let q = 1 << (LEVELS - 1);
        let w = card.image.cols();
        let h = card.image.rows();
        let (pw, ph) = ((w + q - 1) / q * q, (h + q - 1) / q * q);
        let mut padded = Mat::default();
        cv_ctx(
            opencv::core::copy_make_border(
                &card.image,
                &mut padded,
                0,
                ph - h,
                0,
                pw - w,
                opencv::core::BORDER_REPLICATE,
                Scalar::default(),
            ),
            "padding a texture",
        )?;
        let mut levels = vec![padded];
        for k in 1..LEVELS {
            let prev = &levels[k - 1];
            let mut next = Mat::default();
            cv_ctx(
                imgproc::resize(
                    prev,
                    &mut next,
                    Size::new(prev.cols() / 2, prev.rows() / 2),
                    0.0,
                    0.0,
                    imgproc::INTER_AREA,
                ),
                "building a texture pyramid",
            )?;
            levels.push(next);
        }
        Ok(Self {
            levels,
            metres_per_px: card.metres_per_px,
            top_left_in_world: card.top_left_in_world,
        })
    }

    /// Pyramid level whose texels are about one supersampled pixel at the sheet's centre.
    fn level_for(
        &self,
        intr: &CameraIntrinsics,
        camera_from_world: &Isometry3<f64>,
        ss: f64,
    ) -> usize {
        let size = Vector2::new(self.levels[0].cols() as f64, self.levels[0].rows() as f64)
            * self.metres_per_px;
        let centre = self.top_left_in_world + Vector2::new(size.x / 2.0, -size.y / 2.0);
        let eps = self.metres_per_px * 10.0;
        let proj = |dx: f64, dy: f64| {
            let p = camera_from_world * Point3::new(centre.x + dx, centre.y + dy, 0.0);
            (p.z > 1e-6).then(|| Vector2::new(intr.fx * p.x / p.z, intr.fy * p.y / p.z))
        };
        let (Some(c), Some(ax), Some(ay)) = (proj(0.0, 0.0), proj(eps, 0.0), proj(0.0, eps)) else {
            return 0;
        };
        let jx = (ax - c) / eps;
        let jy = (ay - c) / eps;
        let image_px_per_m = (jx.x * jy.y - jx.y * jy.x).abs().sqrt() * ss;
        if image_px_per_m <= 0.0 {
            return LEVELS - 1;
        }
        let texels_per_px = 1.0 / (self.metres_per_px * image_px_per_m);
        (texels_per_px.max(1.0).log2().floor() as usize).min(LEVELS - 1)
    }
}

/// Renders a desk texture with one printed sheet on it, as seen by a calibrated camera.
pub struct PlaneRenderer {
    intrinsics: CameraIntrinsics,
    supersample: u32,
    /// Normalised undistorted ray (x/z, y/z) of every supersampled pixel; NaN where the
    /// distortion model cannot be inverted.
    rays: Vec<[f64; 2]>,
    desk: Layer,
    card: Layer,
    map_x: Mat,
    map_y: Mat,
    big: Mat,
}

impl std::fmt::Debug for PlaneRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlaneRenderer")
            .field("intrinsics", &self.intrinsics)
            .field("supersample", &self.supersample)
            .finish_non_exhaustive()
    }
}

impl PlaneRenderer {
    /// A renderer for `intrinsics` drawing `card` on `desk`, with `supersample`² rays per pixel.
    pub fn new(
        intrinsics: &CameraIntrinsics,
        desk: &CardTexture,
        card: &CardTexture,
        supersample: u32,
    ) -> Result<Self, CameraError> {
        if !(1..=4).contains(&supersample) {
            return Err(CameraError::SyntheticConfig(format!(
                "supersample must be 1..=4, got {supersample}"
            )));
        }
        let ss = supersample as usize;
        let w = intrinsics.image_width as usize * ss;
        let h = intrinsics.image_height as usize * ss;
        let mut rays = Vec::with_capacity(w * h);
        for j in 0..h {
            for i in 0..w {
                // Centre of supersampled pixel (i, j) in output-pixel coordinates.
                let u = (i as f64 + 0.5) / ss as f64 - 0.5;
                let v = (j as f64 + 0.5) / ss as f64 - 0.5;
                rays.push(match intrinsics.undistort_pixel(&Point2::new(u, v)) {
                    Some(p) => [p.x, p.y],
                    None => [f64::NAN, f64::NAN],
                });
            }
        }
        let alloc = |what| {
            cv_ctx(
                Mat::new_rows_cols_with_default(h as i32, w as i32, CV_32FC1, Scalar::all(0.0)),
                what,
            )
        };
        Ok(Self {
            intrinsics: intrinsics.clone(),
            supersample,
            rays,
            desk: Layer::new(desk)?,
            card: Layer::new(card)?,
            map_x: alloc("allocating map x")?,
            map_y: alloc("allocating map y")?,
            big: Mat::default(),
        })
    }

    /// The camera this renderer draws for.
    pub fn intrinsics(&self) -> &CameraIntrinsics {
        &self.intrinsics
    }

    /// Renders the noiseless, unblurred BGR8 image seen from `camera_from_world`.
    pub fn render(&mut self, camera_from_world: &Isometry3<f64>) -> Result<Mat, CameraError> {
        let rot = camera_from_world.rotation.to_rotation_matrix();
        let r = rot.matrix();
        let t = camera_from_world.translation.vector;
        // A plane point (X, Y, 0) is seen along G (X, Y, 1) with G = [r1 r2 t].
        let g = Matrix3::from_columns(&[r.column(0).into(), r.column(1).into(), t]);
        let ss = self.supersample as f64;
        let w = self.intrinsics.image_width as i32 * self.supersample as i32;
        let h = self.intrinsics.image_height as i32 * self.supersample as i32;
        self.big = cv_ctx(
            Mat::new_rows_cols_with_default(h, w, opencv::core::CV_8UC3, Scalar::all(0.0)),
            "allocating the render target",
        )?;
        let Some(plane_from_ray) = g.try_inverse() else {
            // The camera centre lies in the desk plane: it sees the plane edge-on, nothing else.
            return self.downsample();
        };
        for (layer_is_card, border) in [
            (false, opencv::core::BORDER_REFLECT),
            (true, opencv::core::BORDER_TRANSPARENT),
        ] {
            let layer = if layer_is_card {
                &self.card
            } else {
                &self.desk
            };
            let k = layer.level_for(&self.intrinsics, camera_from_world, ss);
            let m = layer.metres_per_px * (1u32 << k) as f64;
            let tl = layer.top_left_in_world;
            {
                let mx = cv_ctx(self.map_x.data_typed_mut::<f32>(), "map x")?;
                let my = cv_ctx(self.map_y.data_typed_mut::<f32>(), "map y")?;
                // Plain scalars: this loop runs over a million rays per layer and frame, and
                // nalgebra's generic indexing is slow in the debug profile the tests use.
                let h = &plane_from_ray;
                let (h00, h01, h02) = (h[(0, 0)], h[(0, 1)], h[(0, 2)]);
                let (h10, h11, h12) = (h[(1, 0)], h[(1, 1)], h[(1, 2)]);
                let (h20, h21, h22) = (h[(2, 0)], h[(2, 1)], h[(2, 2)]);
                let inv_m = 1.0 / m;
                for ((ray, ox), oy) in self.rays.iter().zip(mx.iter_mut()).zip(my.iter_mut()) {
                    let (rx, ry) = (ray[0], ray[1]);
                    let hz = h20 * rx + h21 * ry + h22;
                    // (hx, hy, hz) = (X, Y, 1) / λ with λ > 0 in front of the camera.
                    if hz.is_nan() || hz <= 1e-12 {
                        *ox = -1e6;
                        *oy = -1e6;
                        continue;
                    }
                    let x = (h00 * rx + h01 * ry + h02) / hz;
                    let y = (h10 * rx + h11 * ry + h12) / hz;
                    *ox = ((x - tl.x) * inv_m - 0.5) as f32;
                    *oy = ((tl.y - y) * inv_m - 0.5) as f32;
                }
            }
            cv_ctx(
                imgproc::remap(
                    &layer.levels[k],
                    &mut self.big,
                    &self.map_x,
                    &self.map_y,
                    imgproc::INTER_LINEAR,
                    border,
                    Scalar::all(0.0),
                ),
                "remapping a texture",
            )?;
        }
        self.downsample()
    }

    fn downsample(&self) -> Result<Mat, CameraError> {
        if self.supersample == 1 {
            return Ok(self.big.clone());
        }
        let mut out = Mat::default();
        cv_ctx(
            imgproc::resize(
                &self.big,
                &mut out,
                Size::new(
                    self.intrinsics.image_width as i32,
                    self.intrinsics.image_height as i32,
                ),
                0.0,
                0.0,
                imgproc::INTER_AREA,
            ),
            "averaging supersamples",
        )?;
        Ok(out)
    }
}

/// A procedural wooden desk, 1.6 m square at 1 mm per texel, centred on the world origin.
pub fn desk_texture(seed: u64) -> Result<CardTexture, CameraError> {
    let n = 1600i32;
    let mut rng = cv_ctx(
        opencv::core::RNG::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        "seeding the desk",
    )?;
    let mut noise = cv_ctx(
        Mat::new_rows_cols_with_default(n, n, CV_32FC1, Scalar::all(0.0)),
        "desk noise",
    )?;
    cv_ctx(
        rng.fill(
            &mut noise,
            opencv::core::RNG_UNIFORM,
            &Scalar::all(0.0),
            &Scalar::all(1.0),
            false,
        ),
        "desk noise",
    )?;
    // Long grain along x, a little fine texture, and a few wide blotches.
    let mut grain = Mat::default();
    cv_ctx(
        imgproc::gaussian_blur(
            &noise,
            &mut grain,
            Size::new(0, 0),
            30.0,
            1.5,
            opencv::core::BORDER_REFLECT,
        ),
        "desk grain",
    )?;
    let mut blotch = Mat::default();
    cv_ctx(
        imgproc::gaussian_blur(
            &noise,
            &mut blotch,
            Size::new(0, 0),
            60.0,
            60.0,
            opencv::core::BORDER_REFLECT,
        ),
        "desk blotches",
    )?;
    let mut fine = Mat::default();
    cv_ctx(
        imgproc::gaussian_blur(
            &noise,
            &mut fine,
            Size::new(0, 0),
            0.8,
            0.8,
            opencv::core::BORDER_REFLECT,
        ),
        "desk fine texture",
    )?;
    let mut img = cv_ctx(
        Mat::new_rows_cols_with_default(n, n, opencv::core::CV_8UC3, Scalar::all(0.0)),
        "desk image",
    )?;
    {
        let g = cv_ctx(grain.data_typed::<f32>(), "desk grain")?;
        let b = cv_ctx(blotch.data_typed::<f32>(), "desk blotches")?;
        let f = cv_ctx(fine.data_typed::<f32>(), "desk fine")?;
        let out = cv_ctx(img.data_typed_mut::<opencv::core::Vec3b>(), "desk image")?;
        for i in 0..out.len() {
            // Blurred uniform noise has a small spread around 0.5; stretch it.
            let s = 0.75 + 6.0 * (g[i] - 0.5) + 12.0 * (b[i] - 0.5) + 0.3 * (f[i] - 0.5);
            let s = s.clamp(0.3, 1.2);
            let (bb, gg, rr) = (70.0 * s, 110.0 * s, 160.0 * s);
            out[i] = opencv::core::Vec3b::from([bb as u8, gg as u8, rr.min(255.0) as u8]);
        }
    }
    let m = 0.001;
    Ok(CardTexture {
        image: img,
        metres_per_px: m,
        top_left_in_world: Vector2::new(-(n as f64) * m / 2.0, n as f64 * m / 2.0),
    })
}
