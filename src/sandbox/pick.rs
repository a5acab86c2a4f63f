//! Picking with the pointer: the viewing ray through a pixel, the body it meets first (ray
//! against each body's visual shape, parry's ray casts) and the point where it meets it, and
//! the drag plane through that point facing the camera.

use crate::scene_view::BodyView;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_dynamics::contact::geometry::ColliderShape;
use nalgebra::{Isometry3, Point3, Unit, Vector3};
use std::sync::Arc;

/// A pointer that passes this close to a body (pixels, at the body's depth) still grabs it:
/// the pendula are 8 mm thick, about 5 px in the demo's view.
pub const PICK_TOLERANCE_PX: f64 = 6.0;

/// The viewing ray through a pixel, world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewRay {
    /// The camera's centre.
    pub origin_in_world: Point3<f64>,
    /// Unit direction.
    pub direction_in_world: Unit<Vector3<f64>>,
}

impl ViewRay {
    /// The ray of pixel (`x_px`, `y_px`) (OpenCV's convention: pixel centres at integers) of a
    /// pinhole camera with `intrinsics` at `camera_from_world`.
    pub fn through_pixel(
        intrinsics: &CameraIntrinsics,
        camera_from_world: &Isometry3<f64>,
        x_px: f64,
        y_px: f64,
    ) -> Self {
        let in_camera = Vector3::new(
            (x_px - intrinsics.cx) / intrinsics.fx,
            (y_px - intrinsics.cy) / intrinsics.fy,
            1.0,
        );
        let world_from_camera = camera_from_world.inverse();
        Self {
            origin_in_world: Point3::from(world_from_camera.translation.vector),
            direction_in_world: Unit::new_normalize(world_from_camera.rotation * in_camera),
        }
    }

    /// The point at distance `t_m` along the ray.
    pub fn at(&self, t_m: f64) -> Point3<f64> {
        self.origin_in_world + self.direction_in_world.into_inner() * t_m
    }

    /// Where the ray meets the plane through `point_in_world` with normal `normal_in_world`;
    /// `None` when it runs parallel to it or the plane is behind the camera.
    pub fn meet_plane(
        &self,
        point_in_world: &Point3<f64>,
        normal_in_world: &Vector3<f64>,
    ) -> Option<Point3<f64>> {
        let across = self.direction_in_world.dot(normal_in_world);
        if across.abs() < 1e-12 {
            return None;
        }
        let t = (point_in_world - self.origin_in_world).dot(normal_in_world) / across;
        (t > 0.0).then(|| self.at(t))
    }
}

/// A body the pointer picked, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// The body's index in the simulation.
    pub body: usize,
    /// Its name.
    pub name: Arc<str>,
    /// The picked point on its surface, world frame.
    pub point_in_world: Point3<f64>,
    /// The same point in the body's frame.
    pub point_in_body: Point3<f64>,
}

impl Pick {
    fn on(body: &BodyView, point_in_world: Point3<f64>) -> Self {
        Self {
            body: body.body,
            name: body.name.clone(),
            point_in_world,
            point_in_body: body.world_from_body.inverse() * point_in_world,
        }
    }
}

/// The body `ray` meets first and the point where it meets its visual shape; failing a hit,
/// the nearest body within [`PICK_TOLERANCE_PX`] of the ray (a camera with focal length
/// `focal_px`), grabbed at the point of its surface nearest to where the ray passes.
pub fn pick_body(ray: &ViewRay, bodies: &[BodyView], focal_px: f64) -> Option<Pick> {
    let origin = ray.origin_in_world;
    let direction = ray.direction_in_world.into_inner();
    let first = |margin: &dyn Fn(&BodyView) -> f64| {
        bodies
            .iter()
            .filter_map(|b| {
                // A convex's hull is built per pick (a click, not a step); the scene made it
                // once already, so it never fails here.
                ColliderShape::of(&b.shape)
                    .ok()?
                    .inflated(margin(b))
                    .cast_ray(&b.world_from_body, &origin, &direction)
                    .map(|t| (b, t))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    if let Some((body, t)) = first(&|_| 0.0) {
        return Some(Pick::on(body, ray.at(t)));
    }
    let margin_at_body = |b: &BodyView| {
        let depth_m = (b.world_from_body.translation.vector - origin.coords).dot(&direction);
        PICK_TOLERANCE_PX * depth_m.max(0.0) / focal_px
    };
    let (body, t) = first(&margin_at_body)?;
    let surface = match ColliderShape::of(&body.shape) {
        Ok(shape) => shape.nearest_surface_point(&body.world_from_body, &ray.at(t)),
        // Unreachable: `first` built this body's collider.
        Err(_) => ray.at(t),
    };
    Some(Pick::on(body, surface))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene_view::Shape;
    use nalgebra::{Translation3, UnitQuaternion};

    fn capsule_at(body: usize, z: f64) -> BodyView {
        BodyView {
            body,
            name: Arc::from(format!("p{body}")),
            shape: Shape::Capsule {
                radius_m: 0.004,
                length_m: 0.042,
            },
            world_from_body: Isometry3::from_parts(
                Translation3::new(0.0, 0.0, z),
                UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 0.3),
            ),
            visuals: Arc::new([]),
            meshes: Arc::new([]),
        }
    }

    /// Distance of a point from a capsule's surface (its axis segment, minus the radius).
    fn off_capsule_m(b: &BodyView, p: &Point3<f64>) -> f64 {
        let local = b.world_from_body.inverse() * p;
        let z = local.z.clamp(-0.021, 0.021);
        (local - Point3::new(0.0, 0.0, z)).norm() - 0.004
    }

    #[test]
    fn the_ray_through_a_projected_point_passes_through_it() {
        let cam = CameraIntrinsics::ideal(640, 480, 600.0);
        let camera_from_world =
            crate::rig::devices::fixed_view::look_at(Point3::new(0.3, -0.8, 0.5), Point3::origin())
                .unwrap();
        let p = Point3::new(0.05, 0.02, 0.1);
        let px = cam.project(&(camera_from_world * p)).unwrap();
        let ray = ViewRay::through_pixel(&cam, &camera_from_world, px.x, px.y);
        let t = (p - ray.origin_in_world).norm();
        assert!((ray.at(t) - p).norm() < 1e-12);
    }

    #[test]
    fn a_ray_through_a_capsule_picks_the_nearest_one_on_its_surface() {
        let bodies = [capsule_at(1, 0.3), capsule_at(2, 0.25)];
        // From the side, through the second capsule's centre.
        let ray = ViewRay {
            origin_in_world: Point3::new(0.0, -1.0, 0.25),
            direction_in_world: Vector3::y_axis(),
        };
        let pick = pick_body(&ray, &bodies, 600.0).expect("a hit");
        assert_eq!(pick.body, 2);
        assert!(off_capsule_m(&bodies[1], &pick.point_in_world).abs() < 1e-12);
        assert!((pick.point_in_world.y + 0.004).abs() < 1e-12, "{pick:?}");
        let back = bodies[1].world_from_body * pick.point_in_body;
        assert!((back - pick.point_in_world).norm() < 1e-15);
    }

    #[test]
    fn a_near_miss_within_the_tolerance_grabs_the_surface_nearest_the_ray() {
        let bodies = [capsule_at(1, 0.3)];
        // Passes 5.7 mm from the (tilted) capsule's axis, 1.7 mm off its surface, at 1 m:
        // 1 px, within the 10 mm the tolerance allows there.
        let ray = ViewRay {
            origin_in_world: Point3::new(0.006, -1.0, 0.3),
            direction_in_world: Vector3::y_axis(),
        };
        let pick = pick_body(&ray, &bodies, 600.0).expect("within the tolerance");
        assert!(off_capsule_m(&bodies[0], &pick.point_in_world).abs() < 1e-12);
        // 20.8 mm off its surface (12.5 px): nothing.
        let far = ViewRay {
            origin_in_world: Point3::new(0.026, -1.0, 0.3),
            ..ray
        };
        assert_eq!(pick_body(&far, &bodies, 600.0), None);
    }

    /// A convex tetrahedron (points off its centre) is picked on its face, and a near miss
    /// grabs its nearest surface point (its hull inflated by the tolerance).
    #[test]
    fn a_convex_is_picked_on_its_hull() {
        let a = 0.02;
        let tetrahedron = BodyView {
            shape: Shape::Convex {
                // A right-angled corner at the body origin, its slanted face x + y + z = a.
                points_m: Arc::from(vec![
                    [0.0, 0.0, 0.0],
                    [a, 0.0, 0.0],
                    [0.0, a, 0.0],
                    [0.0, 0.0, a],
                ]),
            },
            world_from_body: Isometry3::translation(0.0, 0.0, 0.3),
            ..capsule_at(1, 0.3)
        };
        let bodies = [tetrahedron];
        // Along −x through (·, 0.005, 0.305): meets the slanted face x + y + z = a.
        let ray = ViewRay {
            origin_in_world: Point3::new(1.0, 0.005, 0.305),
            direction_in_world: -Vector3::x_axis(),
        };
        let pick = pick_body(&ray, &bodies, 600.0).expect("a hit");
        assert!((pick.point_in_body - Point3::new(0.01, 0.005, 0.005)).norm() < 1e-12);
        // 1 mm past the corner x = a, along −y: within the tolerance; a surface point.
        let near = ViewRay {
            origin_in_world: Point3::new(a + 0.001, 1.0, 0.3),
            direction_in_world: -Vector3::y_axis(),
        };
        let pick = pick_body(&near, &bodies, 600.0).expect("within the tolerance");
        // On the hull's edge x + y = a, z = 0 (nearest to where the ray enters the grown hull).
        let p = pick.point_in_body;
        assert!(
            (p.x + p.y - a).abs() < 1e-12 && p.z.abs() < 1e-12,
            "{pick:?}"
        );
    }

    #[test]
    fn a_ray_meets_a_plane_facing_it_where_expected() {
        let ray = ViewRay {
            origin_in_world: Point3::origin(),
            direction_in_world: Unit::new_normalize(Vector3::new(0.0, 1.0, 1.0)),
        };
        let p = ray
            .meet_plane(&Point3::new(5.0, 0.0, 2.0), &Vector3::z())
            .unwrap();
        assert!((p - Point3::new(0.0, 2.0, 2.0)).norm() < 1e-12);
        assert_eq!(
            ray.meet_plane(&Point3::new(0.0, 0.0, -1.0), &Vector3::z()),
            None
        );
        assert_eq!(ray.meet_plane(&Point3::origin(), &Vector3::x()), None);
    }
}
