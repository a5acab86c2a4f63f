//! Eq. 9 of the paper: the arm frame seen from the camera, which the compositor needs to draw
//! the stylus and the spring: `camera_from_arm = camera_from_world · world_from_arm`.

use nalgebra::Isometry3;

/// `camera_from_world · world_from_arm`, with `camera_from_world` the per-frame marker pose and
/// `world_from_arm` the tracker calibration.
pub fn camera_from_arm(
    camera_from_world: &Isometry3<f64>,
    world_from_arm: &Isometry3<f64>,
) -> Isometry3<f64> {
    camera_from_world * world_from_arm
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Point3, Vector3};

    #[test]
    fn a_point_reaches_the_camera_frame_through_the_world_frame() {
        let world_from_arm =
            Isometry3::new(Vector3::new(0.3, -0.5, 0.1), Vector3::new(0.4, -1.2, 2.0));
        let camera_from_world =
            Isometry3::new(Vector3::new(0.0, 0.0, 0.6), Vector3::new(3.0, 0.0, 0.0));
        let p_in_arm = Point3::new(0.1, 0.2, 0.3);
        let p_in_world = world_from_arm * p_in_arm;
        let direct = camera_from_world * p_in_world;
        let composed = camera_from_arm(&camera_from_world, &world_from_arm) * p_in_arm;
        assert!((direct - composed).norm() < 1e-15);
        // The other order is a different transform: the test would catch a swapped product.
        let swapped = (world_from_arm * camera_from_world) * p_in_arm;
        assert!((direct - swapped).norm() > 1e-3);
    }
}
