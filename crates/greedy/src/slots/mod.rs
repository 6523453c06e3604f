//! Spill-slot layout: a value of class `c` takes `spillslot_size(c)` consecutive slots,
//! aligned to that size so that multi-slot values never straddle or overlap. Also owns
//! the reusable buffers of the slot colouring (`greedy::slot_sharing`).

use regalloc2::{Function, RegClass, SpillSlot};
use std::collections::BTreeMap;

/// Buffers of the spill-slot colouring, kept across functions. Spilled values are
/// numbered densely (`item`); groups of items that will share one slot form a union-find
/// forest whose roots carry the group's live segments and hull.
#[derive(Default)]
pub(crate) struct ColouringScratch {
    /// Per vreg: its item, or `u32::MAX` when it has no slot to lay out.
    pub item_of: Vec<u32>,
    /// Per item: its vreg index.
    pub vreg: Vec<u32>,
    /// Per item: union-find parent (itself for a root).
    pub parent: Vec<u32>,
    /// Per root: (first point, last point + 1) over the group's segments.
    pub hull: Vec<(u32, u32)>,
    /// Per root of a group of two or more: its segments, start → end, disjoint. A root
    /// of a single item leaves this empty and is read from the item's own segments.
    pub segs: Vec<BTreeMap<u32, u32>>,
    /// Per root: the slot unit its group occupies (`usize::MAX` until chosen).
    pub base: Vec<usize>,
    /// Copy-partner pairs of spilled items: (frequency, item, item).
    pub pairs: Vec<(f32, u32, u32)>,
}

#[derive(Default)]
pub(crate) struct SpillSlots {
    next: usize,
    named_by_last: bool,
    sizes: [usize; 3],
    /// Per class: slots reserved for parallel-move resolution (cycle temp, victim save).
    emergency: [[Option<usize>; 2]; 3],
    pub colouring: ColouringScratch,
}

impl SpillSlots {
    pub fn reset<F: Function + ?Sized>(&mut self, f: &F) {
        self.next = 0;
        self.named_by_last = f.multi_spillslot_named_by_last_slot();
        // Sizes are asked for lazily, only for classes that get a slot: a client may not
        // implement `spillslot_size` for classes it never uses (Cranelift x64 has no
        // vector class and panics on it).
        self.sizes = [0; 3];
        self.emergency = [[None; 2]; 3];
    }

    /// A fresh slot for a value of `class`; returns the index of its first unit.
    pub fn alloc<F: Function + ?Sized>(&mut self, f: &F, class: RegClass) -> usize {
        let size = &mut self.sizes[class as usize];
        if *size == 0 {
            *size = f.spillslot_size(class).max(1);
        }
        let size = *size;
        let base = self.next.div_ceil(size) * size;
        self.next = base + size;
        base
    }

    /// The name regalloc2 uses for the value whose first unit is `base`.
    pub fn name(&self, class: RegClass, base: usize) -> SpillSlot {
        if self.named_by_last {
            SpillSlot::new(base + self.sizes[class as usize] - 1)
        } else {
            SpillSlot::new(base)
        }
    }

    /// One of the two per-class slots the move resolver may use as temporaries.
    pub fn emergency<F: Function + ?Sized>(
        &mut self,
        f: &F,
        class: RegClass,
        which: usize,
    ) -> SpillSlot {
        let base = match self.emergency[class as usize][which] {
            Some(b) => b,
            None => {
                let b = self.alloc(f, class);
                self.emergency[class as usize][which] = Some(b);
                b
            }
        };
        self.name(class, base)
    }

    pub fn num_slots(&self) -> usize {
        self.next
    }
}
