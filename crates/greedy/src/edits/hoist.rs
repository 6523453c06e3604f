//! Common moves hoisted out of a branch's successors (`Options::hoist_common_stores`,
//! `Options::hoist_common_moves`). When every successor of a block is entered only from
//! it and each makes the same move among its entry moves, the move is made once, before
//! the branch, instead of once per successor:
//! - a store (register to slot): a value spilled on every path out of a branch,
//!   typically two joins whose parameters share a partner slot;
//! - a reload (slot to register): a value spilled around a call and read on both sides
//!   of a branch after it, each side loading it into the same register;
//! - a register move: a value both sides need in the same other register.
//! Stack-to-stack moves stay where they are (they need a scratch register).
//!
//! A successor entered only from the block runs no deeper in loops than the block (a
//! loop's header has a predecessor outside the loop as well), and one of them runs at
//! the block's own depth when the block is in a loop, so the one move costs at most
//! what the moves it replaces cost together.
//!
//! Edits at one point run in order. The move is taken out of a successor only if no
//! edit or instruction before it there writes its source, writes its destination or reads
//! its destination (it then reads what the source held when the branch ran, and what the
//! destination held on entry was dead in every successor), and is appended after the
//! edits before the branch only if the branch neither names the destination as an
//! operand, nor writes the source, nor clobbers a register of either (nothing between the
//! new place and the old one changes what it reads or reads what it writes).

use super::is_stack_alloc;
use crate::analysis::cfg::Cfg;
use regalloc2::{
    Allocation, Block, Edit, Function, Inst, InstPosition, OperandKind, Output, PRegSet, ProgPoint,
};

/// Successors longer than this are left alone: each store looked for is checked against
/// every instruction before it, so the work per branch stays bounded.
const MAX_SUCCESSOR_INSTS: usize = 16;
/// Moves of the first successor considered per branch.
const MAX_CANDIDATES: usize = 32;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct HoistScratch {
    /// Blocks with several successors whose stores are compared, sorted.
    branches: Vec<Block>,
    /// Indices of the stores to drop from `Output::edits`.
    dropped: Vec<usize>,
    /// Stores to add: (index of the edit they go after, point, edit), sorted.
    added: Vec<(usize, ProgPoint, Edit)>,
    edits: Vec<(ProgPoint, Edit)>,
}

/// Which moves `hoist_common_moves` looks for: stores, and reloads with register moves.
#[derive(Clone, Copy)]
pub(crate) struct Hoisted {
    pub stores: bool,
    pub others: bool,
}

/// Moves removed from successors by hoisting (each hoisted move counts for all but one
/// of its copies): stores, and reloads with register moves.
#[derive(Clone, Copy, Default)]
pub(crate) struct HoistCounts {
    pub stores: usize,
    pub others: usize,
}

/// Hoists the common moves (the kinds `kinds` asks for) of every branch's successors.
pub(crate) fn hoist_common_moves<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    stack_regs: PRegSet,
    kinds: Hoisted,
    out: &mut Output,
    s: &mut HoistScratch,
) -> HoistCounts {
    s.dropped.clear();
    s.added.clear();
    let is_stack = |a: Allocation| is_stack_alloc(&stack_regs, a);
    let wanted = |from: Allocation, to: Allocation| match (is_stack(from), is_stack(to)) {
        (false, true) => kinds.stores,
        (_, false) => kinds.others,
        (true, true) => false,
    };
    // Only a block some wanted move's block is entered from alone can have one to hoist:
    // those moves find them, most functions having few or none.
    s.branches.clear();
    for (at, Edit::Move { from, to }) in &out.edits {
        if !wanted(*from, *to) {
            continue;
        }
        let succ = cfg.block_of(at.inst());
        if let [pred] = func.block_preds(succ) {
            s.branches.push(*pred);
        }
    }
    let mut counts = HoistCounts::default();
    if s.branches.is_empty() {
        return counts;
    }
    s.branches.sort_unstable();
    s.branches.dedup();
    // Edits are sorted by point: the run at one point is found by two searches (made
    // for the few branches found above only).
    let run_at = |edits: &[(ProgPoint, Edit)], at: ProgPoint| {
        let lo = edits.partition_point(|&(p, _)| p < at);
        let hi = lo + edits[lo..].partition_point(|&(p, _)| p == at);
        (lo, hi)
    };
    for k in 0..s.branches.len() {
        let block = s.branches[k];
        let succs = func.block_succs(block);
        if succs.len() < 2
            || succs.iter().any(|&succ| {
                succ == block
                    || func.block_preds(succ).len() != 1
                    || func.block_insns(succ).len() > MAX_SUCCESSOR_INSTS
            })
        {
            continue;
        }
        // Candidates: the wanted moves of the first successor, up to its end.
        let first_succ = func.block_insns(succs[0]);
        let lo0 = run_at(&out.edits, ProgPoint::before(first_succ.first())).0;
        let hi0 = run_at(&out.edits, ProgPoint::before(first_succ.last())).1;
        if lo0 == hi0 {
            continue;
        }
        let branch = func.block_insns(block).last();
        let hoist_at = ProgPoint::before(branch);
        let hoist_after = run_at(&out.edits, hoist_at).1;
        for k in lo0..hi0.min(lo0 + MAX_CANDIDATES) {
            let Edit::Move { from, to } = out.edits[k].1.clone();
            if !wanted(from, to) {
                continue;
            }
            // An instruction that names the destination, writes the source or clobbers
            // a register of the move.
            let interferes = |inst: Inst| {
                let ops = func.inst_operands(inst);
                let allocs = &out.allocs[out.inst_alloc_offsets[inst.index()] as usize..];
                let clobbers = func.inst_clobbers(inst);
                ops.iter()
                    .zip(allocs)
                    .any(|(op, &a)| a == to || (op.kind() == OperandKind::Def && a == from))
                    || [from, to]
                        .iter()
                        .any(|a| a.as_reg().is_some_and(|r| clobbers.contains(r)))
            };
            if interferes(branch) {
                continue;
            }
            // The same store in `succ` with nothing before it (edit or instruction)
            // writing the register or touching the slot.
            let found_in = |succ: Block| -> Option<usize> {
                let insns = func.block_insns(succ);
                let (lo, _) = run_at(&out.edits, ProgPoint::before(insns.first()));
                let end = ProgPoint::before(insns.last());
                let mut checked = insns.first();
                for j in lo..out.edits.len() {
                    let (at, Edit::Move { from: f, to: t }) = out.edits[j].clone();
                    if at > end {
                        return None;
                    }
                    // The instructions before this point run before the edit.
                    while checked.index() < insns.last().index()
                        && (checked < at.inst()
                            || (checked == at.inst() && at.pos() == InstPosition::After))
                    {
                        if interferes(checked) {
                            return None;
                        }
                        checked = checked.next();
                    }
                    if f == from && t == to {
                        return Some(j);
                    }
                    if t == from || t == to || f == to {
                        return None;
                    }
                }
                None
            };
            let mut all = true;
            let first = s.dropped.len();
            // A successor may make the same move twice (a value reloaded again after a
            // call): only its first, the one found in every successor, is a candidate, so
            // no edit is dropped twice.
            for &succ in succs {
                match found_in(succ) {
                    Some(j) if succ != succs[0] || j == k => s.dropped.push(j),
                    _ => {
                        all = false;
                        break;
                    }
                }
            }
            if !all {
                s.dropped.truncate(first);
                continue;
            }
            if is_stack(to) {
                counts.stores += succs.len() - 1;
            } else {
                counts.others += succs.len() - 1;
            }
            s.added
                .push((hoist_after, hoist_at, Edit::Move { from, to }));
        }
    }
    if s.added.is_empty() {
        return counts;
    }
    s.dropped.sort_unstable();
    debug_assert!(s.dropped.windows(2).all(|w| w[0] < w[1]));
    s.added.sort_by_key(|&(after, _, _)| after);
    s.edits.clear();
    let (mut d, mut a) = (0, 0);
    for (i, e) in out.edits.iter().enumerate() {
        while a < s.added.len() && s.added[a].0 == i {
            s.edits.push((s.added[a].1, s.added[a].2.clone()));
            a += 1;
        }
        if d < s.dropped.len() && s.dropped[d] == i {
            d += 1;
            continue;
        }
        s.edits.push(e.clone());
    }
    while a < s.added.len() {
        s.edits.push((s.added[a].1, s.added[a].2.clone()));
        a += 1;
    }
    std::mem::swap(&mut out.edits, &mut s.edits);
    debug_assert!(out.edits.is_sorted_by_key(|&(p, _)| p));
    counts
}
