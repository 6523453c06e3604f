//! Local splitting, for an interval inside one block: over the candidate registers, the
//! widest window of consecutive use instructions where the register is free (or, with
//! `Options::evicting_local_split`, held only by occupants light enough to evict) keeps
//! it, and the pieces before and after the window are requeued.

use super::{HYSTERESIS, MAX_CANDIDATES, Placement, Product};
use crate::analysis::intervals::RegReservations;
use crate::analysis::intervals::Segment;
use crate::greedy::Allocator;
use crate::greedy::advisor::EvictionAdvisor;
use crate::greedy::interval::{IntervalId, LiveInterval, Stage};
use crate::greedy::matrix::fixed_conflict_from;
use crate::observe::{SplitKind, observe};
use log::debug;
use regalloc2::{Function, PReg, VReg};

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
    /// `reg`'s place among the candidates: of two windows equal in all else, the one
    /// in the earlier candidate is kept, whatever order the candidates are weighed in.
    rank: usize,
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

/// The point ranges over `seg` that `reservations` (one register's) hold for values other
/// than `owner`, in increasing order.
fn reserved_for_others<'r>(
    reservations: &'r RegReservations,
    owner: VReg,
    seg: Segment,
) -> impl Iterator<Item = (u32, u32)> + 'r {
    let first = reservations.first_ending_after(0, seg.start);
    reservations
        .get(first..)
        .unwrap_or_default()
        .iter()
        .take_while(move |res| res.start < seg.end)
        .filter(move |res| res.owner != owner)
        .map(|res| (res.start, res.end))
}

/// The most use instructions a local-split window may hold without touching any of
/// `blocked` (point ranges in increasing order, disjoint), over `m` uses whose cells are
/// bounded by `cells` (use `k` is cell `2k`, as in `local_split_with`): an upper bound on
/// the uses of any window in a register those ranges are reserved on.
fn longest_run_between(
    cells: &[u32],
    m: usize,
    blocked: impl Iterator<Item = (u32, u32)>,
) -> usize {
    let (mut longest, mut run_start) = (0, 0);
    let mut from = 0;
    for (start, end) in blocked {
        for c in cells_overlapping(cells, &mut from, start, end) {
            // A blocked use ends the run before it, a blocked gap the run through the
            // use before the gap.
            let k = c / 2;
            let run_end = if c % 2 == 0 { k } else { k + 1 };
            longest = longest.max(run_end.saturating_sub(run_start));
            run_start = run_start.max(k + 1);
        }
    }
    longest.max(m.saturating_sub(run_start))
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

impl<F: Function + ?Sized> Allocator<'_, F> {
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

    /// For an interval inside one block: find, over the candidate registers, the widest
    /// window of consecutive use instructions over which the register is free, and split
    /// the interval before and after it. The window keeps that register; the outer pieces
    /// are requeued. A window holding every use is no progress.
    pub(super) fn try_local_split(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
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
            products,
            ..
        } = s;
        let seg = self.ctx.lists.segments(iv)[0];
        // Only operands inside the segment count (a fixed def's site precedes it), and
        // only those that need a register: the others read the spill slot for free.
        insts.clear();
        insts.extend(
            self.ctx
                .lists
                .uses(iv)
                .iter()
                .filter(|u| u.first() >= seg.start && u.first() < seg.end && self.needs_register(u))
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
            for u in self.ctx.lists.uses(iv).iter() {
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
        let estimate_of = |a: usize, b: usize| {
            freq * (ops_before[b + 1] - ops_before[a]) as f32
                / (window_of(a, b).len() as f32 / 2.0 + 25.0)
        };
        let evicting = self.options.evicting_local_split && m > MIN_EVICTING_SPLIT_USES;
        let max_interference = self.eviction.max_interference();
        let mut best: Option<LocalWindow> = None;
        candidates.clear();
        candidates.extend(self.local_split_candidates(iv, avoid_csr).enumerate());
        // Windows that evict come from registers no call clobbers inside the block (the
        // candidates past the first six, on the Wasm corpus every time): weighed first,
        // they set the bar that a clobbered register's stretches between its
        // reservations, counted without a setup, must reach to be weighed at all. The
        // ranks keep every tie as the allocation order breaks it, so the chosen window
        // is the same in either order.
        if evicting {
            candidates.sort_by_key(|&(_, p)| iv.fixed_conflicts.contains(p));
        }
        for (i, &(rank, p)) in candidates.iter().enumerate() {
            if best.is_some_and(|w| {
                w.uses == most
                    && w.len == least_len
                    && w.evicts == 0.0
                    && candidates[i..].iter().all(|&(r, _)| r > w.rank)
            }) {
                break;
            }
            let reservations = &self.an.intervals.fixed[p.index()];
            let fixed = iv.fixed_conflicts.contains(p);
            if evicting
                && fixed
                && best.is_some_and(|w| {
                    let others = reserved_for_others(reservations, iv.vreg, seg);
                    longest_run_between(&bounds[..=n_cells], m, others) < w.uses
                })
            {
                continue;
            }
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
                    let mut from = 0;
                    for (start, end) in reserved_for_others(reservations, iv.vreg, seg) {
                        for c in cells_overlapping(cells, &mut from, start, end) {
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
                    (
                        uses,
                        -evicts,
                        std::cmp::Reverse(w.len()),
                        std::cmp::Reverse(rank),
                    ) > (
                        x.uses,
                        -x.evicts,
                        std::cmp::Reverse(x.len),
                        std::cmp::Reverse(x.rank),
                    )
                });
                if !covers_all && better {
                    *best = Some(LocalWindow {
                        uses,
                        len: w.len(),
                        reg: p,
                        first: a,
                        last: b,
                        evicts,
                        rank,
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
                let start = window_of(a, a).start;
                let ops_a = ops_before[a];
                let mut b = b0;
                // Use `b`'s instruction and the operands through it, walked with the
                // steps (no index to check per step).
                let (mut inst_b, mut ops_b) = (insts[b0], ops_before[b0 + 1]);
                let mut ahead = steps[b0..end - 1]
                    .iter()
                    .zip(&insts[b0 + 1..end])
                    .zip(&ops_before[b0 + 2..end + 1]);
                loop {
                    if first != u32::MAX && (last - first + 1) as usize > max_interference {
                        break;
                    }
                    if heaviest > 0.0 && b + 1 - a >= need {
                        // `estimate_of(a, b)`'s denominator, the window's start read once.
                        let len = (2 * inst_b + 2).min(seg.end) - start;
                        debug_assert_eq!(len, window_of(a, b).len());
                        let denom = len as f32 / 2.0 + 25.0;
                        // Heavier occupants and longer windows are all that follow.
                        if ops_reach / denom * HYSTERESIS <= heaviest {
                            debug_assert!(
                                (b + 1..end).all(|c| {
                                    let h = steps[b..c]
                                        .iter()
                                        .fold(heaviest, |h, s| if s.0 > h { s.0 } else { h });
                                    estimate_of(a, c) * HYSTERESIS <= h
                                }),
                                "the bound cut off a window that qualifies"
                            );
                            break;
                        }
                        let estimate = freq * (ops_b - ops_a) as f32 / denom;
                        debug_assert_eq!(estimate.to_bits(), estimate_of(a, b).to_bits());
                        if estimate * HYSTERESIS > heaviest {
                            consider(&mut best, a, b, heaviest);
                            need = need_of(best);
                        }
                    }
                    let Some(((&step, &inst), &ops)) = ahead.next() else {
                        break;
                    };
                    widen(&mut heaviest, &mut first, &mut last, step);
                    if heaviest == f32::INFINITY {
                        break;
                    }
                    b += 1;
                    (inst_b, ops_b) = (inst, ops);
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
        products.clear();
        products.push(Product {
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
        });
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
}

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
    /// The candidate registers with their places in the allocation order.
    candidates: Vec<(usize, PReg)>,
    /// The split's products (and an instruction split's, `cuts` its cut points).
    pub(super) products: Vec<Product>,
    pub(super) cuts: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The most uses of any window `a..=b` of `uses` whose cells `2a..=2b` are all
    /// `usable`, found by trying every window.
    fn longest_window(uses: usize, usable: impl Fn(usize) -> bool) -> usize {
        (0..uses)
            .flat_map(|a| (a..uses).map(move |b| (a, b)))
            .filter(|&(a, b)| (2 * a..=2 * b).all(&usable))
            .map(|(a, b)| b - a + 1)
            .max()
            .unwrap_or(0)
    }

    /// Runs `check` on 500 random rows of 1-12 uses drawn from `seed` (`next(n)` is
    /// below `n`). `check` answers whether its row's longest window holds fewer than all
    /// uses; more than 100 rows must (the case a bound prunes).
    fn on_random_rows(seed: u64, mut check: impl FnMut(&mut dyn FnMut(u64) -> u64, usize) -> bool) {
        let mut next = crate::tests::xorshift(seed);
        let cut_short = (0..500)
            .filter(|_| {
                let uses = 1 + next(12) as usize;
                check(&mut next, uses)
            })
            .count();
        assert!(cut_short > 100, "{cut_short} rows cut short");
    }

    /// The longest finite run is the most uses of any window `a..=b` whose cells `2a..=2b`
    /// are all finite, checked against every window on random cell rows.
    #[test]
    fn longest_finite_run_is_the_longest_finite_window() {
        on_random_rows(0x51af_d7ed_558c_cd00, |next, uses| {
            let cells: Vec<f32> = (0..2 * uses - 1)
                .map(|_| {
                    if next(4) == 0 {
                        f32::INFINITY
                    } else {
                        next(3) as f32
                    }
                })
                .collect();
            let longest = longest_window(uses, |c| cells[c].is_finite());
            assert_eq!(longest_finite_run(&cells), longest, "{cells:?}");
            longest < uses
        });
    }

    /// `longest_run_between` is the most uses of any window `a..=b` whose cells `2a..=2b`
    /// no blocked range touches, checked against every window on random cells (empty
    /// gaps included) and random blocked ranges.
    #[test]
    fn longest_run_between_is_the_longest_unblocked_window() {
        on_random_rows(0x2545_f491_4f6c_dd1d, |next, uses| {
            // Cell c is bounds[c]..bounds[c + 1]; a use is at least a point long, a gap
            // may be empty.
            let mut bounds = vec![next(4) as u32];
            for c in 0..2 * uses - 1 {
                let len = if c % 2 == 0 { 1 + next(3) } else { next(4) };
                bounds.push(bounds[c] + len as u32);
            }
            let end = bounds[2 * uses - 1] + 2;
            let mut blocked = Vec::new();
            let mut at = 0;
            while at < end {
                let start = at + next(12) as u32;
                let stop = start + 1 + next(3) as u32;
                if start < end {
                    blocked.push((start, stop));
                }
                at = stop;
            }
            let touched = |c: usize| {
                bounds[c] < bounds[c + 1]
                    && blocked
                        .iter()
                        .any(|&(s, e)| s < bounds[c + 1] && bounds[c] < e)
            };
            let longest = longest_window(uses, |c| !touched(c));
            let found = longest_run_between(&bounds, uses, blocked.iter().copied());
            assert_eq!(found, longest, "{bounds:?} {blocked:?}");
            longest < uses
        });
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
