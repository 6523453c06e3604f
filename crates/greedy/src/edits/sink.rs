//! Common moves sunk into a join (`Options::sink_common_moves`): when every predecessor
//! of a block jumps only to it and each makes the same move (same source, same
//! destination) among the edits before its jump, the move is made once, at the start of
//! the join, instead of once per predecessor. Typically the edge moves of a block
//! parameter whose arguments all sit in one register or slot, or a value every side of a
//! diamond reloads before the join.
//!
//! Why the result is the same, location by location: nothing after the move in a
//! predecessor (later edits, the jump) writes its source or reads or writes its
//! destination, so the source holds at the predecessor's end what the move read, and the
//! destination's old content was dead there. At the join's start the source then holds
//! what every predecessor's move read, under the labels the edges give it (a block
//! argument becomes the parameter wherever it sits), and the one move copies exactly that.
//! This holds whichever values the moves carried; no value bookkeeping is needed.
//!
//! A join is no deeper in loops than all its predecessors together (a loop header is
//! entered from outside the loop as well), so the one move costs at most what the moves
//! it replaces cost together; the block frequencies are checked all the same, for
//! irreducible flow.

use super::{block_edit_runs, edit_blocks_move, inst_blocks_move, is_stack_alloc, splice_edits};
use crate::analysis::cfg::Cfg;
use crate::analysis::loops::BlockFrequency;
use regalloc2::{Allocation, Block, Edit, Function, Output, PRegSet, ProgPoint};

/// Moves of the first predecessor considered per join.
const MAX_CANDIDATES: usize = 32;
/// Joins with more predecessors are left alone (each candidate is looked for in each).
const MAX_PREDECESSORS: usize = 64;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct SinkScratch {
    /// Indices of the moves to drop from `Output::edits`, sorted.
    dropped: Vec<usize>,
    /// Moves to add: (index of the edit they go before, point, edit), sorted.
    added: Vec<(usize, ProgPoint, Edit)>,
    /// Per block jumping to a join and making moves right before its jump: (the join,
    /// the block, the range of those moves in `Output::edits`).
    tails: Vec<(Block, Block, u32, u32)>,
    /// Per predecessor of the join looked at: the index of its matching move.
    matched: Vec<usize>,
    edits: Vec<(ProgPoint, Edit)>,
}

/// Sinks the common moves of every join's predecessors; returns how many moves were
/// removed (each sunk move counts for all but one of its copies).
pub(crate) fn sink_common_moves<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    freq: &BlockFrequency,
    stack_regs: PRegSet,
    out: &mut Output,
    s: &mut SinkScratch,
) -> usize {
    s.dropped.clear();
    s.added.clear();
    if out.edits.is_empty() {
        return 0;
    }
    let is_stack = |a: Allocation| is_stack_alloc(&stack_regs, a);
    // One pass over the edits finds each block that jumps to a join (a block with several
    // predecessors) and makes moves right before its jump, with the range of those moves.
    s.tails.clear();
    for (b, _, last, end) in block_edit_runs(func, cfg, &out.edits) {
        if last < end
            && let [join] = func.block_succs(b)
            && func.block_preds(*join).len() >= 2
        {
            s.tails.push((*join, b, last as u32, end as u32));
        }
    }
    // By join, each one's predecessors in block order (stable: they came in that order).
    s.tails.sort_by_key(|&(join, _, _, _)| join);
    let mut removed = 0;
    for group in s.tails.chunk_by(|a, b| a.0 == b.0) {
        let join = group[0].0;
        let preds = func.block_preds(join);
        // Every predecessor makes moves before its jump (and jumps only to the join: the
        // group holds only such blocks, one entry each).
        if group.len() != preds.len()
            || preds.len() > MAX_PREDECESSORS
            || join == func.entry_block()
            || group.iter().any(|t| t.1 == join)
        {
            continue;
        }
        let (_, _, lo0, hi0) = group[0];
        let (lo0, hi0) = (lo0 as usize, hi0 as usize);
        let pred_freq: f32 = preds.iter().map(|&p| freq.of(p)).sum();
        if freq.of(join) >= pred_freq {
            continue;
        }
        // The first move (from, to) in the run [lo, hi), if nothing after it there
        // writes its source or touches its destination.
        let sinkable = |lo: usize, hi: usize, from: Allocation, to: Allocation| {
            let k = lo
                + out.edits[lo..hi].iter().position(|(_, e)| {
                    let Edit::Move { from: f, to: t } = e;
                    *f == from && *t == to
                })?;
            out.edits[k + 1..hi]
                .iter()
                .all(|(_, Edit::Move { from: f, to: t })| !edit_blocks_move(*f, *t, from, to))
                .then_some(k)
        };
        let join_at = ProgPoint::before(func.block_insns(join).first());
        let start_lo = out.edits.partition_point(|&(p, _)| p < join_at);
        for k in lo0..hi0.min(lo0 + MAX_CANDIDATES) {
            let Edit::Move { from, to } = out.edits[k].1.clone();
            if is_stack(from) && is_stack(to) {
                continue;
            }
            // Only a move's first copy in the run stands for it.
            if sinkable(lo0, hi0, from, to) != Some(k) {
                continue;
            }
            s.matched.clear();
            for &(_, p, lo, hi) in group {
                if inst_blocks_move(func, out, func.block_insns(p).last(), from, to) {
                    break;
                }
                match sinkable(lo as usize, hi as usize, from, to) {
                    Some(m) => s.matched.push(m),
                    None => break,
                }
            }
            if s.matched.len() != preds.len() {
                continue;
            }
            s.dropped.extend_from_slice(&s.matched);
            s.added.push((start_lo, join_at, Edit::Move { from, to }));
            removed += preds.len() - 1;
        }
    }
    if s.added.is_empty() {
        return 0;
    }
    s.dropped.sort_unstable();
    // Joins are visited in order and each one's moves in their order: `added` is sorted
    // by position, and moves for one join keep their predecessor's order.
    splice_edits(&mut out.edits, &s.dropped, &s.added, &mut s.edits);
    removed
}
