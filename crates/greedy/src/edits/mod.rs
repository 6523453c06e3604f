//! From allocation decisions to regalloc2's `Output`: operand allocations, the moves
//! that connect a value's locations (reloads before uses, stores after defs, copies to
//! and from fixed registers, reuse copies, edge moves for live-ins and block params),
//! parallel-move resolution per program point, and debug locations.
//!
//! Moves at one program point run in groups, each group a parallel move, in this order
//! before an instruction: edge moves arriving in the block, moves between pieces of a
//! value, copies into operand registers (reloads, fixed uses), reuse copies, and last
//! edge moves leaving the block (placed before its branch). Copies out of def registers
//! (stores, fixed defs) join the piece transitions before the next instruction, as one
//! parallel move: both read the state after the def and write the state before the next
//! instruction.

mod fixed_slots;
mod forward;
mod hoist;
mod join_stores;
pub(crate) mod parallel;
mod partial_dead;
mod redundant;
mod sink;

use crate::Stats;
use crate::analysis::Analyses;
use crate::analysis::intervals::reserved_at;
use crate::analysis::intervals::{before, group_keys, operand_points, point_inst};
use crate::assignment::Assignment;
use crate::lists::reset_span;
use fixed_slots::EarlyWrite;
use parallel::{ParallelMoves, ScratchSource};
use regalloc2::{
    Allocation, AllocationKind, Block, Edit, Function, Inst, MachineEnv, Operand,
    OperandConstraint, OperandKind, OperandPos, Output, PReg, PRegSet, ProgPoint, RegAllocError,
    RegClass, VReg,
};

/// Move groups at one `before(inst)` point, in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum MovePrio {
    InEdge = 0,
    Regular = 1,
    OperandCopy = 2,
    ReuseCopy = 3,
    OutEdge = 4,
}

#[derive(Clone, Copy, Debug)]
struct PendingMove {
    /// `ProgPoint` index << 8 | priority << 2 | class: sorting by it orders the groups,
    /// and the moves of one group (one parallel move) share it. One integer compared
    /// per step of the sort rather than a (key, class) pair.
    key: u64,
    class: RegClass,
    from: Allocation,
    to: Allocation,
    /// A copy of a value just defined into its home. It wins over a piece transition
    /// into the same location: the piece that covers the def point never received the
    /// value (the def went to a fixed or reload register).
    def_copy: bool,
}

#[derive(Default)]
pub(crate) struct EditsCtx {
    /// Per vreg: range into `pieces`.
    piece_range: Vec<(u32, u32)>,
    /// Where each vreg lives over its home pieces: (start, end, location), sorted.
    pieces: Vec<(u32, u32, Allocation)>,
    /// The register of each reload piece, as (instruction, vreg, is_def, register),
    /// sorted: operand allocation walks instructions in order with a cursor into it.
    reloads: Vec<(u32, u32, bool, PReg)>,
    /// Per vreg: its spill slot, if it has one and the slot is written right after the
    /// def (so it holds the value wherever the value is live, SSA making the def
    /// dominate every such point); moves into such a slot are redundant.
    stored_at_def: Vec<Option<Allocation>>,
    moves: Vec<PendingMove>,
    group: Vec<(Allocation, Allocation)>,
    resolved: Vec<(Allocation, Allocation)>,
    parallel: ParallelMoves,
    redundant: redundant::RedundantMoves,
    /// The environment's fixed stack slots (registers that are really memory), as a set:
    /// every move is classified against it.
    stack_regs: PRegSet,
    /// Per vreg: `loc_forward`'s position in `pieces`.
    cursor: Vec<u32>,
    /// Per vreg: the one location all its home pieces share, if they share one, else
    /// `Allocation::none()` (no piece is in none). See `uniform`.
    uniform_loc: Vec<Allocation>,
    /// Per block (by `scratch_offsets`): each live-in whose home pieces do not all share
    /// one location, with the index in `pieces` of the piece it is in at the block's
    /// start, in live-in order.
    scratch_locs: Vec<(VReg, u32)>,
    scratch_offsets: Vec<u32>,
    /// Spilled merge-block parameters received in a register and stored once at the
    /// block's start (`join_stores`), as (vreg, register), sorted by vreg.
    received: Vec<(u32, PReg)>,
    /// `join_receivers`' per-edge scratch.
    join_edges: Vec<join_stores::JoinEdge>,
    /// `join_receivers`' scratch: the register moves of one merge block's parameters.
    join_moves: Vec<join_stores::ParamMove>,
    hoist: hoist::HoistScratch,
    sink: sink::SinkScratch,
    partial_dead: partial_dead::PartialDeadScratch,
    /// Per spill slot: some move, operand or debug location reads it
    /// (`drop_unread_stores`).
    slot_read: Vec<bool>,
    /// The home pieces in fixed stack slots, as (slot, vreg, start, end), listed when
    /// `fixed_slots` first needs them in a function (`slot_pieces_listed`).
    slot_pieces: Vec<(PReg, u32, u32, u32)>,
    slot_pieces_listed: bool,
    /// Per fixed stack slot that some operand or clobber names: the one vreg whose uses
    /// alone name it, or `fixed_slots::SHARED` (listed with `slot_pieces`).
    slot_readers: Vec<(PReg, u32)>,
    /// The fixed stack slots written once after their reader's def, as (slot, vreg).
    slots_written_at_def: Vec<(PReg, u32)>,
    /// Work left this function for `fixed_slots::loop_leaves_slot` (blocks, instructions
    /// and pieces looked at), and the point ranges of the loop it checks.
    loop_check_budget: usize,
    loop_ranges: Vec<(u32, u32)>,
    /// The early writes made so far in this function outside the write at the def
    /// (`fixed_slots::EarlyWindow`), sorted by slot, and the work left for checking new
    /// ones against them.
    early_windows: Vec<fixed_slots::EarlyWindow>,
    early_check_budget: usize,
}

pub(crate) struct OutputBuilder<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub env: &'a MachineEnv,
    pub options: &'a crate::Options,
    pub an: &'a Analyses,
    pub a: &'a mut Assignment,
    pub ctx: &'a mut EditsCtx,
    pub stats: &'a mut Stats,
}

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    pub fn build(&mut self, out: &mut Output) -> Result<(), RegAllocError> {
        self.ctx.stack_regs = PRegSet::empty();
        for &r in &self.env.fixed_stack_slots {
            self.ctx.stack_regs.add(r);
        }
        self.ctx.slot_pieces_listed = false;
        self.ctx.slots_written_at_def.clear();
        self.ctx.loop_check_budget = fixed_slots::LOOP_CHECK_BUDGET;
        self.ctx.early_windows.clear();
        self.ctx.early_check_budget = fixed_slots::EARLY_CHECK_BUDGET;
        self.collect_pieces()?;
        self.collect_reloads();
        self.ctx.moves.clear();
        self.operand_allocations(out)?;
        self.find_uniform();
        self.join_receivers(out);
        self.stores_at_def(out);
        self.edge_moves(out)?;
        self.piece_transitions();
        self.resolve_moves(out)?;
        if self.options.redundant_moves {
            let t = crate::phase_clock(self.options);
            let removed = self.ctx.redundant.run(
                self.func,
                self.an,
                self.options.cross_block_redundant_moves,
                self.options.reload_from_copies,
                self.ctx.stack_regs,
                out,
            );
            self.stats.redundant_moves_removed = removed.total;
            self.stats.reloads_from_copies = removed.from_copies;
            self.stats.cross_block_redundant_moves_removed = removed.cross_block;
            self.stats.phases.since(crate::Phase::RedundantMoves, t);
        }
        // Debug locations come from the pieces alone; made first, they keep a slot they
        // name from losing its stores.
        self.debug_locations(out);
        if self.options.redundant_moves {
            self.stats.redundant_moves_removed += self.drop_unread_stores(out);
        }
        // Joins first: a move sunk into a join replaces one per predecessor, and hoisting
        // a move out of the successors of a branch that are those predecessors would
        // leave them nothing in common (meshoptimizer #0: 100k weighted units dearer
        // the other way round).
        if self.options.sink_common_moves {
            self.stats.sunk_moves = sink::sink_common_moves(
                self.func,
                &self.an.cfg,
                &self.an.freq,
                self.ctx.stack_regs,
                out,
                &mut self.ctx.sink,
            );
        }
        let kinds = hoist::Hoisted {
            stores: self.options.hoist_common_stores,
            others: self.options.hoist_common_moves,
        };
        if kinds.stores || kinds.others {
            let counts = hoist::hoist_common_moves(
                self.func,
                &self.an.cfg,
                self.ctx.stack_regs,
                kinds,
                out,
                &mut self.ctx.hoist,
            );
            self.stats.hoisted_stores = counts.stores;
            self.stats.hoisted_moves = counts.others;
        }
        // Last: the moves hoisted above are read by every successor, and the ones sunk
        // into joins by the join itself, so neither is partially dead.
        if self.options.sink_partially_dead_moves {
            let (sunk, dropped) = partial_dead::sink_partially_dead_moves(
                self.func,
                &self.an.cfg,
                &self.an.freq,
                out,
                &mut self.ctx.partial_dead,
            );
            self.stats.partially_dead_moves = sunk;
            self.stats.dead_moves_dropped = dropped;
        }
        // After every pass that moves edits together: they make the pairs it forwards.
        if self.options.forward_stores {
            self.stats.forwarded_stores = forward::forward_stores(out, self.ctx.stack_regs);
        }
        self.count_moves(out);
        out.num_spillslots = self.a.slots.num_slots();
        self.stats.spill_slots = out.num_spillslots;
        Ok(())
    }

    fn collect_pieces(&mut self) -> Result<(), RegAllocError> {
        let ctx = &mut *self.ctx;
        // Compared whole: `is_none` decodes the kind, with its panic check.
        let none = Allocation::none();
        if let Some(&(v, _)) = self.a.pieces.iter().find(|(_, (_, _, loc))| *loc == none) {
            return Err(broken(format_args!(
                "a piece of v{v} is neither in a register nor in a slot"
            )));
        }
        // A vreg's pieces are disjoint, so their starts are unique. Only a vreg the
        // function mentions has an interval, hence pieces.
        group_keys(
            &self.a.pieces,
            self.an.live.vreg_span(),
            self.an.live.mentioned(),
            &mut ctx.piece_range,
            &mut ctx.pieces,
            |run| run.sort_unstable_by_key(|&(s, _, _)| s),
        );
        Ok(())
    }

    fn collect_reloads(&mut self) {
        self.ctx.reloads.clear();
        self.ctx.reloads.extend(
            self.a
                .reloads
                .iter()
                .map(|r| (r.inst, r.vreg, r.is_def, r.reg)),
        );
        self.ctx
            .reloads
            .sort_unstable_by_key(|&(i, v, d, _)| (i, v, d));
    }

    /// The reload register of `v` at instruction `i` (its def side if `is_def`), if a
    /// reload piece serves it; `at` is the first entry of `reloads` at `i` or later.
    fn reload_at(&self, at: usize, i: usize, v: VReg, is_def: bool) -> Option<PReg> {
        self.ctx.reloads[at..]
            .iter()
            .take_while(|r| r.0 == i as u32)
            .find(|r| r.1 == v.vreg() as u32 && r.2 == is_def)
            .map(|r| r.3)
    }

    /// The location of `v`'s home at point `p`, if `v` is live there.
    fn loc(&self, v: VReg, p: u32) -> Option<Allocation> {
        let (a, b) = self.ctx.piece_range[v.vreg()];
        let pieces = &self.ctx.pieces[a as usize..b as usize];
        let i = pieces.partition_point(|&(_, e, _)| e <= p);
        pieces
            .get(i)
            .filter(|&&(s, _, _)| s <= p)
            .map(|&(_, _, a)| a)
    }

    fn push_move(
        &mut self,
        point: ProgPoint,
        prio: MovePrio,
        class: RegClass,
        from: Allocation,
        to: Allocation,
    ) {
        self.push(point, prio, class, (from, to), false);
    }

    fn push(
        &mut self,
        point: ProgPoint,
        prio: MovePrio,
        class: RegClass,
        (from, to): (Allocation, Allocation),
        def_copy: bool,
    ) {
        // A def copy that is a no-op still goes in: it shadows a stale transition into
        // the same location (the resolver drops the self-move itself).
        if from != to || def_copy {
            self.ctx.moves.push(PendingMove {
                key: ((point.to_index() as u64) << 8) | ((prio as u64) << 2) | class as u64,
                class,
                from,
                to,
                def_copy,
            });
        }
    }

    fn is_terminator(&self, inst: Inst) -> bool {
        self.func.is_branch(inst) || self.func.is_ret(inst)
    }

    /// After a def in a register other than the value's home: copy it home.
    fn copy_def_home(&mut self, inst: Inst, v: VReg, from: Allocation) {
        if self.is_terminator(inst) {
            // Edge moves read the def's register directly (`loc_at_end`).
            return;
        }
        // In the same parallel group as the piece transitions at the next instruction:
        // the home may be a register another piece leaves only at that point.
        if let Some(home) = self.loc(v, before(inst) + 2) {
            self.push(
                ProgPoint::before(inst.next()),
                MovePrio::Regular,
                v.class(),
                (from, home),
                true,
            );
        }
    }

    /// An operand served by a register that is not the value's home (a fixed register, a
    /// reload piece): copy the value in before the instruction, or home after it.
    fn connect_operand_register(
        &mut self,
        inst: Inst,
        v: VReg,
        first: u32,
        is_def: bool,
        reg: Allocation,
    ) -> Result<Allocation, RegAllocError> {
        if is_def {
            self.copy_def_home(inst, v, reg);
        } else {
            let home = self
                .loc(v, first)
                .ok_or_else(|| broken(format_args!("{v} has no home at point {first}")))?;
            self.push_move(
                ProgPoint::before(inst),
                MovePrio::OperandCopy,
                v.class(),
                home,
                reg,
            );
        }
        Ok(reg)
    }

    fn operand_allocations(&mut self, out: &mut Output) -> Result<(), RegAllocError> {
        out.allocs.clear();
        out.inst_alloc_offsets.clear();
        // Sized once, and filled once rather than per instruction: `Output` is the
        // caller's, new for each function, and liveness counted every operand.
        out.allocs
            .resize(self.an.live.num_operands, Allocation::none());
        out.inst_alloc_offsets.reserve_exact(self.func.num_insts());
        let mut at = 0;
        let mut next = 0;
        for i in 0..self.func.num_insts() {
            while self.ctx.reloads.get(at).is_some_and(|r| (r.0 as usize) < i) {
                at += 1;
            }
            let inst = Inst::new(i);
            let ops = self.func.inst_operands(inst);
            let base = next;
            next += ops.len();
            out.inst_alloc_offsets.push(base as u32);
            if next > out.allocs.len() {
                out.allocs.resize(next, Allocation::none());
            }
            let mut has_reuse = false;
            for (k, &op) in ops.iter().enumerate() {
                // The constraint decoded once per operand (a chain of tests on its bits).
                let constraint = op.constraint();
                let v = op.vreg();
                if let OperandConstraint::FixedReg(p) = constraint
                    && v.vreg() == VReg::MAX
                {
                    debug_assert_eq!(op.as_fixed_nonallocatable(), Some(p));
                    out.allocs[base + k] = Allocation::reg(p);
                    continue;
                }
                let is_def = op.kind() == OperandKind::Def;
                let first = first_point(inst, op);
                let alloc = match constraint {
                    OperandConstraint::Reuse(_) => {
                        has_reuse = true;
                        continue;
                    }
                    OperandConstraint::FixedReg(p)
                        if !is_def
                            && self.options.early_fixed_slot_writes
                            && self.ctx.stack_regs.contains(p)
                            && self.loc(v, first).is_some_and(|home| {
                                // A home in the fixed slot itself needs no write.
                                home != Allocation::reg(p)
                                    && is_stack_alloc(&self.ctx.stack_regs, home)
                            }) =>
                    {
                        let to = Allocation::reg(p);
                        match self.early_fixed_slot_source(out, inst, v, p) {
                            Some(EarlyWrite::Written) => to,
                            Some(EarlyWrite::At(at, from)) => {
                                let point = ProgPoint::before(point_inst(at));
                                log::debug!(
                                    "{v}: fixed stack slot {p} written at {point:?} from {from} \
                                     for its use at {inst:?} (not from {:?} there)",
                                    self.loc(v, first)
                                );
                                self.push_move(point, MovePrio::Regular, v.class(), from, to);
                                self.stats.early_fixed_slot_writes += 1;
                                to
                            }
                            None => self.connect_operand_register(inst, v, first, false, to)?,
                        }
                    }
                    OperandConstraint::FixedReg(p) => {
                        self.connect_operand_register(inst, v, first, is_def, Allocation::reg(p))?
                    }
                    OperandConstraint::Reg | OperandConstraint::Limit(_) => {
                        match self.reload_at(at, i, v, is_def) {
                            Some(r) => self.connect_operand_register(
                                inst,
                                v,
                                first,
                                is_def,
                                Allocation::reg(r),
                            )?,
                            None => self.loc(v, first).ok_or_else(|| {
                                broken(format_args!("{v} has no location at point {first}"))
                            })?,
                        }
                    }
                    OperandConstraint::Any | OperandConstraint::Stack => {
                        self.loc(v, first).ok_or_else(|| {
                            broken(format_args!("{v} has no location at point {first}"))
                        })?
                    }
                };
                out.allocs[base + k] = alloc;
            }
            if !has_reuse {
                continue;
            }
            // Reuse defs last: they overwrite their input operand's allocation.
            for (k, &op) in ops.iter().enumerate() {
                let OperandConstraint::Reuse(j) = op.constraint() else {
                    continue;
                };
                let v = op.vreg();
                let first = first_point(inst, op);
                let r = match self.reload_at(at, i, v, true) {
                    Some(r) => {
                        let r = Allocation::reg(r);
                        self.copy_def_home(inst, v, r);
                        r
                    }
                    None => self.loc(v, first).ok_or_else(|| {
                        broken(format_args!(
                            "reuse def {v} has no location at point {first}"
                        ))
                    })?,
                };
                if !r.is_reg() {
                    return Err(broken(format_args!(
                        "reuse def {v} at {inst:?} is not in a register"
                    )));
                }
                out.allocs[base + k] = r;
                out.allocs[base + j] = r;
                let input = ops[j].vreg();
                let src = self.loc(input, before(inst)).ok_or_else(|| {
                    broken(format_args!(
                        "reused input {input} has no location at {inst:?}"
                    ))
                })?;
                self.push_move(
                    ProgPoint::before(inst),
                    MovePrio::ReuseCopy,
                    v.class(),
                    src,
                    r,
                );
            }
        }
        debug_assert_eq!(next, out.allocs.len());
        out.allocs.truncate(next);
        Ok(())
    }

    /// Where `v` is when control leaves block `b`.
    fn loc_at_end(&self, out: &Output, b: Block, v: VReg) -> Option<Allocation> {
        let last = self.func.block_insns(b).last();
        if self.an.live.def_inst(v) == Some(last) {
            let site = self
                .an
                .intervals
                .uses_of(v)
                .iter()
                .find(|u| u.inst == last && u.is_def())?;
            return Some(
                out.allocs[out.inst_alloc_offsets[last.index()] as usize + site.slot as usize],
            );
        }
        self.loc(v, before(last) + 1)
    }

    /// `loc(v, p)` for points that only grow from one call to the next for the same
    /// vreg: a cursor per vreg walks its pieces forward instead of a binary search per
    /// call (edge moves ask for every live-in value at every block boundary, in block
    /// order, and a value live across the function has a piece per block).
    fn loc_forward(&mut self, v: VReg, p: u32) -> Option<Allocation> {
        self.piece_forward(v, p)
            .map(|k| self.ctx.pieces[k as usize].2)
    }

    /// `loc_forward`, as the index in `pieces` of the piece that covers `p`.
    fn piece_forward(&mut self, v: VReg, p: u32) -> Option<u32> {
        let (a, b) = self.ctx.piece_range[v.vreg()];
        let c = &mut self.ctx.cursor[v.vreg()];
        let mut i = (*c).max(a);
        while i < b && self.ctx.pieces[i as usize].1 <= p {
            i += 1;
        }
        *c = i;
        let (s, _, _) = *self.ctx.pieces.get(i as usize)?;
        (i < b && s <= p).then_some(i)
    }

    /// `loc_at_end` through `loc_forward`: `b` must not decrease from one call to the
    /// next. `last` is `b`'s last instruction and `last_defines` whether it has a def
    /// operand (without one it defines no value), both found once per block by the
    /// caller.
    #[inline]
    fn loc_at_end_forward(
        &mut self,
        out: &Output,
        (b, last, last_defines): (Block, Inst, bool),
        v: VReg,
    ) -> Option<Allocation> {
        debug_assert_eq!(last, self.func.block_insns(b).last());
        if last_defines && self.an.live.def_inst(v) == Some(last) {
            return self.loc_at_end(out, b, v);
        }
        self.loc_forward(v, before(last) + 1)
    }

    /// A move per CFG edge and value live into the successor, and per block parameter.
    /// Each (point, priority) group of edge moves belongs to one edge (a merge block's
    /// predecessors have one successor, so their out-edge groups are theirs alone), so
    /// the order edges are visited in does not change the output; they are visited twice
    /// in block order, so that a cursor per vreg replaces the binary search per lookup:
    /// first by successor (the location at its start), then by predecessor (at its end).
    fn edge_moves(&mut self, out: &Output) -> Result<(), RegAllocError> {
        let f = self.func;
        let entry = f.entry_block();
        let nb = f.num_blocks();
        let mut tos = std::mem::take(&mut self.ctx.scratch_locs);
        let mut tos_at = std::mem::take(&mut self.ctx.scratch_offsets);
        tos.clear();
        tos_at.clear();
        self.reset_cursors();
        for s in 0..nb {
            let succ = Block::new(s);
            tos_at.push(tos.len() as u32);
            if f.block_preds(succ).is_empty() {
                continue;
            }
            let start = before(f.block_insns(succ).first());
            for &v in &self.an.live.livein[s] {
                if self.uniform(v).is_some() {
                    continue;
                }
                let to = self.piece_forward(v, start).ok_or_else(|| {
                    broken(format_args!(
                        "live-in {v} has no location at the start of {succ:?}"
                    ))
                })?;
                tos.push((v, to));
            }
        }
        tos_at.push(tos.len() as u32);
        self.reset_cursors();
        for p in 0..nb {
            let pred = Block::new(p);
            let last = f.block_insns(pred).last();
            // Only a value the branch defines can need a move while its home pieces
            // share one location; without such defs the edge's moves are those of the
            // values listed in `tos`.
            let last_defines = f
                .inst_operands(last)
                .iter()
                .any(|op| op.kind() == OperandKind::Def);
            let leaving = (pred, last, last_defines);
            for (succ_idx, &succ) in f.block_succs(pred).iter().enumerate() {
                let s = succ.index();
                let preds = f.block_preds(succ);
                let start = before(f.block_insns(succ).first());
                let (point, prio) = if preds.len() == 1 && succ != entry {
                    (
                        ProgPoint::before(f.block_insns(succ).first()),
                        MovePrio::InEdge,
                    )
                } else {
                    (ProgPoint::before(last), MovePrio::OutEdge)
                };
                let mut at = tos_at[s] as usize;
                if last_defines {
                    for &v in self.an.live.livein[s].iter() {
                        // Decided by the walk over successors above.
                        let to = if let Some(home) = self.uniform(v) {
                            if self.an.live.def_inst(v) != Some(last) {
                                continue;
                            }
                            home
                        } else {
                            at += 1;
                            self.ctx.pieces[tos[at - 1].1 as usize].2
                        };
                        self.edge_move(out, leaving, v, to, point, prio)?;
                    }
                } else {
                    // The branch defines nothing, so a value is where its home is at the
                    // end: if the piece it enters the successor in also covers that point,
                    // the edge needs no move (the common case, not worth a lookup).
                    let end = before(last) + 1;
                    for &(v, k) in &tos[at..tos_at[s + 1] as usize] {
                        let (ps, pe, to) = self.ctx.pieces[k as usize];
                        if ps <= end && end < pe {
                            debug_assert_eq!(self.loc(v, end), Some(to));
                            continue;
                        }
                        self.edge_move(out, leaving, v, to, point, prio)?;
                    }
                }
                let params = f.block_params(succ);
                if params.is_empty() {
                    continue;
                }
                let args = f.branch_blockparams(pred, last, succ_idx);
                for (&param, &arg) in params.iter().zip(args) {
                    let Some(mut to) = self.loc(param, start) else {
                        continue;
                    };
                    // Only a parameter whose home there is its slot can be received in
                    // a register (`join_receivers`).
                    if to.is_stack()
                        && let Some(r) = self.received_in(param)
                    {
                        to = Allocation::reg(r);
                    }
                    // Never skipped: this move is the parameter's definition.
                    let from = self.loc_at_end_forward(out, leaving, arg).ok_or_else(|| {
                        broken(format_args!(
                            "branch argument {arg} has no location at the end of {pred:?}"
                        ))
                    })?;
                    self.push_move(point, prio, param.class(), from, to);
                }
            }
        }
        self.ctx.scratch_locs = tos;
        self.ctx.scratch_offsets = tos_at;
        Ok(())
    }

    /// The move of live-in `v` into `to` on the edge leaving `pred`, unless `to` is the
    /// slot that holds `v` since its def.
    #[inline]
    fn edge_move(
        &mut self,
        out: &Output,
        leaving: (Block, Inst, bool),
        v: VReg,
        to: Allocation,
        point: ProgPoint,
        prio: MovePrio,
    ) -> Result<(), RegAllocError> {
        let pred = leaving.0;
        let from = self.loc_at_end_forward(out, leaving, v).ok_or_else(|| {
            broken(format_args!(
                "live-in {v} has no location at the end of {pred:?}"
            ))
        })?;
        if !self.slot_holds(v, to) {
            self.push_move(point, prio, v.class(), from, to);
        }
        Ok(())
    }

    /// The one location all of `v`'s home pieces share, if they share one. Such a value
    /// is where every edge wants it (unless a block ends with its def, where
    /// `loc_at_end` reads the def operand instead): edge moves skip it without a lookup.
    #[inline]
    fn uniform(&self, v: VReg) -> Option<Allocation> {
        let l = self.ctx.uniform_loc[v.vreg()];
        (l != Allocation::none()).then_some(l)
    }

    /// Fills `uniform_loc` for the vregs of the span. Only a value live into some block is ever
    /// asked about (most are live into none), and each is asked about once per block it
    /// is live into, twice: so decided up front, once.
    fn find_uniform(&mut self) {
        let ctx = &mut *self.ctx;
        let span = self.an.live.vreg_span();
        reset_span(&mut ctx.uniform_loc, span.end, span, Allocation::none());
        let live = &self.an.live;
        for v in live.mentioned() {
            if live.livein_count[v] == 0 {
                continue;
            }
            let (a, b) = ctx.piece_range[v];
            let run = &ctx.pieces[a as usize..b as usize];
            if let Some(&(_, _, first)) = run.first()
                && run[1..].iter().all(|&(_, _, l)| l == first)
            {
                ctx.uniform_loc[v] = first;
            }
        }
    }

    fn reset_cursors(&mut self) {
        let span = self.an.live.vreg_span();
        reset_span(&mut self.ctx.cursor, span.end, span, 0);
    }

    /// Is `to` the slot of `v`, already holding it since its def?
    fn slot_holds(&self, v: VReg, to: Allocation) -> bool {
        self.ctx.stored_at_def[v.vreg()] == Some(to)
    }

    /// Spill-at-def: a vreg with a spill slot gets it written right after its def, so
    /// later moves into the slot can be dropped. Only where the def point allows it: a
    /// def on a terminator has no room after it, so such a vreg keeps its moves.
    fn stores_at_def(&mut self, out: &Output) {
        let span = self.an.live.vreg_span();
        reset_span(&mut self.ctx.stored_at_def, span.end, span, None);
        // Only values the allocator marked can have a slot: a walk over those instead
        // of every vreg, in the same (increasing) order.
        for k in 0..self.a.slots.marked().len() {
            let v = self.a.slots.marked()[k] as usize;
            let Some(class) = self.an.live.class[v] else {
                continue;
            };
            let vreg = VReg::new(v, class);
            let Some(slot) = self.a.slots.slot_of(vreg) else {
                continue;
            };
            if let Some(inst) = self.an.live.def_inst(vreg) {
                if self.is_terminator(inst) {
                    continue;
                }
                let Some(site) = self
                    .an
                    .intervals
                    .uses_of(vreg)
                    .iter()
                    .find(|u| u.inst == inst && u.is_def())
                else {
                    continue;
                };
                let written =
                    out.allocs[out.inst_alloc_offsets[inst.index()] as usize + site.slot as usize];
                let home = self.loc(vreg, before(inst) + 2);
                // Same group as the copy home and the piece transitions after the def; an
                // identical copy home is merged with it, a transition into the slot from a
                // piece that never got the value is shadowed by it.
                if written != slot && home.is_some() {
                    self.push(
                        ProgPoint::before(inst.next()),
                        MovePrio::Regular,
                        class,
                        (written, slot),
                        true,
                    );
                }
            } else {
                let block = self.an.live.def_block[v];
                if !block.is_valid() {
                    continue;
                }
                let first = self.func.block_insns(block).first();
                // A parameter received in a register (`join_receivers`) is stored from it.
                let home = match self.received_in(vreg) {
                    Some(r) => Some(Allocation::reg(r)),
                    None => self.loc(vreg, before(first)),
                };
                match home {
                    Some(home) if home != slot => self.push_move(
                        ProgPoint::before(first),
                        MovePrio::Regular,
                        class,
                        home,
                        slot,
                    ),
                    _ => {}
                }
            }
            self.ctx.stored_at_def[v] = Some(slot);
        }
    }

    /// Moves between consecutive pieces of one value inside a block.
    fn piece_transitions(&mut self) {
        let cfg = &self.an.cfg;
        // Only a vreg with pieces (one the function mentions) can have a transition.
        for v in self.an.live.mentioned() {
            let (a, b) = self.ctx.piece_range[v];
            if b - a < 2 {
                continue;
            }
            log::trace!("v{v} pieces {:?}", &self.ctx.pieces[a as usize..b as usize]);
            for k in a as usize + 1..b as usize {
                let (_, prev_end, from) = self.ctx.pieces[k - 1];
                let (start, _, to) = self.ctx.pieces[k];
                if prev_end != start || from == to {
                    continue;
                }
                if cfg.block_of(point_inst(prev_end - 1)) != cfg.block_of(point_inst(start)) {
                    continue;
                }
                // A region split may cut a piece inside an instruction (after an early use,
                // before a call's clobber) only where the slot, written at the def, takes
                // over: that transition is dropped, and no other may be inside one.
                if self.ctx.stored_at_def[v] == Some(to) {
                    continue;
                }
                debug_assert!(start % 2 == 0, "piece boundary inside an instruction");
                let class = self.an.live.class[v].unwrap_or(RegClass::Int);
                self.push_move(
                    ProgPoint::before(point_inst(start)),
                    MovePrio::Regular,
                    class,
                    from,
                    to,
                );
            }
        }
    }

    fn resolve_moves(&mut self, out: &mut Output) -> Result<(), RegAllocError> {
        let mut moves = std::mem::take(&mut self.ctx.moves);
        // Stable: a group's moves keep the order they were pushed in.
        moves.sort_by_key(|m| m.key);
        out.edits.clear();
        let mut group = std::mem::take(&mut self.ctx.group);
        let mut resolved = std::mem::take(&mut self.ctx.resolved);
        let mut parallel = std::mem::take(&mut self.ctx.parallel);
        let mut ok = true;
        let mut i = 0;
        while i < moves.len() {
            let (key, class) = (moves[i].key, moves[i].class);
            group.clear();
            let start = i;
            while i < moves.len() && moves[i].key == key {
                i += 1;
            }
            let same = &moves[start..i];
            let point = ProgPoint::from_index((key >> 8) as u32);
            // The common group, one move that no other move can block: emitted as the
            // resolver would (nothing for a self-move, a stack-to-stack move needs it).
            if let [m] = same
                && !(is_stack_alloc(&self.ctx.stack_regs, m.from)
                    && is_stack_alloc(&self.ctx.stack_regs, m.to))
            {
                if m.from != m.to {
                    out.edits.push((
                        point,
                        Edit::Move {
                            from: m.from,
                            to: m.to,
                        },
                    ));
                }
                continue;
            }
            for m in same {
                let shadowed = !m.def_copy && same.iter().any(|n| n.def_copy && n.to == m.to);
                if !shadowed {
                    group.push((m.from, m.to));
                }
            }
            let mut scratch = Scratch {
                func: self.func,
                an: self.an,
                a: &mut *self.a,
                env: self.env,
                stack_regs: &self.ctx.stack_regs,
                point,
                failed: false,
            };
            resolved.clear();
            parallel.resolve(class, &group, &mut scratch, &mut resolved);
            ok &= !scratch.failed;
            for &(from, to) in &resolved {
                out.edits.push((point, Edit::Move { from, to }));
            }
        }
        self.ctx.moves = moves;
        self.ctx.group = group;
        self.ctx.resolved = resolved;
        self.ctx.parallel = parallel;
        if ok {
            Ok(())
        } else {
            Err(RegAllocError::TooManyLiveRegs)
        }
    }

    /// Drops every store into a spill slot that nothing reads: no move, operand or debug
    /// location names it. A value written to its slot at its def whose every load the
    /// redundant-move pass removed (its register still held it each time, a callee-saved
    /// one across calls, say) leaves such a store. Returns how many were dropped.
    fn drop_unread_stores(&mut self, out: &mut Output) -> usize {
        let read = &mut self.ctx.slot_read;
        read.clear();
        fn mark(read: &mut Vec<bool>, a: Allocation) {
            if let Some(slot) = a.as_stack() {
                let i = slot.index();
                if read.len() <= i {
                    read.resize(i + 1, false);
                }
                read[i] = true;
            }
        }
        for (_, Edit::Move { from, .. }) in &out.edits {
            mark(read, *from);
        }
        let unread = |read: &[bool], to: Allocation| {
            to.as_stack()
                .is_some_and(|slot| !read.get(slot.index()).copied().unwrap_or(false))
        };
        // Most slots are read by some load: the operands are looked at only when a
        // store's slot is not.
        if !out
            .edits
            .iter()
            .any(|(_, Edit::Move { to, .. })| unread(read, *to))
        {
            return 0;
        }
        for &a in &out.allocs {
            mark(read, a);
        }
        for &(_, _, _, a) in &out.debug_locations {
            mark(read, a);
        }
        let before = out.edits.len();
        out.edits
            .retain(|(_, Edit::Move { to, .. })| !unread(read, *to));
        before - out.edits.len()
    }

    fn count_moves(&mut self, out: &Output) {
        for (_, Edit::Move { from, to }) in &out.edits {
            match (
                is_stack_alloc(&self.ctx.stack_regs, *from),
                is_stack_alloc(&self.ctx.stack_regs, *to),
            ) {
                (false, true) => self.stats.spill_stores += 1,
                (true, false) => self.stats.reloads += 1,
                _ => self.stats.moves_inserted += 1,
            }
        }
    }

    fn debug_locations(&mut self, out: &mut Output) {
        out.debug_locations.clear();
        let ni = self.func.num_insts() as u32;
        for &(v, from, to, label) in self.func.debug_value_labels() {
            if !self.an.live.in_span(v) || from.index() as u32 > ni || to.index() as u32 > ni {
                continue;
            }
            let (lo, hi) = (2 * from.index() as u32, 2 * to.index() as u32);
            let (a, b) = self.ctx.piece_range[v.vreg()];
            for &(s, e, alloc) in &self.ctx.pieces[a as usize..b as usize] {
                let (s, e) = (s.max(lo), e.min(hi));
                if s < e {
                    out.debug_locations.push((
                        label,
                        ProgPoint::from_index(s),
                        ProgPoint::from_index(e),
                        alloc,
                    ));
                }
            }
        }
        out.debug_locations.sort_by_key(|&(l, s, e, _)| (l, s, e));
        // Keep each label's ranges disjoint: a later range starts where the earlier ends.
        let mut kept = 0;
        for i in 0..out.debug_locations.len() {
            let mut cur = out.debug_locations[i];
            if kept > 0 {
                let prev = out.debug_locations[kept - 1];
                if prev.0 == cur.0 && cur.1 < prev.2 {
                    if cur.2 <= prev.2 {
                        continue;
                    }
                    cur.1 = prev.2;
                }
            }
            out.debug_locations[kept] = cur;
            kept += 1;
        }
        out.debug_locations.truncate(kept);
    }
}

/// The first point at which `op` of `inst` needs its value: `operand_points`' first,
/// which does not depend on the instruction's reused input (only the last point does).
#[inline]
fn first_point(inst: Inst, op: Operand) -> u32 {
    let first =
        before(inst) + u32::from(op.kind() == OperandKind::Def && op.pos() == OperandPos::Late);
    debug_assert_eq!(first, operand_points(inst, op, None).0);
    first
}

/// The edits of each block that has any, in one pass over `edits` (sorted by point):
/// `(block, start, last, end)`, where `start..last` are the edits before the point before
/// the block's last instruction and `last..end` those at that point (the moves right
/// before its branch or jump). Edits after that point (none follow a branch) are passed
/// over.
fn block_edit_runs<'a, F: Function + ?Sized>(
    func: &'a F,
    cfg: &'a crate::analysis::cfg::Cfg,
    edits: &'a [(ProgPoint, Edit)],
) -> impl Iterator<Item = (Block, usize, usize, usize)> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let (at, _) = edits.get(i)?;
        let b = cfg.block_of(at.inst());
        let before_last = ProgPoint::before(func.block_insns(b).last());
        let start = i;
        while i < edits.len() && edits[i].0 < before_last {
            i += 1;
        }
        let last = i;
        while i < edits.len() && edits[i].0 == before_last {
            i += 1;
        }
        let end = i;
        while i < edits.len() && cfg.block_of(edits[i].0.inst()) == b {
            i += 1;
        }
        Some((b, start, last, end))
    })
}

/// May a move `from -> to` not cross instruction `inst` (hoisted or sunk past it)? It may
/// not if the instruction names the destination as an operand (it would read or write
/// the wrong value), writes the source, or clobbers a register of the move.
fn inst_blocks_move<F: Function + ?Sized>(
    func: &F,
    out: &Output,
    inst: Inst,
    from: Allocation,
    to: Allocation,
) -> bool {
    let ops = func.inst_operands(inst);
    let allocs = &out.allocs[out.inst_alloc_offsets[inst.index()] as usize..];
    let clobbers = func.inst_clobbers(inst);
    ops.iter()
        .zip(allocs)
        .any(|(op, &a)| a == to || (op.kind() == OperandKind::Def && a == from))
        || [from, to]
            .iter()
            .any(|a| a.as_reg().is_some_and(|r| clobbers.contains(r)))
}

/// May a move `from -> to` not cross the edit `Move { from: f, to: t }`? It may not if
/// the edit writes the move's source or destination or reads its destination.
fn edit_blocks_move(f: Allocation, t: Allocation, from: Allocation, to: Allocation) -> bool {
    t == from || t == to || f == to
}

/// Rewrites `edits` without the edits at the indices `dropped` (sorted, distinct) and
/// with each of `added` (sorted by index) inserted before the edit at its index (at the
/// end for the length), through `scratch`; the runs between changes are copied whole.
fn splice_edits(
    edits: &mut Vec<(ProgPoint, Edit)>,
    dropped: &[usize],
    added: &[(usize, ProgPoint, Edit)],
    scratch: &mut Vec<(ProgPoint, Edit)>,
) {
    debug_assert!(dropped.windows(2).all(|w| w[0] < w[1]));
    debug_assert!(added.is_sorted_by_key(|&(i, _, _)| i));
    scratch.clear();
    scratch.reserve(edits.len() + added.len() - dropped.len());
    let (mut d, mut a, mut from) = (0, 0, 0);
    loop {
        let next = dropped
            .get(d)
            .copied()
            .unwrap_or(usize::MAX)
            .min(added.get(a).map_or(usize::MAX, |x| x.0));
        if next == usize::MAX {
            break;
        }
        scratch.extend_from_slice(&edits[from..next]);
        from = next;
        while a < added.len() && added[a].0 == next {
            scratch.push((added[a].1, added[a].2.clone()));
            a += 1;
        }
        if d < dropped.len() && dropped[d] == next {
            d += 1;
            from = next + 1;
        }
    }
    scratch.extend_from_slice(&edits[from..]);
    std::mem::swap(edits, scratch);
    debug_assert!(edits.is_sorted_by_key(|&(p, _)| p));
}

/// An internal invariant broke (a value with no location where it is needed). In debug
/// builds (tests, fuzzing) that panics with what broke, so it is never mistaken for an
/// over-constrained input; in release the allocation fails with the error a caller
/// already handles.
#[cold]
fn broken(what: std::fmt::Arguments<'_>) -> RegAllocError {
    if cfg!(debug_assertions) {
        panic!("edit builder: internal inconsistency: {what}");
    }
    RegAllocError::TooManyLiveRegs
}

#[inline]
fn is_stack_alloc(stack_regs: &PRegSet, a: Allocation) -> bool {
    // The kind decoded once (`is_stack` and `as_reg` would each decode it).
    match a.kind() {
        AllocationKind::Stack => true,
        AllocationKind::Reg => stack_regs.contains(PReg::from_index(a.index())),
        AllocationKind::None => false,
    }
}

/// The program points whose occupants must survive a move group at `point`: the ones
/// just before and after it, within the same block.
fn points_around<F: Function + ?Sized>(
    func: &F,
    an: &Analyses,
    point: ProgPoint,
) -> [Option<u32>; 2] {
    let idx = point.to_index();
    let cfg = &an.cfg;
    let same_block = |a: u32, b: u32| {
        (b as usize) < 2 * func.num_insts()
            && cfg.block_of(point_inst(a)) == cfg.block_of(point_inst(b))
    };
    match point.pos() {
        regalloc2::InstPosition::Before => {
            let prev = (idx > 0 && same_block(idx - 1, idx)).then(|| idx - 1);
            [prev, Some(idx)]
        }
        regalloc2::InstPosition::After => {
            let next = same_block(idx, idx + 1).then_some(idx + 1);
            [Some(idx), next]
        }
    }
}

/// Whether no value holds `r` and no fixed operand or clobber reserves it at any of
/// `points` (those of a move group, `points_around`): free for a temporary there.
fn unheld_at(a: &mut Assignment, an: &Analyses, r: PReg, points: &[Option<u32>; 2]) -> bool {
    points
        .iter()
        .flatten()
        .all(|&p| !a.is_held(r, p) && !reserved_at(&an.intervals.fixed[r.index()], p))
}

struct Scratch<'a, F: Function + ?Sized> {
    func: &'a F,
    an: &'a Analyses,
    a: &'a mut Assignment,
    env: &'a MachineEnv,
    stack_regs: &'a PRegSet,
    /// Where the move group is; the points around it are found only if a temporary
    /// register is asked for (most groups need none).
    point: ProgPoint,
    failed: bool,
}

impl<F: Function + ?Sized> ScratchSource for Scratch<'_, F> {
    fn free_reg(&mut self, class: RegClass, busy: &[Allocation]) -> Option<PReg> {
        if let Some(r) = self.env.scratch_by_class[class as usize] {
            return Some(r);
        }
        let points = points_around(self.func, self.an, self.point);
        let (a, an) = (&mut *self.a, self.an);
        for k in 0..a.order[class as usize].len() {
            let r = a.order[class as usize][k];
            if !busy.contains(&Allocation::reg(r)) && unheld_at(a, an, r, &points) {
                return Some(r);
            }
        }
        None
    }

    fn emergency_slot(&mut self, class: RegClass, which: usize) -> Allocation {
        Allocation::stack(self.a.slots.emergency(self.func, class, which))
    }

    fn victim_reg(&mut self, class: RegClass, busy: &[Allocation]) -> PReg {
        let order = &self.a.order[class as usize];
        match order
            .iter()
            .find(|&&r| !busy.contains(&Allocation::reg(r)))
            .or(order.first())
        {
            Some(&r) => r,
            None => {
                self.failed = true;
                PReg::invalid()
            }
        }
    }

    fn is_stack(&self, a: Allocation) -> bool {
        is_stack_alloc(self.stack_regs, a)
    }
}

#[cfg(test)]
mod tests {
    use super::splice_edits;
    use regalloc2::{Allocation, Edit, Inst, PReg, ProgPoint, RegClass};

    /// `splice_edits` against a plain rebuild, an edit at a time, on random edit lists
    /// with random drops and insertions (several at one index, some at the end).
    #[test]
    fn splice_matches_a_plain_rebuild() {
        let mut next = crate::tests::xorshift(0x5eed_cafe);
        let reg = |i: u64| Allocation::reg(PReg::new(i as usize % 16, RegClass::Int));
        for _ in 0..500 {
            let n = next(12) as usize;
            let edits: Vec<(ProgPoint, Edit)> = (0..n)
                .map(|i| {
                    let at = ProgPoint::before(Inst::new(i));
                    let mv = Edit::Move {
                        from: reg(next(16)),
                        to: reg(next(16)),
                    };
                    (at, mv)
                })
                .collect();
            let dropped: Vec<usize> = (0..n).filter(|_| next(3) == 0).collect();
            let mut added: Vec<(usize, ProgPoint, Edit)> = (0..next(5))
                .map(|_| {
                    let i = next(n as u64 + 1) as usize;
                    // A point that keeps the result sorted: just before edit i's.
                    let at = if i == 0 {
                        ProgPoint::before(Inst::new(0))
                    } else {
                        ProgPoint::before(Inst::new(i)).prev()
                    };
                    (
                        i,
                        at,
                        Edit::Move {
                            from: reg(next(16)),
                            to: reg(next(16)),
                        },
                    )
                })
                .collect();
            added.sort_by_key(|&(i, _, _)| i);
            let mut plain = Vec::new();
            for (i, e) in edits.iter().enumerate() {
                for a in added.iter().filter(|a| a.0 == i) {
                    plain.push((a.1, a.2.clone()));
                }
                if !dropped.contains(&i) {
                    plain.push(e.clone());
                }
            }
            for a in added.iter().filter(|a| a.0 == n) {
                plain.push((a.1, a.2.clone()));
            }
            let mut spliced = edits.clone();
            splice_edits(&mut spliced, &dropped, &added, &mut Vec::new());
            let flat = |v: &[(ProgPoint, Edit)]| -> Vec<(ProgPoint, Allocation, Allocation)> {
                v.iter()
                    .map(|(at, Edit::Move { from, to })| (*at, *from, *to))
                    .collect()
            };
            assert_eq!(flat(&spliced), flat(&plain));
        }
    }
}
