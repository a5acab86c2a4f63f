//! Rigid bodies in maximal coordinates: pose, velocities, mass and principal inertia.

use nalgebra::{Isometry3, Matrix3, Point3, Quaternion, Translation3, UnitQuaternion, Vector3};

use super::shape::Shape;

/// Index of a body in a [`Simulation`](crate::Simulation); index 0 is the fixed ground.
pub type BodyId = usize;

/// The fixed ground body (the marker frame); it has no mass and never moves.
pub const GROUND: BodyId = 0;

/// A rigid body: state in the world frame plus its mass properties.
///
/// Angular velocity is expressed in the world frame. The inertia tensor is diagonal in the
/// principal frame, whose orientation in the body frame is `body_from_principal`.
#[derive(Clone, Debug)]
pub struct Body {
    /// Unique name from the scene file (`"ground"` for the ground).
    pub name: String,
    /// Mass (kg); zero for the ground.
    pub mass_kg: f64,
    /// Principal moments of inertia about the centre of mass (kg·m²).
    pub principal_inertia_kg_m2: Vector3<f64>,
    /// Orientation of the principal axes in the body frame.
    pub body_from_principal: UnitQuaternion<f64>,
    /// Visual shape (none for the ground): what collides, what the wind sees, and what is
    /// drawn unless the body has `visuals`.
    pub shape: Option<Shape>,
    /// What is drawn instead of `shape` when not empty (meshes, several parts); the solver
    /// never reads them. Shared: the rig copies bodies into every snapshot.
    pub visuals: std::sync::Arc<[super::visual::Visual]>,
    /// Position of the centre of mass (= body frame origin) in the world (m).
    pub position_in_world: Vector3<f64>,
    /// Orientation `world_from_body`.
    pub world_from_body_rotation: UnitQuaternion<f64>,
    /// Linear velocity of the centre of mass (m/s, world).
    pub linear_velocity_in_world: Vector3<f64>,
    /// Angular velocity (rad/s, world).
    pub angular_velocity_in_world: Vector3<f64>,
    /// Linear drag coefficient c of the medium (N·s/m): the force −c v acts on the centre
    /// of mass, explicitly from the velocity at the start of each step (stable while
    /// h c / m < 2), its work booked as external work. Zero (the default) for scene bodies;
    /// deformable elements use it to settle (see [`crate::deformable`]).
    pub drag_n_s_per_m: f64,
    pub(crate) inv_mass: f64,
    pub(crate) inv_principal_inertia: Vector3<f64>,
}

impl Body {
    /// The fixed ground body at the world origin.
    pub fn ground() -> Self {
        Self {
            name: "ground".to_owned(),
            mass_kg: 0.0,
            principal_inertia_kg_m2: Vector3::zeros(),
            body_from_principal: UnitQuaternion::identity(),
            shape: None,
            visuals: std::sync::Arc::new([]),
            position_in_world: Vector3::zeros(),
            world_from_body_rotation: UnitQuaternion::identity(),
            linear_velocity_in_world: Vector3::zeros(),
            angular_velocity_in_world: Vector3::zeros(),
            drag_n_s_per_m: 0.0,
            inv_mass: 0.0,
            inv_principal_inertia: Vector3::zeros(),
        }
    }

    /// A dynamic body at rest. Mass and inertia must be positive (the scene loader checks).
    pub fn new(
        name: impl Into<String>,
        mass_kg: f64,
        principal_inertia_kg_m2: Vector3<f64>,
        body_from_principal: UnitQuaternion<f64>,
        world_from_body: Isometry3<f64>,
        shape: Option<Shape>,
    ) -> Self {
        Self {
            name: name.into(),
            mass_kg,
            principal_inertia_kg_m2,
            body_from_principal,
            shape,
            visuals: std::sync::Arc::new([]),
            position_in_world: world_from_body.translation.vector,
            world_from_body_rotation: world_from_body.rotation,
            linear_velocity_in_world: Vector3::zeros(),
            angular_velocity_in_world: Vector3::zeros(),
            drag_n_s_per_m: 0.0,
            inv_mass: 1.0 / mass_kg,
            inv_principal_inertia: principal_inertia_kg_m2.map(|i| 1.0 / i),
        }
    }

    /// Whether this body moves (the ground does not).
    pub fn is_dynamic(&self) -> bool {
        self.inv_mass > 0.0
    }

    /// The body pose `world_from_body`.
    pub fn world_from_body(&self) -> Isometry3<f64> {
        Isometry3::from_parts(
            Translation3::from(self.position_in_world),
            self.world_from_body_rotation,
        )
    }

    /// A point given in the body frame, expressed in the world frame.
    pub fn point_in_world(&self, point_in_body: &Vector3<f64>) -> Point3<f64> {
        Point3::from(self.position_in_world + self.world_from_body_rotation * point_in_body)
    }

    /// Sets `inertia` and `inverse` to the inertia tensor about the centre of mass and its
    /// inverse, in the world frame at the current orientation (in place: the solver makes
    /// them for every body every step).
    pub(crate) fn set_inertia_and_inverse_in_world(
        &self,
        inertia: &mut Matrix3<f64>,
        inverse: &mut Matrix3<f64>,
    ) {
        let world_from_principal = self.world_from_principal().to_rotation_matrix();
        let r = world_from_principal.matrix();
        *inertia = rotate_diagonal(r, &self.principal_inertia_kg_m2);
        *inverse = rotate_diagonal(r, &self.inv_principal_inertia);
    }

    /// Whether the pose and the velocities are all finite. (The solver asks this of every
    /// body after every step, so it is one branch-free sum: x · 0 is ±0 for every finite x
    /// and NaN for NaN or ±∞.) [`Self::non_finite_state`] names the part that is not.
    pub fn state_is_finite(&self) -> bool {
        let zero = |v: &[f64]| v.iter().fold(0.0, |s, x| s + x * 0.0);
        zero(self.position_in_world.as_slice())
            + zero(self.world_from_body_rotation.coords.as_slice())
            + zero(self.linear_velocity_in_world.as_slice())
            + zero(self.angular_velocity_in_world.as_slice())
            == 0.0
    }

    /// The first part of the state that is NaN or infinite ("position", "orientation",
    /// "velocity", "angular velocity"), if any.
    pub fn non_finite_state(&self) -> Option<&'static str> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        [
            ("position", finite(self.position_in_world.as_slice())),
            (
                "orientation",
                finite(self.world_from_body_rotation.coords.as_slice()),
            ),
            ("velocity", finite(self.linear_velocity_in_world.as_slice())),
            (
                "angular velocity",
                finite(self.angular_velocity_in_world.as_slice()),
            ),
        ]
        .into_iter()
        .find(|(_, ok)| !ok)
        .map(|(what, _)| what)
    }

    /// The orientation of the principal axes in the world.
    fn world_from_principal(&self) -> UnitQuaternion<f64> {
        // A principal frame that is the body frame (most bodies) leaves the product equal to
        // the body's rotation bit for bit: skipped, as the solver asks for it every step.
        if self.body_from_principal == UnitQuaternion::identity() {
            self.world_from_body_rotation
        } else {
            self.world_from_body_rotation * self.body_from_principal
        }
    }

    /// Kinetic energy ½ m v² + ½ ωᵀ I ω (J).
    pub fn kinetic_energy_j(&self) -> f64 {
        if !self.is_dynamic() {
            return 0.0;
        }
        let w_principal = self
            .world_from_principal()
            .inverse_transform_vector(&self.angular_velocity_in_world);
        0.5 * self.mass_kg * self.linear_velocity_in_world.norm_squared()
            + 0.5
                * (self.principal_inertia_kg_m2.x * w_principal.x * w_principal.x
                    + self.principal_inertia_kg_m2.y * w_principal.y * w_principal.y
                    + self.principal_inertia_kg_m2.z * w_principal.z * w_principal.z)
    }
}

/// R diag(d) Rᵀ, with the products that are zero left out (the same sums, in the same order,
/// as the full matrix products: the solver calls this for every body every step).
fn rotate_diagonal(r: &Matrix3<f64>, d: &Vector3<f64>) -> Matrix3<f64> {
    let rd = Matrix3::from_fn(|i, k| r[(i, k)] * d[k]);
    Matrix3::from_fn(|i, j| {
        rd[(i, 0)] * r[(j, 0)] + rd[(i, 1)] * r[(j, 1)] + rd[(i, 2)] * r[(j, 2)]
    })
}

/// Advances an orientation by a world angular velocity over `dt_secs` with the quaternion
/// update `q + dt/2 · ω ⊗ q`, renormalised. This is exactly the Cayley map (a rotation by
/// 2·atan(|ω| dt/2) about ω), which the exact-work property of the midpoint Jacobians relies
/// on. The solver uses this one function both to predict and to integrate, so predicted and
/// integrated poses agree bit for bit.
#[inline]
pub(crate) fn advance_rotation(
    q: &UnitQuaternion<f64>,
    angular_velocity_in_world: &Vector3<f64>,
    dt_secs: f64,
) -> UnitQuaternion<f64> {
    let (turned, norm_squared) = turn_rotation(q, angular_velocity_in_world, dt_secs);
    normalise_turned(&turned, 1.0 / norm_squared.sqrt())
}

/// [`advance_rotation`] before its normalisation: q + dt/2 · ω ⊗ q and its squared norm.
#[inline]
fn turn_rotation(
    q: &UnitQuaternion<f64>,
    angular_velocity_in_world: &Vector3<f64>,
    dt_secs: f64,
) -> (Quaternion<f64>, f64) {
    let w = angular_velocity_in_world * (0.5 * dt_secs);
    let (qv, qs) = (q.imag(), q.w);
    // q + (0, w) ⊗ q = (qs − w·qv, qv + qs w + w × qv), written out: the quaternion product
    // with a pure quaternion, as this runs several times per body and step.
    let s = qs - w.dot(&qv);
    let v = qv + w * qs + w.cross(&qv);
    (Quaternion::from_parts(s, v), s * s + v.norm_squared())
}

/// The end of [`advance_rotation`]: the turned quaternion times 1/|q|.
#[inline]
fn normalise_turned(turned: &Quaternion<f64>, inv_norm: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::new_unchecked(Quaternion::from_parts(
        turned.w * inv_norm,
        turned.imag() * inv_norm,
    ))
}

/// A body pose in the form the constraint code needs: position, quaternion and its matrix.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pose {
    pub(crate) x: Vector3<f64>,
    pub(crate) q: UnitQuaternion<f64>,
    pub(crate) r: Matrix3<f64>,
}

impl Pose {
    pub(crate) fn new(x: Vector3<f64>, q: UnitQuaternion<f64>) -> Self {
        Self {
            x,
            q,
            r: *q.to_rotation_matrix().matrix(),
        }
    }

    pub(crate) fn of(body: &Body) -> Self {
        Self::new(body.position_in_world, body.world_from_body_rotation)
    }

    /// Sets this pose to the one reached after `dt_secs` from `start` with the mean of the start
    /// velocities (`v0`, `w0`) and the body's current ones (implicit midpoint rule), in place,
    /// as the solver predicts every body several times per step; up to the normalisation of
    /// the orientation. Returns the squared norm that [`Self::finish_predicted`] divides out
    /// (the solver takes the square roots and divisions of all bodies in one pass, which runs
    /// them side by side instead of waiting on each). `q` is not a unit quaternion until then.
    pub(crate) fn set_predicted_unnormalised(
        &mut self,
        start: &Pose,
        v0: &Vector3<f64>,
        w0: &Vector3<f64>,
        body: &Body,
        dt_secs: f64,
    ) -> f64 {
        let half = 0.5 * dt_secs;
        self.x = start.x + (v0 + body.linear_velocity_in_world) * half;
        let (turned, norm_squared) =
            turn_rotation(&start.q, &(w0 + body.angular_velocity_in_world), half);
        self.q = UnitQuaternion::new_unchecked(turned);
        norm_squared
    }

    /// Completes [`Self::set_predicted_unnormalised`] with 1/|q|: the same bits as
    /// [`advance_rotation`].
    pub(crate) fn finish_predicted(&mut self, inv_norm: f64) {
        self.q = normalise_turned(self.q.quaternion(), inv_norm);
        self.r = *self.q.to_rotation_matrix().matrix();
    }
}
