//! The precision setting `[contact] tolerance_m` (issue 42): a scene file's value is checked
//! (finite, within [`TOLERANCE_RANGE_M`], the error naming the file, line and field); a
//! larger tolerance runs fewer sweeps of the sparse contact solve, and no step ever ends with
//! a penetration deeper than the setting.

use ar_dynamics::contact::TOLERANCE_RANGE_M;
use ar_dynamics::{Scene, SceneError};

const H: f64 = 0.01;
/// The cubes: 30 mm, 30 g (I = m a² / 6), as the pile's.
const CUBE_M: f64 = 0.03;

/// Nine stacks of three cubes (3 × 3, 60 mm apart) on the desk, each cube 1 mm above the one
/// below, so that they land on each other; sleeping off (a sleeping stack runs no sweeps).
/// Four points per face: 108 contacts once landed, over the dense solve's 64, so the sparse
/// sweeps solve them. `contact` is the `[contact]` table's extra lines.
fn stacks(contact: &str) -> String {
    let mut text = format!(
        "gravity_m_per_s2 = [0.0, 0.0, -9.81]\n[solver]\ndt_secs = {H}\n\
         [contact]\nsleep = false\n{contact}\n\
         [[plane]]\nname = \"desk\"\nnormal = [0.0, 0.0, 1.0]\npoint_in_world_m = [0.0, 0.0, 0.0]\n"
    );
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                let (x, y) = (0.06 * (i as f64 - 1.0), 0.06 * (j as f64 - 1.0));
                let z = 0.5 * CUBE_M + 0.001 + k as f64 * (CUBE_M + 0.001);
                text += &format!(
                    "[[body]]\nname = \"c{i}{j}{k}\"\nmass_kg = 0.03\n\
                     inertia_kg_m2 = [4.5e-6, 4.5e-6, 4.5e-6]\nposition_m = [{x}, {y}, {z}]\n\
                     shape = {{ kind = \"box\", size_m = [0.03, 0.03, 0.03] }}\n"
                );
            }
        }
    }
    text
}

/// The run of the stacks for `steps` steps: total sweeps, the deepest penetration any step
/// ended with (m), and the top cubes' lowest and highest centre heights at the end (m).
fn run(contact: &str, steps: usize) -> (usize, f64, f64, f64) {
    let mut sim = Scene::parse(&stacks(contact), "stacks.toml")
        .expect("scene parses")
        .build()
        .expect("scene builds");
    let (mut sweeps, mut deepest) = (0, 0.0f64);
    for _ in 0..steps {
        sim.step().expect("step");
        sweeps += sim.contact_sweeps();
        deepest = deepest.max(sim.max_penetration_m());
    }
    let tops: Vec<f64> = (0..9)
        .map(|s| {
            let id = sim.body_id(&format!("c{}{}2", s / 3, s % 3)).unwrap();
            sim.bodies()[id].position_in_world.z
        })
        .collect();
    let lo = tops.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = tops.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (sweeps, deepest, lo, hi)
}

#[test]
fn a_larger_tolerance_sweeps_less_and_leaves_at_most_its_penetration() {
    let steps = 100;
    let (finest_sweeps, finest_deepest, ..) = run("", steps);
    eprintln!("unset: {finest_sweeps} sweeps, deepest {finest_deepest:e} m");
    // Without the setting: as before, the projection stops at h times what the sweeps leave,
    // at most the solver's position tolerance (1e-7 m).
    assert!(finest_deepest <= 1.0e-7, "{finest_deepest:e}");
    let mut last_sweeps = finest_sweeps;
    for tolerance_m in [1.0e-6, 1.0e-4] {
        let (sweeps, deepest, lo, hi) = run(&format!("tolerance_m = {tolerance_m:e}"), steps);
        eprintln!(
            "tolerance {tolerance_m:e}: {sweeps} sweeps, deepest {deepest:e} m, tops {lo} .. {hi} m"
        );
        assert!(
            sweeps < last_sweeps,
            "tolerance {tolerance_m:e}: {sweeps} sweeps, not fewer than {last_sweeps}"
        );
        last_sweeps = sweeps;
        assert!(
            deepest <= tolerance_m,
            "tolerance {tolerance_m:e}: a step ended {deepest:e} m deep"
        );
        // The stacks stand (none toppled or slid off): each top cube two cubes above the
        // bottom one's centre, within a tenth of a millimetre (after 1 s they still settle
        // by micrometres: the sweeps leave velocity errors up to tolerance_m / h).
        let upright_m = 2.5 * CUBE_M;
        assert!(
            (lo - upright_m).abs() <= 1e-4 && (hi - upright_m).abs() <= 1e-4,
            "tolerance {tolerance_m:e}: top cubes at {lo} .. {hi} m"
        );
    }
}

/// The error for `tolerance_m = value` in the `[contact]` table (line 6 of the text).
fn refused(value: &str) -> (usize, String, String) {
    refused_line(&format!("tolerance_m = {value}"))
}

/// The error for the `[contact]` table's line `value` (line 6 of the text).
fn refused_line(value: &str) -> (usize, String, String) {
    let text = stacks(value);
    assert_eq!(text.lines().nth(5), Some(value));
    match Scene::parse(&text, "stacks.toml") {
        Err(SceneError::Invalid {
            path,
            line,
            field,
            message,
            ..
        }) => {
            assert_eq!(path.to_str(), Some("stacks.toml"));
            (line, field, message)
        }
        other => panic!("{value}: {other:?}"),
    }
}

#[test]
fn a_tolerance_that_is_not_positive_finite_and_in_range_is_refused_naming_the_line_and_field() {
    let (lo, hi) = TOLERANCE_RANGE_M;
    for value in ["0.0", "-1e-6", "nan", "inf"] {
        let (line, field, message) = refused(value);
        assert_eq!(
            (line, field.as_str()),
            (6, "contact.tolerance_m"),
            "{value}"
        );
        assert!(message.contains("must be positive"), "{value}: {message}");
    }
    for value in [format!("{:e}", lo / 2.0), format!("{:e}", hi * 2.0)] {
        let (line, field, message) = refused(&value);
        assert_eq!(
            (line, field.as_str()),
            (6, "contact.tolerance_m"),
            "{value}"
        );
        assert_eq!(
            message,
            format!("must be in [{lo:e}, {hi:e}] m, got {}", value),
            "{value}"
        );
    }
    // The ends of the range are accepted.
    for value in [lo, hi] {
        let scene = Scene::parse(&stacks(&format!("tolerance_m = {value:e}")), "stacks.toml")
            .expect("in range");
        assert_eq!(scene.contact.unwrap().tolerance_m, Some(value));
    }
    // Not a number: the TOML reader's message names the field.
    match Scene::parse(&stacks("tolerance_m = \"fine\""), "stacks.toml") {
        Err(SceneError::Parse { message, .. }) => {
            assert!(message.contains("tolerance_m"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// `[contact] threads`: a whole number from 1 to 64, else refused naming the line and field.
#[test]
fn a_thread_count_out_of_range_is_refused_naming_the_line_and_field() {
    for value in ["0", "-2", "65"] {
        let (line, field, message) = refused_line(&format!("threads = {value}"));
        assert_eq!((line, field.as_str()), (6, "contact.threads"), "{value}");
        assert_eq!(
            message,
            format!("must be a whole number from 1 to 64, got {value}")
        );
    }
    for value in ["1", "2", "64"] {
        Scene::parse(&stacks(&format!("threads = {value}")), "stacks.toml")
            .unwrap_or_else(|e| panic!("threads = {value}: {e}"));
    }
}
