//! Common stores hoisted out of a branch's successors (`Options::hoist_common_stores`).
//! When every successor of a block is entered only from it and each stores the same
//! register to the same stack slot among its entry moves (a value spilled on every path
//! out of a branch, typically two joins whose parameters share a partner slot), the
//! store is made once, before the branch, instead of once per successor.
//!
//! A successor entered only from the block runs no deeper in loops than the block (a
//! loop's header has a predecessor outside the loop as well), and one of them runs at
//! the block's own depth when the block is in a loop, so the one store costs at most
//! what the stores it replaces cost together.
//!
//! Edits at one point run in order. The store is taken out of a successor only if no
//! edit before it there writes its register or touches its slot (it then reads the value
//! the register held when the branch ran), and is appended after the edits before the
//! branch only if the branch neither writes the register nor names the slot as an operand
//! (nothing between the new place and the old one changes what it stores or reads what it
//! writes).

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

/// Hoists the common stores of every branch's successors; returns how many stores were
/// removed from successors (each hoisted store counts for all but one of its copies).
pub(crate) fn hoist_common_stores<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    stack_regs: PRegSet,
    out: &mut Output,
    s: &mut HoistScratch,
) -> usize {
    s.dropped.clear();
    s.added.clear();
    let is_stack = |a: Allocation| is_stack_alloc(&stack_regs, a);
    // Only a block some store's block is entered from alone can have one to hoist: the
    // stores find them, most functions having few or none.
    s.branches.clear();
    for (at, Edit::Move { from, to }) in &out.edits {
        if is_stack(*from) || !is_stack(*to) {
            continue;
        }
        let succ = cfg.block_of(at.inst());
        if let [pred] = func.block_preds(succ) {
            s.branches.push(*pred);
        }
    }
    if s.branches.is_empty() {
        return 0;
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
        // Candidates: the register-to-slot moves of the first successor, up to its end.
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
            if is_stack(from) || !is_stack(to) {
                continue;
            }
            // An instruction that writes the register or names the slot.
            let interferes = |inst: Inst| {
                let ops = func.inst_operands(inst);
                let allocs = &out.allocs[out.inst_alloc_offsets[inst.index()] as usize..];
                ops.iter()
                    .zip(allocs)
                    .any(|(op, &a)| a == to || (op.kind() == OperandKind::Def && a == from))
                    || from
                        .as_reg()
                        .is_some_and(|r| func.inst_clobbers(inst).contains(r))
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
            for &succ in succs {
                match found_in(succ) {
                    Some(j) => s.dropped.push(j),
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            if !all {
                s.dropped.truncate(first);
                continue;
            }
            s.added
                .push((hoist_after, hoist_at, Edit::Move { from, to }));
        }
    }
    if s.added.is_empty() {
        return 0;
    }
    let removed = s.dropped.len() - s.added.len();
    s.dropped.sort_unstable();
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
    removed
}
