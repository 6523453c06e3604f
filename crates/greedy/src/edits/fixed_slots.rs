//! Fixed stack slots written early (`Options::early_fixed_slot_writes`): a use fixed to
//! a fixed stack slot (a stack-passed argument, say) whose value is in a stack location
//! at the use is served by a slot-to-slot move, which the resolver routes through a
//! register it must find free or borrow (saved and restored around the move). When the
//! value sat in a register earlier in the same block and nothing touches the fixed slot
//! in between, the slot is written from that register there instead: one store, no
//! borrowed register. This is where ion's bundle for such a value ends up: it lives in
//! the fixed slot itself from the point its register piece ends.
//!
//! Why the result is the same: the write reads the register in the parallel move right
//! after the instruction that left the value in it (the value's def into it, or the end
//! of a register piece covering the point after that instruction), so it copies the
//! value. From there to the use, no operand names the fixed slot, no operand was given
//! it, no clobber lists it and no other value's piece lives in it, so it still holds the
//! value at the use. Both points are in one block, so the write runs on every path to
//! the use and costs what the move it replaces cost at most.

use super::OutputBuilder;
use crate::analysis::intervals::before;
use regalloc2::{Allocation, Function, Inst, OperandConstraint, OperandKind, Output, PReg, VReg};

/// Instructions searched back from the use for the value in a register.
const MAX_DISTANCE: usize = 64;

impl<F: Function + ?Sized> OutputBuilder<'_, F> {
    /// Where and from which register to write fixed stack slot `slot` early with `v`,
    /// used at `inst`: the point right after the latest instruction of the same block
    /// that left `v` in a register, if nothing touches `slot` from there to `inst`.
    pub(super) fn early_fixed_slot_source(
        &mut self,
        out: &Output,
        inst: Inst,
        v: VReg,
        slot: PReg,
    ) -> Option<(u32, Allocation)> {
        let block = self.an.cfg.block_of(inst);
        let first = self.func.block_insns(block).first().index();
        let lowest = inst.index().saturating_sub(MAX_DISTANCE).max(first);
        let target = Allocation::reg(slot);
        for j in (lowest..inst.index()).rev() {
            let ji = Inst::new(j);
            let ops = self.func.inst_operands(ji);
            let allocs = &out.allocs[out.inst_alloc_offsets[j] as usize..][..ops.len()];
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
                let at = before(ji) + 2;
                return (!self.slot_piece_between(slot, v, at, before(inst))).then_some((at, r));
            }
            if defined.is_some() {
                return None;
            }
            let touches = ops.iter().zip(allocs).any(|(o, &a)| {
                a == target || matches!(o.constraint(), OperandConstraint::FixedReg(p) if p == slot)
            }) || self.func.inst_clobbers(ji).contains(slot);
            if touches {
                return None;
            }
        }
        None
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
