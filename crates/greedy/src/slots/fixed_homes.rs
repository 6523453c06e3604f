//! Spilled values homed in a fixed stack slot (`Options::fixed_slot_homes`). A value whose
//! def is fixed to a fixed stack slot (a result passed on the stack, say) and that the
//! allocator spilled anywhere would be copied from that slot into a spill slot of its
//! own: a slot-to-slot move, which the move resolver routes through a register it must
//! find free or borrow (saved and restored around the move). When nothing else in the
//! function names that fixed slot, the slot itself is the value's stack home, as it is
//! for ion's bundle of such a value: no copy at the def, and every reload reads it.
//!
//! Why the slot holds the value wherever the value lives: the def writes it, and nothing
//! else does. No other vreg's operand is fixed to it, no non-allocatable operand and no
//! clobber names it, no piece of another value was given it, and the move resolver's
//! temporaries are allocatable registers and spill slots, never a fixed stack slot.
//! With one def per vreg (not made in a function that allows several), the def
//! dominates every point where the value is live, so a read of the slot at any of them
//! follows the write. The value's own operands fixed to the slot read what it holds.

use super::SpillSlots;
use crate::analysis::Analyses;
use log::debug;
use regalloc2::{Function, Inst, MachineEnv, OperandConstraint, OperandKind, PReg, PRegSet, VReg};

/// Who names a fixed stack slot: the vreg whose operands alone name it, or `SHARED`.
const SHARED: u32 = u32::MAX;

/// Gives each spilled value whose def is fixed to a fixed stack slot, which nothing else
/// in the function names, that slot as its stack home (`SpillSlots::home_in_fixed_slot`),
/// before `SlotLayout` lays out the others. `taken` holds the fixed stack slots some
/// piece was assigned to. Returns how many values were homed. `namers` is scratch.
pub(crate) fn home_in_fixed_slots<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    an: &Analyses,
    taken: PRegSet,
    slots: &mut SpillSlots,
    namers: &mut Vec<(PReg, u32, bool)>,
) -> usize {
    if env.fixed_stack_slots.is_empty() || func.allow_multiple_vreg_defs() {
        return 0;
    }
    let mut stack = PRegSet::empty();
    for &p in &env.fixed_stack_slots {
        stack.add(p);
    }
    // Per fixed stack slot: the vreg whose operands alone name it (or `SHARED`), and
    // whether that vreg's def, not on a terminator, is one of them while the value
    // awaits a spill slot (a candidate for the home).
    namers.clear();
    // Every operand fixed to a register is on an instruction of this list (the fixed
    // non-allocatable ones are in `nonallocatable_named` instead).
    for &inst in &an.live.copy_or_fixed_insts {
        let terminator = func.is_branch(inst) || func.is_ret(inst);
        for op in func.inst_operands(inst) {
            let OperandConstraint::FixedReg(p) = op.constraint() else {
                continue;
            };
            if !stack.contains(p) {
                continue;
            }
            let v = op.vreg().vreg() as u32;
            // A def on a terminator has no room for the copy this saves.
            let candidate =
                op.kind() == OperandKind::Def && !terminator && slots.awaits_layout(op.vreg());
            match namers.iter_mut().find(|(q, _, _)| *q == p) {
                Some((_, who, _)) if *who != v => *who = SHARED,
                Some((_, _, def)) => *def |= candidate,
                None => namers.push((p, v, candidate)),
            }
        }
    }
    if !namers.iter().any(|&(_, who, def)| def && who != SHARED) {
        return 0;
    }
    let mut clobbered = PRegSet::empty();
    for i in 0..func.num_insts() {
        clobbered.union_from(func.inst_clobbers(Inst::new(i)));
    }
    let mut homed = 0;
    for &(p, who, def) in namers.iter() {
        if def
            && who != SHARED
            && !an.live.nonallocatable_named.contains(p)
            && !clobbered.contains(p)
            && !taken.contains(p)
        {
            let v = VReg::new(who as usize, p.class());
            debug!("{v}: its def's fixed stack slot {p} is its stack home");
            slots.home_in_fixed_slot(v, p);
            homed += 1;
        }
    }
    homed
}
