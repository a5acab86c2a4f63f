//! The fictitious stylus spring-damper of the paper (Eq. 10).
//!
//! While the user holds a body ("clipped"), a stiff isotropic spring-damper pulls a point of
//! that body toward the stylus tip: F = k (p_tip − p) + c (v_tip − ṗ). The tip moves linearly
//! during a step from the target set before it, with the target velocity. Like the scene's
//! springs it is a soft constraint (midpoint-implicit elastic part, implicit damper), stable
//! for any stiffness at h = 0.01 s (tested with 1e4 N/m on a 0.1 kg body).
//!
//! The simulation's stylus API (clip, move the tip, release) is here too; the solver's rows
//! for the spring are in `solver/stylus_rows.rs`.

use nalgebra::{Point3, Vector3};

use super::body::BodyId;
use super::grab::GrabPoint;
use crate::error::SimError;
use crate::simulation::Simulation;

/// Default stylus stiffness (N/m).
pub const DEFAULT_STIFFNESS_N_PER_M: f64 = 1.0e4;
/// Default stylus damping (N·s/m): about a fifth of critical for a 0.1 kg body at the
/// default stiffness, enough to settle a grab within a few tenths of a second.
pub const DEFAULT_DAMPING_N_S_PER_M: f64 = 15.0;

/// Where and how the stylus is attached.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusAttachment {
    /// The clipped body.
    pub body: BodyId,
    /// The clipped point in the body frame (m).
    pub point_in_body: Vector3<f64>,
    /// Spring stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Damping (N·s/m).
    pub damping_n_s_per_m: f64,
}

impl StylusAttachment {
    /// The spring clipped to grab point `grab`.
    pub fn at_grab_point(grab: &GrabPoint, stiffness_n_per_m: f64, damping_n_s_per_m: f64) -> Self {
        Self {
            body: grab.body,
            point_in_body: grab.point_in_body,
            stiffness_n_per_m,
            damping_n_s_per_m,
        }
    }

    /// Checks the spring: a positive, finite stiffness and a finite damping ≥ 0.
    pub fn check_spring(&self) -> Result<(), SimError> {
        if !(self.stiffness_n_per_m > 0.0 && self.stiffness_n_per_m.is_finite()) {
            return Err(SimError::BadParameter {
                field: "stylus stiffness_n_per_m",
                value: self.stiffness_n_per_m,
            });
        }
        if !(self.damping_n_s_per_m >= 0.0 && self.damping_n_s_per_m.is_finite()) {
            return Err(SimError::BadParameter {
                field: "stylus damping_n_s_per_m",
                value: self.damping_n_s_per_m,
            });
        }
        Ok(())
    }

    /// Elastic energy ½k|e|² (J) at the extension `e` = clipped point − tip (m).
    pub fn energy_j(&self, extension_m: &Vector3<f64>) -> f64 {
        0.5 * self.stiffness_n_per_m * extension_m.norm_squared()
    }

    /// The spring's softness over a step of `h` seconds: s = ½h(½hk + c) (kg), the factor of
    /// the clipped point's velocity response K = J M⁻¹ Jᵀ (1/kg) in (I + s K) λ = …. With
    /// the elastic part at the midpoint extension and the damper on the midpoint rate, the
    /// step's impulse λ (N·s) on the clipped point satisfies λ = −h (k ē + c r̄), solved
    /// implicitly in this form, which is stable for any stiffness (the articulated method's
    /// Jacobian of the same law reduces to it, see `crate::articulated`'s `stylus` module).
    pub fn step_compliance(&self, h: f64) -> f64 {
        0.5 * h * (0.5 * h * self.stiffness_n_per_m + self.damping_n_s_per_m)
    }

    /// What a step with impulse `lambda` (N·s, on the clipped point) did: the user work
    /// λ·v_tip (J; the tip moved at `tip_velocity` against the spring's pull) and the energy
    /// the damper took out, −(λ − λ_elastic)·r̄ (J), where λ_elastic = −½hk (e_start + e_end)
    /// is the elastic share at the midpoint extension and `rate` r̄ the midpoint rate of
    /// extension (m/s).
    pub fn step_work_j(
        &self,
        h: f64,
        lambda: &Vector3<f64>,
        extension_start_m: &Vector3<f64>,
        extension_end_m: &Vector3<f64>,
        rate: &Vector3<f64>,
        tip_velocity: &Vector3<f64>,
    ) -> StylusStepWork {
        let elastic = -(extension_start_m + extension_end_m) * (0.5 * h * self.stiffness_n_per_m);
        let damper = lambda - elastic;
        StylusStepWork {
            user_j: lambda.dot(tip_velocity),
            dissipated_j: -damper.dot(rate),
        }
    }
}

/// The stylus spring's share of one step's energy ledger (see
/// [`StylusAttachment::step_work_j`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusStepWork {
    /// Work the user did through the spring (J).
    pub user_j: f64,
    /// Energy the spring's damper took out (J).
    pub dissipated_j: f64,
}

/// The stylus tip as the solver sees it: position at the start of the next step and its
/// velocity during that step (world frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StylusTarget {
    /// Tip position (m, world).
    pub position_in_world: Point3<f64>,
    /// Tip velocity (m/s, world).
    pub velocity_in_world: Vector3<f64>,
}

/// Clipping, moving and releasing the stylus.
impl Simulation {
    /// Clips the stylus to a body point. The tip keeps the last target set, or starts at the
    /// clipped point at rest if none was. The spring's initial energy counts as user work.
    pub fn attach_stylus(&mut self, attachment: StylusAttachment) -> Result<(), SimError> {
        if attachment.body >= self.model.bodies.len()
            || !self.model.bodies[attachment.body].is_dynamic()
        {
            return Err(SimError::BadStylusBody {
                index: attachment.body,
            });
        }
        attachment.check_spring()?;
        self.detach_stylus();
        if self.stylus_target.is_none() {
            let p = self.model.bodies[attachment.body].point_in_world(&attachment.point_in_body);
            self.stylus_target = Some(StylusTarget {
                position_in_world: p,
                velocity_in_world: Vector3::zeros(),
            });
        }
        self.stylus = Some(attachment);
        self.solver.stylus_block.lambda = Vector3::zeros();
        self.solver.loads_jumped();
        let u = self.stylus_energy_j();
        self.solver.ledger.elastic_end_j += u;
        self.solver.ledger.user_work_j += u;
        Ok(())
    }

    /// Clips the stylus to a named grab point (by index) with the given spring.
    pub fn attach_stylus_to_grab_point(
        &mut self,
        grab_index: usize,
        stiffness_n_per_m: f64,
        damping_n_s_per_m: f64,
    ) -> Result<(), SimError> {
        let g = self
            .model
            .grab_points
            .get(grab_index)
            .ok_or(SimError::UnknownGrabPoint { index: grab_index })?;
        let attachment = StylusAttachment::at_grab_point(g, stiffness_n_per_m, damping_n_s_per_m);
        self.attach_stylus(attachment)
    }

    /// Releases the stylus; the energy the spring still holds goes back to the user.
    pub fn detach_stylus(&mut self) {
        if self.stylus.is_some() {
            let u = self.stylus_energy_j();
            self.solver.ledger.elastic_end_j -= u;
            self.solver.ledger.user_work_j -= u;
        }
        self.stylus = None;
        self.solver.stylus_block.lambda = Vector3::zeros();
        self.solver.loads_jumped();
    }

    /// The current attachment, if clipped.
    pub fn stylus_attachment(&self) -> Option<&StylusAttachment> {
        self.stylus.as_ref()
    }

    /// Sets the stylus tip for the next step: its position now and its velocity during the
    /// step (world frame). After each step the tip advances by h·velocity on its own, so a
    /// caller that updates less often than every step sees a smoothly moving tip.
    pub fn set_stylus_target(
        &mut self,
        position_in_world: Point3<f64>,
        velocity_in_world: Vector3<f64>,
    ) {
        let new_target = StylusTarget {
            position_in_world,
            velocity_in_world,
        };
        if self.stylus.is_some() {
            // Jumping the tip changes the spring energy: that is work done by the user.
            let before = self.stylus_energy_j();
            self.stylus_target = Some(new_target);
            let after = self.stylus_energy_j();
            self.solver.ledger.elastic_end_j += after - before;
            self.solver.ledger.user_work_j += after - before;
        } else {
            self.stylus_target = Some(new_target);
        }
    }

    /// Takes the stylus tip away (releasing the spring first if clipped): a scene whose tip
    /// pushes has nothing left to push with, instead of a tip that goes on at its last
    /// velocity, unseen, after the stylus is gone.
    pub fn clear_stylus_target(&mut self) {
        self.detach_stylus();
        self.stylus_target = None;
    }

    /// The stylus tip the solver uses, if one was set.
    pub fn stylus_target(&self) -> Option<&StylusTarget> {
        self.stylus_target.as_ref()
    }

    /// World position of the clipped point, if clipped.
    pub fn stylus_point_in_world(&self) -> Option<Point3<f64>> {
        let s = self.stylus.as_ref()?;
        Some(self.model.bodies[s.body].point_in_world(&s.point_in_body))
    }
}
