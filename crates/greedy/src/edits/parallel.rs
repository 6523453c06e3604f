//! Parallel-move resolution: turns a set of simultaneous moves (distinct destinations)
//! into a sequence. A move is emitted once nothing still pending reads its destination;
//! what remains are cycles, broken by saving one destination in a temporary. Then every
//! stack-to-stack move is routed through a register: a free one if the caller has one,
//! else a victim register saved to and restored from a spill slot around the move.

use regalloc2::{Allocation, AllocationKind, PReg, RegClass};

/// Where the resolver may put temporaries, answered by the caller for one move group.
pub(crate) trait ScratchSource {
    /// A register of `class` that holds nothing live here and is not in `busy`.
    fn free_reg(&mut self, class: RegClass, busy: &[Allocation]) -> Option<PReg>;
    /// Spill slot number `which` (0 or 1) reserved for move resolution.
    fn emergency_slot(&mut self, class: RegClass, which: usize) -> Allocation;
    /// Any allocatable register of `class` other than those in `busy`, to borrow.
    fn victim_reg(&mut self, class: RegClass, busy: &[Allocation]) -> PReg;
    /// Stack locations: spill slots and fixed stack-slot registers.
    fn is_stack(&self, a: Allocation) -> bool;
}

/// What one location is to the group being sequentialized: how many pending moves read
/// it and which one writes it. Valid only if stamped with the current generation (so a
/// new group starts from nothing without clearing the table).
#[derive(Clone, Copy, Default)]
struct LocUse {
    generation: u32,
    readers: u32,
    writer: u32,
}

const NO_WRITER: u32 = u32::MAX;

/// A location as a dense index: registers by `PReg` index, then the empty allocation,
/// then stack slots by slot index.
#[inline]
fn dense(a: Allocation) -> usize {
    match a.kind() {
        AllocationKind::Reg => a.as_reg().map_or(0, |r| r.index()),
        AllocationKind::None => PReg::NUM_INDEX,
        AllocationKind::Stack => PReg::NUM_INDEX + 1 + a.as_stack().map_or(0, |s| s.index()),
    }
}

#[derive(Default)]
pub(crate) struct ParallelMoves {
    pending: Vec<(Allocation, Allocation)>,
    /// Per location (`dense`), for groups of several moves.
    uses: Vec<LocUse>,
    generation: u32,
    ready: Vec<usize>,
    done: Vec<bool>,
    sequence: Vec<(Allocation, Allocation)>,
    busy: Vec<Allocation>,
}

impl ParallelMoves {
    /// Resolves `moves` (all of `class`) and appends the sequential moves to `out`.
    pub fn resolve(
        &mut self,
        class: RegClass,
        moves: &[(Allocation, Allocation)],
        scratch: &mut dyn ScratchSource,
        out: &mut Vec<(Allocation, Allocation)>,
    ) {
        self.pending.clear();
        for &(from, to) in moves {
            if from != to && !self.pending.contains(&(from, to)) {
                self.pending.push((from, to));
            }
        }
        if self.pending.is_empty() {
            return;
        }
        self.busy.clear();
        for &(f, t) in &self.pending {
            self.busy.push(f);
            self.busy.push(t);
        }
        self.sequentialize(class, scratch);
        self.fix_stack_to_stack(class, scratch, out);
    }

    fn sequentialize(&mut self, class: RegClass, scratch: &mut dyn ScratchSource) {
        self.sequence.clear();
        // Most groups hold one move, which no other move can block: no maps for those.
        if let [only] = self.pending[..] {
            self.sequence.push(only);
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.uses.fill(LocUse::default());
            self.generation = 1;
        }
        self.ready.clear();
        self.done.clear();
        self.done.resize(self.pending.len(), false);
        for i in 0..self.pending.len() {
            let (from, to) = self.pending[i];
            self.touch(from).readers += 1;
            let w = self.touch(to);
            debug_assert_eq!(w.writer, NO_WRITER, "two moves write {to}");
            w.writer = i as u32;
        }
        for (i, &(_, to)) in self.pending.iter().enumerate() {
            if self.readers(to) == 0 {
                self.ready.push(i);
            }
        }
        let mut remaining = self.pending.len();
        let mut temp: Option<Allocation> = None;
        let mut next_cycle = 0;
        while remaining > 0 {
            while let Some(i) = self.ready.pop() {
                let (from, to) = self.pending[i];
                self.sequence.push((from, to));
                self.done[i] = true;
                remaining -= 1;
                self.release(from);
            }
            if remaining == 0 {
                break;
            }
            // Only cycles are left: every pending destination is still read by another
            // pending move. Save one destination, redirect its readers to the copy.
            while self.done[next_cycle] {
                next_cycle += 1;
            }
            let (_, to) = self.pending[next_cycle];
            let t = *temp.get_or_insert_with(|| match scratch.free_reg(class, &self.busy) {
                Some(r) => Allocation::reg(r),
                None => scratch.emergency_slot(class, 0),
            });
            self.sequence.push((to, t));
            for k in 0..self.pending.len() {
                if !self.done[k] && self.pending[k].0 == to {
                    self.pending[k].0 = t;
                }
            }
            self.touch(to).readers = 0;
            self.ready.push(next_cycle);
            // The temporary is read by the redirected moves; it is never a destination
            // of a pending move, so it can be reused for the next cycle afterwards.
        }
    }

    /// `a`'s entry, reset first if it was last touched by another group.
    #[inline]
    fn touch(&mut self, a: Allocation) -> &mut LocUse {
        let l = dense(a);
        if l >= self.uses.len() {
            self.uses.resize(l + 1, LocUse::default());
        }
        let u = &mut self.uses[l];
        if u.generation != self.generation {
            *u = LocUse {
                generation: self.generation,
                readers: 0,
                writer: NO_WRITER,
            };
        }
        u
    }

    /// The pending moves still reading `a`.
    #[inline]
    fn readers(&self, a: Allocation) -> u32 {
        match self.uses.get(dense(a)) {
            Some(u) if u.generation == self.generation => u.readers,
            _ => 0,
        }
    }

    fn release(&mut self, from: Allocation) {
        if self.readers(from) == 0 {
            return;
        }
        let u = self.touch(from);
        u.readers -= 1;
        let (left, w) = (u.readers, u.writer);
        if left == 0 && w != NO_WRITER && !self.done[w as usize] {
            self.ready.push(w as usize);
        }
    }

    fn fix_stack_to_stack(
        &mut self,
        class: RegClass,
        scratch: &mut dyn ScratchSource,
        out: &mut Vec<(Allocation, Allocation)>,
    ) {
        for k in 0..self.sequence.len() {
            let (from, to) = self.sequence[k];
            if !(scratch.is_stack(from) && scratch.is_stack(to)) {
                out.push((from, to));
                continue;
            }
            // The cycle temporary may still be live here, so keep it out of the way.
            let mut busy = std::mem::take(&mut self.busy);
            busy.extend(self.sequence.iter().flat_map(|&(f, t)| [f, t]));
            if let Some(r) = scratch.free_reg(class, &busy) {
                out.push((from, Allocation::reg(r)));
                out.push((Allocation::reg(r), to));
            } else {
                let v = Allocation::reg(scratch.victim_reg(class, &busy));
                let save = scratch.emergency_slot(class, 1);
                out.push((v, save));
                out.push((from, v));
                out.push((v, to));
                out.push((save, v));
            }
            self.busy = busy;
        }
    }
}
