//! The sandbox on the rig: a [`FrameControl`] that feeds the window's events through the
//! [`SandboxController`], sends the pointer's spring, pause, steps, wind and the rigid groups'
//! switches (`make_rigid` / `make_deformable`, the rig's own command) to the solver
//! thread ([`SolverCommand`]), moves the virtual camera's view ([`ViewHandle`]), reloads or
//! switches the scene, and says what happened on standard output, one line each (`t = … s:`
//! with the session's simulated time, [`super::status`]), so that a script or a test can
//! follow the session.

use super::controller::{SandboxAction, SandboxController};
use super::input::{help_lines, SandboxInput};
use super::orbit::OrbitView;
use super::status::{GrabWatch, StatusLines};
use super::window_input::WindowInputMapper;
use crate::rig::devices::demo_world::{demo_intrinsics, demo_view, DEMO_VIEW_TOWARD_EYE};
use crate::rig::devices::fixed_view::look_at;
use crate::rig::devices::view_camera::ViewHandle;
use crate::rig::display::frame_control::{FrameControl, FrameDecision, ShownView};
use crate::rig::live::DisplayLoopConfig;
use crate::rig::threads::messages::SimSnapshot;
use crate::rig::threads::solver_commands::{SceneSource, SolverCommand};
use crate::rig::RigSimulation;
use crate::scene_view::{BodyView, RigidGroupView};
use crossbeam_channel::Sender;
use kiss3d::event::WindowEvent;
use nalgebra::{Point3, Vector3};

/// Loads a scene by name (shipped) or path, as the session's method does; with the scene's
/// source, for the recording to go on with it.
pub type SceneLoader = Box<dyn FnMut(&str) -> Result<(RigSimulation, SceneSource), String>>;

/// The view a scene starts with: the demo's camera (from in front of the marker, a little
/// right and above, framing the scene below the HUD), orbiting the bodies' centre; a scene
/// the demo cannot frame is seen from the same direction, 1 m from above the marker.
pub fn initial_view(sim: &RigSimulation) -> OrbitView {
    let bodies = sim.bodies();
    let centre = if bodies.is_empty() {
        Point3::new(0.0, 0.0, 0.15)
    } else {
        Point3::from(
            bodies
                .iter()
                .map(|b| b.world_from_body.translation.vector)
                .sum::<Vector3<f64>>()
                / bodies.len() as f64,
        )
    };
    match demo_view(sim, false, false) {
        Some(view) => {
            let depth_m = (view.camera_from_world * centre).z;
            OrbitView::from_camera(&view.camera_from_world, depth_m.max(0.1))
        }
        None => {
            let eye = centre + Vector3::from(DEMO_VIEW_TOWARD_EYE).normalize();
            let camera = look_at(eye, centre).unwrap_or_default();
            OrbitView::from_camera(&camera, 1.0)
        }
    }
}

/// The sandbox's frame control; see the module docs.
pub struct SandboxSession {
    controller: SandboxController,
    mapper: WindowInputMapper,
    commands: Sender<SolverCommand>,
    view: ViewHandle,
    scenes: Vec<String>,
    scene: usize,
    load: SceneLoader,
    watched: GrabWatch,
    blowing: bool,
    /// The scene's rigid groups as the newest snapshot shows them, with the switches sent
    /// since.
    rigid_groups: Vec<RigidGroupView>,
    status: StatusLines,
}

/// What the `G` key asks for, given the groups' states: every group rigid if any is
/// deformable, else every group deformable; one (name, rigid) per group to switch.
pub fn rigid_group_switches(groups: &[RigidGroupView]) -> Vec<(String, bool)> {
    let rigid = groups.iter().any(|g| !g.rigid);
    groups
        .iter()
        .filter(|g| g.rigid != rigid)
        .map(|g| (g.name.to_string(), rigid))
        .collect()
}

impl SandboxSession {
    /// A session on `scenes` (names or paths; the first is running now, seen from `view`),
    /// sending to the solver on `commands` and moving the virtual camera through `view_handle`.
    pub fn new(
        scenes: Vec<String>,
        view: OrbitView,
        view_handle: ViewHandle,
        commands: Sender<SolverCommand>,
        load: SceneLoader,
    ) -> Self {
        view_handle.set(view.camera_from_world());
        let intrinsics = demo_intrinsics();
        let view_size_px = (intrinsics.image_width, intrinsics.image_height);
        Self {
            controller: SandboxController::new(intrinsics, view),
            mapper: WindowInputMapper::new(view_size_px),
            commands,
            view: view_handle,
            scenes,
            scene: 0,
            load,
            watched: GrabWatch::default(),
            blowing: false,
            rigid_groups: Vec::new(),
            status: StatusLines::new(),
        }
    }

    /// The controller (its view, pause state).
    pub fn controller(&self) -> &SandboxController {
        &self.controller
    }

    /// The scene's rigid groups as shown now (from each snapshot).
    pub fn update_rigid_groups(&mut self, groups: &[RigidGroupView]) {
        self.rigid_groups.clear();
        self.rigid_groups.extend_from_slice(groups);
    }

    /// Feeds one input with the bodies as shown; false when the user asked to quit.
    pub fn handle(&mut self, input: SandboxInput, bodies: &[BodyView]) -> bool {
        log::debug!("sandbox input: {input:?}");
        let Some(action) = self.controller.handle(input, bodies) else {
            return true;
        };
        match action {
            SandboxAction::Grab { pick, spring } => {
                let line = self.watched.grabbed(&pick);
                self.say(line);
                self.send(SolverCommand::Pointer(Some(spring)));
            }
            SandboxAction::MoveTarget(spring) => self.send(SolverCommand::Pointer(Some(spring))),
            SandboxAction::Release => {
                self.send(SolverCommand::Pointer(None));
                if let Some(line) = self.watched.line("released", bodies) {
                    self.say(line);
                }
            }
            SandboxAction::Pause(paused) => {
                self.say(if paused { "paused" } else { "running" }.into());
                self.send(SolverCommand::Pause(paused));
            }
            SandboxAction::Step => self.send(SolverCommand::Step),
            SandboxAction::Reset => {
                // A scene that loaded once reloads; if its file went, the message says so.
                self.load_scene(self.scene, "reset");
            }
            SandboxAction::NextScene => self.next_scene(),
            SandboxAction::ShowReactions(shown) => {
                self.say(format!("forces {}", if shown { "shown" } else { "hidden" }));
            }
            SandboxAction::Wind(level) => {
                self.blowing = level.is_some();
                self.send(SolverCommand::Wind(level));
            }
            SandboxAction::ToggleRigidGroups => self.switch_rigid_groups(),
            SandboxAction::Quit => return false,
        }
        true
    }

    /// Where the watched point (the last grabbed) is at the end, and how far from where it
    /// was grabbed: the session's last line.
    pub fn final_line(&self) -> Option<String> {
        self.watched.final_line()
    }

    fn switch_rigid_groups(&mut self) {
        let switches = rigid_group_switches(&self.rigid_groups);
        if switches.is_empty() {
            self.say("no rigid groups in this scene".into());
        }
        for (name, rigid) in switches {
            let what = if rigid {
                "make_rigid"
            } else {
                "make_deformable"
            };
            self.say(format!("{what} {name}"));
            // Shown switched at once, so that a second press before the next snapshot
            // switches back rather than repeating.
            if let Some(g) = self.rigid_groups.iter_mut().find(|g| *g.name == *name) {
                g.rigid = rigid;
            }
            self.send(SolverCommand::SetGroupRigid { name, rigid });
        }
    }

    fn say(&self, line: String) {
        self.status.say(&line);
    }

    fn send(&self, command: SolverCommand) {
        // The solver drains its commands every step; a send fails only once it has stopped,
        // when there is nothing left to command.
        let _ = self.commands.send(command);
    }

    fn next_scene(&mut self) {
        // A scene that does not load is named and skipped; the one running stays if none does.
        for k in 1..=self.scenes.len() {
            let index = (self.scene + k) % self.scenes.len();
            if self.load_scene(index, "scene") {
                return;
            }
        }
    }

    fn load_scene(&mut self, index: usize, why: &str) -> bool {
        let name = self.scenes[index].clone();
        match (self.load)(&name) {
            Ok((sim, source)) => {
                if index != self.scene {
                    self.controller.set_view(initial_view(&sim));
                    self.watched.forget();
                }
                self.scene = index;
                self.say(format!("{why}: {name} at its initial state"));
                self.send(SolverCommand::Replace(Box::new(sim), Some(source)));
                true
            }
            Err(e) => {
                self.say(format!("{why}: scene {name} does not load: {e}"));
                false
            }
        }
    }
}

impl FrameControl for SandboxSession {
    fn before_frame(
        &mut self,
        events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        // The virtual camera shows the controller's own view, whose rays the grabs follow.
        _shown: &ShownView<'_>,
        config: &mut DisplayLoopConfig,
    ) -> FrameDecision {
        let bodies = snapshot.map_or(&[][..], |s| &s.bodies[..]);
        if let Some(s) = snapshot {
            self.update_rigid_groups(&s.rigid_groups);
            self.status.at(s.sim_time_s);
        }
        let mut quit = false;
        for event in events {
            if let Some(input) = self.mapper.map(event) {
                quit |= !self.handle(input, bodies);
            }
        }
        if let Some((w, h)) = self.mapper.take_resize() {
            self.say(format!("window {w}×{h} px: the view scaled to it"));
        }
        self.view.set(self.controller.camera_from_world());
        config.show_reactions = self.controller.shows_reactions();
        self.watched.update(bodies);
        let mut hud_lines = Vec::new();
        let state = match (self.controller.is_paused(), self.blowing) {
            (true, true) => Some("PAUSED   blowing"),
            (true, false) => Some("PAUSED (N steps)"),
            (false, true) => Some("blowing"),
            (false, false) => None,
        };
        hud_lines.extend(state.map(str::to_owned));
        if !self.rigid_groups.is_empty() {
            let groups = self
                .rigid_groups
                .iter()
                .map(|g| {
                    format!(
                        "{} {}",
                        g.name,
                        if g.rigid { "rigid" } else { "deformable" }
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            hud_lines.push(format!("rigid groups: {groups}"));
        }
        hud_lines.extend(help_lines());
        FrameDecision { hud_lines, quit }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
