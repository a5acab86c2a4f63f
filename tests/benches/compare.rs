//! ar-multibody next to rapier3d-f64 on the same generated chains of the paper's Table 1
//! pendulum (10, 100 and 1000 links, `ar-multibody scene chain`), in one process run.
//!
//! Two scenarios, h = 0.01 s:
//! - **drag**: the ten-pendula acceptance drag (`assets/scripts/ten_pendula_drag.csv`, 14 s).
//!   ar-multibody clips its stylus spring to the tip; rapier has no implicit spring (an
//!   explicit 1e4 N/m spring on a 0.1 kg link diverges at this step), so its stylus is a
//!   kinematic body that follows the script and holds the tip with a spherical impulse joint
//!   while clipped, as rapier's own mouse-drag examples do.
//! - **swing**: the straight chain released from rest 0.5 rad from the vertical (rotated about
//!   world y, the hinges' axis), 14 s of free swing. `tests/benches/mujoco_chains.py` runs
//!   MuJoCo on the same swing and reads this bench's CSV for its ratios.
//!
//! rapier runs with impulse joints at 1, 4 and 20 solver iterations and with multibody
//! (reduced-coordinate) joints. Error columns: for ar-multibody the largest ‖ψ‖ over the run
//! (the norm of every constraint row, which bounds each joint's gap); for rapier the largest
//! distance between the two anchor points of any chain joint. Energy column: the largest
//! |E − E₀| over the run over E_ref, the larger of the peak kinetic energy and the range of the
//! potential energy (ar-multibody's own balance, which books the stylus's work, in both
//! scenarios; rapier's in the swing only, where nothing does work on the chain, with rapier's
//! `kinetic_energy` and `gravitational_potential_energy`). Time per step is the engine's step
//! alone, without the error and energy measurements. A run whose state goes non-finite is
//! reported unstable. Runs longer than [`WALL_BUDGET_SECS`] stop early and say
//! how many steps they took; rapier's multibody joints take one step only on the
//! 1000-link chain (its reduced-coordinate solve is dense: about 19 s per step here).
//!
//! Run: `make bench-compare` (this bench, then MuJoCo), or `cargo bench -p ar-dynamics --features rapier --bench compare
//! [-- FILTER...] [--csv OUT.csv]` where a filter is a scenario (`drag`, `swing`), a link count
//! (`10`, `100`, `1000`) or both (`"drag 100"`). `cargo test --features rapier` (which runs benches without
//! `--bench`) gets a smoke run only: the 10-link chains, rapier stopped after 1 s of wall time,
//! and ar-multibody's error checked.

use std::path::Path;
use std::time::Instant;

use ar_dynamics::scene::generate::chain_toml;
use ar_dynamics::SceneSimulation;
use ar_dynamics::{run_scripted, JointKind, Scene, StylusScript, StylusSpring};
use ar_io::csv_write::CsvWriter;
use nalgebra::{Point3, UnitQuaternion, Vector3};
use rapier3d_f64::dynamics::{
    GenericJoint, ImpulseJointHandle, MassProperties, RevoluteJointBuilder, RigidBodyBuilder,
    RigidBodyHandle, SphericalJointBuilder,
};
use rapier3d_f64::math::{Pose as RPose, Rotation as RRotation, Vector as RVector};
use rapier3d_f64::pipeline::PhysicsWorld;

/// Simulated time of every run (s): the acceptance drag's length.
const RUN_SECS: f64 = 14.0;
/// Initial tilt of the swing scenario (rad).
const SWING_TILT_RAD: f64 = 0.5;
/// A run stops after this much wall-clock time (s).
const WALL_BUDGET_SECS: f64 = 30.0;
/// The same budget in a `cargo test` smoke run (s).
const SMOKE_BUDGET_SECS: f64 = 1.0;

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Drag,
    Swing,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Drag => "drag",
            Scenario::Swing => "swing",
        }
    }
}

#[derive(Clone, Copy)]
enum Rapier {
    Impulse { iterations: usize },
    Multibody,
}

/// One engine's run of one case.
struct Outcome {
    engine: String,
    steps: usize,
    planned_steps: usize,
    us_per_step: f64,
    max_error_m: f64,
    /// Largest |E − E₀| / E_ref (see the module docs), where measured.
    max_energy_error_rel: Option<f64>,
    /// What the run found wrong with itself, if anything.
    note: Option<String>,
    unstable_at_s: Option<f64>,
}

fn to_r(v: &Vector3<f64>) -> RVector {
    RVector::new(v.x, v.y, v.z)
}

fn to_rq(q: &UnitQuaternion<f64>) -> RRotation {
    RRotation::from_xyzw(q.i, q.j, q.k, q.w)
}

/// The generated chain, tilted for the swing: every body turned about world y through the
/// pivot (the ball joint's anchor on the ground), which leaves every joint satisfied.
fn chain_scene(links: usize, scenario: Scenario) -> Scene {
    let text = chain_toml(links).expect("chain");
    let mut scene = Scene::parse(&text, "generated.toml").expect("generated chain parses");
    if scenario == Scenario::Swing {
        let pivot = scene
            .joints
            .iter()
            .find(|j| j.body1 == 0 || j.body2 == 0)
            .map(|j| {
                if j.body1 == 0 {
                    j.anchor1_in_body1
                } else {
                    j.anchor2_in_body2
                }
            })
            .expect("the chain hangs from the ground");
        let turn = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), SWING_TILT_RAD);
        for b in scene.bodies.iter_mut().skip(1) {
            b.position_in_world = pivot + turn * (b.position_in_world - pivot);
            b.world_from_body_rotation = turn * b.world_from_body_rotation;
        }
    }
    scene
}

fn run_ar(scene: &Scene, scenario: Scenario, drag: &StylusScript) -> Outcome {
    let mut sim = SceneSimulation::from(scene.build().expect("generated scene builds"));
    let planned_steps = (RUN_SECS / sim.dt_secs()).round() as usize;
    let start = Instant::now();
    let result = run_scripted(
        &mut sim,
        (scenario == Scenario::Drag).then_some(drag),
        StylusSpring::default(),
        RUN_SECS,
        |_| 0.0,
        |_| {},
    );
    let wall = start.elapsed().as_secs_f64();
    match result {
        Ok(s) => Outcome {
            engine: "ar-multibody".into(),
            steps: s.steps,
            planned_steps,
            us_per_step: wall / s.steps as f64 * 1e6,
            max_error_m: s.max_constraint_norm_m,
            max_energy_error_rel: Some(s.max_abs_energy_error_rel),
            note: None,
            unstable_at_s: None,
        },
        Err(e) => {
            eprintln!("ar-multibody failed: {e}");
            Outcome {
                engine: "ar-multibody".into(),
                steps: 0,
                planned_steps,
                us_per_step: f64::NAN,
                max_error_m: f64::NAN,
                max_energy_error_rel: None,
                note: None,
                unstable_at_s: Some(sim.time_secs()),
            }
        }
    }
}

/// A chain joint in rapier: the two bodies and each one's anchor in its own frame.
struct Link {
    body1: RigidBodyHandle,
    anchor1: RVector,
    body2: RigidBodyHandle,
    anchor2: RVector,
}

fn run_rapier(
    scene: &Scene,
    scenario: Scenario,
    drag: &StylusScript,
    how: Rapier,
    budget_secs: f64,
) -> Outcome {
    let h = scene.params.dt_secs;
    let mut world = PhysicsWorld::new();
    world.gravity = to_r(&scene.gravity_in_world);
    world.integration_parameters.dt = h;
    if let Rapier::Impulse { iterations } = how {
        world.integration_parameters.num_solver_iterations = iterations;
    } else {
        world.integration_parameters.num_solver_iterations = 4;
    }
    let handles: Vec<RigidBodyHandle> = scene
        .bodies
        .iter()
        .enumerate()
        .map(|(k, b)| {
            let pose = RPose::from_parts(
                to_r(&b.position_in_world),
                to_rq(&b.world_from_body_rotation),
            );
            let builder = if k == 0 {
                RigidBodyBuilder::fixed().pose(pose)
            } else {
                RigidBodyBuilder::dynamic()
                    .pose(pose)
                    .can_sleep(false)
                    .additional_mass_properties(MassProperties::with_principal_inertia_frame(
                        RVector::ZERO,
                        b.mass_kg,
                        to_r(&b.principal_inertia_kg_m2),
                        to_rq(&b.body_from_principal),
                    ))
            };
            world.insert_body(builder)
        })
        .collect();
    let mut links = Vec::with_capacity(scene.joints.len());
    for j in &scene.joints {
        let (a1, a2) = (to_r(&j.anchor1_in_body1), to_r(&j.anchor2_in_body2));
        let joint: GenericJoint = match j.kind {
            JointKind::Ball => SphericalJointBuilder::new()
                .local_anchor1(a1)
                .local_anchor2(a2)
                .into(),
            // The generator's hinges turn about world y, and its bodies start world-aligned
            // (the swing turns them about y too), so y is the axis in both body frames.
            JointKind::Hinge => RevoluteJointBuilder::new(RVector::Y)
                .local_anchor1(a1)
                .local_anchor2(a2)
                .into(),
            other => panic!("the comparison has no rapier joint for a {}", other.name()),
        };
        let (b1, b2) = (handles[j.body1], handles[j.body2]);
        match how {
            Rapier::Impulse { .. } => {
                world.insert_impulse_joint(b1, b2, joint);
            }
            Rapier::Multibody => {
                let handle = world
                    .insert_multibody_joint(b1, b2, joint)
                    .expect("a chain is a tree");
                // A multibody places its links from the joint coordinates (all zero: the chain
                // hanging straight), not from the bodies' poses: the swing's tilt goes into the
                // pivot's ball joint, whose axes are the ground's (the world's).
                if scenario == Scenario::Swing && (j.body1 == 0 || j.body2 == 0) {
                    let (multibody, link) = world
                        .multibody_joints
                        .get_mut(handle)
                        .expect("just inserted");
                    multibody
                        .link_mut(link)
                        .expect("its link")
                        .joint
                        .apply_displacement(&[0.0, SWING_TILT_RAD, 0.0]);
                }
            }
        }
        links.push(Link {
            body1: b1,
            anchor1: a1,
            body2: b2,
            anchor2: a2,
        });
    }
    let grab = scene.grab_points.first().expect("the chain has a tip");
    let tip_body = handles[grab.body];
    let tip_in_body = to_r(&grab.point_in_body);
    let origin = {
        let b = &scene.bodies[grab.body];
        Point3::from(b.position_in_world + b.world_from_body_rotation * grab.point_in_body)
    };
    let stylus = world.insert_body(
        RigidBodyBuilder::kinematic_position_based().translation(to_r(&origin.coords)),
    );
    let mut clip: Option<ImpulseJointHandle> = None;

    let planned_steps = (RUN_SECS / h).round() as usize;
    let step_cap = match how {
        Rapier::Multibody if scene.bodies.len() > 500 => 1,
        _ => planned_steps,
    };
    let mut out = Outcome {
        engine: match how {
            Rapier::Impulse { iterations } => format!("rapier impulse, {iterations} it."),
            Rapier::Multibody => "rapier multibody".into(),
        },
        steps: 0,
        planned_steps,
        us_per_step: 0.0,
        max_error_m: 0.0,
        max_energy_error_rel: None,
        note: None,
        unstable_at_s: None,
    };
    let gravity = world.gravity;
    let energy = |world: &PhysicsWorld| {
        let (mut kinetic, mut potential) = (0.0, 0.0);
        for &b in &handles[1..] {
            let body = &world.bodies[b];
            kinetic += body.kinetic_energy();
            potential += body.gravitational_potential_energy(h, gravity);
        }
        (kinetic, potential)
    };
    // At rest; from the scene, as rapier sets the bodies' mass properties in its first step.
    let initial_potential_j: f64 = scene.bodies[1..]
        .iter()
        .map(|b| -b.mass_kg * scene.gravity_in_world.dot(&b.position_in_world))
        .sum();
    let mut balance = EnergyRange::new((0.0, initial_potential_j));
    let start = Instant::now();
    let mut stepping_secs = 0.0;
    for n in 0..step_cap {
        if scenario == Scenario::Drag {
            let sample = drag.sample(n as f64 * h, &origin);
            world.bodies[stylus]
                .set_next_kinematic_translation(to_r(&sample.position_in_world.coords));
            match (sample.grab, clip) {
                (true, None) => {
                    let hold = SphericalJointBuilder::new()
                        .local_anchor1(RVector::ZERO)
                        .local_anchor2(tip_in_body);
                    clip = Some(world.insert_impulse_joint(stylus, tip_body, hold));
                }
                (false, Some(handle)) => {
                    world.remove_impulse_joint(handle);
                    clip = None;
                }
                _ => {}
            }
        }
        let step_start = Instant::now();
        world.step();
        stepping_secs += step_start.elapsed().as_secs_f64();
        out.steps = n + 1;
        let mut gap = 0.0f64;
        for l in &links {
            let p1 = world.bodies[l.body1].position().transform_point(l.anchor1);
            let p2 = world.bodies[l.body2].position().transform_point(l.anchor2);
            gap = gap.max((p1 - p2).length());
        }
        if !gap.is_finite() {
            out.unstable_at_s = Some((n + 1) as f64 * h);
            break;
        }
        out.max_error_m = out.max_error_m.max(gap);
        if scenario == Scenario::Swing {
            balance.add(energy(&world));
        }
        if start.elapsed().as_secs_f64() > budget_secs {
            break;
        }
    }
    out.us_per_step = stepping_secs / out.steps as f64 * 1e6;
    if scenario == Scenario::Swing && out.unstable_at_s.is_none() {
        if balance.peak_kinetic_j == 0.0 {
            // (A tilted start that the engine does not take, so the chain hangs at rest.)
            out.note = Some("did not move: the chain hung straight from the start".into());
        } else {
            out.max_energy_error_rel = Some(balance.max_error_rel());
        }
    }
    out
}

/// The energy measures of a run without work from outside: the largest |E − E₀|, the peak
/// kinetic energy and the potential energy's range (J).
struct EnergyRange {
    initial_j: f64,
    max_drift_j: f64,
    peak_kinetic_j: f64,
    potential_min_j: f64,
    potential_max_j: f64,
}

impl EnergyRange {
    fn new((kinetic, potential): (f64, f64)) -> Self {
        Self {
            initial_j: kinetic + potential,
            max_drift_j: 0.0,
            peak_kinetic_j: kinetic,
            potential_min_j: potential,
            potential_max_j: potential,
        }
    }

    fn add(&mut self, (kinetic, potential): (f64, f64)) {
        self.max_drift_j = self
            .max_drift_j
            .max((kinetic + potential - self.initial_j).abs());
        self.peak_kinetic_j = self.peak_kinetic_j.max(kinetic);
        self.potential_min_j = self.potential_min_j.min(potential);
        self.potential_max_j = self.potential_max_j.max(potential);
    }

    /// max |E − E₀| / E_ref, E_ref the larger of the peak kinetic energy and the potential
    /// energy's range (ar-multibody's reference without stylus or springs).
    fn max_error_rel(&self) -> f64 {
        let reference = self
            .peak_kinetic_j
            .max(self.potential_max_j - self.potential_min_j);
        self.max_drift_j / reference
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // in a debug build, where the full comparison would take hours.
    let smoke = !args.iter().any(|a| a == "--bench");
    let (link_counts, budget_secs): (&[usize], f64) = if smoke {
        println!("smoke run (no --bench): 10-link chains only, rapier runs cut at 1 s");
        (&[10], SMOKE_BUDGET_SECS)
    } else {
        (&[10, 100, 1000], WALL_BUDGET_SECS)
    };
    let csv_out = args
        .iter()
        .position(|a| a == "--csv")
        .and_then(|k| args.get(k + 1).cloned());
    let filter: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(k, a)| {
            !a.starts_with('-')
                && (*k == 0 || args[k - 1] != "--csv")
                && Some(*a) != csv_out.as_ref()
        })
        .map(|(_, a)| a)
        .collect();
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let drag = std::fs::read_to_string(root.join("assets/scripts/ten_pendula_drag.csv"))
        .expect("drag script");
    let drag = StylusScript::parse(&drag).expect("drag script parses");

    println!(
        "{:<7} {:>6} {:<24} {:>11} {:>12} {:>10} {:>9}  note",
        "scenario", "links", "engine", "us/step", "max err m", "energy", "time/ar"
    );
    let mut rows = CsvWriter::new(Vec::new());
    rows.write_fields([
        "scenario",
        "links",
        "engine",
        "us_per_step",
        "max_error_m",
        "max_energy_error_rel",
        "steps",
        "planned_steps",
        "unstable_at_s",
    ])
    .expect("in memory");
    for scenario in [Scenario::Drag, Scenario::Swing] {
        for &links in link_counts {
            let case = format!("{} {links}", scenario.name());
            let wanted =
                |f: &&String| **f == case || *f == scenario.name() || **f == links.to_string();
            if !filter.is_empty() && !filter.iter().any(wanted) {
                continue;
            }
            let scene = chain_scene(links, scenario);
            let ar = run_ar(&scene, scenario, &drag);
            if smoke {
                assert!(
                    ar.unstable_at_s.is_none() && ar.max_error_m < 1e-6,
                    "ar-multibody {case}: max error {:e} m",
                    ar.max_error_m
                );
            }
            let mut outcomes = vec![];
            for how in [
                Rapier::Impulse { iterations: 1 },
                Rapier::Impulse { iterations: 4 },
                Rapier::Impulse { iterations: 20 },
                Rapier::Multibody,
            ] {
                outcomes.push(run_rapier(&scene, scenario, &drag, how, budget_secs));
            }
            for o in std::iter::once(&ar).chain(outcomes.iter()) {
                let note = match (o.unstable_at_s, o.steps < o.planned_steps) {
                    (Some(t), _) => format!("unstable: non-finite at t = {t:.2} s"),
                    (None, true) if o.steps == 1 => {
                        "one step only (dense reduced-coordinate solve)".into()
                    }
                    (None, true) => format!(
                        "stopped after {} of {} steps (time budget)",
                        o.steps, o.planned_steps
                    ),
                    _ => o.note.clone().unwrap_or_default(),
                };
                let energy = o
                    .max_energy_error_rel
                    .map_or("-".into(), |e| format!("{:.2e}%", 100.0 * e));
                println!(
                    "{:<8} {:>6} {:<24} {:>11.1} {:>12.1e} {:>10} {:>8.2}x  {note}",
                    scenario.name(),
                    links,
                    o.engine,
                    o.us_per_step,
                    o.max_error_m,
                    energy,
                    o.us_per_step / ar.us_per_step,
                );
                rows.row()
                    .text(scenario.name())
                    .value(links)
                    .text(&o.engine)
                    .values([o.us_per_step, o.max_error_m])
                    .text(
                        &o.max_energy_error_rel
                            .map_or(String::new(), |e| e.to_string()),
                    )
                    .values([o.steps, o.planned_steps])
                    .text(&o.unstable_at_s.map_or(String::new(), |t| t.to_string()))
                    .end()
                    .expect("in memory");
            }
        }
    }
    if let Some(path) = csv_out {
        let text = rows.into_inner().expect("in memory");
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cannot write {path}: {e}");
            std::process::exit(1);
        }
        println!("written: {path}");
    }
}
