//! `demo` (interim, until the compositor exists): runs the ten-pendula interaction headless
//! on the scripted stylus and prints the solver's diagnostics twice a second.
//!
//! The scene and the script are compiled in, so the demo runs from any directory.

use anyhow::Result;
use clap::Args;

use ar_multibody::sim::{run_scripted, Scene, StylusScript, StylusSpring};

const SCENE: &str = include_str!("../../assets/scenes/ten_pendula.toml");
const SCRIPT: &str = include_str!("../../assets/scripts/ten_pendula_drag.csv");

/// Arguments of `demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Simulated duration (s).
    #[arg(long, default_value_t = 14.0)]
    pub duration: f64,
}

/// Runs the command.
pub fn run(args: DemoArgs) -> Result<()> {
    let scene = Scene::parse(SCENE, "assets/scenes/ten_pendula.toml")?;
    let script = StylusScript::parse(SCRIPT)
        .map_err(|e| anyhow::anyhow!("assets/scripts/ten_pendula_drag.csv: {e}"))?;
    let mut sim = scene.build()?;
    println!("ten pendula, scripted stylus: clip at 1 s, drag 10 cm along +x and 5 cm up over 2 s, hold 1 s, release");
    println!("    t/s   clipped   |psi|/m    kinetic/J  potential/J  elastic/J  user work/J  dissipated/J  energy err/%  pivot |F|/N");
    let every = (0.5 / sim.dt_secs()).round().max(1.0) as usize;
    let mut n = 0usize;
    let summary = run_scripted(
        &mut sim,
        Some(&script),
        StylusSpring::default(),
        args.duration,
        |sim| {
            n += 1;
            if n.is_multiple_of(every) {
                let d = sim.diagnostics();
                let pivot = sim
                    .joint_reactions()
                    .first()
                    .map_or(0.0, |r| r.force_in_world.norm());
                println!(
                "{:7.2}   {:>7}   {:9.2e}  {:9.5}  {:11.5}  {:9.5}  {:11.5}  {:12.5}  {:12.4}  {:10.4}",
                d.time_secs,
                if d.clipped { "yes" } else { "no" },
                d.constraint_norm_m,
                d.kinetic_j,
                d.potential_j,
                d.elastic_j,
                d.user_work_j,
                d.dissipated_j,
                100.0 * d.energy_error_rel,
                pivot
            );
            }
        },
    )?;
    println!(
        "max |psi| {:.3e} m (after release {:.3e} m), max |energy error| {:.3} % of E_ref = {:.5} J, grab point within {:.2} mm of the stylus",
        summary.max_constraint_norm_m,
        summary.max_constraint_norm_after_release_m,
        100.0 * summary.max_abs_energy_error_rel,
        summary.energy_reference_j,
        1e3 * summary.max_grab_distance_m
    );
    Ok(())
}
