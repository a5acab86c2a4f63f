//! Issue 20: a fuzz harness for every parser that reads untrusted text: scene TOML (parsed,
//! built and stepped), stylus script and wind CSV, point-pairs CSV, tracker calibration,
//! camera file, calibration object, rig config. Inputs are the shipped files mutated (bytes
//! flipped, ranges deleted or duplicated, hostile tokens inserted). Nothing may panic, and
//! every rejection must name the file (all but the stylus script, whose parser has no path;
//! `simulate` adds it).
//!
//! `make test` runs a short pass (PROPTEST_CASES defaults to 256 per parser); `make fuzz`
//! runs 130,000 cases per parser (8 parsers, over 10⁶ inputs).

use ar_calibration::calibration_object::CalibrationObject;
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_calibration::pairs_csv::parse_pairs;
use ar_calibration::tracker_file::TrackerCalibration;
use ar_dynamics::drive::script::StylusScript;
use ar_dynamics::wind::LevelSchedule;
use ar_dynamics::Scene;
use ar_multibody::rig::config::RigConfig;
use proptest::prelude::*;
use std::path::Path;

const PATH: &str = "fuzzed-input";

fn asset(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

const TOKENS: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "1e309",
    "-0.0",
    "0",
    "1e300",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    "=",
    "\n",
    "\r\n",
    "\u{feff}",
    "[[body]]",
    "[[joint]]",
    "#",
    "18446744073709551616",
    "-1",
    "[0.0, 0.0, 0.0, 0.0]",
    "\u{0}",
    "é",
    "kind = \"ball\"",
];

#[derive(Debug, Clone)]
enum Mutation {
    FlipByte(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(p, b)| Mutation::FlipByte(p, b)),
        (any::<usize>(), 1usize..64).prop_map(|(p, n)| Mutation::Delete(p, n)),
        (any::<usize>(), 1usize..200).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Mutation::Insert(p, t)),
    ]
}

/// Applies the mutations to the bytes of `seed`; the result as (lossy) UTF-8 text, as the
/// loaders would see it after their UTF-8 check.
fn mutate(seed: &str, mutations: &[Mutation]) -> String {
    let mut b = seed.as_bytes().to_vec();
    for m in mutations {
        let len = b.len().max(1);
        match *m {
            Mutation::FlipByte(p, x) => {
                if !b.is_empty() {
                    let i = p % b.len();
                    b[i] ^= x;
                }
            }
            Mutation::Delete(p, n) => {
                let i = p % len;
                let j = (i + n).min(b.len());
                if i < j {
                    b.drain(i..j);
                }
            }
            Mutation::Duplicate(p, n) => {
                let i = p % len;
                let j = (i + n).min(b.len());
                if i < j {
                    let part = b[i..j].to_vec();
                    b.splice(j..j, part);
                }
            }
            Mutation::Insert(p, t) => {
                let i = (p % (b.len() + 1)).min(b.len());
                b.splice(i..i, TOKENS[t].bytes());
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn input(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    (0..seeds.len(), prop::collection::vec(mutation(), 1..6)).prop_map(move |(s, m)| {
        thread_local! {
            static CACHE: std::cell::RefCell<std::collections::HashMap<&'static str, String>> =
                Default::default();
        }
        let seed = CACHE.with(|c| {
            c.borrow_mut()
                .entry(seeds[s])
                .or_insert_with(|| asset(seeds[s]))
                .clone()
        });
        mutate(&seed, &m)
    })
}

fn names_the_file(err: &dyn std::fmt::Display) -> Result<(), TestCaseError> {
    let text = err.to_string();
    prop_assert!(text.contains(PATH), "rejection without the file: {text}");
    Ok(())
}

const SCENES: &[&str] = &[
    "assets/scenes/ten_pendula.toml",
    "assets/scenes/cross_lift.toml",
    "assets/scenes/steel_fish.toml",
];

proptest! {
    #[test]
    fn scene_files(text in input(SCENES)) {
        match Scene::parse(&text, PATH) {
            Ok(scene) => match scene.build() {
                Ok(mut sim) => {
                    for _ in 0..3 {
                        if sim.step().is_err() {
                            break;
                        }
                    }
                }
                Err(e) => names_the_file(&e)?,
            },
            Err(e) => names_the_file(&e)?,
        }
    }

    #[test]
    fn stylus_scripts(text in input(&["assets/scripts/ten_pendula_drag.csv", "assets/scripts/cross_lift_lift.csv"])) {
        if let Err(e) = StylusScript::parse(&text) {
            let m = e.to_string();
            prop_assert!(!m.is_empty());
        }
    }

    #[test]
    fn wind_csv(text in input(&["assets/scenes/steel_fish_blow.csv"])) {
        if let Err(e) = LevelSchedule::parse(&text, PATH) {
            names_the_file(&e)?;
        }
    }

    #[test]
    fn pairs_csv(text in prop_oneof![
        Just("world_x,world_y,world_z,arm_x,arm_y,arm_z\n0,0,0,1,2,3\n0.08,0,0,1.08,2,3\n0,0.08,0,1,2.08,3\n0,0,0.08,1,2,3.08\n".to_owned()),
        Just(String::new())
    ].prop_flat_map(|seed| prop::collection::vec(mutation(), 1..6).prop_map(move |m| mutate(&seed, &m)))) {
        match parse_pairs(&text, Path::new(PATH)) {
            Ok(pairs) => {
                let world: Vec<_> = pairs.iter().map(|p| p.p_in_world).collect();
                let arm: Vec<_> = pairs.iter().map(|p| p.p_in_arm).collect();
                if let Ok(report) = ar_calibration::fit_report::calibrate(&world, &arm) {
                    let _ = report.check();
                    let _ = report.to_string();
                }
            }
            Err(e) => names_the_file(&e)?,
        }
    }

    #[test]
    fn tracker_files(text in input(&["assets/calibration/example_hidden_tracker.toml"])) {
        if let Err(e) = TrackerCalibration::from_toml_str(&text, Path::new(PATH)) {
            names_the_file(&e)?;
        }
    }

    #[test]
    fn camera_files(text in input(&["assets/cameras/synthetic_640x480.toml"])) {
        if let Err(e) = CameraIntrinsics::from_toml_str(&text, Path::new(PATH)) {
            names_the_file(&e)?;
        }
    }

    #[test]
    fn calibration_objects(text in input(&["assets/calibration/cube_80mm.toml", "assets/calibration/sheet_points.toml"])) {
        if let Err(e) = CalibrationObject::from_toml_str(&text, Path::new(PATH)) {
            names_the_file(&e)?;
        }
    }

    #[test]
    fn rig_configs(text in input(&["assets/rig.example.toml"])) {
        if let Err(e) = RigConfig::parse(&text, Path::new(PATH)) {
            names_the_file(&e)?;
        }
    }
}
