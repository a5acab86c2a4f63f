//! The pile of issue 15, acceptance 7, in ar-multibody and in rapier3d-f64, in one process run:
//! "the pile settles and stays: after 5 s, max penetration ≤ 1e-4 m and kinetic energy below
//! 1e-6 J", with the step time of both engines side by side.
//!
//! The scene is `assets/scenes/pile.toml` (288 bodies, spheres and cubes, dropped into a bin of
//! four static walls on the desk plane; μ = 0.5, e = 0, h = 0.01 s). Both engines are built
//! from the same loaded [`Scene`]: rapier gets every body with the scene's mass and principal
//! inertia (set explicitly; its colliders have zero density), every collider of the scene's
//! contact model (ball, cuboid, the desk as a half-space), friction combined as the geometric
//! mean (ar-multibody's √(μ₁ μ₂)), restitution as the max, 1 internal PGS iteration and 1
//! stabilisation iteration, CCD off and sleeping DISABLED (a sleeping body's velocity is zero
//! by fiat, so its kinetic energy would prove nothing). The runs are the work-precision front
//! of [`pile_front`]: rapier at 1, 2, 4 (its default) and 8 solver iterations, ar-multibody at
//! several `[contact] tolerance_m`. Each run simulates [`SETTLE_SECS`] and then [`STAY_SECS`] more; a run
//! longer than the wall budget stops early and says how many steps it took, and a step error
//! or a non-finite state ends a run with a note instead of a panic.
//!
//! Columns (one row per run):
//! - `steps`, `t end s`: steps taken and the simulated time reached (s);
//! - `ms mean`, `ms median`: wall time of one step (ms), the step call only;
//! - `pen run m`, `pen stay m`: the engine's own deepest penetration (m), over the whole run
//!   and over the stay (t > [`SETTLE_SECS`]; the last second of a full run). ar-multibody:
//!   `max_penetration_m()`, at the end of each step. rapier: max over its narrow phase's
//!   manifold points of −dist, which are computed at the start of each step (and may be
//!   recycled from an earlier step while a pair barely moves);
//! - `chk run m`, `chk stay m`: the same, measured by this bench alike for both engines: parry's
//!   exact contact query on every pair of colliders whose bounding boxes overlap, at the poses
//!   each step ends with;
//! - `KE 5s J`: kinetic energy (J) at t = [`SETTLE_SECS`] (at the end of a run cut short);
//!   `KE stay J`: the largest kinetic energy during the stay;
//! - `contacts`: contact points at the end (ar-multibody: its contact report; rapier: the
//!   solver contacts of its manifolds, speculative ones included);
//! - `out`: bodies whose centre left the bin (the box of the static colliders);
//! - `time/ar`: mean step time over that of ar-multibody's default (unset `tolerance_m`).
//!
//! Run: `make bench-pile`, or `cargo bench -p ar-dynamics --features rapier --bench pile [-- --csv OUT.csv] [--budget SECS]`
//! (`--budget`: wall-clock seconds per run, default [`WALL_BUDGET_SECS`]; `--only TEXT`: the
//! runs whose label contains TEXT; `--repeat N`: N rounds of all runs, the front from each
//! point's median time, the whole-run table and the CSV from the first round;
//! `--front-csv`, `--front-png`: see [`pile_front`]). The CSV has one
//! row per step and engine: t_s, engine, step_ms, max_penetration_m, check_penetration_m,
//! kinetic_j, contacts. `cargo test` (which runs benches without `--bench`, in a debug build)
//! gets a smoke run only: the pile's bottom layer ([`SMOKE_BODIES`] bodies), 0.2 s simulated
//! per engine within [`SMOKE_BUDGET_SECS`] each, checking that both engines stepped and that
//! ar-multibody's penetration is finite.
//!
//! rapier runs first; ar-multibody then runs on a thread of its own, which the bench gives up
//! on when a step is still running at the end of the budget (ar-multibody's contact solve is
//! dense for now, and one step of the whole pile may outlast the budget): its row then shows
//! the steps that finished, or none.

use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

mod pile_check;
mod pile_front;
mod pile_report;

use pile_check::Check;

use ar_dynamics::contact::ColliderShape;
use ar_dynamics::Scene;
use nalgebra::{Isometry3, UnitQuaternion, Vector3};
use parry3d_f64::shape::{Ball, Cuboid, HalfSpace};
use pile_front::Setting;
use pile_report::{arg_value, write_or_exit};
use rapier3d_f64::dynamics::{CoefficientCombineRule, MassProperties, RigidBodyBuilder};
use rapier3d_f64::geometry::{ColliderBuilder, SharedShape};
use rapier3d_f64::math::{Pose, Rotation, Vector};
use rapier3d_f64::pipeline::PhysicsWorld;

/// Simulated time to settle (s): the acceptance's "after 5 s".
const SETTLE_SECS: f64 = 5.0;
/// Simulated time after settling in which the pile must stay (s).
const STAY_SECS: f64 = 1.0;
/// Simulated time of a smoke run (s).
const SMOKE_SECS: f64 = 0.2;
/// Bodies of a smoke run: the pile's bottom layer (a dense step of the whole pile may
/// outlast a debug build's smoke budget).
const SMOKE_BODIES: usize = 36;
/// A run stops after this much wall-clock time (s), per engine.
const WALL_BUDGET_SECS: f64 = 120.0;
/// The same budget in a `cargo test` smoke run (s).
const SMOKE_BUDGET_SECS: f64 = 5.0;
/// Acceptance 7's bounds, printed next to the results.
const PENETRATION_BOUND_M: f64 = 1.0e-4;
const KINETIC_BOUND_J: f64 = 1.0e-6;

/// One step of one engine.
struct StepRecord {
    t_s: f64,
    step_ms: f64,
    penetration_m: f64,
    check_penetration_m: f64,
    kinetic_j: f64,
    contacts: usize,
    /// ar-multibody: the sweeps of its sparse contact solve; rapier: its solver iterations.
    sweeps: usize,
}

/// One engine's run.
pub struct Run {
    engine: String,
    pub planned_steps: usize,
    steps: Vec<StepRecord>,
    out_of_bin: usize,
    /// Why the run ended before its planned steps, if it did.
    pub stopped: Option<String>,
}

fn to_r(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

fn to_rq(q: &UnitQuaternion<f64>) -> Rotation {
    Rotation::from_xyzw(q.i, q.j, q.k, q.w)
}

fn to_pose(iso: &Isometry3<f64>) -> Pose {
    Pose::from_parts(to_r(&iso.translation.vector), to_rq(&iso.rotation))
}

/// The pile's collider geometry in parry (shared by rapier's colliders and the check).
fn parry_shape(shape: &ColliderShape) -> SharedShape {
    match shape {
        &ColliderShape::Sphere { radius_m } => SharedShape::new(Ball::new(radius_m)),
        ColliderShape::Box { half_extents_m } => {
            SharedShape::new(Cuboid::new(to_r(half_extents_m)))
        }
        ColliderShape::Plane { normal } => SharedShape::new(HalfSpace::new(to_r(normal))),
        other => panic!("the pile bench has no parry shape for {other:?}"),
    }
}

fn planned_steps(secs: f64, h: f64) -> usize {
    (secs / h).round() as usize
}

fn empty_run(engine: String, secs: f64, h: f64) -> Run {
    Run {
        engine,
        planned_steps: planned_steps(secs, h),
        steps: Vec::new(),
        out_of_bin: 0,
        stopped: None,
    }
}

/// ar-multibody's run, recorded into `run` step by step (another thread may read it).
fn run_ar(scene: &Scene, check: &Check, budget_secs: f64, run: &Mutex<Run>) {
    let lock = || run.lock().expect("no panic while locked");
    let mut sim = match scene.build() {
        Ok(sim) => sim,
        Err(e) => {
            lock().stopped = Some(format!("build failed: {e}"));
            return;
        }
    };
    let planned = lock().planned_steps;
    let start = Instant::now();
    for _ in 0..planned {
        let t0 = Instant::now();
        let result = sim.step();
        let step_ms = t0.elapsed().as_secs_f64() * 1e3;
        if let Err(e) = result {
            lock().stopped = Some(format!("step error at t = {:.2} s: {e}", sim.time_secs()));
            break;
        }
        let bodies = sim.bodies();
        let kinetic_j: f64 = bodies.iter().map(|b| b.kinetic_energy_j()).sum();
        let penetration_m = sim.max_penetration_m();
        let record = StepRecord {
            t_s: sim.time_secs(),
            step_ms,
            penetration_m,
            check_penetration_m: check.deepest_m(|b| to_pose(&bodies[b].world_from_body())),
            kinetic_j,
            contacts: sim.contact_report().len(),
            sweeps: sim.contact_sweeps(),
        };
        let centres = bodies.iter().skip(1).map(|b| to_r(&b.position_in_world));
        let out_of_bin = check.out_of_bin(centres);
        let mut r = lock();
        r.steps.push(record);
        r.out_of_bin = out_of_bin;
        if !(kinetic_j.is_finite() && penetration_m.is_finite()) {
            r.stopped = Some(format!("non-finite state at t = {:.2} s", sim.time_secs()));
            break;
        }
        if start.elapsed().as_secs_f64() > budget_secs {
            break;
        }
    }
}

/// [`run_ar`] on a thread of its own, given up after the wall budget (plus a little): one
/// step of the dense contact solve may take longer than the whole budget, and a step cannot
/// be interrupted. A thread given up on keeps running until the process exits.
fn run_ar_bounded(
    scene: &Scene,
    check: &Arc<Check>,
    secs: f64,
    budget_secs: f64,
    label: String,
) -> Run {
    let run = Arc::new(Mutex::new(empty_run(label, secs, scene.params.dt_secs)));
    let (done_tx, done_rx) = mpsc::channel();
    {
        let (scene, check, run) = (scene.clone(), Arc::clone(check), Arc::clone(&run));
        std::thread::spawn(move || {
            run_ar(&scene, &check, budget_secs, &run);
            let _ = done_tx.send(());
        });
    }
    let grace_secs = 1.0;
    let finished = done_rx
        .recv_timeout(Duration::from_secs_f64(budget_secs + grace_secs))
        .is_ok();
    let mut r = run.lock().expect("no panic while locked");
    let mut out = empty_run(r.engine.clone(), secs, scene.params.dt_secs);
    out.steps = std::mem::take(&mut r.steps);
    out.out_of_bin = r.out_of_bin;
    out.stopped = r.stopped.take();
    if !finished {
        out.stopped = Some(format!(
            "step {} still running after {budget_secs} s of wall time (given up; {} steps finished)",
            out.steps.len() + 1,
            out.steps.len()
        ));
    }
    out
}

/// rapier's run with `iterations` solver iterations.
fn run_rapier(scene: &Scene, check: &Check, secs: f64, budget_secs: f64, iterations: usize) -> Run {
    let h = scene.params.dt_secs;
    let mut world = PhysicsWorld::new();
    world.gravity = to_r(&scene.gravity_in_world);
    world.integration_parameters.dt = h;
    world.integration_parameters.num_solver_iterations = iterations;
    // Defaults otherwise: 1 internal PGS, 1 stabilisation iteration.
    let handles: Vec<_> = scene
        .bodies
        .iter()
        .enumerate()
        .map(|(k, b)| {
            let pose = to_pose(&b.world_from_body());
            let builder = if k == 0 {
                RigidBodyBuilder::fixed().pose(pose)
            } else {
                RigidBodyBuilder::dynamic()
                    .pose(pose)
                    .linvel(to_r(&b.linear_velocity_in_world))
                    .angvel(to_r(&b.angular_velocity_in_world))
                    .can_sleep(false)
                    .ccd_enabled(false)
                    .additional_mass_properties(MassProperties::with_principal_inertia_frame(
                        Vector::ZERO,
                        b.mass_kg,
                        to_r(&b.principal_inertia_kg_m2),
                        to_rq(&b.body_from_principal),
                    ))
            };
            world.insert_body(builder)
        })
        .collect();
    let model = scene.contact.as_ref().expect("the pile has contact");
    for c in &model.colliders {
        let collider = ColliderBuilder::new(parry_shape(&c.shape))
            .position(to_pose(&c.body_from_shape))
            .density(0.0)
            .friction(c.material.friction)
            .friction_combine_rule(CoefficientCombineRule::GeometricMean)
            .restitution(c.material.restitution)
            .restitution_combine_rule(CoefficientCombineRule::Max);
        world.insert_collider(collider, Some(handles[c.body]));
    }

    let mut run = empty_run(pile_front::Setting::Rapier(iterations).label(), secs, h);
    let start = Instant::now();
    for n in 0..run.planned_steps {
        let t0 = Instant::now();
        world.step();
        let step_ms = t0.elapsed().as_secs_f64() * 1e3;
        let mut penetration_m = 0.0f64;
        let mut contacts = 0;
        for pair in world.contact_pairs() {
            for m in pair.manifolds() {
                for p in &m.points {
                    penetration_m = penetration_m.max(-p.dist);
                }
            }
            for m in pair.solver_manifolds() {
                contacts += m.data.solver_contacts.len();
            }
        }
        let kinetic_j: f64 = handles[1..]
            .iter()
            .map(|&b| world.bodies[b].kinetic_energy())
            .sum();
        run.steps.push(StepRecord {
            t_s: (n + 1) as f64 * h,
            step_ms,
            penetration_m,
            check_penetration_m: check.deepest_m(|b| *world.bodies[handles[b]].position()),
            kinetic_j,
            contacts,
            sweeps: iterations,
        });
        if !kinetic_j.is_finite() {
            run.stopped = Some(format!(
                "non-finite state at t = {:.2} s",
                (n + 1) as f64 * h
            ));
            break;
        }
        if start.elapsed().as_secs_f64() > budget_secs {
            break;
        }
    }
    run.out_of_bin = check.out_of_bin(
        handles[1..]
            .iter()
            .map(|&b| world.bodies[b].position().translation),
    );
    run
}

/// The figures of one span of a run (its steps ending in (from, to], half a step of slack).
pub struct Span {
    ms_mean: f64,
    chk_max_m: f64,
    kinetic_max_j: f64,
    sweeps_mean: f64,
}

pub fn summarise_span(run: &Run, from_s: f64, to_s: f64, h: f64) -> Span {
    let s: Vec<&StepRecord> = run
        .steps
        .iter()
        .filter(|r| r.t_s > from_s + 0.5 * h && r.t_s <= to_s + 0.5 * h)
        .collect();
    let n = s.len() as f64;
    Span {
        ms_mean: s.iter().map(|r| r.step_ms).sum::<f64>() / n,
        chk_max_m: s
            .iter()
            .map(|r| r.check_penetration_m)
            .fold(f64::NAN, f64::max),
        kinetic_max_j: s.iter().map(|r| r.kinetic_j).fold(f64::NAN, f64::max),
        sweeps_mean: s.iter().map(|r| r.sweeps as f64).sum::<f64>() / n,
    }
}

/// The figures of one run's table row.
struct Summary {
    t_end_s: f64,
    ms_mean: f64,
    ms_median: f64,
    pen_run_m: f64,
    pen_stay_m: f64,
    chk_run_m: f64,
    chk_stay_m: f64,
    kinetic_settled_j: f64,
    kinetic_stay_j: f64,
    contacts: usize,
}

/// The median of values sorted ascending (NaN for none).
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
    }
}

fn summarise(run: &Run, settle_secs: f64, h: f64) -> Summary {
    let s = &run.steps;
    let mut ms: Vec<f64> = s.iter().map(|r| r.step_ms).collect();
    ms.sort_by(f64::total_cmp);
    let median = median_of_sorted(&ms);
    // Steps that end after the settling time (half a step of slack for rounding).
    let stay = |r: &&StepRecord| r.t_s > settle_secs + 0.5 * h;
    let max_of = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NAN, f64::max);
    let settled = s
        .iter()
        .rfind(|r| r.t_s <= settle_secs + 0.5 * h)
        .or(s.last());
    Summary {
        t_end_s: s.last().map_or(0.0, |r| r.t_s),
        ms_mean: ms.iter().sum::<f64>() / ms.len() as f64,
        ms_median: median,
        pen_run_m: max_of(&mut s.iter().map(|r| r.penetration_m)),
        pen_stay_m: max_of(&mut s.iter().filter(stay).map(|r| r.penetration_m)),
        chk_run_m: max_of(&mut s.iter().map(|r| r.check_penetration_m)),
        chk_stay_m: max_of(&mut s.iter().filter(stay).map(|r| r.check_penetration_m)),
        kinetic_settled_j: settled.map_or(f64::NAN, |r| r.kinetic_j),
        kinetic_stay_j: max_of(&mut s.iter().filter(stay).map(|r| r.kinetic_j)),
        contacts: s.last().map_or(0, |r| r.contacts),
    }
}

/// The scene with its first `n` bodies only (and their colliders and the static ones).
fn keep_bodies(scene: &mut Scene, n: usize) {
    scene.bodies.truncate(n + 1);
    if let Some(c) = scene.contact.as_mut() {
        c.colliders.retain(|c| c.body <= n);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // in a debug build.
    let smoke = !args.iter().any(|a| a == "--bench");
    let csv_out = arg_value(&args, "--csv");
    let (settle_secs, total_secs, mut budget_secs) = if smoke {
        (SMOKE_SECS, SMOKE_SECS, SMOKE_BUDGET_SECS)
    } else {
        (SETTLE_SECS, SETTLE_SECS + STAY_SECS, WALL_BUDGET_SECS)
    };
    if let Some(b) = arg_value(&args, "--budget") {
        budget_secs = b.parse().expect("--budget takes seconds");
    }
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut scene = Scene::load(root.join("assets/scenes/pile.toml")).expect("pile scene loads");
    if smoke {
        keep_bodies(&mut scene, SMOKE_BODIES);
    }
    // Sleeping off in both engines, as documented above (ours ships with it on).
    scene.contact.as_mut().expect("the pile has contact").sleep = false;
    let model = scene.contact.as_ref().expect("the pile has contact");
    let check = Arc::new(Check::new(model));
    let h = scene.params.dt_secs;
    println!(
        "pile: {} bodies, {} colliders, h = {h} s, {total_secs} s simulated (settle {settle_secs} s), \
         wall budget {budget_secs} s per run{}",
        scene.bodies.len() - 1,
        model.colliders.len(),
        if smoke { " (smoke run: no --bench)" } else { "" },
    );
    println!(
        "rapier3d-f64: 1 internal PGS, 1 stabilisation iteration, solver iterations as labelled \
         (default 4), sleeping disabled, CCD off, μ geometric mean, e max"
    );

    let settings: &[Setting] = if smoke {
        &[Setting::Rapier(4), Setting::Ours(None)]
    } else {
        &pile_front::SETTINGS
    };
    // `--only TEXT`: the settings whose label contains TEXT (e.g. `--only "tol=1e-3"`).
    let only = arg_value(&args, "--only");
    let settings: Vec<Setting> = settings
        .iter()
        .filter(|s| only.as_ref().is_none_or(|o| s.label().contains(o.as_str())))
        .copied()
        .collect();
    // `--repeat N`: N rounds of every setting in turn; the front takes each point's median
    // time (a shared machine's wall times swing by tens of percent from run to run).
    let repeat: usize = arg_value(&args, "--repeat").map_or(1, |n| {
        n.parse()
            .ok()
            .filter(|&n| n >= 1)
            .expect("--repeat takes a count of at least 1")
    });
    let mut rounds = Vec::with_capacity(repeat);
    let mut runs = Vec::new();
    for round in 1..=repeat {
        if repeat > 1 {
            eprintln!("round {round} of {repeat}");
        }
        let these = run_settings(&settings, &scene, &check, total_secs, budget_secs);
        rounds.push(
            these
                .iter()
                .map(|(setting, run)| pile_front::point(*setting, run, settle_secs, h))
                .collect::<Vec<_>>(),
        );
        if round == 1 {
            runs = these;
        }
    }
    if smoke {
        for (_, run) in &runs {
            assert!(
                !run.steps.is_empty(),
                "{} took no step: {:?}",
                run.engine,
                run.stopped
            );
            let pen = summarise(run, settle_secs, h).pen_run_m;
            assert!(pen.is_finite(), "{} penetration {pen}", run.engine);
        }
    }
    pile_report::print_table(&runs, settle_secs, h, budget_secs);
    let points = pile_front::median_of_rounds(&rounds);
    pile_front::print(&points, repeat);

    if let Some(path) = csv_out {
        write_or_exit(&path, &pile_report::steps_csv(&runs));
    }
    if let Some(path) = arg_value(&args, "--front-csv") {
        write_or_exit(&path, &pile_front::csv(&points));
    }
    if let Some(path) = arg_value(&args, "--front-png") {
        if let Err(e) = pile_front::plot(Path::new(&path), &points, repeat) {
            eprintln!("cannot plot {path}: {e}");
            std::process::exit(1);
        }
        println!("written: {path}");
    }
}

/// One run per setting, in order.
fn run_settings(
    settings: &[Setting],
    scene: &Scene,
    check: &Arc<Check>,
    secs: f64,
    budget_secs: f64,
) -> Vec<(Setting, Run)> {
    settings
        .iter()
        .map(|&setting| {
            let run = match setting {
                Setting::Rapier(n) => run_rapier(scene, check, secs, budget_secs, n),
                Setting::Ours(tolerance_m) => {
                    let mut scene = scene.clone();
                    scene.contact.as_mut().expect("contact").tolerance_m = tolerance_m;
                    run_ar_bounded(&scene, check, secs, budget_secs, setting.label())
                }
            };
            eprintln!("{}: {} steps", run.engine, run.steps.len());
            (setting, run)
        })
        .collect()
}
