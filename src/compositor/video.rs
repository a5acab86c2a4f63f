//! The live video as the background: one texture, rewritten every frame with the wgpu queue's
//! `write_texture`, on a quad fixed in the camera frame just in front of the far plane.
//!
//! The quad spans exactly the camera's field of view under the pinhole model of the (undistorted)
//! video, so video pixel (u, v) lies on the same ray as the overlay's projection of (u, v).
//! It is drawn with the compositor's [`OverlayMaterial`] as pure emission (black albedo, white
//! emission, the video as its texture), and with tonemapping off the video keeps its colours.
//!
//! [`OverlayMaterial`]: super::material::OverlayMaterial
//!
//! Colour exactness: kiss3d 0.47's final pass encodes the linear result with `pow(c, 1/2.2)`
//! (not the sRGB curve). The texture therefore holds each video byte v as (v/255)^2.2 in half
//! floats (`Rgba16Float`, through a 256-entry table), which that pass turns back into v.

use super::camera::to_pose3;
use ar_calibration::intrinsics::CameraIntrinsics;
use kiss3d::color::{BLACK, WHITE};
use kiss3d::context::Context;
use kiss3d::glamx::{Vec2, Vec3};
use kiss3d::procedural::{IndexBuffer, RenderMesh};
use kiss3d::resource::{Material3d, Texture};
use kiss3d::scene::SceneNode3d;
use nalgebra::Isometry3;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// What was wrong with a video frame handed to the compositor.
#[derive(Debug, thiserror::Error)]
pub enum VideoError {
    /// The frame's size differs from the camera's.
    #[error("video frame is {got_w}×{got_h} px but the camera file says {want_w}×{want_h} px")]
    Size {
        /// Frame width.
        got_w: u32,
        /// Frame height.
        got_h: u32,
        /// Camera width.
        want_w: u32,
        /// Camera height.
        want_h: u32,
    },
    /// The pixel buffer's length does not match width × height × 3.
    #[error("video frame buffer holds {got} bytes, expected {want} (RGB, 8 bits)")]
    Buffer {
        /// Bytes given.
        got: usize,
        /// Bytes expected.
        want: usize,
    },
}

/// A borrowed RGB8 video image, rows top to bottom.
#[derive(Debug, Clone, Copy)]
pub struct VideoImage<'a> {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// `width * height * 3` bytes, R, G, B.
    pub rgb: &'a [u8],
}

/// The background quad and its texture.
pub struct VideoBackground {
    node: SceneNode3d,
    texture: Arc<Texture>,
    width: u32,
    height: u32,
    /// Staging pixels, 8 bytes each (four little-endian half floats).
    rgba: Vec<u8>,
    lut: [[u8; 2]; 256],
}

/// The linear value kiss3d's output pass maps back to the display value `v` (in [0, 1]).
pub fn display_to_linear(v: f32) -> f32 {
    v.powf(2.2)
}

fn create_texture(width: u32, height: u32) -> Arc<Texture> {
    let ctxt = Context::get();
    let texture = ctxt.create_texture(&wgpu::TextureDescriptor {
        label: Some("video background"),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba16Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    let sampler = ctxt.create_sampler(&wgpu::SamplerDescriptor {
        label: Some("video background sampler"),
        address_mode_u: wgpu::AddressMode::ClampToEdge,
        address_mode_v: wgpu::AddressMode::ClampToEdge,
        address_mode_w: wgpu::AddressMode::ClampToEdge,
        mag_filter: wgpu::FilterMode::Linear,
        min_filter: wgpu::FilterMode::Linear,
        ..Default::default()
    });
    Arc::new(Texture {
        texture,
        view,
        sampler,
        size: (width, height),
    })
}

impl VideoBackground {
    /// Adds the background quad to `scene` for a camera with these (undistorted) intrinsics.
    /// `material` is the compositor's [`OverlayMaterial`](super::material::OverlayMaterial).
    /// Must run on the thread that owns the kiss3d window or surface.
    pub fn new(
        scene: &mut SceneNode3d,
        cam: &CameraIntrinsics,
        material: Rc<RefCell<Box<dyn Material3d>>>,
    ) -> Self {
        let (w, h) = (cam.image_width, cam.image_height);
        let texture = create_texture(w, h);
        let one = half::f16::from_f32(1.0).to_le_bytes();
        let mut rgba = vec![0u8; (w * h * 8) as usize];
        for px in rgba.chunks_exact_mut(8) {
            px[6..].copy_from_slice(&one);
        }
        let lut = std::array::from_fn(|v| {
            half::f16::from_f32(display_to_linear(v as f32 / 255.0)).to_le_bytes()
        });
        // Corners of the image (pixel edges) on the plane z = 1 of the OpenCV camera frame.
        let edge = |u: f64, v: f64| {
            Vec3::new(
                ((u - cam.cx) / cam.fx) as f32,
                ((v - cam.cy) / cam.fy) as f32,
                1.0,
            )
        };
        let (u0, u1, v0, v1) = (-0.5, w as f64 - 0.5, -0.5, h as f64 - 0.5);
        let coords = vec![edge(u0, v0), edge(u1, v0), edge(u1, v1), edge(u0, v1)];
        let normals = vec![Vec3::new(0.0, 0.0, -1.0); 4];
        let uvs = vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.0, 1.0),
        ];
        let mesh = RenderMesh::new(
            coords,
            Some(normals),
            Some(uvs),
            Some(IndexBuffer::Unified(vec![[0, 1, 2], [0, 2, 3]])),
        );
        let mut node = scene.add_render_mesh(mesh, Vec3::ONE);
        node.set_material(material);
        node.enable_backface_culling(false);
        node.set_color(BLACK);
        node.set_emissive(WHITE);
        node.set_texture(texture.clone());
        node.set_casts_shadows(false);
        Self {
            node,
            texture,
            width: w,
            height: h,
            rgba,
            lut,
        }
    }

    /// Uploads a new frame into the texture.
    pub fn update(&mut self, image: &VideoImage<'_>) -> Result<(), VideoError> {
        if image.width != self.width || image.height != self.height {
            return Err(VideoError::Size {
                got_w: image.width,
                got_h: image.height,
                want_w: self.width,
                want_h: self.height,
            });
        }
        let want = (self.width * self.height * 3) as usize;
        if image.rgb.len() != want {
            return Err(VideoError::Buffer {
                got: image.rgb.len(),
                want,
            });
        }
        for (dst, src) in self.rgba.chunks_exact_mut(8).zip(image.rgb.chunks_exact(3)) {
            dst[0..2].copy_from_slice(&self.lut[src[0] as usize]);
            dst[2..4].copy_from_slice(&self.lut[src[1] as usize]);
            dst[4..6].copy_from_slice(&self.lut[src[2] as usize]);
        }
        Context::get().queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture.texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &self.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(self.width * 8),
                rows_per_image: Some(self.height),
            },
            wgpu::Extent3d {
                width: self.width,
                height: self.height,
                depth_or_array_layers: 1,
            },
        );
        Ok(())
    }

    /// Places the quad `depth_m` in front of a camera (OpenCV axes) at `world_from_camera`.
    pub fn place(&mut self, world_from_camera: &Isometry3<f64>, depth_m: f64) {
        let d = depth_m as f32;
        self.node.set_local_scale(d, d, d);
        self.node.set_pose(to_pose3(world_from_camera));
    }

    /// Shows or hides the video (hidden until the first frame arrives).
    pub fn set_visible(&mut self, visible: bool) {
        self.node.set_visible(visible);
    }
}
