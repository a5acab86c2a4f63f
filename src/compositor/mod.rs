//! The compositor: live video as the background and the simulation drawn over it (kiss3d 0.47).
//!
//! - [`camera`]: a kiss3d camera built from the camera file (fx, fy, cx, cy, size) and the
//!   tracked `camera_from_world`, so the overlay is registered to the marker.
//! - [`video`]: the background quad whose texture is rewritten each frame (`write_texture`).
//! - [`undistort`]: removes lens distortion from the video (OpenCV `remap`), so that the overlay
//!   can be drawn with the pinhole model.
//! - [`overlay`]: what is drawn, as plain data (shapes at world poses, stylus, spring, arrows).
//! - [`bodies`]: a simulation's neutral view (bodies, supports, reactions) turned into the
//!   overlay, with the colours chosen here.
//! - [`mesh`]: mesh visuals' triangles as drawn (read once per scene, shared by every frame).
//! - [`arm`]: the digitizer arm from its linkage, drawn or as a depth-only phantom.
//! - [`shadow`]: the lit shapes' soft shadows on the desk (z = 0).
//! - `shape_nodes`: the scene-graph nodes of the overlay's shapes, kept between frames.
//! - [`arrows`]: force arrows' scale, heads and legend.
//! - [`hud`]: the HUD's numbers.
//! - [`material`]: the one kiss3d material (and shader) the video and the overlay are drawn with.
//! - [`stereo`]: two eyes an IPD apart, side by side.
//! - [`frames`]: numbered PNG output.
//! - [`renderer`]: [`Compositor`], which ties them together on the main thread.

pub mod arm;
pub mod arrows;
pub mod bodies;
pub mod camera;
pub mod convex_hull;
pub mod frames;
pub mod hud;
pub mod material;
pub mod mesh;
pub mod overlay;
pub mod presenter;
pub mod renderer;
pub mod shadow;
mod shape_nodes;
pub mod stereo;
pub mod undistort;
pub mod video;

pub use camera::ArCamera;
pub use frames::FrameWriter;
pub use hud::{DeviceStatus, HudDiagnostics, HudStats};
pub use overlay::{ForceArrow, Overlay, OverlayLine, Shading, ShapeInstance, VisualShape};
pub use renderer::{Compositor, CompositorConfig, CompositorError, FrameInput, StageTimings};
pub use video::VideoImage;
