//! Region splitting, for an interval across blocks: per candidate register, every block
//! segment is labelled register or stack (or kept in the register over part of itself)
//! to minimise frequency-weighted spill and copy cost, with LLVM's compact region (a
//! register not chosen yet, in the use blocks) as the first candidate. The cheapest
//! labelling that beats spilling splits the interval into its register part, its stack
//! part and local pieces around the uses left on the stack.

use super::descent::{Adjacency, Descent, bit_word, descend, lower_bound};
use super::{HYSTERESIS, MAX_CANDIDATES, Placement, Product};
use crate::analysis::intervals::{Point, Segment};
use crate::greedy::Allocator;
use crate::greedy::interval::{IntervalId, LiveInterval, SegmentList, Stage};
use crate::greedy::matrix::fixed_conflict_from;
use crate::observe::{SplitKind, observe};
use crate::union_find::find;
use log::debug;
use regalloc2::{Block, Function, OperandConstraint, PReg, PRegSet};

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
/// Block segments beyond which a value with sparse uses (fewer than one block segment
/// in `SPARSE_USE_RATIO` with a use) outside nested loops is not region-split. It was
/// 64: at 32 the Wasm corpus takes 1.7% fewer allocation instructions for the same cost
/// geomean (+0.002% summed); at 16 the geomean rose 0.26%.
const SPARSE_REGION_SEGMENTS: usize = 32;
const SPARSE_USE_RATIO: usize = 16;
/// Block segments beyond which a value with sparse uses is not region-split even with a
/// use inside a nested loop (`pub(crate)` for the tests on either side of it).
pub(crate) const SPARSE_NESTED_REGION_SEGMENTS: usize = 128;
/// Cost of a store or reload relative to a register move.
const MEMORY_COST: f32 = 2.0;

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// For each candidate register, label every block segment "register" or "stack":
    /// a segment with interference must be stack; a stack segment costs a reload or store
    /// per operand in it; each CFG edge the value crosses from a stack segment into a
    /// register segment costs a reload (the store is made once, at the def). Labels start at "register wherever free" and are
    /// improved by flipping single segments while that lowers the cost (a bounded
    /// Hopfield-style descent over the same objective as LLVM's spill placement). The
    /// cheapest labelling over all candidates is used if it beats spilling everything.
    pub(super) fn try_region_split(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
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
            products,
        } = scratch;
        let iv = &self.ctx.intervals[id];
        // Debug builds go on to check the shortcut against the exits it stands for.
        let ruled_out = self.region_split_ruled_out(iv);
        if ruled_out && !cfg!(debug_assertions) {
            return false;
        }
        let segments = self.ctx.lists.segments(iv);
        let n = segments.len();
        let f = self.func;
        // Per segment: its block, frequency and the cost of keeping it on the stack.
        blocks.clear();
        blocks.extend(segments.iter().map(|s| self.block_of_point(s.start)));
        stack_cost.clear();
        stack_cost.resize(n, 0.0);
        fixed_ops.clear();
        spans.clear();
        spans.resize(n, NO_SPAN);
        for (k, uses) in Self::uses_by_segment(&self.ctx.lists, iv) {
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
                span.1 = span.1.max(u.last() + 1);
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
            for u in self.ctx.lists.uses(iv).iter().filter(|u| u.is_def()) {
                if let OperandConstraint::FixedReg(q) = u.operand.constraint()
                    && let Ok(k) =
                        segments.binary_search_by_key(&(2 * u.inst.index() as u32 + 2), |s| s.start)
                {
                    let freq = self.an.freq.of(blocks[k]);
                    stack_cost[k] += MEMORY_COST * freq;
                    fixed_ops.push((k as u32, q, freq));
                    // Its copy out of the register starts the segment: no stack before.
                    spans[k].0 = 0;
                    spans[k].1 = spans[k].1.max(segments[k].start);
                }
            }
        }
        debug_assert!({
            let mut at = 0;
            let mut with_uses = Self::uses_by_segment(&self.ctx.lists, iv);
            let same = self
                .ctx
                .lists
                .segments(iv)
                .iter()
                .enumerate()
                .all(|(k, s)| {
                    let uses = Self::uses_from(self.ctx.lists.uses(iv), &mut at, s);
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
        for (k, s) in segments.iter().enumerate() {
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
                if j != NO_SEGMENT && segments[j as usize].end == pred_end {
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
        // Spilling all of a block parameter stores it at its block's start too, which no
        // operand of it stands for in `stack_cost`: the baseline the labelling must beat
        // includes that store (an instruction's def is charged as its operand already).
        let mut param_store = 0.0;
        if !self.out.slots.has_slot(iv.vreg)
            && def_block.is_valid()
            && let Some(k) = blocks.iter().position(|&b| b == def_block)
        {
            let store = MEMORY_COST * self.an.freq.of(def_block);
            boundary[k] += store;
            descent.charged.push(k as u32);
            if self.an.live.def_inst(iv.vreg).is_none() {
                param_store = store;
            }
        }
        // The adjacency is filled once something descends or bounds over it: many
        // attempts end with every candidate's probes.
        let mut adj_ready = false;
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
        let threshold = cap.unwrap_or((spill_all + param_store) * HYSTERESIS);
        // LLVM's compact region is the first candidate (no register: `None`): the value
        // keeps a register of its own, not chosen yet, in its use blocks. A register
        // candidate must beat it; a tie goes to the register in hand, since the compact
        // region must still find one.
        let mut best: Option<(f32, Option<PReg>)> = None;
        // Only worth it where use blocks touch (isolated ones are the block splitter's).
        if cap.is_none()
            && links
                .iter()
                .any(|&(a, b, _)| stack_cost[a] > 0.0 && stack_cost[b] > 0.0)
        {
            adj.fill(n, links);
            adj_ready = true;
            if let Some(cost) =
                compact_region(best_label, stack_cost, reg_base, adj, (free, seen), descent)
                && cost < threshold
            {
                best = Some((cost, None));
            }
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
            for (i, &p) in candidates.iter().enumerate() {
                // A candidate whose sum reaches the `limit`-th smallest of the earlier
                // ones is not kept (they come first in a tie): its probes stop there.
                let cutoff = (i >= limit).then(|| {
                    let mut earlier = [0.0f32; MAX_CANDIDATES];
                    for (e, &(c, _)) in earlier.iter_mut().zip(&ranked[..i]) {
                        *e = c;
                    }
                    earlier[..i].sort_by(f32::total_cmp);
                    earlier[limit - 1]
                });
                // `free_over` per use segment, by cursors (the segments come in order).
                let reservations = &self.an.intervals.fixed[p.index()];
                let fixed = iv.fixed_conflicts.contains(p);
                let (mut probe, mut lo) = (self.ctx.matrix.probe(p), 0);
                let mut free_at = |s: Segment| {
                    !(fixed && fixed_conflict_from(reservations, &mut lo, s, iv.vreg))
                        && probe.is_free(s)
                };
                // Summed in order from `Sum`'s start.
                let mut forced = -0.0f32;
                for (&s, &cost) in segments.iter().zip(stack_cost.iter()) {
                    if cost > 0.0 && {
                        let is_free = free_at(s);
                        debug_assert_eq!(is_free, self.free_over(p, iv, s));
                        !is_free
                    } {
                        forced += cost;
                        if cutoff.is_some_and(|c| forced >= c) {
                            forced = f32::INFINITY;
                            break;
                        }
                    }
                }
                ranked[i] = (forced, p);
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
        // Sized once: each candidate's probes write every entry they reach.
        free.resize(n, false);
        modes.resize(n, Mode::Whole);
        let words = n.div_ceil(64);
        let mut weighed = 0;
        for &p in candidates.iter() {
            // The words of the candidates weighed so far (up to `weighed`) stay; this
            // one's are written as its probes go, and dropped if it stops before that.
            let mark = weighed;
            seen.truncate(mark);
            seen.resize(mark + 3 * words, 0);
            // Segments with interference stay on the stack whatever the labelling (unless
            // they keep the register over their uses on one side of it): their cost bounds
            // the candidate's from below, and a candidate that cannot beat the best so far
            // (or spilling) is not worth a descent, nor the rest of its probes (the bound
            // only grows).
            let rules_out =
                |forced: f32| forced >= threshold || best.is_some_and(|b| !beats(forced, b));
            let Some(partial) = self.probe_region_candidate(
                p,
                iv,
                (segments, spans, stack_cost),
                (&mut free[..], &mut modes[..], &mut seen[mark..]),
                bridge_ok,
                rules_out,
            ) else {
                continue;
            };
            // The labelling and its cost depend on `free` and `modes` alone for a
            // register no fixed operand names (a mode's cut is its segment's, whatever
            // the register): one free in the same blocks, and kept in part in the same
            // ones the same way, as a candidate already weighed cannot beat it (a tie
            // keeps the first; a fixed register's moves cost no more), and many are
            // (registers free all along the value, or blocked by the same calls, which
            // a pre-split's candidates all are). Fixed registers are always weighed.
            if !fixed_regs.contains(p)
                && seen[..mark]
                    .chunks(3 * words)
                    .any(|earlier| earlier == &seen[mark..])
            {
                continue;
            }
            weighed = seen.len();
            reg_cost.clone_from(boundary);
            for &(k, q, freq) in fixed_ops.iter() {
                if q != p {
                    reg_cost[k as usize] += freq;
                }
            }
            descent.charged.truncate(base_charged);
            if !adj_ready {
                adj.fill(n, links);
                adj_ready = true;
            }
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
            self.split_compact_region(id, cost, label, products);
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
            let s = segments[k];
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
            let uses = Self::uses_from(self.ctx.lists.uses(iv), &mut at, &s);
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
        products.clear();
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
                products,
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

    /// Probes candidate `p` over each of `iv`'s `segments` (with their `spans` and
    /// `stack_cost`) into `free` and `modes` (each entry written up to a segment that
    /// rules the candidate out), and into `bits` (zeroed) as the
    /// words of its free segments, of those kept as the head and of those kept as the
    /// tail. `None` once the stack cost of the segments it must leave on the stack
    /// `rules_out` the candidate, or if no segment is free; else whether some segment is
    /// kept in part. Out of line: the loop keeps its state in registers, apart from
    /// the labelling's.
    #[inline(never)]
    fn probe_region_candidate(
        &self,
        p: PReg,
        iv: &LiveInterval,
        (segments, spans, stack_cost): (&[Segment], &[(Point, Point)], &[f32]),
        (free, modes, bits): (&mut [bool], &mut [Mode], &mut [u64]),
        bridge_ok: bool,
        rules_out: impl Fn(f32) -> bool,
    ) -> Option<bool> {
        let words = bits.len() / 3;
        let (free_bits, kept_bits) = bits.split_at_mut(words);
        let (head_bits, tail_bits) = kept_bits.split_at_mut(words);
        let reservations = &self.an.intervals.fixed[p.index()];
        let mut lo = 0;
        let mut probe = self.ctx.matrix.probe(p);
        let mut forced = 0.0f32;
        let mut partial = false;
        // Most candidates have no fixed reservation anywhere over the value.
        let fixed = iv.fixed_conflicts.contains(p);
        let per_segment = (segments.iter())
            .zip(free.iter_mut())
            .zip(modes.iter_mut())
            .zip(spans.iter().zip(stack_cost.iter()));
        for (k, (((&s, free), mode), (&span, &cost))) in per_segment.enumerate() {
            let (word, bit) = (k / 64, 1u64 << (k % 64));
            *mode = Mode::Whole;
            *free = !(fixed && fixed_conflict_from(reservations, &mut lo, s, iv.vreg))
                && probe.is_free(s);
            if *free {
                free_bits[word] |= bit;
                continue;
            }
            if span != NO_SPAN {
                let free_over = |part: Segment| self.free_over(p, iv, part);
                let (first, end) = span;
                // All interference after the last costly use, or all before the first.
                let head = Segment {
                    start: s.start,
                    end,
                };
                let tail = Segment {
                    start: first,
                    end: s.end,
                };
                if s.start < end && end < s.end && (end % 2 == 0 || bridge_ok) && free_over(head) {
                    *mode = Mode::Head(end);
                    head_bits[word] |= bit;
                } else if first > s.start && first < s.end && free_over(tail) {
                    *mode = Mode::Tail(first);
                    tail_bits[word] |= bit;
                }
                if *mode != Mode::Whole {
                    *free = true;
                    free_bits[word] |= bit;
                    partial = true;
                    continue;
                }
            }
            forced += cost;
            if rules_out(forced) {
                return None;
            }
        }
        (free_bits.iter().any(|&w| w != 0)).then_some(partial)
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
        for u in self.ctx.lists.uses(iv).iter().filter(|u| {
            self.needs_register(u)
                || (u.is_def() && matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
        }) {
            needy += 1;
            nested |= self.an.loops.depth[self.an.cfg.block_of(u.inst).index()] >= 2;
            // More uses, or one in a nested loop, never make a value sparse again.
            if !sparse_beyond_region(n, needy, nested) {
                return false;
            }
        }
        needy == 0 || sparse_beyond_region(n, needy, nested)
    }

    /// Splits off the compact region `label` chose: the register part becomes one new
    /// interval, queued like any other (fewer segments than the original, so this
    /// terminates); the blocks the value only passes through go to Spill.
    fn split_compact_region(
        &mut self,
        id: IntervalId,
        cost: f32,
        label: &[bool],
        products: &mut Vec<Product>,
    ) {
        let iv = &self.ctx.intervals[id];
        let n = label.len();
        let mut compact = SegmentList::new();
        let mut rest = SegmentList::new();
        for (k, &s) in self.ctx.lists.segments(iv).iter().enumerate() {
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
        products.clear();
        products.extend([
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
        ]);
        self.split_into(id, products);
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

/// LLVM's compact region, labelled into `label`: with no register chosen yet, the value
/// keeps one of its own in the blocks with operands that need one and is spilled in the
/// blocks it only passes through. The same descent labels it (only use blocks may take
/// the register, so a use block whose transitions cost more than its operands goes back
/// to the stack). Only worth it when at least two block segments, not all, keep the
/// register. `uses` and `words` are scratch: the use blocks, as flags and bit words.
fn compact_region(
    label: &mut Vec<bool>,
    stack_cost: &[f32],
    boundary: &[f32],
    adj: &Adjacency,
    (uses, words): (&mut Vec<bool>, &mut Vec<u64>),
    work: &mut Descent,
) -> Option<f32> {
    let n = stack_cost.len();
    uses.clear();
    uses.extend(stack_cost.iter().map(|&c| c > 0.0));
    label.clone_from(uses);
    words.clear();
    words.extend(uses.chunks(64).map(|c| bit_word(c.iter().copied())));
    let cost = descend(label, uses, words, stack_cost, boundary, adj, work);
    let regs = label.iter().filter(|&&x| x).count();
    (regs >= 2 && regs < n).then_some(cost)
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
    /// The split's products.
    products: Vec<Product>,
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

#[cfg(test)]
mod tests {
    use super::super::MAX_REGION_SEGMENTS;
    use super::*;

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

    /// Register segments fall into islands where a head gives the register up or a tail
    /// takes it late; a link into or out of a stack segment joins nothing; only the
    /// first island keeps the candidate, and every labelled segment lands in one island.
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
}
