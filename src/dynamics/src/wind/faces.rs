//! Faces of a primitive: small surface patches with a centre, an outward normal and an area,
//! on which the wind pushes.
//!
//! Flat faces are cut into a grid, curved surfaces into latitude/longitude patches, so that
//! no patch is much larger than `max_patch_m` along an edge. Patch areas are exact (they sum
//! to the surface area); each centre lies on the surface, with the normal there.

use super::primitive::Primitive;
use nalgebra::{Isometry3, Point3, Unit, Vector3};
use std::f64::consts::PI;

/// A surface patch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Face {
    /// Centre of the patch (m).
    pub centre: Point3<f64>,
    /// Outward unit normal.
    pub normal: Unit<Vector3<f64>>,
    /// Area (m²).
    pub area_m2: f64,
}

impl Face {
    /// The same face seen through `a_from_b` (the face given in frame b).
    pub fn transformed(&self, a_from_b: &Isometry3<f64>) -> Face {
        Face {
            centre: a_from_b * self.centre,
            normal: a_from_b.rotation * self.normal,
            area_m2: self.area_m2,
        }
    }
}

fn count(length_m: f64, max_patch_m: f64, at_least: usize) -> usize {
    let n = (length_m / max_patch_m).ceil();
    // `as` saturates; the cap keeps a tiny max_patch_m from exploding the face count.
    (n as usize).clamp(at_least, 64)
}

/// The faces of `prim` in its body frame, patches no longer than about `max_patch_m`.
pub fn body_faces(prim: &Primitive, max_patch_m: f64) -> Vec<Face> {
    let max_patch_m = if max_patch_m.is_finite() && max_patch_m > 0.0 {
        max_patch_m
    } else {
        f64::INFINITY
    };
    let mut out = Vec::new();
    match *prim {
        Primitive::Cuboid { half_extents_m: h } => {
            for axis in 0..3 {
                let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                let (nu, nv) = (
                    count(2.0 * h[u], max_patch_m, 1),
                    count(2.0 * h[v], max_patch_m, 1),
                );
                let (du, dv) = (2.0 * h[u] / nu as f64, 2.0 * h[v] / nv as f64);
                for sign in [1.0, -1.0] {
                    let mut n = Vector3::zeros();
                    n[axis] = sign;
                    for i in 0..nu {
                        for j in 0..nv {
                            let mut c = Vector3::zeros();
                            c[axis] = sign * h[axis];
                            c[u] = -h[u] + (i as f64 + 0.5) * du;
                            c[v] = -h[v] + (j as f64 + 0.5) * dv;
                            out.push(Face {
                                centre: c.into(),
                                normal: Unit::new_unchecked(n),
                                area_m2: du * dv,
                            });
                        }
                    }
                }
            }
        }
        Primitive::Sphere { radius_m: r } => {
            hemisphere_patches(r, 0.0, true, true, max_patch_m, &mut out)
        }
        Primitive::Cylinder {
            radius_m: r,
            half_length_m: h,
        } => {
            side_patches(r, h, max_patch_m, &mut out);
            for sign in [1.0, -1.0] {
                disc_patches(r, sign * h, sign, max_patch_m, &mut out);
            }
        }
        Primitive::Capsule {
            radius_m: r,
            half_length_m: h,
        } => {
            side_patches(r, h, max_patch_m, &mut out);
            hemisphere_patches(r, h, true, false, max_patch_m, &mut out);
            hemisphere_patches(r, -h, false, true, max_patch_m, &mut out);
        }
    }
    out
}

/// The curved wall of a cylinder of radius r along z, |z| ≤ h.
fn side_patches(r: f64, h: f64, max_patch_m: f64, out: &mut Vec<Face>) {
    let n_theta = count(2.0 * PI * r, max_patch_m, 8);
    let n_z = count(2.0 * h, max_patch_m, 1);
    let d_theta = 2.0 * PI / n_theta as f64;
    let dz = 2.0 * h / n_z as f64;
    for i in 0..n_theta {
        let theta = (i as f64 + 0.5) * d_theta;
        let n = Vector3::new(theta.cos(), theta.sin(), 0.0);
        for j in 0..n_z {
            let z = -h + (j as f64 + 0.5) * dz;
            out.push(Face {
                centre: Point3::new(r * n.x, r * n.y, z),
                normal: Unit::new_unchecked(n),
                area_m2: r * d_theta * dz,
            });
        }
    }
}

/// A flat disc of radius r at height z facing `sign`·z, in rings and sectors.
fn disc_patches(r: f64, z: f64, sign: f64, max_patch_m: f64, out: &mut Vec<Face>) {
    let n_r = count(r, max_patch_m, 1);
    let n_theta = count(2.0 * PI * r, max_patch_m, 8);
    let d_theta = 2.0 * PI / n_theta as f64;
    for k in 0..n_r {
        let (r0, r1) = (r * k as f64 / n_r as f64, r * (k + 1) as f64 / n_r as f64);
        // The radius that splits the ring's area in two.
        let rc = ((r0 * r0 + r1 * r1) / 2.0).sqrt();
        for i in 0..n_theta {
            let theta = (i as f64 + 0.5) * d_theta;
            out.push(Face {
                centre: Point3::new(rc * theta.cos(), rc * theta.sin(), z),
                normal: Unit::new_unchecked(Vector3::new(0.0, 0.0, sign)),
                area_m2: 0.5 * d_theta * (r1 * r1 - r0 * r0),
            });
        }
    }
}

/// Sphere patches of radius r centred at (0, 0, z0): the upper half (normals with z ≥ 0)
/// and/or the lower half.
fn hemisphere_patches(
    r: f64,
    z0: f64,
    upper: bool,
    lower: bool,
    max_patch_m: f64,
    out: &mut Vec<Face>,
) {
    let n_lat = count(PI * r / 2.0, max_patch_m, 2);
    let n_lon = count(2.0 * PI * r, max_patch_m, 8);
    let d_lon = 2.0 * PI / n_lon as f64;
    // Polar angle bands: [0, π/2] for the upper half, [π/2, π] for the lower.
    let halves = [(upper, 0.0), (lower, PI / 2.0)];
    for (wanted, start) in halves {
        if !wanted {
            continue;
        }
        for k in 0..n_lat {
            let t0 = start + (PI / 2.0) * k as f64 / n_lat as f64;
            let t1 = start + (PI / 2.0) * (k + 1) as f64 / n_lat as f64;
            let area = r * r * d_lon * (t0.cos() - t1.cos());
            let tc = 0.5 * (t0 + t1);
            for i in 0..n_lon {
                let phi = (i as f64 + 0.5) * d_lon;
                let n = Vector3::new(tc.sin() * phi.cos(), tc.sin() * phi.sin(), tc.cos());
                out.push(Face {
                    centre: Point3::new(r * n.x, r * n.y, z0 + r * n.z),
                    normal: Unit::new_unchecked(n),
                    area_m2: area,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prims() -> [Primitive; 4] {
        [
            Primitive::Cuboid {
                half_extents_m: [0.05, 0.02, 0.001],
            },
            Primitive::Sphere { radius_m: 0.03 },
            Primitive::Cylinder {
                radius_m: 0.004,
                half_length_m: 0.1,
            },
            Primitive::Capsule {
                radius_m: 0.01,
                half_length_m: 0.05,
            },
        ]
    }

    #[test]
    fn patch_areas_sum_to_the_surface_area_and_net_normal_area_vanishes() {
        for p in prims() {
            let faces = body_faces(&p, 0.01);
            let total: f64 = faces.iter().map(|f| f.area_m2).sum();
            assert!(
                (total / p.surface_area_m2() - 1.0).abs() < 1e-12,
                "{p:?}: {total}"
            );
            // A closed surface: Σ A n = 0 (the patch normals are at patch centres, so only
            // approximately for curved patches).
            let net: Vector3<f64> = faces
                .iter()
                .map(|f| f.normal.into_inner() * f.area_m2)
                .sum();
            assert!(net.norm() < 1e-9 * total.max(1.0), "{p:?}: {net:?}");
        }
    }

    #[test]
    fn centres_lie_on_the_surface_with_outward_normals() {
        for p in prims() {
            for f in body_faces(&p, 0.01) {
                let c = f.centre.coords;
                // Just outside along the normal is outside; just inside is inside.
                let out = super::super::raycast::ray_hit(
                    &p,
                    &Isometry3::identity(),
                    &(f.centre + f.normal.into_inner() * 1e-6),
                    &f.normal,
                );
                assert!(out.is_none(), "{p:?}: ray outward from {c:?} re-enters");
                assert!(c.norm() > 0.0);
            }
        }
    }

    #[test]
    fn big_faces_are_cut_to_the_patch_size() {
        let plate = Primitive::Cuboid {
            half_extents_m: [0.05, 0.03, 0.001],
        };
        let faces = body_faces(&plate, 0.02);
        // ±z faces: 5 × 3 patches each; ±x: 3 × 1; ±y: 1 × 5.
        assert_eq!(faces.len(), 2 * 15 + 2 * 3 + 2 * 5);
    }
}
