//! Partially dead moves sunk out of a branch (`Options::sink_partially_dead_moves`): a
//! move in a block that ends in a branch, whose destination only some successors read,
//! is made at the start of those successors instead, so the paths that never read it do
//! not run it. The typical case is an early return: a parameter copied from its argument
//! register into a callee-saved one at the entry, which only the path past the early
//! return (the one with the calls) needs. The weighted cost cannot see the difference,
//! since a successor of a branch is as deep in loops as the branch and so weighs the
//! same; the paths taken can (LLVM sinks such copies after allocation too, in
//! `PostRAMachineSinking`). A move no successor reads is dropped.
//!
//! Why the result is the same, location by location: nothing after the move in its block
//! (later edits, instructions, the branch) reads or writes its destination or writes its
//! source, so at the block's end the source still holds what the move read and the
//! destination's old content is what the move would have overwritten. Each successor is
//! entered only from this block (the analyses reject critical edges, and an edge into
//! the entry counts as one), so a copy of the move made first at its start, before its
//! own edits, leaves every location as it was there before; where no path from a
//! successor reads the destination before writing it, what the destination holds there
//! does not matter.
//!
//! Work is bounded: only moves among the last `WALK_BUDGET` instructions of a block are
//! looked at, and the search for a read of the destination visits at most
//! `SEARCH_BUDGET` instructions from a successor (a search that runs out counts as a
//! read).

use super::{edit_blocks_move, inst_blocks_move, splice_edits};
use crate::analysis::cfg::Cfg;
use crate::analysis::loops::BlockFrequency;
use regalloc2::{
    Allocation, Block, Edit, Function, Inst, InstPosition, OperandKind, Output, ProgPoint,
};

/// Instructions a search for a read of the moved value may visit from one successor.
const SEARCH_BUDGET: usize = 16;
/// Instructions before a block's branch that its moves are looked for among: a move far
/// from the branch has more in the way, and every block with moves would be walked whole.
const WALK_BUDGET: usize = 32;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct PartialDeadScratch {
    /// Indices of the moves taken out of their blocks, sorted.
    dropped: Vec<usize>,
    /// Copies to add: (index of the edit they go before, point, edit), pushed in the
    /// order of the moves they copy within a block; sorted (stably) by index and point
    /// before splicing.
    added: Vec<(usize, ProgPoint, Edit)>,
    edits: Vec<(ProgPoint, Edit)>,
    /// Successors of the block at hand that read the moved value.
    readers: Vec<Block>,
    stack: Vec<Block>,
    /// Per block: the search that last visited it.
    visited: Vec<u32>,
    search: u32,
    /// Per block: the index of its first edit (or of the first edit after it), found
    /// while searching `function` (this call's stamp, so nothing is cleared).
    edits_from: Vec<(u32, u32)>,
    function: u32,
}

/// What a block does to one location, in program order.
enum Access {
    Read,
    Written,
    Neither,
}

/// Sinks the partially dead moves of every branching block; returns how many moves left
/// their blocks and how many of those were dropped (no successor read them).
pub(crate) fn sink_partially_dead_moves<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    freq: &BlockFrequency,
    out: &mut Output,
    s: &mut PartialDeadScratch,
) -> (usize, usize) {
    s.dropped.clear();
    s.added.clear();
    if out.edits.is_empty() {
        return (0, 0);
    }
    if s.visited.len() < func.num_blocks() {
        s.visited.resize(func.num_blocks(), 0);
        s.edits_from.resize(func.num_blocks(), (0, 0));
    }
    s.function = s.function.wrapping_add(1);
    if s.function == 0 {
        s.edits_from.fill((0, 0));
        s.function = 1;
    }
    let mut dead = 0;
    // Edits are sorted by point, so a block's are one run; a block is visited once.
    let mut e_end = out.edits.len();
    while e_end > 0 {
        let b = cfg.block_of(out.edits[e_end - 1].0.inst());
        let insts = func.block_insns(b);
        let first = ProgPoint::before(insts.first());
        let e_start = out.edits[..e_end].partition_point(|&(p, _)| p < first);
        let succs = func.block_succs(b);
        // Its last move is out of reach of the walk back from the branch: nothing to do.
        let within_reach =
            insts.last().index() - out.edits[e_end - 1].0.inst().index() < WALK_BUDGET;
        if succs.len() >= 2 && within_reach {
            let reach = insts.last().index() + 1 - WALK_BUDGET.min(insts.len());
            let from_e = e_start
                + out.edits[e_start..e_end].partition_point(|(p, _)| p.inst().index() < reach);
            for e in from_e..e_end {
                let (at, Edit::Move { from, to }) = out.edits[e];
                // Whatever comes after the move in its block (its edits, its
                // instructions from the one the move precedes) must leave both alone.
                let first = at.inst().index() + usize::from(at.pos() == InstPosition::After);
                let blocked = out.edits[e + 1..e_end]
                    .iter()
                    .any(|&(_, Edit::Move { from: f, to: t })| edit_blocks_move(f, t, from, to))
                    || (first..=insts.last().index())
                        .any(|i| inst_blocks_move(func, out, Inst::new(i), from, to));
                if !blocked {
                    dead += sink_one(func, cfg, freq, out, b, e, from, to, s);
                }
            }
        }
        e_end = e_start;
    }
    let sunk = s.dropped.len();
    if sunk > 0 {
        s.dropped.sort_unstable();
        // Copies bound for different successors can share an index (no edit between
        // the successors' starts): their points order them. Copies into one successor
        // come from its one predecessor, pushed in the order of its moves, which the
        // stable sort keeps.
        s.added.sort_by_key(|&(at, p, _)| (at, p));
        splice_edits(&mut out.edits, &s.dropped, &s.added, &mut s.edits);
    }
    (sunk, dead)
}

/// Decides for the move at `e` (`from -> to`, free to leave block `b`): where no
/// successor reads `to`, drops it (returns 1); where only some do and their frequencies
/// together are no more than the block's, moves it to their starts.
#[allow(clippy::too_many_arguments)]
fn sink_one<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    freq: &BlockFrequency,
    out: &Output,
    b: Block,
    e: usize,
    from: Allocation,
    to: Allocation,
    s: &mut PartialDeadScratch,
) -> usize {
    // Debug locations were made from the pieces: one saying the destination holds its
    // value from here to the branch would be wrong once the move leaves (only with
    // debug info; Wasmtime's default has none).
    let (at, end) = (out.edits[e].0, ProgPoint::after(func.block_insns(b).last()));
    if out
        .debug_locations
        .iter()
        .any(|&(_, start, stop, a)| a == to && start < end && stop > at)
    {
        return 0;
    }
    let succs = func.block_succs(b);
    s.readers.clear();
    let mut readers_freq = 0.0;
    for &succ in succs {
        // The analyses rejected critical edges, counting the entry as entered from
        // outside: a copy at a successor's start runs only after this block.
        debug_assert_eq!(func.block_preds(succ), &[b]);
        if maybe_read(func, cfg, out, to, succ, s) {
            s.readers.push(succ);
            readers_freq += freq.of(succ);
            // Moved into these, the move would run more often than where it is.
            if readers_freq > freq.of(b) || s.readers.len() == succs.len() {
                return 0;
            }
        }
    }
    s.dropped.push(e);
    for &r in &s.readers {
        let at = ProgPoint::before(func.block_insns(r).first());
        let index = out.edits.partition_point(|&(p, _)| p < at);
        s.added.push((index, at, Edit::Move { from, to }));
    }
    log::debug!(
        "partially dead move {from} -> {to} in {b:?}: {}",
        if s.readers.is_empty() {
            "dropped, no successor reads it".to_owned()
        } else {
            format!("sunk into {:?}", s.readers)
        }
    );
    usize::from(s.readers.is_empty())
}

/// Whether some path from the start of `start` may read `loc` before writing it (a search
/// out of budget says it may).
fn maybe_read<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    out: &Output,
    loc: Allocation,
    start: Block,
    s: &mut PartialDeadScratch,
) -> bool {
    s.search = s.search.wrapping_add(1);
    if s.search == 0 {
        s.visited.fill(0);
        s.search = 1;
    }
    s.stack.clear();
    s.stack.push(start);
    s.visited[start.index()] = s.search;
    let mut budget = SEARCH_BUDGET;
    while let Some(x) = s.stack.pop() {
        // Searches from one block's moves go through the same few successors.
        let (function, at) = s.edits_from[x.index()];
        let edits_from = if function == s.function {
            at as usize
        } else {
            let first = ProgPoint::before(func.block_insns(x).first());
            let at = out.edits.partition_point(|&(p, _)| p < first);
            s.edits_from[x.index()] = (s.function, at as u32);
            at
        };
        match access(func, cfg, out, loc, x, edits_from, &mut budget) {
            None | Some(Access::Read) => return true,
            Some(Access::Written) => {}
            Some(Access::Neither) => {
                for &succ in func.block_succs(x) {
                    if s.visited[succ.index()] != s.search {
                        s.visited[succ.index()] = s.search;
                        s.stack.push(succ);
                    }
                }
            }
        }
    }
    false
}

/// The first access block `x` makes to `loc` (its edits and instructions in program
/// order), or `None` once `budget` instructions have been looked at.
fn access<F: Function + ?Sized>(
    func: &F,
    cfg: &Cfg,
    out: &Output,
    loc: Allocation,
    x: Block,
    edits_from: usize,
    budget: &mut usize,
) -> Option<Access> {
    let insts = func.block_insns(x);
    let mut e = edits_from;
    let in_edits = |e: &mut usize, at: ProgPoint| -> Option<Access> {
        while let Some(&(p, Edit::Move { from, to })) = out.edits.get(*e)
            && p == at
        {
            *e += 1;
            if from == loc {
                return Some(Access::Read);
            }
            if to == loc {
                return Some(Access::Written);
            }
        }
        None
    };
    for inst in insts.iter() {
        *budget = budget.checked_sub(1)?;
        if let Some(a) = in_edits(&mut e, ProgPoint::before(inst)) {
            return Some(a);
        }
        let allocs = out.inst_allocs(inst);
        let ops = func.inst_operands(inst);
        if ops
            .iter()
            .zip(allocs)
            .any(|(op, &a)| a == loc && op.kind() == OperandKind::Use)
        {
            return Some(Access::Read);
        }
        if ops
            .iter()
            .zip(allocs)
            .any(|(op, &a)| a == loc && op.kind() == OperandKind::Def)
            || loc
                .as_reg()
                .is_some_and(|r| func.inst_clobbers(inst).contains(r))
        {
            return Some(Access::Written);
        }
        if let Some(a) = in_edits(&mut e, ProgPoint::after(inst)) {
            return Some(a);
        }
    }
    debug_assert!(
        out.edits
            .get(e)
            .is_none_or(|(p, _)| cfg.block_of(p.inst()) != x),
        "an edit of {x:?} was passed over"
    );
    Some(Access::Neither)
}
