//! Springs and dampers between bodies as soft rows: the midpoint row (the discrete gradient of
//! the length), the implicit-midpoint spring law −h k (eₙ + eₙ₊₁)/2 − h c ē, its residual
//! and its Gauss–Seidel update.

use crate::model::joint::Row;
use crate::solver::impulses::add_spring_impulse;
use crate::solver::Step;
use nalgebra::Vector3;

impl Step<'_> {
    /// Spring `i`'s velocity change still owed at the current prediction (m/s), `None` when
    /// the spring has no direction this step.
    pub(in crate::solver) fn spring_residual_velocity(&self, i: usize) -> Option<f64> {
        let h = self.ctx.h;
        let r = &self.s.spring_rows[i];
        if !r.active {
            return None;
        }
        let s = &self.springs[i];
        let e_pred = if self.s.spring_extensions_at == self.s.versions.prediction {
            r.e_end
        } else {
            self.predicted_extension_m(i)
        };
        let (k, c) = (s.stiffness_n_per_m, s.damping_n_s_per_m);
        let g = r.lambda + h * k * 0.5 * (r.e_start + e_pred) + h * c * self.spring_rate(i);
        let soft = s.step_compliance(h);
        Some((g * r.w / (1.0 + soft * r.w)).abs())
    }

    /// Spring `i`'s extension at the predicted end of the step (m).
    pub(in crate::solver) fn predicted_extension_m(&self, i: usize) -> f64 {
        let s = &self.springs[i];
        let (p1, p2) = (
            &self.s.body.predicted[s.body1],
            &self.s.body.predicted[s.body2],
        );
        let d = if s.at_centres() {
            p2.x - p1.x
        } else {
            (p2.x + p2.r * s.point2_in_body2) - (p1.x + p1.r * s.point1_in_body1)
        };
        d.norm() - s.rest_length_m
    }

    pub(in crate::solver) fn spring_length_m(&self, i: usize) -> f64 {
        let s = &self.springs[i];
        if s.at_centres() {
            return (self.bodies[s.body2].position_in_world
                - self.bodies[s.body1].position_in_world)
                .norm();
        }
        let p1 = self.bodies[s.body1].point_in_world(&s.point1_in_body1);
        let p2 = self.bodies[s.body2].point_in_world(&s.point2_in_body2);
        (p2 - p1).norm()
    }

    /// Midpoint row of spring `i`: direction (d₀ + d₁)/(l₀ + l₁), the discrete gradient of
    /// the length, so that l₁ − l₀ = h J̄ v̄ exactly.
    pub(in crate::solver) fn update_spring_row(&mut self, i: usize) {
        let s = &self.springs[i];
        if s.broken {
            // A broken connection is out of every stage (solve, warm start, booking).
            self.s.spring_rows[i].active = false;
            return;
        }
        let (b1, b2) = (s.body1, s.body2);
        let (s1, e1, s2, e2) = (
            &self.s.body.start[b1],
            &self.s.body.predicted[b1],
            &self.s.body.start[b2],
            &self.s.body.predicted[b2],
        );
        // At both centres: the general case with zero arms, less its products by zero.
        let centred = s.at_centres();
        let (d_start, d_end) = if centred {
            (s2.x - s1.x, e2.x - e1.x)
        } else {
            (
                (s2.x + s2.r * s.point2_in_body2) - (s1.x + s1.r * s.point1_in_body1),
                (e2.x + e2.r * s.point2_in_body2) - (e1.x + e1.r * s.point1_in_body1),
            )
        };
        let len_sum = d_start.norm() + d_end.norm();
        let sr = &mut self.s.spring_rows[i];
        if len_sum < MIN_SPRING_LENGTH_M {
            sr.active = false;
            return;
        }
        let n = (d_start + d_end) / len_sum;
        sr.len_sum_m = len_sum;
        sr.e_end = d_end.norm() - s.rest_length_m;
        let lin_w = (self.bodies[b1].inv_mass + self.bodies[b2].inv_mass) * n.norm_squared();
        if centred {
            sr.row = Row {
                lin: -n,
                ang1: Vector3::zeros(),
                ang2: Vector3::zeros(),
            };
            sr.w = lin_w;
            sr.active = sr.w > 0.0;
            return;
        }
        let r1 = (s1.r * s.point1_in_body1 + e1.r * s.point1_in_body1) * 0.5;
        let r2 = (s2.r * s.point2_in_body2 + e2.r * s.point2_in_body2) * 0.5;
        sr.row = Row {
            lin: -n,
            ang1: -r1.cross(&n),
            ang2: r2.cross(&n),
        };
        sr.w = lin_w
            + sr.row
                .ang1
                .dot(&(self.s.body.inv_inertia[b1] * sr.row.ang1))
            + sr.row
                .ang2
                .dot(&(self.s.body.inv_inertia[b2] * sr.row.ang2));
        sr.active = sr.w > 0.0;
    }

    /// Rate of the midpoint row of spring `i` at the midpoint velocities.
    pub(in crate::solver) fn spring_rate(&self, i: usize) -> f64 {
        let s = &self.springs[i];
        let r = &self.s.spring_rows[i];
        let (b1, b2) = (&self.bodies[s.body1], &self.bodies[s.body2]);
        let v1 = (b1.linear_velocity_in_world + self.s.body.v_start[s.body1]) * 0.5;
        let v2 = (b2.linear_velocity_in_world + self.s.body.v_start[s.body2]) * 0.5;
        if s.at_centres() {
            return r.row.lin.dot(&(v1 - v2));
        }
        let w1 = (b1.angular_velocity_in_world + self.s.body.w_start[s.body1]) * 0.5;
        let w2 = (b2.angular_velocity_in_world + self.s.body.w_start[s.body2]) * 0.5;
        r.row.lin.dot(&(v1 - v2)) + r.row.ang1.dot(&w1) + r.row.ang2.dot(&w2)
    }

    /// The spring residual g(λ) of the current linearisation (an impulse, N·s).
    pub(in crate::solver) fn spring_residual_impulse(&self, i: usize) -> f64 {
        let r = &self.s.spring_rows[i];
        let s = &self.springs[i];
        let h = self.ctx.h;
        let (bd1, bd2) = (&self.bodies[s.body1], &self.bodies[s.body2]);
        let mut u = r
            .row
            .lin
            .dot(&(bd1.linear_velocity_in_world - bd2.linear_velocity_in_world));
        if !s.at_centres() {
            u += r.row.ang1.dot(&bd1.angular_velocity_in_world)
                + r.row.ang2.dot(&bd2.angular_velocity_in_world);
        }
        let e_lin = r.e_end + 0.5 * h * (u - r.u_lin);
        let rate = 0.5 * (r.u_start + u);
        r.lambda
            + h * s.stiffness_n_per_m * 0.5 * (r.e_start + e_lin)
            + h * s.damping_n_s_per_m * rate
    }

    pub(in crate::solver) fn solve_spring(&mut self, i: usize) -> f64 {
        let r = self.s.spring_rows[i];
        if !r.active {
            return 0.0;
        }
        let h = self.ctx.h;
        let s = &self.springs[i];
        let (b1, b2) = (s.body1, s.body2);
        let g = self.spring_residual_impulse(i);
        let soft = s.step_compliance(h);
        let delta = -g / (1.0 + soft * r.w);
        self.s.spring_rows[i].lambda += delta;
        add_spring_impulse(self.bodies, &mut self.s.body.torque, s, &r.row, delta);
        self.flush_torque(b1);
        self.flush_torque(b2);
        (0.5 * delta * r.w).abs()
    }
}

/// Below this length (m) a spring has no direction and is skipped for the step.
pub(in crate::solver) const MIN_SPRING_LENGTH_M: f64 = 1.0e-9;

/// A soft row (a spring) in the step.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SoftRow {
    pub(crate) row: Row,
    /// J M⁻¹ Jᵀ of the row.
    pub(crate) w: f64,
    /// Extension at the start of the step (m).
    pub(crate) e_start: f64,
    /// Extension at the predicted end of the step when linearised (m).
    pub(crate) e_end: f64,
    /// Row rate at the linearisation and at the start of the step.
    pub(crate) u_lin: f64,
    pub(crate) u_start: f64,
    pub(crate) lambda: f64,
    /// The impulse at the end of the previous step (N·s): this step's estimate until its
    /// first solve.
    pub(crate) lambda_last_step: f64,
    /// l₀ + l₁ of the midpoint row (m).
    pub(crate) len_sum_m: f64,
    pub(crate) active: bool,
}

impl SoftRow {
    /// The turning stiffness of the midpoint row (kg, per unit of the ends' relative
    /// velocity): the impulse λ along the row turns with it when its end pose moves across
    /// it, by (h/2) λ/(l₀ + l₁) per unit of end velocity (the end pose moves by h/2 per unit
    /// of end velocity). Positive in tension (the impulse pulls the ends back onto the line),
    /// negative in compression. Taken at the current impulse, or before the step's first
    /// solve at the previous step's.
    pub(crate) fn turning_stiffness(&self, dt_secs: f64) -> f64 {
        let lambda = if self.lambda != 0.0 {
            self.lambda
        } else {
            self.lambda_last_step
        };
        // (The impulse is negative in tension: it pulls body 1 along +n.)
        -lambda * 0.5 * dt_secs / self.len_sum_m
    }
}
