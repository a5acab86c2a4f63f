//! Grab points: named body points the stylus can clip to.

use nalgebra::Vector3;

use super::body::BodyId;

/// A named point of a body where the user may clip the stylus.
#[derive(Clone, Debug, PartialEq)]
pub struct GrabPoint {
    /// Name from the scene file.
    pub name: String,
    /// The body it belongs to.
    pub body: BodyId,
    /// The point in the body frame (m).
    pub point_in_body: Vector3<f64>,
}
