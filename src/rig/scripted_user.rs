//! The demo's scripted user: moves the simulated arm's stylus (live control through its
//! inverse kinematics) to a grab point, presses the button, drags the point 10 cm, releases and
//! backs off, then watches the free swing. It only touches the arm's buttons and joints, as a
//! person would; the rig sees it through the real serial driver. The gesture's clock starts
//! when the arm streams, so a slow start-up cannot make the user press too early.

use super::worker::{StopFlag, Worker, WorkerError};
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
        }
    }

    /// Time of the button press, seconds from the start.
    pub fn press_at_s(&self) -> f64 {
        self.wait_s + self.reach_s + 0.1
    }

    /// Time of the button release, seconds from the start.
    pub fn release_at_s(&self) -> f64 {
        self.press_at_s() + self.drag_s + self.hold_s
    }

    /// Total length of the gesture, seconds.
    pub fn duration_s(&self) -> f64 {
        self.release_at_s() + 0.1 + self.back_off_s
    }

    /// The stylus tip (world) and the button at `t` seconds.
    pub fn at(&self, t: f64) -> (Point3<f64>, bool) {
        let rest = self.grab_in_world + self.rest_offset_in_world;
        let grab = self.grab_in_world;
        let dragged = grab + self.drag_in_world;
        let smooth = |x: f64| {
            let x = x.clamp(0.0, 1.0);
            x * x * (3.0 - 2.0 * x)
        };
        let lerp = |a: Point3<f64>, b: Point3<f64>, s: f64| a + (b - a) * smooth(s);
        let press = self.press_at_s();
        let release = self.release_at_s();
        if t < self.wait_s {
            (rest, false)
        } else if t < self.wait_s + self.reach_s {
            (lerp(rest, grab, (t - self.wait_s) / self.reach_s), false)
        } else if t < press {
            (grab, false)
        } else if t < press + self.drag_s {
            (lerp(grab, dragged, (t - press) / self.drag_s), true)
        } else if t < release {
            (dragged, true)
        } else if t < release + 0.1 {
            (dragged, false)
        } else {
            let back = dragged + self.rest_offset_in_world;
            (
                lerp(dragged, back, (t - release - 0.1) / self.back_off_s),
                false,
            )
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
