//! `InterferenceMatrix`: per physical register, the union of the segments of the
//! intervals assigned to it (LLVM's `LiveRegMatrix` over `LiveIntervalUnion`s). Segments
//! in one union never overlap, so an ordered map keyed by segment start answers
//! "which assigned intervals overlap this one on register P" in logarithmic time per
//! segment. Fixed reservations (fixed operands, clobbers) live beside it, read-only.

use super::interval::{IntervalId, LiveInterval};
use crate::analysis::intervals::{RegReservations, Segment};
use regalloc2::{PReg, VReg};
use std::collections::BTreeMap;

#[derive(Default)]
pub(crate) struct InterferenceMatrix {
    /// Per register index: segment start → (segment end, owner).
    unions: Vec<BTreeMap<u32, (u32, IntervalId)>>,
}

impl InterferenceMatrix {
    pub fn reset(&mut self) {
        for u in &mut self.unions {
            u.clear();
        }
        self.unions.resize_with(PReg::NUM_INDEX, BTreeMap::new);
    }

    pub fn assign(&mut self, preg: PReg, id: IntervalId, iv: &LiveInterval) {
        let u = &mut self.unions[preg.index()];
        for s in merged(&iv.segments) {
            let prev = u.insert(s.start, (s.end, id));
            debug_assert!(prev.is_none(), "{id} overlaps on {preg}");
        }
    }

    pub fn unassign(&mut self, preg: PReg, iv: &LiveInterval) {
        let u = &mut self.unions[preg.index()];
        for s in merged(&iv.segments) {
            u.remove(&s.start);
        }
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
        if u.is_empty() {
            return;
        }
        for s in merged(segments) {
            for (_, &(end, id)) in u.range(..s.end).rev() {
                if end <= s.start {
                    break;
                }
                if !out.contains(&id) {
                    out.push(id);
                    if out.len() > limit {
                        return;
                    }
                }
            }
        }
    }

    pub fn is_free(&self, preg: PReg, segments: &[Segment]) -> bool {
        merged(segments).all(|s| self.is_free_in(preg, s))
    }

    /// Is `preg` free over all of `seg`? The last occupant starting before `seg` ends is
    /// the only one that can overlap it (occupants are disjoint).
    pub fn is_free_in(&self, preg: PReg, seg: Segment) -> bool {
        self.unions[preg.index()]
            .range(..seg.end)
            .next_back()
            .is_none_or(|(_, &(end, _))| end <= seg.start)
    }

    /// The interval holding `preg` at point `p`, if any.
    pub fn occupant(&self, preg: PReg, p: u32) -> Option<IntervalId> {
        let u = &self.unions[preg.index()];
        u.range(..=p)
            .next_back()
            .filter(|(_, (end, _))| *end > p)
            .map(|(_, &(_, id))| id)
    }
}

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

/// Does a fixed reservation on this register, owned by another value (or a clobber),
/// overlap `segments`? Each segment's search starts from the register's bucket index (or
/// where the previous segment's stopped), not from a binary search over every
/// reservation: calls leave thousands of clobbers on each caller-saved register.
pub(crate) fn fixed_conflict(
    reservations: &RegReservations,
    segments: &[Segment],
    owner: VReg,
) -> bool {
    if reservations.is_empty() {
        return false;
    }
    let mut lo = 0;
    merged(segments).any(|s| fixed_conflict_from(reservations, &mut lo, s, owner))
}

/// `fixed_conflict` for one segment, for callers probing sorted segments in order:
/// `lo` carries the search position from one call to the next.
pub(crate) fn fixed_conflict_from(
    reservations: &RegReservations,
    lo: &mut usize,
    seg: Segment,
    owner: VReg,
) -> bool {
    *lo = reservations.first_ending_after(*lo, seg.start);
    reservations[*lo..]
        .iter()
        .take_while(|r| r.start < seg.end)
        .any(|r| r.owner != owner)
}

/// Is the register reserved at point `p` (by anyone)?
pub(crate) fn reserved_at(reservations: &RegReservations, p: u32) -> bool {
    let i = reservations.partition_point(|r| r.end <= p);
    i < reservations.len() && reservations[i].start <= p
}
