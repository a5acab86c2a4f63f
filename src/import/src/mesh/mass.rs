//! Mass properties of the solid a closed triangle mesh bounds, at unit density: volume,
//! centroid and inertia tensor about the centroid, by the divergence theorem over the
//! triangles (D. Eberly, "Polyhedral Mass Properties (Revisited)", 2002: exact for any closed,
//! consistently wound mesh). This is how MuJoCo derives a mesh geom's inertia from its volume.

use nalgebra::{Matrix3, Point3, Vector3};

use super::TriMesh;

/// Mass properties of a mesh's solid at unit density (multiply by the density, kg/m³).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// Volume (m³), positive.
    pub volume_m3: f64,
    /// Centroid (m), mesh frame.
    pub centroid_m: Point3<f64>,
    /// Inertia tensor about the centroid per unit density (kg·m² per kg/m³ = m⁵), mesh axes.
    pub inertia_per_density_m5: Matrix3<f64>,
}

/// The triangle's contributions to the ten integrals of 1, x, y, z, x², y², z², xy, yz, zx.
fn subexpressions(w0: f64, w1: f64, w2: f64) -> [f64; 6] {
    let temp0 = w0 + w1;
    let f1 = temp0 + w2;
    let temp1 = w0 * w0;
    let temp2 = temp1 + w1 * temp0;
    let f2 = temp2 + w2 * f1;
    let f3 = w0 * temp1 + w1 * temp2 + w2 * f2;
    let g0 = f2 + w0 * (f1 + w0);
    let g1 = f2 + w1 * (f1 + w1);
    let g2 = f2 + w2 * (f1 + w2);
    [f1, f2, f3, g0, g1, g2]
}

/// The mass properties of the solid the mesh bounds (all parts together), or why there are
/// none: a mesh that encloses no volume (open, flat, or inconsistently wound to nothing). A
/// mesh wound clockwise (inside out) gives the same figures as its mirror, taken positive.
pub fn mass_properties(mesh: &TriMesh) -> Result<MassProperties, String> {
    let mut integral = [0.0f64; 10];
    for part in &mesh.parts {
        for t in &part.triangles {
            let [p0, p1, p2] = t.map(|i| part.vertices_m[i as usize].coords);
            let d = (p1 - p0).cross(&(p2 - p0));
            let [f1x, f2x, f3x, g0x, g1x, g2x] = subexpressions(p0.x, p1.x, p2.x);
            let [_, f2y, f3y, g0y, g1y, g2y] = subexpressions(p0.y, p1.y, p2.y);
            let [_, f2z, f3z, g0z, g1z, g2z] = subexpressions(p0.z, p1.z, p2.z);
            integral[0] += d.x * f1x;
            integral[1] += d.x * f2x;
            integral[2] += d.y * f2y;
            integral[3] += d.z * f2z;
            integral[4] += d.x * f3x;
            integral[5] += d.y * f3y;
            integral[6] += d.z * f3z;
            integral[7] += d.x * (p0.y * g0x + p1.y * g1x + p2.y * g2x);
            integral[8] += d.y * (p0.z * g0y + p1.z * g1y + p2.z * g2y);
            integral[9] += d.z * (p0.x * g0z + p1.x * g1z + p2.x * g2z);
        }
    }
    const SCALE: [f64; 10] = [
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 24.0,
        1.0 / 24.0,
        1.0 / 60.0,
        1.0 / 60.0,
        1.0 / 60.0,
        1.0 / 120.0,
        1.0 / 120.0,
        1.0 / 120.0,
    ];
    for (i, s) in integral.iter_mut().zip(SCALE) {
        *i *= s;
    }
    if integral[0] < 0.0 {
        integral.iter_mut().for_each(|i| *i = -*i);
    }
    let volume = integral[0];
    let extent = mesh
        .vertices()
        .map(|v| v.coords.amax())
        .fold(0.0f64, f64::max);
    // Relative to the bounding cube, a volume at rounding level is no volume.
    if volume.is_nan() || volume <= 1e-12 * extent.powi(3) {
        return Err(format!(
            "it encloses no volume ({volume:e} m³): a mesh whose inertia is computed must be a \
             closed surface wound consistently"
        ));
    }
    let c = Vector3::new(integral[1], integral[2], integral[3]) / volume;
    let xx = integral[5] + integral[6] - volume * (c.y * c.y + c.z * c.z);
    let yy = integral[4] + integral[6] - volume * (c.z * c.z + c.x * c.x);
    let zz = integral[4] + integral[5] - volume * (c.x * c.x + c.y * c.y);
    let xy = -(integral[7] - volume * c.x * c.y);
    let yz = -(integral[8] - volume * c.y * c.z);
    let zx = -(integral[9] - volume * c.z * c.x);
    Ok(MassProperties {
        volume_m3: volume,
        centroid_m: Point3::from(c),
        inertia_per_density_m5: Matrix3::new(xx, xy, zx, xy, yy, yz, zx, yz, zz),
    })
}
