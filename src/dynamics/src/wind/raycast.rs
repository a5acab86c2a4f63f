//! Ray casts against the primitives, to find faces hidden from the wind's apex.

use super::primitive::Primitive;
use nalgebra::{Isometry3, Point3, Vector3};

/// Distance along the ray (origin + t·dir, `dir` a unit vector, world frame) at which it first
/// meets the solid `prim` placed at `world_from_body`; `None` if it misses or the solid lies
/// wholly behind the origin. An origin inside the solid gives the exit distance.
pub fn ray_hit(
    prim: &Primitive,
    world_from_body: &Isometry3<f64>,
    origin_in_world: &Point3<f64>,
    dir_in_world: &Vector3<f64>,
) -> Option<f64> {
    let o = world_from_body
        .inverse_transform_point(origin_in_world)
        .coords;
    let d = world_from_body.inverse_transform_vector(dir_in_world);
    ray_hit_in_body(prim, &o, &d)
}

/// [`ray_hit`] with the ray already in the body frame (`d` a unit vector).
pub fn ray_hit_in_body(prim: &Primitive, o: &Vector3<f64>, d: &Vector3<f64>) -> Option<f64> {
    let (o, d) = (*o, *d);
    match *prim {
        Primitive::Sphere { radius_m } => sphere(&o, &d, radius_m),
        Primitive::Cuboid { half_extents_m } => slab(&o, &d, &Vector3::from(half_extents_m)),
        Primitive::Cylinder {
            radius_m,
            half_length_m,
        } => cylinder(&o, &d, radius_m, half_length_m),
        Primitive::Capsule {
            radius_m,
            half_length_m,
        } => {
            let c = Vector3::new(0.0, 0.0, half_length_m);
            let side = infinite_cylinder_within(&o, &d, radius_m, half_length_m);
            let top = sphere(&(o - c), &d, radius_m);
            let bottom = sphere(&(o + c), &d, radius_m);
            [side, top, bottom].into_iter().flatten().reduce(f64::min)
        }
    }
}

/// Smallest non-negative root of |o + t d|² = r² (d unit).
fn sphere(o: &Vector3<f64>, d: &Vector3<f64>, r: f64) -> Option<f64> {
    let b = o.dot(d);
    let c = o.norm_squared() - r * r;
    let disc = b * b - c;
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    first_non_negative(-b - s, -b + s)
}

fn first_non_negative(t0: f64, t1: f64) -> Option<f64> {
    if t0 >= 0.0 {
        Some(t0)
    } else if t1 >= 0.0 {
        Some(t1)
    } else {
        None
    }
}

/// Slab test for an axis-aligned box of half extents `h` centred at the origin.
fn slab(o: &Vector3<f64>, d: &Vector3<f64>, h: &Vector3<f64>) -> Option<f64> {
    let mut t_in = f64::NEG_INFINITY;
    let mut t_out = f64::INFINITY;
    for i in 0..3 {
        if d[i].abs() < 1e-15 {
            if o[i].abs() > h[i] {
                return None;
            }
            continue;
        }
        let a = (-h[i] - o[i]) / d[i];
        let b = (h[i] - o[i]) / d[i];
        t_in = t_in.max(a.min(b));
        t_out = t_out.min(a.max(b));
    }
    if t_in > t_out {
        return None;
    }
    first_non_negative(t_in, t_out)
}

/// The lateral surface of the cylinder x² + y² = r² for |z| ≤ h: the entry (or, from
/// inside, the exit) distance.
fn infinite_cylinder_within(o: &Vector3<f64>, d: &Vector3<f64>, r: f64, h: f64) -> Option<f64> {
    let a = d.x * d.x + d.y * d.y;
    if a < 1e-15 {
        return None;
    }
    let b = o.x * d.x + o.y * d.y;
    let c = o.x * o.x + o.y * o.y - r * r;
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    [(-b - s) / a, (-b + s) / a]
        .into_iter()
        .filter(|&t| t >= 0.0 && (o.z + t * d.z).abs() <= h)
        .reduce(f64::min)
}

/// Capped cylinder: the lateral surface and the two discs z = ±h.
fn cylinder(o: &Vector3<f64>, d: &Vector3<f64>, r: f64, h: f64) -> Option<f64> {
    let side = infinite_cylinder_within(o, d, r, h);
    let caps = if d.z.abs() < 1e-15 {
        None
    } else {
        [h, -h]
            .into_iter()
            .map(|z| (z - o.z) / d.z)
            .filter(|&t| {
                let p = o + d * t;
                t >= 0.0 && p.x * p.x + p.y * p.y <= r * r
            })
            .reduce(f64::min)
    };
    [side, caps].into_iter().flatten().reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::UnitQuaternion;

    fn hit(prim: Primitive, pose: Isometry3<f64>, o: [f64; 3], d: [f64; 3]) -> Option<f64> {
        ray_hit(
            &prim,
            &pose,
            &Point3::from(o),
            &Vector3::from(d).normalize(),
        )
    }

    #[test]
    fn sphere_box_cylinder_capsule_entry_distances() {
        let at = |x, y, z| Isometry3::translation(x, y, z);
        let s = Primitive::Sphere { radius_m: 0.5 };
        assert!(
            (hit(s, at(3.0, 0.0, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).expect("hit") - 2.5).abs()
                < 1e-12
        );
        assert!(hit(s, at(3.0, 0.6, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).is_none());
        assert!(hit(s, at(-3.0, 0.0, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).is_none());

        let b = Primitive::Cuboid {
            half_extents_m: [0.1, 0.2, 0.3],
        };
        assert!(
            (hit(b, at(1.0, 0.0, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).expect("hit") - 0.9).abs()
                < 1e-12
        );
        assert!(hit(b, at(1.0, 0.25, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).is_none());
        // Turned a quarter about z the box shows its 0.2 half extent along x.
        let turned = Isometry3::from_parts(
            Vector3::new(1.0, 0.0, 0.0).into(),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2),
        );
        assert!((hit(b, turned, [0.0; 3], [1.0, 0.0, 0.0]).expect("hit") - 0.8).abs() < 1e-12);

        let c = Primitive::Cylinder {
            radius_m: 0.1,
            half_length_m: 0.5,
        };
        // From the side: hits the curved wall; along the axis: hits the cap.
        assert!(
            (hit(c, at(1.0, 0.0, 0.0), [0.0; 3], [1.0, 0.0, 0.0]).expect("side") - 0.9).abs()
                < 1e-12
        );
        assert!(
            (hit(c, at(0.0, 0.0, 2.0), [0.0; 3], [0.0, 0.0, 1.0]).expect("cap") - 1.5).abs()
                < 1e-12
        );
        assert!(hit(c, at(1.0, 0.0, 0.6), [0.0; 3], [1.0, 0.0, 0.0]).is_none());

        let k = Primitive::Capsule {
            radius_m: 0.1,
            half_length_m: 0.5,
        };
        // Past the end of the cylinder part, the hemisphere still stops the ray.
        assert!(hit(k, at(1.0, 0.0, 0.55), [0.0; 3], [1.0, 0.0, 0.0]).is_some());
        assert!(
            (hit(k, at(0.0, 0.0, 2.0), [0.0; 3], [0.0, 0.0, 1.0]).expect("tip") - 1.4).abs()
                < 1e-12
        );
    }

    #[test]
    fn origin_inside_gives_the_exit() {
        let s = Primitive::Sphere { radius_m: 1.0 };
        let t = hit(s, Isometry3::identity(), [0.0; 3], [0.0, 1.0, 0.0]).expect("exit");
        assert!((t - 1.0).abs() < 1e-12);
    }
}
