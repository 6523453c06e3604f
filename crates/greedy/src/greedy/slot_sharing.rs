//! Spill-slot sharing: after the main loop, the spilled values are laid out in slots,
//! values whose lifetimes never overlap sharing one (interval-graph colouring per class).

use super::{Allocator, NEEDS_SLOT};
use regalloc2::{Function, RegClass, VReg};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Spill-slot sharing: interval-graph colouring of the spilled values by the hull of
    /// their live ranges (one pass in start order, slots freed when a hull ends), per
    /// class, so values that are never live at the same point share a slot. A value uses
    /// its slot only where it is live, so disjoint hulls cannot clash.
    pub(crate) fn assign_spill_slots(&mut self) {
        let mut ranges = std::mem::take(&mut self.ctx.scratch_slot_ranges);
        ranges.clear();
        for v in 0..self.ctx.vreg_slot.len() {
            if self.ctx.vreg_slot[v] != NEEDS_SLOT {
                continue;
            }
            let Some(class) = self.an.live.class[v] else {
                continue;
            };
            let segs = self.an.intervals.segments_of(VReg::new(v, class));
            let (start, end) = match (segs.first(), segs.last()) {
                (Some(a), Some(b)) => (a.start, b.end),
                _ => (0, u32::MAX),
            };
            ranges.push((start, end, v as u32));
        }
        ranges.sort_unstable();
        // Per class: (hull end, slot) of slots in use, and free slots.
        let mut active: [BinaryHeap<Reverse<(u32, usize)>>; 3] = Default::default();
        let mut free: [BinaryHeap<Reverse<usize>>; 3] = Default::default();
        for &(start, end, v) in &ranges {
            let class = self.an.live.class[v as usize].unwrap_or(RegClass::Int);
            let c = class as usize;
            while let Some(&Reverse((e, slot))) = active[c].peek() {
                if e > start {
                    break;
                }
                active[c].pop();
                free[c].push(Reverse(slot));
            }
            let reuse = if self.options.slot_sharing {
                free[c].pop()
            } else {
                None
            };
            let slot = match reuse {
                Some(Reverse(s)) => s,
                None => self.ctx.slots.alloc(self.func, class),
            };
            active[c].push(Reverse((end, slot)));
            self.ctx.vreg_slot[v as usize] = slot;
        }
        self.stats.shared_slot_values = ranges.len();
        self.ctx.scratch_slot_ranges = ranges;
    }
}
