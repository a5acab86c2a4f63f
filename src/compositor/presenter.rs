//! A window that shows finished images: the HMD view.
//!
//! kiss3d 0.47 renders a window's scene into the whole window (there is no per-eye
//! viewport), so the two eyes of the HMD view are rendered off-screen one after the other,
//! composed side by side (see [`super::stereo`]), and the composed image is presented here:
//! uploaded into a textured quad that exactly fills a window, full screen by default. The
//! quad is a [`VideoBackground`] seen by a pinhole camera whose image is the window, so the
//! image reaches the screen pixel for pixel and with its colours unchanged.
//!
//! kiss3d 0.47 can make a window full screen only on the monitor it opened on
//! (`Window::set_fullscreen`); to put the view on the HMD, make the HMD's output the one
//! where new windows open (for example `xrandr --output <HMD> --primary` on X11).

use super::camera::ArCamera;
use super::material::OverlayMaterial;
use super::renderer::{plain_output, render_scene, CompositorError};
use super::video::{VideoBackground, VideoImage};
use ar_calibration::intrinsics::CameraIntrinsics;
use image::RgbImage;
use kiss3d::scene::SceneNode3d;
use kiss3d::window::Window;
use nalgebra::Isometry3;

/// Distance of the quad from the presenter's camera (m; any value between the clip planes).
const QUAD_DEPTH_M: f64 = 1.0;

/// The pinhole camera whose image is a `width × height` window: the quad at any depth then
/// covers the window exactly, one texel per pixel.
pub fn window_intrinsics(width_px: u32, height_px: u32) -> CameraIntrinsics {
    CameraIntrinsics {
        image_width: width_px,
        image_height: height_px,
        fx: f64::from(width_px),
        fy: f64::from(width_px),
        cx: (f64::from(width_px) - 1.0) / 2.0,
        cy: (f64::from(height_px) - 1.0) / 2.0,
        dist: [0.0; 5],
        rms_px: None,
    }
}

/// A window presenting images of one fixed size.
pub struct Presenter {
    scene: SceneNode3d,
    quad: VideoBackground,
    camera: ArCamera,
    size_px: (u32, u32),
    // Declared last so that it is dropped last: the scene's GPU resources must be gone
    // before the window releases the GPU context.
    window: Box<Window>,
}

impl Presenter {
    /// Opens a `width × height` window titled `title` (on the main thread), full screen if
    /// `full_screen`.
    pub fn new(title: &str, size_px: (u32, u32), full_screen: bool) -> Self {
        let (w, h) = size_px;
        let mut window = Box::new(pollster::block_on(Window::new_with_size(title, w, h)));
        plain_output(&mut window);
        if full_screen {
            window.set_fullscreen(true);
        }
        let intrinsics = window_intrinsics(w, h);
        let mut scene = SceneNode3d::empty();
        let material = OverlayMaterial::shared([0.0, 0.0, -1.0], 1.0);
        let mut quad = VideoBackground::new(&mut scene, &intrinsics, material);
        quad.place(&Isometry3::identity(), QUAD_DEPTH_M);
        let camera = ArCamera::new(intrinsics, 0.1 * QUAD_DEPTH_M, 10.0 * QUAD_DEPTH_M);
        Self {
            scene,
            quad,
            camera,
            size_px,
            window,
        }
    }

    /// Shows `image`, which must have the presenter's size. A closed window gives
    /// [`CompositorError::WindowClosed`].
    pub fn show(&mut self, image: &RgbImage) -> Result<(), CompositorError> {
        let (width, height) = image.dimensions();
        if (width, height) != self.size_px {
            return Err(CompositorError::Config(format!(
                "the HMD window shows {}×{} px images, got {width}×{height}",
                self.size_px.0, self.size_px.1
            )));
        }
        self.quad.update(&VideoImage {
            width,
            height,
            rgb: image.as_raw(),
        })?;
        render_scene(&mut self.window, &mut self.scene, &mut self.camera)
    }

    /// The window (for its input events).
    pub fn window_mut(&mut self) -> &mut Window {
        &mut self.window
    }

    /// Reads back what the window shows now (for tests and screenshots).
    pub fn snap_image(&mut self) -> RgbImage {
        self.window.snap_image()
    }
}
