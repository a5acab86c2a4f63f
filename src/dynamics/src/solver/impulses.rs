//! Applying impulses: the free motion plus the accumulated impulses along the current rows,
//! the gyroscopic impulse, and turning gathered angular impulses into angular velocity.

use nalgebra::{Matrix3, Vector3};

use super::Step;
use crate::model::body::{Body, BodyId};
use crate::model::joint::{Joint, JointKind, Row};
use crate::model::spring::Spring;

impl Step<'_> {
    /// Keeps the velocities before an update: the row refresh measures its change from them,
    /// and the Newton gain replaces the angular part of any update's change.
    pub(super) fn save_velocities(&mut self) {
        for (snap, b) in self
            .s
            .body
            .velocity_snapshot
            .iter_mut()
            .zip(self.bodies.iter())
        {
            *snap = (b.linear_velocity_in_world, b.angular_velocity_in_world);
        }
    }

    /// Sets the velocities to v_free + M⁻¹ (J̄ᵀ λ + gyroscopic impulse) along the current
    /// rows (the caller re-predicts). The gyroscopic impulse h (I ω̄) × ω̄ of Euler's equation is
    /// taken at the midpoint of the start and the current angular velocity (the iterate the
    /// rows belong to), so a converged step solves the implicit-midpoint Euler equation
    /// I (ω′ − ω) = h (I ω̄) × ω̄ + impulses, whose gyroscopic part does no work
    /// (ω̄ · ((I ω̄) × ω̄) = 0) and keeps |I ω| of a free body.
    pub(super) fn reapply_impulses(&mut self) {
        self.reset_to_free_motion();
        self.apply_accumulated_impulses();
        self.flush_torques(false);
    }

    /// Sets the velocities to v_free plus the gyroscopic impulse's change (see
    /// [`Self::reapply_impulses`]), clears the gathered torques, and sets each body's half
    /// turn φ = (h/2) ω̄ at the current ω̄.
    ///
    /// The elements' world impulses P act on a body at its midpoint orientation
    /// R_m = R₁ + [φ]× R₁ + O(h²), while the velocity stage works with I(R₁); so the flushes
    /// until the next reset apply P − φ × P = R₁R_mᵀP + O(h²) (see `flush_into`). In the body
    /// frame that is J (Ω′ − Ω) = h (J Ω̄) × Ω̄ + R_mᵀP + O(h³), the implicit midpoint rule:
    /// second order. With P itself, i.e. R₁ᵀP in the body, the torques' direction lagged by
    /// half a step's turn, and the step was first order once the motion left a plane
    /// (tests/dynamics/convergence.rs). As φ ∥ ω̄, ω̄ · (P − φ × P) = ω̄ · P: the impulses' work, and with
    /// it the energy identity, are unchanged. The gyroscopic impulse is frame-independent (the
    /// same in the start and the midpoint frame) and is applied as is.
    pub(super) fn reset_to_free_motion(&mut self) {
        let h = self.ctx.h;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            b.linear_velocity_in_world = self.s.body.v_free[i];
            if b.is_dynamic() {
                let w_mid = (self.s.body.w_start[i] + b.angular_velocity_in_world) * 0.5;
                self.s.body.half_turn[i] = w_mid * (0.5 * h);
                self.s.body.torque[i] = Vector3::zeros();
                let gyroscopic = (self.s.body.inertia[i] * w_mid).cross(&w_mid) * h;
                b.angular_velocity_in_world =
                    self.s.body.w_free[i] + self.s.body.inv_inertia[i] * gyroscopic;
            } else {
                b.angular_velocity_in_world = self.s.body.w_free[i];
            }
        }
    }

    /// Adds every element's accumulated impulse λ along its current rows (joints, active
    /// springs, the stylus): the linear parts to the velocities, the angular ones to the
    /// gathered torques (the caller flushes them and re-predicts the end poses).
    pub(super) fn apply_accumulated_impulses(&mut self) {
        for (j, blk) in self.joints.iter().zip(&self.s.joint.blocks) {
            let n = j.rows();
            add_joint_impulses(
                self.bodies,
                &mut self.s.body.torque,
                j,
                &blk.rows[..n],
                &blk.lambda[..n],
            );
        }
        for (s, r) in self.springs.iter().zip(&self.s.spring_rows) {
            if r.active {
                add_spring_impulse(self.bodies, &mut self.s.body.torque, s, &r.row, r.lambda);
            }
        }
        if let Some(s) = self.stylus {
            let blk = &self.s.stylus_block;
            add_stylus_impulse(
                self.bodies,
                &mut self.s.body.torque,
                s.body,
                &blk.arm,
                &blk.lambda,
            );
        }
    }

    /// Turns each body's gathered torque into angular velocity, ω += I⁻¹ τ (or G I⁻¹ τ with
    /// the Newton gain, `gain`), and clears it.
    pub(super) fn flush_torques(&mut self, gain: bool) {
        let inverse = if gain {
            &self.s.newton.solve_inv_inertia
        } else {
            &self.s.body.inv_inertia
        };
        for (((b, t), m), half) in self
            .bodies
            .iter_mut()
            .zip(&mut self.s.body.torque)
            .zip(inverse)
            .zip(&self.s.body.half_turn)
        {
            flush_into(b, t, m, half);
        }
    }

    /// [`Self::flush_torques`] with I⁻¹ for one body (the sweeps update two bodies at a time).
    pub(super) fn flush_torque(&mut self, i: BodyId) {
        flush_into(
            &mut self.bodies[i],
            &mut self.s.body.torque[i],
            &self.s.body.inv_inertia[i],
            &self.s.body.half_turn[i],
        );
    }
}

/// Adds impulses `delta` along `rows` between bodies `b1` and `b2`: the linear parts to their
/// velocities, the angular parts to their gathered torques (see `Step::flush_torques`).
pub(super) fn add_row_impulses(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    b1: BodyId,
    b2: BodyId,
    rows: &[Row],
    delta: &[f64],
) {
    let mut lin = Vector3::zeros();
    for (row, d) in rows.iter().zip(delta) {
        lin += row.lin * *d;
    }
    add_impulses(bodies, torque, b1, b2, lin, rows, delta);
}

/// [`add_row_impulses`] for spring `spring`'s row `row` and impulse `delta`; a spring at the
/// bodies' centres moves only their linear velocities.
pub(super) fn add_spring_impulse(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    spring: &Spring,
    row: &Row,
    delta: f64,
) {
    let (b1, b2) = (spring.body1, spring.body2);
    if !spring.at_centres() {
        add_row_impulses(bodies, torque, b1, b2, std::slice::from_ref(row), &[delta]);
        return;
    }
    let lin = row.lin * delta;
    let body1 = &mut bodies[b1];
    if body1.is_dynamic() {
        body1.linear_velocity_in_world += lin * body1.inv_mass;
    }
    let body2 = &mut bodies[b2];
    if body2.is_dynamic() {
        body2.linear_velocity_in_world -= lin * body2.inv_mass;
    }
}

/// [`add_row_impulses`] for joint `joint`'s rows, whose linear parts are known from its kind
/// (see [`Joint::rows_of`]): the unit axes for the point rows, zero for the angular rows.
/// Leaving out the products by those ones and zeros gives the same sums bit for bit, and the
/// joints' impulses are added several times per step.
pub(super) fn add_joint_impulses(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    joint: &Joint,
    rows: &[Row],
    delta: &[f64],
) {
    let lin = match joint.kind {
        JointKind::Ball | JointKind::Hinge | JointKind::Fixed => {
            Vector3::new(delta[0], delta[1], delta[2])
        }
        JointKind::Prismatic | JointKind::Slot => rows[0].lin * delta[0] + rows[1].lin * delta[1],
    };
    add_impulses(bodies, torque, joint.body1, joint.body2, lin, rows, delta);
}

/// Adds the linear impulse `lin` (on body 1; −`lin` on body 2) to the velocities and the
/// angular parts of `rows` times `delta` to the gathered torques.
#[inline(always)]
fn add_impulses(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    b1: BodyId,
    b2: BodyId,
    lin: Vector3<f64>,
    rows: &[Row],
    delta: &[f64],
) {
    let mut ang1 = Vector3::zeros();
    let mut ang2 = Vector3::zeros();
    for (row, d) in rows.iter().zip(delta) {
        ang1 += row.ang1 * *d;
        ang2 += row.ang2 * *d;
    }
    let body1 = &mut bodies[b1];
    if body1.is_dynamic() {
        body1.linear_velocity_in_world += lin * body1.inv_mass;
        torque[b1] += ang1;
    }
    let body2 = &mut bodies[b2];
    if body2.is_dynamic() {
        body2.linear_velocity_in_world -= lin * body2.inv_mass;
        torque[b2] += ang2;
    }
}

/// ω += m τ for a dynamic body, then τ = 0 (see `Step::flush_torques`).
#[inline]
pub(super) fn flush_into(
    body: &mut Body,
    torque: &mut Vector3<f64>,
    m: &Matrix3<f64>,
    half: &Vector3<f64>,
) {
    if body.is_dynamic() {
        // At the midpoint orientation (see `Step::reset_to_free_motion`).
        body.angular_velocity_in_world += m * (*torque - half.cross(torque));
    }
    *torque = Vector3::zeros();
}

/// Adds the stylus impulse `delta` (world axes) at the arm `arm` of `body`, as
/// [`add_row_impulses`] does.
pub(super) fn add_stylus_impulse(
    bodies: &mut [Body],
    torque: &mut [Vector3<f64>],
    body: BodyId,
    arm: &Vector3<f64>,
    delta: &Vector3<f64>,
) {
    let b = &mut bodies[body];
    if b.is_dynamic() {
        b.linear_velocity_in_world += delta * b.inv_mass;
        torque[body] += arm.cross(delta);
    }
}
