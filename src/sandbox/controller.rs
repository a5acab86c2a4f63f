//! The sandbox's controller: turns the user's inputs ([`SandboxInput`]) into view changes
//! (orbit, pan, zoom of an [`OrbitView`]) and into actions on the simulation — a grab through
//! the stylus spring at the picked point, the spring's target dragged in the plane through
//! that point facing the camera, its release, and the keys' commands (among them the switch
//! of the scene's rigid groups). It holds no window and
//! no simulation: the bodies it picks from are the newest snapshot's, passed in.

use super::grab::{GrabDrag, PointerCamera};
use super::input::{PointerButton, SandboxInput, SandboxKey};
use super::orbit::OrbitView;
use super::pick::Pick;
use crate::interaction::SpringAttachment;
use crate::scene_view::BodyView;
use ar_calibration::intrinsics::CameraIntrinsics;
use nalgebra::Isometry3;

/// The wind level the space bar blows at: a full breath of the synthetic microphone (RMS 0.2
/// above the floor, full scale 1).
pub const SPACE_BAR_WIND_LEVEL: f64 = 0.2;

/// What an input asks of the simulation or the session.
#[derive(Debug, Clone, PartialEq)]
pub enum SandboxAction {
    /// The spring clips to the picked point (its target there to begin with).
    Grab {
        /// What was picked.
        pick: Pick,
        /// The spring.
        spring: SpringAttachment,
    },
    /// The grabbed point's spring now pulls toward a new target.
    MoveTarget(SpringAttachment),
    /// The spring lets go.
    Release,
    /// The simulation pauses (`true`) or runs on.
    Pause(bool),
    /// One step, while paused.
    Step,
    /// The scene goes back to its initial state.
    Reset,
    /// The next shipped scene.
    NextScene,
    /// Reaction arrows shown (`true`) or hidden.
    ShowReactions(bool),
    /// The user's wind level, or `None` when they stop blowing.
    Wind(Option<f64>),
    /// The scene's rigid groups switch: all rigid if any is deformable, else all deformable.
    ToggleRigidGroups,
    /// The session ends.
    Quit,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Drag {
    Orbit { last_px: (f64, f64) },
    Pan { last_px: (f64, f64) },
    Grab(GrabDrag),
}

impl Drag {
    fn button(&self) -> PointerButton {
        match self {
            Drag::Orbit { .. } => PointerButton::Right,
            Drag::Pan { .. } => PointerButton::Middle,
            Drag::Grab(_) => PointerButton::Left,
        }
    }
}

/// The controller; see the module docs.
#[derive(Debug, Clone)]
pub struct SandboxController {
    intrinsics: CameraIntrinsics,
    view: OrbitView,
    drag: Option<Drag>,
    paused: bool,
    show_reactions: bool,
    blowing: bool,
    /// `G` is held: its repeats do not switch the groups back and forth.
    groups_key_held: bool,
}

impl SandboxController {
    /// A controller for a view of `intrinsics` starting at `view`.
    pub fn new(intrinsics: CameraIntrinsics, view: OrbitView) -> Self {
        Self {
            intrinsics,
            view,
            drag: None,
            paused: false,
            show_reactions: false,
            blowing: false,
            groups_key_held: false,
        }
    }

    /// The view now.
    pub fn view(&self) -> &OrbitView {
        &self.view
    }

    /// Replaces the view (a new scene is framed anew); a drag in progress ends.
    pub fn set_view(&mut self, view: OrbitView) {
        self.view = view;
        self.drag = None;
    }

    /// The camera's pose now (OpenCV axes).
    pub fn camera_from_world(&self) -> Isometry3<f64> {
        self.view.camera_from_world()
    }

    /// True while paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// True while the reaction arrows are shown.
    pub fn shows_reactions(&self) -> bool {
        self.show_reactions
    }

    /// The spring while a body is grabbed.
    pub fn grabbed(&self) -> Option<SpringAttachment> {
        match self.drag {
            Some(Drag::Grab(grab)) => Some(grab.spring()),
            _ => None,
        }
    }

    /// Feeds one input, with the bodies as the user sees them now; says what it asks for.
    pub fn handle(&mut self, input: SandboxInput, bodies: &[BodyView]) -> Option<SandboxAction> {
        match input {
            SandboxInput::PointerMoved { x_px, y_px } => self.pointer_moved(x_px, y_px),
            SandboxInput::PointerPressed { button, x_px, y_px } => {
                if self.drag.is_some() {
                    return None;
                }
                match button {
                    PointerButton::Left => self.grab(x_px, y_px, bodies),
                    PointerButton::Right => {
                        self.drag = Some(Drag::Orbit {
                            last_px: (x_px, y_px),
                        });
                        None
                    }
                    PointerButton::Middle => {
                        self.drag = Some(Drag::Pan {
                            last_px: (x_px, y_px),
                        });
                        None
                    }
                }
            }
            SandboxInput::PointerReleased { button } => {
                let drag = self.drag.filter(|d| d.button() == button)?;
                self.drag = None;
                matches!(drag, Drag::Grab(_)).then_some(SandboxAction::Release)
            }
            SandboxInput::Wheel { notches } => {
                // The drag plane stays where it was grabbed; zooming moves only the view.
                self.view.zoom(notches);
                None
            }
            SandboxInput::KeyPressed(key) => self.key_pressed(key),
            SandboxInput::KeyReleased(SandboxKey::Wind) if self.blowing => {
                self.blowing = false;
                Some(SandboxAction::Wind(None))
            }
            SandboxInput::KeyReleased(SandboxKey::RigidGroups) => {
                self.groups_key_held = false;
                None
            }
            SandboxInput::KeyReleased(_) => None,
        }
    }

    fn key_pressed(&mut self, key: SandboxKey) -> Option<SandboxAction> {
        match key {
            SandboxKey::Pause => {
                self.paused = !self.paused;
                Some(SandboxAction::Pause(self.paused))
            }
            SandboxKey::Step => self.paused.then_some(SandboxAction::Step),
            SandboxKey::Reset | SandboxKey::NextScene => {
                // The reloaded scene starts free: a grab does not carry over.
                if matches!(self.drag, Some(Drag::Grab(_))) {
                    self.drag = None;
                }
                Some(if key == SandboxKey::Reset {
                    SandboxAction::Reset
                } else {
                    SandboxAction::NextScene
                })
            }
            SandboxKey::Reactions => {
                self.show_reactions = !self.show_reactions;
                Some(SandboxAction::ShowReactions(self.show_reactions))
            }
            // A held key repeats its press: one breath until it is let go.
            SandboxKey::Wind if self.blowing => None,
            SandboxKey::Wind => {
                self.blowing = true;
                Some(SandboxAction::Wind(Some(SPACE_BAR_WIND_LEVEL)))
            }
            // One switch per press, however long the key is held.
            SandboxKey::RigidGroups if self.groups_key_held => None,
            SandboxKey::RigidGroups => {
                self.groups_key_held = true;
                Some(SandboxAction::ToggleRigidGroups)
            }
            SandboxKey::Quit => Some(SandboxAction::Quit),
        }
    }

    /// The view's camera, through which the pointer's pixels are seen.
    fn pointer_camera(&self) -> PointerCamera<'_> {
        PointerCamera {
            intrinsics: &self.intrinsics,
            camera_from_world: self.view.camera_from_world(),
        }
    }

    fn grab(&mut self, x_px: f64, y_px: f64, bodies: &[BodyView]) -> Option<SandboxAction> {
        let (pick, grab) = GrabDrag::start(&self.pointer_camera(), x_px, y_px, bodies)?;
        self.drag = Some(Drag::Grab(grab));
        Some(SandboxAction::Grab {
            pick,
            spring: grab.spring(),
        })
    }

    fn pointer_moved(&mut self, x_px: f64, y_px: f64) -> Option<SandboxAction> {
        match self.drag.as_mut()? {
            Drag::Orbit { last_px } => {
                let (dx, dy) = (x_px - last_px.0, y_px - last_px.1);
                *last_px = (x_px, y_px);
                self.view.orbit(dx, dy);
                None
            }
            Drag::Pan { last_px } => {
                let (dx, dy) = (x_px - last_px.0, y_px - last_px.1);
                *last_px = (x_px, y_px);
                self.view.pan(dx, dy, self.intrinsics.fx);
                None
            }
            Drag::Grab(grab) => {
                let mut grab = *grab;
                let moved = grab.follow(&self.pointer_camera(), x_px, y_px)?;
                self.drag = Some(Drag::Grab(grab));
                Some(SandboxAction::MoveTarget(moved))
            }
        }
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
