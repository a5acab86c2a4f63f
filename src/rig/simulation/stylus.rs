//! The stylus as the rig drives a simulation: clips and releases as the interaction says,
//! with the default stylus spring, and the spring's end (or a pushing tip) moving along the
//! chord from where it was to the newest tip position, at most at a hand's speed.

use crate::interaction::SpringAttachment;
use ar_dynamics::model::stylus::{
    StylusAttachment, StylusTarget, DEFAULT_DAMPING_N_S_PER_M, DEFAULT_STIFFNESS_N_PER_M,
};
use nalgebra::{Point3, Vector3};

/// Fastest the spring's stylus end may move, m/s.
pub const MAX_TARGET_SPEED_M_PER_S: f64 = 1.0;

/// The stylus as the rig drives it: clips and releases as the interaction says, with the
/// default stylus spring, and moves the spring's end along the chord ([`StylusChord`]). When
/// the tip pushes ([`RigStylus::pushes`]), the tip follows the stylus along the same chord
/// while not clipped too, so that clipping and releasing never make the pushing sphere jump.
#[derive(Clone, Copy, Debug)]
pub struct RigStylus {
    attached: Option<(usize, Point3<f64>)>,
    chord: StylusChord,
    /// The scene's stylus tip is a kinematic sphere that pushes the bodies (its `[contact]
    /// stylus_tip_radius_m`): the tip is the solver's whenever the stylus is there.
    pub pushes: bool,
    /// Spring stiffness (N/m).
    pub stiffness_n_per_m: f64,
    /// Spring damping (N·s/m).
    pub damping_n_s_per_m: f64,
}

impl Default for RigStylus {
    fn default() -> Self {
        Self {
            attached: None,
            chord: StylusChord::default(),
            pushes: false,
            stiffness_n_per_m: DEFAULT_STIFFNESS_N_PER_M,
            damping_n_s_per_m: DEFAULT_DAMPING_N_S_PER_M,
        }
    }
}

impl RigStylus {
    /// True while the spring's end (or the pushing tip) is placed in the simulation.
    pub fn is_tracking(&self) -> bool {
        self.chord.is_tracking()
    }

    /// The stylus part of the next step's input: the spring as `spring` says (with this
    /// stylus's stiffness and damping), and the tip moving along the chord toward the spring's
    /// target, or when the tip pushes, toward `tip_in_world` while not clipped. `None` for
    /// the tip once the stylus is gone (a pushing tip is then lifted off the scene).
    pub fn input(
        &mut self,
        spring: Option<&SpringAttachment>,
        tip_in_world: Option<Point3<f64>>,
        dt_secs: f64,
    ) -> (Option<StylusAttachment>, Option<StylusTarget>) {
        let wanted = spring.map(|s| (s.body, s.point_in_body));
        if wanted != self.attached {
            if spring.is_some() && !self.pushes {
                // A spring's end starts at the tip; a pushing tip is already there.
                self.chord.restart();
            }
            self.attached = wanted;
        }
        let clip = spring.map(|s| StylusAttachment {
            body: s.body,
            point_in_body: s.point_in_body.coords,
            stiffness_n_per_m: self.stiffness_n_per_m,
            damping_n_s_per_m: self.damping_n_s_per_m,
        });
        let target = match spring {
            Some(s) => Some(s.target_in_world),
            None if self.pushes => tip_in_world,
            None => None,
        };
        let tip = self
            .chord
            .next(target, dt_secs)
            .map(|(position_in_world, velocity_in_world)| StylusTarget {
                position_in_world,
                velocity_in_world,
            });
        (clip, tip)
    }
}

/// Where the spring's stylus end goes over each step.
///
/// Over a step the end moves in a straight line from where it was at the end of the last
/// step to the newest tip position. Its velocity is that chord, not the arm's own (noisy,
/// sample-timed) velocity estimate: then the end really arrives where it is placed next, and
/// the user work booked for the step (force · end velocity) is exactly the work the moving
/// end did. It moves at most at a hand's speed ([`MAX_TARGET_SPEED_M_PER_S`]): when the
/// solver had to drop steps, the tip may have jumped, and a stiff spring stretched by
/// centimetres in one step would yank the mechanism apart.
#[derive(Clone, Copy, Debug, Default)]
pub struct StylusChord {
    last_target: Option<Point3<f64>>,
}

impl StylusChord {
    /// Forgets the last end position (a new clip starts at the tip).
    pub fn restart(&mut self) {
        self.last_target = None;
    }

    /// True while the end is placed (since the last [`Self::next`] with a target).
    pub fn is_tracking(&self) -> bool {
        self.last_target.is_some()
    }

    /// The end's position at the start of the next step of `dt_secs` and its velocity
    /// during it, toward `target` (the tip while clipped, or while it pushes); `None`, and
    /// forgotten, without a target.
    pub fn next(
        &mut self,
        target: Option<Point3<f64>>,
        dt_secs: f64,
    ) -> Option<(Point3<f64>, Vector3<f64>)> {
        let Some(target) = target else {
            self.last_target = None;
            return None;
        };
        let max_step_m = MAX_TARGET_SPEED_M_PER_S * dt_secs;
        let start = self.last_target.unwrap_or(target);
        let end = start + (target - start).cap_magnitude(max_step_m);
        self.last_target = Some(end);
        Some((start, (end - start) / dt_secs))
    }
}
