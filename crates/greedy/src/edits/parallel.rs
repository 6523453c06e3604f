//! Parallel-move resolution: turns a set of simultaneous moves (distinct destinations)
//! into a sequence. A move is emitted once nothing still pending reads its destination;
//! what remains are cycles, broken by saving one destination in a temporary. Then every
//! stack-to-stack move is routed through a register: a free one if the caller has one,
//! else a victim register saved to and restored from a spill slot around the move.

use hashbrown::HashMap;
use regalloc2::{Allocation, PReg, RegClass};

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

#[derive(Default)]
pub(crate) struct ParallelMoves {
    pending: Vec<(Allocation, Allocation)>,
    readers: HashMap<u32, u32>,
    writer: HashMap<u32, usize>,
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
        self.readers.clear();
        self.writer.clear();
        self.ready.clear();
        self.done.clear();
        self.done.resize(self.pending.len(), false);
        for (i, &(from, to)) in self.pending.iter().enumerate() {
            *self.readers.entry(from.bits()).or_insert(0) += 1;
            let prev = self.writer.insert(to.bits(), i);
            debug_assert!(prev.is_none(), "two moves write {to}");
        }
        for (i, &(_, to)) in self.pending.iter().enumerate() {
            if !self.readers.contains_key(&to.bits()) {
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
            self.readers.remove(&to.bits());
            self.ready.push(next_cycle);
            // The temporary is read by the redirected moves; it is never a destination
            // of a pending move, so it can be reused for the next cycle afterwards.
        }
    }

    fn release(&mut self, from: Allocation) {
        if let Some(n) = self.readers.get_mut(&from.bits()) {
            *n -= 1;
            if *n == 0 {
                self.readers.remove(&from.bits());
                if let Some(&w) = self.writer.get(&from.bits())
                    && !self.done[w]
                {
                    self.ready.push(w);
                }
            }
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
