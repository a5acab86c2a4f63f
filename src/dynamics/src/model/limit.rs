//! Joint limits of the default method: `limits_rad = [lo, hi]` bounds a hinge's (or a slot's)
//! angle and `limits_m = [lo, hi]` a prismatic (or a slot) joint's travel, both measured from
//! the initial pose (0 there). Each end is a unilateral velocity row solved with the contacts
//! (`crate::solver::contact::limits`), with the joint's own restitution.
//!
//! - The angle θ is body 2's turn relative to body 1 about the hinge axis a (right-handed):
//!   θ = atan2(a·(u₁ × u₂), u₁·u₂), with u₂ body 2's first hinge perpendicular and u₁ where
//!   body 1 held it in the initial pose; while the joint holds, θ̇ = a·(ω₂ − ω₁). θ lies in
//!   (−π, π], so the limits must too (the scene loader refuses others).
//! - The travel d = (p₂ − p₁)·s is body 2's anchor from body 1's along the slide axis s, which
//!   turns with body 1; ḋ is the row of a contact at p₂ with normal s.
//!
//! An end's gap is θ − lo or d − lo at the lower end and hi − θ or hi − d at the upper; its
//! row velocity is the gap's rate, and its impulse pushes the gap open (≥ 0).

use nalgebra::Vector3;

use super::body::Pose;
use super::joint::{Joint, JointKind};
use crate::contact::lcp::Row;

/// A joint's limits (none by default).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointLimits {
    /// `[lo, hi]` of the angle (rad) from the initial pose, hinge and slot joints.
    pub angle_rad: Option<[f64; 2]>,
    /// `[lo, hi]` of the travel (m) from the initial pose, prismatic and slot joints.
    pub travel_m: Option<[f64; 2]>,
    /// Newton restitution e ∈ [0, 1] of both ends (0: the joint stops at its limit).
    pub restitution: f64,
}

impl JointLimits {
    /// Whether any coordinate is limited.
    pub fn any(&self) -> bool {
        self.angle_rad.is_some() || self.travel_m.is_some()
    }

    /// What is wrong with these limits on a joint of `kind`, if anything: the field
    /// (`limits_rad`, `limits_m`, `limit_restitution`) and why.
    pub fn problem(&self, kind: JointKind) -> Option<(&'static str, String)> {
        let (angle_ok, travel_ok) = match kind {
            JointKind::Hinge => (true, false),
            JointKind::Prismatic => (false, true),
            JointKind::Slot => (true, true),
            JointKind::Ball | JointKind::Fixed => (false, false),
        };
        let ends = [
            ("limits_rad", self.angle_rad, angle_ok, "angle", "rad"),
            ("limits_m", self.travel_m, travel_ok, "travel", "m"),
        ];
        for (field, range, allowed, what, unit) in ends {
            let Some([lo, hi]) = range else { continue };
            if !allowed {
                return Some((
                    field,
                    format!(
                        "a {} joint has no {} to limit (hinge: limits_rad; prismatic: \
                         limits_m; slot: either)",
                        kind.name(),
                        what
                    ),
                ));
            }
            if !(lo.is_finite() && hi.is_finite()) {
                return Some((field, format!("[{lo}, {hi}]: both ends must be finite")));
            }
            if lo > hi {
                return Some((
                    field,
                    format!("[{lo}, {hi}]: the lower end is above the upper"),
                ));
            }
            if lo > 0.0 || hi < 0.0 {
                return Some((
                    field,
                    format!(
                        "[{lo}, {hi}]: the initial pose (the {what} 0 {unit}) must lie within the limits"
                    ),
                ));
            }
            if unit == "rad" && (lo <= -std::f64::consts::PI || hi >= std::f64::consts::PI) {
                return Some((
                    field,
                    format!("[{lo}, {hi}]: an angle limit must lie within (−π, π) rad"),
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.restitution) {
            return Some((
                "limit_restitution",
                format!("must be in [0, 1], got {}", self.restitution),
            ));
        }
        None
    }
}

/// Which coordinate of a joint a limit bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitedCoordinate {
    /// The hinge angle (rad; its limit force is a torque, N·m).
    Angle,
    /// The slide travel (m; its limit force is a force, N).
    Travel,
}

impl LimitedCoordinate {
    /// 0 for the angle, 1 for the travel (the index of per-joint pairs).
    pub fn index(self) -> usize {
        match self {
            LimitedCoordinate::Angle => 0,
            LimitedCoordinate::Travel => 1,
        }
    }
}

/// One end of a joint's limit at some poses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LimitEnd {
    /// The joint's index.
    pub(crate) joint: usize,
    pub(crate) coordinate: LimitedCoordinate,
    /// +1 at the lower end (its impulse pushes the coordinate up), −1 at the upper.
    pub(crate) sign: f64,
    /// Distance to the end (rad or m; positive inside the limits).
    pub(crate) gap: f64,
    /// The row whose velocity is the gap's rate (body 2 relative to body 1).
    pub(crate) row: Row,
}

impl Joint {
    /// The angle θ (rad) of body 2 relative to body 1 about the hinge axis at these poses (see
    /// the module docs); meaningful for hinge and slot joints.
    pub(crate) fn angle_rad(&self, p1: &Pose, p2: &Pose) -> f64 {
        let a = p1.r * self.hinge_axis_in_body1();
        let u1 = p1.r * self.hinge_reference_in_body1();
        let u2 = p2.r * self.hinge_perp_in_body2()[0];
        a.dot(&u1.cross(&u2)).atan2(u1.dot(&u2))
    }

    /// The travel d (m) of body 2's anchor from body 1's along the slide axis; meaningful
    /// for prismatic and slot joints.
    pub(crate) fn travel_m(&self, p1: &Pose, p2: &Pose) -> f64 {
        let s = p1.r * self.slide_axis_in_body1();
        let a1 = p1.x + p1.r * self.anchor1_in_body1;
        let a2 = p2.x + p2.r * self.anchor2_in_body2;
        (a2 - a1).dot(&s)
    }

    /// Hands each end of this joint's limits (joint index `index`) at these poses to `visit`:
    /// the angle's ends, then the travel's, each lower then upper.
    pub(crate) fn limit_ends(
        &self,
        index: usize,
        p1: &Pose,
        p2: &Pose,
        mut visit: impl FnMut(LimitEnd),
    ) {
        if let Some([lo, hi]) = self.limits.angle_rad {
            let theta = self.angle_rad(p1, p2);
            let a = p1.r * self.hinge_axis_in_body1();
            for (sign, gap) in [(1.0, theta - lo), (-1.0, hi - theta)] {
                visit(LimitEnd {
                    joint: index,
                    coordinate: LimitedCoordinate::Angle,
                    sign,
                    gap,
                    row: Row {
                        body1: self.body1,
                        body2: self.body2,
                        dir: Vector3::zeros(),
                        ang1: a * sign,
                        ang2: a * sign,
                    },
                });
            }
        }
        if let Some([lo, hi]) = self.limits.travel_m {
            let d = self.travel_m(p1, p2);
            let s = p1.r * self.slide_axis_in_body1();
            let a2 = p2.x + p2.r * self.anchor2_in_body2;
            let (r1, r2) = (a2 - p1.x, a2 - p2.x);
            for (sign, gap) in [(1.0, d - lo), (-1.0, hi - d)] {
                visit(LimitEnd {
                    joint: index,
                    coordinate: LimitedCoordinate::Travel,
                    sign,
                    gap,
                    row: Row::new(self.body1, self.body2, &r1, &r2, s * sign),
                });
            }
        }
    }
}
