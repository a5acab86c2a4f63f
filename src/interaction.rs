//! Interaction: the stylus tip clips to, drags and releases a body.
//!
//! The arm reports its tip in its base frame; `world_from_arm` (from the tracker calibration)
//! brings it into the world (marker) frame. Pressing the button while the tip is within
//! [`InteractionConfig::grab_radius_m`] of a body's grab point clips the stylus to that point
//! through the fictitious spring; releasing the button unclips; a stylus that stops reporting
//! (disconnect) unclips too. Only the press *edge* clips, so holding the button down while
//! sweeping past a grab point does not catch it.

use nalgebra::{Isometry3, Point3};

/// Default grab radius, metres.
pub const DEFAULT_GRAB_RADIUS_M: f64 = 0.015;

/// Tuning of the interaction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InteractionConfig {
    /// A press clips only within this distance of a grab point, metres.
    pub grab_radius_m: f64,
}

impl Default for InteractionConfig {
    fn default() -> Self {
        Self {
            grab_radius_m: DEFAULT_GRAB_RADIUS_M,
        }
    }
}

/// A point of a body that the stylus may clip to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrabPoint {
    /// The body's index in the simulation.
    pub body: usize,
    /// The point in the body's frame.
    pub point_in_body: Point3<f64>,
    /// Where the point is now.
    pub point_in_world: Point3<f64>,
}

/// What the stylus reports in one sample, already in the world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StylusInput {
    /// The tip, world frame.
    pub tip_in_world: Point3<f64>,
    /// The button is held down.
    pub button_pressed: bool,
}

impl StylusInput {
    /// Brings an arm-frame tip into the world frame.
    pub fn from_arm(
        world_from_arm: &Isometry3<f64>,
        tip_in_arm: &Point3<f64>,
        button_pressed: bool,
    ) -> Self {
        Self {
            tip_in_world: world_from_arm * tip_in_arm,
            button_pressed,
        }
    }
}

/// The spring's two ends while clipped: the body point and the stylus tip it follows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpringAttachment {
    /// The grabbed body.
    pub body: usize,
    /// The grabbed point in the body's frame.
    pub point_in_body: Point3<f64>,
    /// The stylus tip the point is pulled towards, world frame.
    pub target_in_world: Point3<f64>,
}

/// What an update changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InteractionEvent {
    /// Nothing changed.
    None,
    /// The stylus clipped to this grab point (distance from the tip, metres).
    Clipped {
        /// The grab point.
        grab: GrabPoint,
        /// Tip-to-point distance at the press, metres.
        distance_m: f64,
    },
    /// The button was pressed but no grab point was in reach (nearest distance, metres).
    MissedGrab {
        /// Distance to the nearest grab point, metres (infinite when there is none).
        nearest_m: f64,
    },
    /// The button was released.
    Released,
    /// The stylus stopped reporting while clipped.
    ReleasedOnDisconnect,
}

/// The clip / drag / release state machine.
#[derive(Debug, Clone, Default)]
pub struct Interaction {
    config: InteractionConfig,
    clipped: Option<(usize, Point3<f64>)>,
    last_tip_in_world: Option<Point3<f64>>,
    button_was_pressed: bool,
}

impl Interaction {
    /// A free (unclipped) stylus.
    pub fn new(config: InteractionConfig) -> Self {
        Self {
            config,
            ..Self::default()
        }
    }

    /// Feeds the newest stylus state (`None`: the stylus is disconnected) with the current grab
    /// points, and says what changed.
    pub fn update(
        &mut self,
        stylus: Option<StylusInput>,
        grab_points: &[GrabPoint],
    ) -> InteractionEvent {
        let Some(s) = stylus else {
            self.last_tip_in_world = None;
            // After a reconnect the button must be seen up before a press counts again.
            self.button_was_pressed = true;
            return if self.clipped.take().is_some() {
                InteractionEvent::ReleasedOnDisconnect
            } else {
                InteractionEvent::None
            };
        };
        self.last_tip_in_world = Some(s.tip_in_world);
        let pressed_now = s.button_pressed && !self.button_was_pressed;
        let released_now = !s.button_pressed && self.button_was_pressed;
        self.button_was_pressed = s.button_pressed;
        if released_now && self.clipped.take().is_some() {
            return InteractionEvent::Released;
        }
        if pressed_now && self.clipped.is_none() {
            let nearest = grab_points
                .iter()
                .map(|g| (g, (g.point_in_world - s.tip_in_world).norm()))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            return match nearest {
                Some((g, d)) if d <= self.config.grab_radius_m => {
                    self.clipped = Some((g.body, g.point_in_body));
                    InteractionEvent::Clipped {
                        grab: *g,
                        distance_m: d,
                    }
                }
                Some((_, d)) => InteractionEvent::MissedGrab { nearest_m: d },
                None => InteractionEvent::MissedGrab {
                    nearest_m: f64::INFINITY,
                },
            };
        }
        InteractionEvent::None
    }

    /// The spring to apply this step, while clipped.
    pub fn spring(&self) -> Option<SpringAttachment> {
        let (body, point_in_body) = self.clipped?;
        Some(SpringAttachment {
            body,
            point_in_body,
            target_in_world: self.last_tip_in_world?,
        })
    }

    /// True while clipped.
    pub fn is_clipped(&self) -> bool {
        self.clipped.is_some()
    }

    /// The newest tip position, world frame.
    pub fn tip_in_world(&self) -> Option<Point3<f64>> {
        self.last_tip_in_world
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    fn grab_at(p: Point3<f64>) -> Vec<GrabPoint> {
        vec![
            GrabPoint {
                body: 3,
                point_in_body: Point3::new(0.0, 0.0, -0.05),
                point_in_world: p,
            },
            GrabPoint {
                body: 7,
                point_in_body: Point3::origin(),
                point_in_world: p + Vector3::new(0.2, 0.0, 0.0),
            },
        ]
    }

    fn at(x: f64, pressed: bool) -> Option<StylusInput> {
        Some(StylusInput {
            tip_in_world: Point3::new(x, 0.0, 0.1),
            button_pressed: pressed,
        })
    }

    #[test]
    fn press_within_radius_clips_release_unclips() {
        let grabs = grab_at(Point3::new(0.0, 0.0, 0.1));
        let mut i = Interaction::new(InteractionConfig::default());
        assert_eq!(i.update(at(0.01, false), &grabs), InteractionEvent::None);
        match i.update(at(0.01, true), &grabs) {
            InteractionEvent::Clipped { grab, distance_m } => {
                assert_eq!(grab.body, 3);
                assert!((distance_m - 0.01).abs() < 1e-12);
            }
            e => panic!("expected a clip, got {e:?}"),
        }
        // Dragging keeps the spring on the grabbed body point and moves its target.
        i.update(at(0.11, true), &grabs);
        let s = i.spring().unwrap();
        assert_eq!((s.body, s.point_in_body), (3, Point3::new(0.0, 0.0, -0.05)));
        assert!((s.target_in_world.x - 0.11).abs() < 1e-12);
        assert_eq!(
            i.update(at(0.11, false), &grabs),
            InteractionEvent::Released
        );
        assert!(i.spring().is_none());
    }

    #[test]
    fn press_outside_radius_misses() {
        let grabs = grab_at(Point3::new(0.0, 0.0, 0.1));
        let mut i = Interaction::new(InteractionConfig::default());
        match i.update(at(0.016, true), &grabs) {
            InteractionEvent::MissedGrab { nearest_m } => {
                assert!((nearest_m - 0.016).abs() < 1e-12)
            }
            e => panic!("expected a miss, got {e:?}"),
        }
        assert!(!i.is_clipped());
    }

    #[test]
    fn holding_the_button_while_sweeping_past_does_not_clip() {
        let grabs = grab_at(Point3::new(0.0, 0.0, 0.1));
        let mut i = Interaction::new(InteractionConfig::default());
        i.update(at(0.05, true), &grabs);
        assert_eq!(i.update(at(0.0, true), &grabs), InteractionEvent::None);
        assert!(!i.is_clipped());
    }

    #[test]
    fn disconnect_releases() {
        let grabs = grab_at(Point3::new(0.0, 0.0, 0.1));
        let mut i = Interaction::new(InteractionConfig::default());
        i.update(at(0.0, true), &grabs);
        assert!(i.is_clipped());
        assert_eq!(
            i.update(None, &grabs),
            InteractionEvent::ReleasedOnDisconnect
        );
        assert!(i.spring().is_none());
        // A reconnect with the button still down is not a new press.
        assert_eq!(i.update(at(0.0, true), &grabs), InteractionEvent::None);
        assert!(!i.is_clipped());
        i.update(at(0.0, false), &grabs);
        assert!(matches!(
            i.update(at(0.0, true), &grabs),
            InteractionEvent::Clipped { .. }
        ));
    }

    #[test]
    fn arm_tip_goes_through_world_from_arm() {
        let world_from_arm = Isometry3::translation(0.3, -0.2, 0.0);
        let s = StylusInput::from_arm(&world_from_arm, &Point3::new(0.1, 0.0, 0.05), true);
        assert_eq!(s.tip_in_world, Point3::new(0.4, -0.2, 0.05));
    }
}
