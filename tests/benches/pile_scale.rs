//! Issue 42, acceptance 3: "`scene pile --bodies 1000`: settles, time per step at most 4 × the
//! 288-body pile's per step (near-linear), and once it sleeps a step costs ≤ 0.5 ms; a sphere
//! dropped on the sleeping pile wakes the bodies it touches and only those islands."
//!
//! For each N (default 288 and 1000) the bench generates the pile of `scene pile --bodies N`
//! ([`pile_toml`]) and adds a dropper: a sphere like the pile's resting on a small static shelf
//! above the bin's centre (0.45 m up, over the walls). It then steps the scene and prints:
//! - `contacts`: the most contact points in a step; `pen m`: the deepest penetration at the
//!   end of a step until every body slept;
//! - `fall ms`: the mean wall time of a step over the fall (t ≤ [`FALL_SECS`]);
//! - `asleep at s`: the simulated time at which every body sleeps (the run gives up at
//!   [`MAX_SECS`]), and `to sleep ms` the mean step over the run until then;
//! - `asleep ms`: the mean step over [`ASLEEP_STEPS`] steps with every body asleep;
//! - `islands`: the pile's sleeping islands;
//! - the drop: the dropper is pushed off its shelf at 0.2 m/s and the run steps until every
//!   body sleeps again (at most [`DROP_SECS`]): `woke` the bodies that woke, in how many
//!   islands; `touched` how many of those islands were touched (one of their bodies in contact
//!   with the dropper or with a body of another island; the rest were woken by an awake body
//!   coming within detection's prediction distance, which wakes a sleeping island before the
//!   two could meet); and `again at s` when all slept again.
//!
//! Then the ratio of the two piles' step times (the largest N against the smallest).
//!
//! Run: `make bench-pile-scale`, or `cargo bench -p ar-dynamics --bench pile_scale [-- --bodies
//! 288,1000]`. `cargo test` (which runs benches without `--bench`, in a debug build) gets a smoke
//! run only: a 20-body pile, the same steps, asserting that it sleeps and that the drop wakes
//! only islands the dropper touched.

use std::collections::BTreeSet;
use std::time::Instant;

use ar_dynamics::scene::generate_pile::{pile_toml, SPIN_FRICTION_M};
use ar_dynamics::{Scene, Simulation, GROUND};
use nalgebra::Vector3;

/// The fall: the first 2.5 s, as `make bench-pile`'s.
const FALL_SECS: f64 = 2.5;
/// The run gives up waiting for the pile to sleep after this long (s simulated).
const MAX_SECS: f64 = 15.0;
/// Steps timed with every body asleep.
const ASLEEP_STEPS: usize = 200;
/// After the drop, the run waits this long for every body to sleep again (s simulated).
const DROP_SECS: f64 = 8.0;
/// The dropper's push off its shelf (m/s).
const PUSH_M_PER_S: f64 = 0.2;

/// The dropper and its shelf, appended to a generated pile: a sphere of the pile's (15 mm,
/// 20 g) on a 40 × 40 × 10 mm static box at the bin's centre, 0.45 m up.
const DROPPER: &str = "
[[static]]
name = \"shelf\"
shape = { kind = \"box\", size_m = [0.04, 0.04, 0.01] }
position_m = [0.0, 0.0, 0.45]

[[body]]
name = \"dropper\"
mass_kg = 0.02
inertia_kg_m2 = [1.8e-6, 1.8e-6, 1.8e-6]
position_m = [0.0, 0.0, 0.47]
shape = { kind = \"sphere\", radius_m = 0.015 }
";

/// One pile's figures.
struct Row {
    bodies: usize,
    max_contacts: usize,
    /// The deepest penetration at the end of a step until every body slept (m).
    max_penetration_m: f64,
    fall_ms: f64,
    asleep_at_secs: Option<f64>,
    to_sleep_ms: f64,
    asleep_ms: Option<f64>,
    islands: usize,
    drop: Option<Drop>,
}

/// What the drop woke.
struct Drop {
    woke_bodies: usize,
    woke_islands: usize,
    /// The islands that woke and were touched by the dropper or another island's body.
    touched_islands: usize,
    again_at_secs: Option<f64>,
}

fn pile(bodies: usize) -> Simulation {
    let mut text = pile_toml(bodies).expect("pile generates");
    text += DROPPER;
    text += &format!("spin_friction_m = {SPIN_FRICTION_M:?}\n");
    Scene::parse(&text, format!("pile_{bodies}.toml"))
        .expect("pile parses")
        .build()
        .expect("pile builds")
}

/// Steps once and returns the wall time of the step (ms); a step error ends the bench.
fn timed_step(sim: &mut Simulation) -> f64 {
    let start = Instant::now();
    if let Err(e) = sim.step() {
        panic!("step at t = {} s failed: {e}", sim.time_secs());
    }
    start.elapsed().as_secs_f64() * 1e3
}

/// The body pairs (not the ground) in contact in the last step's contact report.
fn body_pairs(sim: &Simulation) -> impl Iterator<Item = (usize, usize)> + '_ {
    let colliders = &sim.model().contact.as_ref().expect("contact").colliders;
    sim.contact_report().iter().filter_map(move |c| {
        let (b1, b2) = (colliders[c.shape1].body, colliders[c.shape2].body);
        (b1 != GROUND && b2 != GROUND).then_some((b1, b2))
    })
}

fn run(bodies: usize) -> Row {
    let mut sim = pile(bodies);
    let total = sim.bodies().len() - 1;
    let dropper = sim.body_id("dropper").expect("dropper");
    let h = sim.dt_secs();
    let (mut fall_ms, mut fall_steps, mut all_ms, mut steps) = (0.0, 0, 0.0, 0);
    let (mut max_contacts, mut max_penetration_m) = (0, 0.0f64);
    let mut asleep_at_secs = None;
    while sim.time_secs() < MAX_SECS - 0.5 * h {
        let ms = timed_step(&mut sim);
        max_contacts = max_contacts.max(sim.contact_report().len());
        max_penetration_m = max_penetration_m.max(sim.max_penetration_m());
        all_ms += ms;
        steps += 1;
        if sim.time_secs() <= FALL_SECS + 0.5 * h {
            fall_ms += ms;
            fall_steps += 1;
        }
        if sim.sleeping_bodies() == total && sim.time_secs() > FALL_SECS {
            asleep_at_secs = Some(sim.time_secs());
            break;
        }
    }
    let mut row = Row {
        bodies,
        max_contacts,
        max_penetration_m,
        fall_ms: fall_ms / fall_steps as f64,
        asleep_at_secs,
        to_sleep_ms: all_ms / steps as f64,
        asleep_ms: None,
        islands: 0,
        drop: None,
    };
    if asleep_at_secs.is_none() {
        return row;
    }
    let asleep_ms: f64 = (0..ASLEEP_STEPS).map(|_| timed_step(&mut sim)).sum();
    row.asleep_ms = Some(asleep_ms / ASLEEP_STEPS as f64);
    let island_of: Vec<Option<usize>> = (0..=total).map(|b| sim.sleeping_island(b)).collect();
    let pile_islands: BTreeSet<usize> = (1..=total)
        .filter(|&b| b != dropper)
        .filter_map(|b| island_of[b])
        .collect();
    row.islands = pile_islands.len();
    sim.set_body_velocity(
        dropper,
        Vector3::new(PUSH_M_PER_S, 0.0, 0.0),
        Vector3::zeros(),
    );
    let (mut woke, mut touched) = (BTreeSet::new(), BTreeSet::new());
    let start = sim.time_secs();
    let mut again_at_secs = None;
    while sim.time_secs() < start + DROP_SECS {
        timed_step(&mut sim);
        for (b1, b2) in body_pairs(&sim) {
            if island_of[b1] != island_of[b2] {
                touched.extend([island_of[b1], island_of[b2]].into_iter().flatten());
            }
        }
        for b in (1..=total).filter(|&b| b != dropper && !sim.is_asleep(b)) {
            woke.insert(b);
        }
        if sim.sleeping_bodies() == total && sim.time_secs() > start + 0.5 {
            again_at_secs = Some(sim.time_secs() - start);
            break;
        }
    }
    let woke_islands: BTreeSet<usize> = woke.iter().filter_map(|&b| island_of[b]).collect();
    row.drop = Some(Drop {
        woke_bodies: woke.len(),
        woke_islands: woke_islands.len(),
        touched_islands: woke_islands.intersection(&touched).count(),
        again_at_secs,
    });
    row
}

fn print(rows: &[Row]) {
    println!(
        "{:>6} {:>9} {:>9} {:>8} {:>12} {:>11} {:>10} {:>8} {:>15} {:>8} {:>11}",
        "bodies",
        "contacts",
        "pen m",
        "fall ms",
        "asleep at s",
        "to sleep ms",
        "asleep ms",
        "islands",
        "woke (islands)",
        "touched",
        "again at s"
    );
    let opt =
        |x: Option<f64>, digits: usize| x.map_or("never".to_owned(), |x| format!("{x:.digits$}"));
    for r in rows {
        let (woke, only, again) = match &r.drop {
            Some(d) => (
                format!("{} ({})", d.woke_bodies, d.woke_islands),
                d.touched_islands.to_string(),
                opt(d.again_at_secs, 2),
            ),
            None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
        };
        println!(
            "{:>6} {:>9} {:>9.1e} {:>8.2} {:>12} {:>11.2} {:>10} {:>8} {:>15} {:>8} {:>11}",
            r.bodies,
            r.max_contacts,
            r.max_penetration_m,
            r.fall_ms,
            opt(r.asleep_at_secs, 2),
            r.to_sleep_ms,
            opt(r.asleep_ms, 3),
            r.islands,
            woke,
            only,
            again
        );
    }
    if let (Some(small), Some(large)) = (rows.first(), rows.last()) {
        if large.bodies > small.bodies {
            println!(
                "{} against {} bodies ({:.2}x the bodies): fall {:.2}x, until asleep {:.2}x per step",
                large.bodies,
                small.bodies,
                large.bodies as f64 / small.bodies as f64,
                large.fall_ms / small.fall_ms,
                large.to_sleep_ms / small.to_sleep_ms
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test`: a smoke run in the debug build.
        let row = run(20);
        print(std::slice::from_ref(&row));
        assert!(row.asleep_at_secs.is_some(), "the 20-body pile sleeps");
        let drop = row.drop.expect("dropped");
        assert!(
            drop.touched_islands > 0 && drop.woke_islands < row.islands,
            "the drop woke what it touched, not every island"
        );
        return;
    }
    let bodies: Vec<usize> = match args.iter().position(|a| a == "--bodies") {
        Some(i) => args
            .get(i + 1)
            .expect("--bodies N,M,...")
            .split(',')
            .map(|n| n.trim().parse().expect("--bodies: whole numbers"))
            .collect(),
        None => vec![288, 1000],
    };
    let mut rows = Vec::new();
    for n in bodies {
        eprintln!("pile of {n} bodies ...");
        rows.push(run(n));
        print(&rows);
    }
}
