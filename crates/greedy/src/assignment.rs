//! The result of register allocation, as the edit builder reads it and any allocator
//! fills it: where each value lives (its home pieces), the registers of the short reload
//! pieces that serve operands of spilled values, and the spill slots. This is the whole
//! boundary between an allocator and `edits`; nothing else of an allocator's state is
//! visible past it.
//!
//! Invariants an allocator must establish before handing it over:
//! - a vreg's home pieces are disjoint and cover every point where the vreg is live by
//!   `analysis::intervals` (the runs of its segments), each in a register or in the
//!   vreg's laid-out slot;
//! - pieces in one register never overlap, reload pieces included;
//! - at most one reload piece per (instruction, vreg, side), covering the operand
//!   points of that instruction that needed a register;
//! - every vreg marked in `slots` has been laid out (`slots::SlotLayout`).

use crate::analysis::intervals::{Segment, UseSite, before, group};
use crate::slots::SpillSlots;
use regalloc2::{Allocation, Function, Inst, MachineEnv, PReg, PRegSet, RegClass};
use std::ops::Range;

/// The register serving the operands of one spilled value at one instruction: uses
/// (reloaded before it) or defs (stored after it), over `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReloadPiece {
    pub inst: u32,
    pub vreg: u32,
    pub is_def: bool,
    pub reg: PReg,
    pub start: u32,
    pub end: u32,
}

impl ReloadPiece {
    /// The points a reload piece at `inst` covers for `uses` (the operands of one side
    /// that need a register), or `None` if there are none: from the first operand point
    /// to past the last for uses; for defs through the instruction's late point, so the
    /// store after it reads the register.
    pub fn span<'u>(
        inst: Inst,
        is_def: bool,
        uses: impl IntoIterator<Item = &'u UseSite>,
    ) -> Option<Segment> {
        let mut it = uses.into_iter();
        let first = it.next()?;
        let (start, last) = it.fold((first.first(), first.last()), |(s, l), u| {
            (s.min(u.first()), l.max(u.last()))
        });
        let end = if is_def { before(inst) + 2 } else { last + 1 };
        Some(Segment { start, end })
    }
}

/// Questions `Assignment::is_held` answers about one register by a scan of its ranges
/// before it sorts them.
const SCANNED_QUESTIONS: u8 = 8;

/// One function's allocation, buffers kept across functions.
#[derive(Default)]
pub(crate) struct Assignment {
    /// Home pieces as (vreg, (start, end, location)), in any order.
    pub pieces: Vec<(u32, (u32, u32, Allocation))>,
    /// Reload pieces, in any order (the edit builder sorts them).
    pub reloads: Vec<ReloadPiece>,
    pub slots: SpillSlots,
    /// Allocation order per class (preferred, then non-preferred registers; no fixed
    /// stack slots, no duplicates): what an allocator hands out, and where the move
    /// resolver looks for a free temporary, in the same order.
    pub order: [Vec<PReg>; 3],
    /// The register sets `order` was built from (preferred and non-preferred per class,
    /// then the fixed stack slots): a JIT allocates function after function in one
    /// environment, and rebuilding the order from the sets' iterators cost about 1% of a
    /// small function's allocation.
    order_env: Option<([PRegSet; 6], Vec<PReg>)>,
    /// Per register, the ranges held by a piece, built on the first `is_held` (only
    /// parallel moves that need a temporary ask, and most functions have none). A
    /// register's first `SCANNED_QUESTIONS` questions scan its ranges; the next sorts
    /// them by start for a binary search (`held_asked` counts the questions): the
    /// questions stop at the first free register in allocation order, so most
    /// registers are asked about a few times at most, and a scan costs less than a
    /// sort until then.
    held_range: Vec<(u32, u32)>,
    held: Vec<(u32, u32)>,
    held_asked: Vec<u8>,
    raw_held: Vec<(u32, (u32, u32))>,
    held_built: bool,
}

impl Assignment {
    /// Empties the result for a new function `f` in `env`, whose mentioned vregs lie in
    /// `span` (`Liveness::vreg_span`).
    pub fn reset<F: Function + ?Sized>(&mut self, f: &F, env: &MachineEnv, span: Range<usize>) {
        self.pieces.clear();
        self.reloads.clear();
        self.held_built = false;
        self.slots.reset(f, span);
        let sets = [
            env.preferred_regs_by_class[0],
            env.preferred_regs_by_class[1],
            env.preferred_regs_by_class[2],
            env.non_preferred_regs_by_class[0],
            env.non_preferred_regs_by_class[1],
            env.non_preferred_regs_by_class[2],
        ];
        if let Some((built, fixed)) = &self.order_env
            && *built == sets
            && fixed[..] == env.fixed_stack_slots[..]
        {
            return;
        }
        for class in [RegClass::Int, RegClass::Float, RegClass::Vector] {
            let c = class as usize;
            let order = &mut self.order[c];
            order.clear();
            order.extend(
                env.preferred_regs_by_class[c]
                    .into_iter()
                    .chain(env.non_preferred_regs_by_class[c])
                    .filter(|p| p.class() == class && !env.fixed_stack_slots.contains(p)),
            );
            let mut seen = 0u64;
            order.retain(|p| {
                let bit = 1u64 << p.hw_enc();
                let fresh = seen & bit == 0;
                seen |= bit;
                fresh
            });
        }
        self.order_env = Some((sets, env.fixed_stack_slots.clone()));
    }

    /// Does some piece (home or reload) hold register `r` at point `p`?
    pub fn is_held(&mut self, r: PReg, p: u32) -> bool {
        if !self.held_built {
            self.build_held();
        }
        let (a, b) = self.held_range[r.index()];
        let ranges = &mut self.held[a as usize..b as usize];
        let asked = &mut self.held_asked[r.index()];
        if *asked < SCANNED_QUESTIONS {
            *asked += 1;
            return ranges.iter().any(|&(s, e)| s <= p && p < e);
        }
        if *asked == SCANNED_QUESTIONS {
            // Ranges in one register are disjoint, so their starts are unique.
            ranges.sort_unstable_by_key(|&(s, _)| s);
            *asked += 1;
        }
        let i = ranges.partition_point(|&(_, e)| e <= p);
        ranges.get(i).is_some_and(|&(s, _)| s <= p)
    }

    fn build_held(&mut self) {
        self.raw_held.clear();
        for &(_, (s, e, loc)) in &self.pieces {
            if let Some(r) = loc.as_reg() {
                self.raw_held.push((r.index() as u32, (s, e)));
            }
        }
        for r in &self.reloads {
            self.raw_held.push((r.reg.index() as u32, (r.start, r.end)));
        }
        group(
            &self.raw_held,
            PReg::NUM_INDEX,
            &mut self.held_range,
            &mut self.held,
            |_| {},
        );
        self.held_asked.clear();
        self.held_asked.resize(PReg::NUM_INDEX, 0);
        self.held_built = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held ranges are half-open, per register, and count reload pieces as well as home
    /// pieces; a piece in a slot holds no register.
    #[test]
    fn held_ranges_per_register() {
        let (r0, r1, r2) = (
            PReg::new(0, RegClass::Int),
            PReg::new(1, RegClass::Int),
            PReg::new(2, RegClass::Int),
        );
        let mut a = Assignment::default();
        a.pieces.push((0, (10, 14, Allocation::reg(r0))));
        a.pieces.push((1, (2, 6, Allocation::reg(r0))));
        a.pieces
            .push((2, (0, 20, Allocation::stack(regalloc2::SpillSlot::new(0)))));
        a.reloads.push(ReloadPiece {
            inst: 4,
            vreg: 2,
            is_def: false,
            reg: r1,
            start: 8,
            end: 9,
        });
        let held = |a: &mut Assignment, r, p| a.is_held(r, p);
        assert!(!held(&mut a, r0, 1));
        assert!(held(&mut a, r0, 2) && held(&mut a, r0, 5));
        assert!(!held(&mut a, r0, 6) && !held(&mut a, r0, 9));
        assert!(held(&mut a, r0, 10) && held(&mut a, r0, 13) && !held(&mut a, r0, 14));
        assert!(held(&mut a, r1, 8) && !held(&mut a, r1, 9) && !held(&mut a, r1, 7));
        assert!((0..20).all(|p| !held(&mut a, r2, p)));
    }
}
