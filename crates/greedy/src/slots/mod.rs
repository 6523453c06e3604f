//! Spill slots, for any allocator: which values need one (an allocator marks them while
//! it allocates), the layout of slot units (a value of class `c` takes
//! `spillslot_size(c)` consecutive units, aligned to that size so that multi-unit values
//! never straddle or overlap), the sharing of slots among values whose lifetimes do not
//! overlap (`sharing`, run once after allocation) and the move resolver's emergency
//! slots.

mod fixed_homes;
mod sharing;

use crate::lists::reset_span;
use regalloc2::{Allocation, Function, PReg, RegClass, SpillSlot, VReg};
use std::ops::Range;

/// `SpillSlots::vreg_slot` markers: no slot, and spilled but not laid out yet.
pub(crate) const NO_SLOT: usize = usize::MAX;
pub(crate) const NEEDS_SLOT: usize = usize::MAX - 1;
/// `SpillSlots::vreg_slot` entries from here up to `NEEDS_SLOT`: the value's stack home
/// is fixed stack slot `PReg` number `entry - FIXED_HOME` (`home_in_fixed_slot`).
const FIXED_HOME: usize = NEEDS_SLOT - PReg::NUM_INDEX;

pub(crate) use fixed_homes::home_in_fixed_slots;
pub(crate) use sharing::SlotLayout;

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
    /// Per root of a group of two or more: its segments (start, end), disjoint, as a few
    /// sorted runs, each under half as long as the one before (see `sharing::settle`). A
    /// root of a single item leaves this empty and is read from the item's own segments.
    pub segs: Vec<Vec<Vec<(u32, u32)>>>,
    /// Run vectors no group holds any more, kept for reuse.
    pub spare_runs: Vec<Vec<(u32, u32)>>,
    /// Per root: the slot unit its group occupies (`usize::MAX` until chosen).
    pub base: Vec<usize>,
    /// Copy-partner pairs of spilled items: (frequency, item, item).
    pub pairs: Vec<(f32, u32, u32)>,
    /// The groups in colouring order.
    pub order: Vec<sharing::GroupHull>,
}

/// The spill slots of one function: each value's slot and the units laid out so far.
#[derive(Default)]
pub(crate) struct SpillSlots {
    /// First unit of each vreg's slot: `NO_SLOT`, `NEEDS_SLOT` from the moment the
    /// allocator spills any piece of it until `SlotLayout` runs, then the unit.
    pub vreg_slot: Vec<usize>,
    /// The entries of `vreg_slot` that are current (`reset`).
    pub span: Range<usize>,
    /// The vregs marked `NEEDS_SLOT`, in marking order: what `SlotLayout` lays out,
    /// without a scan of every vreg.
    pub needed: Vec<u32>,
    next: usize,
    named_by_last: bool,
    sizes: [usize; 3],
    /// Per class: slots reserved for parallel-move resolution (cycle temp, victim save).
    emergency: [[Option<usize>; 2]; 3],
    pub colouring: ColouringScratch,
}

impl SpillSlots {
    /// For `f`, whose mentioned vregs lie in `span` (`Liveness::vreg_span`): only
    /// those entries of `vreg_slot` are current.
    pub fn reset<F: Function + ?Sized>(&mut self, f: &F, span: Range<usize>) {
        reset_span(&mut self.vreg_slot, f.num_vregs(), span.clone(), NO_SLOT);
        self.span = span;
        self.needed.clear();
        self.next = 0;
        self.named_by_last = f.multi_spillslot_named_by_last_slot();
        // Sizes are asked for lazily, only for classes that get a slot: a client may not
        // implement `spillslot_size` for classes it never uses (Cranelift x64 has no
        // vector class and panics on it).
        self.sizes = [0; 3];
        self.emergency = [[None; 2]; 3];
    }

    /// Marks `v` as needing a slot (laid out by `SlotLayout` after allocation).
    pub fn mark_needed(&mut self, v: VReg) {
        let s = &mut self.vreg_slot[v.vreg()];
        if *s == NO_SLOT {
            *s = NEEDS_SLOT;
            self.needed.push(v.vreg() as u32);
        }
    }

    /// Unmarks the marked vregs `keep` refuses (before `SlotLayout` runs): values whose
    /// last piece on the stack moved back into a register.
    pub fn retain_needed(&mut self, mut keep: impl FnMut(u32) -> bool) {
        let vreg_slot = &mut self.vreg_slot;
        self.needed.retain(|&v| {
            debug_assert_eq!(vreg_slot[v as usize], NEEDS_SLOT);
            let kept = keep(v);
            if !kept {
                vreg_slot[v as usize] = NO_SLOT;
            }
            kept
        });
    }

    /// Has `v` been marked as needing a slot (or been given one)?
    pub fn has_slot(&self, v: VReg) -> bool {
        self.vreg_slot[v.vreg()] != NO_SLOT
    }

    /// The slot of `v` once laid out, as an allocation: a spill slot, or the fixed
    /// stack slot given as its home.
    #[inline]
    pub fn slot_of(&self, v: VReg) -> Option<Allocation> {
        match self.vreg_slot[v.vreg()] {
            NO_SLOT | NEEDS_SLOT => None,
            home @ FIXED_HOME.. => Some(Allocation::reg(PReg::from_index(home - FIXED_HOME))),
            base => Some(Allocation::stack(self.name(v.class(), base))),
        }
    }

    /// Makes fixed stack slot `slot` the stack home of `v`, marked as needing a slot and
    /// not laid out yet: `SlotLayout` then gives it no slot of its own, and `slot_of`
    /// answers `slot`. The caller vouches that `slot` holds `v` wherever `v` is live.
    pub fn home_in_fixed_slot(&mut self, v: VReg, slot: PReg) {
        debug_assert_eq!(self.vreg_slot[v.vreg()], NEEDS_SLOT);
        self.vreg_slot[v.vreg()] = FIXED_HOME + slot.index();
    }

    /// Is `v` marked as needing a slot and not laid out yet (no fixed home either)?
    pub fn awaits_layout(&self, v: VReg) -> bool {
        self.vreg_slot[v.vreg()] == NEEDS_SLOT
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

    /// Every vreg marked as needing a slot, hence every vreg `slot_of` gives one, in
    /// increasing order once `SlotLayout` has run.
    pub fn marked(&self) -> &[u32] {
        debug_assert!(
            self.needed.is_sorted()
                || self.vreg_slot[self.span.clone()]
                    .iter()
                    .all(|&s| s >= NEEDS_SLOT),
            "slots handed out before the layout sorted the marked vregs"
        );
        &self.needed
    }

    pub fn num_slots(&self) -> usize {
        self.next
    }
}
