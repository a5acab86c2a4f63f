//! Focused sweeps of the sparse contact solve ([`super::sparse_pgs`]). After the first full
//! sweeps most of a pile's contacts meet the law far below the largest residual, which a few
//! hold (the four points of a box face rocking, a friction row at the edge of its disc) and
//! settle slowly. Sweeping every contact until those few settle makes a solve's cost grow
//! faster than the pile: the more contacts, the likelier that some are slow (on the generated
//! piles at `tolerance_m = 1e-5`: 60–70 sweeps a solve at 288 bodies, 80–85 at 1000). So the later sweeps relax only the contacts whose residual is over a fraction
//! of the largest and their neighbours (the contacts on the same moving bodies), and a check
//! recomputes the residuals of the contacts on a body whose velocity changed since the last
//! one, which are the only ones that can have moved.

/// Per moving body, the contacts on it, and which bodies changed since the last check.
#[derive(Clone, Debug, Default)]
pub(super) struct SweepFocus {
    /// The contacts (positions in sweep order) on body b: `contacts[start[b]..start[b + 1]]`.
    start: Vec<usize>,
    contacts: Vec<usize>,
    /// Per body, whether a relax changed its velocity since the last check; the changed
    /// bodies in the order they changed.
    changed: Vec<bool>,
    changed_list: Vec<usize>,
    /// Where the next contact of each body goes while `build` fills `contacts`.
    next: Vec<usize>,
    /// The contacts the focused sweeps relax (positions in sweep order, ascending), and per
    /// contact whether it is one.
    pub(super) active: Vec<usize>,
    in_active: Vec<bool>,
}

impl SweepFocus {
    /// The contacts on each of `bodies` bodies, from each contact's two bodies (`None` for
    /// a body that no impulse moves: the ground, a sleeping body, the stylus tip).
    pub(super) fn build(
        &mut self,
        bodies: usize,
        pairs: impl Iterator<Item = [Option<usize>; 2]> + Clone,
    ) {
        self.start.clear();
        self.start.resize(bodies + 1, 0);
        for b in pairs.clone().flatten().flatten() {
            self.start[b + 1] += 1;
        }
        for b in 0..bodies {
            self.start[b + 1] += self.start[b];
        }
        self.contacts.clear();
        self.contacts.resize(self.start[bodies], 0);
        self.next.clear();
        self.next.extend_from_slice(&self.start);
        for (p, pair) in pairs.enumerate() {
            for b in pair.into_iter().flatten() {
                self.contacts[self.next[b]] = p;
                self.next[b] += 1;
            }
        }
        self.changed.clear();
        self.changed.resize(bodies, false);
        self.changed_list.clear();
        self.active.clear();
    }

    /// Body `b`'s velocity changed.
    #[inline(always)]
    pub(super) fn mark(&mut self, b: usize) {
        if !self.changed[b] {
            self.changed[b] = true;
            self.changed_list.push(b);
        }
    }

    /// Calls `visit` with each contact on a body that changed since the last call (a contact
    /// on two changed bodies twice), and forgets the changes.
    pub(super) fn take_changed(&mut self, mut visit: impl FnMut(usize)) {
        for &b in &self.changed_list {
            for &p in &self.contacts[self.start[b]..self.start[b + 1]] {
                visit(p);
            }
            self.changed[b] = false;
        }
        self.changed_list.clear();
    }

    /// Forgets the changes (a full check recomputed every residual).
    pub(super) fn forget_changed(&mut self) {
        for &b in &self.changed_list {
            self.changed[b] = false;
        }
        self.changed_list.clear();
    }

    /// The contacts whose residual (`residual[p]`) is over `threshold`, and every contact
    /// that shares a moving body with one of them, become the active ones (in sweep order).
    /// Without the neighbours a stack of four spheres stalled at 1e-6 m/s: the rows relaxed
    /// alone pushed their neighbours over the threshold, and back.
    pub(super) fn select(
        &mut self,
        residual: &[f64],
        threshold: f64,
        bodies_of: impl Fn(usize) -> [Option<usize>; 2],
    ) {
        self.in_active.clear();
        self.in_active.resize(residual.len(), false);
        for (p, r) in residual.iter().enumerate() {
            if *r > threshold {
                for b in bodies_of(p).into_iter().flatten() {
                    for &q in &self.contacts[self.start[b]..self.start[b + 1]] {
                        self.in_active[q] = true;
                    }
                }
            }
        }
        self.active.clear();
        self.active.extend(
            (self.in_active.iter().enumerate())
                .filter(|(_, a)| **a)
                .map(|(p, _)| p),
        );
    }
}
