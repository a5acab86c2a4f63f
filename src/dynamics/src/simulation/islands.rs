//! Islands: the bodies that touch, directly or through others, by union–find (as Box2D's
//! `island.c` links bodies through touching contacts and joints). Static bodies (the ground,
//! the stylus tip) link nothing: two boxes resting on the desk side by side are two islands.
//!
//! The root of a set is always its smallest body index (a union hangs the larger root under
//! the smaller), so the islands, and every decision taken per island, do not depend on the
//! order in which the links were added: determinism does not rest on the contacts' order.

/// Disjoint sets of bodies, kept from step to step (no allocation once sized).
#[derive(Clone, Debug, Default)]
pub(crate) struct Islands {
    parent: Vec<u32>,
}

impl Islands {
    /// Every body of `n` alone in its island.
    pub(crate) fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend((0..n).map(|i| i as u32));
    }

    /// The island's root (its smallest body index), halving the path on the way.
    pub(crate) fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] as usize != i {
            let grand = self.parent[self.parent[i] as usize];
            self.parent[i] = grand;
            i = grand as usize;
        }
        i
    }

    /// Joins the islands of bodies `a` and `b`.
    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (lo, hi) = (ra.min(rb), ra.max(rb));
            self.parent[hi] = lo as u32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Islands;

    #[test]
    fn the_root_is_the_smallest_index_whatever_the_order() {
        let mut a = Islands::default();
        let mut b = Islands::default();
        a.reset(6);
        b.reset(6);
        for (x, y) in [(5, 3), (3, 4), (1, 2)] {
            a.union(x, y);
        }
        for (x, y) in [(1, 2), (4, 3), (3, 5)] {
            b.union(x, y);
        }
        for i in 0..6 {
            assert_eq!(a.find(i), b.find(i));
        }
        assert_eq!(a.find(5), 3);
        assert_eq!(a.find(2), 1);
        assert_eq!(a.find(0), 0);
    }
}
