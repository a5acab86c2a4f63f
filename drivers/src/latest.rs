//! Bounded channels with latest-value semantics for device streams.
//!
//! Frames, poses and stylus samples only matter while they are fresh: a producer must never
//! block on a slow consumer, and a consumer wants the newest value. [`LatestSender::send`]
//! therefore drops the oldest queued value when the channel is full. Dropping every
//! [`LatestSender`] disconnects the receiver, which is the shutdown signal; dropping every
//! [`LatestReceiver`] makes [`LatestSender::send`] report [`SendOutcome::Disconnected`].

use crossbeam_channel::{Receiver, Sender, TrySendError};
use std::sync::{Arc, Weak};

/// The sending half of a latest-value channel. Cloning it gives another producer.
#[derive(Debug)]
pub struct LatestSender<T> {
    tx: Sender<T>,
    // The sender keeps a receiver so that it can evict the oldest value when full; that
    // receiver would hide the consumer's hang-up, so liveness is tracked separately.
    evict: Receiver<T>,
    consumer: Weak<()>,
}

/// The receiving half of a latest-value channel; derefs to a crossbeam [`Receiver`], so it
/// works with `recv`, `try_iter` and `select!`.
#[derive(Debug)]
pub struct LatestReceiver<T> {
    rx: Receiver<T>,
    _alive: Arc<()>,
}

impl<T> Clone for LatestReceiver<T> {
    fn clone(&self) -> Self {
        Self {
            rx: self.rx.clone(),
            _alive: self._alive.clone(),
        }
    }
}

impl<T> std::ops::Deref for LatestReceiver<T> {
    type Target = Receiver<T>;
    fn deref(&self) -> &Receiver<T> {
        &self.rx
    }
}

impl<T> Clone for LatestSender<T> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            evict: self.evict.clone(),
            consumer: self.consumer.clone(),
        }
    }
}

/// What became of a value handed to [`LatestSender::send`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// Queued without dropping anything.
    Queued,
    /// Queued after dropping this many older values.
    ReplacedOldest(usize),
    /// Every receiver is gone: the consumer has shut down.
    Disconnected,
}

/// Creates a latest-value channel that holds at most `capacity` values (at least 1).
pub fn latest_channel<T>(capacity: usize) -> (LatestSender<T>, LatestReceiver<T>) {
    let (tx, rx) = crossbeam_channel::bounded(capacity.max(1));
    let alive = Arc::new(());
    (
        LatestSender {
            tx,
            evict: rx.clone(),
            consumer: Arc::downgrade(&alive),
        },
        LatestReceiver { rx, _alive: alive },
    )
}

impl<T> LatestSender<T> {
    /// Sends `value` without blocking, dropping the oldest queued values if the channel is full.
    pub fn send(&self, value: T) -> SendOutcome {
        if self.is_disconnected() {
            return SendOutcome::Disconnected;
        }
        let mut value = value;
        let mut dropped = 0;
        loop {
            match self.tx.try_send(value) {
                Ok(()) if dropped == 0 => return SendOutcome::Queued,
                Ok(()) => return SendOutcome::ReplacedOldest(dropped),
                Err(TrySendError::Disconnected(_)) => return SendOutcome::Disconnected,
                Err(TrySendError::Full(v)) => {
                    value = v;
                    // Another thread may have emptied the slot meanwhile; either way retry.
                    if self.evict.try_recv().is_ok() {
                        dropped += 1;
                    }
                }
            }
        }
    }

    /// True when every [`LatestReceiver`] has been dropped.
    pub fn is_disconnected(&self) -> bool {
        self.consumer.strong_count() == 0
    }
}

/// Takes the newest value waiting in `rx`, discarding older ones; `None` if nothing waits.
pub fn drain_latest<T>(rx: &Receiver<T>) -> Option<T> {
    rx.try_iter().last()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_channel_drops_oldest_and_never_blocks() {
        let (tx, rx) = latest_channel(2);
        assert_eq!(tx.send(1), SendOutcome::Queued);
        assert_eq!(tx.send(2), SendOutcome::Queued);
        assert_eq!(tx.send(3), SendOutcome::ReplacedOldest(1));
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), vec![2, 3]);
    }

    #[test]
    fn dropped_receiver_reports_disconnected() {
        let (tx, rx) = latest_channel::<u8>(1);
        assert!(!tx.is_disconnected());
        drop(rx);
        assert!(tx.is_disconnected());
        assert_eq!(tx.send(1), SendOutcome::Disconnected);
    }

    #[test]
    fn dropped_senders_disconnect_the_receiver() {
        let (tx, rx) = latest_channel::<u8>(1);
        tx.send(7);
        drop(tx);
        assert_eq!(rx.recv(), Ok(7));
        assert!(rx.recv().is_err());
    }

    #[test]
    fn drain_latest_returns_newest() {
        let (tx, rx) = latest_channel(4);
        for i in 0..3 {
            tx.send(i);
        }
        assert_eq!(drain_latest(&rx), Some(2));
        assert_eq!(drain_latest(&rx), None);
    }
}
