//! Microphone: cpal capture and a synthetic microphone, reporting levels.
