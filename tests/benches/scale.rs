//! How the default solver scales: generated chains of the paper's Table 1 pendulum (10, 100,
//! 1000 links) under the ten-pendula acceptance drag, and hanging at rest; binary mobiles of
//! depth 4 to 9 at rest. Prints one table row per case: time per step (wall clock over the
//! whole run, release build; the fastest of five runs, as the machine is shared), max ‖ψ‖,
//! split steps, solves and factorisations per step, and the energy balance: the largest
//! drift (J) and its share of the run's reference energy
//! (at rest the reference is its 1e-9 J floor, so only the drift in joules says anything), and
//! the blocks the last factorisation stored per joint (the virtual-mobile paper's §5 ordering
//! stores no fill: under 3 per joint for every tree).
//!
//! Run: `cargo bench -p ar-dynamics --bench scale` (add a case name to run only matching cases, e.g.
//! `cargo bench -p ar-dynamics --bench scale -- chain`). `cargo test` runs it without `--bench`: a smoke run
//! of the 10-link chain and the depth-4 mobile that fails on any solver error.

use std::path::Path;
use std::time::Instant;

use ar_dynamics::scene::generate::{chain_toml, mobile_toml};
use ar_dynamics::SceneSimulation;
use ar_dynamics::{run_scripted, Scene, StylusScript, StylusSpring};

/// Runs of each case, of which the fastest is shown. The runs are deterministic, so they differ
/// in wall time only.
const RUNS: usize = 5;

struct Case {
    name: String,
    scene: String,
    scripted: bool,
    secs: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --all-targets` runs benches without `--bench`, in a debug build: there the
    // smallest chain and mobile stand in for the whole table.
    let smoke = !args.iter().any(|a| a == "--bench");
    let mut filter: Vec<String> = args.into_iter().filter(|a| !a.starts_with('-')).collect();
    if smoke {
        println!("smoke run (no --bench): 10-link chains and the depth-4 mobile only");
        filter = vec!["chain 10 ".into(), "mobile depth 4 ".into()];
    }
    let mut cases = Vec::new();
    for links in [10, 100, 1000] {
        let scene = chain_toml(links).expect("chain");
        cases.push(Case {
            name: format!("chain {links} dragged"),
            scene: scene.clone(),
            scripted: true,
            secs: 14.0,
        });
        cases.push(Case {
            name: format!("chain {links} hanging"),
            scene,
            scripted: false,
            secs: 2.0,
        });
    }
    for depth in 4..=9 {
        cases.push(Case {
            name: format!("mobile depth {depth} ({} parts) at rest", (1 << depth) - 1),
            scene: mobile_toml(depth).expect("mobile"),
            scripted: false,
            secs: 2.0,
        });
    }
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let drag = std::fs::read_to_string(root.join("assets/scripts/ten_pendula_drag.csv"))
        .expect("drag script");
    let drag = StylusScript::parse(&drag).expect("drag script parses");
    println!(
        "{:<36} {:>12} {:>10} {:>7} {:>8} {:>8} {:>12} {:>11} {:>13}",
        "case",
        "us/step",
        "max|psi| m",
        "split",
        "solves",
        "factors",
        "drift J",
        "of E_ref",
        "blocks/joint"
    );
    for case in cases
        .iter()
        .filter(|c| filter.is_empty() || filter.iter().any(|f| c.name.contains(f.as_str())))
    {
        // The fastest of several stands for the step's cost on a shared machine (the 1000-link
        // drag, the longest, takes about a second).
        let runs = if smoke { 1 } else { RUNS };
        let mut best = None;
        for _ in 0..runs {
            let mut sim = SceneSimulation::from(
                Scene::parse(&case.scene, "generated.toml")
                    .and_then(|s| s.build())
                    .expect("generated scene builds"),
            );
            let start = Instant::now();
            let result = run_scripted(
                &mut sim,
                case.scripted.then_some(&drag),
                StylusSpring::default(),
                case.secs,
                |_| 0.0,
                |_| {},
            );
            let wall = start.elapsed().as_secs_f64();
            if best.as_ref().is_none_or(|(w, _, _)| wall < *w) {
                best = Some((wall, result, sim));
            }
        }
        let (wall, result, sim) = best.expect("at least one run");
        let sim = sim.into_default().expect("the default method");
        match result {
            Ok(s) => println!(
                "{:<36} {:>12.1} {:>10.1e} {:>7} {:>8.2} {:>8.2} {:>12.2e} {:>10.4}% {:>13.2}",
                case.name,
                wall / s.steps as f64 * 1e6,
                s.max_constraint_norm_m,
                s.split_steps,
                s.total_iterations as f64 / s.steps as f64,
                s.total_factorisations as f64 / s.steps as f64,
                s.max_abs_energy_drift_j,
                s.max_abs_energy_error_rel * 100.0,
                sim.factor_blocks() as f64 / sim.model().joints.len() as f64
            ),
            Err(e) if smoke => panic!("{}: {e}", case.name),
            Err(e) => println!("{:<36} failed: {e}", case.name),
        }
    }
}
