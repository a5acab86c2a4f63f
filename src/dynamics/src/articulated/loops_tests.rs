//! The loop rows against finite differences of the default method's ψ ([`Joint::psi`]) along
//! a curve through the joint space: ψ̇ = G q̇ and ψ̈ = G q̈ + b, for every kind of row (point,
//! slide, angular, lock) on a spatial mechanism.

use nalgebra::{DVector, Isometry3, UnitQuaternion, Vector3};

use super::Loops;
use crate::articulated::aba::Workspace;
use crate::articulated::from_model::tree_from_model;
use crate::model::joint::{Joint, JointKind};
use crate::{Body, Model};

fn body(name: &str, x: [f64; 3], euler: [f64; 3]) -> Body {
    Body::new(
        name,
        1.3,
        Vector3::new(0.1, 0.2, 0.25),
        UnitQuaternion::from_euler_angles(0.3, -0.2, 0.1),
        Isometry3::from_parts(
            Vector3::from(x).into(),
            UnitQuaternion::from_euler_angles(euler[0], euler[1], euler[2]),
        ),
        None,
    )
}

/// The mechanism's joints: name, kind, body 1, body 2, anchor (world), axis (world, not
/// normalised).
type JointDef = (&'static str, JointKind, usize, usize, [f64; 3], [f64; 3]);

/// Ground –ball– A –hinge– B –ball– C (the tree), then the loops between B and C
/// (prismatic, fixed, hinge) and C and the ground (slot).
#[rustfmt::skip]
const JOINTS: [JointDef; 7] = [
    ("g_a", JointKind::Ball, 0, 1, [0.1, 0.0, 0.6], [0.0, 0.0, 1.0]),
    ("a_b", JointKind::Hinge, 1, 2, [0.45, 0.0, 0.45], [1.0, 2.0, 3.0]),
    ("b_c", JointKind::Ball, 2, 3, [0.4, 0.2, 0.3], [0.0, 0.0, 1.0]),
    ("b_c_slide", JointKind::Prismatic, 2, 3, [0.5, 0.3, 0.1], [1.0, -1.0, 0.5]),
    ("b_c_weld", JointKind::Fixed, 2, 3, [0.3, 0.3, 0.3], [0.0, 0.0, 1.0]),
    ("b_c_hinge", JointKind::Hinge, 2, 3, [0.35, 0.1, 0.2], [0.3, -1.0, 0.2]),
    ("g_c_slot", JointKind::Slot, 0, 3, [0.25, 0.35, 0.15], [0.2, 0.1, 1.0]),
];

/// A joint closed at the initial pose of `bodies`: both anchors at the world point, the
/// axis normalised, a slot's hinge axis across it.
fn closed_joint(bodies: &[Body], &(name, kind, b1, b2, anchor, axis): &JointDef) -> Joint {
    let a = Vector3::from(anchor);
    let p1 = bodies[b1]
        .world_from_body()
        .inverse_transform_point(&a.into());
    let p2 = bodies[b2]
        .world_from_body()
        .inverse_transform_point(&a.into());
    let axis = Vector3::from(axis).normalize();
    let hinge_axis = axis.cross(&Vector3::new(0.3, -0.5, 0.8)).normalize();
    Joint::new(
        name, kind, bodies, b1, b2, p1.coords, p2.coords, axis, hinge_axis,
    )
}

/// The bodies and [`JOINTS`]; all joints are closed at the initial pose.
fn mechanism() -> Model {
    let bodies = vec![
        Body::ground(),
        body("a", [0.3, 0.1, 0.5], [0.2, 0.5, -0.3]),
        body("b", [0.6, -0.2, 0.4], [-0.4, 0.1, 0.7]),
        body("c", [0.2, 0.4, 0.2], [0.9, -0.6, 0.2]),
    ];
    let joints = JOINTS.iter().map(|j| closed_joint(&bodies, j)).collect();
    Model::new(
        bodies,
        joints,
        vec![],
        vec![],
        Vector3::new(0.0, 0.0, -9.81),
    )
    .unwrap()
}

#[test]
fn rows_match_finite_differences_of_psi() {
    let model = mechanism();
    let built = tree_from_model(&model).unwrap();
    let tree = &built.tree;
    let names: Vec<&str> = built
        .loop_joints
        .iter()
        .map(|&j| model.joints[j].name.as_str())
        .collect();
    assert_eq!(names, ["b_c_slide", "b_c_weld", "b_c_hinge", "g_c_slot"]);
    let mut loops = Loops::new(tree, &model, &built.loop_joints, 0.01);
    assert_eq!(loops.rows(), 5 + 6 + 5 + 4);
    let mut ws = Workspace::new(tree);
    let nv = tree.nv();
    let qd: Vec<f64> = (0..nv).map(|k| 0.7 * (k as f64 + 1.0).sin()).collect();
    let qdd: Vec<f64> = (0..nv)
        .map(|k| 1.3 * (2.0 * k as f64 + 0.5).cos())
        .collect();
    let zeros = vec![0.0; nv];
    let mut psi_at = |eps: f64| {
        let mut q = built.q.clone();
        let step: Vec<f64> = (0..nv)
            .map(|k| eps * qd[k] + 0.5 * eps * eps * qdd[k])
            .collect();
        tree.advance_q(&mut q, &step, 1.0);
        ws.kinematics(tree, &q, &zeros);
        loops.evaluate(tree, &ws, &built.map, &model);
        loops.psi.clone()
    };
    let eps = 1e-4;
    let (p_minus, p0, p_plus) = (psi_at(-eps), psi_at(0.0), psi_at(eps));
    assert!(
        p0.amax() < 1e-12,
        "the joints are closed at the initial pose"
    );
    let rate_fd = (&p_plus - &p_minus) / (2.0 * eps);
    let accel_fd = (&p_plus - &p0 * 2.0 + &p_minus) / (eps * eps);
    ws.kinematics(tree, &built.q, &qd);
    loops.evaluate(tree, &ws, &built.map, &model);
    let qdd_v = DVector::from_column_slice(&qdd);
    let rate = loops.psi_rate.clone();
    let accel = &loops.g * &qdd_v + &loops.bias;
    let rate_err = (&rate - &rate_fd).amax() / rate_fd.amax();
    let accel_err = (&accel - &accel_fd).amax() / accel_fd.amax();
    println!("loop rows vs finite differences: ψ̇ {rate_err:.2e}, ψ̈ {accel_err:.2e}");
    assert!(
        rate_fd.amax() > 0.1 && accel_fd.amax() > 0.1,
        "a curve that moves the rows"
    );
    assert!(rate_err < 1e-7, "ψ̇ = G q̇: {rate_err:e}");
    assert!(accel_err < 1e-6, "ψ̈ = G q̈ + b: {accel_err:e}");
}
