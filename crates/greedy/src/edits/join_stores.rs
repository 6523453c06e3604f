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
//! the block's): the edges' moves into the slot against one store plus the edges' moves
//! into the register, for each register that is free there, the arguments' own
//! registers first. A loop's two-deep join of four predecessors whose spilled
//! parameters took a store on each edge (shootout-gimli #3) is the case it was made for.
//!
//! Which registers are free: the block's first point must be outside every piece in
//! the register (home or reload) and every fixed reservation; then no live-in value
//! and no other parameter of the block is there, so its old content is dead once the
//! edges' parallel moves have run (they read it before writing it), and after the
//! store nothing needs it again. On the predecessor's side nothing can disturb it: a
//! branch into a merge block has no operands (the CFG analysis rejects it otherwise),
//! and the edge moves are the last group before it; a fixed reservation (a clobber) on
//! such a branch rules the register out. Each parameter of a block takes its own
//! register.

use super::{OutputBuilder, is_stack_alloc};
use crate::analysis::intervals::{before, reserved_at};
use regalloc2::{Allocation, Block, Function, Output, PReg};

/// Weighted cost of one move from `from` to `to` (docs/metrics.md): nothing for a
/// self-move, 1 between registers, 2 between a register and the stack, 4 stack to
/// stack (a reload and a store through a register).
fn move_cost(stack_regs: &regalloc2::PRegSet, from: Allocation, to: Allocation) -> f32 {
    if from == to {
        return 0.0;
    }
    match (
        is_stack_alloc(stack_regs, from),
        is_stack_alloc(stack_regs, to),
    ) {
        (false, false) => 1.0,
        (true, true) => 4.0,
        _ => 2.0,
    }
}

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    /// Fills `received` with the spilled parameters of merge blocks that are cheaper
    /// received in a register and stored once at the block's start, sorted by vreg.
    /// Runs after operand allocation (an argument's location at the end of a
    /// predecessor is read as edge moves read it) and before `stores_at_def`, which
    /// writes the store, and `edge_moves`, which target the register.
    pub(super) fn join_receivers(&mut self, out: &Output) {
        self.ctx.received.clear();
        if !self.options.join_stores {
            return;
        }
        let f = self.func;
        let mut args = std::mem::take(&mut self.ctx.join_args);
        for b in 0..f.num_blocks() {
            let join = Block::new(b);
            let preds = f.block_preds(join);
            let params = f.block_params(join);
            if preds.len() < 2 || params.is_empty() || join == f.entry_block() {
                continue;
            }
            let start = before(f.block_insns(join).first());
            let store = 2.0 * self.an.freq.of(join);
            let chosen_from = self.ctx.received.len();
            for (k, &param) in params.iter().enumerate() {
                let Some(slot) = self.loc(param, start) else {
                    continue;
                };
                // Only a home in the parameter's own slot: that is what `stores_at_def`
                // writes (a fixed stack slot is not).
                if self.a.slots.slot_of(param) != Some(slot) {
                    continue;
                }
                // Each edge's argument: its location at the end of the predecessor, the
                // predecessor's frequency and its branch (the edge moves' point).
                args.clear();
                let mut now = 0.0f32;
                let mut known = true;
                for &pred in preds {
                    let last = f.block_insns(pred).last();
                    let Some(i) = f.block_succs(pred).iter().position(|&s| s == join) else {
                        known = false;
                        break;
                    };
                    let arg = f.branch_blockparams(pred, last, i)[k];
                    let Some(from) = self.loc_at_end(out, pred, arg) else {
                        known = false;
                        break;
                    };
                    let freq = self.an.freq.of(pred);
                    // An argument that shares the parameter's slot (partner slots) has
                    // been in it since its def: the redundant-move pass drops that edge's
                    // move into the slot.
                    if !(self.options.redundant_moves
                        && self.options.cross_block_redundant_moves
                        && self.a.slots.slot_of(arg) == Some(slot))
                    {
                        now += freq * move_cost(&self.ctx.stack_regs, from, slot);
                    }
                    args.push((from, freq, before(last)));
                }
                // A register costs the store at least.
                if !known || now <= store {
                    continue;
                }
                let class = param.class();
                let mut best: Option<(f32, PReg)> = None;
                // The arguments' registers first (free moves on their edges), then the
                // preferred registers (a callee-saved one no value uses yet would cost
                // its save and restore).
                let candidates = args
                    .iter()
                    .filter_map(|&(from, _, _)| from.as_reg())
                    .chain(self.env.preferred_regs_by_class[class as usize]);
                for r in candidates {
                    if r.class() != class
                        || !self.a.order[class as usize].contains(&r)
                        || self.ctx.received[chosen_from..]
                            .iter()
                            .any(|&(_, taken)| taken == r)
                    {
                        continue;
                    }
                    let fixed = &self.an.intervals.fixed[r.index()];
                    if self.a.is_held(r, start) || reserved_at(fixed, start) {
                        continue;
                    }
                    let mut cost = store;
                    let mut clobbered = false;
                    for &(from, freq, at) in &args {
                        if reserved_at(fixed, at) || reserved_at(fixed, at + 1) {
                            clobbered = true;
                            break;
                        }
                        cost += freq * move_cost(&self.ctx.stack_regs, from, Allocation::reg(r));
                    }
                    if !clobbered && cost < best.map_or(now, |(c, _)| c) {
                        best = Some((cost, r));
                    }
                }
                if let Some((cost, r)) = best {
                    log::debug!(
                        "join store: {param} of {join:?} received in {r} and stored once \
                         ({cost} against {now} for the edges' moves into {slot})"
                    );
                    self.ctx.received.push((param.vreg() as u32, r));
                }
            }
        }
        self.ctx.join_args = args;
        self.stats.join_stores = self.ctx.received.len();
        self.ctx.received.sort_unstable_by_key(|&(v, _)| v);
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
