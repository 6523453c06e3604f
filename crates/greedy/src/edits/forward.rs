//! Stores forwarded to the loads beside them (`Options::forward_stores`): among the moves
//! made at one program point, a load from a slot that an earlier move at that point
//! stored from a register reads the register instead (a register copy, or nothing when
//! it is the load's own destination). The pattern appears when the edit passes move
//! edits together after the move resolver has run: a store sunk into a join lands in
//! front of a reload the join already made of the same slot (a value spilled at a merge
//! whose parameter is stored once there and read at once), and a hoisted store can meet
//! a hoisted reload the same way.
//!
//! Why the result is the same: moves at one point run in order, so after `slot <- r`
//! and until a later move there writes `slot` or `r`, both hold the same bits; a read of
//! `slot` in that stretch can read `r`. The store itself stays (later code may read the
//! slot); a load whose destination is `r` is dropped, `r` holding its result already.

use super::is_stack_alloc;
use regalloc2::{Allocation, Edit, Output, PRegSet};

/// Stores remembered per program point; a point with more moves forwards only from its
/// first stores (points carry a handful of moves, a large parallel move a few dozen).
const MAX_STORES: usize = 8;

/// Forwards stores to loads at each program point of `out.edits`; returns how many loads
/// were turned into register copies or dropped.
pub(crate) fn forward_stores(out: &mut Output, stack_regs: PRegSet) -> usize {
    let mut forwarded = 0;
    let mut dropped = false;
    // (slot, register it was stored from) for the point being walked.
    let mut stored: [(Allocation, Allocation); MAX_STORES] =
        [(Allocation::none(), Allocation::none()); MAX_STORES];
    let mut n = 0;
    let mut at = None;
    for (point, edit) in out.edits.iter_mut() {
        if at != Some(*point) {
            at = Some(*point);
            n = 0;
        }
        let Edit::Move { from, to } = edit;
        if n > 0
            && is_stack_alloc(&stack_regs, *from)
            && let Some(&(_, r)) = stored[..n].iter().find(|&&(slot, _)| slot == *from)
        {
            debug_assert!(
                to.as_reg()
                    .is_none_or(|t| r.as_reg().is_some_and(|r| r.class() == t.class())),
                "a slot stored from {r} loaded into {to}"
            );
            forwarded += 1;
            *from = r;
            if r == *to {
                dropped = true;
            }
        }
        // The move overwrites `to`: what it held before is no longer the stored value.
        let mut k = 0;
        while k < n {
            if stored[k].0 == *to || stored[k].1 == *to {
                stored.copy_within(k + 1..n, k);
                n -= 1;
            } else {
                k += 1;
            }
        }
        if n < MAX_STORES
            && *from != *to
            && is_stack_alloc(&stack_regs, *to)
            && !is_stack_alloc(&stack_regs, *from)
        {
            stored[n] = (*to, *from);
            n += 1;
        }
    }
    if dropped {
        out.edits.retain(|(_, Edit::Move { from, to })| from != to);
    }
    forwarded
}

#[cfg(test)]
mod tests {
    use super::*;
    use regalloc2::{Inst, PReg, ProgPoint, RegClass, SpillSlot};

    fn reg(i: usize) -> Allocation {
        Allocation::reg(PReg::new(i, RegClass::Float))
    }

    fn slot(i: usize) -> Allocation {
        Allocation::stack(SpillSlot::new(i))
    }

    /// Runs the pass over moves at the given points; returns the count and the moves left.
    fn run(
        moves: &[(usize, Allocation, Allocation)],
        stack_regs: PRegSet,
    ) -> (usize, Vec<(usize, Allocation, Allocation)>) {
        let mut out = Output {
            edits: moves
                .iter()
                .map(|&(i, from, to)| (ProgPoint::before(Inst::new(i)), Edit::Move { from, to }))
                .collect(),
            ..Output::default()
        };
        let n = forward_stores(&mut out, stack_regs);
        let left = out
            .edits
            .iter()
            .map(|&(p, Edit::Move { from, to })| (p.inst().index(), from, to))
            .collect();
        (n, left)
    }

    #[test]
    fn a_load_after_a_store_at_its_point_reads_the_register() {
        let moves = [(3, reg(0), slot(8)), (3, slot(8), reg(1))];
        let (n, left) = run(&moves, PRegSet::empty());
        assert_eq!(n, 1);
        assert_eq!(left, vec![(3, reg(0), slot(8)), (3, reg(0), reg(1))]);
    }

    #[test]
    fn a_load_back_into_the_stored_register_is_dropped() {
        let moves = [
            (3, reg(0), slot(8)),
            (3, slot(8), reg(0)),
            (3, reg(2), reg(1)),
        ];
        let (n, left) = run(&moves, PRegSet::empty());
        assert_eq!(n, 1);
        assert_eq!(left, vec![(3, reg(0), slot(8)), (3, reg(2), reg(1))]);
    }

    #[test]
    fn a_write_in_between_or_another_point_stops_forwarding() {
        // The register is overwritten between the store and the load.
        let moves = [
            (3, reg(0), slot(8)),
            (3, reg(2), reg(0)),
            (3, slot(8), reg(1)),
        ];
        assert_eq!(run(&moves, PRegSet::empty()), (0, moves.to_vec()));
        // The slot is overwritten between them.
        let moves = [
            (3, reg(0), slot(8)),
            (3, reg(2), slot(8)),
            (3, slot(8), reg(1)),
        ];
        let (n, left) = run(&moves, PRegSet::empty());
        assert_eq!(n, 1, "the second store is the one forwarded");
        assert_eq!(left[2], (3, reg(2), reg(1)));
        // The load is at the next point: an instruction ran in between.
        let moves = [(3, reg(0), slot(8)), (4, slot(8), reg(1))];
        assert_eq!(run(&moves, PRegSet::empty()), (0, moves.to_vec()));
        // A load that comes before the store reads the slot's old content.
        let moves = [(3, slot(8), reg(1)), (3, reg(0), slot(8))];
        assert_eq!(run(&moves, PRegSet::empty()), (0, moves.to_vec()));
    }

    #[test]
    fn fixed_stack_slots_count_as_slots() {
        let stack_reg = PReg::new(40, RegClass::Float);
        let mut stack_regs = PRegSet::empty();
        stack_regs.add(stack_reg);
        let moves = [
            (3, reg(0), Allocation::reg(stack_reg)),
            (3, Allocation::reg(stack_reg), reg(1)),
        ];
        let (n, left) = run(&moves, stack_regs);
        assert_eq!(n, 1);
        assert_eq!(left[1], (3, reg(0), reg(1)));
        // A move out of a fixed stack slot into a slot is not a store from a register.
        let moves = [
            (3, Allocation::reg(stack_reg), slot(8)),
            (3, slot(8), reg(1)),
        ];
        assert_eq!(run(&moves, stack_regs), (0, moves.to_vec()));
    }
}
