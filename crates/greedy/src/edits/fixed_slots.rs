//! Fixed stack slots written early (`Options::early_fixed_slot_writes`): a use fixed to
//! a fixed stack slot (a stack-passed argument, say) whose value is in a stack location
//! at the use is served by a slot-to-slot move, which the resolver routes through a
//! register it must find free or borrow (saved and restored around the move). Instead,
//! the slot is written from a register the value sat in earlier: one store, no borrowed
//! register. This is where ion's bundle for such a value ends up: it lives in the fixed
//! slot itself from the point its register piece ends.
//!
//! Two places are tried. When the value's uses are all that name the slot in the whole
//! function (no def, clobber or non-allocatable operand names it, no other value's piece
//! lives in it), the slot is written once, right after the def, and every use of it
//! reads it there: a use inside a loop whose value was defined before it then pays
//! nothing in the loop. Otherwise, the value's register is searched for earlier in the
//! use's block, or in that block's only predecessor, and the slot is written there if
//! nothing touches it in between.
//!
//! Why the write at the def is right: SSA makes the one def dominate every use (the
//! write is not made in a function that allows a vreg several defs), the write copies
//! the value from the register the def left it in, and nothing else in the function
//! writes the slot (the resolver's temporaries are allocatable registers, never a fixed
//! stack slot), so the slot holds the value at each use; on paths with no use, nothing
//! reads the slot. It is made only when the def's block is no more frequent than the
//! use's, so the one store costs at most the move it replaces at that use.
//!
//! Why a write in the use's block or its predecessor is right: it reads the register in
//! the parallel move right after the instruction that left the value in it (the value's
//! def into it, or the end of a register piece covering the point after that
//! instruction), so it copies the value. From there to the use, no operand names the
//! fixed slot, no operand was given it, no clobber lists it and no other value's piece
//! lives in it, so it still holds the value at the use. Written in the predecessor, it
//! also runs on the paths into the predecessor's other successors; there no value's
//! piece is in the slot at the predecessor's end and no non-allocatable operand of the
//! function names the slot, so nothing reads what the write left before writing the
//! slot itself. The predecessor must be no more frequent than the use's block, so the
//! store costs at most what the move it replaces cost.
//!
//! That last argument holds only if no other value's early write of the same slot is
//! made where this one must still hold, or this one where another's must: a write in
//! the predecessor runs on the path to its other successors, where another value's use
//! of the slot may rely on an earlier early write in the same block (two calls passing
//! different values in one stack slot, one on each side of a branch; found by `ragreedy
//! stress`, `tests/cases/seed-97180304-*`). So each early write records its window, the
//! points from the write to the use (and, for a loop header's use, the loop), and a
//! new one is made only if its write lies in no other value's window of the slot and
//! no other value's write of the slot lies in its window.

use super::OutputBuilder;
use crate::analysis::intervals::{before, point_inst};
use regalloc2::{
    Allocation, Block, Function, Inst, OperandConstraint, OperandKind, Output, PReg, VReg,
};

/// Instructions searched back from the use for the value in a register.
const MAX_DISTANCE: usize = 64;
/// Work (blocks, instructions and pieces looked at) that `loop_leaves_slot` may do in
/// one function, over all its calls: each call is linear in the function's blocks, the
/// loop's instructions and the pieces in fixed stack slots, and there is a call per use
/// in a loop header. Past it, such uses keep their move at the use.
pub(super) const LOOP_CHECK_BUDGET: usize = 1 << 20;
/// Window comparisons that the early writes of one function may make in all (each new
/// one is compared with every earlier one of its slot: a function with many calls passing
/// stack arguments makes many). Past it, uses keep their move at the use.
pub(super) const EARLY_CHECK_BUDGET: usize = 1 << 20;

/// Where an early write of a fixed stack slot must keep the value it wrote.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EarlyWindow {
    slot: PReg,
    vreg: u32,
    /// The write's point.
    at: u32,
    /// The points from the write to the use, as inclusive ranges: the write's block
    /// from the write on, and the use's block up to the use (the same range when the
    /// write is in the use's block).
    ranges: [(u32, u32); 2],
    /// The loop the window also spans: the use is in this header and the write in the
    /// loop's entry.
    loop_header: Option<Block>,
}

/// `slot_readers`' mark for a fixed stack slot that a def, a clobber, a non-allocatable
/// operand or the uses of more than one vreg name.
pub(super) const SHARED: u32 = u32::MAX;

/// How a use fixed to a fixed stack slot gets its value there early.
pub(super) enum EarlyWrite {
    /// Write the slot at this point from this register.
    At(u32, Allocation),
    /// The slot was written right after the value's def, for every such use.
    Written,
}

/// What a backward walk over one block found.
enum Search {
    /// Write the slot at this point from this register.
    Found(u32, Allocation),
    /// Nothing touches the slot in the block, and the value is in no register there.
    Clear,
}

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    /// Where and from which register to write fixed stack slot `slot` early with `v`,
    /// used at `inst`: right after `v`'s def if the slot is `v`'s alone (`write_at_def`;
    /// `Written` for the uses after the first), else the point right after the latest
    /// instruction that left `v` in a register, in `inst`'s block, in its only
    /// predecessor or, for a loop header, in the loop's entry, if nothing touches `slot`
    /// from there to `inst` (nor, for the entry, anywhere in the loop).
    pub(super) fn early_fixed_slot_source(
        &mut self,
        out: &Output,
        inst: Inst,
        v: VReg,
        slot: PReg,
    ) -> Option<EarlyWrite> {
        if self
            .ctx
            .slots_written_at_def
            .contains(&(slot, v.vreg() as u32))
        {
            return Some(EarlyWrite::Written);
        }
        if let Some(write) = self.write_at_def(out, inst, v, slot) {
            self.ctx.slots_written_at_def.push((slot, v.vreg() as u32));
            self.stats.fixed_slot_writes_at_def += 1;
            return Some(write);
        }
        let block = self.an.cfg.block_of(inst);
        let mut budget = MAX_DISTANCE;
        match self.search_block(out, block, inst.index(), v, slot, &mut budget)? {
            Search::Found(at, r) => {
                let clear = !self.slot_piece_between(slot, v, at, before(inst));
                let range = (at, before(inst));
                let window = EarlyWindow {
                    slot,
                    vreg: v.vreg() as u32,
                    at,
                    ranges: [range, range],
                    loop_header: None,
                };
                return (clear && self.claim_window(window)).then_some(EarlyWrite::At(at, r));
            }
            Search::Clear => {}
        }
        // Into the only predecessor: every path to the use then runs the write. The
        // write also runs on the predecessor's other successors, so the slot must be one
        // no operand reads without the allocator writing it first (not named by a fixed
        // non-allocatable operand anywhere), and it must be no more frequent than the
        // move it replaces. A loop header's only predecessor outside the loop serves as
        // well when nothing in the loop touches the slot (`loop_leaves_slot`).
        let preds = self.func.block_preds(block);
        let header = preds.len() > 1;
        let pred = match preds {
            &[pred] => pred,
            _ => self.loop_entry(block)?,
        };
        if self.an.live.nonallocatable_named.contains(slot)
            || self.an.freq.of(pred) > self.an.freq.of(block)
        {
            return None;
        }
        let end = self.func.block_insns(pred).last().index() + 1;
        // Operand allocations are made in instruction order: a predecessor laid out
        // after the use has none yet to read.
        if end > inst.index() {
            return None;
        }
        match self.search_block(out, pred, end, v, slot, &mut budget)? {
            Search::Found(at, r) => {
                let block_start = before(self.func.block_insns(block).first());
                let pred_end = before(Inst::new(end)) - 1;
                let clear = !self.slot_piece_between(slot, v, at, pred_end)
                    && !self.slot_piece_between(slot, v, block_start, before(inst))
                    && (!header || self.loop_leaves_slot(block, v, slot));
                let window = EarlyWindow {
                    slot,
                    vreg: v.vreg() as u32,
                    at,
                    ranges: [(at, pred_end), (block_start, before(inst))],
                    loop_header: header.then_some(block),
                };
                (clear && self.claim_window(window)).then_some(EarlyWrite::At(at, r))
            }
            Search::Clear => None,
        }
    }

    /// Records `w` and returns true if no other value's early write of the same slot
    /// conflicts with it (module comment); false, recording nothing, if one does or the
    /// function's `EARLY_CHECK_BUDGET` is spent.
    fn claim_window(&mut self, w: EarlyWindow) -> bool {
        // Sorted by slot: a new window is compared with its slot's alone.
        let windows = &self.ctx.early_windows;
        let key = w.slot.index();
        let lo = windows.partition_point(|o| o.slot.index() < key);
        let hi = windows.partition_point(|o| o.slot.index() <= key);
        let Some(left) = self.ctx.early_check_budget.checked_sub(hi - lo) else {
            self.ctx.early_check_budget = 0;
            return false;
        };
        self.ctx.early_check_budget = left;
        let conflict = windows[lo..hi]
            .iter()
            .any(|o| o.vreg != w.vreg && (self.in_window(o, w.at) || self.in_window(&w, o.at)));
        if conflict {
            log::debug!(
                "v{}: no early write of {} at {}: another value's early write of it conflicts",
                w.vreg,
                w.slot,
                w.at
            );
            return false;
        }
        self.ctx.early_windows.insert(hi, w);
        true
    }

    /// Whether the slot must still hold `w`'s value at point `p`.
    fn in_window(&self, w: &EarlyWindow, p: u32) -> bool {
        w.ranges.iter().any(|&(from, to)| from <= p && p <= to)
            || w.loop_header.is_some_and(|h| {
                self.an
                    .loops
                    .in_loop(self.an.cfg.block_of(point_inst(p)), h)
            })
    }

    /// The predecessor of loop header `block` outside the loop: its one predecessor it
    /// does not dominate, when every other one is (each enters by a back edge).
    fn loop_entry(&self, block: Block) -> Option<Block> {
        let cfg = &self.an.cfg;
        let mut outside = self
            .func
            .block_preds(block)
            .iter()
            .filter(|&&p| !cfg.dominates(block, p));
        let entry = *outside.next()?;
        outside.next().is_none().then_some(entry)
    }

    /// Whether nothing in the loop `header` heads touches `slot`: no operand of another
    /// vreg (or a non-allocatable one) is fixed to it, no clobber lists it and no other
    /// value's piece lives in it. A path from the header back to it runs through the
    /// loop's blocks only (each reaches a back edge without passing the header), so a
    /// write made before the loop still holds at the header on every iteration; what
    /// the loop's exits do is after the last use there. False once the function's
    /// `LOOP_CHECK_BUDGET` is spent.
    fn loop_leaves_slot(&mut self, header: Block, v: VReg, slot: PReg) -> bool {
        self.list_slot_facts();
        let nb = self.func.num_blocks();
        let Some(left) = self
            .ctx
            .loop_check_budget
            .checked_sub(nb + self.ctx.slot_pieces.len())
        else {
            self.ctx.loop_check_budget = 0;
            return false;
        };
        self.ctx.loop_check_budget = left;
        let mut ranges = std::mem::take(&mut self.ctx.loop_ranges);
        ranges.clear();
        let mut clear = true;
        for b in (0..nb).map(Block::new) {
            if !self.an.loops.in_loop(b, header) {
                continue;
            }
            let insns = self.func.block_insns(b);
            let Some(left) = self.ctx.loop_check_budget.checked_sub(insns.len()) else {
                self.ctx.loop_check_budget = 0;
                clear = false;
                break;
            };
            self.ctx.loop_check_budget = left;
            let touched = insns.iter().any(|i| {
                self.func.inst_clobbers(i).contains(slot)
                    || self.func.inst_operands(i).iter().any(|o| {
                        matches!(o.constraint(), OperandConstraint::FixedReg(p) if p == slot)
                            && (o.vreg() != v || o.as_fixed_nonallocatable().is_some())
                    })
            });
            if touched {
                clear = false;
                break;
            }
            ranges.push((before(insns.first()), before(insns.last()) + 2));
        }
        // Blocks in layout order: the ranges are sorted and disjoint.
        let target = v.vreg() as u32;
        clear = clear
            && !self.ctx.slot_pieces.iter().any(|&(p, w, s, e)| {
                if p != slot || w == target {
                    return false;
                }
                let k = ranges.partition_point(|&(_, end)| end <= s);
                ranges.get(k).is_some_and(|&(start, _)| start < e)
            });
        self.ctx.loop_ranges = ranges;
        clear
    }

    /// Walks `block`'s instructions before `until` backwards, within `budget`: the
    /// point after the first that leaves `v` in a register and that register, or
    /// `Clear` if none does and none touches `slot`; `None` if one touches `slot` (or
    /// defines `v` outside a register) first, or the budget runs out.
    fn search_block(
        &self,
        out: &Output,
        block: regalloc2::Block,
        until: usize,
        v: VReg,
        slot: PReg,
        budget: &mut usize,
    ) -> Option<Search> {
        let first = self.func.block_insns(block).first().index();
        let target = Allocation::reg(slot);
        for j in (first..until).rev() {
            *budget = budget.checked_sub(1)?;
            let ji = Inst::new(j);
            let ops = self.func.inst_operands(ji);
            let allocs = &out.allocs[out.inst_alloc_offsets[j] as usize..][..ops.len()];
            let touches = ops.iter().zip(allocs).any(|(o, &a)| {
                a == target || matches!(o.constraint(), OperandConstraint::FixedReg(p) if p == slot)
            }) || self.func.inst_clobbers(ji).contains(slot);
            if self.is_terminator(ji) {
                // No move can follow a branch: the write, if any, goes before it, from
                // where the value is after the instruction before.
                if touches {
                    return None;
                }
                continue;
            }
            // The value in a register right after instruction `j`: written there by its
            // def, or held by a home piece that covers the point after `j`.
            let defined = ops
                .iter()
                .position(|o| o.vreg() == v && o.kind() == OperandKind::Def);
            let source = match defined {
                Some(k) => Some(allocs[k]),
                None => self.loc(v, before(ji) + 1),
            }
            .filter(|a| a.is_reg() && !self.ctx.stack_regs.contains(a.as_reg().unwrap()));
            if let Some(r) = source {
                return Some(Search::Found(before(ji) + 2, r));
            }
            if defined.is_some() || touches {
                return None;
            }
        }
        Some(Search::Clear)
    }

    /// The write of `slot` right after `v`'s def, from the register the def left `v`
    /// in, when `slot` belongs to `v` for the whole function: only uses of `v` name it
    /// (no def, no clobber, no other operand, no other value's piece), so once written
    /// it holds `v` at every use, the def dominating them. Only when the def's block is
    /// no more frequent than the use's: the one store then costs at most the move at
    /// this use it replaces, and serves `v`'s other uses of `slot` too.
    fn write_at_def(
        &mut self,
        out: &Output,
        inst: Inst,
        v: VReg,
        slot: PReg,
    ) -> Option<EarlyWrite> {
        if self.an.live.nonallocatable_named.contains(slot) || self.func.allow_multiple_vreg_defs()
        {
            return None;
        }
        self.list_slot_facts();
        let e = self.ctx.slot_readers.iter().position(|e| e.0 == slot)?;
        if self.ctx.slot_readers[e].1 != v.vreg() as u32 {
            return None;
        }
        // What does not depend on the use is decided once: a refusal marks the slot
        // shared, so a function with many such uses checks the pieces once per slot.
        let Some(def) = self.an.live.def_inst(v).filter(|&d| !self.is_terminator(d)) else {
            // A block parameter has no def to write after; a terminator's def is read
            // by edge moves, not by a move after it.
            self.ctx.slot_readers[e].1 = SHARED;
            return None;
        };
        // Operand allocations are made in instruction order: a def laid out after the
        // use has none yet.
        if def.index() >= inst.index()
            || self.an.freq.of(self.an.cfg.block_of(def))
                > self.an.freq.of(self.an.cfg.block_of(inst))
        {
            return None;
        }
        let ops = self.func.inst_operands(def);
        let k = ops
            .iter()
            .position(|o| o.vreg() == v && o.kind() == OperandKind::Def)?;
        let r = out.allocs[out.inst_alloc_offsets[def.index()] as usize + k];
        if r.as_reg().is_none_or(|p| self.ctx.stack_regs.contains(p))
            || self.slot_piece_between(slot, v, 0, u32::MAX)
        {
            self.ctx.slot_readers[e].1 = SHARED;
            return None;
        }
        Some(EarlyWrite::At(before(def) + 2, r))
    }

    /// Whether a piece of a value other than `v` lives in `slot` at some point of
    /// `[from, to]`.
    fn slot_piece_between(&mut self, slot: PReg, v: VReg, from: u32, to: u32) -> bool {
        self.list_slot_facts();
        let target = v.vreg() as u32;
        self.ctx
            .slot_pieces
            .iter()
            .any(|&(p, w, s, e)| p == slot && w != target && s <= to && e > from)
    }

    /// Lists, once per function, the home pieces in fixed stack slots (`slot_pieces`)
    /// and which vreg's uses alone name each fixed stack slot (`slot_readers`).
    fn list_slot_facts(&mut self) {
        if !self.ctx.slot_pieces_listed {
            self.ctx.slot_pieces_listed = true;
            let stack_regs = self.ctx.stack_regs;
            self.ctx.slot_pieces.clear();
            self.ctx.slot_pieces.extend(
                self.a
                    .pieces
                    .iter()
                    .filter(|(_, (_, _, a))| a.as_reg().is_some_and(|r| stack_regs.contains(r)))
                    .map(|&(w, (s, e, a))| (a.as_reg().unwrap(), w, s, e)),
            );
            self.list_slot_readers();
        }
    }

    /// One pass over the function: per fixed stack slot named anywhere, the vreg whose
    /// uses alone name it, or `SHARED`.
    fn list_slot_readers(&mut self) {
        let stack_regs = self.ctx.stack_regs;
        let readers = &mut self.ctx.slot_readers;
        readers.clear();
        let mut note = |slot: PReg, reader: u32| match readers.iter_mut().find(|e| e.0 == slot) {
            Some(e) if e.1 != reader => e.1 = SHARED,
            Some(_) => {}
            None => readers.push((slot, reader)),
        };
        for i in 0..self.func.num_insts() {
            let inst = Inst::new(i);
            for op in self.func.inst_operands(inst) {
                if let OperandConstraint::FixedReg(p) = op.constraint()
                    && stack_regs.contains(p)
                {
                    let reader = if op.kind() == OperandKind::Use
                        && op.as_fixed_nonallocatable().is_none()
                    {
                        op.vreg().vreg() as u32
                    } else {
                        SHARED
                    };
                    note(p, reader);
                }
            }
            for p in self.func.inst_clobbers(inst) {
                if stack_regs.contains(p) {
                    note(p, SHARED);
                }
            }
        }
    }
}
