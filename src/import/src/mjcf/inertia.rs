//! Mass properties of MJCF geoms, as MuJoCo's compiler derives a body's inertia when it has no
//! `<inertial>`: each geom's mass is its `mass`, or `density` (default 1000 kg/m³) times its
//! volume; the body's mass, centre of mass and inertia are the geoms' sums by the
//! parallel-axis theorem. The closed forms are those of solid bodies (a capsule's two
//! hemispheres are exact, as MuJoCo's are).

use std::f64::consts::PI;

use nalgebra::{Isometry3, Matrix3, Vector3};

use crate::model::GeomShape;

/// The mass properties of one geom or of a body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProps {
    /// Mass (kg).
    pub mass_kg: f64,
    /// Centre of mass in the frame the props are given in.
    pub com: Vector3<f64>,
    /// Inertia about the centre of mass, in that frame's axes (kg·m²).
    pub inertia_kg_m2: Matrix3<f64>,
}

impl MassProps {
    /// No mass.
    pub fn zero() -> Self {
        MassProps {
            mass_kg: 0.0,
            com: Vector3::zeros(),
            inertia_kg_m2: Matrix3::zeros(),
        }
    }
}

/// The volume of a shape (m³); `None` for shapes without one (a plane) or not known here (a
/// mesh).
pub fn volume(shape: &GeomShape) -> Option<f64> {
    Some(match *shape {
        GeomShape::Sphere { radius: r } => 4.0 / 3.0 * PI * r.powi(3),
        GeomShape::Capsule { radius: r, length } => {
            PI * r * r * length + 4.0 / 3.0 * PI * r.powi(3)
        }
        GeomShape::Ellipsoid { radii: a } => 4.0 / 3.0 * PI * a.x * a.y * a.z,
        GeomShape::Cylinder { radius: r, length } => PI * r * r * length,
        GeomShape::Box { size } => size.x * size.y * size.z,
        GeomShape::Plane | GeomShape::Mesh { .. } => return None,
    })
}

/// The principal moments of a solid shape of mass `m` about its centre, in its own axes
/// (a cylinder's and capsule's axis is z).
pub fn principal_moments(shape: &GeomShape, m: f64) -> Option<Vector3<f64>> {
    Some(match *shape {
        GeomShape::Sphere { radius: r } => Vector3::repeat(0.4 * m * r * r),
        GeomShape::Capsule {
            radius: r,
            length: h,
        } => {
            let (v_cyl, v_sph) = (PI * r * r * h, 4.0 / 3.0 * PI * r.powi(3));
            let (m_cyl, m_sph) = (m * v_cyl / (v_cyl + v_sph), m * v_sph / (v_cyl + v_sph));
            // Each hemisphere's centre is 3r/8 beyond its flat face, at h/2 from the centre.
            let across = m_cyl * (3.0 * r * r + h * h) / 12.0
                + m_sph * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0);
            let along = m_cyl * r * r / 2.0 + m_sph * 0.4 * r * r;
            Vector3::new(across, across, along)
        }
        GeomShape::Ellipsoid { radii: a } => Vector3::new(
            m * (a.y * a.y + a.z * a.z) / 5.0,
            m * (a.x * a.x + a.z * a.z) / 5.0,
            m * (a.x * a.x + a.y * a.y) / 5.0,
        ),
        GeomShape::Cylinder {
            radius: r,
            length: h,
        } => {
            let across = m * (3.0 * r * r + h * h) / 12.0;
            Vector3::new(across, across, m * r * r / 2.0)
        }
        GeomShape::Box { size: s } => Vector3::new(
            m * (s.y * s.y + s.z * s.z) / 12.0,
            m * (s.x * s.x + s.z * s.z) / 12.0,
            m * (s.x * s.x + s.y * s.y) / 12.0,
        ),
        GeomShape::Plane | GeomShape::Mesh { .. } => return None,
    })
}

/// The mass properties of a geom of mass `m` placed at `link_from_geom`, in the link frame.
pub fn geom_props(shape: &GeomShape, m: f64, link_from_geom: &Isometry3<f64>) -> Option<MassProps> {
    let moments = principal_moments(shape, m)?;
    let r = link_from_geom.rotation.to_rotation_matrix();
    Some(MassProps {
        mass_kg: m,
        com: link_from_geom.translation.vector,
        inertia_kg_m2: r.matrix() * Matrix3::from_diagonal(&moments) * r.matrix().transpose(),
    })
}

/// The sum of mass properties given in one frame: total mass, the combined centre of mass and
/// the inertia about it (parallel-axis theorem, I + m (|d|² E − d dᵀ) for each part).
pub fn combine(parts: &[MassProps]) -> MassProps {
    let mass: f64 = parts.iter().map(|p| p.mass_kg).sum();
    if mass <= 0.0 {
        return MassProps::zero();
    }
    let com = parts
        .iter()
        .map(|p| p.com * p.mass_kg)
        .sum::<Vector3<f64>>()
        / mass;
    let inertia = parts
        .iter()
        .map(|p| {
            let d = p.com - com;
            p.inertia_kg_m2
                + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * p.mass_kg
        })
        .sum();
    MassProps {
        mass_kg: mass,
        com,
        inertia_kg_m2: inertia,
    }
}
