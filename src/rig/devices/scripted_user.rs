//! The demo's scripted user: moves the simulated arm's stylus (live control through its
//! inverse kinematics) to a grab point, presses the button, drags the point 10 cm, releases and
//! backs off, then watches the free swing. In a scene whose tip pushes, the user first pushes
//! the body with the tip, button up ([`PushStroke`]: over to the body's side, down, a straight
//! push, back and up), then clips to the grab point where the push left it. It only touches
//! the arm's buttons and joints, as a person would; the rig sees it through the real serial
//! driver. The gesture's clock starts when the arm streams, so a slow start-up cannot make the
//! user press too early.

use crate::rig::threads::worker::{StopFlag, Worker, WorkerError};
use ar_drivers::arm::{SimArmControl, SimArmHandle};
use nalgebra::{Isometry3, Point3, Vector3};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The phases of the scripted interaction, with their durations.
#[derive(Debug, Clone)]
pub struct UserScript {
    /// Grab point to reach, world frame.
    pub grab_in_world: Point3<f64>,
    /// Drag displacement while clipped, world frame (10 cm by default).
    pub drag_in_world: Vector3<f64>,
    /// Where the stylus waits before and after, relative to the grab point, world frame.
    pub rest_offset_in_world: Vector3<f64>,
    /// Wait before moving, seconds.
    pub wait_s: f64,
    /// Reach from rest to the grab point, seconds.
    pub reach_s: f64,
    /// Drag duration, seconds.
    pub drag_s: f64,
    /// Hold at the end of the drag before releasing, seconds.
    pub hold_s: f64,
    /// Back off to rest after the release, seconds.
    pub back_off_s: f64,
    /// The arm's base in the world.
    pub world_from_arm: Isometry3<f64>,
    /// A push with the tip before the clip, if the scene's tip pushes.
    pub push: Option<PushStroke>,
    /// The user reaches, clips and drags; `false`: the stylus stays at rest for `wait_s`
    /// and the user only watches (a scene without a grab point, [`super::watch_gesture`]).
    pub clips: bool,
}

/// A push with the stylus tip, button up: from the rest position over to `start_in_world`
/// (through the point `clearance_m` above it, so the tip comes down beside the body instead of
/// through it), along `travel_in_world` at a steady speed, then back `back_off_m` and up by
/// `clearance_m` again.
#[derive(Debug, Clone)]
pub struct PushStroke {
    /// Where the tip starts the push, clear of the body, world frame.
    pub start_in_world: Point3<f64>,
    /// The tip's travel during the push, world frame (metres).
    pub travel_in_world: Vector3<f64>,
    /// How far the grab point moves with the pushed body, world frame: the user then reaches
    /// for the grab point where the push left it.
    pub grab_moves_by_in_world: Vector3<f64>,
    /// Height above the start (and the end) the tip passes over, metres.
    pub clearance_m: f64,
    /// How far the tip backs off along the push after it, metres.
    pub back_off_m: f64,
    /// From rest to over the start, and from over the start down to it, seconds each.
    pub approach_s: f64,
    /// The push itself, seconds.
    pub push_s: f64,
    /// Backing off, and going up, seconds each.
    pub leave_s: f64,
}

/// One point of the gesture: at `at_s` the tip is at `tip_in_world` and the button is set to
/// `pressed` until the next key; the tip comes to it from the previous key with a smooth start
/// and stop, or at a steady speed when `steady`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// Time from the start, seconds.
    pub at_s: f64,
    /// The tip, world frame.
    pub tip_in_world: Point3<f64>,
    /// The button from this key on.
    pub pressed: bool,
    /// The tip comes here at a steady speed (a push), not with a smooth start and stop.
    pub steady: bool,
}

impl UserScript {
    /// The default demo gesture at `grab_in_world`.
    pub fn demo(grab_in_world: Point3<f64>, world_from_arm: Isometry3<f64>) -> Self {
        Self {
            grab_in_world,
            // 10 cm sideways and 5 cm up, as in the solver's acceptance run: the ten-pendula tip
            // starts at the chain's full reach below the pivot, so a purely horizontal pull
            // would ask for more length than the chain has and pull it taut.
            drag_in_world: Vector3::new(0.10, 0.0, 0.05),
            rest_offset_in_world: Vector3::new(-0.04, -0.06, 0.05),
            wait_s: 0.8,
            reach_s: 1.2,
            drag_s: 1.5,
            hold_s: 0.5,
            back_off_s: 0.8,
            world_from_arm,
            push: None,
            clips: true,
        }
    }

    /// The gesture's keys, in time order: wait at rest, (push,) reach the grab point, press,
    /// drag, hold, release, back off (only the wait when the user does not clip).
    pub fn keys(&self) -> Vec<Key> {
        let mut keys = Vec::with_capacity(16);
        let mut t = 0.0;
        let mut key = |dt: f64, tip_in_world: Point3<f64>, pressed: bool, steady: bool| {
            t += dt;
            keys.push(Key {
                at_s: t,
                tip_in_world,
                pressed,
                steady,
            });
        };
        let rest = self.grab_in_world + self.rest_offset_in_world;
        key(0.0, rest, false, false);
        key(self.wait_s, rest, false, false);
        if !self.clips {
            return keys;
        }
        let mut grab = self.grab_in_world;
        if let Some(p) = &self.push {
            let up = Vector3::new(0.0, 0.0, p.clearance_m);
            let end = p.start_in_world + p.travel_in_world;
            let back = end - p.travel_in_world.normalize() * p.back_off_m;
            key(p.approach_s, p.start_in_world + up, false, false);
            key(p.approach_s, p.start_in_world, false, false);
            // The push is steady: a hand's push, and a tip that meets the body and leaves it
            // at one speed (see `super::push_gesture` for what that means for the body).
            key(p.push_s, end, false, true);
            key(p.leave_s, back, false, false);
            key(p.leave_s, back + up, false, false);
            grab += p.grab_moves_by_in_world;
        }
        let dragged = grab + self.drag_in_world;
        key(self.reach_s, grab, false, false);
        key(0.1, grab, true, false);
        key(self.drag_s, dragged, true, false);
        key(self.hold_s, dragged, false, false);
        key(0.1, dragged, false, false);
        key(
            self.back_off_s,
            dragged + self.rest_offset_in_world,
            false,
            false,
        );
        keys
    }

    /// Time of the button press, seconds from the start.
    pub fn press_at_s(&self) -> f64 {
        let keys = self.keys();
        keys.iter().find(|k| k.pressed).map_or(0.0, |k| k.at_s)
    }

    /// Time of the button release, seconds from the start.
    pub fn release_at_s(&self) -> f64 {
        let keys = self.keys();
        keys.windows(2)
            .find(|w| w[0].pressed && !w[1].pressed)
            .map_or(0.0, |w| w[1].at_s)
    }

    /// Time the push ends (the tip at the end of its travel), seconds from the start, if the
    /// gesture pushes.
    pub fn push_end_s(&self) -> Option<f64> {
        // Keys: rest, rest after the wait, over the start, the start, the push's end.
        self.push
            .as_ref()
            .and_then(|_| self.keys().get(4).map(|k| k.at_s))
    }

    /// Total length of the gesture, seconds.
    pub fn duration_s(&self) -> f64 {
        self.keys().last().map_or(0.0, |k| k.at_s)
    }

    /// The stylus tip (world) and the button at `t` seconds.
    pub fn at(&self, t: f64) -> (Point3<f64>, bool) {
        let keys = self.keys();
        let smooth = |x: f64| {
            let x = x.clamp(0.0, 1.0);
            x * x * (3.0 - 2.0 * x)
        };
        match keys.windows(2).find(|w| t < w[1].at_s) {
            Some(w) => {
                let (a, b) = (w[0], w[1]);
                let x = ((t - a.at_s) / (b.at_s - a.at_s).max(1e-12)).clamp(0.0, 1.0);
                let s = if b.steady { x } else { smooth(x) };
                (
                    a.tip_in_world + (b.tip_in_world - a.tip_in_world) * s,
                    a.pressed,
                )
            }
            None => {
                let last = keys[keys.len() - 1];
                (last.tip_in_world, last.pressed)
            }
        }
    }
}

/// Extra wait after the arm starts streaming, so the driver's samples are flowing into the rig
/// before the gesture starts, seconds.
const STREAM_SETTLE_S: f64 = 0.3;

/// Plays `script` on the simulated arm at 200 Hz on a thread named "user", which owns the arm
/// (it stops with the thread). Like a person waiting for the system to come up, the user
/// starts the gesture once the arm streams (the driver has finished its handshake).
pub fn spawn_scripted_user(
    arm: SimArmHandle,
    script: UserScript,
    stop: StopFlag,
) -> Result<Worker<Result<(), String>>, WorkerError> {
    spawn_scripted_user_with_progress(arm, script, stop, Arc::new(AtomicBool::new(false)))
}

/// As [`spawn_scripted_user`]; `gesture_done` becomes true once the gesture is over (the user
/// then only watches, and keeps the arm running until stopped).
pub fn spawn_scripted_user_with_progress(
    arm: SimArmHandle,
    script: UserScript,
    stop: StopFlag,
    gesture_done: Arc<AtomicBool>,
) -> Result<Worker<Result<(), String>>, WorkerError> {
    Worker::spawn("user", stop, move |stop| {
        let control: SimArmControl = arm.control();
        while !arm.status().streaming {
            if stop.is_stopped() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_secs_f64(STREAM_SETTLE_S));
        let start = Instant::now();
        let arm_from_world = script.world_from_arm.inverse();
        let mut pressed = false;
        while !stop.is_stopped() {
            let t = start.elapsed().as_secs_f64();
            if t > script.duration_s() {
                // The gesture is over; the user watches the free swing.
                gesture_done.store(true, Ordering::Release);
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
            let (tip_in_world, button) = script.at(t);
            control
                .follow_tip_target(arm_from_world * tip_in_world)
                .map_err(|e| {
                    format!("scripted user: tip {tip_in_world} out of the arm's reach: {e}")
                })?;
            if button && !pressed {
                control.press(0x01);
            } else if !button && pressed {
                control.release(0x01);
            }
            pressed = button;
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gesture_presses_at_the_grab_point_and_releases_after_the_drag() {
        let s = UserScript::demo(Point3::new(0.0, 0.0, 0.1), Isometry3::identity());
        let (p, b) = s.at(s.press_at_s() + 1e-3);
        assert!(b && (p - s.grab_in_world).norm() < 1e-6);
        let (p, b) = s.at(s.release_at_s() - 1e-3);
        assert!(b && (p - (s.grab_in_world + s.drag_in_world)).norm() < 1e-9);
        let (_, b) = s.at(s.release_at_s() + 0.05);
        assert!(!b);
        let (p, b) = s.at(0.0);
        assert!(!b && (p - s.grab_in_world).norm() > 0.05);
    }
}
