//! The mouse on the live rig (`run` without an `[arm]`, or with `--mouse`): a left drag grabs
//! a body through the stylus spring exactly as in the sandbox ([`super::grab`]), the pick ray
//! coming from the camera the window shows (the registered camera: the marker's tracked pose
//! of the last frame shown) and the window's pixels mapped back to the view's however the
//! window is resized ([`super::window_input`]). The other buttons, the wheel and the keys do
//! nothing here: the view is the real camera's. What happens is said on standard output as
//! in the sandbox ([`super::status`]).

use super::grab::{GrabDrag, PointerCamera};
use super::input::{PointerButton, SandboxInput};
use super::status::{GrabWatch, StatusLines};
use super::window_input::WindowInputMapper;
use crate::rig::display::frame_control::{FrameControl, FrameDecision, ShownView};
use crate::rig::live::DisplayLoopConfig;
use crate::rig::threads::messages::SimSnapshot;
use crate::rig::threads::solver_commands::SolverCommand;
use crate::scene_view::BodyView;
use crossbeam_channel::Sender;
use kiss3d::event::WindowEvent;

/// The HUD's line while the mouse grabs.
pub const MOUSE_HELP: &str = "mouse: left drag grabs a body";

/// The live rig's mouse; see the module docs.
pub struct LiveMouse {
    mapper: WindowInputMapper,
    drag: Option<GrabDrag>,
    watch: GrabWatch,
    status: StatusLines,
    commands: Sender<SolverCommand>,
    /// Whether the view was ever registered (marker seen); said once (the HUD shows the
    /// marker's state from frame to frame).
    registered: bool,
}

impl LiveMouse {
    /// The mouse of a window showing a view of `view_size_px`, sending the spring to the
    /// solver on `commands`.
    pub fn new(view_size_px: (u32, u32), commands: Sender<SolverCommand>) -> Self {
        Self {
            mapper: WindowInputMapper::new(view_size_px),
            drag: None,
            watch: GrabWatch::default(),
            status: StatusLines::new(),
            commands,
            registered: false,
        }
    }

    /// Where the last grabbed point is at the end: the session's last line.
    pub fn final_line(&self) -> Option<String> {
        self.watch.final_line()
    }

    fn send(&self, command: SolverCommand) {
        // The solver drains its commands every step; a send fails only once it has stopped,
        // when there is nothing left to command.
        let _ = self.commands.send(command);
    }

    /// Feeds one input with the view shown and the bodies as shown.
    pub fn handle(&mut self, input: SandboxInput, shown: &ShownView<'_>, bodies: &[BodyView]) {
        let camera = shown
            .camera_from_world
            .map(|camera_from_world| PointerCamera {
                intrinsics: shown.intrinsics,
                camera_from_world,
            });
        match input {
            SandboxInput::PointerPressed {
                button: PointerButton::Left,
                x_px,
                y_px,
            } if self.drag.is_none() => {
                let Some(camera) = camera else {
                    self.status.say(
                        "nothing grabbed: the marker is not seen, so the view is not registered",
                    );
                    return;
                };
                if let Some((pick, drag)) = GrabDrag::start(&camera, x_px, y_px, bodies) {
                    self.status.say(&self.watch.grabbed(&pick));
                    self.send(SolverCommand::Pointer(Some(drag.spring())));
                    self.drag = Some(drag);
                }
            }
            SandboxInput::PointerMoved { x_px, y_px } => {
                // While the marker is not seen the target stays where it was.
                if let (Some(drag), Some(camera)) = (self.drag.as_mut(), camera) {
                    if let Some(spring) = drag.follow(&camera, x_px, y_px) {
                        self.send(SolverCommand::Pointer(Some(spring)));
                    }
                }
            }
            SandboxInput::PointerReleased {
                button: PointerButton::Left,
            } if self.drag.take().is_some() => {
                self.send(SolverCommand::Pointer(None));
                if let Some(line) = self.watch.line("released", bodies) {
                    self.status.say(&line);
                }
            }
            _ => {}
        }
    }
}

impl FrameControl for LiveMouse {
    fn before_frame(
        &mut self,
        events: &[WindowEvent],
        snapshot: Option<&SimSnapshot>,
        shown: &ShownView<'_>,
        _config: &mut DisplayLoopConfig,
    ) -> FrameDecision {
        let bodies = snapshot.map_or(&[][..], |s| &s.bodies[..]);
        if let Some(s) = snapshot {
            self.status.at(s.sim_time_s);
        }
        if !self.registered && shown.camera_from_world.is_some() {
            self.registered = true;
            self.status
                .say("view registered (marker seen): a left drag grabs a body");
        }
        for event in events {
            if let Some(input) = self.mapper.map(event) {
                self.handle(input, shown, bodies);
            }
        }
        if let Some((w, h)) = self.mapper.take_resize() {
            self.status
                .say(&format!("window {w}×{h} px: the view scaled to it"));
        }
        self.watch.update(bodies);
        FrameDecision {
            hud_lines: vec![MOUSE_HELP.to_owned()],
            quit: false,
        }
    }
}
