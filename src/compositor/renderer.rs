//! The compositor proper: owns the kiss3d surface, the scene graph (video quad, shapes, lights)
//! and the registered camera, and turns one [`Overlay`] plus one video frame into an image —
//! mono, or two eyes side by side.

use super::arrows::{arrow_segments, Legend};
use super::camera::{scale_intrinsics, to_vec3, ArCamera};
use super::hud::{hud_line_top_px, hud_text_px};
use super::material::{MaterialKind, OverlayMaterial};
use super::overlay::{ForceKind, Overlay, Rgb};
use super::presenter::Presenter;
use super::shadow::ShadowLayer;
use super::shape_nodes::{Roots, ShapeNodes};
use super::stereo::{eye_from_camera, side_by_side, Eye};
use super::video::{VideoBackground, VideoError, VideoImage};
use ar_calibration::intrinsics::CameraIntrinsics;
use image::RgbImage;
use kiss3d::color::Color;
use kiss3d::glamx::Vec2;
use kiss3d::post_processing::Tonemap;
use kiss3d::resource::{Material3d, MaterialManager2d, MeshManager2d};
use kiss3d::scene::SceneNode3d;
use kiss3d::text::Font;
use kiss3d::window::{OffscreenSurface, Window};
use nalgebra::Isometry3;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

/// How the compositor renders.
#[derive(Debug, Clone, PartialEq)]
pub struct CompositorConfig {
    /// The camera file of the video source (after undistortion the video is pinhole with this
    /// K; the distortion coefficients are not used here).
    pub intrinsics: CameraIntrinsics,
    /// Size of one rendered view (per eye in stereo), pixels.
    pub view_size_px: (u32, u32),
    /// `Some(ipd)`: two eyes `ipd` metres apart, side by side; `None`: one view.
    pub stereo_ipd_m: Option<f64>,
    /// Near clip plane, metres.
    pub znear_m: f64,
    /// Far clip plane, metres; the video quad sits just in front of it.
    pub zfar_m: f64,
    /// Draw the HUD text.
    pub show_hud: bool,
    /// Lit shapes cast soft shadows on the desk ([`super::shadow`]); off for slow machines.
    pub shadows: bool,
}

impl CompositorConfig {
    /// A monitor view of the camera's own size.
    pub fn monitor(intrinsics: CameraIntrinsics) -> Self {
        let size = (intrinsics.image_width, intrinsics.image_height);
        Self {
            intrinsics,
            view_size_px: size,
            stereo_ipd_m: None,
            znear_m: 0.01,
            zfar_m: 20.0,
            show_hud: true,
            shadows: true,
        }
    }

    /// Side-by-side stereo with this per-eye size and IPD.
    pub fn hmd(intrinsics: CameraIntrinsics, eye_size_px: (u32, u32), ipd_m: f64) -> Self {
        Self {
            view_size_px: eye_size_px,
            stereo_ipd_m: Some(ipd_m),
            ..Self::monitor(intrinsics)
        }
    }

    /// Size of the composed image, pixels (twice as wide in stereo).
    pub fn output_size_px(&self) -> (u32, u32) {
        let (w, h) = self.view_size_px;
        match self.stereo_ipd_m {
            Some(_) => (2 * w, h),
            None => (w, h),
        }
    }
}

/// What went wrong while compositing.
#[derive(Debug, thiserror::Error)]
pub enum CompositorError {
    /// The video frame does not fit the camera.
    #[error(transparent)]
    Video(#[from] VideoError),
    /// A configuration value makes no sense.
    #[error("compositor configuration: {0}")]
    Config(String),
    /// The window was closed.
    #[error("the window was closed")]
    WindowClosed,
}

/// One frame's input: video, camera pose, overlay and HUD text.
#[derive(Debug, Clone, Copy)]
pub struct FrameInput<'a> {
    /// The (undistorted) video frame; `None` keeps the last one (black before the first).
    pub video: Option<VideoImage<'a>>,
    /// Camera pose of this frame (OpenCV axes); `None` when the marker is not seen, in which
    /// case the overlay is hidden and only the video is shown.
    pub camera_from_world: Option<Isometry3<f64>>,
    /// What to draw over the video.
    pub overlay: &'a Overlay,
    /// HUD text lines, top-left.
    pub hud_lines: &'a [String],
}

enum Target {
    Offscreen(Box<OffscreenSurface>),
    Window(Box<Window>),
}

impl Target {
    fn window(&mut self) -> &mut Window {
        match self {
            Target::Offscreen(s) => s.window_mut(),
            Target::Window(w) => w,
        }
    }
}

/// Time spent per stage of one [`Compositor::render`], milliseconds (both eyes summed).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StageTimings {
    /// Video conversion and texture upload.
    pub upload_ms: f64,
    /// Scene render (GPU submission and wait).
    pub render_ms: f64,
    /// Read-back of the finished image.
    pub readback_ms: f64,
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Colour of the stylus tip marker.
pub const STYLUS_COLOR: Rgb = [1.0, 0.85, 0.1];
/// Colour of the spring line.
pub const SPRING_COLOR: Rgb = [0.2, 1.0, 0.3];
/// Colour of reaction-force arrows.
pub const ARROW_COLOR: Rgb = [1.0, 0.2, 0.8];
/// Colour of contact normal-force arrows.
pub const CONTACT_ARROW_COLOR: Rgb = [0.2, 0.9, 1.0];
/// Radius of the stylus tip marker, metres: about 4 px across at a metre with f = 600 px
/// would be lost in the video, so it is drawn larger than a real tip.
pub const STYLUS_RADIUS_M: f64 = 0.007;
/// Direction the overlay's light travels, world frame (from above the desk, world z up). It
/// shades the shapes and casts their shadows: a lamp high above, a little to the left (−x)
/// and behind (+y; the user and the camera are on the −y side), so that shadows stay short
/// and fall sideways and forward, where a camera in front sees them rather than behind the
/// scene's stands. (The shading is two-sided: the side facing the camera is not dark.)
pub const LIGHT_TRAVEL_IN_WORLD: [f32; 3] = [0.3, -0.2, -1.0];
/// Share of the light every overlay surface gets whatever its orientation.
const AMBIENT: f32 = 0.35;

/// The compositor. Lives on the thread that created it (kiss3d's GPU context is thread-local).
/// Several compositors may coexist on one thread (they share the context), but once the last
/// one is dropped kiss3d 0.47 cannot build a new one on the same thread (stale cached GPU
/// objects): create compositors up front, or one per thread.
pub struct Compositor {
    config: CompositorConfig,
    scene: SceneNode3d,
    overlay_root: SceneNode3d,
    /// Depth-only shapes, drawn first: they hide the shadows and shapes behind them.
    phantom_root: SceneNode3d,
    shadows: ShadowLayer,
    /// The shapes, drawn last.
    shape_root: SceneNode3d,
    video: VideoBackground,
    camera: ArCamera,
    shapes: ShapeNodes,
    material: Rc<RefCell<Box<dyn Material3d>>>,
    phantom_material: Rc<RefCell<Box<dyn Material3d>>>,
    font: Arc<Font>,
    video_seen: bool,
    timings: StageTimings,
    /// The HMD window, which shows the composed side-by-side image (stereo in a window).
    presenter: Option<Presenter>,
    // Declared last so that it is dropped last: the last kiss3d window to go releases the
    // thread's GPU context, and the scene's GPU resources must be gone by then.
    target: Target,
}

/// Output settings for exact video colours (no tonemapping curve, no bloom, neutral
/// exposure) and no shadows, on the window of a compositor or of its presenter.
pub(super) fn plain_output(window: &mut Window) {
    window.set_tonemap(Tonemap::None);
    window.set_bloom_enabled(false);
    window.set_exposure(1.0);
    // Shadow maps cost a full extra render per light; on a software rasteriser (lavapipe)
    // they dominate the frame, and shadows of virtual bodies on the real desk would need
    // a desk model anyway.
    window.set_shadows_enabled(false);
    window.set_background_color(Color::new(0.0, 0.0, 0.0, 1.0));
}

/// Renders `scene` through `camera` into `window` (and presents it, for a real window); a
/// closed window gives [`CompositorError::WindowClosed`].
pub(super) fn render_scene(
    window: &mut Window,
    scene: &mut SceneNode3d,
    camera: &mut ArCamera,
) -> Result<(), CompositorError> {
    let alive =
        pollster::block_on(window.render(Some(scene), None, Some(camera), None, None, None));
    if alive {
        Ok(())
    } else {
        Err(CompositorError::WindowClosed)
    }
}

fn color(c: Rgb) -> Color {
    Color::new(c[0], c[1], c[2], 1.0)
}

impl Compositor {
    /// A compositor rendering into an off-screen surface (no window, no display server).
    pub fn headless(config: CompositorConfig) -> Result<Self, CompositorError> {
        Self::validate(&config)?;
        let (w, h) = config.view_size_px;
        let surface = pollster::block_on(OffscreenSurface::new(w, h));
        Ok(Self::build(config, Target::Offscreen(Box::new(surface))))
    }

    /// A compositor showing its frames in a window (must be called on the main thread).
    /// Stereo (the HMD view) needs two renders per frame and kiss3d 0.47 has no per-eye
    /// viewport: the eyes are rendered off-screen and the side-by-side image is shown full
    /// screen by a [`Presenter`].
    pub fn windowed(config: CompositorConfig, title: &str) -> Result<Self, CompositorError> {
        Self::validate(&config)?;
        if config.stereo_ipd_m.is_some() {
            // The window first: it makes the GPU context able to present, which the
            // off-screen surface then shares.
            let presenter = Presenter::new(title, config.output_size_px(), true);
            let (w, h) = config.view_size_px;
            let surface = pollster::block_on(OffscreenSurface::new(w, h));
            let mut c = Self::build(config, Target::Offscreen(Box::new(surface)));
            c.presenter = Some(presenter);
            return Ok(c);
        }
        let (w, h) = config.view_size_px;
        let window = pollster::block_on(Window::new_with_size(title, w, h));
        Ok(Self::build(config, Target::Window(Box::new(window))))
    }

    fn validate(config: &CompositorConfig) -> Result<(), CompositorError> {
        let (w, h) = config.view_size_px;
        if w == 0 || h == 0 {
            return Err(CompositorError::Config(format!(
                "view size {w}×{h} px is empty"
            )));
        }
        if !(config.znear_m > 0.0 && config.zfar_m > 2.0 * config.znear_m) {
            return Err(CompositorError::Config(format!(
                "clip planes near {} m, far {} m: need 0 < near and far > 2·near",
                config.znear_m, config.zfar_m
            )));
        }
        if let Some(ipd) = config.stereo_ipd_m {
            if !(ipd.is_finite() && (0.0..0.2).contains(&ipd)) {
                return Err(CompositorError::Config(format!(
                    "IPD {ipd} m is not between 0 and 0.2 m"
                )));
            }
        }
        Ok(())
    }

    fn build(config: CompositorConfig, mut target: Target) -> Self {
        // kiss3d 0.47 bug: dropping the last window clears the texture manager and then resets
        // the 2D managers, which are created lazily and need that texture manager; a window that
        // never drew 2D therefore panics in Drop and aborts at thread exit. Creating the 2D
        // managers now avoids it.
        MaterialManager2d::get_global_manager(|_| ());
        MeshManager2d::get_global_manager(|_| ());
        plain_output(target.window());
        let mut scene = SceneNode3d::empty();
        // The overlay is lit by one light from above the desk (world z up), fixed in the world.
        let material = OverlayMaterial::shared(LIGHT_TRAVEL_IN_WORLD, AMBIENT);
        let phantom_material =
            OverlayMaterial::shared_kind(LIGHT_TRAVEL_IN_WORLD, AMBIENT, MaterialKind::Phantom);
        let video = VideoBackground::new(&mut scene, &config.intrinsics, material.clone());
        // Drawing order is the scene graph's: video, phantoms, shadows, shapes.
        let mut overlay_root = scene.add_group();
        let phantom_root = overlay_root.add_group();
        let shadows = ShadowLayer::new(
            &mut overlay_root,
            LIGHT_TRAVEL_IN_WORLD,
            AMBIENT,
            config.shadows,
        );
        let shape_root = overlay_root.add_group();
        let (w, h) = config.view_size_px;
        let eye_intrinsics = scale_intrinsics(&config.intrinsics, w, h);
        let camera = ArCamera::new(eye_intrinsics, config.znear_m, config.zfar_m);
        let mut c = Self {
            config,
            presenter: None,
            target,
            scene,
            overlay_root,
            phantom_root,
            shadows,
            shape_root,
            video,
            camera,
            shapes: ShapeNodes::default(),
            material,
            phantom_material,
            font: Font::default(),
            video_seen: false,
            timings: StageTimings::default(),
        };
        c.video.set_visible(false);
        c
    }

    /// The configuration.
    pub fn config(&self) -> &CompositorConfig {
        &self.config
    }

    /// Turns the bodies' shadows on the desk on or off from the next frame.
    pub fn set_shadows(&mut self, on: bool) {
        self.config.shadows = on;
        self.shadows.set_enabled(on);
    }

    /// The window's input events since the last call (mouse, keys; none off-screen). The
    /// window still sees them afterwards (closing, resizing).
    pub fn take_window_events(&mut self) -> Vec<kiss3d::event::WindowEvent> {
        let window = match &mut self.presenter {
            Some(p) => p.window_mut(),
            None => self.target.window(),
        };
        window.events().iter().map(|e| e.value).collect()
    }

    /// How many meshes' GPU buffers have been made so far: once per mesh shown, however many
    /// frames show it (see [`super::mesh::SharedMesh`]).
    pub fn mesh_uploads(&self) -> u64 {
        self.shapes.mesh_uploads()
    }

    /// The pinhole intrinsics of one rendered view (the camera's, scaled to the view size).
    pub fn view_intrinsics(&self) -> &CameraIntrinsics {
        self.camera.intrinsics()
    }

    /// Renders one frame and returns the composed image (stereo: left | right).
    /// For a window, the frame is also presented; a closed window gives
    /// [`CompositorError::WindowClosed`].
    pub fn render(&mut self, input: &FrameInput<'_>) -> Result<RgbImage, CompositorError> {
        self.timings = StageTimings::default();
        let t0 = Instant::now();
        if let Some(video) = &input.video {
            self.video.update(video)?;
            if !self.video_seen {
                self.video.set_visible(true);
                self.video_seen = true;
            }
        }
        self.timings.upload_ms = ms_since(t0);
        self.shapes.sync(
            input.overlay,
            Roots {
                shapes: &mut self.shape_root,
                phantoms: &mut self.phantom_root,
                material: &self.material,
                phantom_material: &self.phantom_material,
            },
        );
        self.shadows.sync(input.overlay);
        self.overlay_root
            .set_visible(input.camera_from_world.is_some());
        let camera_from_world = input.camera_from_world.unwrap_or_else(Isometry3::identity);
        match self.config.stereo_ipd_m {
            None => self.render_view(&camera_from_world, input),
            Some(ipd) => {
                let left = self.render_view(
                    &(eye_from_camera(Eye::Left, ipd) * camera_from_world),
                    input,
                )?;
                let right = self.render_view(
                    &(eye_from_camera(Eye::Right, ipd) * camera_from_world),
                    input,
                )?;
                let image = side_by_side(&left, &right)
                    .ok_or_else(|| CompositorError::Config("eye images differ in size".into()))?;
                if let Some(presenter) = &mut self.presenter {
                    let t_present = Instant::now();
                    presenter.show(&image)?;
                    self.timings.render_ms += ms_since(t_present);
                }
                Ok(image)
            }
        }
    }

    fn render_view(
        &mut self,
        camera_from_world: &Isometry3<f64>,
        input: &FrameInput<'_>,
    ) -> Result<RgbImage, CompositorError> {
        self.camera.set_camera_from_world(camera_from_world);
        // The video stays glued to the view: just in front of the far plane.
        self.video
            .place(&camera_from_world.inverse(), 0.9 * self.config.zfar_m);
        let show_overlay = input.camera_from_world.is_some();
        let window = self.target.window();
        if show_overlay {
            draw_lines(window, input.overlay);
            let legend = arrow_legend(input.overlay);
            let eye = self.camera.intrinsics();
            let anchor = legend.and_then(|l| {
                eye.project(
                    &(camera_from_world
                        * (l.from_in_world + l.force_in_world * input.overlay.arrow_m_per_n)),
                )
            });
            if let (Some(l), Some(px)) = (legend, anchor) {
                let size = hud_text_px(self.config.view_size_px.1);
                window.draw_text(
                    &l.label(),
                    Vec2::new(px.x as f32 + 6.0, px.y as f32 - 0.5 * size),
                    size,
                    &self.font,
                    color(ARROW_COLOR),
                );
            }
        }
        if self.config.show_hud {
            let height_px = self.config.view_size_px.1;
            for (i, line) in input.hud_lines.iter().enumerate() {
                window.draw_text(
                    line,
                    Vec2::new(8.0, hud_line_top_px(height_px, i)),
                    hud_text_px(height_px),
                    &self.font,
                    Color::new(1.0, 1.0, 0.3, 1.0),
                );
            }
        }
        let t_render = Instant::now();
        render_scene(window, &mut self.scene, &mut self.camera)?;
        self.timings.render_ms += ms_since(t_render);
        let t_read = Instant::now();
        let image = window.snap_image();
        self.timings.readback_ms += ms_since(t_read);
        Ok(image)
    }

    /// Where the last [`Self::render`] spent its time.
    pub fn last_timings(&self) -> StageTimings {
        self.timings
    }

    /// kiss3d's own figures for the last rendered view: GPU time of each pass (name,
    /// milliseconds) from timestamp queries, empty when the device has none (or while the first
    /// results are in flight). On lavapipe these are the software rasteriser's times.
    pub fn last_pass_timings_ms(&mut self) -> Vec<(&'static str, f64)> {
        self.target
            .window()
            .render_timings()
            .and_then(|t| t.gpu_steps.clone())
            .map(|steps| {
                steps
                    .into_iter()
                    .map(|(name, d)| (name, d.as_secs_f64() * 1e3))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn draw_lines(window: &mut Window, overlay: &Overlay) {
    for line in &overlay.lines {
        window.draw_line(
            to_vec3(&line.from_in_world),
            to_vec3(&line.to_in_world),
            color(line.color),
            2.0,
            false,
        );
    }
    if let Some((a, b)) = overlay.spring_in_world {
        window.draw_line(to_vec3(&a), to_vec3(&b), color(SPRING_COLOR), 3.0, false);
    }
    for arrow in &overlay.arrows {
        let c = match arrow.kind {
            ForceKind::JointReaction => ARROW_COLOR,
            ForceKind::Contact => CONTACT_ARROW_COLOR,
        };
        for (a, b) in arrow_segments(
            &arrow.origin_in_world,
            &arrow.force_n,
            overlay.arrow_m_per_n,
        ) {
            window.draw_line(to_vec3(&a), to_vec3(&b), color(c), 3.0, false);
        }
    }
    let legend = arrow_legend(overlay)
        .map(|l| arrow_segments(&l.from_in_world, &l.force_in_world, overlay.arrow_m_per_n))
        .unwrap_or_default();
    for (a, b) in legend {
        window.draw_line(to_vec3(&a), to_vec3(&b), color(ARROW_COLOR), 3.0, false);
    }
}

/// The legend of the overlay's arrows, when there are arrows to explain.
fn arrow_legend(overlay: &Overlay) -> Option<Legend> {
    let has = |k: ForceKind| overlay.arrows.iter().any(|a| a.kind == k);
    (!overlay.arrows.is_empty() && overlay.arrow_m_per_n > 0.0).then(|| {
        Legend::new(
            overlay.arrow_m_per_n,
            has(ForceKind::JointReaction),
            has(ForceKind::Contact),
        )
    })
}
