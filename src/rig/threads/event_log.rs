//! A bounded log of a session's events (clips, releases, reconnects, slowdowns): a session of
//! any length keeps its first and its latest events and counts those in between, so that an
//! unbounded `run` does not grow with every click of the button.

use std::collections::VecDeque;

/// Events kept from the start of the session, and as many again of the latest ones.
pub const EVENTS_KEPT_EACH_END: usize = 200;

/// The first [`EVENTS_KEPT_EACH_END`] events, the latest as many, and how many in between
/// were not kept.
#[derive(Debug, Clone, PartialEq)]
pub struct EventLog<T> {
    first: Vec<T>,
    latest: VecDeque<T>,
    dropped: u64,
    keep_each_end: usize,
}

impl<T> Default for EventLog<T> {
    fn default() -> Self {
        Self::with_capacity_each_end(EVENTS_KEPT_EACH_END)
    }
}

impl<T> EventLog<T> {
    /// A log keeping `keep_each_end` events at each end (at least one).
    pub fn with_capacity_each_end(keep_each_end: usize) -> Self {
        let keep_each_end = keep_each_end.max(1);
        Self {
            first: Vec::with_capacity(keep_each_end),
            latest: VecDeque::with_capacity(keep_each_end),
            dropped: 0,
            keep_each_end,
        }
    }

    /// Adds an event; past the first ones it replaces the oldest of the latest.
    pub fn push(&mut self, event: T) {
        if self.first.len() < self.keep_each_end {
            self.first.push(event);
            return;
        }
        if self.latest.len() == self.keep_each_end {
            self.latest.pop_front();
            self.dropped += 1;
        }
        self.latest.push_back(event);
    }

    /// The kept events in order: the first ones, then the latest ones.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.first.iter().chain(self.latest.iter())
    }

    /// The first events kept, in order.
    pub fn first(&self) -> &[T] {
        &self.first
    }

    /// The latest events kept, in order (none until the first ones are full).
    pub fn latest(&self) -> impl Iterator<Item = &T> {
        self.latest.iter()
    }

    /// Events seen between the first and the latest ones that were not kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Events kept.
    pub fn len(&self) -> usize {
        self.first.len() + self.latest.len()
    }

    /// Whether no event was seen.
    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

impl<'a, T> IntoIterator for &'a EventLog<T> {
    type Item = &'a T;
    type IntoIter =
        std::iter::Chain<std::slice::Iter<'a, T>, std::collections::vec_deque::Iter<'a, T>>;

    fn into_iter(self) -> Self::IntoIter {
        self.first.iter().chain(self.latest.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_both_ends_and_counts_the_middle() {
        let mut log = EventLog::with_capacity_each_end(3);
        for i in 0..10 {
            log.push(i);
        }
        assert_eq!(log.iter().copied().collect::<Vec<_>>(), [0, 1, 2, 7, 8, 9]);
        assert_eq!(log.first(), [0, 1, 2]);
        assert_eq!(log.latest().copied().collect::<Vec<_>>(), [7, 8, 9]);
        assert_eq!(log.dropped(), 4);
        assert_eq!(log.len(), 6);
    }

    #[test]
    fn a_short_session_keeps_everything() {
        let mut log = EventLog::default();
        for i in 0..(2 * EVENTS_KEPT_EACH_END) {
            log.push(i);
        }
        assert_eq!(log.dropped(), 0);
        assert!(log.iter().copied().eq(0..2 * EVENTS_KEPT_EACH_END));
    }
}
