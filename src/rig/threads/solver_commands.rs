//! Commands to the solver thread from the user in front of the window (the sandbox): the
//! pointer's grab through the stylus spring, pause and single steps, the user's wind, a
//! fresh simulation (a reset or another scene), and `make_rigid` / `make_deformable` of a
//! deformable body's rigid group. They arrive on their own bounded channel, so
//! none is lost the way a latest-value stream drops values; [`UserControls`] is what the
//! solver loop makes of them.

use crate::interaction::SpringAttachment;
use crate::rig::RigSimulation;

/// A scene as the session loaded it, for a recording to go on with it: its name as the user
/// gave it and its file's text.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneSource {
    /// The scene's name (shipped) or path, as given.
    pub name: String,
    /// The scene file's text, copied into the recording's next part.
    pub text: String,
}

/// One command to the solver thread.
pub enum SolverCommand {
    /// The pointer's spring: clipped to a body point and pulling toward a target, or `None`
    /// to let go. It acts like the stylus's (the same spring, stiffness and damping).
    Pointer(Option<SpringAttachment>),
    /// Stop stepping (`true`) or step on in real time; a pause costs no dropped steps.
    Pause(bool),
    /// One step now, while paused.
    Step,
    /// The user's wind level (full scale 1) while they blow, `None` when they stop; it takes
    /// the microphone's place.
    Wind(Option<f64>),
    /// Go on with this simulation instead (the scene reloaded, or another scene). The pointer
    /// lets go; a recording goes on in its next part with the scene's source, or ends here
    /// without it (each part holds one scene from its start).
    Replace(Box<RigSimulation>, Option<SceneSource>),
    /// `make_rigid` (`rigid: true`) or `make_deformable` of the rigid group of this name
    /// (`<deformable>.<group>`, see [`ar_dynamics::deformable::rigid_group`]).
    SetGroupRigid {
        /// The group's name.
        name: String,
        /// Rigid from now on, or deformable.
        rigid: bool,
    },
}

impl std::fmt::Debug for SolverCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SolverCommand::Pointer(s) => f.debug_tuple("Pointer").field(s).finish(),
            SolverCommand::Pause(p) => f.debug_tuple("Pause").field(p).finish(),
            SolverCommand::Step => f.write_str("Step"),
            SolverCommand::Wind(w) => f.debug_tuple("Wind").field(w).finish(),
            SolverCommand::Replace(sim, source) => f
                .debug_tuple("Replace")
                .field(&sim.name())
                .field(&source.as_ref().map(|s| &s.name))
                .finish(),
            SolverCommand::SetGroupRigid { name, rigid } => f
                .debug_struct("SetGroupRigid")
                .field("name", name)
                .field("rigid", rigid)
                .finish(),
        }
    }
}

/// The state the commands leave the solver loop in.
#[derive(Default)]
pub struct UserControls {
    /// The pointer's spring, while it holds a body.
    pub pointer: Option<SpringAttachment>,
    /// True while paused.
    pub paused: bool,
    /// Single steps asked for and not yet taken.
    pub steps_pending: u32,
    /// The user's wind level while they blow.
    pub wind_level: Option<f64>,
    /// A simulation to go on with (and its scene's source), not yet swapped in.
    pub replacement: Option<(RigSimulation, Option<SceneSource>)>,
    /// Something changed that the next snapshot must show even without a step.
    pub changed: bool,
}

/// What applying a command did that the solver reports.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlEvent {
    /// The pointer clipped the spring to a body.
    PointerClipped {
        /// The body.
        body: usize,
    },
    /// The pointer let go.
    PointerReleased,
    /// Paused, or running again.
    Paused(bool),
    /// A rigid group is to switch: the solver loop applies it to the simulation.
    SetGroupRigid {
        /// The group's name.
        name: String,
        /// Rigid, or deformable.
        rigid: bool,
    },
}

impl UserControls {
    /// Applies one command; says what to report.
    pub fn apply(&mut self, command: SolverCommand) -> Option<ControlEvent> {
        self.changed = true;
        match command {
            SolverCommand::Pointer(spring) => {
                let was = std::mem::replace(&mut self.pointer, spring);
                match (was, spring) {
                    (None, Some(s)) => Some(ControlEvent::PointerClipped { body: s.body }),
                    (Some(_), None) => Some(ControlEvent::PointerReleased),
                    _ => None,
                }
            }
            SolverCommand::Pause(paused) => {
                let changed = paused != self.paused;
                self.paused = paused;
                self.steps_pending = 0;
                changed.then_some(ControlEvent::Paused(paused))
            }
            SolverCommand::Step => {
                if self.paused {
                    self.steps_pending += 1;
                }
                None
            }
            SolverCommand::Wind(level) => {
                self.wind_level = level;
                None
            }
            SolverCommand::Replace(sim, source) => {
                self.replacement = Some((*sim, source));
                self.pointer.take().map(|_| ControlEvent::PointerReleased)
            }
            SolverCommand::SetGroupRigid { name, rigid } => {
                Some(ControlEvent::SetGroupRigid { name, rigid })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    fn spring(x: f64) -> SpringAttachment {
        SpringAttachment {
            body: 10,
            point_in_body: Point3::origin(),
            target_in_world: Point3::new(x, 0.0, 0.1),
        }
    }

    #[test]
    fn the_pointer_clips_once_moves_and_lets_go() {
        let mut c = UserControls::default();
        assert_eq!(
            c.apply(SolverCommand::Pointer(Some(spring(0.0)))),
            Some(ControlEvent::PointerClipped { body: 10 })
        );
        assert_eq!(c.apply(SolverCommand::Pointer(Some(spring(0.05)))), None);
        assert_eq!(c.pointer, Some(spring(0.05)));
        assert_eq!(
            c.apply(SolverCommand::Pointer(None)),
            Some(ControlEvent::PointerReleased)
        );
    }

    #[test]
    fn group_switches_are_passed_to_the_solver_loop() {
        let mut c = UserControls::default();
        assert_eq!(
            c.apply(SolverCommand::SetGroupRigid {
                name: "lever.beam".into(),
                rigid: true
            }),
            Some(ControlEvent::SetGroupRigid {
                name: "lever.beam".into(),
                rigid: true
            })
        );
        assert!(c.changed);
    }

    #[test]
    fn single_steps_count_only_while_paused() {
        let mut c = UserControls::default();
        c.apply(SolverCommand::Step);
        assert_eq!(c.steps_pending, 0);
        assert_eq!(
            c.apply(SolverCommand::Pause(true)),
            Some(ControlEvent::Paused(true))
        );
        c.apply(SolverCommand::Step);
        c.apply(SolverCommand::Step);
        assert_eq!(c.steps_pending, 2);
        assert_eq!(c.apply(SolverCommand::Pause(true)), None);
        assert_eq!(c.steps_pending, 0);
    }
}
