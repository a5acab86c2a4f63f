//! Mass properties: a link's inertia checked (finite, symmetric, positive definite, the
//! triangle inequality every rigid body obeys), links merged by the parallel-axis theorem, and
//! the principal moments and axes the scene format takes.

use nalgebra::{Matrix3, Rotation3, SymmetricEigen, UnitQuaternion, Vector3};

use crate::error::ImportError;
use crate::model::Link;

/// Relative tolerance of the symmetry and triangle-inequality checks (a thin rod or plate
/// reaches equality in the triangle inequality; files round their numbers).
const TOLERANCE: f64 = 1e-6;

/// Mass, centre of mass and inertia about it, in one frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MassProps {
    /// kg
    pub mass_kg: f64,
    /// Centre of mass in the frame.
    pub com: Vector3<f64>,
    /// Inertia tensor about the centre of mass, in the frame's axes.
    pub inertia: Matrix3<f64>,
}

fn link_error(link: &Link, message: String) -> ImportError {
    ImportError::Invalid {
        at: link.at.clone(),
        element: format!("link \"{}\"", link.name),
        message,
    }
}

/// Checks a link's mass and inertia: a finite mass ≥ 0 and, with mass, a finite symmetric
/// positive-definite tensor whose principal moments obey the triangle inequality.
pub(crate) fn check_link(link: &Link) -> Result<(), ImportError> {
    let m = link.mass_kg;
    if !(m.is_finite() && m >= 0.0) {
        return Err(link_error(
            link,
            format!("mass {m} kg: must be finite and ≥ 0"),
        ));
    }
    if !link.com_in_link.iter().all(|x| x.is_finite()) {
        return Err(link_error(link, "the centre of mass is not finite".into()));
    }
    if m == 0.0 {
        return Ok(());
    }
    let i = &link.inertia_in_link_kg_m2;
    if !i.iter().all(|x| x.is_finite()) {
        return Err(link_error(link, "the inertia tensor is not finite".into()));
    }
    let scale = i.abs().max();
    if (i - i.transpose()).abs().max() > TOLERANCE * scale {
        return Err(link_error(
            link,
            format!("the inertia tensor is not symmetric: {i:?}"),
        ));
    }
    let moments = SymmetricEigen::new(*i).eigenvalues;
    if moments.iter().any(|&x| x <= 0.0) {
        return Err(link_error(
            link,
            format!(
                "the inertia tensor is not positive definite (principal moments {:?} kg·m²; \
                 a link with mass needs a positive inertia)",
                moments.as_slice()
            ),
        ));
    }
    if let Some(msg) = triangle_problem(&moments) {
        return Err(link_error(link, msg));
    }
    Ok(())
}

/// Why principal moments belong to no rigid body, if they do not.
pub(crate) fn triangle_problem(moments: &Vector3<f64>) -> Option<String> {
    (0..3).find_map(|k| {
        let (a, b, c) = (moments[k], moments[(k + 1) % 3], moments[(k + 2) % 3]);
        (a > (b + c) * (1.0 + TOLERANCE)).then(|| {
            format!(
                "no rigid body has the principal moments {:?} kg·m²: {a} > {b} + {c} (each \
                 moment must be at most the sum of the other two)",
                moments.as_slice()
            )
        })
    })
}

/// The mass properties of parts given in one frame, combined about their common centre of
/// mass by the parallel-axis theorem: I = Σ Iᵢ + mᵢ (|dᵢ|² E − dᵢ dᵢᵀ), dᵢ = cᵢ − c.
pub(crate) fn combine(parts: &[MassProps]) -> MassProps {
    // One part (the usual link) as it is: the weighted mean would round its numbers.
    let with_mass: Vec<&MassProps> = parts.iter().filter(|p| p.mass_kg > 0.0).collect();
    if let [one] = with_mass.as_slice() {
        return **one;
    }
    let mass_kg: f64 = parts.iter().map(|p| p.mass_kg).sum();
    if mass_kg == 0.0 {
        return MassProps {
            mass_kg,
            com: Vector3::zeros(),
            inertia: Matrix3::zeros(),
        };
    }
    let com = parts
        .iter()
        .fold(Vector3::zeros(), |acc, p| acc + p.com * p.mass_kg)
        / mass_kg;
    let inertia = parts.iter().fold(Matrix3::zeros(), |acc, p| {
        let d = p.com - com;
        acc + p.inertia + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * p.mass_kg
    });
    MassProps {
        mass_kg,
        com,
        inertia: (inertia + inertia.transpose()) * 0.5,
    }
}

/// A link's mass properties moved into another frame: `frame_from_link` maps the link's
/// coordinates into that frame's.
pub(crate) fn moved(link: &Link, frame_from_link: &nalgebra::Isometry3<f64>) -> MassProps {
    let r = frame_from_link.rotation.to_rotation_matrix();
    let r = r.matrix();
    MassProps {
        mass_kg: link.mass_kg,
        com: frame_from_link
            .transform_point(&link.com_in_link.into())
            .coords,
        inertia: r * link.inertia_in_link_kg_m2 * r.transpose(),
    }
}

/// Principal moments (ascending) and the principal axes as a right-handed rotation
/// frame_from_principal.
pub(crate) fn principal(inertia: &Matrix3<f64>) -> (Vector3<f64>, UnitQuaternion<f64>) {
    let eig = SymmetricEigen::new(*inertia);
    let mut idx = [0usize, 1, 2];
    idx.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
    let moments = Vector3::new(
        eig.eigenvalues[idx[0]],
        eig.eigenvalues[idx[1]],
        eig.eigenvalues[idx[2]],
    );
    let mut axes = Matrix3::from_columns(&[
        eig.eigenvectors.column(idx[0]).into_owned(),
        eig.eigenvectors.column(idx[1]).into_owned(),
        eig.eigenvectors.column(idx[2]).into_owned(),
    ]);
    if axes.determinant() < 0.0 {
        axes.set_column(2, &(-axes.column(2)));
    }
    // The tensor is already diagonal (the usual case): keep the link's own axes, so that the
    // scene says `inertia_rotation_rad = [0, 0, 0]` and the moments stay in x, y, z order.
    let off = inertia.abs() - Matrix3::from_diagonal(&inertia.diagonal().abs());
    if off.max() == 0.0 {
        return (inertia.diagonal(), UnitQuaternion::identity());
    }
    let rot = Rotation3::from_matrix_unchecked(axes);
    (moments, UnitQuaternion::from_rotation_matrix(&rot))
}

/// Edge lengths of the uniform box with these principal moments and mass (the drawn shape of a
/// link without a primitive visual); no edge below a thousandth of the longest.
pub(crate) fn equivalent_box(mass_kg: f64, moments: &Vector3<f64>) -> Vector3<f64> {
    // I₁ = m (b² + c²) / 12 and so on: a² = 6 (I₂ + I₃ − I₁) / m.
    let edge = |k: usize| {
        let (a, b, c) = (moments[k], moments[(k + 1) % 3], moments[(k + 2) % 3]);
        (6.0 * (b + c - a) / mass_kg).max(0.0).sqrt()
    };
    let e = Vector3::new(edge(0), edge(1), edge(2));
    let floor = (e.max() * 1e-3).max(1e-6);
    e.map(|x| x.max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_axis_of_two_points_on_x() {
        let point = |x: f64| MassProps {
            mass_kg: 1.0,
            com: Vector3::new(x, 0.0, 0.0),
            inertia: Matrix3::identity() * 1e-3,
        };
        let c = combine(&[point(0.0), point(2.0)]);
        assert_eq!(c.mass_kg, 2.0);
        assert_eq!(c.com, Vector3::new(1.0, 0.0, 0.0));
        // Each at distance 1 from the centre: + m d² about y and z, nothing about x.
        assert!(
            (c.inertia - Matrix3::from_diagonal(&Vector3::new(2e-3, 2.002, 2.002)))
                .abs()
                .max()
                < 1e-15
        );
    }

    #[test]
    fn principal_axes_are_right_handed_and_diagonalise() {
        let r = Rotation3::from_euler_angles(0.3, -0.7, 1.1);
        let d = Matrix3::from_diagonal(&Vector3::new(1.0, 2.0, 2.5));
        let i = r.matrix() * d * r.matrix().transpose();
        let (m, q) = principal(&i);
        assert!((m - Vector3::new(1.0, 2.0, 2.5)).norm() < 1e-12);
        let a = q.to_rotation_matrix();
        assert!((a.matrix().transpose() * i * a.matrix() - d).abs().max() < 1e-12);
        assert!((a.matrix().determinant() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn equivalent_box_has_the_moments() {
        let (m, s) = (2.0, Vector3::new(0.1, 0.2, 0.3));
        let moments = Vector3::new(
            m * (s.y * s.y + s.z * s.z) / 12.0,
            m * (s.x * s.x + s.z * s.z) / 12.0,
            m * (s.x * s.x + s.y * s.y) / 12.0,
        );
        assert!((equivalent_box(m, &moments) - s).norm() < 1e-12);
    }
}
