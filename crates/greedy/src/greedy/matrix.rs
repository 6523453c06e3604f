//! `InterferenceMatrix`: per physical register, the union of the segments of the
//! intervals assigned to it (LLVM's `LiveRegMatrix` over `LiveIntervalUnion`s). Segments
//! in one union never overlap, so a sorted structure keyed by segment start answers
//! "which assigned intervals overlap this one on register P" in logarithmic time per
//! segment; beside it, the points the union covers as bits, which answer the far more
//! frequent "is P free over this segment" with a few word loads. Fixed reservations
//! (fixed operands, clobbers) live beside the matrix, read-only.

use super::interval::IntervalId;
// Fixed reservations are the analysis's; the register probes here and in `split/`
// check them alongside the matrix.
use crate::analysis::intervals::Segment;
pub(crate) use crate::analysis::intervals::{fixed_conflict, fixed_conflict_from};
use crate::point_bits::{PointBits, WordSpan};
use regalloc2::{PReg, PRegSet};

#[derive(Default)]
pub(crate) struct InterferenceMatrix {
    /// Per register index: the assigned segments, ordered by start.
    unions: Vec<Union>,
    /// Registers whose union has held something since the last reset: only those need
    /// clearing, most functions touching a few of the 256 register indices. The bits of
    /// an untouched register are stale (sized for an earlier function) and never read:
    /// its union is empty, which answers every probe first.
    touched: PRegSet,
    /// One past the last program point of the current function (`point_bound`).
    points: u32,
    /// Unassignments so far, and per register index the count when it last lost an
    /// occupant: a register not released since some moment is free over no point where
    /// it was not free then.
    releases: u32,
    last_release: Vec<u32>,
}

/// Longest segment (in points) whose probe reads the occupancy bits; a longer one asks
/// the union, so that one probe never scans more than this many bits however long the
/// segment (a value live across a huge loop nest).
const MAX_BIT_PROBE: u32 = 64 * 32;

/// One assigned segment in a register's union.
#[derive(Clone, Copy)]
struct Entry {
    start: u32,
    end: u32,
    id: IntervalId,
}

/// Entries per chunk of a union before it is halved.
const CHUNK_MAX: usize = 64;

/// A register's assigned segments (disjoint, so ordered by start and by end alike) as a
/// sorted run of small sorted chunks, with the chunks' first starts in a separate flat
/// array: a probe is a binary search over that array (a few cache lines for thousands of
/// entries) and one inside a chunk, and an insertion or removal moves at most a chunk.
/// The standard `BTreeMap` it replaces walked down two edges of a deeper tree per range
/// probe, which made register probes the largest cost after hints on huge functions.
#[derive(Default)]
struct Union {
    heads: Vec<u32>,
    chunks: Vec<Vec<Entry>>,
    /// Emptied chunks kept for reuse, so a union refilled for the next function (or
    /// after removals) does not allocate again.
    spare: Vec<Vec<Entry>>,
    /// Exactly the points the entries cover.
    bits: PointBits,
}

impl Union {
    fn clear(&mut self) {
        self.heads.clear();
        for mut c in self.chunks.drain(..) {
            c.clear();
            self.spare.push(c);
        }
    }

    fn new_chunk(&mut self) -> Vec<Entry> {
        self.spare.pop().unwrap_or_default()
    }

    fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Position (chunk, index) of the last entry starting before `p`, if any.
    fn last_before(&self, p: u32) -> Option<(usize, usize)> {
        let c = self.heads.partition_point(|&h| h < p).checked_sub(1)?;
        let chunk = &self.chunks[c];
        // `heads[c] < p`, so the chunk's first entry qualifies and `i >= 1`.
        let i = chunk.partition_point(|e| e.start < p);
        Some((c, i - 1))
    }

    /// The first entry at or after `pos` that ends after `p` (entries are disjoint, so
    /// ends are ordered like starts), for probes made in increasing order: a few steps
    /// forward from where the last probe stopped usually find it (a value's segments
    /// and a register's occupants interleave), else two binary searches from scratch.
    fn seek(&self, pos: &mut (usize, usize), p: u32) -> Option<Entry> {
        const STEPS: usize = 4;
        // A fresh cursor has nothing to step from.
        let steps = if *pos == FRESH { 0 } else { STEPS };
        for _ in 0..steps {
            let (c, i) = *pos;
            let e = *self.chunks.get(c)?.get(i)?;
            if e.end > p {
                return Some(e);
            }
            *pos = if i + 1 < self.chunks[c].len() {
                (c, i + 1)
            } else {
                (c + 1, 0)
            };
        }
        // The last entry starting at or before `p`, or the one after it.
        *pos = match self.last_before(p + 1) {
            None if self.chunks.is_empty() => return None,
            None => (0, 0),
            Some((c, i)) if self.chunks[c][i].end > p => (c, i),
            Some((c, i)) if i + 1 < self.chunks[c].len() => (c, i + 1),
            Some((c, _)) => (c + 1, 0),
        };
        self.chunks.get(pos.0).map(|chunk| chunk[pos.1])
    }

    /// No entry overlaps `seg`. A short segment reads the bits (and leaves `pos` where
    /// it was: a cursor behind the probed point stays valid, `seek` only moves forward);
    /// a long one seeks. Only for a union that is not empty (its bits are current).
    /// Always inlined: it is a few instructions against a call per probed segment, and
    /// with three callers the inliner would otherwise keep it apart.
    #[inline(always)]
    fn is_free_over(&self, pos: &mut (usize, usize), seg: Segment) -> bool {
        let free = if seg.len() <= MAX_BIT_PROBE {
            !self.bits.any(seg.start, seg.end)
        } else {
            self.seek(pos, seg.start).is_none_or(|e| e.start >= seg.end)
        };
        debug_assert_eq!(
            free,
            self.seek(&mut { FRESH }, seg.start)
                .is_none_or(|e| e.start >= seg.end),
            "occupancy bits disagree with the union over {seg:?}"
        );
        free
    }

    fn at(&self, (c, i): (usize, usize)) -> Entry {
        self.chunks[c][i]
    }

    /// The position after `pos`, if there is an entry there.
    fn step(&self, (c, i): (usize, usize)) -> Option<(usize, usize)> {
        if i + 1 < self.chunks[c].len() {
            Some((c, i + 1))
        } else {
            (c + 1 < self.chunks.len()).then_some((c + 1, 0))
        }
    }

    /// The position before `pos`, which must not be the first.
    fn step_back(&self, (c, i): (usize, usize)) -> (usize, usize) {
        if i > 0 {
            (c, i - 1)
        } else {
            (c - 1, self.chunks[c - 1].len() - 1)
        }
    }

    /// Pushes (deduplicated, latest first within each of `segments` merged) the ids of
    /// the entries overlapping `segments`; stops once `out` holds more than `limit`, or
    /// as soon as `accept` refuses an id just pushed (then returns false).
    fn overlapping(
        &self,
        segments: &[Segment],
        out: &mut Vec<IntervalId>,
        limit: usize,
        mut accept: impl FnMut(IntervalId) -> bool,
    ) -> bool {
        let mut cursor = FRESH;
        for s in merged(segments) {
            // The occupants overlapping `s` are consecutive: from the first ending after
            // its start, while they start before its end. Pushed latest first.
            let Some(first) = self.seek(&mut cursor, s.start) else {
                return true;
            };
            if first.start >= s.end {
                continue;
            }
            let mut last = cursor;
            while let Some(next) = self.step(last).filter(|&q| self.at(q).start < s.end) {
                last = next;
            }
            let mut pos = last;
            loop {
                let id = self.at(pos).id;
                if !out.contains(&id) {
                    out.push(id);
                    if out.len() > limit {
                        return true;
                    }
                    if !accept(id) {
                        return false;
                    }
                }
                if pos == cursor {
                    break;
                }
                pos = self.step_back(pos);
            }
        }
        true
    }

    /// `overlapping` with the entries of each segment taken earliest first, as they lie
    /// in the union: a refusal among the first occupants of a segment is found without
    /// walking to its last one first.
    fn overlapping_in_order(
        &self,
        segments: &[Segment],
        out: &mut Vec<IntervalId>,
        limit: usize,
        mut accept: impl FnMut(IntervalId) -> bool,
    ) -> bool {
        let mut cursor = FRESH;
        for s in merged(segments) {
            let Some(mut e) = self.seek(&mut cursor, s.start) else {
                return true;
            };
            let mut pos = cursor;
            while e.start < s.end {
                if !out.contains(&e.id) {
                    out.push(e.id);
                    if out.len() > limit {
                        return true;
                    }
                    if !accept(e.id) {
                        return false;
                    }
                }
                // Past the union's last entry no later segment overlaps anything either.
                let Some(next) = self.step(pos) else {
                    return true;
                };
                pos = next;
                e = self.at(pos);
            }
        }
        true
    }

    /// Whether an entry overlapping `segments` has an id `pick` accepts.
    fn any_overlapping(&self, segments: &[Segment], pick: impl Fn(IntervalId) -> bool) -> bool {
        let mut cursor = FRESH;
        for s in merged(segments) {
            // No occupant at all there, whatever `pick` says: the bits answer without a
            // search (the cursor stays behind, which `seek` allows).
            if s.len() <= MAX_BIT_PROBE && !self.bits.any(s.start, s.end) {
                continue;
            }
            let Some(first) = self.seek(&mut cursor, s.start) else {
                return false;
            };
            let mut pos = cursor;
            let mut e = first;
            while e.start < s.end {
                if pick(e.id) {
                    return true;
                }
                let Some(next) = self.step(pos) else {
                    return false;
                };
                pos = next;
                e = self.at(pos);
            }
        }
        false
    }

    fn insert(&mut self, e: Entry) {
        self.bits.insert(e.start, e.end);
        if self.chunks.is_empty() {
            let mut chunk = self.new_chunk();
            chunk.push(e);
            self.heads.push(e.start);
            self.chunks.push(chunk);
            return;
        }
        // The chunk whose head is the last at or before `e.start` (or the first chunk).
        let c = self
            .heads
            .partition_point(|&h| h <= e.start)
            .saturating_sub(1);
        let chunk = &mut self.chunks[c];
        let i = chunk.partition_point(|x| x.start < e.start);
        chunk.insert(i, e);
        self.heads[c] = chunk[0].start;
        if chunk.len() > CHUNK_MAX {
            let mut tail = self.new_chunk();
            tail.extend(self.chunks[c].drain(CHUNK_MAX / 2..));
            self.heads.insert(c + 1, tail[0].start);
            self.chunks.insert(c + 1, tail);
        }
    }

    fn remove(&mut self, start: u32) {
        let Some(c) = self.heads.partition_point(|&h| h <= start).checked_sub(1) else {
            return;
        };
        let chunk = &mut self.chunks[c];
        if let Ok(i) = chunk.binary_search_by_key(&start, |x| x.start) {
            let e = chunk.remove(i);
            self.bits.remove(e.start, e.end);
            if chunk.is_empty() {
                self.heads.remove(c);
                let emptied = self.chunks.remove(c);
                self.spare.push(emptied);
            } else {
                self.heads[c] = chunk[0].start;
            }
        }
    }
}

impl InterferenceMatrix {
    /// Empties every union, for a function of `points` program points.
    pub fn reset(&mut self, points: u32) {
        for p in self.touched {
            self.unions[p.index()].clear();
        }
        self.touched = PRegSet::empty();
        self.points = points;
        // Releases count on from one function to the next, so an earlier function's
        // entries are never later than an epoch taken in this one and need no clearing;
        // the table is cleared only when the count nears overflow.
        if self.releases > u32::MAX / 2 {
            self.releases = 0;
            self.last_release.fill(0);
        }
        self.last_release.resize(PReg::NUM_INDEX, 0);
        self.unions.resize_with(PReg::NUM_INDEX, Union::default);
    }

    pub fn assign(&mut self, preg: PReg, id: IntervalId, runs: &[Segment]) {
        let u = &mut self.unions[preg.index()];
        if !self.touched.contains(preg) {
            self.touched.add(preg);
            u.bits.reset(self.points);
        }
        for &s in runs {
            debug_assert!(
                u.seek(&mut { FRESH }, s.start)
                    .is_none_or(|e| e.start >= s.end),
                "{id} overlaps on {preg}"
            );
            u.insert(Entry {
                start: s.start,
                end: s.end,
                id,
            });
        }
    }

    pub fn unassign(&mut self, preg: PReg, runs: &[Segment]) {
        self.releases += 1;
        self.last_release[preg.index()] = self.releases;
        let u = &mut self.unions[preg.index()];
        for &s in runs {
            u.remove(s.start);
        }
    }

    /// Unassignments so far (see `releases`): an epoch for `released_since`.
    pub fn releases(&self) -> u32 {
        self.releases
    }

    /// Has `preg` lost an occupant since `releases` was `epoch`?
    pub fn released_since(&self, preg: PReg, epoch: u32) -> bool {
        self.last_release[preg.index()] > epoch
    }

    /// Pushes (deduplicated, in order of discovery) every interval assigned to `preg`
    /// that overlaps `segments`. Stops early once `out` holds more than `limit`.
    pub fn interference(
        &self,
        preg: PReg,
        segments: &[Segment],
        out: &mut Vec<IntervalId>,
        limit: usize,
    ) {
        let u = &self.unions[preg.index()];
        if !u.is_empty() {
            u.overlapping(segments, out, limit, |_| true);
        }
    }

    /// `interference`, handing each interval to `accept` as it is found and stopping
    /// (returning false) at the first one refused: a caller that would reject the
    /// register for any one of its occupants need not collect the rest. The intervals of
    /// each segment come earliest first, not latest first: a caller whose answer does
    /// not depend on the order (eviction's costs are a maximum and a count) finds a
    /// refusal sooner.
    pub fn interference_while(
        &self,
        preg: PReg,
        segments: &[Segment],
        out: &mut Vec<IntervalId>,
        limit: usize,
        accept: impl FnMut(IntervalId) -> bool,
    ) -> bool {
        let u = &self.unions[preg.index()];
        u.is_empty() || u.overlapping_in_order(segments, out, limit, accept)
    }

    /// Does an interval assigned to `preg` for which `pick` holds overlap `segments`
    /// (sorted, disjoint)? Stops at the first.
    pub fn overlaps_any(
        &self,
        preg: PReg,
        segments: &[Segment],
        pick: impl Fn(IntervalId) -> bool,
    ) -> bool {
        let u = &self.unions[preg.index()];
        !u.is_empty() && u.any_overlapping(segments, pick)
    }

    /// Is `preg` free over all of `segments` (sorted, disjoint; an interval's runs, so
    /// not merged again: whether touching segments are joined does not change the answer)?
    pub fn is_free(&self, preg: PReg, segments: &[Segment]) -> bool {
        let u = &self.unions[preg.index()];
        if u.is_empty() {
            return true;
        }
        let mut cursor = FRESH;
        segments.iter().all(|&s| u.is_free_over(&mut cursor, s))
    }

    /// The first of `candidates` free over all of `segments` (as for `is_free`). An
    /// interval of one short run, the common case, has its word span computed once for
    /// all candidates, and each candidate costs a union lookup and a word test.
    pub fn first_free(
        &self,
        mut candidates: impl Iterator<Item = PReg>,
        segments: &[Segment],
    ) -> Option<PReg> {
        let [run] = segments else {
            return candidates.find(|&p| self.is_free(p, segments));
        };
        if run.len() > MAX_BIT_PROBE {
            return candidates.find(|&p| self.is_free(p, segments));
        }
        let span = WordSpan::new(run.start, run.end);
        candidates.find(|&p| {
            let u = &self.unions[p.index()];
            // An empty union's bits may be stale.
            let free = u.is_empty() || span.is_none_or(|span| !u.bits.any_in(span));
            debug_assert_eq!(free, self.is_free(p, segments));
            free
        })
    }

    /// A prober of `preg`'s freedom over disjoint segments taken in increasing order: a
    /// walk over a value's segments costs steps from one probe to the next, not
    /// searches, and the register's union is looked up once, not per segment. The
    /// matrix cannot change while it lives.
    pub fn probe(&self, preg: PReg) -> RegProbe<'_> {
        let u = &self.unions[preg.index()];
        RegProbe {
            union: (!u.is_empty()).then_some(u),
            pos: FRESH,
        }
    }

    /// Calls `f(start, end, id)` for each segment assigned to `preg` that overlaps `seg`,
    /// in increasing order (they are disjoint). The walk costs one search and a step per
    /// segment found.
    pub fn occupants(&self, preg: PReg, seg: Segment, mut f: impl FnMut(u32, u32, IntervalId)) {
        let u = &self.unions[preg.index()];
        if u.is_empty() {
            return;
        }
        let mut pos = FRESH;
        let Some(mut e) = u.seek(&mut pos, seg.start) else {
            return;
        };
        while e.start < seg.end {
            f(e.start, e.end, e.id);
            let Some(next) = u.step(pos) else {
                return;
            };
            pos = next;
            e = u.at(pos);
        }
    }

    /// The intervals assigned to `preg` that overlap `runs` (an interval's runs: sorted,
    /// disjoint), each pushed to `out` unless already there, in the order a forward walk
    /// meets them; stops once `out` holds more than `limit`. For callers to which the
    /// order does not matter: unlike `interference`, which lists each segment's
    /// occupants latest first, it walks them once, and stops as soon as the limit is
    /// passed.
    pub fn interference_unordered(
        &self,
        preg: PReg,
        runs: &[Segment],
        out: &mut Vec<IntervalId>,
        limit: usize,
    ) {
        let u = &self.unions[preg.index()];
        if u.is_empty() {
            return;
        }
        let mut cursor = FRESH;
        for run in runs {
            let Some(mut e) = u.seek(&mut cursor, run.start) else {
                return;
            };
            let mut pos = cursor;
            while e.start < run.end {
                if !out.contains(&e.id) {
                    out.push(e.id);
                    if out.len() > limit {
                        return;
                    }
                }
                let Some(next) = u.step(pos) else {
                    return;
                };
                pos = next;
                e = u.at(pos);
            }
        }
    }
}

/// One register's union and a position in it, for `InterferenceMatrix::probe`. An empty
/// union is `None` (its bits may be stale).
pub(crate) struct RegProbe<'m> {
    union: Option<&'m Union>,
    pos: (usize, usize),
}

impl RegProbe<'_> {
    /// Is the register free over all of `seg`, which follows the segments probed before?
    /// Always inlined: a short segment is a few instructions, against a call per probe
    /// the split loops' inliner kept.
    #[inline(always)]
    pub fn is_free(&mut self, seg: Segment) -> bool {
        match self.union {
            None => true,
            Some(u) => u.is_free_over(&mut self.pos, seg),
        }
    }
}

/// The position of a cursor that has not probed yet.
const FRESH: (usize, usize) = (usize::MAX, 0);

/// `segments` with touching neighbours joined. A value live through consecutive blocks
/// has one segment per block; joined, a register probe walks one range per stretch of
/// blocks instead of one per block.
pub(crate) fn merged(segments: &[Segment]) -> impl Iterator<Item = Segment> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let mut s = *segments.get(i)?;
        i += 1;
        while let Some(next) = segments.get(i).filter(|n| n.start == s.end) {
            s.end = next.end;
            i += 1;
        }
        Some(s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_entity::EntityRef;

    /// The chunked union against a plain list, over random inserts and removals of
    /// disjoint segments (enough of them to split and drop chunks).
    #[test]
    fn union_matches_a_plain_list() {
        let mut u = Union::default();
        u.bits.reset(8_100);
        let mut model: Vec<(u32, u32, usize)> = Vec::new();
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15u64);
        for step in 0..20_000 {
            let start = next(4000) as u32 * 2;
            let end = start + 1 + next(6) as u32;
            let overlaps = model.iter().any(|&(s, e, _)| s < end && start < e);
            if next(3) > 0 && !overlaps {
                u.insert(Entry {
                    start,
                    end,
                    id: IntervalId::new(step),
                });
                model.push((start, end, step));
            } else if let Some(k) = (!model.is_empty()).then(|| next(model.len() as u64) as usize) {
                u.remove(model[k].0);
                model.swap_remove(k);
            }
            let p = next(8010) as u32;
            let expect = model
                .iter()
                .filter(|&&(s, _, _)| s < p)
                .max_by_key(|&&(s, _, _)| s)
                .map(|&(s, _, id)| (s, id));
            let got = u
                .last_before(p)
                .map(|pos| u.at(pos))
                .map(|e| (e.start, e.id.index()));
            assert_eq!(got, expect, "step {step}, probe {p}");
            let first_after = |p: u32| {
                model
                    .iter()
                    .filter(|&&(_, e, _)| e > p)
                    .min_by_key(|&&(s, _, _)| s)
                    .map(|&(s, _, _)| s)
            };
            // From the start, and from where a probe of a smaller point stopped.
            let q = next(u64::from(p) + 1) as u32;
            let mut pos = FRESH;
            assert_eq!(
                u.seek(&mut pos, q).map(|e| e.start),
                first_after(q),
                "seek {q}"
            );
            assert_eq!(
                u.seek(&mut pos, p).map(|e| e.start),
                first_after(p),
                "seek {p}"
            );
            // Overlap queries against the plain list: per merged segment, the entries
            // overlapping it, latest first, each once.
            let segs: Vec<Segment> = {
                let mut at = next(400) as u32;
                (0..next(5))
                    .map(|_| {
                        let s = Segment {
                            start: at,
                            end: at + 1 + next(200) as u32,
                        };
                        at = s.end + next(3) as u32;
                        s
                    })
                    .collect()
            };
            let mut want: Vec<IntervalId> = Vec::new();
            for s in merged(&segs) {
                let mut hits: Vec<(u32, usize)> = model
                    .iter()
                    .filter(|&&(a, b, _)| a < s.end && b > s.start)
                    .map(|&(a, _, id)| (a, id))
                    .collect();
                hits.sort_unstable_by(|x, y| y.cmp(x));
                for (_, id) in hits {
                    let id = IntervalId::new(id);
                    if !want.contains(&id) {
                        want.push(id);
                    }
                }
            }
            let mut got_ids = Vec::new();
            u.overlapping(&segs, &mut got_ids, usize::MAX, |_| true);
            assert_eq!(got_ids, want, "overlapping {segs:?}");
            // The same entries earliest first per merged segment for the in-order walk,
            // which stops right after a refused one.
            let mut want_in_order: Vec<IntervalId> = Vec::new();
            for s in merged(&segs) {
                let mut hits: Vec<(u32, usize)> = model
                    .iter()
                    .filter(|&&(a, b, _)| a < s.end && b > s.start)
                    .map(|&(a, _, id)| (a, id))
                    .collect();
                hits.sort_unstable();
                for (_, id) in hits {
                    let id = IntervalId::new(id);
                    if !want_in_order.contains(&id) {
                        want_in_order.push(id);
                    }
                }
            }
            let mut in_order = Vec::new();
            assert!(u.overlapping_in_order(&segs, &mut in_order, usize::MAX, |_| true));
            assert_eq!(in_order, want_in_order, "overlapping_in_order {segs:?}");
            if !want_in_order.is_empty() {
                let refused = want_in_order[next(want_in_order.len() as u64) as usize];
                let mut seen = Vec::new();
                let all = u.overlapping_in_order(&segs, &mut seen, usize::MAX, |id| id != refused);
                let upto = want_in_order.iter().position(|&id| id == refused).unwrap();
                assert!(!all);
                assert_eq!(seen, want_in_order[..=upto]);
            }
            // Refusing one occupant stops the walk right after it.
            if !want.is_empty() {
                let refused = want[next(want.len() as u64) as usize];
                let mut seen = Vec::new();
                let all = u.overlapping(&segs, &mut seen, usize::MAX, |id| id != refused);
                let upto = want.iter().position(|&id| id == refused).unwrap();
                assert!(!all);
                assert_eq!(seen, want[..=upto]);
            }
            // Freedom over each segment, from the bits or the union, as the list says.
            let mut cursor = FRESH;
            for &s in &segs {
                let free = !model.iter().any(|&(a, b, _)| a < s.end && b > s.start);
                assert_eq!(u.is_free_over(&mut cursor, s), free, "free over {s:?}");
            }
            // Stepping backward from the last entry before `p` visits every earlier one.
            let mut walked = Vec::new();
            if let Some(mut pos) = u.last_before(p) {
                walked.push(u.at(pos).start);
                while pos != (0, 0) {
                    pos = u.step_back(pos);
                    walked.push(u.at(pos).start);
                }
            }
            let mut starts: Vec<u32> = model.iter().map(|m| m.0).filter(|&s| s < p).collect();
            starts.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(walked, starts);
        }
        assert!(
            u.chunks
                .iter()
                .all(|c| !c.is_empty() && c.len() <= CHUNK_MAX)
        );
    }
}
