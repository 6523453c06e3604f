//! Common moves hoisted out of a branch's successors (`Options::hoist_common_stores`,
//! `Options::hoist_common_moves`). When every successor of a block is entered only from
//! it and each makes the same move among its entry moves, the move is made once, before
//! the branch, instead of once per successor:
//! - a store (register to slot): a value spilled on every path out of a branch,
//!   typically two joins whose parameters share a partner slot;
//! - a reload (slot to register): a value spilled around a call and read on both sides
//!   of a branch after it, each side loading it into the same register;
//! - a register move: a value both sides need in the same other register.
//!
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

use super::{block_edit_runs, edit_blocks_move, inst_blocks_move, is_stack_alloc, splice_edits};
use crate::analysis::cfg::Cfg;
use regalloc2::{
    Allocation, Block, Edit, Function, Inst, InstPosition, Output, PRegSet, ProgPoint,
};

/// Successors longer than this are left alone: each move looked for is checked against
/// every instruction before it, so the work per branch stays bounded.
const MAX_SUCCESSOR_INSTS: usize = 16;
/// Moves of the first successor considered per branch.
const MAX_CANDIDATES: usize = 32;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct HoistScratch {
    /// Per block entered from one predecessor alone and making a wanted move: (that
    /// predecessor, the block, the range of its edits up to its last instruction).
    succ_edits: Vec<(Block, Block, u32, u32)>,
    /// The successors of the branch looked at, with their ranges of edits.
    ranges: Vec<(Block, usize, usize)>,
    /// Indices of the moves to drop from `Output::edits`.
    dropped: Vec<usize>,
    /// Moves to add: (index of the edit they go before, point, edit), sorted.
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
    // One pass over the edits finds, per block entered from one predecessor alone, the
    // range of its edits up to its last instruction, kept if it has a wanted move: a
    // branch all of whose successors have one is looked at (few are).
    s.succ_edits.clear();
    for (b, start, _, end) in block_edit_runs(func, cfg, &out.edits) {
        if let [pred] = func.block_preds(b)
            && out.edits[start..end]
                .iter()
                .any(|(_, Edit::Move { from, to })| wanted(*from, *to))
        {
            s.succ_edits.push((*pred, b, start as u32, end as u32));
        }
    }
    let mut counts = HoistCounts::default();
    if s.succ_edits.is_empty() {
        return counts;
    }
    // By branch, each one's successors in block order (stable: they came in that order).
    s.succ_edits.sort_by_key(|&(pred, _, _, _)| pred);
    for group in s.succ_edits.chunk_by(|a, b| a.0 == b.0) {
        let block = group[0].0;
        let succs = func.block_succs(block);
        if succs.len() < 2
            || group.len() != succs.len()
            || succs
                .iter()
                .any(|&succ| succ == block || func.block_insns(succ).len() > MAX_SUCCESSOR_INSTS)
        {
            continue;
        }
        s.ranges.clear();
        s.ranges.extend(
            group
                .iter()
                .map(|&(_, succ, lo, hi)| (succ, lo as usize, hi as usize)),
        );
        // Candidates: the wanted moves of the first successor, up to its end.
        let (first_succ, lo0, hi0) = s.ranges[0];
        let branch = func.block_insns(block).last();
        let hoist_at = ProgPoint::before(branch);
        // Edits are sorted by point: the moves go after those already before the branch.
        let hoist_after = out.edits.partition_point(|&(p, _)| p <= hoist_at);
        for k in lo0..hi0.min(lo0 + MAX_CANDIDATES) {
            let Edit::Move { from, to } = out.edits[k].1.clone();
            if !wanted(from, to) {
                continue;
            }
            let interferes = |inst: Inst| inst_blocks_move(func, out, inst, from, to);
            if interferes(branch) {
                continue;
            }
            // The same move in `succ` (its edits `lo..hi`) with nothing before it (edit
            // or instruction) writing its source or touching its destination.
            let found_in = |succ: Block, lo: usize, hi: usize| -> Option<usize> {
                let insns = func.block_insns(succ);
                let mut checked = insns.first();
                for j in lo..hi {
                    let (at, Edit::Move { from: f, to: t }) = out.edits[j].clone();
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
                    if edit_blocks_move(f, t, from, to) {
                        return None;
                    }
                }
                None
            };
            // The same move among every successor's edits, before the instructions
            // between are looked at.
            if s.ranges[1..].iter().any(|&(_, lo, hi)| {
                !out.edits[lo..hi]
                    .iter()
                    .any(|(_, Edit::Move { from: f, to: t })| *f == from && *t == to)
            }) {
                continue;
            }
            let mut all = true;
            let first = s.dropped.len();
            // A successor may make the same move twice (a value reloaded again after a
            // call): only its first, the one found in every successor, is a candidate, so
            // no edit is dropped twice.
            for &(succ, lo, hi) in &s.ranges {
                match found_in(succ, lo, hi) {
                    Some(j) if succ != first_succ || j == k => s.dropped.push(j),
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
                counts.stores += s.ranges.len() - 1;
            } else {
                counts.others += s.ranges.len() - 1;
            }
            s.added
                .push((hoist_after, hoist_at, Edit::Move { from, to }));
        }
    }
    if s.added.is_empty() {
        return counts;
    }
    s.dropped.sort_unstable();
    s.added.sort_by_key(|&(after, _, _)| after);
    splice_edits(&mut out.edits, &s.dropped, &s.added, &mut s.edits);
    counts
}
