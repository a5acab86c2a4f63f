//! A simulated user for the guided calibration: given the hidden true `world_from_arm`, it
//! moves the stylus tip of a (simulated) arm to each requested point with 0.2 mm of hand
//! noise, holds still, presses the pedal and releases it — on its own thread, like a person,
//! so that the real driver and pick code observe it through the device's sample stream.
//!
//! It drives the arm through [`StylusActuator`] (implemented for the simulated arm's live
//! control by the application), and wraps any real [`PickSource`] as [`SimulatedUserPicks`].

use crate::pick_session::{PickError, PickRequest, PickSource};
use nalgebra::{Isometry3, Point3, Vector3};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The hand noise of a careful user with a MicroScribe-class stylus: 0.2 mm per axis (σ).
pub const TOUCH_NOISE_M: f64 = 0.0002;

/// What the simulated user can do to the arm.
pub trait StylusActuator: Send + 'static {
    /// Puts the stylus tip at `tip_in_arm` (arm base frame, m).
    fn set_tip_in_arm(&mut self, tip_in_arm: Point3<f64>) -> Result<(), String>;
    /// Presses (`true`) or releases the pedal.
    fn set_pedal(&mut self, pressed: bool) -> Result<(), String>;
}

/// How long the simulated user holds still before pressing, and how long the pedal stays down.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UserTiming {
    /// From reaching the point to pressing the pedal.
    pub settle: Duration,
    /// How long the pedal is held down.
    pub hold: Duration,
}

impl Default for UserTiming {
    fn default() -> Self {
        Self {
            settle: Duration::from_millis(60),
            hold: Duration::from_millis(120),
        }
    }
}

/// A simulated user on its own thread. Dropping it lets the thread finish and joins it.
#[derive(Debug)]
pub struct SimulatedUser {
    requests: Option<mpsc::Sender<(Point3<f64>, Vector3<f64>)>>,
    thread: Option<JoinHandle<()>>,
}

impl SimulatedUser {
    /// Starts the user thread. `world_from_arm` is the hidden truth the calibration should
    /// recover; `seed` makes its hand noise reproducible.
    pub fn spawn<A: StylusActuator>(
        world_from_arm: Isometry3<f64>,
        seed: u64,
        timing: UserTiming,
        mut actuator: A,
    ) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<(Point3<f64>, Vector3<f64>)>();
        let arm_from_world = world_from_arm.inverse();
        let thread = std::thread::Builder::new()
            .name("simulated-user".into())
            .spawn(move || {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                // σ is a positive constant, so this cannot fail; fall back to no noise anyway.
                let noise = Normal::new(0.0, TOUCH_NOISE_M).ok();
                for (p_in_world, slip_in_arm) in rx {
                    let hand = noise.map_or(Vector3::zeros(), |n| {
                        Vector3::new(n.sample(&mut rng), n.sample(&mut rng), n.sample(&mut rng))
                    });
                    let tip = arm_from_world * p_in_world + hand + slip_in_arm;
                    let result = actuator
                        .set_tip_in_arm(tip)
                        .and_then(|()| {
                            std::thread::sleep(timing.settle);
                            actuator.set_pedal(true)
                        })
                        .and_then(|()| {
                            std::thread::sleep(timing.hold);
                            actuator.set_pedal(false)
                        });
                    if let Err(e) = result {
                        log::warn!("simulated user: the arm refused a command: {e}");
                        break;
                    }
                }
            })?;
        Ok(Self {
            requests: Some(tx),
            thread: Some(thread),
        })
    }

    /// Asks the user to touch `p_in_world` and press the pedal; returns at once. The touch
    /// lands `slip_in_arm` (m, arm frame) off on top of the hand noise (zero for a careful
    /// touch). `false` if the user thread has ended (its actuator failed).
    pub fn request_touch(&self, p_in_world: Point3<f64>, slip_in_arm: Vector3<f64>) -> bool {
        self.requests
            .as_ref()
            .is_some_and(|tx| tx.send((p_in_world, slip_in_arm)).is_ok())
    }
}

impl Drop for SimulatedUser {
    fn drop(&mut self) {
        self.requests.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A [`PickSource`] in which the simulated user answers every request: it is told the point,
/// and the wrapped source (e.g. the real arm driver) then observes the touch and the pedal.
#[derive(Debug)]
pub struct SimulatedUserPicks<S> {
    user: SimulatedUser,
    inner: S,
    slips: Vec<(usize, Vector3<f64>)>,
}

impl<S: PickSource> SimulatedUserPicks<S> {
    /// Wraps `inner` so that `user` performs each requested touch.
    pub fn new(user: SimulatedUser, inner: S) -> Self {
        Self {
            user,
            inner,
            slips: Vec::new(),
        }
    }

    /// Makes the first touch of point `index` (0-based) land `slip_in_arm` off, as a user
    /// whose stylus slipped off the corner; re-picks of that point are careful again.
    pub fn with_slip(mut self, index: usize, slip_in_arm: Vector3<f64>) -> Self {
        self.slips.push((index, slip_in_arm));
        self
    }
}

impl<S: PickSource> PickSource for SimulatedUserPicks<S> {
    fn pick(&mut self, request: &PickRequest) -> Result<Point3<f64>, PickError> {
        let slip = self
            .slips
            .iter()
            .filter(|(i, _)| *i == request.index && request.attempt == 1)
            .map(|(_, v)| v)
            .sum();
        if !self.user.request_touch(request.p_in_world, slip) {
            return Err(PickError::Disconnected(
                "the simulated user stopped (its arm refused a command)".into(),
            ));
        }
        self.inner.pick(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration_object::CalibrationObject;
    use crate::pick_session::{PickSession, SilentUi};
    use std::path::Path;
    use std::sync::{Arc, Mutex};

    /// A stand-in device: the tip is shared state, and each pedal press emits the tip then.
    struct FakeArm {
        tip: Arc<Mutex<Point3<f64>>>,
        presses: mpsc::Sender<Point3<f64>>,
    }

    impl StylusActuator for FakeArm {
        fn set_tip_in_arm(&mut self, tip_in_arm: Point3<f64>) -> Result<(), String> {
            *self.tip.lock().map_err(|e| e.to_string())? = tip_in_arm;
            Ok(())
        }
        fn set_pedal(&mut self, pressed: bool) -> Result<(), String> {
            if pressed {
                let tip = *self.tip.lock().map_err(|e| e.to_string())?;
                self.presses.send(tip).map_err(|e| e.to_string())?;
            }
            Ok(())
        }
    }

    struct PedalPicks(mpsc::Receiver<Point3<f64>>);

    impl PickSource for PedalPicks {
        fn pick(&mut self, _: &PickRequest) -> Result<Point3<f64>, PickError> {
            self.0
                .recv_timeout(Duration::from_secs(5))
                .map_err(|e| PickError::Disconnected(e.to_string()))
        }
    }

    #[test]
    fn the_simulated_user_lets_the_session_recover_the_hidden_transform() {
        let cube = CalibrationObject::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/calibration/cube_80mm.toml"),
        )
        .unwrap();
        let hidden = Isometry3::new(Vector3::new(0.25, -0.6, 0.1), Vector3::new(0.3, 0.2, -2.0));
        let (tx, rx) = mpsc::channel();
        let arm = FakeArm {
            tip: Arc::new(Mutex::new(Point3::origin())),
            presses: tx,
        };
        let timing = UserTiming {
            settle: Duration::from_millis(1),
            hold: Duration::from_millis(1),
        };
        let user = SimulatedUser::spawn(hidden, 7, timing, arm).unwrap();
        let mut source = SimulatedUserPicks::new(user, PedalPicks(rx))
            .with_slip(3, Vector3::new(0.0, 0.003, 0.004));
        let out = PickSession::new(&cube, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap();
        // The slipped touch was flagged and picked again.
        assert_eq!(out.repick_rounds, 1);
        assert!(out.report.suspects.is_empty());
        // The hand noise is real: not exact, but within what 0.2 mm noise allows.
        let rms = out.report.rms_mm();
        assert!(rms > 0.01 && rms < 0.4, "rms {rms} mm");
        let angle_deg = out
            .report
            .world_from_arm()
            .rotation
            .angle_to(&hidden.rotation)
            .to_degrees();
        assert!(angle_deg < 0.35, "{angle_deg} deg");
        let offset_mm =
            (out.report.world_from_arm().translation.vector - hidden.translation.vector).norm()
                * 1e3;
        assert!(offset_mm < 2.0, "{offset_mm} mm");
    }
}
