//! A simulated user's pivot for `calibrate tip --simulate-user`: a stylus whose real tip is
//! `tip_in_stylus` away from the arm's built-in tip sits in a dimple and is swung around it,
//! as a motion script of joint keyframes for the simulated arm (which then quantises the
//! angles to encoder counts and sends them through the real protocol).
//!
//! The dimple is where the real tip is at the starting pose. The wrist (joints 3 and 4) traces
//! a circle of [`PivotMotion::swing_rad`] around its starting angles, growing and shrinking
//! smoothly so that no joint jumps; at every keyframe the first three joints are solved
//! (inverse kinematics on the parameters with the real tip) to keep that tip in the dimple.
//! The pedal is held from [`PEDAL_DOWN_S`] for the swing and released 0.2 s after it, the
//! stylus still.

use super::motion::{Keyframe, MotionScript, Target};
use crate::arm::ik::{solve_tip, IkError, IkOptions};
use crate::arm::kinematics::tip_in_arm;
use crate::arm::params::DhParams;
use crate::arm::tip::TipCorrection;
use nalgebra::{Point3, Vector3};
use std::f64::consts::TAU;

/// When the pedal goes down, after the script starts (s).
pub const PEDAL_DOWN_S: f64 = 0.3;

/// Keyframe spacing (s): short enough that the joints' straight-line interpolation between
/// keyframes stays within a micrometre of the dimple.
const KEYFRAME_S: f64 = 0.005;

/// How long the swing takes to grow to its full size, and to die down (s).
const RAMP_S: f64 = 1.0;

/// One turn of the wrist's circle (s).
const TURN_S: f64 = 2.0;

/// The pivot a simulated user makes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PivotMotion {
    /// Where the real tip is in the stylus frame, relative to the built-in tip (m).
    pub tip_in_stylus: Vector3<f64>,
    /// How far the wrist joints swing each way (rad).
    pub swing_rad: f64,
    /// How long the pedal is held while swinging (s).
    pub duration_s: f64,
}

/// Why the pivot could not be scripted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PivotScriptError {
    /// The arm's parameters cannot express the tip.
    #[error("the tip cannot be put on this arm: {0}")]
    Tip(String),
    /// The dimple could not be kept at some keyframe.
    #[error(
        "the simulated arm cannot keep the tip in the dimple {t_s:.3} s into the pivot: {source}"
    )]
    Unreachable {
        /// When (s since the script starts).
        t_s: f64,
        /// The solver's report.
        source: IkError,
    },
}

/// The script and the dimple (arm base frame, m) it pivots about.
pub fn pivot_script(
    dh: &DhParams,
    start_rad: &[f64; 6],
    motion: &PivotMotion,
) -> Result<(MotionScript, Point3<f64>), PivotScriptError> {
    let tip = TipCorrection::from_tip_in_stylus(dh, &motion.tip_in_stylus)
        .map_err(PivotScriptError::Tip)?;
    let real = dh.with_tip(&tip);
    let dimple = tip_in_arm(&real, start_rad);
    let ik = IkOptions {
        rest_rad: None,
        ..IkOptions::default()
    };
    let smooth = |x: f64| {
        let x = x.clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    };
    let end_s = PEDAL_DOWN_S + motion.duration_s;
    let mut keyframes = vec![Keyframe {
        t_s: 0.0,
        target: Target::Joints(*start_rad),
        buttons: 0,
        line: 0,
    }];
    let mut q = *start_rad;
    let steps = (motion.duration_s / KEYFRAME_S).ceil() as usize;
    for k in 0..=steps {
        let tau = (k as f64 * KEYFRAME_S).min(motion.duration_s);
        let size =
            motion.swing_rad * smooth(tau / RAMP_S) * smooth((motion.duration_s - tau) / RAMP_S);
        let phase = TAU * tau / TURN_S;
        q[3] = start_rad[3] + size * phase.cos();
        q[4] = start_rad[4] + size * phase.sin();
        let t_s = PEDAL_DOWN_S + tau;
        q = solve_tip(&real, &dimple, &q, 3, &ik)
            .map_err(|source| PivotScriptError::Unreachable { t_s, source })?;
        keyframes.push(Keyframe {
            t_s,
            target: Target::Joints(q),
            buttons: 1,
            line: keyframes.len(),
        });
    }
    // The pedal comes up 0.2 s later, the stylus still; the script then holds the last pose.
    keyframes.push(Keyframe {
        t_s: end_s + 0.2,
        target: Target::Joints(q),
        buttons: 0,
        line: keyframes.len(),
    });
    let script = MotionScript {
        keyframes,
        looping: false,
        source: "the simulated pivot".into(),
    };
    Ok((script, dimple))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arm::kinematics::arm_from_stylus;
    use crate::arm::params::RawDhParams;
    use crate::arm::sim::REST_POSE_RAD;
    use std::time::Duration;

    #[test]
    fn the_real_tip_stays_in_the_dimple_while_the_stylus_turns() {
        let dh = DhParams::from_raw(&RawDhParams::microscribe_3dx());
        let motion = PivotMotion {
            tip_in_stylus: Vector3::new(0.03, -0.04, 0.09),
            swing_rad: 0.5,
            duration_s: 3.0,
        };
        let (script, dimple) = pivot_script(&dh, &REST_POSE_RAD, &motion).expect("reachable");
        let real =
            dh.with_tip(&TipCorrection::from_tip_in_stylus(&dh, &motion.tip_in_stylus).unwrap());
        let start = arm_from_stylus(&dh, &REST_POSE_RAD).rotation;
        let mut widest = 0.0f64;
        let mut q = REST_POSE_RAD;
        for ms in (0..3600).step_by(7) {
            let (next, buttons) = script
                .sample(Duration::from_millis(ms), &dh, 5, &q, &IkOptions::default())
                .expect("joint keyframes");
            q = next;
            // Between keyframes the joints interpolate linearly: a micrometre at most.
            assert!((tip_in_arm(&real, &q) - dimple).norm() < 2e-6, "{ms} ms");
            let pressed = (300..3500).contains(&ms);
            if ms % 100 > 10 {
                assert_eq!(buttons == 1, pressed, "{ms} ms");
            }
            widest = widest.max(arm_from_stylus(&dh, &q).rotation.angle_to(&start));
        }
        assert!(widest > 0.4, "the stylus turns: {widest} rad");
    }
}
