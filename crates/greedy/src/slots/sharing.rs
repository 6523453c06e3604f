//! Spill-slot sharing, run once after allocation by any allocator: owns the choice of
//! each spilled value's slot.
//!
//! 1. **Copy-partner coalescing** (`Options::partner_slots`): spilled values joined by a
//!    copy (block parameter ↔ branch argument, reuse def ↔ input) are merged into one
//!    group, heaviest copy (block frequency) first, whenever the groups' live segments
//!    never overlap. The copy between them then reads and writes the same slot and the
//!    edit builder drops it.
//! 2. **Colouring** (`Options::slot_sharing`): groups in order of their first point;
//!    a group takes a slot whose occupants all died before it starts (linear scan over
//!    hulls), else a busy slot whose segments leave a hole where the group lives (a
//!    bounded probe), else a fresh slot.
//!
//! Invariant: the values in one slot have one class and are never live at the same
//! point, by the segments of `analysis::intervals` (not hulls). Those segments cover
//! every point where the edits read or write the value's slot. The one write outside
//! them, the edge move defining a block parameter at the end of a predecessor of a
//! merge block, is in one parallel move with every read at that point (the values live
//! out of the predecessor and its branch arguments; such a branch has no operands).
//!
//! Cost: O(s log² s) for s spilled segments — a group keeps its segments as sorted runs
//! whose lengths at least halve from one to the next, and a union merges two runs only
//! when they are within a factor of two, so a segment is merged O(log s) times, and an
//! overlap test walks each of the O(log² s) pairs of runs of two groups, skipping ahead
//! by galloping searches — and each group probes at most `PROBES` busy slots.

use super::{ColouringScratch, NEEDS_SLOT, SpillSlots};
use crate::analysis::Analyses;
use crate::analysis::copies::Partners;
use crate::analysis::intervals::Segment;
use crate::lists::reset_span;
use crate::search::gallop;
use crate::union_find::find;
use crate::{Options, Stats};
use log::debug;
use regalloc2::{Function, RegClass, VReg};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;
/// Busy slots tried for a hole before a group opens a new slot.
const PROBES: usize = 16;
/// Heap entries looked at while probing (stale ones included), to bound the work.
const PROBE_SCAN: usize = 4 * PROBES;

/// The live segments of a group: sorted runs for merged groups, the vreg's own slice for
/// a group of one.
enum Segs<'a> {
    Runs(&'a [Vec<(u32, u32)>]),
    Slice(&'a [Segment]),
}

impl Segs<'_> {
    fn len(&self) -> usize {
        match self {
            Segs::Runs(r) => r.iter().map(Vec::len).sum(),
            Segs::Slice(s) => s.len(),
        }
    }

    #[inline]
    fn is_empty(&self) -> bool {
        match self {
            Segs::Runs(r) => r.iter().all(Vec::is_empty),
            Segs::Slice(s) => s.is_empty(),
        }
    }

    /// Does a segment of `self` intersect one of `other`? Each run of one is walked
    /// against each run of the other (`meet`).
    fn meets(&self, other: &Segs<'_>) -> bool {
        match (self, other) {
            (Segs::Slice(a), Segs::Slice(b)) => meet(a, b),
            (Segs::Slice(a), Segs::Runs(b)) | (Segs::Runs(b), Segs::Slice(a)) => {
                b.iter().any(|r| meet(a, r))
            }
            (Segs::Runs(a), Segs::Runs(b)) => a.iter().any(|x| b.iter().any(|y| meet(x, y))),
        }
    }
}

/// A segment as a half-open range of points.
trait Bounds {
    fn bounds(&self) -> (u32, u32);
}

impl Bounds for (u32, u32) {
    fn bounds(&self) -> (u32, u32) {
        *self
    }
}

impl Bounds for Segment {
    fn bounds(&self) -> (u32, u32) {
        (self.start, self.end)
    }
}

/// Does a segment of `a` intersect one of `b` (each sorted and disjoint)? A walk over
/// both that skips, on whichever side is behind, every segment ending before the other
/// side's current one begins (by a galloping search): the cost grows with the number of
/// times the two interleave, not with their lengths.
fn meet<A: Bounds, B: Bounds>(a: &[A], b: &[B]) -> bool {
    let (Some(a0), Some(a1), Some(b0), Some(b1)) = (a.first(), a.last(), b.first(), b.last())
    else {
        return false;
    };
    if a1.bounds().1 <= b0.bounds().0 || b1.bounds().1 <= a0.bounds().0 {
        return false;
    }
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let ((xs, xe), (ys, ye)) = (x.bounds(), y.bounds());
        if xe <= ys {
            i = gallop(a, i, |g| g.bounds().1 <= ys);
        } else if ye <= xs {
            j = gallop(b, j, |g| g.bounds().1 <= xs);
        } else {
            return true;
        }
    }
    false
}

/// Restores the runs' invariant after runs were added: while two runs are within a
/// factor of two in length, they are merged. Each merge makes the run of every segment
/// in it at least half as long again, so a segment is merged O(log s) times, and the
/// runs left are at most log₂ s + 1.
fn settle(runs: &mut Vec<Vec<(u32, u32)>>, spare: &mut Vec<Vec<(u32, u32)>>) {
    loop {
        runs.sort_unstable_by_key(|r| std::cmp::Reverse(r.len()));
        // An empty run (a value without segments) would never merge away.
        while let Some(empty) = runs.pop_if(|r| r.is_empty()) {
            spare.push(empty);
        }
        let Some(i) = (1..runs.len()).find(|&i| runs[i - 1].len() < 2 * runs[i].len()) else {
            return;
        };
        let b = runs.swap_remove(i);
        let a = runs.swap_remove(i - 1);
        let mut merged = spare.pop().unwrap_or_default();
        merged.reserve(a.len() + b.len());
        merge_runs(&a, &b, &mut merged);
        for mut r in [a, b] {
            r.clear();
            spare.push(r);
        }
        runs.push(merged);
    }
}

/// Appends the segments of the sorted runs `a` and `b` to `out`, sorted by start (on a
/// tie, `b`'s first). Runs mostly hold values of different stretches of the function,
/// so long stretches of one run come in a row: each is found by a galloping search and
/// copied whole.
fn merge_runs(mut a: &[(u32, u32)], mut b: &[(u32, u32)], out: &mut Vec<(u32, u32)>) {
    while let (Some(&x), Some(&y)) = (a.first(), b.first()) {
        if x.0 < y.0 {
            let n = gallop(a, 0, |g| g.0 < y.0);
            out.extend_from_slice(&a[..n]);
            a = &a[n..];
        } else {
            let n = gallop(b, 0, |g| g.0 <= x.0);
            out.extend_from_slice(&b[..n]);
            b = &b[n..];
        }
    }
    out.extend_from_slice(a);
    out.extend_from_slice(b);
}

/// A group of spilled values sharing one slot, by the hull of its lifetimes: groups are
/// coloured in order of (start, end, root).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GroupHull {
    start: u32,
    end: u32,
    root: u32,
}

/// The slot layout of one function: reads the analyses and the copy partners, writes
/// `slots` (see the module comment).
pub(crate) struct SlotLayout<'a, F: Function + ?Sized> {
    func: &'a F,
    an: &'a Analyses,
    partners: &'a Partners,
    /// `Options::partner_slots` and `Options::slot_sharing`.
    partner_slots: bool,
    sharing: bool,
    slots: &'a mut SpillSlots,
    /// Values laid out, and of those the ones that took a copy partner's slot.
    laid_out: usize,
    partner_values: usize,
}

impl<'a, F: Function + ?Sized> SlotLayout<'a, F> {
    /// Lays out every value marked `NEEDS_SLOT` in `slots` (see the module comment) and
    /// records what it did in `stats`.
    pub(crate) fn run(
        func: &'a F,
        an: &'a Analyses,
        partners: &'a Partners,
        options: &Options,
        slots: &'a mut SpillSlots,
        stats: &mut Stats,
    ) {
        // Nothing spilled (593 of the 1,449 Wasm functions): no slot to lay out, and none
        // of the per-vreg tables below to size.
        if slots.needed.is_empty() {
            stats.shared_slot_values = 0;
            stats.partner_slot_values = 0;
            return;
        }
        let mut layout = SlotLayout {
            func,
            an,
            partners,
            partner_slots: options.partner_slots,
            sharing: options.slot_sharing,
            slots,
            laid_out: 0,
            partner_values: 0,
        };
        layout.lay_out();
        stats.shared_slot_values = layout.laid_out;
        stats.partner_slot_values = layout.partner_values;
    }

    fn lay_out(&mut self) {
        let mut sc = std::mem::take(&mut self.slots.colouring);
        let mut order = std::mem::take(&mut sc.order);
        self.slots.needed.sort_unstable();
        self.collect_spilled(&mut sc);
        if self.partner_slots {
            self.coalesce_partners(&mut sc);
        }
        self.colour(&mut sc, &mut order);
        for i in 0..sc.vreg.len() as u32 {
            let r = find(&mut sc.parent, i);
            self.slots.vreg_slot[sc.vreg[i as usize] as usize] = sc.base[r as usize];
        }
        self.laid_out = sc.vreg.len();
        sc.order = order;
        self.slots.colouring = sc;
    }

    fn class_of(&self, v: u32) -> RegClass {
        self.an.live.class[v as usize].unwrap_or(RegClass::Int)
    }

    fn collect_spilled(&self, sc: &mut ColouringScratch) {
        let span = self.slots.span.clone();
        reset_span(&mut sc.item_of, span.end, span, NONE);
        sc.vreg.clear();
        sc.parent.clear();
        sc.hull.clear();
        sc.base.clear();
        for mut r in sc.segs.drain(..).flatten() {
            r.clear();
            sc.spare_runs.push(r);
        }
        // `lay_out` sorted them: items are numbered in vreg order.
        for &v in &self.slots.needed {
            let v = v as usize;
            // A value homed in a fixed stack slot takes no slot of its own.
            if self.an.live.class[v].is_none() || self.slots.vreg_slot[v] != NEEDS_SLOT {
                continue;
            }
            let segs = self.segments(v as u32);
            let hull = match (segs.first(), segs.last()) {
                (Some(a), Some(b)) => (a.start, b.end),
                _ => (0, u32::MAX),
            };
            let i = sc.vreg.len() as u32;
            sc.item_of[v] = i;
            sc.vreg.push(v as u32);
            sc.parent.push(i);
            sc.hull.push(hull);
            sc.base.push(usize::MAX);
        }
        sc.segs.resize_with(sc.vreg.len(), Vec::new);
    }

    fn segments(&self, v: u32) -> &[Segment] {
        self.an
            .intervals
            .segments_of(VReg::new(v as usize, self.class_of(v)))
    }

    fn segs_of<'s>(&'s self, sc: &'s ColouringScratch, root: u32) -> Segs<'s> {
        let runs = &sc.segs[root as usize];
        if runs.is_empty() {
            Segs::Slice(self.segments(sc.vreg[root as usize]))
        } else {
            Segs::Runs(runs)
        }
    }

    /// Are the groups of roots `a` and `b` live at a common point? A value without
    /// segments (never expected) conflicts with everything.
    fn groups_overlap(&self, sc: &ColouringScratch, a: u32, b: u32) -> bool {
        let (ha, hb) = (sc.hull[a as usize], sc.hull[b as usize]);
        if ha.1 <= hb.0 || hb.1 <= ha.0 {
            return false;
        }
        let (sa, sb) = (self.segs_of(sc, a), self.segs_of(sc, b));
        if sa.is_empty() || sb.is_empty() {
            return true;
        }
        sa.meets(&sb)
    }

    /// Unites the groups of roots `a` and `b` (not overlapping); returns the new root,
    /// the larger group, which takes the smaller one's runs (a group of one brings its
    /// segments as a run).
    fn unite(&self, sc: &mut ColouringScratch, a: u32, b: u32) -> u32 {
        let (la, lb) = (self.segs_of(sc, a).len(), self.segs_of(sc, b).len());
        let (big, small) = if la >= lb { (a, b) } else { (b, a) };
        let mut runs = std::mem::take(&mut sc.segs[big as usize]);
        let moved = std::mem::take(&mut sc.segs[small as usize]);
        for (root, alone) in [(big, runs.is_empty()), (small, moved.is_empty())] {
            if alone {
                let mut run = sc.spare_runs.pop().unwrap_or_default();
                run.extend(
                    self.segments(sc.vreg[root as usize])
                        .iter()
                        .map(|g| (g.start, g.end)),
                );
                runs.push(run);
            }
        }
        runs.extend(moved);
        settle(&mut runs, &mut sc.spare_runs);
        sc.segs[big as usize] = runs;
        sc.parent[small as usize] = big;
        let (hs, hb) = (sc.hull[small as usize], sc.hull[big as usize]);
        sc.hull[big as usize] = (hs.0.min(hb.0), hs.1.max(hb.1));
        if sc.base[big as usize] == usize::MAX {
            sc.base[big as usize] = sc.base[small as usize];
        }
        big
    }

    /// Merges spilled copy partners into groups, heaviest copy first, where their
    /// segments never overlap.
    fn coalesce_partners(&mut self, sc: &mut ColouringScratch) {
        sc.pairs.clear();
        for i in 0..sc.vreg.len() as u32 {
            let v = sc.vreg[i as usize];
            let class = self.class_of(v);
            for &(w, freq) in self.partners.of(VReg::new(v as usize, class)) {
                let j = sc.item_of.get(w.vreg()).copied().unwrap_or(NONE);
                // Each pair once (from its lower item); one class per slot.
                if j == NONE || j <= i || self.class_of(w.vreg() as u32) != class {
                    continue;
                }
                sc.pairs.push((freq, i, j));
            }
        }
        sc.pairs
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        for k in 0..sc.pairs.len() {
            let (freq, i, j) = sc.pairs[k];
            let (a, b) = (find(&mut sc.parent, i), find(&mut sc.parent, j));
            if a == b {
                continue;
            }
            let (v, w) = (sc.vreg[i as usize], sc.vreg[j as usize]);
            if self.groups_overlap(sc, a, b) {
                debug!("slots: v{v} and partner v{w} (freq {freq}) overlap, no shared slot");
                continue;
            }
            debug!("slots: v{v} and partner v{w} (freq {freq}) share a slot");
            self.unite(sc, a, b);
            self.partner_values += 1;
        }
    }

    /// Gives each group a slot: one freed by groups that died, a hole in a busy one, or
    /// a new one (only the last without `Options::slot_sharing`).
    fn colour(&mut self, sc: &mut ColouringScratch, order: &mut Vec<GroupHull>) {
        order.clear();
        for i in 0..sc.vreg.len() as u32 {
            if find(&mut sc.parent, i) == i {
                let (start, end) = sc.hull[i as usize];
                order.push(GroupHull {
                    start,
                    end,
                    root: i,
                });
            }
        }
        order.sort_unstable();
        // Per class: (hull end, root) of busy slots — an entry is current while its root
        // is still a root with that hull end — and (first unit, root) of free slots.
        let mut active: [BinaryHeap<Reverse<(u32, u32)>>; 3] = Default::default();
        let mut free: [BinaryHeap<Reverse<(usize, u32)>>; 3] = Default::default();
        for &GroupHull { start, root: g, .. } in order.iter() {
            let class = self.class_of(sc.vreg[g as usize]);
            let c = class as usize;
            while let Some(&Reverse((e, s))) = active[c].peek() {
                if e > start {
                    break;
                }
                active[c].pop();
                if sc.parent[s as usize] == s && sc.hull[s as usize].1 == e {
                    free[c].push(Reverse((sc.base[s as usize], s)));
                }
            }
            let mut target = None;
            if self.sharing {
                target = free[c].pop().map(|Reverse((_, s))| s);
                if target.is_none() {
                    target = active[c]
                        .iter()
                        .take(PROBE_SCAN)
                        .filter(|&&Reverse((e, s))| {
                            sc.parent[s as usize] == s && sc.hull[s as usize].1 == e
                        })
                        .take(PROBES)
                        .map(|&Reverse((_, s))| s)
                        .find(|&s| !self.groups_overlap(sc, s, g));
                    if let Some(s) = target {
                        debug!(
                            "slots: v{} fills a hole of slot {}",
                            sc.vreg[g as usize], sc.base[s as usize]
                        );
                    }
                }
            }
            match target {
                Some(s) => {
                    let end_before = sc.hull[s as usize].1;
                    let was_free = end_before <= start;
                    let r = self.unite(sc, s, g);
                    let end = sc.hull[r as usize].1;
                    // Keep exactly one current entry per busy slot.
                    if was_free || r != s || end != end_before {
                        active[c].push(Reverse((end, r)));
                    }
                }
                None => {
                    sc.base[g as usize] = self.slots.alloc(self.func, class);
                    active[c].push(Reverse((sc.hull[g as usize].1, g)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `merge_runs` gives what sorting the two runs together gives, for runs that
    /// interleave segment by segment and for runs that alternate in long stretches.
    #[test]
    fn merged_runs_are_sorted_and_whole() {
        let mut next = crate::tests::xorshift(0x2545_f491_4f6c_dd1du64);
        for stretch in [1u64, 3, 40] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for i in 0..500u32 {
                let seg = (4 * i, 4 * i + 1 + (i % 3));
                if (u64::from(i) / stretch) % 2 == 0 || next(4) == 0 {
                    a.push(seg);
                } else {
                    b.push(seg);
                }
            }
            let mut merged = Vec::new();
            merge_runs(&a, &b, &mut merged);
            let mut want = [a, b].concat();
            want.sort_unstable();
            assert_eq!(merged, want);
        }
    }

    /// `meet` answers as a test of every pair, on random sorted lists of disjoint
    /// segments, sparse and dense, short and long.
    #[test]
    fn meet_finds_an_intersection_where_one_exists() {
        let mut next = crate::tests::xorshift(0x0123_4567_89ab_cdefu64);
        let mut list = |len: u64, gap: u64| {
            let mut at = 0u32;
            (0..next(len))
                .map(|_| {
                    at += next(gap) as u32;
                    let seg = (at, at + 1 + next(gap) as u32);
                    at = seg.1;
                    seg
                })
                .collect::<Vec<(u32, u32)>>()
        };
        for round in 0..3000u64 {
            let (len, gap) = [(3, 4), (40, 8), (200, 30), (5, 200)][(round % 4) as usize];
            let (a, b) = (list(len, gap), list(len * 2, gap / 2 + 1));
            let want = a.iter().any(|x| b.iter().any(|y| x.0 < y.1 && y.0 < x.1));
            assert_eq!(meet(&a, &b), want, "{a:?} {b:?}");
            assert_eq!(meet(&b, &a), want, "{b:?} {a:?}");
        }
    }

    /// Runs added one at a time (as unions bring them; some empty) settle into runs that
    /// at least halve in length, hold every segment once and stay sorted, and `meets`
    /// over them answers like a search of the whole set.
    #[test]
    fn settled_runs_halve_and_keep_every_segment() {
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15u64);
        // Disjoint segments, handed out in a shuffled order.
        let mut universe: Vec<(u32, u32)> = (0..3000u32)
            .map(|i| (4 * i, 4 * i + 1 + (i * 7 % 3)))
            .collect();
        for i in (1..universe.len()).rev() {
            universe.swap(i, next(i as u64 + 1) as usize);
        }
        let (mut runs, mut spare, mut all) = (Vec::new(), Vec::new(), Vec::new());
        let mut taken = 0;
        while taken < universe.len() {
            let len = (next(24) as usize).min(universe.len() - taken);
            let mut batch = universe[taken..taken + len].to_vec();
            taken += len;
            batch.sort_unstable();
            all.extend_from_slice(&batch);
            runs.push(batch);
            settle(&mut runs, &mut spare);
            for w in runs.windows(2) {
                assert!(
                    w[0].len() >= 2 * w[1].len(),
                    "runs of {} and {}",
                    w[0].len(),
                    w[1].len()
                );
            }
            assert!(
                runs.iter()
                    .all(|r| !r.is_empty() && r.windows(2).all(|w| w[0].1 <= w[1].0))
            );
            let mut held: Vec<(u32, u32)> = runs.iter().flatten().copied().collect();
            held.sort_unstable();
            let mut want = all.clone();
            want.sort_unstable();
            assert_eq!(held, want);
            let s = next(4 * 3000 + 8) as u32;
            let e = s + 1 + next(6) as u32;
            assert_eq!(
                Segs::Runs(&runs).meets(&Segs::Runs(&[vec![(s, e)]])),
                all.iter().any(|g| g.0 < e && s < g.1)
            );
        }
        assert!(runs.len() as f64 <= (all.len() as f64 + 1.0).log2());
    }
}
