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
//! 2 from the stack), plus one move on each edge where the register's move would close
//! a cycle with the block's other parameters' register moves (arguments permuted
//! against their parameters' registers: the cycle goes through a temporary). The
//! candidates are the free argument registers and the free preferred registers (a
//! callee-saved one that no value uses yet would cost its save and restore); the
//! cheapest wins, the first on a tie. A loop's two-deep join of four predecessors whose
//! spilled parameters took a store on each edge (shootout-gimli #3) is the case it was
//! made for. A register that would be the last one free on an edge with a slot-to-slot
//! move among the other parameters' costs the save and restore of the live register the
//! move resolver then borrows (`scratch_taken`). Cycles through live-in values and moves
//! the redundant-move pass drops later are not seen.
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

use super::{OutputBuilder, is_stack_alloc, points_around, unheld_at};
use crate::analysis::intervals::before;
use crate::assignment::Assignment;
use regalloc2::{Allocation, Block, Function, Output, PReg, PRegSet, ProgPoint};

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

/// A register-to-register move of a merge block's parameter on one incoming edge.
#[derive(Clone, Copy, Debug)]
pub(super) struct ParamMove {
    /// The predecessor's index among the block's predecessors.
    edge: u32,
    from: Allocation,
    to: Allocation,
}

/// Parameters × predecessors of a merge block beyond which its parameters' edge moves
/// are not gathered (a cycle then goes unseen).
const MAX_PARAM_MOVES: usize = 1024;

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
        let mut moves = std::mem::take(&mut self.ctx.join_moves);
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
            let mut moves_ready = false;
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
                // Register-to-register moves of the block's other parameters on these
                // edges, gathered at the first parameter that gets this far.
                if !moves_ready {
                    self.join_param_moves(out, join, &mut moves);
                    moves_ready = true;
                }
                // Receiving in `r` closes a cycle on an edge where the moves already
                // there lead from `r` back to where this parameter's argument comes from
                // (followed backwards: each location is written by one move at most):
                // one move more, through a temporary.
                let cycle_cost = |r: PReg| -> f32 {
                    let to = Allocation::reg(r);
                    let mut cost = 0.0;
                    for (i, e) in edges.iter().enumerate() {
                        if e.from == to || !e.from.is_reg() {
                            continue;
                        }
                        let mut at = e.from;
                        for _ in 0..params.len() {
                            let Some(m) = moves.iter().find(|m| m.edge == i as u32 && m.to == at)
                            else {
                                break;
                            };
                            at = m.from;
                            if at == to {
                                cost += e.freq;
                                break;
                            }
                        }
                    }
                    cost
                };
                // The free argument registers (whose edges save their moves), else the
                // free preferred registers; the cheapest, the first on a tie. Saved
                // frequencies are summed per register in one pass: a switch's join has
                // hundreds of edges.
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
                        && saved[r.index()] > 0.0
                    {
                        let c = into_other - saved[r.index()] + cycle_cost(r);
                        // Each register once.
                        saved[r.index()] = 0.0;
                        if best.is_none_or(|(b, _)| c < b) {
                            best = Some((c, r));
                        }
                    }
                }
                for r in self.env.preferred_regs_by_class[class as usize] {
                    if usable(r) && best.is_none_or(|(b, _)| into_other < b) {
                        let c = into_other + cycle_cost(r);
                        if best.is_none_or(|(b, _)| c < b) {
                            best = Some((c, r));
                        }
                    }
                }
                let Some((cost, r)) = best else {
                    continue;
                };
                let busy_now = *busy;
                if cost >= now || cost + self.scratch_taken(out, join, k, r, busy_now) >= now {
                    continue;
                }
                log::debug!(
                    "join store: {param} of {join:?} received in {r} and stored once \
                     ({cost} against {now} for the edges' moves into {slot})"
                );
                busy.add(r);
                self.ctx.received.push((param.vreg() as u32, r));
                // Its edges now move into `r`: later parameters see them.
                let to = Allocation::reg(r);
                moves.extend(edges.iter().enumerate().filter_map(|(i, e)| {
                    (e.from.is_reg() && e.from != to).then_some(ParamMove {
                        edge: i as u32,
                        from: e.from,
                        to,
                    })
                }));
            }
        }
        self.ctx.join_edges = edges;
        self.ctx.join_moves = moves;
        self.stats.join_stores = self.ctx.received.len();
        self.ctx.received.sort_unstable_by_key(|&(v, _)| v);
    }

    /// Fills `moves` with the register-to-register edge moves of `join`'s parameters
    /// whose home at its start is a register, by predecessor index (the order of
    /// `JoinEdge`s). Not for a block with more than `MAX_PARAM_MOVES` parameters times
    /// predecessors: no cycle is seen there.
    fn join_param_moves(&self, out: &Output, join: Block, moves: &mut Vec<ParamMove>) {
        moves.clear();
        let f = self.func;
        let preds = f.block_preds(join);
        let params = f.block_params(join);
        if params.len() < 2 || params.len() * preds.len() > MAX_PARAM_MOVES {
            return;
        }
        let start = before(f.block_insns(join).first());
        for (k, &q) in params.iter().enumerate() {
            let Some(to) = self.loc(q, start).filter(|l| l.is_reg()) else {
                continue;
            };
            for (i, &pred) in preds.iter().enumerate() {
                let last = f.block_insns(pred).last();
                let Some(s) = f.block_succs(pred).iter().position(|&s| s == join) else {
                    continue;
                };
                let arg = f.branch_blockparams(pred, last, s)[k];
                if let Some(from) = self.loc_at_end(out, pred, arg)
                    && from.is_reg()
                    && from != to
                {
                    moves.push(ParamMove {
                        edge: i as u32,
                        from,
                        to,
                    });
                }
            }
        }
    }

    /// What receiving parameter `k` of `join` in `r` costs the edges' move resolution:
    /// on an edge with a stack-to-stack move among the other parameters' (an argument in
    /// one slot, a parameter homed in another), `r` may be the last register free there
    /// to route it through, and once it is a destination the resolver borrows a live
    /// register instead, saving and restoring it around the move (4 units at the edge's
    /// frequency). Seen on a loop of 20 float block parameters in 16 registers (its
    /// back edge routes six slot-to-slot moves; receiving two parameters in the free
    /// registers cost 32 units more than storing on the edges). `busy`: the registers
    /// that cannot receive a parameter of `join` now (`busy_at_join` and those received).
    fn scratch_taken(
        &mut self,
        out: &Output,
        join: Block,
        k: usize,
        r: PReg,
        busy: PRegSet,
    ) -> f32 {
        let f = self.func;
        let class = r.class();
        if self.env.scratch_by_class[class as usize].is_some() {
            return 0.0;
        }
        let start = before(f.block_insns(join).first());
        let params = f.block_params(join);
        let mut cost = 0.0;
        for &pred in f.block_preds(join) {
            let last = f.block_insns(pred).last();
            let Some(s) = f.block_succs(pred).iter().position(|&s| s == join) else {
                continue;
            };
            let args = f.branch_blockparams(pred, last, s);
            let stack_regs = &self.ctx.stack_regs;
            let slot_to_slot = params.iter().enumerate().any(|(j, &q)| {
                j != k
                    && q.class() == class
                    && self.received_in(q).is_none()
                    && self.loc(q, start).is_some_and(|home| {
                        is_stack_alloc(stack_regs, home)
                            && self.loc_at_end(out, pred, args[j]).is_some_and(|from| {
                                from != home && is_stack_alloc(stack_regs, from)
                            })
                    })
            });
            if !slot_to_slot {
                continue;
            }
            // Free where the edge's moves go, before the branch, as the resolver asks.
            let points = points_around(f, self.an, ProgPoint::before(last));
            let (a, an) = (&mut *self.a, self.an);
            let free =
                |a: &mut Assignment, q: PReg| !busy.contains(q) && unheld_at(a, an, q, &points);
            if !free(a, r) {
                continue;
            }
            let registers = a.order[class as usize].len();
            if (0..registers).any(|i| {
                let q = a.order[class as usize][i];
                q != r && free(a, q)
            }) {
                continue;
            }
            cost += 4.0 * self.an.freq.of(pred);
        }
        cost
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
