//! Live control of the simulated arm: where the stylus is (joint angles, or a tip target
//! reached through inverse kinematics), which buttons are pressed, and which motion script
//! plays. Cloneable and usable from any thread while the arm streams.
//!
//! Button presses are made reliable to observe: a release takes effect only once the pressed
//! state has gone out in at least one packet *and* has been held for the configured minimum
//! (50 ms by default), so a consumer polling the latest sample at 20 Hz or faster sees it.

use super::device::PoseReading;
use super::motion::MotionScript;
use crate::arm::ik::{solve_tip, IkError, IkOptions};
use crate::arm::kinematics::{angles_to_counts, counts_to_angles, tip_in_arm};
use crate::arm::params::{DhParams, MaxValues};
use nalgebra::Point3;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

#[derive(Debug)]
struct LiveState {
    angles_rad: [f64; 6],
    buttons: u8,
    pressed_at: [Option<Instant>; 8],
    sent_since_press: u8,
    release_pending: u8,
    script: Option<(Arc<MotionScript>, Instant)>,
    script_error_logged: bool,
    /// A hand following live targets (see [`SimArmControl::follow_tip_target`]): from these
    /// angles at this instant to those, over [`HAND_FOLLOW`].
    follow: Option<([f64; 6], [f64; 6], Instant)>,
}

/// How long the simulated hand takes to reach a target given with
/// [`SimArmControl::follow_tip_target`]: two of the scripted user's 5 ms updates, so that a
/// new target always arrives while the hand is still moving and the joints' velocity changes
/// only by what the user's own velocity changes (the driver's plausibility filter refuses
/// the steps that a teleporting arm would make).
const HAND_FOLLOW: Duration = Duration::from_millis(10);

impl LiveState {
    /// The joint angles at `now`, with a hand following a target moved along.
    fn angles_at(&self, now: Instant) -> [f64; 6] {
        match self.follow {
            Some((from, to, start)) => {
                let a = (now.saturating_duration_since(start).as_secs_f64()
                    / HAND_FOLLOW.as_secs_f64())
                .min(1.0);
                std::array::from_fn(|i| from[i] + a * (to[i] - from[i]))
            }
            None => self.angles_rad,
        }
    }
}

/// Handle to move the simulated arm and press its buttons.
#[derive(Debug, Clone)]
pub struct SimArmControl {
    state: Arc<Mutex<LiveState>>,
    dh: DhParams,
    max_values: MaxValues,
    min_press: Duration,
    ik: IkOptions,
}

impl SimArmControl {
    pub(crate) fn new(
        dh: DhParams,
        max_values: MaxValues,
        initial_rad: [f64; 6],
        min_press: Duration,
    ) -> Self {
        Self {
            state: Arc::new(Mutex::new(LiveState {
                angles_rad: initial_rad,
                buttons: 0,
                pressed_at: [None; 8],
                sent_since_press: 0,
                release_pending: 0,
                script: None,
                script_error_logged: false,
                follow: None,
            })),
            dh,
            max_values,
            min_press,
            // Keep the posture near the power-up pose along long paths.
            ik: IkOptions {
                rest_rad: Some(initial_rad),
                ..IkOptions::default()
            },
        }
    }

    fn lock(&self) -> MutexGuard<'_, LiveState> {
        // A panicking holder cannot leave the state inconsistent (plain values), so go on.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kinematic parameters the arm moves with (its own `C0`/`D3`, point tip).
    pub fn dh(&self) -> &DhParams {
        &self.dh
    }

    /// Number of joints (encoders with a non-zero maximum).
    pub fn joint_count(&self) -> usize {
        self.max_values.joint_count()
    }

    /// Sets the joint angles directly; stops any script.
    pub fn set_joint_angles(&self, angles_rad: [f64; 6]) {
        let mut s = self.lock();
        s.script = None;
        s.follow = None;
        s.angles_rad = angles_rad;
    }

    /// Moves the tip to `target_in_arm` (m) by inverse kinematics from the current angles;
    /// stops any script. Returns the angles used. The reported tip is then within encoder
    /// resolution (~0.1 mm) of the target; [`Self::reported_tip_in_arm`] gives it exactly.
    pub fn set_tip_target(&self, target_in_arm: Point3<f64>) -> Result<[f64; 6], IkError> {
        let seed = self.lock().angles_rad;
        let q = solve_tip(
            &self.dh,
            &target_in_arm,
            &seed,
            self.joint_count(),
            &self.ik,
        )?;
        let mut s = self.lock();
        s.script = None;
        s.follow = None;
        s.angles_rad = q;
        Ok(q)
    }

    /// Moves the tip toward `target_in_arm` (m) as a hand does: the joints go from where they
    /// are now to the inverse-kinematics solution in a straight line over 10 ms, so that
    /// targets given every few milliseconds make a continuous motion whose velocity changes
    /// smoothly (a real arm's encoders sample a hand, which cannot jump). Stops any script.
    /// Returns the angles aimed at.
    pub fn follow_tip_target(&self, target_in_arm: Point3<f64>) -> Result<[f64; 6], IkError> {
        let now = Instant::now();
        let seed = self.lock().angles_at(now);
        let q = solve_tip(
            &self.dh,
            &target_in_arm,
            &seed,
            self.joint_count(),
            &self.ik,
        )?;
        let mut s = self.lock();
        let from = s.angles_at(now);
        s.script = None;
        s.follow = Some((from, q, now));
        Ok(q)
    }

    /// The current joint angles (continuous, before encoder quantisation).
    pub fn joint_angles(&self) -> [f64; 6] {
        self.lock().angles_at(Instant::now())
    }

    /// The tip the arm reports now: the forward kinematics of the quantised encoder counts.
    pub fn reported_tip_in_arm(&self) -> Point3<f64> {
        let q = self.lock().angles_at(Instant::now());
        let counts = angles_to_counts(&q, &self.max_values.encoder_max);
        tip_in_arm(
            &self.dh,
            &counts_to_angles(&counts, &self.max_values.encoder_max),
        )
    }

    /// Presses buttons (bit 0 right/single pedal, bit 1 left pedal).
    pub fn press(&self, mask: u8) {
        let mut s = self.lock();
        let now = Instant::now();
        for bit in 0..8 {
            if mask & (1 << bit) != 0 && s.buttons & (1 << bit) == 0 {
                s.pressed_at[bit] = Some(now);
                s.sent_since_press &= !(1 << bit);
            }
        }
        s.buttons |= mask;
        s.release_pending &= !mask;
    }

    /// Releases buttons, as soon as the press has been reported and held long enough.
    pub fn release(&self, mask: u8) {
        let mut s = self.lock();
        s.release_pending |= mask & s.buttons;
    }

    /// Press and release: a click that is guaranteed to appear in the stream.
    pub fn click(&self, mask: u8) {
        self.press(mask);
        self.release(mask);
    }

    /// The buttons currently held.
    pub fn buttons(&self) -> u8 {
        self.lock().buttons
    }

    /// Plays a motion script from now (replacing live control until the next live call).
    pub fn play(&self, script: MotionScript) {
        let mut s = self.lock();
        s.follow = None;
        s.script = Some((Arc::new(script), Instant::now()));
        s.script_error_logged = false;
    }

    /// True while a script drives the arm.
    pub fn is_playing(&self) -> bool {
        self.lock().script.is_some()
    }

    /// The pose at `now` for a packet: applies due releases, advances the script.
    pub(crate) fn reading(&self, now: Instant) -> (PoseReading, [f64; 6]) {
        let mut s = self.lock();
        for bit in 0..8u8 {
            let m = 1 << bit;
            if s.release_pending & m == 0 {
                continue;
            }
            let held = s.pressed_at[usize::from(bit)]
                .is_none_or(|t| now.duration_since(t) >= self.min_press);
            if s.sent_since_press & m != 0 && held {
                s.buttons &= !m;
                s.release_pending &= !m;
                s.pressed_at[usize::from(bit)] = None;
            }
        }
        if s.follow.is_some() {
            s.angles_rad = s.angles_at(now);
        }
        if let Some((script, start)) = s.script.clone() {
            match script.sample(
                now.saturating_duration_since(start),
                &self.dh,
                self.joint_count(),
                &s.angles_rad,
                &self.ik,
            ) {
                Ok((q, b)) => {
                    s.angles_rad = q;
                    s.buttons = b | (s.buttons & !0x03);
                }
                Err(e) if !s.script_error_logged => {
                    log::warn!(
                        "simulated arm: motion script {}: {e}; holding the pose",
                        script.source
                    );
                    s.script_error_logged = true;
                }
                Err(_) => {}
            }
        }
        let counts = angles_to_counts(&s.angles_rad, &self.max_values.encoder_max);
        let q = counts_to_angles(&counts, &self.max_values.encoder_max);
        (
            PoseReading {
                counts,
                buttons: s.buttons,
            },
            q,
        )
    }

    /// Notes that a packet with these buttons went out.
    pub(crate) fn sent(&self, buttons: u8) {
        let mut s = self.lock();
        s.sent_since_press |= buttons;
    }
}

/// The simulated user's hand on the simulated arm (tracker calibration's guided session):
/// tip targets through the arm's inverse kinematics, button 1 as the pedal.
impl ar_calibration::simulated_user::StylusActuator for SimArmControl {
    fn set_tip_in_arm(&mut self, tip_in_arm: Point3<f64>) -> Result<(), String> {
        self.set_tip_target(tip_in_arm)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn set_pedal(&mut self, pressed: bool) -> Result<(), String> {
        if pressed {
            self.press(0x01);
        } else {
            self.release(0x01);
        }
        Ok(())
    }
}
