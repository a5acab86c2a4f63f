//! What the sandbox's user does, as plain data: pointer moves, presses and releases in pixel
//! coordinates, wheel notches and the sandbox's keys. A window's events are mapped into these
//! ([`super::window_input`]), and tests write them by hand, so the controller never needs a
//! window.

/// A pointer (mouse) button.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointerButton {
    /// Grabs a body (drag moves the spring's target).
    Left,
    /// Orbits the view about its pivot.
    Right,
    /// Pans the view.
    Middle,
}

/// The sandbox's keys, by what they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxKey {
    /// Pause or resume the simulation (`P`).
    Pause,
    /// One solver step while paused (`N`).
    Step,
    /// Reload the scene's initial state (`R`).
    Reset,
    /// Show or hide the reaction and contact arrows (`F`).
    Reactions,
    /// The next shipped scene (`Tab`).
    NextScene,
    /// Switch the scene's rigid groups: all rigid if any is deformable, else all deformable
    /// (`G`; the rig's `make_rigid` / `make_deformable`).
    RigidGroups,
    /// Blow while held (space bar).
    Wind,
    /// End the session (`Esc`).
    Quit,
}

impl SandboxKey {
    /// Every key, in the order the help line names them.
    pub const ALL: [SandboxKey; 8] = [
        SandboxKey::Pause,
        SandboxKey::Step,
        SandboxKey::Reset,
        SandboxKey::Reactions,
        SandboxKey::NextScene,
        SandboxKey::RigidGroups,
        SandboxKey::Wind,
        SandboxKey::Quit,
    ];

    /// The key's name on the keyboard, as the help line and the events file write it.
    pub fn key_name(self) -> &'static str {
        match self {
            SandboxKey::Pause => "P",
            SandboxKey::Step => "N",
            SandboxKey::Reset => "R",
            SandboxKey::Reactions => "F",
            SandboxKey::NextScene => "Tab",
            SandboxKey::RigidGroups => "G",
            SandboxKey::Wind => "Space",
            SandboxKey::Quit => "Esc",
        }
    }

    /// What the key does, in a word or two.
    pub fn action(self) -> &'static str {
        match self {
            SandboxKey::Pause => "pause",
            SandboxKey::Step => "step",
            SandboxKey::Reset => "reset",
            SandboxKey::Reactions => "forces",
            SandboxKey::NextScene => "scene",
            SandboxKey::RigidGroups => "rigid groups",
            SandboxKey::Wind => "wind (hold)",
            SandboxKey::Quit => "quit",
        }
    }

    /// The key with this name (as [`Self::key_name`] writes it, any case).
    pub fn from_key_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.key_name().eq_ignore_ascii_case(name))
    }
}

/// One thing the user did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SandboxInput {
    /// The pointer is now at this pixel (x right, y down, from the view's top-left corner).
    PointerMoved {
        /// Column, pixels.
        x_px: f64,
        /// Row, pixels.
        y_px: f64,
    },
    /// A button went down with the pointer at this pixel.
    PointerPressed {
        /// Which button.
        button: PointerButton,
        /// Column, pixels.
        x_px: f64,
        /// Row, pixels.
        y_px: f64,
    },
    /// A button came up.
    PointerReleased {
        /// Which button.
        button: PointerButton,
    },
    /// The wheel turned by this many notches (positive: away from the user, zooms in).
    Wheel {
        /// Notches.
        notches: f64,
    },
    /// A key went down (a held key's repeats come as more presses).
    KeyPressed(SandboxKey),
    /// A key came up.
    KeyReleased(SandboxKey),
}

/// The help line of the HUD: the mouse and the keys.
pub fn help_lines() -> [String; 2] {
    let keys = SandboxKey::ALL
        .iter()
        .map(|k| format!("{} {}", k.key_name(), k.action()))
        .collect::<Vec<_>>()
        .join("  ");
    [
        "left drag: grab   right drag: orbit   middle drag: pan   wheel: zoom".to_owned(),
        keys,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_a_distinct_name_that_reads_back() {
        for k in SandboxKey::ALL {
            assert_eq!(SandboxKey::from_key_name(k.key_name()), Some(k));
            assert_eq!(
                SandboxKey::from_key_name(&k.key_name().to_lowercase()),
                Some(k)
            );
        }
        assert_eq!(SandboxKey::from_key_name("Z"), None);
        let [mouse, keys] = help_lines();
        assert!(mouse.contains("wheel: zoom"), "{mouse}");
        assert_eq!(
            keys,
            "P pause  N step  R reset  F forces  Tab scene  G rigid groups  Space wind (hold)  Esc quit"
        );
    }
}
