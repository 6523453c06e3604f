//! Entry points for the fuzz targets and smoke tests (feature `fuzzing`): internal
//! mechanisms checked against a simple model, here the parallel-move resolver against a
//! machine that executes the moves.

use crate::edits::parallel::{ParallelMoves, ScratchSource};
use regalloc2::{Allocation, PReg, RegClass, SpillSlot};

/// Registers `p0..NUM_REGS` and slots `0..NUM_SLOTS` take part in generated moves.
const NUM_REGS: usize = 6;
const NUM_SLOTS: usize = 6;
/// Emergency slots handed out by the test scratch source.
const EMERGENCY_BASE: usize = 100;

struct TestScratch {
    /// Registers the caller says are free at this point (hold nothing live).
    free: Vec<PReg>,
}

impl ScratchSource for TestScratch {
    fn free_reg(&mut self, _: RegClass, busy: &[Allocation]) -> Option<PReg> {
        self.free
            .iter()
            .copied()
            .find(|&r| !busy.contains(&Allocation::reg(r)))
    }
    fn emergency_slot(&mut self, _: RegClass, which: usize) -> Allocation {
        Allocation::stack(SpillSlot::new(EMERGENCY_BASE + which))
    }
    fn victim_reg(&mut self, _: RegClass, busy: &[Allocation]) -> PReg {
        (0..NUM_REGS)
            .map(|i| PReg::new(i, RegClass::Int))
            .find(|&r| !busy.contains(&Allocation::reg(r)))
            .unwrap_or(PReg::new(0, RegClass::Int))
    }
    fn is_stack(&self, a: Allocation) -> bool {
        a.is_stack()
    }
}

/// Decodes a parallel move from `data`, resolves it, executes the sequence on a model
/// machine and panics if any destination does not end with its source's old value, if a
/// live location not written by the move changed, or if a stack-to-stack move remains.
pub fn check_parallel_moves(data: &[u8]) {
    let loc = |b: u8| {
        let i = b as usize % (NUM_REGS + NUM_SLOTS);
        if i < NUM_REGS {
            Allocation::reg(PReg::new(i, RegClass::Int))
        } else {
            Allocation::stack(SpillSlot::new(i - NUM_REGS))
        }
    };
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let mut moves: Vec<(Allocation, Allocation)> = Vec::new();
    for pair in rest.chunks_exact(2).take(16) {
        let (from, to) = (loc(pair[0]), loc(pair[1]));
        if !moves.iter().any(|&(_, t)| t == to) {
            moves.push((from, to));
        }
    }
    // Free registers: ones no move reads or writes, picked by the flag bits.
    let free: Vec<PReg> = (0..NUM_REGS)
        .map(|i| PReg::new(i, RegClass::Int))
        .filter(|&r| flags & (1 << r.hw_enc()) != 0)
        .filter(|&r| {
            !moves
                .iter()
                .any(|&(f, t)| f == Allocation::reg(r) || t == Allocation::reg(r))
        })
        .collect();
    let mut scratch = TestScratch { free: free.clone() };
    let mut seq = Vec::new();
    ParallelMoves::default().resolve(RegClass::Int, &moves, &mut scratch, &mut seq);

    // Model machine: every location starts with a distinct value (its own index).
    let key = |a: Allocation| a.bits();
    let mut state: hashbrown::HashMap<u32, u32> = hashbrown::HashMap::new();
    let value = |state: &hashbrown::HashMap<u32, u32>, a: Allocation| {
        state.get(&key(a)).copied().unwrap_or(key(a))
    };
    for &(from, to) in &seq {
        assert!(
            !(from.is_stack() && to.is_stack()),
            "stack-to-stack move {from} -> {to} in {seq:?}"
        );
        let v = value(&state, from);
        state.insert(key(to), v);
    }
    for &(from, to) in &moves {
        assert_eq!(
            value(&state, to),
            key(from),
            "{to} should hold the old {from}; moves {moves:?}, sequence {seq:?}"
        );
    }
    for i in 0..NUM_REGS + NUM_SLOTS {
        let a = loc(i as u8);
        let written = moves.iter().any(|&(_, t)| t == a);
        let scratch_reg = a.as_reg().is_some_and(|r| free.contains(&r));
        if !written && !scratch_reg {
            assert_eq!(
                value(&state, a),
                key(a),
                "{a} clobbered; moves {moves:?}, sequence {seq:?}"
            );
        }
    }
}
