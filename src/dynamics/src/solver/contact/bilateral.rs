//! The joints' and springs' rows as a contact solve's bilateral rows (body 2 relative to
//! body 1, as the contact rows): the rows the contact solves keep, or move by a change.

use crate::contact::lcp::{Bilateral, Row};
use crate::linalg::block::MAX_ROWS;
use crate::model::body::Pose;
use crate::model::joint::Joint;
use crate::model::joint::Row as JointRow;
use crate::solver::rows::joint::JointBlock;

/// A joint row as a contact solve's bilateral row (body 2 relative to body 1, as the
/// contact rows), whose row velocity is to change by `change`.
pub(in crate::solver) fn bilateral_of(joint: &Joint, row: &JointRow, change: f64) -> Bilateral {
    bilateral_between(joint.body1, joint.body2, row, change, 0.0)
}

/// Appends every joint's last midpoint rows to `out` as bilateral rows that keep their
/// velocities.
pub(in crate::solver) fn push_joint_rows(
    joints: &[Joint],
    blocks: &[JointBlock],
    out: &mut Vec<Bilateral>,
) {
    for (j, blk) in joints.iter().zip(blocks) {
        for row in &blk.rows[..j.rows()] {
            out.push(bilateral_of(j, row, 0.0));
        }
    }
}

/// A row between two bodies (a joint's or a spring's) as a contact solve's bilateral row,
/// with its compliance (0 for a joint).
pub(in crate::solver) fn bilateral_between(
    body1: usize,
    body2: usize,
    row: &JointRow,
    change: f64,
    compliance: f64,
) -> Bilateral {
    Bilateral {
        row: Row {
            body1,
            body2,
            dir: -row.lin,
            ang1: -row.ang1,
            ang2: row.ang2,
        },
        change,
        compliance,
    }
}

/// The joints' rows at these poses (of body 2 relative to body 1, as the contact rows), each
/// with its joint error ψ, handed to `visit` in joint order.
pub(in crate::solver) fn joint_rows_at(
    joints: &[Joint],
    poses: &[Pose],
    mut visit: impl FnMut(Bilateral, f64),
) {
    let mut rows = [JointRow::default(); MAX_ROWS];
    for j in joints {
        let g = j.geometry(&poses[j.body1], &poses[j.body2]);
        let psi = j.psi_of(&g);
        j.rows_of(&g, &g, &mut rows);
        for (row, e) in rows.iter().zip(&psi).take(j.rows()) {
            visit(bilateral_of(j, row, 0.0), *e);
        }
    }
}
