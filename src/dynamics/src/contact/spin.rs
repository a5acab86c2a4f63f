//! Spin (torsional) friction of a contact: the row of the two bodies' relative angular
//! velocity about the contact normal, whose impulse (a torque impulse, N·m·s) is bounded by
//! the pair's `spin_friction_m` times the normal impulse (MuJoCo's `condim = 4`, as a box
//! bound apart from the friction disc). The dense active set ([`super::lcp`]) and the sparse
//! sweeps ([`super::sparse_pgs`]) take it; the solves through joints and springs do not, and
//! scenes that would need them are refused (`crate::scene`'s contact checks).

use nalgebra::Vector3;

use super::lcp::{ContactRows, Row};

/// A contact's spin friction: the row of the relative angular velocity about the normal
/// ([`ContactRows::spin_row`]), whose impulse (N·m·s) is bounded by `mu_m` times the normal
/// impulse.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spin {
    /// Spin friction coefficient (m); 0: the contact takes no spin impulse.
    pub mu_m: f64,
    /// The spin row's velocity before the contact impulses (rad/s).
    pub u0: f64,
    /// The spin at the start of the step (rad/s).
    pub start: f64,
}

impl Spin {
    /// No spin friction.
    pub const NONE: Spin = Spin {
        mu_m: 0.0,
        u0: 0.0,
        start: 0.0,
    };
}

impl ContactRows {
    /// The spin row: body 2's angular velocity relative to body 1's about the normal (a pure
    /// angular row; its impulse is a torque impulse about the normal).
    pub fn spin_row(&self) -> Row {
        spin_row(&self.rows[0])
    }
}

/// The spin row about a normal row's direction, between its bodies.
pub fn spin_row(normal: &Row) -> Row {
    Row {
        body1: normal.body1,
        body2: normal.body2,
        dir: Vector3::zeros(),
        ang1: normal.dir,
        ang2: normal.dir,
    }
}

/// The spin friction state of a handled contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum SpinFriction {
    /// No spin friction (μ_spin = 0).
    None,
    /// No spin: an equality row, |λ_spin| ≤ μ_spin λₙ.
    Stick,
    /// Spinning with this sign: spin impulse −sign μ_spin λₙ.
    Slide(f64),
}

/// The state a contact's spin friction starts a solve in: spinning the way it spins at the
/// start of the step, or sticking.
pub(super) fn initial_spin(c: &ContactRows) -> SpinFriction {
    if c.spin.mu_m <= 0.0 {
        SpinFriction::None
    } else if c.spin.start.abs() > 1.0e-9 {
        SpinFriction::Slide(c.spin.start.signum())
    } else {
        SpinFriction::Stick
    }
}

/// The spin row's residual (rad/s) at spin impulse `spin` within ±`bound` (μ_spin λₙ) and spin
/// velocity `u`: sticking inside the bound, the spin itself; on the bound, a spin along the
/// impulse (the friction torque must oppose the spin). Zero when the bound is (unloaded).
pub fn spin_residual(bound: f64, spin: f64, u: f64) -> f64 {
    if bound <= 0.0 {
        0.0
    } else if spin.abs() < bound * (1.0 - 1.0e-9) {
        u.abs()
    } else {
        (u * spin.signum()).max(0.0)
    }
}
