//! Fixed stack slots written early (`Options::early_fixed_slot_writes`): a use fixed to
//! a fixed stack slot (a stack-passed argument, say) whose value is in a stack location
//! at the use is served by a slot-to-slot move, which the resolver routes through a
//! register it must find free or borrow (saved and restored around the move). When the
//! value sat in a register earlier in the use's block, or in that block's only
//! predecessor, and nothing touches the fixed slot in between, the slot is written from
//! that register there instead: one store, no borrowed register. This is where ion's
//! bundle for such a value ends up: it lives in the fixed slot itself from the point
//! its register piece ends.
//!
//! Why the result is the same: the write reads the register in the parallel move right
//! after the instruction that left the value in it (the value's def into it, or the end
//! of a register piece covering the point after that instruction), so it copies the
//! value. From there to the use, no operand names the fixed slot, no operand was given
//! it, no clobber lists it and no other value's piece lives in it, so it still holds the
//! value at the use. Written in the predecessor, it also runs on the paths into the
//! predecessor's other successors; there no value's piece is in the slot at the
//! predecessor's end and no non-allocatable operand of the function names the slot, so
//! nothing reads what the write left before writing the slot itself. The predecessor
//! must be no more frequent than the use's block, so the store costs at most what the
//! move it replaces cost.

use super::OutputBuilder;
use crate::analysis::intervals::before;
use regalloc2::{Allocation, Function, Inst, OperandConstraint, OperandKind, Output, PReg, VReg};

/// Instructions searched back from the use for the value in a register.
const MAX_DISTANCE: usize = 64;

/// What a backward walk over one block found.
enum Search {
    /// Write the slot at this point from this register.
    Found(u32, Allocation),
    /// Nothing touches the slot in the block, and the value is in no register there.
    Clear,
}

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    /// Where and from which register to write fixed stack slot `slot` early with `v`,
    /// used at `inst`: the point right after the latest instruction that left `v` in a
    /// register, in `inst`'s block or in its only predecessor, if nothing touches `slot`
    /// from there to `inst`.
    pub(super) fn early_fixed_slot_source(
        &mut self,
        out: &Output,
        inst: Inst,
        v: VReg,
        slot: PReg,
    ) -> Option<(u32, Allocation)> {
        let block = self.an.cfg.block_of(inst);
        let mut budget = MAX_DISTANCE;
        match self.search_block(out, block, inst.index(), v, slot, &mut budget)? {
            Search::Found(at, r) => {
                let clear = !self.slot_piece_between(slot, v, at, before(inst));
                return clear.then_some((at, r));
            }
            Search::Clear => {}
        }
        // Into the only predecessor: every path to the use then runs the write. The
        // write also runs on the predecessor's other successors, so the slot must be one
        // no operand reads without the allocator writing it first (not named by a fixed
        // non-allocatable operand anywhere), and it must be no more frequent than the
        // move it replaces.
        let &[pred] = self.func.block_preds(block) else {
            return None;
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
                let clear = !self.slot_piece_between(slot, v, at, before(Inst::new(end)) - 1)
                    && !self.slot_piece_between(slot, v, block_start, before(inst));
                clear.then_some((at, r))
            }
            Search::Clear => None,
        }
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

    /// Whether a piece of a value other than `v` lives in `slot` at some point of
    /// `[from, to]`.
    fn slot_piece_between(&mut self, slot: PReg, v: VReg, from: u32, to: u32) -> bool {
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
        }
        let target = v.vreg() as u32;
        self.ctx
            .slot_pieces
            .iter()
            .any(|&(p, w, s, e)| p == slot && w != target && s <= to && e > from)
    }
}
