//! Issue 45: a fuzz harness for the sizes and numbers of scene files. Scenes are put together
//! from pieces whose counts and sizes are drawn from hostile values (a rope's `elements`, a
//! cloth's `nodes`, a lattice's size and spacing, a mobile's depth and total mass, the number
//! of `[[body]]` tables, `dt_secs`, static rotations, plane normals and joint axes: zero,
//! negative, at and past the limits, 1e9, 2e18, i64::MAX, 1e300, 1.7e308, NaN, ±inf). Each
//! scene is parsed, built and stepped (the smaller ones); nothing may panic or abort, every
//! refusal names the file, no case may allocate more than [`PEAK_LIMIT_BYTES`] at once (a
//! counting allocator watches), and the slowest case is printed (a hang never finishes).
//!
//! A short run is part of the normal test suite (48 cases, the same every time);
//! `make fuzz-scene-sizes` (part of `make fuzz`) runs it long: `AR_FUZZ_SCENE_SIZES_CASES=N`
//! sets the cases and draws new scenes. `AR_FUZZ_SCENE_SIZES_TRACE=file` writes each case
//! there before it runs (to read back one that does not finish).

use std::time::Instant;

use ar_dynamics::scene::generate::mobile_toml;
use ar_dynamics::Scene;
use proptest::prelude::*;

#[path = "peak_alloc.rs"]
mod peak_alloc;

#[global_allocator]
static ALLOCATOR: peak_alloc::PeakCounting = peak_alloc::PeakCounting;

/// The most one case may have allocated at once: a scene within the limits needs far less;
/// the cases asked for 4.3 to 24 GB.
const PEAK_LIMIT_BYTES: usize = 1 << 30;

/// Scenes with more bodies than this are built but not stepped (a step of 100,000 elements
/// is legitimate, but slow for a fuzz case).
const STEP_MAX_BODIES: usize = 500;

const PATH: &str = "fuzzed-sizes.toml";

fn cases() -> u32 {
    std::env::var("AR_FUZZ_SCENE_SIZES_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

/// Counts, as TOML tokens: ordinary, at and past the limits, overflowing, and not counts.
const COUNTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "40",
    "1000",
    "99999",
    "100000",
    "100001",
    "1000000000",
    "2000000000000000000",
    "9223372036854775807",
    "-1",
    "1e9",
    "nan",
];

/// Numbers, as TOML tokens.
const NUMBERS: &[&str] = &[
    "0.0", "-0.0", "1e-300", "1e-9", "0.01", "0.2", "1.0", "10.0", "1e6", "1e200", "1e300",
    "1.7e308", "nan", "inf", "-inf", "-1.0",
];

fn count() -> impl Strategy<Value = &'static str> {
    prop::sample::select(COUNTS)
}

fn number() -> impl Strategy<Value = &'static str> {
    prop::sample::select(NUMBERS)
}

fn vector() -> impl Strategy<Value = String> {
    (number(), number(), number()).prop_map(|(x, y, z)| format!("[{x}, {y}, {z}]"))
}

const DEFORMABLE: &str = "mass_kg = 0.1\nelement_radius_m = 0.002\nstiffness_n_per_m = 500.0\n";

/// One piece of a scene; `k` makes its names unique.
#[derive(Debug, Clone)]
enum Piece {
    Rope(&'static str),
    Cloth(&'static str, &'static str),
    Lattice(&'static str, &'static str),
    Mobile(usize, &'static str),
    Bodies(usize),
    Static(String),
    Plane(String),
    Hinge(String),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        count().prop_map(Piece::Rope),
        (count(), count()).prop_map(|(a, b)| Piece::Cloth(a, b)),
        (number(), number()).prop_map(|(a, b)| Piece::Lattice(a, b)),
        (prop::sample::select(&[2usize, 3, 5, 8, 12][..]), number())
            .prop_map(|(d, m)| Piece::Mobile(d, m)),
        prop::sample::select(&[1usize, 3, 100, 2_000][..]).prop_map(Piece::Bodies),
        vector().prop_map(Piece::Static),
        vector().prop_map(Piece::Plane),
        vector().prop_map(Piece::Hinge),
    ]
}

impl Piece {
    fn toml(&self, k: usize) -> String {
        match self {
            Piece::Rope(n) => format!(
                "[[deformable]]\nname = \"rope{k}\"\nkind = \"rope\"\n{DEFORMABLE}\
                 end1_m = [0.0, 0.0, 0.5]\nend2_m = [0.4, 0.0, 0.5]\nelements = {n}\n\
                 pin1 = \"ground\"\n"
            ),
            Piece::Cloth(a, b) => format!(
                "[[deformable]]\nname = \"cloth{k}\"\nkind = \"cloth\"\n{DEFORMABLE}\
                 corner_m = [-0.1, -0.1, 0.2]\nedge1_m = [0.2, 0.0, 0.0]\n\
                 edge2_m = [0.0, 0.2, 0.0]\nnodes = [{a}, {b}]\npinned_nodes = [[0, 0]]\n"
            ),
            Piece::Lattice(size, spacing) => format!(
                "[[deformable]]\nname = \"lattice{k}\"\nkind = \"lattice\"\n{DEFORMABLE}\
                 origin_m = [0.0, 0.0, 0.3]\nsize_m = [{size}, 0.04, 0.04]\n\
                 spacing_m = {spacing}\nclamp = \"x-\"\n"
            ),
            Piece::Mobile(depth, mass) => {
                let text = mobile_toml(*depth).expect("depth within the generator's range");
                // Only one [mobile] per scene: later ones are a TOML error, also fine.
                let start = text.find("[mobile]").expect("a [mobile] table");
                let body = &text[start..];
                let line = body
                    .lines()
                    .find(|l| l.starts_with("total_mass_kg"))
                    .expect("a total mass");
                body.replacen(line, &format!("total_mass_kg = {mass}"), 1)
            }
            Piece::Bodies(n) => (0..*n)
                .map(|i| {
                    format!(
                        "[[body]]\nname = \"b{k}_{i}\"\nmass_kg = 1.0\n\
                         inertia_kg_m2 = [1.0, 1.0, 1.0]\nposition_m = [0.0, {k}.0, {i}.0]\n\
                         shape = {{ kind = \"sphere\", radius_m = 0.1 }}\n"
                    )
                })
                .collect(),
            Piece::Static(rotation) => format!(
                "[[static]]\nname = \"static{k}\"\n\
                 shape = {{ kind = \"box\", size_m = [0.2, 0.2, 0.2] }}\n\
                 position_m = [0.0, 0.0, 0.1]\nrotation_rad = {rotation}\n"
            ),
            Piece::Plane(normal) => format!(
                "[[plane]]\nname = \"plane{k}\"\nnormal = {normal}\n\
                 point_in_world_m = [0.0, 0.0, 0.0]\n"
            ),
            Piece::Hinge(axis) => format!(
                "[[body]]\nname = \"p{k}\"\nmass_kg = 0.1\ninertia_kg_m2 = [1e-5, 1e-5, 1e-5]\n\
                 position_m = [0.1, 0.0, 0.5]\nshape = {{ kind = \"sphere\", radius_m = 0.01 }}\n\
                 [[joint]]\nname = \"hinge{k}\"\nkind = \"hinge\"\nbody1 = \"ground\"\n\
                 body2 = \"p{k}\"\nanchor_in_world_m = [0.0, 0.0, 0.5]\naxis_in_world = {axis}\n"
            ),
        }
    }
}

fn scene() -> impl Strategy<Value = String> {
    (number(), prop::collection::vec(piece(), 1..4)).prop_map(|(dt, pieces)| {
        let mut text = format!("[solver]\ndt_secs = {dt}\n\n");
        for (k, p) in pieces.iter().enumerate() {
            text.push_str(&p.toml(k));
            text.push('\n');
        }
        text
    })
}

/// Parses, builds and (if small) steps the scene; every refusal must name the file.
fn exercise(text: &str) -> Result<(), TestCaseError> {
    let named = |m: String| -> Result<(), TestCaseError> {
        prop_assert!(m.contains(PATH), "a refusal without the file: {m}");
        Ok(())
    };
    let scene = match Scene::parse(text, PATH) {
        Ok(scene) => scene,
        Err(e) => return named(e.to_string()),
    };
    prop_assert!(scene.bodies.len() <= ar_dynamics::scene::MAX_BODIES + 1);
    let mut sim = match scene.build() {
        Ok(sim) => sim,
        Err(e) => return named(e.to_string()),
    };
    if sim.bodies().len() <= STEP_MAX_BODIES {
        for _ in 0..3 {
            if sim.step().is_err() {
                break;
            }
        }
    }
    Ok(())
}

#[test]
fn scenes_of_hostile_sizes_are_refused_or_run_within_memory() {
    let slowest = std::cell::RefCell::new((0.0f64, String::new()));
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    // The short run of the test suite draws the same scenes every time (its duration does
    // not depend on the draw: a few hostile scenes take the contact solver a minute to
    // step); the long run draws new ones.
    let mut runner = if std::env::var_os("AR_FUZZ_SCENE_SIZES_CASES").is_some() {
        proptest::test_runner::TestRunner::new(config)
    } else {
        proptest::test_runner::TestRunner::new_with_rng(
            config,
            proptest::test_runner::TestRng::deterministic_rng(
                proptest::test_runner::RngAlgorithm::ChaCha,
            ),
        )
    };
    let result = runner.run(&scene(), |text| {
        // `AR_FUZZ_SCENE_SIZES_TRACE=file`: each case is written there before it runs, so
        // that a case that never finishes can be read back.
        if let Ok(trace) = std::env::var("AR_FUZZ_SCENE_SIZES_TRACE") {
            std::fs::write(trace, &text).expect("trace file");
        }
        peak_alloc::reset_peak();
        let started = Instant::now();
        exercise(&text)?;
        let secs = started.elapsed().as_secs_f64();
        let peak = peak_alloc::peak_bytes();
        prop_assert!(
            peak < PEAK_LIMIT_BYTES,
            "{} MB allocated at once for:\n{}",
            peak / 1_000_000,
            &text[..text.len().min(2000)]
        );
        let mut s = slowest.borrow_mut();
        if secs > s.0 {
            *s = (secs, text[..text.len().min(300)].to_owned());
        }
        Ok(())
    });
    let (secs, text) = slowest.into_inner();
    println!("{} cases; the slowest took {secs:.2} s:\n{text}", cases());
    if let Err(e) = result {
        panic!("{e}");
    }
}
