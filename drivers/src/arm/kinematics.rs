//! Forward kinematics of the arm: encoder counts → joint angles → stylus pose in the arm's
//! base frame, with the modified (Craig) Denavit–Hartenberg convention and the extra β
//! rotation about y on link 2, exactly as the HCI protocol notes define it.

use super::params::DhParams;
use nalgebra::{Isometry3, Matrix3, Point3, Rotation3, Translation3, UnitQuaternion, Vector3};
use std::f64::consts::TAU;

/// Joint angles from raw counts: θᵢ = (countᵢ AND maxᵢ)·2π/(maxᵢ+1); an encoder with max 0
/// (or missing from the packet) gives 0.
pub fn counts_to_angles(counts: &[u16], encoder_max: &[u16; 6]) -> [f64; 6] {
    let mut angles = [0.0; 6];
    for (i, (angle, &max)) in angles.iter_mut().zip(encoder_max).enumerate() {
        if max == 0 {
            continue;
        }
        if let Some(&c) = counts.get(i) {
            *angle = f64::from(c & max) * TAU / (f64::from(max) + 1.0);
        }
    }
    angles
}

/// Counts for joint angles (nearest count, wrapped into the encoder range): what the
/// encoders of an arm at these angles read. Used by the simulated arm.
pub fn angles_to_counts(angles_rad: &[f64; 6], encoder_max: &[u16; 6]) -> [u16; 6] {
    let mut counts = [0u16; 6];
    for ((c, &angle), &max) in counts.iter_mut().zip(angles_rad).zip(encoder_max) {
        if max == 0 || !angle.is_finite() {
            continue;
        }
        let per_rev = f64::from(max) + 1.0;
        let wrapped = (angle / TAU).rem_euclid(1.0) * per_rev;
        // rem_euclid keeps it in [0, per_rev); rounding may reach per_rev, which wraps to 0.
        *c = (wrapped.round() as u32 % (u32::from(max) + 1)) as u16;
    }
    counts
}

/// A rigid transform as plain arrays: the chain is evaluated per packet and inside the
/// inverse kinematics, so it avoids generic matrix code that is slow in debug builds.
#[derive(Clone, Copy)]
struct Rigid {
    r: [[f64; 3]; 3],
    p: [f64; 3],
}

impl Rigid {
    const IDENTITY: Rigid = Rigid {
        r: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        p: [0.0; 3],
    };

    fn rotate(&self, v: [f64; 3]) -> [f64; 3] {
        let r = &self.r;
        [
            r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
            r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
            r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
        ]
    }

    /// self · other
    fn then(&self, other: &Rigid) -> Rigid {
        let mut r = [[0.0; 3]; 3];
        for (i, row) in r.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x = self.r[i][0] * other.r[0][j]
                    + self.r[i][1] * other.r[1][j]
                    + self.r[i][2] * other.r[2][j];
            }
        }
        let q = self.rotate(other.p);
        Rigid {
            r,
            p: [self.p[0] + q[0], self.p[1] + q[1], self.p[2] + q[2]],
        }
    }

    fn to_isometry(self) -> Isometry3<f64> {
        let r = &self.r;
        let m = Matrix3::new(
            r[0][0], r[0][1], r[0][2], r[1][0], r[1][1], r[1][2], r[2][0], r[2][1], r[2][2],
        );
        Isometry3::from_parts(
            Translation3::new(self.p[0], self.p[1], self.p[2]),
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(m)),
        )
    }
}

fn rot_x(t: f64) -> [[f64; 3]; 3] {
    let (s, c) = t.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]
}

fn rot_y(t: f64) -> [[f64; 3]; 3] {
    let (s, c) = t.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

fn rot_z(t: f64) -> [[f64; 3]; 3] {
    let (s, c) = t.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

/// The frame in which joint `i` turns (its z axis is the joint axis), relative to the
/// previous link: RotX(αᵢ)·TransX(aᵢ)·[RotY(β) for i = 2].
fn joint_base(dh: &DhParams, i: usize) -> Rigid {
    let m = Rigid {
        r: rot_x(dh.alpha_rad[i]),
        p: [dh.a_m[i], 0.0, 0.0],
    };
    if i == 2 {
        m.then(&Rigid {
            r: rot_y(dh.beta_rad),
            p: [0.0; 3],
        })
    } else {
        m
    }
}

/// RotZ(θ)·TransZ(d).
fn joint_motion(theta_rad: f64, d_m: f64) -> Rigid {
    Rigid {
        r: rot_z(theta_rad),
        p: [0.0, 0.0, d_m],
    }
}

fn chain(dh: &DhParams, angles_rad: &[f64; 6]) -> Rigid {
    (0..6).fold(Rigid::IDENTITY, |t, i| {
        t.then(&joint_base(dh, i))
            .then(&joint_motion(angles_rad[i], dh.d_m[i]))
    })
}

/// The stylus pose T = M₀·…·M₅ in the arm's base frame (metres); the stylus points along
/// the pose's z axis.
pub fn arm_from_stylus(dh: &DhParams, angles_rad: &[f64; 6]) -> Isometry3<f64> {
    chain(dh, angles_rad).to_isometry()
}

/// The tip position in the arm's base frame (metres).
pub fn tip_in_arm(dh: &DhParams, angles_rad: &[f64; 6]) -> Point3<f64> {
    let p = chain(dh, angles_rad).p;
    Point3::new(p[0], p[1], p[2])
}

/// A joint axis in the base frame: unit direction and a point on it.
pub type JointAxis = (Vector3<f64>, Point3<f64>);

/// The tip and, for each joint, its axis (unit, base frame) and a point on it: what the
/// inverse kinematics needs for the position Jacobian.
pub fn tip_and_joint_axes(dh: &DhParams, angles_rad: &[f64; 6]) -> (Point3<f64>, [JointAxis; 6]) {
    let mut t = Rigid::IDENTITY;
    let mut axes = [(Vector3::zeros(), Point3::origin()); 6];
    for (i, axis) in axes.iter_mut().enumerate() {
        let base = t.then(&joint_base(dh, i));
        *axis = (
            Vector3::new(base.r[0][2], base.r[1][2], base.r[2][2]),
            Point3::new(base.p[0], base.p[1], base.p[2]),
        );
        t = base.then(&joint_motion(angles_rad[i], dh.d_m[i]));
    }
    (Point3::new(t.p[0], t.p[1], t.p[2]), axes)
}

/// Points of the arm's linkage in its base frame (metres), base to tip.
pub type ArmLinkage = [Point3<f64>; LINKAGE_POINTS];

/// How many points [`linkage_in_arm`] gives: the base origin, then two per joint.
pub const LINKAGE_POINTS: usize = 13;

/// The arm's shape as a polyline, base frame: the base origin, then for each joint a point on
/// its axis (after the link's twist and length aᵢ) and its frame origin after the joint's
/// offset dᵢ; the last point is the tip. Joining successive points draws the links (some are
/// zero length where aᵢ or dᵢ is 0).
pub fn linkage_in_arm(dh: &DhParams, angles_rad: &[f64; 6]) -> ArmLinkage {
    let mut points = [Point3::origin(); LINKAGE_POINTS];
    let mut t = Rigid::IDENTITY;
    for i in 0..6 {
        let base = t.then(&joint_base(dh, i));
        points[1 + 2 * i] = Point3::from(base.p);
        t = base.then(&joint_motion(angles_rad[i], dh.d_m[i]));
        points[2 + 2 * i] = Point3::from(t.p);
    }
    points
}

/// Roll, pitch, yaw ("xyz fixed", the SDK's default Euler output) of a stylus orientation.
pub fn roll_pitch_yaw(arm_from_stylus: &UnitQuaternion<f64>) -> (f64, f64, f64) {
    let r = arm_from_stylus.to_rotation_matrix();
    let m = r.matrix();
    let roll = m[(2, 1)].atan2(m[(2, 2)]);
    let pitch = (-m[(2, 0)]).atan2((m[(0, 0)].powi(2) + m[(1, 0)].powi(2)).sqrt());
    let yaw = m[(1, 0)].atan2(m[(0, 0)]);
    (roll, pitch, yaw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linkage_runs_from_the_base_to_the_tip() {
        let dh = DhParams {
            alpha_rad: [0.0, -1.5, 0.02, 1.6, -1.5, 1.55],
            a_m: [0.0, 0.024, 0.26, 0.0135, -0.01, 0.01],
            d_m: [0.21, -0.022, 0.0, 0.235, 0.008, -0.134],
            beta_rad: 0.0003,
        };
        let angles = [0.3, -0.4, 1.1, 0.2, -0.7, 0.0];
        let points = linkage_in_arm(&dh, &angles);
        assert_eq!(points[0], Point3::origin());
        assert_eq!(points[LINKAGE_POINTS - 1], tip_in_arm(&dh, &angles));
        // The first joint turns about the base z axis, d₀ above the base.
        assert!((points[2] - Point3::new(0.0, 0.0, 0.21)).norm() < 1e-15);
        // Every link is as long as its DH length.
        let (_, axes) = tip_and_joint_axes(&dh, &angles);
        for i in 0..6 {
            assert!((points[1 + 2 * i] - axes[i].1).norm() < 1e-12, "joint {i}");
            let d = (points[2 + 2 * i] - points[1 + 2 * i]).norm();
            assert!((d - dh.d_m[i].abs()).abs() < 1e-12, "joint {i}: {d}");
        }
    }

    #[test]
    fn counts_round_trip_within_half_a_count() {
        let max = [0x3FFF, 0x3FFF, 0x1FFF, 0x0FFF, 0x0FFF, 0];
        let angles = [0.1, -0.2, 3.0, 6.2, -3.1, 1.0];
        let counts = angles_to_counts(&angles, &max);
        let back = counts_to_angles(&counts, &max);
        for i in 0..5 {
            let d = (back[i] - angles[i]).rem_euclid(TAU);
            let d = d.min(TAU - d);
            assert!(
                d <= 0.5 * TAU / (f64::from(max[i]) + 1.0) + 1e-12,
                "joint {i}: {d}"
            );
        }
        assert_eq!(back[5], 0.0, "an encoder with max 0 is always 0");
        assert_eq!(
            counts_to_angles(&[0x3FFF], &max)[0],
            TAU * 16383.0 / 16384.0
        );
    }
}
