//! The window's events as the sandbox's inputs: kiss3d reports the cursor's position apart
//! from its button presses, so the mapper remembers where the cursor is; keys other than the
//! sandbox's, and the buttons beyond the third, are ignored.

use super::input::{PointerButton, SandboxInput, SandboxKey};
use kiss3d::event::{Action, Key, MouseButton, WindowEvent};

/// kiss3d reports a wheel line as 10 scroll units.
const SCROLL_UNITS_PER_NOTCH: f64 = 10.0;

/// Maps window events to inputs; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct WindowInputMapper {
    cursor_px: (f64, f64),
}

fn sandbox_key(key: Key) -> Option<SandboxKey> {
    Some(match key {
        Key::P => SandboxKey::Pause,
        Key::N => SandboxKey::Step,
        Key::R => SandboxKey::Reset,
        Key::F => SandboxKey::Reactions,
        Key::Tab => SandboxKey::NextScene,
        Key::G => SandboxKey::RigidGroups,
        Key::Space => SandboxKey::Wind,
        Key::Escape => SandboxKey::Quit,
        _ => return None,
    })
}

fn pointer_button(button: MouseButton) -> Option<PointerButton> {
    Some(match button {
        MouseButton::Button1 => PointerButton::Left,
        MouseButton::Button2 => PointerButton::Right,
        MouseButton::Button3 => PointerButton::Middle,
        _ => return None,
    })
}

impl WindowInputMapper {
    /// The input `event` makes, if any.
    pub fn map(&mut self, event: &WindowEvent) -> Option<SandboxInput> {
        match *event {
            WindowEvent::CursorPos(x_px, y_px, _) => {
                self.cursor_px = (x_px, y_px);
                Some(SandboxInput::PointerMoved { x_px, y_px })
            }
            WindowEvent::MouseButton(button, action, _) => {
                let button = pointer_button(button)?;
                match action {
                    Action::Press => Some(SandboxInput::PointerPressed {
                        button,
                        x_px: self.cursor_px.0,
                        y_px: self.cursor_px.1,
                    }),
                    Action::Release => Some(SandboxInput::PointerReleased { button }),
                }
            }
            WindowEvent::Scroll(_, dy, _) => Some(SandboxInput::Wheel {
                notches: dy / SCROLL_UNITS_PER_NOTCH,
            }),
            WindowEvent::Key(key, action, _) => {
                let key = sandbox_key(key)?;
                match action {
                    Action::Press => Some(SandboxInput::KeyPressed(key)),
                    Action::Release => Some(SandboxInput::KeyReleased(key)),
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiss3d::event::Modifiers;

    #[test]
    fn a_press_takes_the_last_cursor_position() {
        let none = Modifiers::empty();
        let mut m = WindowInputMapper::default();
        m.map(&WindowEvent::CursorPos(120.5, 80.0, none));
        assert_eq!(
            m.map(&WindowEvent::MouseButton(
                MouseButton::Button1,
                Action::Press,
                none
            )),
            Some(SandboxInput::PointerPressed {
                button: PointerButton::Left,
                x_px: 120.5,
                y_px: 80.0
            })
        );
        assert_eq!(
            m.map(&WindowEvent::Scroll(0.0, -10.0, none)),
            Some(SandboxInput::Wheel { notches: -1.0 })
        );
        assert_eq!(
            m.map(&WindowEvent::Key(Key::Space, Action::Release, none)),
            Some(SandboxInput::KeyReleased(SandboxKey::Wind))
        );
        assert_eq!(
            m.map(&WindowEvent::Key(Key::G, Action::Press, none)),
            Some(SandboxInput::KeyPressed(SandboxKey::RigidGroups))
        );
        assert_eq!(m.map(&WindowEvent::Key(Key::Z, Action::Press, none)), None);
    }
}
