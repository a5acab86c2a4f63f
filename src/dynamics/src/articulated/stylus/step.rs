//! The stylus spring's step in the articulated method (see [`super`] for why it is one
//! implicit impulse per step): the spring's law over the step, and Newton's method with
//! Broyden updates on the impulse λ, each iteration one integration of the step with the
//! constant force λ/h at the clipped point.

use nalgebra::{Matrix3, Vector3};

use super::{Clip, StepStart};
use crate::articulated::error::ArticulatedError;
use crate::articulated::system::ArticulatedSim;
use crate::model::stylus::StylusTarget;

/// The constant force (N) whose response probes how the clipped point answers a pull over
/// the step (the answer is nearly linear: the size only has to stay clear of rounding).
const PROBE_FORCE_N: f64 = 1.0;
/// Newton on λ stops when |g(λ)| ≤ this × (1 + |λ|) (N·s): 10 µN·s, a spring force within
/// 4 mN at the rig's h = 2.5 ms. Measured on the demo's drag: 1e-7 changes the energy drift
/// by under 1e-9 J but costs 40 % more integrations.
pub(super) const LAMBDA_TOLERANCE_N_S: f64 = 1e-5;
/// Most Newton iterations on λ per step after the first guess (each one integration).
pub(super) const MAX_ITERATIONS: usize = 6;

/// The spring's law over one step: the residual g(λ) = λ + ½hk (e_start + e_end) +
/// c (e_end − e_start) (N·s) of an impulse λ, e_end = the point's end − the tip's end.
#[derive(Clone, Copy, Debug)]
struct SpringLaw {
    h: f64,
    k: f64,
    c: f64,
    tip_end: Vector3<f64>,
    extension_start: Vector3<f64>,
}

impl SpringLaw {
    /// g(λ) when the step with impulse `lambda` ends the point at `point_end`.
    fn residual(&self, lambda: &Vector3<f64>, point_end: &Vector3<f64>) -> Vector3<f64> {
        let extension_end = &(point_end - self.tip_end);
        lambda
            + (self.extension_start + extension_end) * (0.5 * self.h * self.k)
            + (extension_end - self.extension_start) * self.c
    }

    /// Whether the residual `g` is within the tolerance at `lambda`.
    fn converged(&self, g: &Vector3<f64>, lambda: &Vector3<f64>) -> bool {
        g.norm() <= LAMBDA_TOLERANCE_N_S * (1.0 + lambda.norm())
    }
}

/// Newton's iterate on λ: the impulse, its residual, the Jacobian and the integrations so far.
#[derive(Clone, Copy, Debug)]
struct Newton {
    lambda: Vector3<f64>,
    g: Vector3<f64>,
    jacobian: Matrix3<f64>,
    iterations: usize,
}

impl ArticulatedSim {
    /// The clipped point's world position in `y_new` (computes its kinematics).
    fn point_in_y_new(&mut self, link: usize, point_in_link: &Vector3<f64>) -> Vector3<f64> {
        let d = &mut self.dynamics;
        let (nq, nv) = (d.tree.nq(), d.tree.nv());
        d.ws.kinematics(&d.tree, &self.y_new[..nq], &self.y_new[nq..nq + nv]);
        d.kinematics_current = false;
        d.ws.point_in_world(link, point_in_link)
    }

    /// One integrator step from y into y_new with the extra constant force `force_in_world`
    /// (N) at the clipped point; returns where the point ends (m, world).
    fn integrate_pulled(
        &mut self,
        t0: f64,
        clip: &Clip,
        force_in_world: Vector3<f64>,
    ) -> Result<Vector3<f64>, ArticulatedError> {
        let (l, p) = (clip.link, clip.point_in_link);
        self.dynamics.kinematics_current = false;
        self.dynamics.loads.push((l, p, force_in_world));
        let integrated = self.integrate(t0);
        self.dynamics.loads.pop();
        integrated?;
        Ok(self.point_in_y_new(l, &p))
    }

    /// The step with the stylus spring (see the module docs): y_new is the state after it.
    /// Leaves `ws` at some other state (`kinematics_current` off).
    pub(in crate::articulated) fn integrate_with_stylus(
        &mut self,
        t0: f64,
    ) -> Result<(), ArticulatedError> {
        let (Some(clip), Some(tip)) = (self.stylus.clip, self.stylus.target) else {
            return self.integrate(t0);
        };
        let h = self.params.dt_secs;
        let (accepted, rejected) = (self.stats.accepted_steps, self.stats.rejected_steps);
        let (point_start, law) = self.spring_law(&clip, &tip, h);
        // Warm start from the last step's impulse.
        let lambda = self.stylus.last_lambda;
        let point_end = self.integrate_pulled(t0, &clip, lambda / h)?;
        let g = law.residual(&lambda, &point_end);
        let jacobian = match self.stylus.jacobian {
            Some(j) => j,
            None => self.probe_jacobian(t0, &clip, &law, &lambda, &point_end)?,
        };
        let mut newton = Newton {
            lambda,
            g,
            jacobian,
            iterations: 1,
        };
        let converged = self.solve_spring_law(t0, &clip, &law, &mut newton)?;
        self.stylus.jacobian = converged.then_some(newton.jacobian);
        self.stylus.last_lambda = newton.lambda;
        self.stylus.iterations += newton.iterations;
        self.stats.accepted_steps = accepted;
        self.stats.rejected_steps = rejected;
        self.stylus.step = Some(StepStart {
            lambda: newton.lambda,
            point_start,
            extension_start: law.extension_start,
        });
        Ok(())
    }

    /// The clipped point at the start of the step (computes the kinematics of y), and the
    /// spring's law over the step toward `tip`.
    fn spring_law(&mut self, clip: &Clip, tip: &StylusTarget, h: f64) -> (Vector3<f64>, SpringLaw) {
        let (l, p) = (clip.link, clip.point_in_link);
        let d = &mut self.dynamics;
        let (nq, nv) = (d.tree.nq(), d.tree.nv());
        d.ws.kinematics(&d.tree, &self.y[..nq], &self.y[nq..nq + nv]);
        let point_start = d.ws.point_in_world(l, &p);
        let a = &clip.attachment;
        let law = SpringLaw {
            h,
            k: a.stiffness_n_per_m,
            c: a.damping_n_s_per_m,
            tip_end: tip.position_in_world.coords + tip.velocity_in_world * h,
            extension_start: point_start - tip.position_in_world.coords,
        };
        (point_start, law)
    }

    /// The point's displacement per newton along each axis, about the start guess `lambda`
    /// (where the point ends at `point_end`): C, and the Jacobian of g is
    /// I + (½hk + c)/h · C. Three integrations of the step.
    fn probe_jacobian(
        &mut self,
        t0: f64,
        clip: &Clip,
        law: &SpringLaw,
        lambda: &Vector3<f64>,
        point_end: &Vector3<f64>,
    ) -> Result<Matrix3<f64>, ArticulatedError> {
        let (h, k, c) = (law.h, law.k, law.c);
        let mut response = Matrix3::zeros();
        for axis in 0..3 {
            let pull = lambda / h + Vector3::ith(axis, PROBE_FORCE_N);
            let pulled = self.integrate_pulled(t0, clip, pull)?;
            response.set_column(axis, &((pulled - point_end) / PROBE_FORCE_N));
        }
        Ok(Matrix3::identity() + response * ((0.5 * h * k + c) / h))
    }

    /// Newton's iterations on λ from `newton` until the law holds, each one integration of
    /// the step; returns whether it converged within [`MAX_ITERATIONS`].
    fn solve_spring_law(
        &mut self,
        t0: f64,
        clip: &Clip,
        law: &SpringLaw,
        newton: &mut Newton,
    ) -> Result<bool, ArticulatedError> {
        let h = law.h;
        // The point turns with its link within the step, so its answer to a pull is not
        // quite linear: Broyden's update corrects the Jacobian from each iteration (and it is
        // kept for the next step, probed again only after a step that did not converge).
        while !law.converged(&newton.g, &newton.lambda) {
            if newton.iterations > MAX_ITERATIONS {
                self.stylus.unconverged_steps += 1;
                return Ok(false);
            }
            let delta = newton
                .jacobian
                .lu()
                .solve(&-newton.g)
                .filter(|x| x.iter().all(|v| v.is_finite()))
                .ok_or_else(|| ArticulatedError::NonFinite {
                    time_secs: t0,
                    body: format!("(stylus spring on body {})", clip.attachment.body),
                })?;
            newton.lambda += delta;
            let point_end = self.integrate_pulled(t0, clip, newton.lambda / h)?;
            newton.iterations += 1;
            let g_new = law.residual(&newton.lambda, &point_end);
            let dd = delta.norm_squared();
            if dd > 0.0 {
                let jacobian = &mut newton.jacobian;
                *jacobian += (g_new - newton.g - *jacobian * delta) * (delta.transpose() / dd);
            }
            newton.g = g_new;
        }
        Ok(true)
    }
}
