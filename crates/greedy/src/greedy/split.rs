//! Live-range splitting, tried in LLVM's order once an interval failed assignment and
//! eviction and came back in the `Split` stage: an interval inside one block gets a
//! *local* split (the window of uses where some register is free), then an
//! *instruction* split if its uses are pinned to fixed registers; an interval across
//! blocks gets a *region* split (the blocks where it keeps a register, chosen per
//! candidate register to minimise frequency-weighted spill and copy cost), then a
//! *block* split (one piece per block with uses). Products that cannot make progress
//! move on (`Split2`, `Spill`), so splitting always terminates.
//!
//! The split editor (`split_into`) turns a partition of an interval's segments into new
//! `Main` intervals of the same vreg; the edit builder connects the pieces with moves at
//! their boundaries (inside blocks) and on CFG edges.

use super::Allocator;
use super::advisor::EvictionAdvisor;
use super::interval::{IntervalId, IntervalKind, LiveInterval, SegmentList, Stage, UseList};
use super::matrix::fixed_conflict_from;
use crate::Phase;
use crate::analysis::intervals::{Point, Segment, UseSite, point_inst};
use crate::observe::{SplitKind, observe};
use crate::search::gallop;
use crate::union_find::find;
use log::debug;
use regalloc2::{Block, Function, OperandConstraint, PReg, PRegSet};

/// Candidate registers examined per split attempt, in allocation order. Each region
/// candidate costs a probe of every block segment and up to two descents; on the wasm
/// corpus 6 instead of every register cut 7% of all instructions for +0.16% weighted
/// cost (geomean; summed cost fell), 4 cut 10% for +0.37%.
const MAX_CANDIDATES: usize = 6;
/// Block segments a region split may probe over all its register candidates: a value
/// through more than `REGION_PROBE_BUDGET / MAX_CANDIDATES` segments weighs fewer of them,
/// down to `MIN_REGION_CANDIDATES`: those whose interference in its use blocks forces the
/// least stack cost. So an attempt's probes and descents grow with its segments only. On
/// the Wasm corpus: 0.7% fewer allocation instructions, 6.5% fewer on the `printf`-shaped
/// function (951 blocks, whose long values with a use in a nested loop took most of its
/// region splitting), cost geomean 0.7793 -> 0.7789 (19 functions cheaper, 5 dearer, at
/// most +0.24%; summed -0.21%). Keeping the first candidates of the allocation order
/// instead cut 1.7% of the instructions for the same Wasm cost, but a generated dispatch
/// loop (`scale`'s dispatch-1000, whose values are free only in late registers) cost 46%
/// more.
const REGION_PROBE_BUDGET: usize = 256;
const MIN_REGION_CANDIDATES: usize = 2;

/// How many register candidates a region split of `segments` block segments weighs.
fn region_candidate_limit(segments: usize) -> usize {
    (REGION_PROBE_BUDGET / segments.max(1)).clamp(MIN_REGION_CANDIDATES, MAX_CANDIDATES)
}

/// Register candidates a callee-saved pre-split weighs: the one whose interference in the
/// value's use blocks forces the least stack cost. Its candidates are the registers that
/// are not untouched callee-saved ones, which the same calls clobber, so they differ only
/// in what is assigned to them, which that ranking reads. Measured against six: on the
/// Wasm and fuzz corpora one function cheaper by a unit, none dearer, and 1.4% fewer
/// allocation instructions on Wasm functions of 16-127 instructions (0.2% on the corpus).
const PRE_SPLIT_CANDIDATES: usize = 1;

/// Registers named by the value's fixed operands added to the candidates.
const MAX_FIXED_CANDIDATES: usize = 2;
/// Block segments beyond which an interval is not region-split.
pub(crate) const MAX_REGION_SEGMENTS: usize = 256;
/// Block segments beyond which a value with sparse uses (fewer than one block segment
/// in `SPARSE_USE_RATIO` with a use) outside nested loops is not region-split. It was
/// 64: at 32 the Wasm corpus takes 1.7% fewer allocation instructions for the same cost
/// geomean (+0.002% summed); at 16 the geomean rose 0.26%.
const SPARSE_REGION_SEGMENTS: usize = 32;
const SPARSE_USE_RATIO: usize = 16;
/// Block segments beyond which a value with sparse uses is not region-split even with a
/// use inside a nested loop (`pub(crate)` for the tests on either side of it).
pub(crate) const SPARSE_NESTED_REGION_SEGMENTS: usize = 128;
/// Use instructions beyond which an interval is not local-split. Each split leaves
/// fewer uses per product, and each attempt is linear in the uses per candidate (free
/// windows) or bounded per start (`MAX_EVICTING_WINDOW`). It was 64: ed25519's largest
/// block has values with 400-800 uses between calls, which then went wholly to the
/// spiller, a reload at each use.
const MAX_LOCAL_SPLIT_USES: usize = 4096;
/// Use instructions an interval must have for its local split to weigh windows that evict
/// (`Options::evicting_local_split`): below, the evictions' churn is not worth the few
/// reloads a window saves. On the Wasm corpus any threshold from 8 to 64 gave the same
/// sums within 0.1%; at 0, one function of meshoptimizer lost 0.17%.
const MIN_EVICTING_SPLIT_USES: usize = 16;
/// Use instructions a local split window that evicts may hold (each start's extension
/// is bounded by this).
const MAX_EVICTING_WINDOW: usize = 256;
/// Improvement passes of the region labelling.
const MAX_REGION_PASSES: usize = 8;
/// Cost of a store or reload relative to a register move.
const MEMORY_COST: f32 = 2.0;
/// A split must beat spilling by this factor (LLVM's hysteresis).
const HYSTERESIS: f32 = 0.98;

/// The best window of a local split so far: the use instructions `first..=last` (indices
/// into the interval's use instructions), `uses` of them over `len` points, free in `reg`.
#[derive(Clone, Copy)]
struct LocalWindow {
    uses: usize,
    len: u32,
    reg: PReg,
    first: usize,
    last: usize,
    /// The heaviest occupant the window would evict (0 when the register is free).
    evicts: f32,
}

/// The non-empty cells (cell `c` is `bounds[c]..bounds[c + 1]`) that overlap
/// `start..end`, for ranges visited in increasing order of `start`: `from` (0 before the
/// first) carries the first cell that may still overlap one.
fn cells_overlapping<'b>(
    bounds: &'b [u32],
    from: &mut usize,
    start: u32,
    end: u32,
) -> impl Iterator<Item = usize> + 'b {
    let n = bounds.len() - 1;
    while *from < n && bounds[*from + 1] <= start {
        *from += 1;
    }
    (*from..n)
        .take_while(move |&c| bounds[c] < end)
        .filter(move |&c| bounds[c] < bounds[c + 1])
}

/// The most use instructions a local-split window may hold among `cells` (use `k` is cell
/// `2k`, the gap after it `2k + 1`) without crossing an infinite one.
fn longest_finite_run(cells: &[f32]) -> usize {
    let (mut longest, mut run) = (0, 0);
    for (c, w) in cells.iter().enumerate() {
        if w.is_infinite() {
            run = 0;
        } else if c % 2 == 0 {
            run += 1;
            longest = longest.max(run);
        }
    }
    longest
}

/// Extends a local-split window's extremes (heaviest occupant, first and last occupant
/// ordinals) over one more step.
#[inline(always)]
fn widen(heaviest: &mut f32, first: &mut u32, last: &mut u32, (w, f, l): (f32, u32, u32)) {
    // No weight is NaN: a plain comparison, not `f32::max`.
    if w > *heaviest {
        *heaviest = w;
    }
    *first = (*first).min(f);
    *last = (*last).max(l);
}

/// The extremes (heaviest occupant, first and last occupant ordinals) of the local-split
/// steps a window crosses, for windows whose two ends only move right. The heaviest
/// comes from a monotonic queue; the ordinals need none, as a step's occupants never
/// start before an earlier step's (both cursors over the register's union only move
/// forward): the first is the earliest occupied step's, the last the latest's.
#[derive(Default)]
struct CrossedSteps {
    heaviest: MonotonicQueue<f32>,
    /// No step in `from..occupied` of the latest call has an occupant.
    occupied: usize,
    /// The last ordinal of the latest occupied step pushed.
    last: u32,
    /// Steps below this have been pushed.
    pushed: usize,
}

/// A sliding-window extreme: entries (index, value) with indices increasing, each value
/// more extreme than every later one (a later value at least as extreme hides the
/// earlier ones, which can never be the extreme again).
struct MonotonicQueue<T> {
    entries: Vec<(u32, T)>,
    head: usize,
}

impl<T> Default for MonotonicQueue<T> {
    fn default() -> Self {
        MonotonicQueue {
            entries: Vec::new(),
            head: 0,
        }
    }
}

impl<T: Copy> MonotonicQueue<T> {
    fn clear(&mut self) {
        self.entries.clear();
        self.head = 0;
    }

    /// Appends step `i`, dropping the entries `value` is at least as extreme as.
    #[inline]
    fn push(&mut self, i: usize, value: T, at_least: impl Fn(T, T) -> bool) {
        while self.entries.len() > self.head
            && at_least(value, self.entries[self.entries.len() - 1].1)
        {
            self.entries.pop();
        }
        self.entries.push((i as u32, value));
    }

    /// The extreme over the steps from `from` on, or `none` when there are none.
    #[inline]
    fn front(&mut self, from: usize, none: T) -> T {
        while self.head < self.entries.len() && (self.entries[self.head].0 as usize) < from {
            self.head += 1;
        }
        self.entries.get(self.head).map_or(none, |e| e.1)
    }
}

impl CrossedSteps {
    fn restart(&mut self) {
        self.heaviest.clear();
        (self.occupied, self.last, self.pushed) = (0, 0, 0);
    }

    /// Extremes over `steps[from..to]` ((0, `u32::MAX`, 0) when empty). Neither `from`
    /// nor `to` may be below its value at the previous call since `restart`, and the
    /// occupied steps' ordinals must not decrease along `steps`.
    fn fold(&mut self, steps: &[(f32, u32, u32)], from: usize, to: usize) -> (f32, u32, u32) {
        debug_assert!(to >= self.pushed, "the window's end moved left");
        while self.pushed < to {
            let i = self.pushed;
            let (w, first, last) = steps[i];
            self.heaviest.push(i, w, |a, b| a >= b);
            if first != u32::MAX {
                debug_assert!(first <= last && last >= self.last, "ordinals went back");
                self.last = last;
            }
            self.pushed += 1;
        }
        self.occupied = self.occupied.max(from);
        while self.occupied < to && steps[self.occupied].1 == u32::MAX {
            self.occupied += 1;
        }
        let heaviest = self.heaviest.front(from, 0.0);
        if self.occupied < to {
            (heaviest, steps[self.occupied].1, self.last)
        } else {
            (heaviest, u32::MAX, 0)
        }
    }
}

/// One product of a split: its segments, the stage it starts in, and a register that is
/// known to be free for it (assigned right away).
struct Product {
    segments: SegmentList,
    stage: Stage,
    place: Placement,
}

/// What becomes of a split product once made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// Queued (or, in stage `Done`, spilled at once), with no register in mind.
    Queue,
    /// Assigned this register at once: the split found it free over the product.
    Assign(PReg),
    /// Queued with this register as a hint (`LiveInterval::split_hint`).
    Hint(PReg),
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Tries the split kinds in order; returns true if the interval was replaced by
    /// split products. `avoid_csr`: the interval declined an untouched callee-saved
    /// register as dearer than spilling, so no product may be given one either (LLVM's
    /// pre-split ignores callee-saved candidates the same way).
    pub(crate) fn try_split(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
        let iv = &self.ctx.intervals[id];
        if iv.kind != IntervalKind::Main || iv.segments.is_empty() {
            return false;
        }
        let first_block = self.block_of_point(iv.segments[0].start);
        let local = iv
            .segments
            .iter()
            .all(|s| self.block_of_point(s.start) == first_block);
        if local {
            self.timed(Phase::LocalSplit, |a| a.try_local_split(id, avoid_csr))
                || self.timed(Phase::InstructionSplit, |a| a.try_instruction_split(id))
        } else {
            // Region splitting probes every candidate register over every block segment;
            // past a few hundred blocks that is most of the allocation time (LLVM guards
            // the same spot with its huge-size-for-split limit), so block splitting alone.
            (iv.stage < Stage::Split2
                && iv.segments.len() <= MAX_REGION_SEGMENTS
                && self.timed(Phase::RegionSplit, |a| a.try_region_split(id, avoid_csr)))
                || self.timed(Phase::BlockSplit, |a| a.try_block_split(id))
        }
    }

    /// The registers a split of `iv` may hand its products, in allocation order.
    fn split_candidates<'s>(
        &'s self,
        iv: &'s LiveInterval,
        avoid_csr: bool,
    ) -> impl Iterator<Item = PReg> + 's {
        self.order_for(iv)
            .filter(move |&p| !(avoid_csr && self.ctx.callee_saved.is_untouched(p)))
            .take(MAX_CANDIDATES)
    }

    /// The registers a local split tries: `split_candidates`, then as many again of the
    /// later ones that no fixed reservation (a call's clobbers) blocks over the interval,
    /// which a value live across calls can only keep.
    fn local_split_candidates<'s>(
        &'s self,
        iv: &'s LiveInterval,
        avoid_csr: bool,
    ) -> impl Iterator<Item = PReg> + 's {
        let extra = if self.options.evicting_local_split {
            MAX_CANDIDATES
        } else {
            0
        };
        let usable = move |p: &PReg| !(avoid_csr && self.ctx.callee_saved.is_untouched(*p));
        self.order_for(iv)
            .filter(usable)
            .take(MAX_CANDIDATES)
            .chain(
                self.order_for(iv)
                    .filter(usable)
                    .skip(MAX_CANDIDATES)
                    .filter(|&p| !iv.fixed_conflicts.contains(p))
                    .take(extra),
            )
    }

    /// Whether `p` is free for `iv` over `s`: no occupant there, no fixed reservation of
    /// another value.
    fn free_over(&self, p: PReg, iv: &LiveInterval, s: Segment) -> bool {
        self.ctx.matrix.is_free(p, &[s])
            && !(iv.fixed_conflicts.contains(p)
                && fixed_conflict_from(&self.an.intervals.fixed[p.index()], &mut 0, s, iv.vreg))
    }

    fn block_of_point(&self, p: u32) -> Block {
        self.an.cfg.block_of(point_inst(p))
    }

    /// The uses of `iv` whose first point lies in `s`, for segments visited in
    /// increasing order: `at` (0 before the first) carries the position in `iv.uses`
    /// from one segment to the next, so a walk over all of an interval's segments is one
    /// pass over its uses (sorted by instruction).
    fn uses_from<'i>(iv: &'i LiveInterval, at: &mut usize, s: &Segment) -> &'i [UseSite] {
        let uses = &iv.uses[..];
        while *at < uses.len() && uses[*at].first < s.start {
            *at += 1;
        }
        let lo = *at;
        while *at < uses.len() && uses[*at].first < s.end {
            *at += 1;
        }
        &uses[lo..*at]
    }

    /// The segments of `iv` (by index) that `uses_from` gives uses, walked in order, with
    /// those uses: the same slices as `uses_from` over every segment, but a segment that
    /// ends before the next use is passed over with one comparison (a value through
    /// hundreds of blocks has uses in a few).
    fn uses_by_segment<'i>(
        iv: &'i LiveInterval,
    ) -> impl Iterator<Item = (usize, &'i [UseSite])> + 'i {
        let segments = &iv.segments[..];
        let mut at = 0;
        let mut k = 0;
        std::iter::from_fn(move || {
            loop {
                let next = iv.uses.get(at)?.first;
                // `uses_from` gives these nothing and leaves `at` where it is.
                k = gallop_segments(segments, k, next);
                let s = segments.get(k)?;
                k += 1;
                let uses = Self::uses_from(iv, &mut at, s);
                if !uses.is_empty() {
                    return Some((k - 1, uses));
                }
            }
        })
    }

    // ----- Region splitting -----------------------------------------------------------

    /// For each candidate register, label every block segment "register" or "stack":
    /// a segment with interference must be stack; a stack segment costs a reload or store
    /// per operand in it; each CFG edge the value crosses from a stack segment into a
    /// register segment costs a reload (the store is made once, at the def). Labels start at "register wherever free" and are
    /// improved by flipping single segments while that lowers the cost (a bounded
    /// Hopfield-style descent over the same objective as LLVM's spill placement). The
    /// cheapest labelling over all candidates is used if it beats spilling everything.
    fn try_region_split(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
        let mut scratch = self.ctx.region_scratch.take();
        let split = self.region_split_with(&mut scratch, id, avoid_csr, None);
        self.ctx.region_scratch.put(scratch);
        split
    }

    /// A region split that avoids untouched callee-saved registers and must cost less
    /// than `cap` (`try_csr_pre_split`).
    pub(crate) fn try_region_split_under(&mut self, id: IntervalId, cap: f32) -> bool {
        let mut scratch = self.ctx.region_scratch.take();
        let split = self.region_split_with(&mut scratch, id, true, Some(cap));
        self.ctx.region_scratch.put(scratch);
        split
    }

    fn region_split_with(
        &mut self,
        scratch: &mut RegionScratch,
        id: IntervalId,
        avoid_csr: bool,
        cap: Option<f32>,
    ) -> bool {
        let RegionScratch {
            blocks,
            stack_cost,
            links,
            boundary,
            adj,
            best_label,
            label_a,
            label_b,
            descent,
            free,
            seen,
            candidates,
            last_segment,
            fixed_ops,
            reg_base,
            reg_cost,
            spans,
            modes,
            best_modes,
            partial_adj,
            island_root,
            island_of,
        } = scratch;
        let iv = &self.ctx.intervals[id];
        // Debug builds go on to check the shortcut against the exits it stands for.
        let ruled_out = self.region_split_ruled_out(iv);
        if ruled_out && !cfg!(debug_assertions) {
            return false;
        }
        let n = iv.segments.len();
        let f = self.func;
        // Per segment: its block, frequency and the cost of keeping it on the stack.
        blocks.clear();
        blocks.extend(iv.segments.iter().map(|s| self.block_of_point(s.start)));
        stack_cost.clear();
        stack_cost.resize(n, 0.0);
        fixed_ops.clear();
        spans.clear();
        spans.resize(n, NO_SPAN);
        for (k, uses) in Self::uses_by_segment(iv) {
            // Operands that accept the stack read the spill slot at no cost. A fixed use
            // is served by a copy into its register, a reload from the stack and a move
            // (or nothing) from a register, but charging it so (2 against 1 or 0) made
            // the Wasm corpus worse (geomean 0.8369 -> 0.8382, ed25519 +0.14%, fuzz at 8
            // registers +3% summed): region splits it enables keep values in registers
            // that the spiller's reload pieces serve as well. So it is not charged.
            let freq = self.an.freq.of(blocks[k]);
            let mut costly = 0;
            let span = &mut spans[k];
            for u in uses {
                if self.needs_register(u) {
                    costly += 1;
                }
                // Every operand, even one that reads the slot: a cut between an early use
                // and a late one of the same instruction would leave the late one's
                // register to the interference.
                span.0 = span.0.min(2 * u.inst.index() as u32);
                span.1 = span.1.max(u.last + 1);
            }
            stack_cost[k] = MEMORY_COST * freq * costly as f32;
            if costly == 0 {
                spans[k] = NO_SPAN;
            }
        }
        // A fixed def precedes its value's segment (which starts after the copy out of
        // the register): it belongs to the segment starting right after it, if this
        // interval holds that one. A store from the stack side, a move from a register.
        if self.ctx.vreg_fixed_uses[iv.vreg.vreg()] {
            for u in iv.uses.iter().filter(|u| u.is_def()) {
                if let OperandConstraint::FixedReg(q) = u.operand.constraint()
                    && let Ok(k) = iv
                        .segments
                        .binary_search_by_key(&(2 * u.inst.index() as u32 + 2), |s| s.start)
                {
                    let freq = self.an.freq.of(blocks[k]);
                    stack_cost[k] += MEMORY_COST * freq;
                    fixed_ops.push((k as u32, q, freq));
                    // Its copy out of the register starts the segment: no stack before.
                    spans[k].0 = 0;
                    spans[k].1 = spans[k].1.max(iv.segments[k].start);
                }
            }
        }
        debug_assert!({
            let mut at = 0;
            let mut with_uses = Self::uses_by_segment(iv);
            let same = iv.segments.iter().enumerate().all(|(k, s)| {
                let uses = Self::uses_from(iv, &mut at, s);
                uses.is_empty()
                    || with_uses
                        .next()
                        .is_some_and(|(j, w)| j == k && std::ptr::eq(w, uses))
            });
            same && with_uses.next().is_none()
        });
        // Every labelling costs at least nothing, and a split must cost less than
        // spilling: a value whose operands all accept the stack never splits here.
        let spill_all: f32 = stack_cost.iter().sum();
        if spill_all <= 0.0 {
            return false;
        }
        // A value through many blocks with uses in few of them, none inside a nested
        // loop, is left to the block splitter: its region labelling keeps the register in
        // little more than the use blocks, which the block split's pieces (and its loop
        // pieces) do at a fraction of the probing and descents. On the Wasm corpus this
        // cut 3% of the instructions of the largest functions for +0.01% weighted cost
        // (geomean; the sum unchanged); without the nested-loop exception one hot
        // function's cost rose 60%. Past `SPARSE_NESTED_REGION_SEGMENTS` the exception
        // ends: see `sparse_beyond_region`.
        let use_blocks = stack_cost.iter().filter(|&&c| c > 0.0).count();
        let nested_use =
            (0..n).any(|k| stack_cost[k] > 0.0 && self.an.loops.depth[blocks[k].index()] >= 2);
        if sparse_beyond_region(n, use_blocks, nested_use) {
            return false;
        }
        debug_assert!(
            !ruled_out,
            "{id}: region split ruled out by its uses, yet labelled"
        );
        // The edit builder writes a spilled value's slot once, right after its def (SSA:
        // the def dominates every point where the value is live), and drops every later
        // move into the slot. So entering the stack costs nothing at the edge; the store
        // is paid at the def: by the def's own operand when its block is on the stack, by
        // `boundary` below when it keeps the register (a labelling always leaves some
        // block on the stack). Leaving the stack costs a reload where the edit builder
        // puts the edge move: at the successor's start if it has one predecessor, else
        // before the predecessor's branch.
        // Directed edges between segments: (from a, to b, cost of a reload from a to b).
        links.clear();
        boundary.clear();
        boundary.resize(n, 0.0);
        descent.charged.clear();
        let all_segments = self.an.intervals.segments_of(iv.vreg);
        if last_segment.len() < f.num_blocks() {
            last_segment.resize(f.num_blocks(), NO_SEGMENT);
        }
        // Segments are sorted, so the last written for a block is its last.
        for (k, b) in blocks.iter().enumerate() {
            last_segment[b.index()] = k as u32;
        }
        for (k, s) in iv.segments.iter().enumerate() {
            let b = blocks[k];
            if s.start != 2 * f.block_insns(b).first().index() as u32 {
                continue;
            }
            let preds = f.block_preds(b);
            for &pred in preds {
                let edge_freq = if preds.len() == 1 && b != f.entry_block() {
                    self.an.freq.of(b)
                } else {
                    self.an.freq.of(pred)
                };
                let cost = MEMORY_COST * edge_freq;
                // The predecessor's segment, if the interval covers its end: its last
                // in that block (a table lookup; a linear search here once made region
                // splitting quadratic in the blocks a value lives through).
                let pred_end = 2 * f.block_insns(pred).last().index() as u32 + 2;
                let j = last_segment[pred.index()];
                if j != NO_SEGMENT && iv.segments[j as usize].end == pred_end {
                    let j = j as usize;
                    // A block looping to itself keeps one label: its edge never costs.
                    if j != k {
                        links.push((j, k, cost));
                    }
                } else if all_segments
                    .binary_search_by_key(&pred_end, |s| s.end)
                    .is_ok()
                {
                    // The value arrives from a block this interval does not cover
                    // (another piece of the vreg, spilled or about to be): a reload if
                    // this block keeps the register.
                    boundary[k] += cost;
                    descent.charged.push(k as u32);
                }
            }
        }
        for b in blocks.iter() {
            last_segment[b.index()] = NO_SEGMENT;
        }
        let def_block = self.an.live.def_block[iv.vreg.vreg()];
        if !self.out.slots.has_slot(iv.vreg)
            && def_block.is_valid()
            && let Some(k) = blocks.iter().position(|&b| b == def_block)
        {
            boundary[k] += MEMORY_COST * self.an.freq.of(def_block);
            descent.charged.push(k as u32);
        }
        adj.fill(n, links);
        // A register segment serves a fixed def by a move unless the register is the
        // fixed one: the compact region, whose register is not chosen yet, pays every
        // move, a candidate the moves from itself.
        reg_base.clone_from(boundary);
        let mut fixed_regs = PRegSet::empty();
        for &(k, q, freq) in fixed_ops.iter() {
            reg_base[k as usize] += freq;
            fixed_regs.add(q);
            descent.charged.push(k);
        }

        // A pre-split (`cap`) must beat the callee-saved register it stands in for, not
        // spilling, and has no compact region (LLVM's pre-split has none either).
        let threshold = cap.unwrap_or(spill_all * HYSTERESIS);
        // LLVM's compact region is the first candidate (no register: `None`): the value
        // keeps a register of its own, not chosen yet, in its use blocks. A register
        // candidate must beat it; a tie goes to the register in hand, since the compact
        // region must still find one.
        let mut best: Option<(f32, Option<PReg>)> = None;
        if cap.is_none()
            && let Some(cost) = compact_region(best_label, stack_cost, reg_base, adj, descent)
            && cost < threshold
        {
            best = Some((cost, None));
        }
        let beats = |cost: f32, (c, p): (f32, Option<PReg>)| cost < c || (cost == c && p.is_none());
        candidates.clear();
        candidates.extend(self.split_candidates(iv, avoid_csr));
        let limit = if cap.is_some() {
            PRE_SPLIT_CANDIDATES
        } else {
            region_candidate_limit(n)
        };
        if candidates.len() > limit {
            // Past the budget, the candidates kept are those whose interference in the
            // value's use blocks forces the least stack cost (ties in allocation order):
            // a probe per use segment each, where weighing one probes every segment.
            let mut ranked = [(0.0f32, PReg::invalid()); MAX_CANDIDATES];
            for (slot, &p) in ranked.iter_mut().zip(candidates.iter()) {
                let forced: f32 = iv
                    .segments
                    .iter()
                    .zip(stack_cost.iter())
                    .filter(|&(&s, &cost)| cost > 0.0 && !self.free_over(p, iv, s))
                    .map(|(_, &cost)| cost)
                    .sum();
                *slot = (forced, p);
            }
            let ranked = &mut ranked[..candidates.len()];
            ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
            candidates.clear();
            candidates.extend(ranked[..limit].iter().map(|&(_, p)| p));
        }
        // The registers the value's fixed defs name are candidates too: there the def
        // needs no move (an argument or a call's result, often free up to the next call).
        for &(_, q, _) in fixed_ops.iter() {
            if !candidates.contains(&q)
                && self.may_hold(q, iv)
                && !(avoid_csr && self.ctx.callee_saved.is_untouched(q))
                && candidates.len() < MAX_CANDIDATES + MAX_FIXED_CANDIDATES
            {
                candidates.push(q);
            }
        }
        // A segment may keep the register over part of itself only where the slot is
        // written at the def: the piece after an odd cut (inside an instruction) must be
        // the slot, and only then is the move into it dropped (`Bridge`).
        let bridge_ok = self.slot_written_at_def(iv.vreg);
        let base_charged = descent.charged.len();
        // The `free` and `modes` of the candidates weighed so far, as bit words: a run
        // each of free segments, segments kept as the head and kept as the tail.
        seen.clear();
        'candidates: for &p in candidates.iter() {
            let reservations = &self.an.intervals.fixed[p.index()];
            let mut lo = 0;
            let mut probe = self.ctx.matrix.probe(p);
            free.clear();
            free.resize(n, false);
            modes.clear();
            modes.resize(n, Mode::Whole);
            // Segments with interference stay on the stack whatever the labelling (unless
            // they keep the register over their uses on one side of it): their cost bounds
            // the candidate's from below, and a candidate that cannot beat the best so far
            // (or spilling) is not worth a descent, nor the rest of its probes (the bound
            // only grows).
            let mut forced = 0.0f32;
            let mut partial = false;
            // Most candidates have no fixed reservation anywhere over the value.
            let fixed = iv.fixed_conflicts.contains(p);
            for (k, &s) in iv.segments.iter().enumerate() {
                free[k] = !(fixed && fixed_conflict_from(reservations, &mut lo, s, iv.vreg))
                    && probe.is_free(s);
                if free[k] {
                    continue;
                }
                if spans[k] != NO_SPAN {
                    let free_over = |part: Segment| self.free_over(p, iv, part);
                    let (first, end) = spans[k];
                    // All interference after the last costly use, or all before the first.
                    let head = Segment {
                        start: s.start,
                        end,
                    };
                    let tail = Segment {
                        start: first,
                        end: s.end,
                    };
                    if s.start < end
                        && end < s.end
                        && (end % 2 == 0 || bridge_ok)
                        && free_over(head)
                    {
                        modes[k] = Mode::Head(end);
                    } else if first > s.start && first < s.end && free_over(tail) {
                        modes[k] = Mode::Tail(first);
                    }
                    if modes[k] != Mode::Whole {
                        free[k] = true;
                        partial = true;
                        continue;
                    }
                }
                forced += stack_cost[k];
                if forced >= threshold || best.is_some_and(|b| !beats(forced, b)) {
                    continue 'candidates;
                }
            }
            if !free.iter().any(|&x| x) {
                continue;
            }
            // The labelling and its cost depend on `free` and `modes` alone for a
            // register no fixed operand names (a mode's cut is its segment's, whatever
            // the register): one free in the same blocks, and kept in part in the same
            // ones the same way, as a candidate already weighed cannot beat it (a tie
            // keeps the first; a fixed register's moves cost no more), and many are
            // (registers free all along the value, or blocked by the same calls, which
            // a pre-split's candidates all are). Fixed registers are always weighed.
            let mark = seen.len();
            seen.extend(free.chunks(64).map(|c| bit_word(c.iter().copied())));
            let words = seen.len() - mark;
            if partial {
                for kept in [
                    |m: &Mode| matches!(m, Mode::Head(_)),
                    |m: &Mode| matches!(m, Mode::Tail(_)),
                ] {
                    seen.extend(modes.chunks(64).map(|c| bit_word(c.iter().map(kept))));
                }
            } else {
                seen.resize(mark + 3 * words, 0);
            }
            if !fixed_regs.contains(p)
                && seen[..mark]
                    .chunks(3 * words)
                    .any(|earlier| earlier == &seen[mark..])
            {
                seen.truncate(mark);
                continue;
            }
            reg_cost.clone_from(boundary);
            for &(k, q, freq) in fixed_ops.iter() {
                if q != p {
                    reg_cost[k as usize] += freq;
                }
            }
            descent.charged.truncate(base_charged);
            let links_of = if partial {
                // A segment that keeps the register up to its interference leaves it on
                // the stack: each successor in a register pays the reload (a cost of its
                // own now). One that takes it after the interference enters from the
                // stack (a reload of its own, no store at a def it does not hold, and
                // no edge into it costs anything).
                for k in 0..n {
                    if let Mode::Tail(_) = modes[k] {
                        reg_cost[k] += MEMORY_COST * self.an.freq.of(blocks[k]) - boundary[k];
                        descent.charged.push(k as u32);
                    }
                }
                // The value's adjacency with the links cut here weighing nothing: a
                // zero link changes no cost and flips no segment, and copying the lists
                // costs less than sorting the kept links into new ones.
                partial_adj.copy_from(adj);
                for (i, &(a, b, w)) in links.iter().enumerate() {
                    match (modes[a], modes[b]) {
                        (_, Mode::Tail(_)) => partial_adj.zero(i),
                        (Mode::Head(_), _) => {
                            reg_cost[b] += w;
                            descent.charged.push(b as u32);
                            partial_adj.zero(i);
                        }
                        _ => {}
                    }
                }
                &*partial_adj
            } else {
                &*adj
            };
            // A bound the descents cannot beat settles about a third of the candidates
            // that get this far on the Wasm corpus's largest functions.
            let bound = lower_bound(free, stack_cost, reg_cost, links_of, descent);
            if bound >= threshold || best.is_some_and(|b| !beats(bound, b)) {
                continue;
            }
            // Two starting points, the better result kept: "register wherever free", and
            // "register only in free blocks with uses" (single flips cannot leave the
            // first when a run of through blocks would all have to flip together).
            label_a.clone_from(free);
            let free_words = &seen[mark..mark + words];
            let cost_a = descend(
                label_a, free, free_words, stack_cost, reg_cost, links_of, descent,
            );
            label_b.clear();
            label_b.extend(
                free.iter()
                    .zip(&*stack_cost)
                    .map(|(&free, &stack)| free && stack > 0.0),
            );
            // The same start descends to the same labelling.
            let cost_b = if label_b == free {
                cost_a
            } else {
                descend(
                    label_b, free, free_words, stack_cost, reg_cost, links_of, descent,
                )
            };
            let (cost, label) = if cost_b < cost_a {
                (cost_b, &*label_b)
            } else {
                (cost_a, &*label_a)
            };
            // No progress: every segment on the stack, or all of the value in the
            // register (a segment kept in part is a split).
            let regs = label.iter().filter(|&&x| x).count();
            if regs == 0 || (0..n).all(|k| label[k] && modes[k] == Mode::Whole) {
                continue;
            }
            if best.is_none_or(|b| beats(cost, b)) {
                best = Some((cost, Some(p)));
                best_label.clear();
                best_label.extend_from_slice(label);
                best_modes.clone_from(modes);
            }
        }
        descent.charged.truncate(base_charged);
        let Some((cost, p)) = best.filter(|&(c, _)| c < threshold) else {
            return false;
        };
        let label = &*best_label;
        let Some(p) = p else {
            self.split_compact_region(id, cost, label);
            return true;
        };
        let iv = &self.ctx.intervals[id];
        // Blocks left on the stack keep a local piece around their uses, as LLVM's
        // region split leaves use blocks to the local splitter. A block kept in part is
        // cut at its interference; a cut inside an instruction leaves a bridge of one
        // point, in the slot for good.
        let mut in_reg = SegmentList::new();
        let mut in_mem = SegmentList::new();
        let mut bridges = SegmentList::new();
        let mut local_pieces = Vec::new();
        let mut at = 0;
        let mut parts = 0;
        for k in 0..n {
            let s = iv.segments[k];
            if label[k] {
                match best_modes[k] {
                    Mode::Whole => in_reg.push(s),
                    Mode::Head(cut) => {
                        parts += 1;
                        in_reg.push(Segment {
                            start: s.start,
                            end: cut,
                        });
                        let mut rest = cut;
                        if cut % 2 == 1 {
                            bridges.push(Segment {
                                start: cut,
                                end: cut + 1,
                            });
                            rest += 1;
                        }
                        if rest < s.end {
                            in_mem.push(Segment {
                                start: rest,
                                end: s.end,
                            });
                        }
                    }
                    Mode::Tail(cut) => {
                        parts += 1;
                        in_mem.push(Segment {
                            start: s.start,
                            end: cut,
                        });
                        in_reg.push(Segment {
                            start: cut,
                            end: s.end,
                        });
                    }
                }
                continue;
            }
            // No use that needs a register (no stack cost): nothing to carve, and
            // `uses_from` gives the other segments the same slices without this one.
            if stack_cost[k] == 0.0 {
                self.debug_assert_uncarvable(iv, at, s);
                in_mem.push(s);
                continue;
            }
            let uses = Self::uses_from(iv, &mut at, &s);
            match self.carve_uses(uses, s, &mut in_mem) {
                Some(piece) => local_pieces.push(piece),
                None => in_mem.push(s),
            }
        }
        debug!(
            "{id} ({}): region split around {p}: {} of {n} block segments in the register ({parts} in part, {} bridges), cost {cost} vs {} {threshold}",
            iv.vreg,
            in_reg.len(),
            bridges.len(),
            if cap.is_some() {
                "callee-saved"
            } else {
                "spill"
            }
        );
        self.stats.region_splits += 1;
        observe!(self, self.split_event(id, SplitKind::Region));
        // LLVM's rule for its region split's register intervals: one that lives in fewer
        // blocks than the value starts over (it may be split by region again if it is
        // evicted), one that does not goes on to Split2 (no second region split), so that
        // repeated splitting always shrinks something. Measured on the Wasm corpus: the
        // summed cost -0.014% (meshoptimizer 0.9381 -> 0.9377 of ion's), nothing else moved.
        let reg_stage = if in_reg.len() < n {
            Stage::New
        } else {
            Stage::Split2
        };
        let region_place = if self.options.queue_split_parts {
            Placement::Hint(p)
        } else {
            Placement::Assign(p)
        };
        let mut products = Vec::with_capacity(4);
        if parts > 0 && self.options.region_islands {
            let islands = push_register_islands(
                RegionPlan {
                    label,
                    modes: best_modes,
                    links,
                },
                in_reg,
                (reg_stage, region_place),
                (island_root, island_of),
                &mut products,
            );
            if islands > 1 {
                debug!(
                    "{id} ({}): {islands} register islands, all but the first choose their own register",
                    self.ctx.intervals[id].vreg
                );
                self.stats.region_islands += islands - 1;
            }
        } else {
            products.push(Product {
                segments: in_reg,
                stage: reg_stage,
                place: region_place,
            });
        }
        products.extend([
            Product {
                segments: in_mem,
                stage: Stage::Spill,
                place: Placement::Queue,
            },
            // Spilled right away (stage `Done`): the piece after an odd cut is the slot.
            Product {
                segments: bridges,
                stage: Stage::Done,
                place: Placement::Queue,
            },
        ]);
        products.extend(local_pieces.into_iter().map(|piece| Product {
            segments: smallvec::smallvec![piece],
            stage: Stage::New,
            place: Placement::Queue,
        }));
        self.split_into(id, products);
        true
    }

    /// Will the edit builder write `v`'s slot right after its def (`stores_at_def`)? Then
    /// the slot holds the value wherever it is live, and a move into it is dropped.
    pub(crate) fn slot_written_at_def(&self, v: regalloc2::VReg) -> bool {
        match self.an.live.def_inst(v) {
            Some(inst) => !self.func.is_branch(inst) && !self.func.is_ret(inst),
            None => self.an.live.def_block[v.vreg()].is_valid(),
        }
    }

    /// True when the uses alone show that `region_split_with` stops before any labelling
    /// (no operand needs a register and no def names a fixed one, or the value is sparse with no use in a nested
    /// loop). A value through hundreds of blocks has a few uses against one segment per
    /// block, and most attempts on it end at those two exits; the full test walks every
    /// segment. Every use that needs a register counts as a segment with a use, and one
    /// in a nested loop anywhere as one inside a segment: both can only overstate, so
    /// this never rules out an attempt that would go on.
    fn region_split_ruled_out(&self, iv: &LiveInterval) -> bool {
        let n = iv.segments.len();
        let mut needy = 0;
        let mut nested = false;
        // Fixed defs count too: the labelling charges them (a store from the register).
        for u in iv.uses.iter().filter(|u| {
            self.needs_register(u)
                || (u.is_def() && matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
        }) {
            needy += 1;
            nested |= self.an.loops.depth[self.an.cfg.block_of(u.inst).index()] >= 2;
        }
        needy == 0 || sparse_beyond_region(n, needy, nested)
    }

    /// Splits off the compact region `label` chose: the register part becomes one new
    /// interval, queued like any other (fewer segments than the original, so this
    /// terminates); the blocks the value only passes through go to Spill.
    fn split_compact_region(&mut self, id: IntervalId, cost: f32, label: &[bool]) {
        let iv = &self.ctx.intervals[id];
        let n = label.len();
        let mut compact = SegmentList::new();
        let mut rest = SegmentList::new();
        for (k, &s) in iv.segments.iter().enumerate() {
            if label[k] {
                compact.push(s);
            } else {
                rest.push(s);
            }
        }
        debug!(
            "{id} ({}): compact region, {} of {n} block segments keep a register, cost {cost}",
            iv.vreg,
            compact.len()
        );
        self.stats.region_splits += 1;
        self.stats.compact_region_splits += 1;
        observe!(self, self.split_event(id, SplitKind::CompactRegion));
        self.split_into(
            id,
            vec![
                Product {
                    segments: compact,
                    stage: Stage::New,
                    place: Placement::Queue,
                },
                Product {
                    segments: rest,
                    stage: Stage::Spill,
                    place: Placement::Queue,
                },
            ],
        );
    }

    /// Debug builds: a segment passed over without `carve_uses` (`at` as `uses_from`
    /// would take it) is one it would carve nothing from.
    fn debug_assert_uncarvable(&self, iv: &LiveInterval, at: usize, s: Segment) {
        debug_assert!(
            self.carve_uses(
                Self::uses_from(iv, &mut { at }, &s),
                s,
                &mut SegmentList::new()
            )
            .is_none()
        );
    }

    /// The part of block segment `s` from its first to its last use instruction, if it
    /// holds at least two of them (`uses`: the interval's uses that start in `s`); the
    /// rest of `s` goes to `rest`. Boundaries fall on instruction boundaries (or on
    /// `s`'s own ends).
    fn carve_uses(&self, uses: &[UseSite], s: Segment, rest: &mut SegmentList) -> Option<Segment> {
        let mut insts = uses
            .iter()
            .filter(|u| self.needs_register(u))
            .map(|u| u.inst.index() as u32);
        let first = insts.next()?;
        let last = insts.max()?;
        if last == first {
            return None;
        }
        let piece = Segment {
            start: (2 * first).max(s.start),
            end: (2 * last + 2).min(s.end),
        };
        if s.start < piece.start {
            rest.push(Segment {
                start: s.start,
                end: piece.start,
            });
        }
        if piece.end < s.end {
            rest.push(Segment {
                start: piece.end,
                end: s.end,
            });
        }
        Some(piece)
    }

    // ----- Block splitting ------------------------------------------------------------

    /// One local piece per block, from the first to the last of its use instructions,
    /// where there are at least two (LLVM's `shouldSplitSingleBlock` in spirit: a single
    /// use is served as well by a reload); everything else forms the remainder, which goes
    /// to the spiller. With the slot written at the def, entering a piece costs a reload
    /// and leaving it nothing.
    ///
    /// Except inside loops: the blocks of one innermost loop holding at least two use
    /// instructions of the value become one piece, whole blocks, when the interval
    /// reaches outside that loop. Its uses then share one reload per entry into the
    /// loop (from the outer, ten times colder, block) instead of one per use block, and
    /// its weight (the loop's uses over the loop's size, not the whole range's) is
    /// what lets it evict the short dense values of a hot loop. Only a piece in a loop
    /// nested two deep or more is queued to evict and region-split like a new interval;
    /// one in an outermost loop takes a free register or is block-split again (stage
    /// `Split2`): the full treatment there doubled the time of the 900-block functions
    /// of the Wasm corpus for a share of the gain that the nested ones alone also give.
    /// Such a piece is strictly smaller than the interval (some segment lies outside its
    /// loop), and once it is split again all its segments share one loop, so it gets
    /// per-block pieces: splitting still terminates.
    fn try_block_split(&mut self, id: IntervalId) -> bool {
        let mut scratch = self.ctx.block_scratch.take();
        let split = self.block_split_with(&mut scratch, id);
        self.ctx.block_scratch.put(scratch);
        split
    }

    fn block_split_with(&mut self, scratch: &mut BlockScratch, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        let loops = &self.an.loops;
        let BlockScratch {
            keyed,
            per_loop,
            headers,
            loop_groups,
        } = scratch;
        if per_loop.len() < self.func.num_blocks() {
            per_loop.resize(self.func.num_blocks(), (0, 0));
        }
        // Debug builds go on to check the shortcut against the exit it stands for.
        let ruled_out = self.block_split_ruled_out(iv, per_loop, headers);
        if ruled_out && !cfg!(debug_assertions) {
            return false;
        }
        // Per segment: its block's innermost loop header and its use instructions that
        // need a register.
        keyed.clear();
        keyed.extend(
            iv.segments
                .iter()
                .map(|s| (loops.header[self.block_of_point(s.start).index()], 0)),
        );
        let mut carvable = false;
        for (k, uses) in Self::uses_by_segment(iv) {
            let mut count = 0u32;
            let mut last = u32::MAX;
            for u in uses.iter().filter(|u| self.needs_register(u)) {
                let inst = u.inst.index() as u32;
                if inst != last {
                    count += 1;
                    last = inst;
                }
            }
            carvable |= count >= 2;
            keyed[k].1 = count;
        }
        // Loops (by header) whose segments become one piece: only when the segments do
        // not all share one loop (else the piece would be the whole interval). Summed
        // per header in a table indexed by block (a sort of every segment here was most
        // of a failed attempt on a value through hundreds of blocks).
        loop_groups.clear();
        if keyed.iter().any(|&(h, _)| h != keyed[0].0) {
            headers.clear();
            for &(h, count) in keyed.iter().filter(|(h, _)| h.is_valid()) {
                let e = &mut per_loop[h.index()];
                if e.0 == 0 {
                    headers.push(h);
                }
                *e = (e.0 + 1, e.1 + count);
            }
            headers.sort_unstable();
            for &h in headers.iter() {
                let (segments, uses) = std::mem::take(&mut per_loop[h.index()]);
                if segments >= 2 && uses >= 2 {
                    loop_groups.push((h, segments));
                }
            }
        }
        // No loop piece and no block with two use instructions: nothing to split off.
        if loop_groups.is_empty() && !carvable {
            return false;
        }
        debug_assert!(
            !ruled_out,
            "{id}: block split ruled out by its uses, yet possible"
        );
        let mut products: Vec<Product> = loop_groups
            .iter()
            .map(|&(h, segments)| Product {
                segments: SegmentList::with_capacity(segments as usize),
                stage: if loops.depth[h.index()] >= 2 {
                    Stage::New
                } else {
                    Stage::Split2
                },
                place: Placement::Queue,
            })
            .collect();
        let loop_pieces = products.len();
        // Each loop piece's number (plus one) in its header's `per_loop` entry, cleared
        // below: a segment's piece is a table lookup, not a search.
        let mut grouped = 0;
        for (g, &(h, segments)) in loop_groups.iter().enumerate() {
            per_loop[h.index()].0 = g as u32 + 1;
            grouped += segments as usize;
        }
        // The segments outside loop pieces, a few more if some are carved in two.
        let mut rest = SegmentList::with_capacity(iv.segments.len() - grouped);
        let mut at = 0;
        for (k, &s) in iv.segments.iter().enumerate() {
            let (h, use_insts) = keyed[k];
            if h.is_valid() {
                let g = per_loop[h.index()].0;
                if g != 0 {
                    products[g as usize - 1].segments.push(s);
                    continue;
                }
            }
            // `carve_uses` carves nothing from under two use instructions; the segments
            // passed over here leave `uses_from` the same slices for the others.
            if use_insts < 2 {
                self.debug_assert_uncarvable(iv, at, s);
                rest.push(s);
                continue;
            }
            let uses = Self::uses_from(iv, &mut at, &s);
            match self.carve_uses(uses, s, &mut rest) {
                Some(piece) => products.push(Product {
                    segments: smallvec::smallvec![piece],
                    stage: Stage::New,
                    place: Placement::Queue,
                }),
                None => rest.push(s),
            }
        }
        for &(h, _) in loop_groups.iter() {
            per_loop[h.index()].0 = 0;
        }
        if loop_pieces > 0 {
            debug!(
                "{id} ({}): block split keeps {loop_pieces} loops whole",
                iv.vreg
            );
            self.stats.loop_split_pieces += loop_pieces;
        }
        if products.is_empty() || (products.len() < 2 && rest.is_empty()) {
            return false;
        }
        debug!(
            "{id} ({}): block split into {} pieces with uses",
            iv.vreg,
            products.len()
        );
        if !rest.is_empty() {
            products.push(Product {
                segments: rest,
                stage: Stage::Spill,
                place: Placement::Queue,
            });
        }
        self.stats.block_splits += 1;
        observe!(self, self.split_event(id, SplitKind::Block));
        self.split_into(id, products);
        true
    }

    /// True when the uses alone show that `block_split_with` has nothing to split off:
    /// no block with two use instructions that need a register, and no loop with two
    /// such uses. The walk over the segments that decides it exactly costs a failed
    /// attempt on a value through hundreds of blocks far more than its few uses do.
    /// Counts over all uses (a block's for a segment's, every use for a distinct
    /// instruction) can only overstate, so this never rules out a split that would be
    /// made. `per_loop`'s second fields are zero before and after.
    fn block_split_ruled_out(
        &self,
        iv: &LiveInterval,
        per_loop: &mut [(u32, u32)],
        headers: &mut Vec<Block>,
    ) -> bool {
        let mut last: Option<(regalloc2::Inst, Block)> = None;
        let mut found = false;
        headers.clear();
        for u in iv.uses.iter().filter(|u| self.needs_register(u)) {
            let b = self.an.cfg.block_of(u.inst);
            // Uses are sorted by instruction, so a block's uses are adjacent.
            if last.is_some_and(|(i, lb)| i != u.inst && lb == b) {
                found = true;
                break;
            }
            last = Some((u.inst, b));
            let h = self.an.loops.header[b.index()];
            if h.is_valid() {
                let count = &mut per_loop[h.index()].1;
                if *count == 0 {
                    headers.push(h);
                }
                *count += 1;
                if *count >= 2 {
                    found = true;
                    break;
                }
            }
        }
        for h in headers.drain(..) {
            per_loop[h.index()].1 = 0;
        }
        !found
    }

    // ----- Local splitting ------------------------------------------------------------

    /// For an interval inside one block: find, over the candidate registers, the widest
    /// window of consecutive use instructions over which the register is free, and split
    /// the interval before and after it. The window keeps that register; the outer pieces
    /// are requeued. A window holding every use is no progress.
    fn try_local_split(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
        let mut scratch = self.ctx.local_scratch.take();
        let split = self.local_split_with(&mut scratch, id, avoid_csr);
        self.ctx.local_scratch.put(scratch);
        split
    }

    fn local_split_with(&mut self, s: &mut LocalScratch, id: IntervalId, avoid_csr: bool) -> bool {
        let iv = &self.ctx.intervals[id];
        if iv.segments.len() != 1 {
            return false;
        }
        let LocalScratch {
            insts,
            bounds,
            cell_weight,
            cell_first,
            cell_last,
            steps,
            occupants,
            crossed,
            ops_before,
            candidates,
        } = s;
        let seg = iv.segments[0];
        // Only operands inside the segment count (a fixed def's site precedes it), and
        // only those that need a register: the others read the spill slot for free.
        insts.clear();
        insts.extend(
            iv.uses
                .iter()
                .filter(|u| u.first >= seg.start && u.first < seg.end && self.needs_register(u))
                .map(|u| u.inst.index() as u32),
        );
        insts.dedup();
        let insts = &*insts;
        // Each local split leaves fewer uses per product, but a block with tens of
        // thousands of uses of one value would still take that many rounds over every
        // candidate: past this size the value is left to the spiller (bounded work).
        if insts.len() < 2 || insts.len() > MAX_LOCAL_SPLIT_USES {
            return false;
        }
        let window_of = |a: usize, b: usize| Segment {
            start: (2 * insts[a]).max(seg.start),
            end: (2 * insts[b] + 2).min(seg.end),
        };
        // The segment as alternating cells: use instruction k is cell 2k, the gap after it
        // cell 2k + 1 (possibly empty). A window of uses a..=b is free in a register iff
        // cells 2a..=2b are, so each candidate costs one probe per cell (logarithmic in
        // the register's occupants, however many there are in a long gap) instead of a
        // probe of the whole window per extension.
        let n_cells = 2 * insts.len() - 1;
        // bounds[c]..bounds[c + 1] is cell c.
        bounds.clear();
        bounds.push(window_of(0, 0).start);
        for k in 0..insts.len() {
            bounds.push(window_of(k, k).end);
            if k + 1 < insts.len() {
                bounds.push((2 * insts[k + 1]).min(seg.end));
            }
        }
        // The most uses a window may hold: all of them, unless that window is the whole
        // segment (no progress). Fewer than two is not worth a split, and a window of the
        // most uses with the least length cannot be beaten: stop there.
        let m = insts.len();
        let whole = window_of(0, m - 1);
        let (most, least_len) = if whole.start > seg.start || whole.end < seg.end {
            (m, whole.len())
        } else {
            (
                m - 1,
                window_of(0, m - 2).len().min(window_of(1, m - 1).len()),
            )
        };
        if most < 2 {
            return false;
        }
        // Per cell: the heaviest occupant of the candidate (0 only when free, infinite when a
        // fixed reservation or an occupant eviction may not touch is there), and the
        // ordinals of its first and last occupants in the register's union (for the
        // interferer count of a window).
        cell_weight.clear();
        cell_weight.resize(n_cells, 0.0);
        cell_first.clear();
        cell_first.resize(n_cells, u32::MAX);
        cell_last.clear();
        cell_last.resize(n_cells, 0);
        // Per step from use `b` to `b + 1` (cells 2b + 1 and 2b + 2): what extending an
        // evicting window over it adds (heaviest occupant, first and last occupant
        // ordinals), so the extension reads one entry per step.
        steps.clear();
        steps.resize(m - 1, (0.0, u32::MAX, 0));
        // Operands per use instruction, for a window's estimated spill weight (as
        // `spill_weight` would compute it for the product, copies aside).
        ops_before.clear();
        ops_before.resize(m + 1, 0);
        {
            let mut k = 0;
            for u in iv.uses.iter() {
                while k < m && insts[k] < u.inst.index() as u32 {
                    k += 1;
                }
                if k < m && insts[k] == u.inst.index() as u32 {
                    ops_before[k + 1] += 1;
                }
            }
            for k in 0..m {
                ops_before[k + 1] += ops_before[k];
            }
        }
        let freq = self.an.freq.of(self.block_of_point(seg.start));
        let estimate = |a: usize, b: usize| {
            freq * (ops_before[b + 1] - ops_before[a]) as f32
                / (window_of(a, b).len() as f32 / 2.0 + 25.0)
        };
        let evicting = self.options.evicting_local_split && m > MIN_EVICTING_SPLIT_USES;
        let max_interference = self.eviction.max_interference();
        let mut best: Option<LocalWindow> = None;
        candidates.clear();
        candidates.extend(self.local_split_candidates(iv, avoid_csr));
        for &p in candidates.iter() {
            if best.is_some_and(|w| w.uses == most && w.len == least_len && w.evicts == 0.0) {
                break;
            }
            let reservations = &self.an.intervals.fixed[p.index()];
            let fixed = iv.fixed_conflicts.contains(p);
            // Whether some cell holds only occupants eviction may take: without one, every
            // window that evicts crosses an infinite cell, and the free runs are all.
            let mut evictable = false;
            if evicting {
                occupants.clear();
                self.ctx.matrix.occupants(p, seg, |start, end, j| {
                    let victim = &self.ctx.intervals[j];
                    let w = if victim.is_spillable()
                        && (iv.cascade == 0 || victim.cascade < iv.cascade)
                    {
                        victim.weight
                    } else {
                        f32::INFINITY
                    };
                    occupants.push((start, end, w));
                });
                // Occupant by occupant, then reservation by reservation, each marking the
                // cells it overlaps: a segment of hundreds of uses has far more cells than
                // any one register has occupants over it, and a per-cell pass cost most of
                // the evicting search's setup.
                cell_weight[..n_cells].fill(0.0);
                cell_first[..n_cells].fill(u32::MAX);
                cell_last[..n_cells].fill(0);
                let cells = &bounds[..=n_cells];
                let mut from = 0;
                for (o, &(start, end, w)) in occupants.iter().enumerate() {
                    debug_assert!(o == 0 || occupants[o - 1].1 <= start, "occupants overlap");
                    // Occupied, however light the occupants (a piece with no uses weighs
                    // 0): only an empty cell counts as free.
                    for c in cells_overlapping(cells, &mut from, start, end) {
                        cell_weight[c] = cell_weight[c].max(w.max(f32::MIN_POSITIVE));
                        if cell_first[c] == u32::MAX {
                            cell_first[c] = o as u32;
                        }
                        cell_last[c] = o as u32;
                    }
                }
                if fixed {
                    let mut r = reservations.first_ending_after(0, seg.start);
                    let mut from = 0;
                    while let Some(res) = reservations.get(r)
                        && res.start < seg.end
                    {
                        r += 1;
                        if res.owner == iv.vreg {
                            continue;
                        }
                        for c in cells_overlapping(cells, &mut from, res.start, res.end) {
                            cell_weight[c] = f32::INFINITY;
                            cell_first[c] = u32::MAX;
                            cell_last[c] = 0;
                        }
                    }
                }
                evictable = cell_weight[..n_cells]
                    .iter()
                    .any(|&w| w > 0.0 && w.is_finite());
            } else {
                let mut probe = self.ctx.matrix.probe(p);
                let mut lo = 0;
                for c in 0..n_cells {
                    let cell = Segment {
                        start: bounds[c],
                        end: bounds[c + 1],
                    };
                    cell_weight[c] = 0.0;
                    cell_first[c] = u32::MAX;
                    cell_last[c] = 0;
                    if cell.start >= cell.end {
                        continue;
                    }
                    if (fixed && fixed_conflict_from(reservations, &mut lo, cell, iv.vreg))
                        || !probe.is_free(cell)
                    {
                        cell_weight[c] = f32::INFINITY;
                    }
                }
            }
            let consider = |best: &mut Option<LocalWindow>, a: usize, b: usize, evicts: f32| {
                let w = window_of(a, b);
                let covers_all = w.start <= seg.start && w.end >= seg.end;
                debug_assert!(w.start < w.end);
                let uses = b - a + 1;
                let better = best.is_none_or(|x| {
                    (uses, -evicts, std::cmp::Reverse(w.len()))
                        > (x.uses, -x.evicts, std::cmp::Reverse(x.len))
                });
                if !covers_all && better {
                    *best = Some(LocalWindow {
                        uses,
                        len: w.len(),
                        reg: p,
                        first: a,
                        last: b,
                        evicts,
                    });
                }
            };
            // Free runs: extend from `a` while the register stays free (linear).
            let mut a = 0;
            while a < m {
                if cell_weight[2 * a] > 0.0 {
                    a += 1;
                    continue;
                }
                let mut b = a;
                while b + 1 < m && cell_weight[2 * b + 1] == 0.0 && cell_weight[2 * b + 2] == 0.0 {
                    b += 1;
                }
                consider(&mut best, a, b, 0.0);
                a = b + 1;
            }
            if !evictable {
                continue;
            }
            // Only windows that could replace the best so far are weighed: as many uses as
            // an evicting best, one more than a free one (a window that evicts ranks below
            // a free one of as many uses). A window crosses no infinite cell (a fixed
            // reservation, an occupant eviction may not touch), so none here holds more
            // uses than the longest run of finite cells: below the need, none is weighed.
            let need_of = |best: Option<LocalWindow>| {
                best.map_or(0, |w| w.uses + usize::from(w.evicts == 0.0))
            };
            let mut need = need_of(best);
            if longest_finite_run(&cell_weight[..n_cells]) < need {
                continue;
            }
            for (b, step) in steps.iter_mut().enumerate() {
                let (x, y) = (2 * b + 1, 2 * b + 2);
                *step = (
                    cell_weight[x].max(cell_weight[y]),
                    cell_first[x].min(cell_first[y]),
                    cell_last[x].max(cell_last[y]),
                );
            }
            // Windows that evict: from each use, extended while the window's estimated
            // weight may still beat its heaviest occupant, over at most
            // `max_interference` occupants and `MAX_EVICTING_WINDOW` use instructions
            // (bounded work per start), of at least `need` uses.
            crossed.restart();
            for a in 0..m {
                if m - a < need || need > MAX_EVICTING_WINDOW {
                    break;
                }
                let (mut heaviest, mut first, mut last) =
                    (cell_weight[2 * a], cell_first[2 * a], cell_last[2 * a]);
                if heaviest.is_infinite() {
                    continue;
                }
                // A window from `a` with fewer than `need` uses is never weighed, so the
                // steps to use `a + need - 1` are folded at once rather than walked
                // (most of the walk when `need` is large).
                let b0 = a + need.max(1) - 1;
                let (w, f, l) = crossed.fold(steps, a, b0);
                debug_assert_eq!((w, f, l), {
                    let (mut w, mut f, mut l) = (0.0, u32::MAX, 0);
                    for &s in &steps[a..b0] {
                        widen(&mut w, &mut f, &mut l, s);
                    }
                    (w, f, l)
                });
                widen(&mut heaviest, &mut first, &mut last, (w, f, l));
                if heaviest == f32::INFINITY {
                    continue;
                }
                let end = (a + MAX_EVICTING_WINDOW).min(m);
                // The operands the longest window from `a` holds: with the length so
                // far, a bound on the estimate of every window from `a` not yet seen.
                let ops_reach = freq * (ops_before[end] - ops_before[a]) as f32;
                let mut b = b0;
                let mut ahead = steps[b0..end - 1].iter();
                loop {
                    if first != u32::MAX && (last - first + 1) as usize > max_interference {
                        break;
                    }
                    if heaviest > 0.0 && b + 1 - a >= need {
                        let denom = window_of(a, b).len() as f32 / 2.0 + 25.0;
                        // Heavier occupants and longer windows are all that follow.
                        if ops_reach / denom * HYSTERESIS <= heaviest {
                            debug_assert!(
                                (b + 1..end).all(|c| {
                                    let h = steps[b..c]
                                        .iter()
                                        .fold(heaviest, |h, s| if s.0 > h { s.0 } else { h });
                                    estimate(a, c) * HYSTERESIS <= h
                                }),
                                "the bound cut off a window that qualifies"
                            );
                            break;
                        }
                        if estimate(a, b) * HYSTERESIS > heaviest {
                            consider(&mut best, a, b, heaviest);
                            need = need_of(best);
                        }
                    }
                    let Some(&step) = ahead.next() else {
                        break;
                    };
                    widen(&mut heaviest, &mut first, &mut last, step);
                    if heaviest == f32::INFINITY {
                        break;
                    }
                    b += 1;
                }
            }
        }
        let Some(LocalWindow {
            uses,
            reg: p,
            first: a,
            last: b,
            evicts,
            ..
        }) = best
        else {
            return false;
        };
        // A window around a single instruction is what spilling gives anyway.
        if uses < 2 {
            return false;
        }
        let w = window_of(a, b);
        let before = Segment {
            start: seg.start,
            end: w.start,
        };
        let after = Segment {
            start: w.end,
            end: seg.end,
        };
        let total = insts.len();
        // Progress: every product must hold fewer use instructions than the original.
        let stage_for = |n: usize| if n < total { Stage::New } else { Stage::Split2 };
        let before_uses = insts.iter().filter(|&&i| 2 * i + 1 < w.start).count();
        let after_uses = insts.iter().filter(|&&i| 2 * i >= w.end).count();
        let mut products = vec![Product {
            segments: smallvec::smallvec![w],
            stage: stage_for(insts.len() - before_uses - after_uses),
            // A window that evicts is queued: it takes the register (or another) by
            // eviction when dequeued. A free one keeps the register as a hint.
            place: if evicts != 0.0 {
                Placement::Queue
            } else if self.options.queue_split_parts {
                Placement::Hint(p)
            } else {
                Placement::Assign(p)
            },
        }];
        if before.start < before.end {
            products.push(Product {
                segments: smallvec::smallvec![before],
                stage: stage_for(before_uses),
                place: Placement::Queue,
            });
        }
        if after.start < after.end {
            products.push(Product {
                segments: smallvec::smallvec![after],
                stage: stage_for(after_uses),
                place: Placement::Queue,
            });
        }
        if products.len() == 1 {
            return false;
        }
        debug!(
            "{id} ({}): local split, {uses} of {total} use instructions keep {p} in [{}, {}){}",
            iv.vreg,
            w.start,
            w.end,
            if evicts > 0.0 {
                format!(", evicting occupants up to weight {evicts}")
            } else {
                String::new()
            }
        );
        self.stats.local_splits += 1;
        if evicts > 0.0 {
            self.stats.evicting_local_splits += 1;
        }
        observe!(self, self.split_event(id, SplitKind::Local));
        self.split_into(id, products);
        true
    }

    // ----- Instruction splitting --------------------------------------------------------

    /// For an interval inside one block whose uses pin it to fixed registers: a piece
    /// around each use instruction and the gaps between them, all bound for the spiller
    /// (each piece may still find a register when dequeued).
    fn try_instruction_split(&mut self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        // Fixed operands are served by a copy from wherever the value lives, a reload as
        // cheap as any piece's: the split only pays where some operand needs a register
        // of its own, which a piece around it may find.
        if iv.segments.len() != 1
            || !iv
                .uses
                .iter()
                .any(|u| matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
            || !iv.uses.iter().any(|u| self.needs_register(u))
        {
            return false;
        }
        let seg = iv.segments[0];
        let mut cuts: Vec<u32> = Vec::new();
        for u in &iv.uses {
            for c in [2 * u.inst.index() as u32, 2 * u.inst.index() as u32 + 2] {
                if c > seg.start && c < seg.end && cuts.last() != Some(&c) {
                    cuts.push(c);
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        if cuts.is_empty() {
            return false;
        }
        let mut products = Vec::new();
        let mut start = seg.start;
        for &c in cuts.iter().chain(std::iter::once(&seg.end)) {
            products.push(Product {
                segments: smallvec::smallvec![Segment { start, end: c }],
                stage: Stage::Spill,
                place: Placement::Queue,
            });
            start = c;
        }
        debug!(
            "{id} ({}): instruction split into {} pieces",
            iv.vreg,
            products.len()
        );
        self.stats.instruction_splits += 1;
        observe!(self, self.split_event(id, SplitKind::Instruction));
        self.split_into(id, products);
        true
    }

    /// For a value just made whose operands include `Stack` ones: a piece in the slot
    /// around each instruction with such an operand (stage `Done`), and the rest of the
    /// value as one piece allocated as any other. The slot is written at the def
    /// (`stores_at_def`), so entering a slot piece costs nothing and leaving one a
    /// reload, where spilling the whole value reloads at every register use: done only
    /// when those reloads weigh more (by block frequency) than one after each piece in
    /// the slot; otherwise (false) the value is spilled whole as before.
    pub(crate) fn split_off_stack_uses(&mut self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        if !self.slot_written_at_def(iv.vreg) {
            return false;
        }
        // Instruction windows [2i, 2i + 2) of the `Stack` operands, in order (uses are
        // sorted by instruction).
        let mut windows: SegmentList = SegmentList::new();
        for u in &iv.uses {
            let w = Segment {
                start: 2 * u.inst.index() as u32,
                end: 2 * u.inst.index() as u32 + 2,
            };
            if u.operand.constraint() == OperandConstraint::Stack && windows.last() != Some(&w) {
                windows.push(w);
            }
        }
        // Spilled whole, the value is reloaded before each instruction outside the
        // windows that reads it in a register, and a fixed-register use or a reused
        // input is served by a load where a register would serve it by a move (half a
        // reload); split, it is reloaded at most once after each window it outlives (its
        // def and the windows' own operands cost the same either way). Instructions and
        // windows are both in order: one cursor over the windows.
        let freq_at = |inst: regalloc2::Inst| self.an.freq.of(self.an.cfg.block_of(inst));
        let mut reloads_whole = 0.0f32;
        let mut w = 0;
        for group in iv.uses.chunk_by(|a, b| a.inst == b.inst) {
            let inst = group[0].inst;
            let start = 2 * inst.index() as u32;
            while windows.get(w).is_some_and(|win| win.start < start) {
                w += 1;
            }
            if windows.get(w).is_some_and(|win| win.start == start) {
                continue;
            }
            let saves = |u: &UseSite| {
                if u.is_def() {
                    0.0
                } else if self.needs_register(u) {
                    1.0
                } else if matches!(u.operand.constraint(), OperandConstraint::FixedReg(_))
                    || u.reused_input
                {
                    0.5
                } else {
                    0.0
                }
            };
            reloads_whole += group.iter().map(saves).fold(0.0, f32::max) * freq_at(inst);
        }
        let live_end = iv.segments.last().map_or(0, |s| s.end);
        let reloads_split: f32 = windows
            .iter()
            .filter(|win| win.end < live_end)
            .map(|win| freq_at(point_inst(win.start)))
            .sum();
        if reloads_split >= reloads_whole {
            return false;
        }
        // The segments cut at the windows: the parts inside go to the slot, one piece
        // each, the parts outside to one piece. Segments and windows are both sorted
        // and a window lies in one block: one cursor over the windows.
        let mut rest = SegmentList::new();
        let mut products = Vec::new();
        let mut w = 0;
        for &s in &iv.segments {
            let mut at = s.start;
            while w < windows.len() && windows[w].end <= s.start {
                w += 1;
            }
            while let Some(&win) = windows.get(w)
                && win.start < s.end
            {
                let inside = Segment {
                    start: win.start.max(s.start),
                    end: win.end.min(s.end),
                };
                if at < inside.start {
                    rest.push(Segment {
                        start: at,
                        end: inside.start,
                    });
                }
                products.push(Product {
                    segments: smallvec::smallvec![inside],
                    stage: Stage::Done,
                    place: Placement::Queue,
                });
                at = inside.end;
                if win.end > s.end {
                    break;
                }
                w += 1;
            }
            if at < s.end {
                rest.push(Segment {
                    start: at,
                    end: s.end,
                });
            }
        }
        if rest.is_empty() {
            return false;
        }
        // New intervals in program order of their first point, as other splits make them.
        products.push(Product {
            segments: rest,
            stage: Stage::New,
            place: Placement::Queue,
        });
        products.sort_by_key(|p| p.segments[0].start);
        debug!(
            "{id} ({}): {} pieces in the slot around its stack operands, the rest allocated",
            iv.vreg,
            products.len() - 1
        );
        self.stats.stack_use_pieces += 1;
        self.split_into(id, products);
        true
    }

    // ----- The split editor -----------------------------------------------------------

    /// Replaces interval `id` by `products` (a partition of its segments, each product's
    /// in order), distributing its uses by point, and assigns or queues each product.
    fn split_into(&mut self, id: IntervalId, products: Vec<Product>) {
        let old_uses = std::mem::take(&mut self.ctx.intervals[id].uses);
        let old_segments = std::mem::take(&mut self.ctx.intervals[id].segments);
        self.ctx.intervals[id].runs.clear();
        debug_assert!(self.ctx.intervals[id].assigned.is_none());
        let (vreg, cascade) = {
            let iv = &self.ctx.intervals[id];
            (iv.vreg, iv.cascade)
        };
        debug_assert_eq!(
            products
                .iter()
                .map(|p| p.segments.iter().map(Segment::len).sum::<u32>())
                .sum::<u32>(),
            old_segments.iter().map(Segment::len).sum::<u32>()
        );
        // The retired interval leaves its vreg's piece list: the list is only read for
        // hints (assigned pieces), and every interval of a long-lived value scans it, so
        // dead entries would make that quadratic in the number of splits.
        let pieces = &mut self.ctx.vreg_pieces[vreg.vreg()];
        if let Some(k) = pieces.iter().position(|&x| x == id) {
            pieces.remove(k);
        }
        // Each use goes to the product whose segment holds its first point. Uses are
        // sorted by instruction (not by point: a late def may precede an early use of
        // the same instruction), so a segment's candidates are found by instruction and
        // then filtered by point.
        let mut found = std::mem::take(&mut self.ctx.scratch_uses);
        let mut uses_of: Vec<UseList> = Vec::with_capacity(products.len());
        for product in &products {
            // Every split kind builds its products' segments in order, none empty.
            debug_assert!(product.segments.iter().all(|s| s.start < s.end));
            debug_assert!(product.segments.is_sorted());
            // Segments are sorted: the first use reaching into each is found by a cursor.
            // Collected first, so the product's list is allocated once at its size.
            found.clear();
            let segments = &product.segments[..];
            let mut lo = 0;
            let mut k = 0;
            while let Some(next) = old_uses.get(lo) {
                // Segments that end by the next use's instruction take nothing and leave
                // the cursor where it is (most segments of a value through many blocks
                // hold no use): they are passed over by a gallop.
                let next_inst = 2 * next.inst.index() as u32;
                k = gallop_segments(segments, k, next_inst);
                let Some(s) = segments.get(k) else {
                    break;
                };
                k += 1;
                lo = gallop_uses(&old_uses, lo, s.start);
                // Past the last use, or short of the next: nothing to take.
                match old_uses.get(lo) {
                    None => break,
                    Some(u) if 2 * u.inst.index() as u32 >= s.end => continue,
                    Some(_) => {}
                }
                found.extend(
                    old_uses[lo..]
                        .iter()
                        .take_while(|u| 2 * (u.inst.index() as u32) < s.end)
                        .filter(|u| s.start <= u.first && u.first < s.end)
                        .copied(),
                );
            }
            uses_of.push(UseList::from_slice(&found));
        }
        self.ctx.scratch_uses = found;
        for (product, uses) in products.into_iter().zip(uses_of) {
            if product.segments.is_empty() {
                continue;
            }
            let piece = self.push_main_piece(vreg, product.segments, uses, product.stage, cascade);
            debug!(
                "{piece} ({vreg}): split product of {id}, stage {:?}, weight {}",
                product.stage, self.ctx.intervals[piece].weight
            );
            observe!(self, self.product_event(piece, id));
            match product.place {
                Placement::Hint(p) => {
                    debug!("{piece} ({vreg}): queued with the split's {p} as a hint");
                    self.ctx.intervals[piece].split_hint = Some(p);
                    self.enqueue(piece);
                }
                Placement::Assign(p) => self.assign(piece, p),
                Placement::Queue if product.stage == Stage::Done => self.spill_untried(piece),
                Placement::Queue => self.enqueue(piece),
            }
        }
        self.refresh_hint_reg(vreg);
    }

    /// A new `Main` interval of `vreg` (a split product, a spilled value's head) over
    /// `segments`, holding `uses`: its runs, fixed conflicts, limit and spill weight
    /// computed, and listed among its value's pieces; neither assigned nor queued.
    pub(crate) fn push_main_piece(
        &mut self,
        vreg: regalloc2::VReg,
        segments: SegmentList,
        uses: UseList,
        stage: Stage,
        cascade: super::interval::Cascade,
    ) -> IntervalId {
        let runs = runs_of(&segments);
        let fixed_conflicts = self.an.intervals.fixed_index.conflicts(&runs, vreg);
        // Each piece is limited by its own operands only: one `Limit` use must not pin
        // the pieces that do not hold it.
        let limit = use_limit(&uses);
        let piece = self.ctx.intervals.push(LiveInterval {
            vreg,
            kind: IntervalKind::Main,
            segments,
            runs,
            fixed_conflicts,
            uses,
            stage,
            cascade,
            weight: 0.0,
            assigned: None,
            split_hint: None,
            limit,
            deferred: false,
            spilled: false,
        });
        self.ctx.vreg_pieces[vreg.vreg()].push(piece);
        self.ctx.intervals[piece].weight = self.spill_weight(piece);
        self.stats.intervals += 1;
        piece
    }
}

/// A region split's chosen labelling: per segment, register or stack and how the
/// register keeps it, and the links between segments.
struct RegionPlan<'a> {
    label: &'a [bool],
    modes: &'a [Mode],
    links: &'a [(usize, usize, f32)],
}

/// Pushes the register part of a region split that keeps some segment in part as one
/// product per island (segments joined by links that the labelling keeps in the
/// register), and returns how many. An island entered from the stack (after a segment
/// that gives the register up past its operands, or into one that takes it only before
/// them) holds nothing the others hand it in a register, so it is queued to choose its
/// own register by its hints (a fixed use's register saves a move there); the island
/// first in program order keeps the candidate (as its hint with `queue_split_parts`).
/// `in_reg` holds the labelled segments in order, each cut to its register part. Linear
/// in the segments and links: `root` and `island_of` are scratch, per segment.
fn push_register_islands(
    plan: RegionPlan<'_>,
    in_reg: SegmentList,
    (stage, place): (Stage, Placement),
    (root, island_of): (&mut Vec<u32>, &mut Vec<u32>),
    products: &mut Vec<Product>,
) -> usize {
    let RegionPlan {
        label,
        modes,
        links,
    } = plan;
    let n = label.len();
    root.clear();
    root.extend(0..n as u32);
    for &(a, b, _) in links {
        if label[a]
            && label[b]
            && !matches!(modes[a], Mode::Head(_))
            && !matches!(modes[b], Mode::Tail(_))
        {
            let (ra, rb) = (find(root, a as u32), find(root, b as u32));
            root[ra.max(rb) as usize] = ra.min(rb);
        }
    }
    island_of.clear();
    island_of.resize(n, u32::MAX);
    let first = products.len();
    for (k, s) in (0..n).filter(|&k| label[k]).zip(in_reg) {
        let r = find(root, k as u32) as usize;
        if island_of[r] == u32::MAX {
            island_of[r] = (products.len() - first) as u32;
            products.push(Product {
                segments: SegmentList::new(),
                stage,
                place: if products.len() == first {
                    place
                } else {
                    Placement::Queue
                },
            });
        }
        products[first + island_of[r] as usize].segments.push(s);
    }
    products.len() - first
}

/// The first use at or after `lo` whose instruction reaches `start` (`search::gallop`). Each
/// product restarts its cursor at the first use, so a linear walk would cost all the
/// value's uses per product: quadratic for a value split into a piece per block of a wide
/// switch.
#[inline]
fn gallop_uses(uses: &[UseSite], lo: usize, start: Point) -> usize {
    gallop(uses, lo, |u| 2 * u.inst.index() as u32 + 2 <= start)
}

/// The first of `segments` at or after `k` that ends after `p` (`search::gallop`; segments are
/// disjoint and sorted, so their ends are too). A value through hundreds of blocks has
/// uses in a few: a walk from one use to the next passes over the segments between them
/// in a few probes.
#[inline]
fn gallop_segments(segments: &[Segment], k: usize, p: Point) -> usize {
    gallop(segments, k, |s| s.end <= p)
}

/// Whether a value through `segments` block segments, with uses in `use_blocks` of them
/// (or an upper bound), is left to block splitting for the sparseness of its uses:
/// region labelling would keep its register in little more than the use blocks, which
/// the block split's pieces do far more cheaply. Only where a use sits in a nested loop
/// (`nested`) does the labelling pay, and past `SPARSE_NESTED_REGION_SEGMENTS` not even
/// then: the Wasm corpus's block-dense functions (900-1,100 blocks, three instructions
/// each) have values through 150-250 of them with a few uses in a nested loop, whose
/// attempts took 40-70 us each for the same cost as the block split's. Values with dense
/// uses through that many blocks (an interpreter's dispatch loop, `scale`'s dispatch-1000)
/// are still region-split: their block split costs far more.
fn sparse_beyond_region(segments: usize, use_blocks: usize, nested: bool) -> bool {
    let exempt = nested && segments <= SPARSE_NESTED_REGION_SEGMENTS;
    segments > SPARSE_REGION_SEGMENTS && use_blocks * SPARSE_USE_RATIO < segments && !exempt
}

/// `segments` joined into runs (`matrix::merged`). Past the inline size the list is
/// allocated once, as long as `segments` (runs never outnumber them, and the interval
/// keeps a list that long anyway): collected, a block split's remainder of hundreds of
/// runs grew it one push at a time.
pub(crate) fn runs_of(segments: &[Segment]) -> SegmentList {
    let runs = super::matrix::merged(segments);
    if segments.len() <= SegmentList::new().inline_size() {
        return runs.collect();
    }
    let mut list = Vec::with_capacity(segments.len());
    list.extend(runs);
    SegmentList::from_vec(list)
}

/// The tightest `Limit` among `uses` (`usize::MAX` for none): registers with `hw_enc` at
/// or above it cannot hold the interval serving them.
#[inline]
pub(crate) fn use_limit(uses: &[UseSite]) -> usize {
    uses.iter()
        .fold(usize::MAX, |limit, u| match u.operand.constraint() {
            OperandConstraint::Limit(n) => limit.min(n),
            _ => limit,
        })
}

/// LLVM's compact region, labelled into `label`: with no register chosen yet, the value
/// keeps one of its own in the blocks with operands that need one and is spilled in the
/// blocks it only passes through. The same descent labels it (only use blocks may take
/// the register, so a use block whose transitions cost more than its operands goes back
/// to the stack). Only worth it where use blocks touch (isolated ones are the block
/// splitter's) and when at least two block segments, not all, keep the register.
fn compact_region(
    label: &mut Vec<bool>,
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    work: &mut Descent,
) -> Option<f32> {
    let n = stack_cost.len();
    let uses: Vec<bool> = stack_cost.iter().map(|&c| c > 0.0).collect();
    if !(0..n).any(|k| uses[k] && adj.of(k).iter().any(|&(j, _, _)| uses[j as usize])) {
        return None;
    }
    label.clone_from(&uses);
    let words = bit_words(&uses);
    let cost = descend(label, &uses, &words, stack_cost, boundary, adj, work);
    let regs = label.iter().filter(|&&x| x).count();
    (regs >= 2 && regs < n).then_some(cost)
}

/// Up to 64 flags as the bits of one word, the first flag lowest.
fn bit_word(flags: impl IntoIterator<Item = bool>) -> u64 {
    flags
        .into_iter()
        .enumerate()
        .fold(0u64, |w, (i, x)| w | (u64::from(x) << i))
}

fn bit_words(flags: &[bool]) -> Vec<u64> {
    flags
        .chunks(64)
        .map(|c| bit_word(c.iter().copied()))
        .collect()
}

/// Bounded descent over the region labelling: flip single free segments while the total
/// (stack cost of stack segments, boundary cost of register segments, reload cost of
/// every link from a stack segment to a register segment) drops.
///
/// Each segment carries two sums over its links: the weight of the links into it from
/// stack segments (what it pays as a register) and of the links out of it into register
/// segments (what it pays as the stack). They are set up in one pass over the links, so
/// a look at a segment is constant time and only a flip walks its links, to update its
/// neighbours' sums; the total is read from the sums at the end. Weights are `f32` and
/// the sums `f64`, so adding and removing a link's weight is exact (no drift), and a
/// flip back is exactly as dear as the flip was cheap.
/// A lower bound on the cost of every labelling with these `free` segments: the others
/// stay on the stack, so a free segment pays either its stack cost or, in a register,
/// its boundary plus every link in from a segment that is not free. Each link is charged
/// to the segment it enters, as the descent's total does, so nothing is counted twice.
/// The bound is lowered by a millionth, far more than the rounding of its own sum or the
/// descent's (both summed in `f64` from `f32` weights), so it never exceeds the cost a
/// descent reports for the same `free`.
fn lower_bound(
    free: &[bool],
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    work: &mut Descent,
) -> f32 {
    let in_register = &mut work.into_from_stack;
    in_register.clear();
    in_register.extend(boundary.iter().map(|&b| f64::from(b)));
    for &(a, b, w) in &adj.links {
        if !free[a as usize] {
            in_register[b as usize] += f64::from(w);
        }
    }
    let total: f64 = free
        .iter()
        .zip(stack_cost)
        .zip(&*in_register)
        .map(|((&free, &stack), &in_register)| {
            let stack = f64::from(stack);
            if free { stack.min(in_register) } else { stack }
        })
        .sum();
    (total * (1.0 - 1e-6)) as f32
}

fn descend(
    label: &mut [bool],
    free: &[bool],
    free_words: &[u64],
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    work: &mut Descent,
) -> f32 {
    let n = label.len();
    let own = |k: usize, reg: bool| f64::from(if reg { boundary[k] } else { stack_cost[k] });
    let Descent {
        dirty,
        into_from_stack,
        out_to_register,
        charged,
    } = work;
    debug_assert!((0..n).all(|k| label[k] || !free[k] || stack_cost[k] == 0.0));
    debug_assert!((0..n).all(|k| boundary[k] == 0.0 || charged.contains(&(k as u32))));
    dirty.clear();
    dirty.resize(free_words.len(), 0);
    into_from_stack.clear();
    into_from_stack.resize(n, 0.0);
    out_to_register.clear();
    out_to_register.resize(n, 0.0);
    for &(a, b, w) in &adj.links {
        let (a, b) = (a as usize, b as usize);
        if !label[a] {
            into_from_stack[b] += f64::from(w);
            if label[b] {
                dirty[a / 64] |= 1 << (a % 64);
                dirty[b / 64] |= 1 << (b % 64);
            }
        }
        if label[b] {
            out_to_register[a] += f64::from(w);
        }
    }
    // A segment's flip decision depends on its own label and its neighbours' only, so
    // one that did not flip is looked at again only once one of them has changed (a
    // segment that just flipped would not flip back either). Dirty segments are bits
    // (only free ones are ever set), found a word at a time.
    //
    // Every cost is at least zero. So at the start a register segment with no boundary
    // cost and no link in from the stack gains nothing by going to the stack, and a stack
    // segment with no link out into a register nothing by taking one (it has no stack
    // cost to save: the start puts every free segment with one in the register). Looking
    // at such a segment would not flip it: only the ends of links from the stack into a
    // register and the register segments with a boundary cost start dirty, and the others
    // are marked by a neighbour's flip before they could change their mind.
    debug_assert_eq!(free_words, bit_words(free));
    for &k in charged.iter() {
        let k = k as usize;
        if label[k] {
            dirty[k / 64] |= 1 << (k % 64);
        }
    }
    for (d, &free) in dirty.iter_mut().zip(free_words) {
        *d &= free;
    }
    for _ in 0..MAX_REGION_PASSES {
        let mut changed = false;
        let mut k = 0;
        while k < n {
            let word = k / 64;
            let bits = dirty[word] & (!0u64 << (k % 64));
            if bits == 0 {
                k = (word + 1) * 64;
                continue;
            }
            k = word * 64 + bits.trailing_zeros() as usize;
            dirty[word] &= !(1 << (k % 64));
            let now = label[k];
            // To a register: the links in from stack neighbours start costing and those
            // out to register neighbours stop; to the stack, the reverse.
            let links = into_from_stack[k] - out_to_register[k];
            let delta = own(k, !now) - own(k, now) + if now { -links } else { links };
            if delta < 0.0 {
                label[k] = !now;
                changed = true;
                for &(j, w, out) in adj.of(k) {
                    let (j, w) = (j as usize, f64::from(w));
                    // `now` is what `k` was: a register going to the stack (or back).
                    match (out, now) {
                        (true, true) => into_from_stack[j] += w,
                        (true, false) => into_from_stack[j] -= w,
                        (false, true) => out_to_register[j] -= w,
                        (false, false) => out_to_register[j] += w,
                    }
                    if free[j] {
                        dirty[j / 64] |= 1 << (j % 64);
                    }
                }
            }
            k += 1;
        }
        if !changed {
            break;
        }
    }
    // Each costly link is counted once, at the register segment it enters.
    let cost: f64 = label
        .iter()
        .zip(stack_cost.iter().zip(boundary))
        .zip(&*into_from_stack)
        .map(|((&reg, (&stack, &boundary)), &into)| {
            if reg {
                f64::from(boundary) + into
            } else {
                f64::from(stack)
            }
        })
        .sum();
    cost as f32
}

/// The buffers of `descend`, kept across descents.
#[derive(Default)]
struct Descent {
    dirty: Vec<u64>,
    /// Per segment: the weight of its links in from stack segments, and of its links
    /// out to register segments, under the current labelling.
    into_from_stack: Vec<f64>,
    out_to_register: Vec<f64>,
    /// The segments with a boundary cost (perhaps some without, and some twice), set for
    /// each attempt.
    charged: Vec<u32>,
}

/// The buffers of one region split attempt, kept across attempts and functions (an
/// attempt is made for most intervals that reach the split stage, most of them fail, and
/// each allocated a dozen vectors).
#[derive(Default)]
pub(crate) struct RegionScratch {
    /// Per block segment of the interval: its block, the cost of keeping it on the
    /// stack, and the cost of a register at its boundary with the rest of the value.
    blocks: Vec<Block>,
    stack_cost: Vec<f32>,
    boundary: Vec<f32>,
    /// Directed edges between segments: (from a, to b, cost of a reload from a to b).
    links: Vec<(usize, usize, f32)>,
    adj: Adjacency,
    /// The labelling of the best candidate so far, and the two descents' labellings of
    /// the candidate at hand.
    best_label: Vec<bool>,
    label_a: Vec<bool>,
    label_b: Vec<bool>,
    descent: Descent,
    free: Vec<bool>,
    seen: Vec<u64>,
    candidates: Vec<PReg>,
    /// Per block: the interval's last segment in it, or `NO_SEGMENT`; reset after each
    /// attempt (only the interval's blocks are touched).
    last_segment: Vec<u32>,
    /// The interval's fixed-register defs: (segment after the def, register, frequency).
    fixed_ops: Vec<(u32, PReg, f32)>,
    /// Per segment, the cost of keeping it in a register: `boundary` plus a move per
    /// fixed operand, for any register (`reg_base`) and for the candidate at hand.
    reg_base: Vec<f32>,
    reg_cost: Vec<f32>,
    /// Per segment with operands that cost on the stack: from the first instruction of
    /// its operands (zero if a fixed def precedes it) to one past their last point;
    /// `NO_SPAN` for the others.
    spans: Vec<(Point, Point)>,
    /// Per segment, how the candidate at hand may keep it (and the best one's).
    modes: Vec<Mode>,
    best_modes: Vec<Mode>,
    /// The links and adjacency of a candidate that keeps some segment in part.
    partial_adj: Adjacency,
    /// Per segment, for `push_register_islands`: its union-find parent, and the island
    /// of a root.
    island_root: Vec<u32>,
    island_of: Vec<u32>,
}

/// `RegionScratch::spans` of a segment without operands that cost on the stack.
const NO_SPAN: (Point, Point) = (Point::MAX, 0);

/// How a register segment keeps the candidate register (LLVM's per-block entry and
/// exit constraints, for the blocks where the register is not free throughout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Free over the whole segment.
    Whole,
    /// In the register from the segment's start to this point (past its last costly
    /// operand), on the stack after: interference follows its operands.
    Head(Point),
    /// On the stack up to this point (its first costly operand's instruction), in the
    /// register after: interference precedes its operands.
    Tail(Point),
}

/// `RegionScratch::last_segment` of a block the interval does not cover.
const NO_SEGMENT: u32 = u32::MAX;

/// The buffers of one local split attempt, kept across attempts and functions (an
/// attempt is made for most intervals inside one block that reach the split stage).
#[derive(Default)]
pub(crate) struct LocalScratch {
    /// The interval's use instructions whose operands need a register.
    insts: Vec<u32>,
    /// The cells (use instructions and the gaps between them): bounds, and per cell the
    /// candidate's heaviest occupant and its first and last occupant ordinals.
    bounds: Vec<u32>,
    cell_weight: Vec<f32>,
    cell_first: Vec<u32>,
    cell_last: Vec<u32>,
    /// Per step from one use instruction to the next: what an evicting window crossing
    /// it adds.
    steps: Vec<(f32, u32, u32)>,
    /// The candidate's occupants over the segment: (start, end, weight).
    occupants: Vec<(u32, u32, f32)>,
    crossed: CrossedSteps,
    /// Operands before each use instruction (a prefix sum).
    ops_before: Vec<u32>,
    candidates: Vec<PReg>,
}

/// The buffers of one block split attempt, kept across attempts and functions.
#[derive(Default)]
pub(crate) struct BlockScratch {
    /// Per block segment: its innermost loop header and its use instructions.
    keyed: Vec<(Block, u32)>,
    /// Per loop header (indexed by block): segments and use instructions summed over the
    /// attempt, then a loop piece's number plus one; all zero between attempts.
    per_loop: Vec<(u32, u32)>,
    /// The headers with an entry in `per_loop`.
    headers: Vec<Block>,
    /// The headers whose segments become one piece, sorted, each with its number of
    /// segments (the piece's size, allocated once).
    loop_groups: Vec<(Block, u32)>,
}

/// The links between an interval's block segments, per segment, in one flat list (a
/// vector per segment cost an allocation per block at every region split attempt).
#[derive(Default)]
struct Adjacency {
    /// `list[start[k]..start[k + 1]]` are segment `k`'s neighbours with the link cost and
    /// whether the edge leaves `k`.
    start: Vec<usize>,
    list: Vec<(u32, f32, bool)>,
    fill: Vec<usize>,
    /// The links themselves: (from, to, weight).
    links: Vec<(u32, u32, f32)>,
    /// Per link: its entries in `list`, in its source's and in its target's neighbours.
    at: Vec<(u32, u32)>,
}

impl Adjacency {
    /// Each link `(a, b, w)` (an edge from `a` to `b`) makes `b` a neighbour of `a` and
    /// `a` one of `b`, each segment's neighbours in the order of `links`.
    fn fill(&mut self, n: usize, links: &[(usize, usize, f32)]) {
        let start = &mut self.start;
        start.clear();
        start.resize(n + 1, 0);
        for &(a, b, _) in links {
            start[a + 1] += 1;
            start[b + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let fill = &mut self.fill;
        fill.clone_from(start);
        let list = &mut self.list;
        list.clear();
        list.resize(2 * links.len(), (0, 0.0, false));
        self.at.clear();
        for &(a, b, w) in links {
            list[fill[a]] = (b as u32, w, true);
            list[fill[b]] = (a as u32, w, false);
            self.at.push((fill[a] as u32, fill[b] as u32));
            fill[a] += 1;
            fill[b] += 1;
        }
        self.links.clear();
        self.links
            .extend(links.iter().map(|&(a, b, w)| (a as u32, b as u32, w)));
    }

    /// Becomes a copy of `other`.
    fn copy_from(&mut self, other: &Adjacency) {
        self.start.clone_from(&other.start);
        self.list.clone_from(&other.list);
        self.links.clone_from(&other.links);
        self.at.clone_from(&other.at);
    }

    /// Link `i` (in the order `fill` was given them) weighs nothing from now on.
    fn zero(&mut self, i: usize) {
        let (x, y) = self.at[i];
        self.list[x as usize].1 = 0.0;
        self.list[y as usize].1 = 0.0;
        self.links[i].2 = 0.0;
    }

    fn of(&self, k: usize) -> &[(u32, f32, bool)] {
        &self.list[self.start[k]..self.start[k + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The objective from scratch: stack cost of stack segments, boundary cost of
    /// register segments, and every link from a stack segment into a register one.
    fn total(
        label: &[bool],
        stack: &[f32],
        boundary: &[f32],
        links: &[(usize, usize, f32)],
    ) -> f64 {
        let own: f64 = (0..label.len())
            .map(|k| f64::from(if label[k] { boundary[k] } else { stack[k] }))
            .sum();
        let reloads: f64 = links
            .iter()
            .filter(|&&(a, b, _)| !label[a] && label[b])
            .map(|&(_, _, w)| f64::from(w))
            .sum();
        own + reloads
    }

    /// Segment count, stack costs, boundary costs and links of a test graph.
    type Graph = (usize, Vec<f32>, Vec<f32>, Vec<(usize, usize, f32)>);

    /// A random segment graph of 1 to `max` segments: stack costs, boundary costs (one
    /// segment in `boundary_one_in` has one) and up to three links out of each segment.
    fn random_graph(next: &mut impl FnMut(u64) -> u64, max: u64, boundary_one_in: u64) -> Graph {
        let n = 1 + next(max) as usize;
        let weight = |x: u64| [0.0, 1.0, 2.0, 8.0, 16.0, 0.5][x as usize];
        let stack: Vec<f32> = (0..n).map(|_| weight(next(6))).collect();
        let boundary: Vec<f32> = (0..n)
            .map(|_| {
                if next(boundary_one_in) == 0 {
                    weight(next(6))
                } else {
                    0.0
                }
            })
            .collect();
        let mut links = Vec::new();
        for a in 0..n {
            for _ in 0..next(4) {
                let b = next(n as u64) as usize;
                if b != a {
                    links.push((a, b, weight(1 + next(5))));
                }
            }
        }
        (n, stack, boundary, links)
    }

    /// On random segment graphs, the descent returns the true cost of its labelling,
    /// keeps forced segments on the stack, and ends where no single free flip helps
    /// (unless it ran out of passes).
    #[test]
    fn descent_reaches_a_local_minimum_and_reports_its_cost() {
        let mut next = crate::tests::xorshift(0x2545_f491_4f6c_dd1du64);
        let mut adj = Adjacency::default();
        let mut work = Descent::default();
        let mut minima = 0;
        let mut tight = 0;
        for _ in 0..500 {
            let (n, stack, boundary, links) = random_graph(&mut next, 150, 4);
            adj.fill(n, &links);
            work.charged.clear();
            work.charged
                .extend((0..n as u32).filter(|&k| boundary[k as usize] > 0.0));
            let free: Vec<bool> = (0..n).map(|_| next(5) != 0).collect();
            let mut label = if next(2) == 0 {
                free.clone()
            } else {
                (0..n).map(|k| free[k] && stack[k] > 0.0).collect()
            };
            let words = bit_words(&free);
            let cost = descend(
                &mut label, &free, &words, &stack, &boundary, &adj, &mut work,
            );
            let truth = total(&label, &stack, &boundary, &links);
            assert!(
                (f64::from(cost) - truth).abs() <= 1e-3 * truth.max(1.0),
                "{cost} vs {truth}"
            );
            // The bound that lets a candidate skip its descents holds for the descent's
            // labelling and for any other that keeps the forced segments on the stack.
            let bound = lower_bound(&free, &stack, &boundary, &adj, &mut work);
            assert!(bound <= cost, "bound {bound} above the descent's {cost}");
            let other: Vec<bool> = (0..n).map(|k| free[k] && next(2) == 0).collect();
            let other_cost = total(&other, &stack, &boundary, &links);
            assert!(
                f64::from(bound) <= other_cost,
                "bound {bound} above a labelling costing {other_cost}"
            );
            if f64::from(bound) >= 0.999 * truth && truth > 0.0 {
                tight += 1;
            }
            assert!(
                (0..n).all(|k| free[k] || !label[k]),
                "a forced segment took the register"
            );
            let improvable = (0..n).filter(|&k| free[k]).any(|k| {
                let mut flipped = label.clone();
                flipped[k] = !flipped[k];
                total(&flipped, &stack, &boundary, &links) < truth - 1e-9
            });
            if !improvable {
                minima += 1;
            }
        }
        // The pass bound cuts only the rare long chain of flips short.
        assert!(
            minima >= 490,
            "only {minima} of 500 descents ended at a local minimum"
        );
        // A bound that is never reached would skip nothing.
        assert!(
            tight >= 10,
            "the bound met the descent's cost {tight} times in 500"
        );
    }

    fn islands_of(label: &[bool], modes: &[Mode], links: &[(usize, usize, f32)]) -> Vec<Product> {
        let seg = |k: u32| Segment {
            start: 10 * k,
            end: 10 * k + 5,
        };
        let in_reg: SegmentList = (0..label.len() as u32)
            .filter(|&k| label[k as usize])
            .map(seg)
            .collect();
        let mut products = Vec::new();
        let count = push_register_islands(
            RegionPlan {
                label,
                modes,
                links,
            },
            in_reg,
            (
                Stage::New,
                Placement::Hint(PReg::new(3, regalloc2::RegClass::Int)),
            ),
            (&mut Vec::new(), &mut Vec::new()),
            &mut products,
        );
        assert_eq!(count, products.len());
        products
    }

    /// Register segments fall into islands where a head gives the register up or a tail
    /// takes it late; a link into or out of a stack segment joins nothing; only the
    /// first island keeps the candidate, and every labelled segment lands in one island.
    #[test]
    fn region_candidates_shrink_with_the_segments_to_a_floor() {
        // Short values weigh every candidate; the probes of a long one stay in budget.
        assert_eq!(region_candidate_limit(1), MAX_CANDIDATES);
        assert_eq!(
            region_candidate_limit(REGION_PROBE_BUDGET / MAX_CANDIDATES),
            MAX_CANDIDATES
        );
        assert_eq!(region_candidate_limit(64), 4);
        assert_eq!(
            region_candidate_limit(MAX_REGION_SEGMENTS),
            MIN_REGION_CANDIDATES
        );
        let mut last = MAX_CANDIDATES;
        for n in 1..=MAX_REGION_SEGMENTS {
            let c = region_candidate_limit(n);
            assert!(c <= last, "{n} segments: {c} after {last}");
            assert!(
                c == MIN_REGION_CANDIDATES || c * n <= REGION_PROBE_BUDGET,
                "{n} segments: {c} candidates"
            );
            last = c;
        }
    }

    #[test]
    fn register_islands_split_at_heads_and_tails() {
        use Mode::{Head, Tail, Whole};
        // 0 (head) -> 1 -> 2, 2 -> 3 (stack) -> 4, 4 -> 5 (tail): islands {0}, {1, 2}, {4}, {5}.
        let label = [true, true, true, false, true, true];
        let modes = [Head(3), Whole, Whole, Whole, Whole, Tail(52)];
        let links = [
            (0, 1, 2.0),
            (1, 2, 2.0),
            (2, 3, 2.0),
            (3, 4, 2.0),
            (4, 5, 2.0),
        ];
        let products = islands_of(&label, &modes, &links);
        let starts: Vec<Vec<u32>> = products
            .iter()
            .map(|p| p.segments.iter().map(|s| s.start).collect())
            .collect();
        assert_eq!(starts, vec![vec![0], vec![10, 20], vec![40], vec![50]]);
        assert!(matches!(products[0].place, Placement::Hint(_)));
        assert!(products[1..].iter().all(|p| p.place == Placement::Queue));
        // A link joins an island wherever it appears: 5 -> 0 back into the head's island.
        let links = [(0, 1, 2.0), (1, 2, 2.0), (5, 0, 2.0)];
        let products = islands_of(&label, &modes, &links);
        let sizes: Vec<usize> = products.iter().map(|p| p.segments.len()).collect();
        assert_eq!(sizes, vec![2, 2, 1]);
        // Thousands of heads in a chain: one island each, found in linear time.
        let n = 20_000;
        let label = vec![true; n];
        let modes = vec![Head(1); n];
        let links: Vec<_> = (1..n).map(|k| (k - 1, k, 1.0)).collect();
        assert_eq!(islands_of(&label, &modes, &links).len(), n);
    }

    /// A copy of an adjacency with some links zeroed descends to the same labelling and
    /// cost, and bounds them the same, as an adjacency built from the other links alone
    /// (what a partial candidate's region split relies on).
    #[test]
    fn zeroed_links_are_dropped_links() {
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15u64);
        let (mut full, mut zeroed, mut kept) = (
            Adjacency::default(),
            Adjacency::default(),
            Adjacency::default(),
        );
        let (mut work_a, mut work_b) = (Descent::default(), Descent::default());
        let mut dropped_some = 0;
        for _ in 0..300 {
            let (n, stack, boundary, links) = random_graph(&mut next, 80, 3);
            let drop: Vec<bool> = links.iter().map(|_| next(3) == 0).collect();
            full.fill(n, &links);
            zeroed.copy_from(&full);
            for (i, _) in drop.iter().enumerate().filter(|(_, d)| **d) {
                zeroed.zero(i);
            }
            let kept_links: Vec<_> = links
                .iter()
                .zip(&drop)
                .filter(|(_, d)| !**d)
                .map(|(l, _)| *l)
                .collect();
            dropped_some += usize::from(kept_links.len() < links.len());
            kept.fill(n, &kept_links);
            let free: Vec<bool> = (0..n).map(|_| next(4) != 0).collect();
            let words = bit_words(&free);
            for work in [&mut work_a, &mut work_b] {
                work.charged.clear();
                work.charged
                    .extend((0..n as u32).filter(|&k| boundary[k as usize] > 0.0));
            }
            let (mut label_a, mut label_b) = (free.clone(), free.clone());
            let cost_a = descend(
                &mut label_a,
                &free,
                &words,
                &stack,
                &boundary,
                &zeroed,
                &mut work_a,
            );
            let cost_b = descend(
                &mut label_b,
                &free,
                &words,
                &stack,
                &boundary,
                &kept,
                &mut work_b,
            );
            assert_eq!(label_a, label_b);
            assert_eq!(cost_a, cost_b);
            assert_eq!(
                lower_bound(&free, &stack, &boundary, &zeroed, &mut work_a),
                lower_bound(&free, &stack, &boundary, &kept, &mut work_b)
            );
        }
        assert!(
            dropped_some >= 200,
            "only {dropped_some} graphs lost a link"
        );
    }

    /// The longest finite run is the most uses of any window `a..=b` whose cells `2a..=2b`
    /// are all finite, checked against every window on random cell rows.
    #[test]
    fn longest_finite_run_is_the_longest_finite_window() {
        let mut next = crate::tests::xorshift(0x51af_d7ed_558c_cd00);
        let mut cut_short = 0;
        for _ in 0..500 {
            let uses = 1 + next(12) as usize;
            let cells: Vec<f32> = (0..2 * uses - 1)
                .map(|_| {
                    if next(4) == 0 {
                        f32::INFINITY
                    } else {
                        next(3) as f32
                    }
                })
                .collect();
            let mut longest = 0;
            for a in 0..uses {
                for b in a..uses {
                    if cells[2 * a..=2 * b].iter().all(|w| w.is_finite()) {
                        longest = longest.max(b - a + 1);
                    }
                }
            }
            assert_eq!(longest_finite_run(&cells), longest, "{cells:?}");
            cut_short += usize::from(longest < uses);
        }
        // Rows an infinite cell cuts short were drawn (the case the bound prunes).
        assert!(cut_short > 100);
    }

    /// `CrossedSteps::fold` gives the extremes a plain fold over the window gives, for
    /// random steps (ties, infinite weights, empty steps, occupant ordinals in union
    /// order) and windows whose ends move right by random amounts, empty windows
    /// included.
    #[test]
    fn crossed_steps_match_a_plain_fold() {
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut crossed = CrossedSteps::default();
        let mut nonempty = 0;
        for _ in 0..300 {
            let n = 1 + next(60) as usize;
            let (mut first, mut last) = (0u32, 0u32);
            let steps: Vec<(f32, u32, u32)> = (0..n)
                .map(|_| match next(8) {
                    0 => (0.0, u32::MAX, 0),
                    1 => (f32::INFINITY, u32::MAX, 0),
                    _ => {
                        // Occupants in union order: a step's first ordinal is at least
                        // the previous occupied step's first, its last at least its last.
                        first += next(3) as u32;
                        last = last.max(first) + next(3) as u32;
                        (next(5) as f32, first, last)
                    }
                })
                .collect();
            crossed.restart();
            let (mut from, mut to) = (0, 0);
            while from <= n {
                to = (to + next(4) as usize).clamp(from, n);
                let plain = steps[from..to]
                    .iter()
                    .fold((0.0f32, u32::MAX, 0u32), |(w, f, l), s| {
                        (w.max(s.0), f.min(s.1), l.max(s.2))
                    });
                assert_eq!(
                    crossed.fold(&steps, from, to),
                    plain,
                    "{steps:?} {from}..{to}"
                );
                nonempty += usize::from(from < to);
                from += 1 + next(2) as usize;
            }
        }
        assert!(nonempty > 1000, "only {nonempty} non-empty windows");
    }
}
