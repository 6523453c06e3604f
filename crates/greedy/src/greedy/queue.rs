//! The allocation queue: a binary max-heap of (priority, interval) with lazy deletion.
//!
//! Pushing an interval that is still queued replaces its priority (what the
//! `priority-queue` crate it replaces did); the old heap entry stays behind and is
//! skipped when popped, because it no longer matches the interval's current key. Keys
//! are unique (the interval id breaks ties), so the pop order is fully determined.
//! Against the hashed `priority-queue` this saves a hash-map update per push and pop,
//! which was a fixed cost on every interval of every function.

use super::interval::IntervalId;
use cranelift_entity::{EntityRef, SecondaryMap};
use std::collections::BinaryHeap;

/// Heap order: larger priority first, then the lower interval id. Both live in one
/// integer (priority above, the id's complement below), so a heap comparison is one
/// wide compare instead of a lexicographic pair; the order is the pair's.
type QueueKey = u128;

fn key(prio: u64, id: IntervalId) -> QueueKey {
    (u128::from(prio) << 32) | u128::from(u32::MAX - id.as_u32())
}

#[derive(Default)]
pub(crate) struct IntervalQueue {
    heap: BinaryHeap<QueueKey>,
    /// The priority each queued interval was last pushed with; `None` when not queued.
    current: SecondaryMap<IntervalId, Option<u64>>,
}

impl IntervalQueue {
    pub fn clear(&mut self) {
        self.heap.clear();
        self.current.clear();
    }

    /// Queues `id` at `prio`, replacing its priority if it is already queued.
    pub fn push(&mut self, id: IntervalId, prio: u64) {
        // Ids arrive mostly in increasing order after `clear`, so growing the map only to
        // the id pushed would resize it on nearly every push; doubling keeps that to a
        // few per function. Unpushed ids read `None` either way.
        let len = self.current.as_values_slice().len();
        if id.index() >= len {
            self.current.resize((id.index() + 1).max(2 * len));
        }
        self.current[id] = Some(prio);
        self.heap.push(key(prio, id));
    }

    /// The queued interval with the largest priority (lowest id among equals), and that
    /// priority.
    pub fn pop(&mut self) -> Option<(IntervalId, u64)> {
        while let Some(k) = self.heap.pop() {
            let prio = (k >> 32) as u64;
            let id = IntervalId::from_u32(u32::MAX - k as u32);
            if self.current[id] == Some(prio) {
                self.current[id] = None;
                return Some((id, prio));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    /// Re-pushing a queued interval moves it; a stale entry is never returned.
    #[test]
    fn repush_replaces_priority() {
        let mut q = IntervalQueue::default();
        let (a, b, c) = (IntervalId::new(0), IntervalId::new(1), IntervalId::new(2));
        q.push(a, 5);
        q.push(b, 7);
        q.push(c, 5);
        q.push(b, 1);
        q.push(a, 5);
        assert_eq!(q.pop(), Some((a, 5)));
        assert_eq!(q.pop(), Some((c, 5)));
        assert_eq!(q.pop(), Some((b, 1)));
        assert_eq!(q.pop(), None);
    }
}
