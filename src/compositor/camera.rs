//! A kiss3d camera whose projection is the real camera's pinhole model and whose view is the
//! tracked `camera_from_world`, so the overlay lands on the marker in the video.
//!
//! Axes: OpenCV's camera frame has x right, y down, z forward; kiss3d's view space has x right,
//! y up and looks down −z. The two differ by a rotation of π about x, applied here once
//! ([`gl_from_world`]). Pixel convention: OpenCV puts integer pixel coordinates at pixel centres,
//! the rasteriser at pixel corners, hence the half-pixel terms in [`projection_from_intrinsics`].
//!
//! Lens distortion is not modelled by the projection: the compositor shows the video undistorted
//! (see [`super::undistort`]) and draws the overlay with the pinhole model of the same matrix K.

use ar_calibration::intrinsics::CameraIntrinsics;
use kiss3d::camera::Camera3d;
use kiss3d::event::WindowEvent;
use kiss3d::glamx::{Mat4, Pose3, Quat, Vec3};
use kiss3d::window::Canvas;
use nalgebra::{Isometry3, Matrix4, Point3, Translation3, UnitQuaternion, Vector3};

/// Pinhole intrinsics scaled to an output image of another size (e.g. a 640×480 camera shown
/// in an 800×600 eye). Distortion is dropped: the result describes the undistorted video.
pub fn scale_intrinsics(cam: &CameraIntrinsics, width_px: u32, height_px: u32) -> CameraIntrinsics {
    let sx = width_px as f64 / cam.image_width as f64;
    let sy = height_px as f64 / cam.image_height as f64;
    CameraIntrinsics {
        image_width: width_px,
        image_height: height_px,
        fx: cam.fx * sx,
        fy: cam.fy * sy,
        // Scale pixel edges, not pixel centres: centre c maps to (c + 0.5)·s − 0.5.
        cx: (cam.cx + 0.5) * sx - 0.5,
        cy: (cam.cy + 0.5) * sy - 0.5,
        dist: [0.0; 5],
        rms_px: cam.rms_px,
    }
}

/// The projection matrix (kiss3d view space → clip space, wgpu depth range [0, 1]) of a pinhole
/// camera with the given intrinsics rendered into an image of exactly that size.
///
/// A point whose OpenCV projection is pixel (u, v) lands in the rasterised pixel whose centre
/// is (u + ½, v + ½) from the top-left corner, i.e. in pixel (round(u), round(v)).
pub fn projection_from_intrinsics(
    cam: &CameraIntrinsics,
    znear_m: f64,
    zfar_m: f64,
) -> Matrix4<f64> {
    let w = cam.image_width as f64;
    let h = cam.image_height as f64;
    let mut m = Matrix4::zeros();
    m[(0, 0)] = 2.0 * cam.fx / w;
    m[(0, 2)] = 1.0 - 2.0 * (cam.cx + 0.5) / w;
    m[(1, 1)] = 2.0 * cam.fy / h;
    m[(1, 2)] = 2.0 * (cam.cy + 0.5) / h - 1.0;
    // Right-handed, looking down −z, depth 0 at the near plane and 1 at the far plane.
    m[(2, 2)] = zfar_m / (znear_m - zfar_m);
    m[(2, 3)] = znear_m * zfar_m / (znear_m - zfar_m);
    m[(3, 2)] = -1.0;
    m
}

/// The kiss3d view (`gl_from_world`) for an OpenCV `camera_from_world`.
pub fn gl_from_world(camera_from_world: &Isometry3<f64>) -> Isometry3<f64> {
    let flip = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    Isometry3::from_parts(Translation3::identity(), flip) * camera_from_world
}

/// Converts a rigid transform to kiss3d's single-precision pose.
pub fn to_pose3(iso: &Isometry3<f64>) -> Pose3 {
    let t = iso.translation.vector;
    let q = iso.rotation.quaternion();
    Pose3::from_parts(
        Vec3::new(t.x as f32, t.y as f32, t.z as f32),
        Quat::from_xyzw(q.i as f32, q.j as f32, q.k as f32, q.w as f32).normalize(),
    )
}

/// Converts a point to kiss3d's single-precision vector.
pub fn to_vec3(p: &Point3<f64>) -> Vec3 {
    Vec3::new(p.x as f32, p.y as f32, p.z as f32)
}

fn to_mat4(m: &Matrix4<f64>) -> Mat4 {
    // Both nalgebra and glam store matrices column-major.
    let cols: Vec<f32> = m.iter().map(|&v| v as f32).collect();
    let mut a = [0.0f32; 16];
    a.copy_from_slice(&cols);
    Mat4::from_cols_array(&a)
}

/// A camera registered to the real one: fixed projection from the intrinsics, view from the
/// tracked pose. Input events never move it.
#[derive(Debug, Clone)]
pub struct ArCamera {
    intrinsics: CameraIntrinsics,
    znear_m: f64,
    zfar_m: f64,
    proj: Mat4,
    view: Pose3,
    camera_from_world: Isometry3<f64>,
}

impl ArCamera {
    /// A camera rendering images of `intrinsics`' size with these clip planes (metres).
    pub fn new(intrinsics: CameraIntrinsics, znear_m: f64, zfar_m: f64) -> Self {
        let proj = to_mat4(&projection_from_intrinsics(&intrinsics, znear_m, zfar_m));
        let mut cam = Self {
            intrinsics,
            znear_m,
            zfar_m,
            proj,
            view: Pose3::IDENTITY,
            camera_from_world: Isometry3::identity(),
        };
        cam.set_camera_from_world(&Isometry3::identity());
        cam
    }

    /// Sets the view from the OpenCV-axes camera pose of this frame.
    pub fn set_camera_from_world(&mut self, camera_from_world: &Isometry3<f64>) {
        self.camera_from_world = *camera_from_world;
        self.view = to_pose3(&gl_from_world(camera_from_world));
    }

    /// The current OpenCV-axes camera pose.
    pub fn camera_from_world(&self) -> &Isometry3<f64> {
        &self.camera_from_world
    }

    /// The pinhole intrinsics this camera renders with.
    pub fn intrinsics(&self) -> &CameraIntrinsics {
        &self.intrinsics
    }

    /// Near and far clip distances, metres.
    pub fn clip_planes_m(&self) -> (f64, f64) {
        (self.znear_m, self.zfar_m)
    }
}

impl Camera3d for ArCamera {
    fn handle_event(&mut self, _canvas: &Canvas, _event: &WindowEvent) {}

    fn eye(&self) -> Vec3 {
        self.view.inverse().translation
    }

    fn view_transform(&self) -> Pose3 {
        self.view
    }

    fn transformation(&self) -> Mat4 {
        self.proj * self.view.to_mat4()
    }

    fn inverse_transformation(&self) -> Mat4 {
        self.transformation().inverse()
    }

    fn clip_planes(&self) -> (f32, f32) {
        (self.znear_m as f32, self.zfar_m as f32)
    }

    fn update(&mut self, _canvas: &Canvas) {}

    fn view_transform_pair(&self, _pass: usize) -> (Pose3, Mat4) {
        (self.view, self.proj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector4;

    /// Pixel (u, v) in OpenCV's convention for a point through the projection matrix.
    fn pixel_through_matrix(cam: &CameraIntrinsics, p_in_cv: &Point3<f64>) -> (f64, f64, f64) {
        let m = projection_from_intrinsics(cam, 0.01, 10.0);
        let p_gl = Vector4::new(p_in_cv.x, -p_in_cv.y, -p_in_cv.z, 1.0);
        let c = m * p_gl;
        let ndc = c.xyz() / c.w;
        let w = cam.image_width as f64;
        let h = cam.image_height as f64;
        let u = (ndc.x + 1.0) * 0.5 * w - 0.5;
        let v = (1.0 - ndc.y) * 0.5 * h - 0.5;
        (u, v, ndc.z)
    }

    #[test]
    fn matrix_agrees_with_pinhole_projection() {
        let mut cam = CameraIntrinsics::ideal(640, 480, 580.0);
        cam.cx = 331.5;
        cam.cy = 228.25;
        cam.fy = 575.0;
        for p in [
            Point3::new(0.1, -0.05, 0.7),
            Point3::new(-0.2, 0.13, 1.4),
            Point3::new(0.0, 0.0, 0.3),
        ] {
            let expected = cam.project(&p).unwrap();
            let (u, v, z) = pixel_through_matrix(&cam, &p);
            assert!((u - expected.x).abs() < 1e-9, "u {u} vs {}", expected.x);
            assert!((v - expected.y).abs() < 1e-9, "v {v} vs {}", expected.y);
            assert!((0.0..=1.0).contains(&z), "depth {z} outside [0, 1]");
        }
    }

    #[test]
    fn near_and_far_planes_map_to_depth_zero_and_one() {
        let cam = CameraIntrinsics::ideal(640, 480, 500.0);
        let m = projection_from_intrinsics(&cam, 0.05, 20.0);
        let near = m * Vector4::new(0.0, 0.0, -0.05, 1.0);
        let far = m * Vector4::new(0.0, 0.0, -20.0, 1.0);
        assert!((near.z / near.w).abs() < 1e-12);
        assert!((far.z / far.w - 1.0).abs() < 1e-12);
    }

    #[test]
    fn scaled_intrinsics_keep_points_on_the_same_relative_pixel() {
        let mut cam = CameraIntrinsics::ideal(640, 480, 600.0);
        cam.cx = 300.0;
        let eye = scale_intrinsics(&cam, 800, 600);
        let p = Point3::new(0.05, 0.02, 0.5);
        let a = cam.project(&p).unwrap();
        let b = eye.project(&p).unwrap();
        // Pixel edges scale by 1.25: (a + 0.5) · 1.25 = b + 0.5.
        assert!(((a.x + 0.5) * 1.25 - (b.x + 0.5)).abs() < 1e-9);
        assert!(((a.y + 0.5) * 1.25 - (b.y + 0.5)).abs() < 1e-9);
    }

    #[test]
    fn gl_view_puts_points_in_front_of_the_camera_at_negative_z() {
        let camera_from_world = Isometry3::translation(0.0, 0.0, 1.0);
        let gl = gl_from_world(&camera_from_world);
        let p = gl * Point3::new(0.1, 0.2, 0.0);
        assert!(
            (p.x - 0.1).abs() < 1e-12 && (p.y + 0.2).abs() < 1e-12 && (p.z + 1.0).abs() < 1e-12
        );
    }
}
