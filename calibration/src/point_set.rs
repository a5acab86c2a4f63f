//! Whether a set of point pairs can determine `world_from_arm` at all: enough points, no
//! repeats, not collinear, not coplanar — on both the known (world) side and the touched
//! (arm) side. The fits would otherwise return a transform that the data do not pin down.

use crate::linalg::singular_values;
use nalgebra::{DMatrix, Point3, Vector3};

/// The paper's minimum: four non-coplanar points.
pub const MIN_POINTS: usize = 4;

/// Two points closer than this (m) count as the same point. Touch noise is ~0.2 mm and
/// calibration objects space their points by centimetres, so 1 mm separates the cases.
pub const MIN_SEPARATION_M: f64 = 0.001;

/// A point set whose RMS distance from its best-fit plane (line) is under this (m) is coplanar
/// (collinear): with ~0.2 mm touch noise such a set leaves the rotation about an in-plane axis
/// undetermined to within degrees.
pub const MIN_THICKNESS_M: f64 = 0.002;

/// The same test relative to the set's largest spread, so that very large sets are judged by
/// shape rather than only by absolute size.
pub const MIN_RELATIVE_THICKNESS: f64 = 0.01;

/// Which half of the pairs a problem was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The known marker-frame positions (from the calibration object or the CSV's world columns).
    World,
    /// The touched positions in the arm's base frame.
    Arm,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::World => "known world (marker-frame) positions",
            Side::Arm => "touched arm-frame positions",
        })
    }
}

/// Why a point set cannot be used. Point numbers in messages are 1-based, in input order.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PointSetError {
    /// The two lists differ in length.
    #[error("{world} world points but {arm} arm points")]
    LengthMismatch {
        /// World points given.
        world: usize,
        /// Arm points given.
        arm: usize,
    },
    /// Fewer than [`MIN_POINTS`].
    #[error("only {got} point pairs: at least {MIN_POINTS} non-coplanar points are needed")]
    TooFew {
        /// Number given.
        got: usize,
    },
    /// A coordinate is NaN or infinite.
    #[error("point {}: the {side} contain a non-finite coordinate", index + 1)]
    NonFinite {
        /// 0-based index.
        index: usize,
        /// Which side.
        side: Side,
    },
    /// Two points coincide.
    #[error(
        "points {} and {} are the same point in the {side} ({distance_mm:.3} mm apart; \
         at least {:.0} mm needed): a repeated point adds no information",
        first + 1, second + 1, MIN_SEPARATION_M * 1e3
    )]
    Repeated {
        /// 0-based index of the first.
        first: usize,
        /// 0-based index of the second.
        second: usize,
        /// Which side.
        side: Side,
        /// Their distance, mm.
        distance_mm: f64,
    },
    /// All points lie (nearly) on a line.
    #[error(
        "the {side} are collinear (RMS distance from their best line {line_rms_mm:.3} mm): \
         touch points that span a volume, e.g. the corners of the cube"
    )]
    Collinear {
        /// Which side.
        side: Side,
        /// RMS distance from the best-fit line, mm.
        line_rms_mm: f64,
    },
    /// All points lie (nearly) in a plane.
    #[error(
        "the {side} are coplanar (RMS distance from their best plane {plane_rms_mm:.3} mm; \
         at least {:.0} mm needed): add a point out of that plane, e.g. a top corner of the cube",
        MIN_THICKNESS_M * 1e3
    )]
    Coplanar {
        /// Which side.
        side: Side,
        /// RMS distance from the best-fit plane, mm.
        plane_rms_mm: f64,
    },
    /// The SVD of the centred points did not converge (non-finite or absurd input).
    #[error("the {side} could not be analysed (SVD did not converge)")]
    Unanalysable {
        /// Which side.
        side: Side,
    },
}

/// The RMS extent of a point set along its three principal axes (m), largest first:
/// `[s1, s2, s3] / √N` from the singular values of the centred coordinates. `s3` is the RMS
/// distance from the best plane, `√(s2² + s3²)` from the best line.
pub fn principal_spread_m(points: &[Point3<f64>]) -> Option<[f64; 3]> {
    if points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let c = points.iter().fold(Vector3::zeros(), |a, p| a + p.coords) / n;
    let m = DMatrix::from_fn(3, points.len(), |r, k| points[k][r] - c[r]);
    let s = singular_values(&m)?;
    let get = |i: usize| s.get(i).copied().unwrap_or(0.0) / n.sqrt();
    Some([get(0), get(1), get(2)])
}

fn check_side(points: &[Point3<f64>], side: Side) -> Result<(), PointSetError> {
    for (index, p) in points.iter().enumerate() {
        if p.iter().any(|v| !v.is_finite()) {
            return Err(PointSetError::NonFinite { index, side });
        }
    }
    for first in 0..points.len() {
        for second in first + 1..points.len() {
            let d = (points[first] - points[second]).norm();
            if d < MIN_SEPARATION_M {
                return Err(PointSetError::Repeated {
                    first,
                    second,
                    side,
                    distance_mm: d * 1e3,
                });
            }
        }
    }
    let [s1, s2, s3] = principal_spread_m(points).ok_or(PointSetError::Unanalysable { side })?;
    let line_rms = s2.hypot(s3);
    if line_rms < MIN_THICKNESS_M || line_rms < MIN_RELATIVE_THICKNESS * s1 {
        return Err(PointSetError::Collinear {
            side,
            line_rms_mm: line_rms * 1e3,
        });
    }
    if s3 < MIN_THICKNESS_M || s3 < MIN_RELATIVE_THICKNESS * s1 {
        return Err(PointSetError::Coplanar {
            side,
            plane_rms_mm: s3 * 1e3,
        });
    }
    Ok(())
}

/// Checks that the pairs can determine a rigid transform: equal lengths, at least four,
/// finite, no repeated point, not collinear, not coplanar, on both sides.
pub fn check_point_set(
    p_in_world: &[Point3<f64>],
    p_in_arm: &[Point3<f64>],
) -> Result<(), PointSetError> {
    if p_in_world.len() != p_in_arm.len() {
        return Err(PointSetError::LengthMismatch {
            world: p_in_world.len(),
            arm: p_in_arm.len(),
        });
    }
    if p_in_world.len() < MIN_POINTS {
        return Err(PointSetError::TooFew {
            got: p_in_world.len(),
        });
    }
    check_side(p_in_world, Side::World)?;
    check_side(p_in_arm, Side::Arm)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tetra() -> Vec<Point3<f64>> {
        vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(0.08, 0.0, 0.0),
            Point3::new(0.0, 0.08, 0.0),
            Point3::new(0.0, 0.0, 0.08),
        ]
    }

    #[test]
    fn a_tetrahedron_is_accepted() {
        assert_eq!(check_point_set(&tetra(), &tetra()), Ok(()));
    }

    #[test]
    fn three_points_are_too_few() {
        let p = &tetra()[..3];
        let err = check_point_set(p, p).unwrap_err();
        assert_eq!(err, PointSetError::TooFew { got: 3 });
        assert!(err.to_string().contains("at least 4"), "{err}");
    }

    #[test]
    fn four_coplanar_points_are_refused() {
        let mut p = tetra();
        p[3] = Point3::new(0.08, 0.08, 0.0);
        let err = check_point_set(&p, &p).unwrap_err();
        assert!(
            matches!(
                err,
                PointSetError::Coplanar {
                    side: Side::World,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("coplanar"), "{err}");
    }

    #[test]
    fn a_repeated_touch_is_refused_naming_both_points() {
        let world = tetra();
        let mut arm = tetra();
        arm[3] = arm[1] + Vector3::new(0.0002, 0.0, 0.0);
        let err = check_point_set(&world, &arm).unwrap_err();
        assert!(
            matches!(
                err,
                PointSetError::Repeated {
                    first: 1,
                    second: 3,
                    side: Side::Arm,
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("points 2 and 4"), "{err}");
    }

    #[test]
    fn collinear_points_are_refused() {
        let p: Vec<_> = (0..6)
            .map(|i| Point3::new(0.02 * i as f64, 0.01 * i as f64, 0.0))
            .collect();
        let err = check_point_set(&p, &p).unwrap_err();
        assert!(matches!(err, PointSetError::Collinear { .. }), "{err}");
    }

    #[test]
    fn a_thin_slab_is_coplanar_even_if_not_exactly_flat() {
        let p: Vec<_> = [
            (0.0, 0.0),
            (0.08, 0.0),
            (0.0, 0.08),
            (0.08, 0.08),
            (0.04, 0.04),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| Point3::new(x, y, if i % 2 == 0 { 0.0003 } else { -0.0003 }))
        .collect();
        assert!(matches!(
            check_point_set(&p, &p),
            Err(PointSetError::Coplanar { .. })
        ));
    }
}
