//! The allocator's unit of work: a `LiveInterval` is a piece of one vreg's live range
//! (all of it at first; split products and spill reload/store pieces later) together
//! with its stage, cascade number, spill weight and assignment; and `IntervalLists`, the
//! arenas its segments, runs and operands live in.

use crate::analysis::intervals::{Segment, UseSite};
use cranelift_entity::entity_impl;
use regalloc2::{PReg, PRegSet, VReg};
use smallvec::SmallVec;

/// A split product's segments while the split builds it, stored inline up to four (most
/// products are a block or two); `IntervalLists` takes a copy when the piece is made.
pub(crate) type SegmentList = SmallVec<[Segment; 4]>;
/// A split product's operands while the split builds it (see `SegmentList`).
pub(crate) type UseList = SmallVec<[UseSite; 4]>;

/// Where one list of an interval (its segments, runs or operands) sits in its arena of
/// `IntervalLists`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ListRange {
    start: u32,
    end: u32,
}

impl ListRange {
    fn new(start: usize, end: usize) -> Self {
        ListRange {
            start: start as u32,
            end: end as u32,
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    fn span(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// The first `n` entries, taken off the front, if there are that many.
    fn take(&mut self, n: usize) -> Option<ListRange> {
        (n <= self.len()).then(|| {
            let taken = ListRange {
                start: self.start,
                end: self.start + n as u32,
            };
            self.start = taken.end;
            taken
        })
    }
}

/// Whether two consecutive segments of `s` touch (and so make one run).
fn any_touching(s: &[Segment]) -> bool {
    s.windows(2).any(|w| w[0].end == w[1].start)
}

/// Joins touching neighbours of `s` in place (`matrix::merged`, without a second list);
/// returns how many runs it left at the front.
fn join_touching(s: &mut [Segment]) -> usize {
    if s.is_empty() {
        return 0;
    }
    let mut last = 0;
    for k in 1..s.len() {
        let next = s[k];
        if s[last].end == next.start {
            s[last].end = next.end;
        } else {
            last += 1;
            s[last] = next;
        }
    }
    last + 1
}

/// Free stretches of the arenas (a retired interval's), where new lists may go before
/// the arenas grow. Invariant: no interval's range overlaps them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Room {
    segments: ListRange,
    uses: ListRange,
}

/// The segments, runs and operands of every interval of the function, in two arenas
/// (segments and runs share one, and an interval whose segments touch nowhere has its
/// runs at its segments' range) that only grow until the next function. An interval
/// holds ranges into them, so it is a plain value of under 96 bytes: the table of
/// intervals was a quarter of a large function's working set when each held its three
/// lists inline (248 bytes an interval), and clearing it read every interval again to
/// free the lists that had outgrown their inline room. A list that changes is written
/// anew at the end or, when it only shrinks, in place; a split writes its products
/// into the stretches the interval it replaces leaves (`Room`), which they nearly
/// always fit, so splitting does not keep reaching for memory not touched yet.
#[derive(Default)]
pub(crate) struct IntervalLists {
    segments: Vec<Segment>,
    uses: Vec<UseSite>,
}

impl IntervalLists {
    pub fn clear(&mut self) {
        self.segments.clear();
        self.uses.clear();
    }

    #[inline]
    pub fn segments(&self, iv: &LiveInterval) -> &[Segment] {
        &self.segments[iv.segments.span()]
    }

    #[inline]
    pub fn runs(&self, iv: &LiveInterval) -> &[Segment] {
        &self.segments[iv.runs.span()]
    }

    #[inline]
    pub fn uses(&self, iv: &LiveInterval) -> &[UseSite] {
        &self.uses[iv.uses.span()]
    }

    /// The segments or runs at `r` (an interval's, or one about to be).
    #[inline]
    pub fn segments_at(&self, r: ListRange) -> &[Segment] {
        &self.segments[r.span()]
    }

    /// The operands at `r`.
    #[inline]
    pub fn uses_at(&self, r: ListRange) -> &[UseSite] {
        &self.uses[r.span()]
    }

    /// The segments or runs at `r`, to change in place.
    #[inline]
    pub fn segments_mut(&mut self, r: ListRange) -> &mut [Segment] {
        &mut self.segments[r.span()]
    }

    pub fn add_segments(&mut self, s: &[Segment]) -> ListRange {
        let start = self.segments.len();
        self.segments.extend_from_slice(s);
        ListRange::new(start, self.segments.len())
    }

    pub fn add_uses(&mut self, u: &[UseSite]) -> ListRange {
        let start = self.uses.len();
        self.uses.extend_from_slice(u);
        ListRange::new(start, self.uses.len())
    }

    /// The runs of the segments at `r` (touching segments joined), added; `r` itself
    /// when no two of its segments touch (one segment, most often), so an interval's
    /// runs may share its segments' range.
    pub fn add_runs_of(&mut self, r: ListRange) -> ListRange {
        self.add_runs_of_in(&mut Room::default(), r)
    }

    /// The stretches `iv`'s lists occupy, free once it is retired: its segments and, when
    /// they follow them (as `add_runs_of` leaves them unless they share the segments'
    /// range), its runs; its operands.
    pub fn room_of(iv: &LiveInterval) -> Room {
        let segments = if iv.segments.end == iv.runs.start {
            ListRange {
                start: iv.segments.start,
                end: iv.runs.end,
            }
        } else {
            iv.segments
        };
        Room {
            segments,
            uses: iv.uses,
        }
    }

    /// `add_segments`, into `room` when it fits.
    pub fn add_segments_in(&mut self, room: &mut Room, s: &[Segment]) -> ListRange {
        match room.segments.take(s.len()) {
            Some(r) => {
                self.segments[r.span()].copy_from_slice(s);
                r
            }
            None => self.add_segments(s),
        }
    }

    /// `add_runs_of`, into `room` when it has room for as many runs as segments.
    pub fn add_runs_of_in(&mut self, room: &mut Room, r: ListRange) -> ListRange {
        if !any_touching(&self.segments[r.span()]) {
            return r;
        }
        let in_room = r.len() <= room.segments.len();
        let start = if in_room {
            let start = room.segments.start as usize;
            self.segments.copy_within(r.span(), start);
            start
        } else {
            let end = self.segments.len();
            self.segments.extend_from_within(r.span());
            end
        };
        let n = join_touching(&mut self.segments[start..start + r.len()]);
        if in_room {
            room.segments.start = (start + n) as u32;
        } else {
            self.segments.truncate(start + n);
        }
        ListRange::new(start, start + n)
    }

    /// `add_uses`, into `room` when it fits.
    pub fn add_uses_in(&mut self, room: &mut Room, u: &[UseSite]) -> ListRange {
        match room.uses.take(u.len()) {
            Some(r) => {
                self.uses[r.span()].copy_from_slice(u);
                r
            }
            None => self.add_uses(u),
        }
    }

    /// Keeps the operands at `r` that `keep` accepts, in order and in place; returns
    /// the shorter range.
    pub fn retain_uses(
        &mut self,
        r: ListRange,
        mut keep: impl FnMut(&UseSite) -> bool,
    ) -> ListRange {
        let mut end = r.start as usize;
        for k in r.span() {
            let u = self.uses[k];
            if keep(&u) {
                self.uses[end] = u;
                end += 1;
            }
        }
        ListRange::new(r.start as usize, end)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct IntervalId(u32);
entity_impl!(IntervalId, "iv");

/// LLVM's stage machine. An interval only moves forward through it, which is what makes
/// the main loop terminate: each stage either assigns, or hands the interval (or its
/// products) to a later stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Never queued.
    New,
    /// Try assignment and eviction only; on failure, requeue in `Split`.
    Assign,
    /// Try splitting; queued after every non-`Split` interval.
    Split,
    /// Split products that must make progress when split again.
    Split2,
    /// Will be spilled; no more splitting.
    Spill,
    /// Nothing more can be done: must be assigned (unspillable) or it is an error.
    Done,
}

/// What part of its vreg an interval stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntervalKind {
    /// A piece of the value's home: where the value lives over its segments.
    Main,
    /// A register copy of a spilled value around one instruction: loaded before it (for
    /// uses) or stored after it (for defs). Unspillable.
    Reload { is_def: bool },
}

/// Cascade number 0 means "never evicted anything and never evicted".
pub(crate) type Cascade = u32;

/// Spill weight: use density weighted by block frequency. `f32::INFINITY` marks an
/// unspillable interval.
pub(crate) type SpillWeight = f32;

pub(crate) struct LiveInterval {
    pub vreg: VReg,
    pub kind: IntervalKind,
    pub segments: ListRange,
    /// `segments` with touching neighbours joined, computed once: what the interference
    /// matrix stores and what register probes walk. A value live through consecutive
    /// blocks has a segment per block but one run, so a probe costs the runs, not the
    /// blocks.
    pub runs: ListRange,
    /// The registers a fixed reservation of another value (or a clobber) blocks
    /// somewhere over `runs`: fixed for the interval's life, so computed once.
    pub fixed_conflicts: PRegSet,
    /// Operands of `vreg` inside the segments (for reload pieces: the operands they serve).
    pub uses: ListRange,
    pub stage: Stage,
    pub cascade: Cascade,
    pub weight: SpillWeight,
    pub assigned: Option<PReg>,
    /// The register its split found free for this piece (a region split's candidate, a
    /// local split's window register): a hint, as the split's copies are in LLVM, not an
    /// assignment.
    pub split_hint: Option<PReg>,
    /// Only registers with `hw_enc < limit` may hold it (from `Limit` constraints).
    pub limit: usize,
    /// Bound for the spiller once already and requeued (deferred spilling).
    pub deferred: bool,
    /// Lives in its vreg's spill slot (a main interval the spiller took).
    pub spilled: bool,
}

impl LiveInterval {
    pub fn is_spillable(&self) -> bool {
        self.weight.is_finite()
    }

    /// A piece of the value's home that lives in its spill slot (not retired).
    /// Retires a piece that another took over (a reload piece inside a piece that took
    /// a register): no segments, no operands, no register. The caller takes it out of
    /// the matrix and its value's piece list.
    pub fn retire(&mut self) {
        self.assigned = None;
        self.segments = ListRange::default();
        self.runs = ListRange::default();
        self.uses = ListRange::default();
    }

    pub fn in_slot(&self) -> bool {
        self.kind == IntervalKind::Main && self.spilled && !self.runs.is_empty()
    }

    /// Number of program points covered.
    pub fn size(&self, lists: &IntervalLists) -> u32 {
        lists.segments(self).iter().map(Segment::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regalloc2::{Inst, Operand, RegClass};

    fn seg(start: u32, end: u32) -> Segment {
        Segment { start, end }
    }

    fn use_at(inst: usize) -> UseSite {
        let early = 2 * inst as u32;
        UseSite::new(
            Inst::new(inst),
            0,
            Operand::reg_use(VReg::new(200, RegClass::Int)),
            (early, early),
            false,
        )
    }

    /// Runs join touching segments only; lists added later leave earlier ones intact,
    /// and a retain keeps order in place.
    #[test]
    fn lists_in_arenas() {
        let mut lists = IntervalLists::default();
        let a = lists.add_segments(&[seg(0, 4), seg(4, 8), seg(10, 12), seg(12, 14)]);
        let b = lists.add_segments(&[seg(20, 22)]);
        let runs = lists.add_runs_of(a);
        assert_eq!(lists.segments_at(runs), &[seg(0, 8), seg(10, 14)]);
        assert_eq!(lists.segments_at(a).len(), 4);
        assert_eq!(lists.segments_at(b), &[seg(20, 22)]);
        assert_eq!(
            lists.add_runs_of(b),
            b,
            "no touching segments: the same range"
        );
        lists.segments_mut(b)[0].start = 21;
        assert_eq!(lists.segments_at(b), &[seg(21, 22)]);
        assert_eq!(lists.segments_at(runs), &[seg(0, 8), seg(10, 14)]);

        let u = lists.add_uses(&[use_at(1), use_at(3), use_at(5), use_at(7)]);
        let kept = lists.retain_uses(u, |s| s.inst.index() != 3 && s.inst.index() != 7);
        let insts: Vec<usize> = lists.uses_at(kept).iter().map(|s| s.inst.index()).collect();
        assert_eq!(insts, [1, 5]);
        assert_eq!(kept.len(), 2);
        lists.clear();
        assert!(lists.add_segments(&[]).is_empty());
    }

    /// A retired interval's stretches take its products' lists while they fit (its
    /// segments and the runs after them as one stretch); what does not fit goes to the
    /// end, and nothing outside the room is overwritten.
    #[test]
    fn products_reuse_the_room() {
        let mut lists = IntervalLists::default();
        let before = lists.add_segments(&[seg(100, 102)]);
        let segments = lists.add_segments(&[seg(0, 4), seg(4, 8), seg(10, 12)]);
        let runs = lists.add_runs_of(segments);
        let uses = lists.add_uses(&[use_at(1), use_at(5)]);
        let after = lists.add_segments(&[seg(200, 202)]);
        let parent = LiveInterval {
            vreg: VReg::new(200, RegClass::Int),
            kind: IntervalKind::Main,
            segments,
            runs,
            fixed_conflicts: PRegSet::empty(),
            uses,
            stage: Stage::Split,
            cascade: 0,
            weight: 0.0,
            assigned: None,
            split_hint: None,
            limit: usize::MAX,
            deferred: false,
            spilled: false,
        };
        let mut room = IntervalLists::room_of(&parent);
        assert_eq!(room.segments.len(), 5);
        // Two products: [0, 8) with its run, then [10, 12) with its run.
        let a = lists.add_segments_in(&mut room, &[seg(0, 4), seg(4, 8)]);
        let a_runs = lists.add_runs_of_in(&mut room, a);
        let a_uses = lists.add_uses_in(&mut room, &[use_at(1)]);
        assert_eq!(lists.segments_at(a_runs), &[seg(0, 8)]);
        let b = lists.add_segments_in(&mut room, &[seg(10, 12)]);
        // One slot left, and `b` has one segment: its run fits too.
        // Its segments do not touch: its runs are its segments, and take no room.
        let b_runs = lists.add_runs_of_in(&mut room, b);
        assert_eq!(b_runs, b);
        assert_eq!(room.segments.len(), 1);
        // Two segments do not fit in the one slot left: added at the end.
        let c = lists.add_segments_in(&mut room, &[seg(300, 302), seg(310, 312)]);
        assert!(c.start >= after.end);
        for (r, want) in [
            (a, &[seg(0, 4), seg(4, 8)][..]),
            (b, &[seg(10, 12)]),
            (b_runs, &[seg(10, 12)]),
            (before, &[seg(100, 102)]),
            (after, &[seg(200, 202)]),
            (c, &[seg(300, 302), seg(310, 312)]),
        ] {
            assert_eq!(lists.segments_at(r), want);
        }
        assert_eq!(lists.uses_at(a_uses)[0].inst.index(), 1);
        assert!(a_uses.start == uses.start && room.uses.len() == 1);
    }

    /// The point of the arenas: an interval stays a small plain value.
    #[test]
    fn interval_is_small() {
        assert!(
            std::mem::size_of::<LiveInterval>() <= 96,
            "{}",
            std::mem::size_of::<LiveInterval>()
        );
    }
}
