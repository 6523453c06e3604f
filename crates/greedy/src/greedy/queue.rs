//! The allocation queue: a binary max-heap of (priority, interval) with lazy deletion.
//!
//! Pushing an interval that is still queued replaces its priority (what the
//! `priority-queue` crate it replaces did); the old heap entry stays behind and is
//! skipped when popped, because it no longer matches the interval's current key. Keys
//! are unique (the interval id breaks ties), so the pop order is fully determined.
//! Against the hashed `priority-queue` this saves a hash-map update per push and pop,
//! which was a fixed cost on every interval of every function.
//!
//! The queue also keeps, per interval, the parts of its priority that depend only on
//! its segments and uses (see `IntervalQueue::cached_shape`), so that requeueing an
//! interval does not walk them again.

use super::interval::IntervalId;
use cranelift_entity::EntityRef;
use std::collections::BinaryHeap;

/// Heap order: larger priority first, then the lower interval id. Both live in one
/// integer (priority above, the id's complement below), so a heap comparison is one
/// wide compare instead of a lexicographic pair; the order is the pair's.
type QueueKey = u128;

fn key(prio: u64, id: IntervalId) -> QueueKey {
    (u128::from(prio) << 32) | u128::from(u32::MAX - id.as_u32())
}

/// The low bits of a priority that a packed key keeps below its two top bits.
const PACKED_LOW: u64 = (1 << 40) - 1;
/// Ids a packed key holds.
const PACKED_IDS: u32 = 1 << 22;

/// `key` in 64 bits, the order unchanged, for a priority whose bits 40 to 61 are clear
/// (every one `DefaultPriority` gives: two flag bits above a size below 2^40) and an id
/// below `PACKED_IDS`; `None` otherwise. Sorting half as wide keys costs less.
fn packed(prio: u64, id: IntervalId) -> Option<u64> {
    let id = id.as_u32();
    (prio & !(PACKED_LOW | 3 << 62) == 0 && id < PACKED_IDS).then(|| {
        let prio = (prio >> 62) << 40 | prio & PACKED_LOW;
        prio << 22 | u64::from(PACKED_IDS - 1 - id)
    })
}

/// The `key` of a packed key.
fn unpacked(k: u64) -> QueueKey {
    let prio = (k >> 62) << 62 | (k >> 22) & PACKED_LOW;
    let id = PACKED_IDS - 1 - (k as u32 & (PACKED_IDS - 1));
    key(prio, IntervalId::from_u32(id))
}

#[derive(Default)]
pub(crate) struct IntervalQueue {
    /// The keys pushed before the first pop (every interval of the function, created in
    /// one go), sorted at that pop and then taken from the back: one sort costs fewer
    /// comparisons than sifting each of them out of a heap, and the heap stays as small
    /// as the intervals queued while allocating. Packed (`packed`); a key that does not
    /// pack goes to the heap at once.
    initial: Vec<u64>,
    /// Whether `initial` is sorted: the first pop since `clear` happened.
    popping: bool,
    heap: BinaryHeap<QueueKey>,
    /// Per interval pushed (or given a shape) since `clear`, by interval index. A plain
    /// vector: `SecondaryMap` checks for growth on every mutable index, which `slot`
    /// already did.
    slots: Vec<Slot>,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// The priority the interval was last pushed with; `None` when not queued.
    current: Option<u64>,
    /// Its shape, once known. A function of the interval's segments and uses, which never
    /// change once the interval exists (splitting makes new intervals, and a retired
    /// interval is never queued again), so the first push's shape holds for every later
    /// one.
    shape: Option<IntervalShape>,
}

/// What an interval's priority needs besides its stage: Σ segment length × block
/// frequency, and whether it is a single-block interval with a fixed-register operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct IntervalShape {
    pub weighted_size: f32,
    pub local_fixed_hint: bool,
}

impl IntervalQueue {
    pub fn clear(&mut self) {
        self.initial.clear();
        self.popping = false;
        self.heap.clear();
        self.slots.clear();
    }

    #[inline]
    fn slot(&mut self, id: IntervalId) -> &mut Slot {
        // Ids arrive mostly in increasing order after `clear`, so growing the map only to
        // the id asked for would resize it on nearly every push; doubling keeps that to a
        // few per function. Untouched ids read as neither queued nor shaped either way.
        let len = self.slots.len();
        if id.index() >= len {
            self.slots
                .resize((id.index() + 1).max(2 * len), Slot::default());
        }
        &mut self.slots[id.index()]
    }

    /// The shape recorded for `id` since `clear`, if any.
    pub fn cached_shape(&self, id: IntervalId) -> Option<IntervalShape> {
        self.slots.get(id.index()).and_then(|slot| slot.shape)
    }

    #[inline]
    pub fn set_shape(&mut self, id: IntervalId, shape: IntervalShape) {
        self.slot(id).shape = Some(shape);
    }

    /// Queues `id` at `prio`, replacing its priority if it is already queued.
    #[inline]
    pub fn push(&mut self, id: IntervalId, prio: u64) {
        self.slot(id).current = Some(prio);
        match packed(prio, id) {
            Some(k) if !self.popping => self.initial.push(k),
            _ => self.heap.push(key(prio, id)),
        }
    }

    /// Whether `id` is queued.
    pub fn is_queued(&self, id: IntervalId) -> bool {
        self.slots
            .get(id.index())
            .is_some_and(|s| s.current.is_some())
    }

    /// Takes `id` out of the queue (its heap entry is skipped when popped).
    pub fn remove(&mut self, id: IntervalId) {
        if let Some(slot) = self.slots.get_mut(id.index()) {
            slot.current = None;
        }
    }

    /// The queued interval with the largest priority (lowest id among equals), and that
    /// priority.
    pub fn pop(&mut self) -> Option<(IntervalId, u64)> {
        if !self.popping {
            self.popping = true;
            // Keys are unique, so an unstable sort is deterministic.
            self.initial.sort_unstable();
        }
        while let Some(k) = self.pop_key() {
            let prio = (k >> 32) as u64;
            let id = IntervalId::from_u32(u32::MAX - k as u32);
            let slot = &mut self.slots[id.index()];
            if slot.current == Some(prio) {
                slot.current = None;
                return Some((id, prio));
            }
        }
        None
    }

    /// The largest key of `initial` and `heap`, removed.
    #[inline]
    fn pop_key(&mut self) -> Option<QueueKey> {
        match (self.initial.last().map(|&k| unpacked(k)), self.heap.peek()) {
            (Some(a), Some(&b)) if b > a => self.heap.pop(),
            (Some(a), _) => {
                self.initial.pop();
                Some(a)
            }
            (None, _) => self.heap.pop(),
        }
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

    /// A removed interval is never popped, even when pushed twice before; pushed again
    /// after its removal, it is queued once more.
    #[test]
    fn removed_interval_is_skipped() {
        let mut q = IntervalQueue::default();
        let (a, b) = (IntervalId::new(0), IntervalId::new(1));
        q.push(a, 9);
        q.push(a, 8);
        q.push(b, 3);
        assert!(q.is_queued(a));
        q.remove(a);
        assert!(!q.is_queued(a));
        assert_eq!(q.pop(), Some((b, 3)));
        assert_eq!(q.pop(), None);
        q.push(a, 2);
        assert!(q.is_queued(a));
        assert_eq!(q.pop(), Some((a, 2)));
    }

    /// Against a plain list, over pushes before and after the first pop (the sorted
    /// initial keys and the heap interleaved), re-pushes and removals.
    #[test]
    fn matches_a_plain_list() {
        let mut next = crate::tests::xorshift(0x2545_f491_4f6c_dd1d);
        for round in 0..50 {
            let mut q = IntervalQueue::default();
            let mut model: Vec<(u64, usize)> = Vec::new();
            let mut popped = false;
            for _ in 0..400 {
                let id = next(60) as usize;
                match next(6) {
                    0 | 1 if popped || round % 2 == 0 => {
                        let want = model
                            .iter()
                            .copied()
                            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
                        if let Some(w) = want {
                            model.retain(|&m| m != w);
                        }
                        assert_eq!(q.pop(), want.map(|(p, i)| (IntervalId::new(i), p)));
                        popped = true;
                    }
                    2 => {
                        q.remove(IntervalId::new(id));
                        model.retain(|m| m.1 != id);
                    }
                    _ => {
                        // Small priorities, `DefaultPriority`'s flags, and ones that do
                        // not pack.
                        let small = next(20);
                        let prio = match next(3) {
                            0 => small,
                            1 => small | 1 << 63 | next(2) << 62,
                            _ => small << 41,
                        };
                        q.push(IntervalId::new(id), prio);
                        model.retain(|m| m.1 != id);
                        model.push((prio, id));
                    }
                }
            }
        }
    }
}
