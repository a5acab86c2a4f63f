//! Digitizer-arm kinematics: forward kinematics against poses computed here with plain 4×4
//! arrays from the protocol notes' 3DX parameters, the ball-tip correction, inverse
//! kinematics, and the example motion scripts' reachability.

use ar_drivers::arm::ik::{solve_tip, IkOptions};
use ar_drivers::arm::kinematics::{arm_from_stylus, tip_in_arm};
use ar_drivers::arm::sim::REST_POSE_RAD;
use ar_drivers::arm::{DhParams, RawDhParams, TipCorrection};
use nalgebra::{Point3, Vector3};

// ---------------------------------------------------------------------------------------
// Known-answer forward kinematics, computed here with plain 4×4 arrays in inches.

type M4 = [[f64; 4]; 4];

fn mul(a: &M4, b: &M4) -> M4 {
    let mut c = [[0.0; 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                c[i][j] += a[i][k] * b[k][j];
            }
        }
    }
    c
}

fn rot_x(t: f64) -> M4 {
    let (s, c) = t.sin_cos();
    [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, c, -s, 0.0],
        [0.0, s, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

fn rot_y(t: f64) -> M4 {
    let (s, c) = t.sin_cos();
    [
        [c, 0.0, s, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [-s, 0.0, c, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

fn rot_z(t: f64) -> M4 {
    let (s, c) = t.sin_cos();
    [
        [c, -s, 0.0, 0.0],
        [s, c, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

fn trans(x: f64, y: f64, z: f64) -> M4 {
    [
        [1.0, 0.0, 0.0, x],
        [0.0, 1.0, 0.0, y],
        [0.0, 0.0, 1.0, z],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// The 3DX parameters of the protocol notes, typed in from the hex dump: (alpha, a, d) as
/// signed 16-bit words; beta = 3.
const ALPHA_HEX: [u16; 6] = [0x0000, 0x3FF5, 0xFFF9, 0x3FE5, 0xC002, 0xC00C];
const A_HEX: [u16; 6] = [0x0000, 0x03C0, 0x2810, 0x0215, 0xFE6F, 0x018F];
const D_HEX: [u16; 6] = [0x206C, 0xFC92, 0xFFFD, 0x241C, 0x0140, 0xEB66];

/// Expected tip (m) and stylus z axis, independent of the production code.
fn expected_3dx(theta: [f64; 6]) -> ([f64; 3], [f64; 3]) {
    let angle = |w: u16| f64::from(w as i16) * 180.0 / 32768.0 * std::f64::consts::PI / 180.0;
    let inches = |w: u16| f64::from(w as i16) / 1000.0;
    let beta = 3.0 * std::f64::consts::PI / 32768.0;
    let mut t = trans(0.0, 0.0, 0.0);
    for i in 0..6 {
        let mut m = mul(
            &rot_x(angle(ALPHA_HEX[i])),
            &trans(inches(A_HEX[i]), 0.0, 0.0),
        );
        if i == 2 {
            m = mul(&m, &rot_y(beta));
        }
        m = mul(&m, &rot_z(theta[i]));
        m = mul(&m, &trans(0.0, 0.0, inches(D_HEX[i])));
        t = mul(&t, &m);
    }
    (
        [t[0][3] * 0.0254, t[1][3] * 0.0254, t[2][3] * 0.0254],
        [t[0][2], t[1][2], t[2][2]],
    )
}

fn dh_3dx() -> DhParams {
    DhParams::from_raw(&RawDhParams::microscribe_3dx())
}

#[test]
fn forward_kinematics_matches_hand_computed_3dx_poses() {
    let dh = dh_3dx();
    let poses = [
        [0.0; 6],
        [0.5, -0.3, 1.2, 0.7, -1.1, 0.0],
        [3.0, 1.0, -2.0, 2.5, 0.4, 0.0],
        REST_POSE_RAD,
    ];
    for q in poses {
        let (tip, z) = expected_3dx(q);
        let got = tip_in_arm(&dh, &q);
        let pose = arm_from_stylus(&dh, &q);
        let gz = pose.rotation * Vector3::z();
        for k in 0..3 {
            assert!(
                (got[k] - tip[k]).abs() < 1e-12,
                "pose {q:?} axis {k}: {} vs {}",
                got[k],
                tip[k]
            );
            assert!(
                (gz[k] - z[k]).abs() < 1e-12,
                "stylus direction {q:?} axis {k}"
            );
        }
    }
    // Plausibility of the all-zero pose: D0 + D3 + D5 dominate z, A2 + A3 dominate x (inches).
    let (tip0, _) = expected_3dx([0.0; 6]);
    let reach = (tip0[0].powi(2) + tip0[1].powi(2) + tip0[2].powi(2)).sqrt();
    assert!(reach > 0.1 && reach < 0.8, "zero pose {tip0:?} m");
}

#[test]
fn ball_tip_moves_the_tip_along_the_stylus_by_its_correction() {
    let dh = dh_3dx();
    let ball = dh.with_tip(&TipCorrection::ball());
    let q = [0.3, -0.4, 1.0, 0.2, 0.9, 0.0];
    let pose = arm_from_stylus(&dh, &q);
    let moved = tip_in_arm(&ball, &q) - tip_in_arm(&dh, &q);
    let expected = pose.rotation * Vector3::z() * (0.242 * 0.0254);
    assert!(
        (moved - expected).norm() < 1e-12,
        "{moved:?} vs {expected:?}"
    );
}

#[test]
fn inverse_kinematics_reaches_workspace_points_far_below_a_nanometre() {
    let dh = dh_3dx();
    // Targets from joint angles spread over the arm's range, solved from the rest pose.
    let mut worst = 0.0f64;
    for i in 0..40 {
        let f = f64::from(i);
        let q = [
            -1.2 + 0.06 * f,
            -0.9 + 0.03 * (f * 1.3).sin(),
            0.6 + 0.8 * (f * 0.7).cos().abs(),
            0.5 * (f * 0.9).sin(),
            0.5 + 0.6 * (f * 0.4).cos().abs(),
            0.0,
        ];
        let target = tip_in_arm(&dh, &q);
        let solved = solve_tip(&dh, &target, &REST_POSE_RAD, 5, &IkOptions::default())
            .unwrap_or_else(|e| panic!("target {i} {target:?}: {e}"));
        assert_eq!(
            solved[5], 0.0,
            "the stylus roll joint of a 5-joint arm stays put"
        );
        worst = worst.max((tip_in_arm(&dh, &solved) - target).norm());
    }
    assert!(worst < 1e-9, "worst residual {worst:e} m");
    let far = solve_tip(
        &dh,
        &Point3::new(3.0, 0.0, 0.0),
        &REST_POSE_RAD,
        5,
        &IkOptions::default(),
    );
    assert!(far.is_err(), "3 m is out of reach");
}

#[test]
fn example_motion_scripts_parse_and_are_reachable() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/scripts");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("assets/scripts") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if !(name.starts_with("arm_") && name.ends_with(".csv")) {
            continue;
        }
        let script = ar_drivers::arm::MotionScript::load(&path).expect("parses");
        script
            .validate(&dh_3dx(), 5, &REST_POSE_RAD)
            .expect("reachable");
        assert!(script.duration_s() > 0.0, "{name}");
        n += 1;
    }
    assert!(n >= 2, "example scripts found: {n}");
}
