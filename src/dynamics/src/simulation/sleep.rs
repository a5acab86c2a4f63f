//! Sleeping (`[contact] sleep = true`, the default): an island of bodies at rest stops
//! costing a step anything, as in Box2D v3 (`solver.c`'s sleep timers, `island.c`) and
//! rapier's island manager.
//!
//! - **Islands** ([`super::islands`]): after each step, union–find over the step's contact
//!   pairs (start and end detections), joints and springs; the ground and the stylus tip link
//!   nothing.
//! - **Falling asleep**: a body is still while its fastest surface point, |v| + |ω| r with r
//!   its reach over its colliders, stays below [`SLEEP_SPEED_M_PER_S`]; an island whose
//!   bodies have all been still for [`TIME_TO_SLEEP_SECS`] sleeps: their velocities become
//!   exactly zero (the kinetic energy this takes, below ½ m (5 mm/s)² per body, is booked as
//!   dissipated).
//! - **Asleep**: for the length of a step a sleeping body has no inverse mass (it is fixed,
//!   as the ground), so no stage integrates it, and detection skips the pairs of two
//!   sleeping bodies and of a sleeping body and the ground: the pile's resting contacts are
//!   neither detected nor solved. Between steps it is an ordinary body again.
//! - **Waking** (before each step, so that no awake body ever meets a sleeping one as if it
//!   were fixed): a body awake (or the stylus tip) within reach of a sleeping body — the same
//!   bound as detection's prediction distance, margin + 2 h (|v| + |ω| r + h g), on bounding
//!   spheres — wakes that body's island, repeated until nothing more wakes; so does the
//!   stylus clipped to a sleeping body, a queued load (wind), a force element, drag, a
//!   velocity set from outside, or a joint or spring on it. After the step an island in
//!   which a sleeping body touches an awake one wakes as a whole (the end detection's pairs).
//! - **Joints and springs**: an island holding a joint or a spring never sleeps (a joint
//!   between two fixed bodies has no solvable block); a pendulum swings on.
//!
//! Everything is decided in body order from the step's sorted contact points, with island
//! roots the smallest body index: the same inputs give bit-identical runs.

use nalgebra::Vector3;

use super::islands::Islands;
use super::Simulation;
use crate::model::body::{Body, GROUND};

/// A body whose fastest surface point moves slower than this is still (m/s): a tenth of
/// Box2D's 0.05 m/s, which is made for bodies of about a metre, since the desk scenes'
/// bodies are centimetres (5 mm/s is a third of a 15 mm sphere's radius per second). Not
/// lower: the settled `pile` keeps spheres spinning about the vertical at up to 0.22 rad/s
/// (3.3 mm/s at their surface; its bodies have no spin friction), which would otherwise
/// keep their islands awake forever.
pub const SLEEP_SPEED_M_PER_S: f64 = 5.0e-3;
/// An island whose bodies have all been still this long falls asleep (s), as Box2D's
/// `b2_timeToSleep`.
pub const TIME_TO_SLEEP_SECS: f64 = 0.5;

/// The sleep state of every body, and the scratch of the islands (sized once).
#[derive(Clone, Debug, Default)]
pub(crate) struct SleepState {
    /// Per body: asleep, and the root of the island it fell asleep with.
    asleep: Vec<bool>,
    island: Vec<u32>,
    /// Per body: how long it has been still (s).
    still_secs: Vec<f64>,
    /// Per body: its reach over its colliders (m) and whether it has any.
    reach_m: Vec<f64>,
    collides: Vec<bool>,
    /// Per body: something keeps it awake this step (stylus, load, joint, the tip's touch).
    held: Vec<bool>,
    /// The inverse masses and principal inertias taken from the frozen bodies for a step.
    saved: Vec<(f64, Vector3<f64>)>,
    islands: Islands,
    /// The bodies (centre, reach, speed bound) that look for sleeping neighbours to wake,
    /// and the bodies the last wake-up woke.
    probes: Vec<(Vector3<f64>, f64, f64)>,
    woken: Vec<usize>,
    /// Per island root: the shortest still time, and whether it holds an awake body, a
    /// sleeping body, a held body.
    root_still_secs: Vec<f64>,
    root_awake: Vec<bool>,
    root_asleep: Vec<bool>,
    root_held: Vec<bool>,
    sleeping: usize,
    most_asleep: usize,
}

impl Simulation {
    /// Whether sleeping is on: contact with `sleep = true`.
    fn sleep_enabled(&self) -> bool {
        self.model.contact.as_ref().is_some_and(|c| c.sleep)
    }

    /// Bodies asleep after the last step.
    pub fn sleeping_bodies(&self) -> usize {
        self.sleep.sleeping
    }

    /// The most bodies asleep at once after any step so far.
    pub fn most_asleep(&self) -> usize {
        self.sleep.most_asleep
    }

    /// Whether `body` is asleep (see [`crate::simulation`]'s sleep module).
    pub fn is_asleep(&self, body: usize) -> bool {
        self.sleep.asleep.get(body).copied().unwrap_or(false)
    }

    /// The island a sleeping `body` fell asleep with (its smallest body index), or `None`
    /// while it is awake.
    pub fn sleeping_island(&self, body: usize) -> Option<usize> {
        self.is_asleep(body)
            .then(|| self.sleep.island[body] as usize)
    }

    /// Before a step: wakes what must wake, then fixes the sleeping bodies for the step.
    /// Returns whether any body is frozen (then [`Simulation::thaw`] must follow the step).
    pub(super) fn prepare_sleep(&mut self) -> bool {
        if !self.sleep_enabled() {
            return false;
        }
        self.size_sleep_state();
        if self.sleep.sleeping == 0 {
            return false;
        }
        self.wake_held();
        self.wake_near_awake();
        self.freeze()
    }

    /// Sizes the per-body vectors and measures each body's reach (once).
    fn size_sleep_state(&mut self) {
        let n = self.model.bodies.len();
        let s = &mut self.sleep;
        if s.asleep.len() == n {
            return;
        }
        s.asleep = vec![false; n];
        s.island = vec![0; n];
        s.still_secs = vec![0.0; n];
        s.reach_m = vec![0.0; n];
        s.collides = vec![false; n];
        s.held = vec![false; n];
        s.root_still_secs = vec![0.0; n];
        s.root_awake = vec![false; n];
        s.root_asleep = vec![false; n];
        s.root_held = vec![false; n];
        s.saved = Vec::with_capacity(n);
        s.probes = Vec::with_capacity(n + 1);
        s.woken = Vec::with_capacity(n);
        s.islands.reset(n);
        // Detection's copy of the flags, sized now: a step allocates nothing.
        self.solver.contact.set_asleep(&s.asleep);
        self.solver.contact.clear_asleep();
        if let Some(model) = self.model.contact.as_ref() {
            for k in model.colliders.iter().filter(|k| k.body < n) {
                let reach =
                    k.shape.bounding_radius_m() + k.body_from_shape.translation.vector.norm();
                s.reach_m[k.body] = s.reach_m[k.body].max(reach);
                s.collides[k.body] = true;
            }
        }
    }

    /// Marks the bodies something keeps awake, other than a touch: the stylus clipped to it,
    /// a queued load, a force element, drag, a velocity set from outside, a joint or a
    /// spring. Wakes the islands of those asleep.
    fn mark_held(&mut self) {
        let s = &mut self.sleep;
        s.held.fill(false);
        if let Some(st) = &self.stylus {
            s.held[st.body] = true;
        }
        for e in &self.model.force_elements {
            s.held[e.body] = true;
        }
        for j in &self.model.joints {
            s.held[j.body1] = true;
            s.held[j.body2] = true;
        }
        for sp in &self.model.springs {
            s.held[sp.body1] = true;
            s.held[sp.body2] = true;
        }
        let loads = &self.solver.loads;
        for (i, b) in self.model.bodies.iter().enumerate() {
            let loaded = loads.force[i] != Vector3::zeros() || loads.torque[i] != Vector3::zeros();
            let moving = b.linear_velocity_in_world != Vector3::zeros()
                || b.angular_velocity_in_world != Vector3::zeros();
            if loaded || b.drag_n_s_per_m > 0.0 || (s.asleep[i] && moving) {
                s.held[i] = true;
            }
        }
        s.held[GROUND] = false;
    }

    /// Wakes the islands of held sleeping bodies (see [`Simulation::mark_held`]).
    fn wake_held(&mut self) {
        self.mark_held();
        for i in 0..self.sleep.asleep.len() {
            if self.sleep.asleep[i] && self.sleep.held[i] {
                let root = self.sleep.island[i];
                self.sleep.wake_island(root);
            }
        }
        self.sleep.woken.clear();
    }

    /// Wakes every sleeping island within reach of an awake body or of the stylus tip, until
    /// nothing more wakes (a woken body may reach the next island).
    fn wake_near_awake(&mut self) {
        let Some(model) = self.model.contact.as_ref() else {
            return;
        };
        let h = self.params.dt_secs;
        let fall = h * self.model.gravity_in_world.norm();
        let margin = model.margin_m;
        // The stylus tip as a sphere: its collider's radius, its speed.
        let tip = model.tip_body.and_then(|t| {
            let target = self.stylus_target?;
            let radius = model
                .colliders
                .iter()
                .filter(|k| k.body == t)
                .map(|k| k.shape.bounding_radius_m())
                .fold(0.0, f64::max);
            Some((
                target.position_in_world.coords,
                radius,
                target.velocity_in_world.norm(),
            ))
        });
        let bodies = &self.model.bodies;
        let s = &mut self.sleep;
        // First every awake body and the tip probe the sleeping ones, then only those the
        // last round woke.
        s.probes.clear();
        for (a, b) in bodies.iter().enumerate().skip(1) {
            if s.collides[a] && !s.asleep[a] && b.is_dynamic() {
                s.probes.push(probe(b, s.reach_m[a], fall));
            }
        }
        s.probes.extend(tip);
        while !s.probes.is_empty() && s.sleeping > 0 {
            s.woken.clear();
            for k in 0..s.probes.len() {
                let (x, r, speed) = s.probes[k];
                let reach = r + margin + 2.0 * h * speed;
                for (i, b) in bodies.iter().enumerate().skip(1) {
                    if s.asleep[i] && s.collides[i] {
                        let gap = reach + s.reach_m[i];
                        if (b.position_in_world - x).norm_squared() <= gap * gap {
                            let root = s.island[i];
                            s.wake_island(root);
                        }
                    }
                }
            }
            s.probes.clear();
            for &a in &s.woken {
                if s.collides[a] {
                    s.probes.push(probe(&bodies[a], s.reach_m[a], fall));
                }
            }
        }
        s.probes.clear();
        s.woken.clear();
    }

    /// Takes the inverse mass and inertia of every sleeping body for the step, and tells
    /// detection which bodies are fixed. Returns whether any body was frozen.
    fn freeze(&mut self) -> bool {
        let s = &mut self.sleep;
        s.saved.clear();
        for (b, &asleep) in self.model.bodies.iter_mut().zip(&s.asleep) {
            if asleep {
                s.saved.push((b.inv_mass, b.inv_principal_inertia));
                b.inv_mass = 0.0;
                b.inv_principal_inertia = Vector3::zeros();
            }
        }
        self.solver.contact.set_asleep(&s.asleep);
        !s.saved.is_empty()
    }

    /// After a step: gives the frozen bodies their masses back.
    pub(super) fn thaw(&mut self) {
        let s = &mut self.sleep;
        let mut saved = s.saved.iter();
        for (b, &asleep) in self.model.bodies.iter_mut().zip(&s.asleep) {
            if asleep {
                let &(m, i) = saved.next().expect("one saved mass per frozen body");
                b.inv_mass = m;
                b.inv_principal_inertia = i;
            }
        }
        s.saved.clear();
        self.solver.contact.clear_asleep();
    }

    /// After a step that was taken: builds the islands, advances the still timers, wakes the
    /// islands where a sleeping body touches an awake one and puts to sleep those still for
    /// [`TIME_TO_SLEEP_SECS`].
    pub(super) fn update_sleep(&mut self) {
        if !self.sleep_enabled() {
            return;
        }
        self.size_sleep_state();
        self.mark_held();
        self.link_islands();
        self.advance_still_timers();
        self.settle_islands();
    }

    /// Union–find over the step's contact pairs, joints and springs; a body the stylus tip
    /// touches is held.
    fn link_islands(&mut self) {
        let n = self.model.bodies.len();
        let s = &mut self.sleep;
        s.islands.reset(n);
        let c = &self.solver.contact;
        let margin_m = self.model.contact.as_ref().map_or(0.0, |m| m.margin_m);
        for p in c.points.iter().chain(c.end_points_within(margin_m)) {
            let (a, b) = (p.body1, p.body2);
            match (a < n && a != GROUND, b < n && b != GROUND) {
                (true, true) => s.islands.union(a, b),
                // The tip (index n) holds what it touches; the ground links nothing.
                (true, false) if b == n => s.held[a] = true,
                (false, true) if a == n => s.held[b] = true,
                _ => {}
            }
        }
        let joined = self
            .model
            .joints
            .iter()
            .map(|j| (j.body1, j.body2))
            .chain(self.model.springs.iter().map(|sp| (sp.body1, sp.body2)));
        for (a, b) in joined {
            if a != GROUND && b != GROUND {
                s.islands.union(a, b);
            }
        }
    }

    /// A body still this step (fastest surface point under [`SLEEP_SPEED_M_PER_S`]) adds h
    /// to its still time; any other starts again from zero.
    fn advance_still_timers(&mut self) {
        let h = self.params.dt_secs;
        let s = &mut self.sleep;
        for (i, b) in self.model.bodies.iter().enumerate() {
            if s.asleep[i] {
                continue;
            }
            let speed = b.linear_velocity_in_world.norm()
                + b.angular_velocity_in_world.norm() * s.reach_m[i];
            s.still_secs[i] = if speed < SLEEP_SPEED_M_PER_S {
                s.still_secs[i] + h
            } else {
                0.0
            };
        }
    }

    /// Per island: wakes it if it mixes sleeping and awake (or held) bodies, puts it to sleep
    /// if all its bodies have been still long enough and nothing holds it.
    fn settle_islands(&mut self) {
        let n = self.model.bodies.len();
        let s = &mut self.sleep;
        s.root_still_secs.fill(f64::INFINITY);
        s.root_awake.fill(false);
        s.root_asleep.fill(false);
        s.root_held.fill(false);
        for i in 1..n {
            if !self.model.bodies[i].is_dynamic() {
                continue;
            }
            let r = s.islands.find(i);
            if s.asleep[i] {
                s.root_asleep[r] = true;
            } else {
                s.root_awake[r] = true;
                s.root_still_secs[r] = s.root_still_secs[r].min(s.still_secs[i]);
            }
            s.root_held[r] |= s.held[i];
        }
        let mut taken_j = 0.0;
        for i in 1..n {
            if !self.model.bodies[i].is_dynamic() {
                continue;
            }
            let r = s.islands.find(i);
            if s.root_asleep[r] {
                if s.asleep[i] && (s.root_awake[r] || s.root_held[r]) {
                    s.asleep[i] = false;
                    s.still_secs[i] = 0.0;
                    s.sleeping -= 1;
                }
            } else if !s.root_held[r] && s.root_still_secs[r] >= TIME_TO_SLEEP_SECS {
                let b = &mut self.model.bodies[i];
                taken_j += b.kinetic_energy_j();
                b.linear_velocity_in_world = Vector3::zeros();
                b.angular_velocity_in_world = Vector3::zeros();
                s.asleep[i] = true;
                s.island[i] = r as u32;
                s.sleeping += 1;
            }
        }
        s.most_asleep = s.most_asleep.max(s.sleeping);
        if taken_j != 0.0 {
            // The kinetic energy left below the sleep speed leaves the motion as dissipation.
            self.solver.ledger.dissipated_j += taken_j;
            let d = &mut self.solver.diagnostics;
            d.kinetic_j -= taken_j;
            d.dissipated_j = self.solver.ledger.dissipated_j;
        }
    }
}

impl SleepState {
    /// Wakes every body that fell asleep in the island with root `root`.
    fn wake_island(&mut self, root: u32) {
        for i in 0..self.asleep.len() {
            if self.asleep[i] && self.island[i] == root {
                self.asleep[i] = false;
                self.still_secs[i] = 0.0;
                self.sleeping -= 1;
                self.woken.push(i);
            }
        }
    }
}

/// A body as a probe of the sleeping ones: its centre, its reach (m) and the speed bound
/// of detection's prediction, |v| + |ω| r + h g (m/s).
fn probe(b: &Body, reach_m: f64, fall_m_per_s: f64) -> (Vector3<f64>, f64, f64) {
    let speed = b.linear_velocity_in_world.norm()
        + b.angular_velocity_in_world.norm() * reach_m
        + fall_m_per_s;
    (b.position_in_world, reach_m, speed)
}
