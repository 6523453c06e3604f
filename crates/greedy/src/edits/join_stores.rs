//! Join stores: where a spilled block parameter of a merge block (one with several
//! predecessors) receives its value.
//!
//! A parameter's definition is its edge moves, one per incoming edge, each before its
//! predecessor's branch. When the parameter's home at the block's start is its spill
//! slot, every one of those moves writes the slot: a store per edge (or a stack-to-stack
//! move, if the argument is spilled too). Received in a register instead, the edges move
//! the arguments into that register (nothing where an argument already sits there) and
//! the slot is written once, at the block's start, by the store `stores_at_def` writes
//! for a parameter whose home there is a register. This is what a register piece of one
//! point at the block's start would give, chosen here rather than by the allocator:
//! only the edit builder knows where each argument ends up, and every allocator gets it.
//!
//! It is decided per parameter by frequency-weighted cost in the units of
//! docs/metrics.md (an edge move counts at its predecessor's frequency, the store at
//! the block's): the edges' moves into the slot (nothing from an argument sharing the
//! slot, 2 from a register, 4 from the stack) against one store plus the edges' moves
//! into the register (nothing from an argument already there, 1 from another register,
//! 2 from the stack). Every register but the arguments' own costs the same, so the
//! candidates are the free argument registers (the one whose arguments' edges are the
//! most frequent wins) and else the first free preferred register (a callee-saved one
//! that no value uses yet would cost its save and restore). A loop's two-deep join of
//! four predecessors whose spilled parameters took a store on each edge
//! (shootout-gimli #3) is the case it was made for. The cost does not see move cycles
//! on an edge (arguments permuted against the registers their parameters receive
//! them in cost a move more each) nor moves the redundant-move pass drops later.
//!
//! Which registers are free: at the block's first point no live-in value and no
//! parameter of the block may be in the register (their homes there are what the
//! edges fill). Every other value in it at a predecessor's end is dead once the edges'
//! parallel moves have run (they read it before writing it). On the predecessor's
//! side nothing else can disturb it: a branch into a merge block has no operands (the
//! CFG analysis rejects it otherwise), the edge moves are the last group before it,
//! and a register it clobbers is ruled out. At the block's start the store is in the
//! first group (with the piece transitions; a merge block has no incoming edge moves
//! of its own), so the first instruction's reloads, copies into fixed registers and
//! defs, all later, may use the register: only live-ins and parameters make it busy.
//! Each parameter of a block takes its own register. The block's busy registers are
//! gathered once, for its first parameter worth a register, from its live-ins' homes
//! (a lookup each): building the per-register index of held ranges that the move
//! resolver's temporaries use cost three times as much on the Wasm corpus.

use super::{OutputBuilder, is_stack_alloc};
use crate::analysis::intervals::before;
use regalloc2::{Allocation, Block, Function, Output, PReg, PRegSet};

/// Per incoming edge of the parameter being decided.
#[derive(Clone, Copy, Debug)]
pub(super) struct JoinEdge {
    pred: Block,
    arg: regalloc2::VReg,
    /// The argument's location at the end of `pred`; `Allocation::none()` until looked
    /// up (an argument sharing the parameter's slot needs no lookup to price the slot).
    from: Allocation,
    freq: f32,
}

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    /// Fills `received` with the spilled parameters of merge blocks that are cheaper
    /// received in a register and stored once at the block's start, sorted by vreg.
    /// Runs after operand allocation (an argument's location at the end of a
    /// predecessor is read as edge moves read it) and before `stores_at_def`, which
    /// writes the store, and `edge_moves`, which target the register.
    pub(super) fn join_receivers(&mut self, out: &Output) {
        self.ctx.received.clear();
        // Without spilled values there is nothing to receive.
        if !self.options.join_stores || self.a.slots.marked().is_empty() {
            return;
        }
        let f = self.func;
        let stack_regs = self.ctx.stack_regs;
        // The slot already holds an argument that shares it, if the redundant-move pass
        // runs across blocks to see it.
        let drops_shared = self.options.redundant_moves && self.options.cross_block_redundant_moves;
        let mut edges = std::mem::take(&mut self.ctx.join_edges);
        let mut allocatable: Option<PRegSet> = None;
        for b in 0..f.num_blocks() {
            let join = Block::new(b);
            let preds = f.block_preds(join);
            let params = f.block_params(join);
            if preds.len() < 2 || params.is_empty() || join == f.entry_block() {
                continue;
            }
            let start = before(f.block_insns(join).first());
            let store = 2.0 * self.an.freq.of(join);
            // Registers a parameter of this block cannot be received in: found once,
            // then each parameter received in a register adds its own.
            let mut busy: Option<PRegSet> = None;
            for (k, &param) in params.iter().enumerate() {
                // Only a home in the parameter's own slot: that is what `stores_at_def`
                // writes (a fixed stack slot is not). Most parameters have no slot, which
                // is asked first (the home is a search).
                let Some(slot) = self.a.slots.slot_of(param) else {
                    continue;
                };
                if self.loc(param, start) != Some(slot) {
                    continue;
                }
                edges.clear();
                let mut now = 0.0f32;
                let mut known = true;
                for &pred in preds {
                    let last = f.block_insns(pred).last();
                    let Some(i) = f.block_succs(pred).iter().position(|&s| s == join) else {
                        known = false;
                        break;
                    };
                    let arg = f.branch_blockparams(pred, last, i)[k];
                    let mut e = JoinEdge {
                        pred,
                        arg,
                        from: Allocation::none(),
                        freq: self.an.freq.of(pred),
                    };
                    if !(drops_shared && self.a.slots.slot_of(arg) == Some(slot)) {
                        let Some(from) = self.loc_at_end(out, pred, arg) else {
                            known = false;
                            break;
                        };
                        e.from = from;
                        now += e.freq
                            * if is_stack_alloc(&stack_regs, from) {
                                4.0
                            } else {
                                2.0
                            };
                    }
                    edges.push(e);
                }
                // A register costs the store at least.
                if !known || now <= store {
                    continue;
                }
                // Into any register other than its own, an argument costs a move (a
                // reload from the stack); `into_other` sums them over the edges.
                let mut into_other = store;
                for e in edges.iter_mut() {
                    if e.from == Allocation::none() {
                        match self.loc_at_end(out, e.pred, e.arg) {
                            Some(l) => e.from = l,
                            None => known = false,
                        }
                    }
                    into_other += e.freq
                        * if is_stack_alloc(&stack_regs, e.from) {
                            2.0
                        } else {
                            1.0
                        };
                }
                if !known {
                    continue;
                }
                let busy = busy.get_or_insert_with(|| self.busy_at_join(join));
                let class = param.class();
                let allocatable = *allocatable.get_or_insert_with(|| {
                    let mut set = PRegSet::empty();
                    for order in &self.a.order {
                        for &r in order {
                            set.add(r);
                        }
                    }
                    set
                });
                let usable =
                    |r: PReg| r.class() == class && allocatable.contains(r) && !busy.contains(r);
                // The free argument register whose edges are the most frequent (the
                // first such on a tie), else the first free preferred register. Summed
                // per register in one pass: a switch's join has hundreds of edges.
                let mut saved = [0f32; PReg::NUM_INDEX];
                for e in edges.iter() {
                    if let Some(r) = e.from.as_reg() {
                        saved[r.index()] += e.freq;
                    }
                }
                let mut best: Option<(f32, PReg)> = None;
                for e in edges.iter() {
                    if let Some(r) = e.from.as_reg()
                        && usable(r)
                        && best.is_none_or(|(s, _)| saved[r.index()] > s)
                    {
                        best = Some((saved[r.index()], r));
                    }
                }
                if best.is_none() {
                    best = self.env.preferred_regs_by_class[class as usize]
                        .into_iter()
                        .find(|&r| usable(r))
                        .map(|r| (0.0, r));
                }
                let Some((saved, r)) = best else {
                    continue;
                };
                let cost = into_other - saved;
                if cost >= now {
                    continue;
                }
                log::debug!(
                    "join store: {param} of {join:?} received in {r} and stored once \
                     ({cost} against {now} for the edges' moves into {slot})"
                );
                busy.add(r);
                self.ctx.received.push((param.vreg() as u32, r));
            }
        }
        self.ctx.join_edges = edges;
        self.stats.join_stores = self.ctx.received.len();
        self.ctx.received.sort_unstable_by_key(|&(v, _)| v);
    }

    /// The registers that cannot receive a parameter of merge block `join`: the homes
    /// of its live-ins and parameters at its first point, and those its predecessors'
    /// branches clobber.
    fn busy_at_join(&self, join: Block) -> PRegSet {
        let f = self.func;
        let first = f.block_insns(join).first();
        let start = before(first);
        let mut busy = PRegSet::empty();
        let live = &self.an.live.livein[join.index()];
        for &v in live.iter().chain(f.block_params(join)) {
            let home = self.uniform(v).or_else(|| self.loc(v, start));
            if let Some(r) = home.and_then(|l| l.as_reg()) {
                busy.add(r);
            }
        }
        for &pred in f.block_preds(join) {
            busy.union_from(f.inst_clobbers(f.block_insns(pred).last()));
        }
        busy
    }

    /// The register a spilled merge-block parameter is received in, if `join_receivers`
    /// chose one.
    pub(super) fn received_in(&self, v: regalloc2::VReg) -> Option<PReg> {
        let r = &self.ctx.received;
        if r.is_empty() {
            return None;
        }
        let v = v.vreg() as u32;
        r.binary_search_by_key(&v, |&(w, _)| w).ok().map(|i| r[i].1)
    }
}
