//! The window's events as the sandbox's inputs: kiss3d reports the cursor's position apart
//! from its button presses, so the mapper remembers where the cursor is; keys other than the
//! sandbox's, and the buttons beyond the third, are ignored.
//!
//! The window shows the rendered view stretched to the window's size (the compositor's
//! projection fills the framebuffer whatever its size), so a resized window's pixels are
//! mapped back to the view's: the mapper follows the framebuffer's size from kiss3d's
//! `FramebufferSize` events (the window opens at the view's size) and scales the cursor's
//! position by view size / window size on each axis, pixel edges to pixel edges.

use super::input::{PointerButton, SandboxInput, SandboxKey};
use kiss3d::event::{Action, Key, MouseButton, WindowEvent};

/// kiss3d reports a wheel line as 10 scroll units.
const SCROLL_UNITS_PER_NOTCH: f64 = 10.0;

/// Maps window events to inputs; see the module docs.
#[derive(Debug, Clone)]
pub struct WindowInputMapper {
    /// The cursor, in the view's pixels.
    cursor_px: (f64, f64),
    view_size_px: (u32, u32),
    window_size_px: (u32, u32),
    resized: bool,
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
    /// A mapper for a window showing a view of `view_size_px` (width, height), opened at
    /// that size.
    pub fn new(view_size_px: (u32, u32)) -> Self {
        Self {
            cursor_px: (0.0, 0.0),
            view_size_px,
            window_size_px: view_size_px,
            resized: false,
        }
    }

    /// The window's framebuffer size now, pixels.
    pub fn window_size_px(&self) -> (u32, u32) {
        self.window_size_px
    }

    /// The window's new size, once after each change of size.
    pub fn take_resize(&mut self) -> Option<(u32, u32)> {
        std::mem::take(&mut self.resized).then_some(self.window_size_px)
    }

    /// A pixel of the window as the view's pixel (OpenCV's convention: pixel centres at
    /// integers, so the edges scale: centre c of the window is (c + ½)·view/window − ½).
    pub fn view_px(&self, x_px: f64, y_px: f64) -> (f64, f64) {
        let scale = |c: f64, view: u32, window: u32| {
            (c + 0.5) * f64::from(view) / f64::from(window.max(1)) - 0.5
        };
        (
            scale(x_px, self.view_size_px.0, self.window_size_px.0),
            scale(y_px, self.view_size_px.1, self.window_size_px.1),
        )
    }

    /// The input `event` makes, if any.
    pub fn map(&mut self, event: &WindowEvent) -> Option<SandboxInput> {
        match *event {
            WindowEvent::FramebufferSize(w, h) => {
                // A minimised window reports 0 × 0: the last real size stays.
                if w > 0 && h > 0 && (w, h) != self.window_size_px {
                    self.window_size_px = (w, h);
                    self.resized = true;
                }
                None
            }
            WindowEvent::CursorPos(x_px, y_px, _) => {
                let (x_px, y_px) = self.view_px(x_px, y_px);
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
        let mut m = WindowInputMapper::new((640, 480));
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

    #[test]
    fn a_resized_window_maps_its_pixels_back_to_the_views() {
        let none = Modifiers::empty();
        let mut m = WindowInputMapper::new((640, 480));
        assert_eq!(m.take_resize(), None);
        m.map(&WindowEvent::FramebufferSize(1024, 768));
        assert_eq!(m.take_resize(), Some((1024, 768)));
        assert_eq!(m.take_resize(), None, "said once");
        // The same size again, or a minimised window's 0 × 0, is no change.
        m.map(&WindowEvent::FramebufferSize(1024, 768));
        m.map(&WindowEvent::FramebufferSize(0, 0));
        assert_eq!(m.take_resize(), None);
        assert_eq!(m.window_size_px(), (1024, 768));
        // Scale 1.6: the window's centre pixel edge (512, 384) is the view's (320, 240); the
        // window's pixel 0 is the view's −0.1875 (its first pixel's centre, ½ px in, scaled).
        assert_eq!(
            m.map(&WindowEvent::CursorPos(511.5, 383.5, none)),
            Some(SandboxInput::PointerMoved {
                x_px: 319.5,
                y_px: 239.5
            })
        );
        let (x, y) = m.view_px(0.0, 767.0);
        assert!(
            (x + 0.1875).abs() < 1e-12 && (y - 479.1875).abs() < 1e-12,
            "{x} {y}"
        );
        // A press takes the scaled position.
        m.map(&WindowEvent::CursorPos(800.0, 100.0, none));
        let (x, y) = m.view_px(800.0, 100.0);
        assert_eq!(
            m.map(&WindowEvent::MouseButton(
                MouseButton::Button1,
                Action::Press,
                none
            )),
            Some(SandboxInput::PointerPressed {
                button: PointerButton::Left,
                x_px: x,
                y_px: y
            })
        );
        // Another aspect ratio scales each axis on its own.
        m.map(&WindowEvent::FramebufferSize(1280, 480));
        assert_eq!(m.view_px(1279.5, 479.5), (639.5, 479.5));
    }
}
