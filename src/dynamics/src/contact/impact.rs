//! The impulse of one impact at a contact (Newton's restitution, Mirtich's friction
//! prediction: the virtual-mobile paper's §6), which the impact stage applies one contact at
//! a time (`crate::solver::contact::impacts`).

use nalgebra::{Matrix3, Vector2, Vector3};

use super::lcp::{InverseMass, Row};

/// A contact's three rows' J M⁻¹ Jᵀ (the impact impulse's matrix, [`impact_impulse`]).
pub fn contact_delassus(rows: &[Row; 3], m: &[InverseMass]) -> Matrix3<f64> {
    Matrix3::from_fn(|i, j| rows[i].coupling(&rows[j], m))
}

/// The impulse of one impact at a contact (Newton's restitution e on the normal relative
/// velocity `u`, friction by Mirtich's prediction): the sticking impulse if it lies in the
/// cone, else the sliding one. `k` is the contact's [`contact_delassus`]. Returns the impulse
/// in (n, t₁, t₂) coordinates.
pub fn impact_impulse(k: &Matrix3<f64>, u: [f64; 3], e: f64, mu: f64) -> [f64; 3] {
    let k = *k;
    let target = Vector3::new(-(1.0 + e) * u[0], -u[1], -u[2]);
    if mu > 0.0 {
        if let Some(kinv) = k.try_inverse() {
            let p = kinv * target;
            if p.x >= 0.0 && p.y.hypot(p.z) <= mu * p.x {
                return [p.x, p.y, p.z];
            }
        }
    }
    // Sliding (or frictionless): P = Pₙ (n − μ ŝ), ŝ the slip direction.
    let slip = Vector2::new(u[1], u[2]);
    let s = if mu > 0.0 && slip.norm() > 1.0e-12 {
        slip.normalize()
    } else {
        Vector2::zeros()
    };
    let col = Vector3::new(1.0, -mu * s.x, -mu * s.y);
    let kn = (k * col).x;
    if kn <= 0.0 {
        return [0.0; 3];
    }
    let pn = (target.x / kn).max(0.0);
    [pn, col.y * pn, col.z * pn]
}
