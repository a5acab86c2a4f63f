//! The dense solve of one step's contact rows: unilateral normal rows with Coulomb friction
//! (and spin friction, [`super::spin`]), the active set by Jonquet et al.'s algorithms (see
//! [`super`]). The impact impulses are in [`super::impact`].
//!
//! A row is the relative velocity of body 2 with respect to body 1 along a direction, at two
//! lever arms: u = d·(v₂ − v₁) + (r₂ × d)·ω₂ − (r₁ × d)·ω₁. Its impulse λ acts as λd on
//! body 2 and −λd on body 1. Handled rows are equalities; the system J M⁻¹ C λ = target − u₀
//! (C: the impulse columns, which differ from the rows for a sliding contact) is solved by LU
//! with each diagonal raised by 1e-9 of itself (a box on a plane has four normal rows for
//! three degrees of freedom) and two steps of iterative refinement.

use nalgebra::{Matrix3, Vector2, Vector3};

use super::spin::{initial_spin, Spin, SpinFriction};
use crate::linalg::dense_lu::DenseLu;
use crate::model::body::BodyId;

/// Relative regularisation of the diagonal.
const REGULARISATION: f64 = 1.0e-9;
/// Row velocity below its target by more than this is a violation tendency (m/s).
pub const TENDENCY_TOLERANCE: f64 = 1.0e-10;

/// A body's inverse mass and world inverse inertia (zero for fixed bodies).
#[derive(Clone, Copy, Debug)]
pub struct InverseMass {
    pub inv_mass: f64,
    pub inv_inertia: Matrix3<f64>,
}

/// One velocity row between two bodies.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub body1: BodyId,
    pub body2: BodyId,
    pub dir: Vector3<f64>,
    /// r₁ × d and r₂ × d.
    pub ang1: Vector3<f64>,
    pub ang2: Vector3<f64>,
}

impl Row {
    pub fn new(
        body1: BodyId,
        body2: BodyId,
        r1: &Vector3<f64>,
        r2: &Vector3<f64>,
        dir: Vector3<f64>,
    ) -> Self {
        Self {
            body1,
            body2,
            dir,
            ang1: r1.cross(&dir),
            ang2: r2.cross(&dir),
        }
    }

    /// The row velocity at these body velocities.
    pub fn velocity(&self, v: &[Vector3<f64>], w: &[Vector3<f64>]) -> f64 {
        self.dir.dot(&(v[self.body2] - v[self.body1])) + self.ang2.dot(&w[self.body2])
            - self.ang1.dot(&w[self.body1])
    }

    /// J_self M⁻¹ J_otherᵀ.
    pub fn coupling(&self, other: &Row, m: &[InverseMass]) -> f64 {
        let term = |b: BodyId, a: &Vector3<f64>, c: &Vector3<f64>| {
            m[b].inv_mass * self.dir.dot(&other.dir) + a.dot(&(m[b].inv_inertia * c))
        };
        let mut s = 0.0;
        if self.body2 == other.body2 {
            s += term(self.body2, &self.ang2, &other.ang2);
        }
        if self.body1 == other.body1 {
            s += term(self.body1, &self.ang1, &other.ang1);
        }
        if self.body2 == other.body1 {
            s -= term(self.body2, &self.ang2, &other.ang1);
        }
        if self.body1 == other.body2 {
            s -= term(self.body1, &self.ang1, &other.ang2);
        }
        s
    }

    /// Adds the impulse λ along this row to the velocities.
    pub fn apply(
        &self,
        lambda: f64,
        m: &[InverseMass],
        v: &mut [Vector3<f64>],
        w: &mut [Vector3<f64>],
    ) {
        v[self.body2] += self.dir * (m[self.body2].inv_mass * lambda);
        w[self.body2] += m[self.body2].inv_inertia * self.ang2 * lambda;
        v[self.body1] -= self.dir * (m[self.body1].inv_mass * lambda);
        w[self.body1] -= m[self.body1].inv_inertia * self.ang1 * lambda;
    }
}

/// The friction state of a handled contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Friction {
    /// Frictionless (μ = 0).
    None,
    /// No slip: two tangent equality rows, |λₜ| ≤ μ λₙ.
    Stick,
    /// Slip along this unit direction of the tangent plane (t₁, t₂ coordinates): friction
    /// impulse −μ λₙ times it.
    Slide(Vector2<f64>),
}

/// One contact's rows and data for the solve.
#[derive(Clone, Copy, Debug)]
pub struct ContactRows {
    /// Normal, first and second tangent rows.
    pub rows: [Row; 3],
    /// Row velocities before the contact impulses (m/s).
    pub u0: [f64; 3],
    /// Normal target: the row velocity that closes the gap at the end of the step.
    pub target: f64,
    /// Friction coefficient.
    pub mu: f64,
    /// Tangential slip at the start of the step (t₁, t₂).
    pub slip_start: Vector2<f64>,
    /// Spin friction about the normal ([`Spin::NONE`] without it).
    pub spin: Spin,
}

/// The solve's result per contact.
#[derive(Clone, Copy, Debug, Default)]
pub struct ContactImpulse {
    pub handled: bool,
    /// Normal impulse (N·s) and friction impulse (t₁, t₂).
    pub normal: f64,
    pub tangent: Vector2<f64>,
    /// Row velocities after the impulses.
    pub u: [f64; 3],
    /// Spin friction impulse (N·m·s) and the spin row's velocity after the impulses (rad/s;
    /// both 0 without spin friction).
    pub spin: f64,
    pub u_spin: f64,
}

/// Counts of one solve (for diagnostics and tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolveStats {
    /// Linear solves.
    pub solves: usize,
    /// Rows released by the safeguard (a negative impulse after Alg. 3's insertions).
    pub released: usize,
}

/// A bilateral (joint) row in a contact solve: an equality whose row velocity changes by
/// `change` (0 keeps the joint's row velocity; a position projection asks for −ψ). A soft row
/// (a spring's linearised law) has a `compliance` ε > 0: its row velocity changes by
/// `change` − ε λ under its impulse λ. Only the solve through the joints
/// ([`super::through_joints`]) takes soft rows; every other solve has compliance 0.
#[derive(Clone, Copy, Debug)]
pub struct Bilateral {
    pub row: Row,
    pub change: f64,
    /// ε (m/s per N·s): 0 for a joint.
    pub compliance: f64,
}

/// The bodies' velocity change by a solve's impulses (contacts and bilateral rows).
#[derive(Clone, Debug, Default)]
pub struct VelocityChange {
    pub v: Vec<Vector3<f64>>,
    pub w: Vec<Vector3<f64>>,
}

/// Which insertions the solve makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insertion {
    /// Alg. 3: insert by violation tendency until nothing is inserted; release negative
    /// impulses.
    Right,
    /// Alg. 1 and 2 within a step: solve once with the given handled set (friction states
    /// still settle).
    Fixed,
}

fn initial_friction(c: &ContactRows) -> Friction {
    if c.mu <= 0.0 {
        Friction::None
    } else if c.slip_start.norm() > 1.0e-9 {
        Friction::Slide(c.slip_start.normalize())
    } else {
        Friction::Stick
    }
}

/// The solve's buffers, kept from solve to solve (no allocation once grown).
#[derive(Clone, Debug, Default)]
pub struct LcpScratch {
    friction: Vec<Friction>,
    spin: Vec<SpinFriction>,
    transitions: Vec<usize>,
    released: Vec<usize>,
    system: HandledSystem,
}

impl LcpScratch {
    /// The friction states the contacts start from, and no transitions or releases yet.
    fn reset(&mut self, contacts: &[ContactRows]) {
        let n = contacts.len();
        self.friction.clear();
        self.friction.extend(contacts.iter().map(initial_friction));
        self.spin.clear();
        self.spin.extend(contacts.iter().map(initial_spin));
        self.transitions.clear();
        self.transitions.resize(n, 0);
        self.released.clear();
        self.released.resize(n, 0);
    }
}

/// The buffers of one solve of the handled rows: its unknowns, J M⁻¹ C (column-major) and
/// its factor, the right-hand side, the impulses and the refinement's residual.
#[derive(Clone, Debug, Default)]
struct HandledSystem {
    unknowns: Vec<Unknown>,
    a: Vec<f64>,
    lu: DenseLu,
    rhs: Vec<f64>,
    lambda: Vec<f64>,
    residual: Vec<f64>,
}

/// Solves the contact rows; `handled` is the starting handled set (emptied for
/// [`Insertion::Right`]) and holds the final one.
#[allow(clippy::too_many_arguments)]
pub fn solve(
    contacts: &[ContactRows],
    bilateral: &[Bilateral],
    m: &[InverseMass],
    handled: &mut [bool],
    insertion: Insertion,
    scratch: &mut LcpScratch,
    out: &mut Vec<ContactImpulse>,
    delta: &mut VelocityChange,
) -> SolveStats {
    let n = contacts.len();
    let mut stats = SolveStats::default();
    scratch.reset(contacts);
    let LcpScratch {
        friction,
        spin,
        transitions,
        released,
        system,
    } = scratch;
    if insertion == Insertion::Right {
        handled.fill(false);
    }
    out.clear();
    out.extend(contacts.iter().map(|c| ContactImpulse {
        u: c.u0,
        u_spin: c.spin.u0,
        ..Default::default()
    }));
    let cap = 8 * n + 20;
    for _ in 0..cap {
        let states = (&friction[..], &spin[..]);
        system.solve_handled(contacts, bilateral, m, handled, states, out, delta);
        stats.solves += 1;
        if settle_friction(contacts, handled, out, (friction, spin), transitions) {
            continue;
        }
        if insertion == Insertion::Fixed {
            break;
        }
        if insert_violated(contacts, handled, released, out) {
            continue;
        }
        // Safeguard (not in Alg. 3): release the most negative impulse.
        match most_negative(handled, out) {
            Some(c) => {
                handled[c] = false;
                released[c] += 1;
                stats.released += 1;
            }
            None => break,
        }
    }
    for c in 0..n {
        out[c].handled = handled[c];
    }
    stats
}

/// Moves each handled contact whose friction or spin friction left its state (a sticking
/// impulse outside the cone or bound, a slip or spin that turned back) to the other state,
/// at most three times per contact; returns whether any moved.
fn settle_friction(
    contacts: &[ContactRows],
    handled: &[bool],
    out: &[ContactImpulse],
    (friction, spin): (&mut [Friction], &mut [SpinFriction]),
    transitions: &mut [usize],
) -> bool {
    let mut changed = false;
    for c in 0..contacts.len() {
        if !handled[c] || transitions[c] >= 3 {
            continue;
        }
        let k = &contacts[c];
        let r = &out[c];
        match spin[c] {
            SpinFriction::Stick => {
                if beyond_bound(r.spin.abs(), k.spin.mu_m, r.normal) {
                    spin[c] = SpinFriction::Slide(-r.spin.signum());
                    transitions[c] += 1;
                    changed = true;
                }
            }
            SpinFriction::Slide(sign) => {
                if r.u_spin * sign < 0.0 {
                    spin[c] = SpinFriction::Stick;
                    transitions[c] += 1;
                    changed = true;
                }
            }
            SpinFriction::None => {}
        }
        match friction[c] {
            Friction::Stick => {
                let t = r.tangent.norm();
                if beyond_bound(t, k.mu, r.normal) {
                    friction[c] = Friction::Slide(-r.tangent / t);
                    transitions[c] += 1;
                    changed = true;
                }
            }
            Friction::Slide(d) => {
                if Vector2::new(r.u[1], r.u[2]).dot(&d) < 0.0 {
                    friction[c] = Friction::Stick;
                    transitions[c] += 1;
                    changed = true;
                }
            }
            Friction::None => {}
        }
    }
    changed
}

/// Whether a sticking friction impulse of this size lies outside its bound `coefficient`
/// times the normal impulse (with a margin for rounding).
fn beyond_bound(size: f64, coefficient: f64, normal: f64) -> bool {
    size > coefficient * normal.max(0.0) * (1.0 + 1.0e-12) + 1.0e-15
}

/// Alg. 3's insertion: every unhandled contact (released fewer than twice) whose normal row
/// velocity falls below its target joins the handled set; returns whether any did.
fn insert_violated(
    contacts: &[ContactRows],
    handled: &mut [bool],
    released: &[usize],
    out: &[ContactImpulse],
) -> bool {
    let mut inserted = false;
    for c in 0..contacts.len() {
        if !handled[c] && released[c] < 2 && out[c].u[0] < contacts[c].target - TENDENCY_TOLERANCE {
            handled[c] = true;
            inserted = true;
        }
    }
    inserted
}

/// The handled contact with the most negative normal impulse, if one is negative.
fn most_negative(handled: &[bool], out: &[ContactImpulse]) -> Option<usize> {
    (0..out.len())
        .filter(|&c| handled[c] && out[c].normal < -1.0e-12)
        .min_by(|&a, &b| out[a].normal.total_cmp(&out[b].normal))
}

/// One unknown impulse: the equation row it closes, its target, and its column (the rows it
/// acts along, with coefficients).
#[derive(Clone, Copy, Debug)]
struct Unknown {
    eq: Row,
    rhs: f64,
    col: [(Row, f64); 4],
    /// Contact and row (0 normal, 1–2 tangents, 3 spin), or `None` for a bilateral (joint)
    /// row.
    owner: Option<(usize, usize)>,
}

impl HandledSystem {
    /// Solves the handled rows as equalities (with the bilateral ones), into the impulses
    /// and row velocities of `out` and the velocity change `delta`.
    #[allow(clippy::too_many_arguments)]
    fn solve_handled(
        &mut self,
        contacts: &[ContactRows],
        bilateral: &[Bilateral],
        m: &[InverseMass],
        handled: &[bool],
        states: (&[Friction], &[SpinFriction]),
        out: &mut [ContactImpulse],
        delta: &mut VelocityChange,
    ) {
        delta.v.clear();
        delta.v.resize(m.len(), Vector3::zeros());
        delta.w.clear();
        delta.w.resize(m.len(), Vector3::zeros());
        let Some(any_row) = bilateral
            .first()
            .map(|b| &b.row)
            .or(contacts.first().map(|c| &c.rows[0]))
            .copied()
        else {
            return;
        };
        self.collect_unknowns(contacts, bilateral, handled, states, (any_row, 0.0));
        self.solve_impulses(m);
        self.write_impulses(contacts, m, states, out, delta);
    }

    /// The unknowns: each handled contact's normal impulse (with its sliding friction and
    /// spin friction in its column) and, when it sticks, its two tangent impulses, and when
    /// it does not spin, its spin impulse; then the bilateral rows. `none` fills the unused
    /// entries of a column (coefficient 0).
    fn collect_unknowns(
        &mut self,
        contacts: &[ContactRows],
        bilateral: &[Bilateral],
        handled: &[bool],
        (friction, spin): (&[Friction], &[SpinFriction]),
        none: (Row, f64),
    ) {
        let unknowns = &mut self.unknowns;
        unknowns.clear();
        for (c, k) in contacts.iter().enumerate() {
            if !handled[c] {
                continue;
            }
            let spin_col = match spin[c] {
                SpinFriction::Slide(sign) => (k.spin_row(), -k.spin.mu_m * sign),
                _ => none,
            };
            let col = match friction[c] {
                Friction::Slide(d) => [
                    (k.rows[0], 1.0),
                    (k.rows[1], -k.mu * d.x),
                    (k.rows[2], -k.mu * d.y),
                    spin_col,
                ],
                _ => [(k.rows[0], 1.0), spin_col, none, none],
            };
            unknowns.push(Unknown {
                eq: k.rows[0],
                rhs: k.target - k.u0[0],
                col,
                owner: Some((c, 0)),
            });
            if friction[c] == Friction::Stick {
                for r in 1..3 {
                    unknowns.push(Unknown {
                        eq: k.rows[r],
                        rhs: -k.u0[r],
                        col: [(k.rows[r], 1.0), none, none, none],
                        owner: Some((c, r)),
                    });
                }
            }
            if spin[c] == SpinFriction::Stick {
                unknowns.push(Unknown {
                    eq: k.spin_row(),
                    rhs: -k.spin.u0,
                    col: [(k.spin_row(), 1.0), none, none, none],
                    owner: Some((c, 3)),
                });
            }
        }
        // With contacts, the joints keep their row velocities (contact impulses move a chain as
        // a whole); a bilateral row that asks for a change is solved in any case.
        if !unknowns.is_empty() || bilateral.iter().any(|b| b.change != 0.0) {
            for b in bilateral {
                unknowns.push(Unknown {
                    eq: b.row,
                    rhs: b.change,
                    col: [(b.row, 1.0), none, none, none],
                    owner: None,
                });
            }
        }
    }

    /// The unknowns' impulses into `lambda`: J M⁻¹ C assembled, factored regularised, solved
    /// with two steps of iterative refinement (zeros if the factor fails).
    fn solve_impulses(&mut self, m: &[InverseMass]) {
        let HandledSystem {
            unknowns,
            a,
            lu,
            rhs,
            lambda,
            residual,
        } = self;
        let dim = unknowns.len();
        lambda.clear();
        lambda.resize(dim, 0.0);
        if dim == 0 {
            return;
        }
        a.clear();
        a.extend((0..dim * dim).map(|k| {
            let (i, j) = (k % dim, k / dim);
            unknowns[j]
                .col
                .iter()
                .filter(|(_, coef)| *coef != 0.0)
                .map(|(row, coef)| coef * unknowns[i].eq.coupling(row, m))
                .sum::<f64>()
        }));
        rhs.clear();
        rhs.extend(unknowns.iter().map(|u| u.rhs));
        // The regularised matrix is factored; the refinement's residuals use the plain one.
        lu.factor_regularised(dim, a, REGULARISATION);
        residual.clear();
        residual.extend_from_slice(rhs);
        if !lu.solve_in_place(residual) {
            return;
        }
        lambda.copy_from_slice(residual);
        for _ in 0..2 {
            // rhs − A λ, the product summed column by column (as nalgebra's gemv).
            for (i, r) in residual.iter_mut().enumerate() {
                let mut product = a[i] * lambda[0];
                for j in 1..dim {
                    product += a[j * dim + i] * lambda[j];
                }
                *r = rhs[i] - product;
            }
            if lu.solve_in_place(residual) {
                for (l, dx) in lambda.iter_mut().zip(residual.iter()) {
                    *l += dx;
                }
            }
        }
    }

    /// Impulses per contact and the resulting row velocities, and the velocity change.
    fn write_impulses(
        &self,
        contacts: &[ContactRows],
        m: &[InverseMass],
        (friction, spin): (&[Friction], &[SpinFriction]),
        out: &mut [ContactImpulse],
        delta: &mut VelocityChange,
    ) {
        for (o, k) in out.iter_mut().zip(contacts) {
            o.normal = 0.0;
            o.tangent = Vector2::zeros();
            o.u = k.u0;
            o.spin = 0.0;
            o.u_spin = k.spin.u0;
        }
        let (dv, dw) = (&mut delta.v, &mut delta.w);
        for (unknown, &l) in self.unknowns.iter().zip(self.lambda.iter()) {
            for (row, coef) in &unknown.col {
                if *coef != 0.0 {
                    row.apply(coef * l, m, dv, dw);
                }
            }
            match unknown.owner {
                Some((c, 0)) => {
                    out[c].normal = l;
                    if let Friction::Slide(d) = friction[c] {
                        out[c].tangent = -d * (contacts[c].mu * l);
                    }
                    if let SpinFriction::Slide(sign) = spin[c] {
                        out[c].spin = -sign * contacts[c].spin.mu_m * l;
                    }
                }
                Some((c, 3)) => out[c].spin = l,
                Some((c, r)) => out[c].tangent[r - 1] = l,
                None => {}
            }
        }
        for (o, k) in out.iter_mut().zip(contacts) {
            for r in 0..3 {
                o.u[r] += k.rows[r].velocity(dv, dw);
            }
            if k.spin.mu_m > 0.0 {
                o.u_spin += k.spin_row().velocity(dv, dw);
            }
        }
    }
}
