//! Accuracy and refusals of the tracker-to-marker calibration, on simulated touches of the
//! shipped 80 mm cube.
//!
//! The Monte-Carlo test prints its percentiles; see them with
//! `cargo test -p ar-calibration --release --test tracker_fit -- --nocapture`.

use ar_calibration::accuracy::transform_error;
use ar_calibration::calibration_object::CalibrationObject;
use ar_calibration::fit_report::{calibrate, CalibrationError};
use ar_calibration::linalg::orthogonality_error;
use ar_calibration::point_set::PointSetError;
use ar_calibration::rigid_fit::FitMethod;
use nalgebra::{Isometry3, Matrix3, Point3, Translation3, UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, StandardNormal};

const TOUCH_NOISE_M: f64 = 0.0002;

fn cube() -> Vec<Point3<f64>> {
    CalibrationObject::cube_80mm()
        .expect("shipped cube file")
        .positions()
}

/// A uniformly random rotation and an arm base 0.1–0.9 m from the cube centre.
fn random_world_from_arm(rng: &mut ChaCha8Rng, cube_centre: &Point3<f64>) -> Isometry3<f64> {
    let q = nalgebra::Quaternion::new(
        rng.sample::<f64, _>(StandardNormal),
        rng.sample(StandardNormal),
        rng.sample(StandardNormal),
        rng.sample(StandardNormal),
    );
    let rotation = UnitQuaternion::from_quaternion(q);
    let dir = Vector3::<f64>::new(
        rng.sample(StandardNormal),
        rng.sample(StandardNormal),
        rng.sample(StandardNormal),
    )
    .normalize();
    let distance_m = rng.random_range(0.1..0.9);
    // The arm base (arm-frame origin) sits at cube_centre + distance·dir in the world.
    let base_in_world = cube_centre + dir * distance_m;
    Isometry3::from_parts(Translation3::from(base_in_world.coords), rotation)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let idx = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[idx]
}

/// `points` as a hand touches them: 0.2 mm noise per axis, drawn x, y, z for each point in turn.
fn with_touch_noise(points: &[Point3<f64>], rng: &mut ChaCha8Rng) -> Vec<Point3<f64>> {
    let noise = Normal::new(0.0, TOUCH_NOISE_M).expect("valid sigma");
    points
        .iter()
        .map(|p| p + Vector3::new(noise.sample(rng), noise.sample(rng), noise.sample(rng)))
        .collect()
}

fn check_rotation(r: &Matrix3<f64>) {
    assert!(orthogonality_error(r) <= 1e-12, "not orthonormal: {r}");
    assert!((r.determinant() - 1.0).abs() <= 1e-12, "det != 1: {r}");
}

/// Acceptance 1 of issue 5: 1000 random placements, 0.2 mm noise on the arm side.
#[test]
fn chosen_fit_meets_the_accuracy_the_noise_allows() {
    let world = cube();
    let centre = Point3::from(world.iter().map(|p| p.coords).sum::<Vector3<f64>>() / 8.0);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let trials = 1000;
    let (mut chosen_rms, mut chosen_deg, mut pq_rms, mut pq_deg, mut svd_rms) =
        (vec![], vec![], vec![], vec![], vec![]);
    let mut svd_chosen = 0;
    let mut flagged = 0;
    for _ in 0..trials {
        let truth = random_world_from_arm(&mut rng, &centre);
        let arm_true: Vec<_> = world.iter().map(|p| truth.inverse() * p).collect();
        let arm_touched = with_touch_noise(&arm_true, &mut rng);
        let report = calibrate(&world, &arm_touched).expect("a cube is a good point set");
        for fit in [&report.pinv_qr.fit, &report.svd.fit] {
            check_rotation(&fit.rotation);
            check_rotation(fit.world_from_arm.rotation.to_rotation_matrix().matrix());
        }
        let chosen = transform_error(&report.world_from_arm(), &truth, &world);
        let pinv_qr = transform_error(&report.pinv_qr.fit.world_from_arm, &truth, &world);
        let svd = transform_error(&report.svd.fit.world_from_arm, &truth, &world);
        chosen_rms.push(chosen.rms_m);
        chosen_deg.push(chosen.angle_rad.to_degrees());
        pq_rms.push(pinv_qr.rms_m);
        pq_deg.push(pinv_qr.angle_rad.to_degrees());
        svd_rms.push(svd.rms_m);
        svd_chosen += usize::from(report.chosen == FitMethod::Svd);
        // This asserted `suspects.is_empty() || rms > 0`, which noisy data always meet.
        // What it should say: honest touches are not flagged as mis-picks, and the check
        // before writing (FitReport::check) never refuses them.
        flagged += usize::from(!report.suspects.is_empty());
        if let Err(rejection) = report.check() {
            panic!("an honest fit was refused: {rejection}\n{report}");
        }
    }
    println!("honest fits flagged with a likely mis-pick: {flagged}/{trials}");
    assert_eq!(flagged, 0, "{flagged}/{trials} honest fits flagged");
    let within = |v: &[f64], limit: f64| v.iter().filter(|&&x| x <= limit).count();
    let ok_chosen = chosen_rms
        .iter()
        .zip(&chosen_deg)
        .filter(|(&r, &d)| r <= 0.0004 && d <= 0.35)
        .count();
    println!(
        "tracker fit, {trials} trials, 8 cube corners, {:.1} mm noise per axis:",
        TOUCH_NOISE_M * 1e3
    );
    println!(
        "  chosen fit: within 0.4 mm RMS and 0.35 deg in {ok_chosen}/{trials}; svd chosen {svd_chosen}/{trials}"
    );
    println!(
        "  pinv+qr alone within 0.5 mm RMS in {}/{trials}",
        within(&pq_rms, 0.0005)
    );
    for (name, v, scale, unit) in [
        ("chosen RMS", &mut chosen_rms, 1e3, "mm"),
        ("chosen rotation", &mut chosen_deg, 1.0, "deg"),
        ("svd RMS", &mut svd_rms, 1e3, "mm"),
        ("pinv+qr RMS", &mut pq_rms, 1e3, "mm"),
        ("pinv+qr rotation", &mut pq_deg, 1.0, "deg"),
    ] {
        println!(
            "  {name:<17} p50 {:.3} p90 {:.3} p99 {:.3} max {:.3} {unit}",
            percentile(v, 50.0) * scale,
            percentile(v, 90.0) * scale,
            percentile(v, 99.0) * scale,
            percentile(v, 100.0) * scale
        );
    }
    assert!(
        ok_chosen * 100 >= trials * 99,
        "chosen fit: {ok_chosen}/{trials}"
    );
    // The issue asks the pinv+QR fit alone to stay within 0.5 mm: every trial, not 99 %.
    assert_eq!(
        within(&pq_rms, 0.0005),
        trials,
        "pinv+qr beyond 0.5 mm RMS in some trials"
    );
}

fn exact_touches(world: &[Point3<f64>]) -> Vec<Point3<f64>> {
    let truth = Isometry3::new(Vector3::new(0.4, -0.3, 0.2), Vector3::new(0.2, 0.5, -1.0));
    world.iter().map(|p| truth.inverse() * p).collect()
}

/// Acceptance 2 of issue 5: degenerate sets are refused with clear messages.
#[test]
fn three_points_are_refused() {
    let world = cube()[..3].to_vec();
    let err = calibrate(&world, &exact_touches(&world)).unwrap_err();
    assert_eq!(
        err,
        CalibrationError::PointSet(PointSetError::TooFew { got: 3 })
    );
    assert!(err.to_string().contains("only 3 point pairs"), "{err}");
}

#[test]
fn four_coplanar_points_are_refused() {
    // The four top corners of the cube lie in the plane z = 80 mm.
    let world = cube()[..4].to_vec();
    let err = calibrate(&world, &exact_touches(&world)).unwrap_err();
    assert!(
        matches!(
            err,
            CalibrationError::PointSet(PointSetError::Coplanar { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("coplanar"), "{err}");
}

#[test]
fn a_repeated_point_is_refused() {
    let mut world = cube()[..5].to_vec();
    world.push(world[2]);
    let err = calibrate(&world, &exact_touches(&world)).unwrap_err();
    assert!(
        matches!(
            err,
            CalibrationError::PointSet(PointSetError::Repeated {
                first: 2,
                second: 5,
                ..
            })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("points 3 and 6"), "{err}");
}

#[test]
fn an_injected_5_mm_error_is_flagged_as_the_only_mispick() {
    let world = cube();
    let mut rng = ChaCha8Rng::seed_from_u64(55);
    for bad in 0..world.len() {
        let mut arm = with_touch_noise(&exact_touches(&world), &mut rng);
        let dir = Vector3::new(1.0, -2.0, 0.5).normalize();
        arm[bad] += dir * 0.005;
        let report = calibrate(&world, &arm).expect("usable set");
        assert_eq!(report.suspects, vec![bad], "{report}");
        assert!(report.to_string().contains("likely mis-pick"));
    }
}

/// The same touches give bit-identical transforms (no hidden state, no unordered sums).
#[test]
fn calibration_is_bit_for_bit_deterministic() {
    let world = cube();
    let arm = with_touch_noise(&exact_touches(&world), &mut ChaCha8Rng::seed_from_u64(9));
    let a = calibrate(&world, &arm).unwrap();
    let b = calibrate(&world, &arm).unwrap();
    let bits = |r: &ar_calibration::fit_report::FitReport| -> Vec<u64> {
        r.world_from_arm()
            .to_homogeneous()
            .iter()
            .chain(r.pinv_qr.fit.world_from_arm.to_homogeneous().iter())
            .map(|v| v.to_bits())
            .collect()
    };
    assert_eq!(bits(&a), bits(&b));
}
