//! The live rig: worker threads, messages, clocks and shutdown.
