//! Coalescing groups (`Options::group_hints`): values joined by copies (block parameter
//! ↔ branch argument, reuse def ↔ input) whose live ranges do not overlap, united
//! transitively as ion's `merge` unites them into one bundle, heaviest copies first.
//! Unlike ion we do not allocate a group as one unit: a group only hints. A value with
//! no copy partner in a register yet (the first of a chain of joins to be placed) would
//! otherwise take the first free register, and the values a join's parameters are
//! passed on to, placed before it, may sit in other registers: each edge of a permuted
//! join then pays a move cycle (shootout-fib2 #45: `v278` in p1 and `v280` in p2, their
//! copies two joins on in p2 and p1, a swap on every edge between them).
//!
//! Work is bounded as ion bounds it: an overlap check stops after `MAX_CHECK_STEPS`
//! steps, and a group holds at most `MAX_GROUP_SEGMENTS` segments, so each union costs
//! at most a constant.

use crate::analysis::copies::Partners;
use crate::analysis::intervals::{LiveIntervals, Segment};
use regalloc2::VReg;

/// Steps of the two-cursor overlap check before a union is given up (ion: 200).
const MAX_CHECK_STEPS: usize = 200;
/// Segments a group may hold (the union's merge walks both lists).
const MAX_GROUP_SEGMENTS: usize = 256;
/// Members of a group read for hints, nearest in the member ring first.
pub(crate) const MAX_GROUP_HINTS: usize = 32;

#[derive(Default)]
pub(crate) struct CoalesceGroups {
    /// Union-find parent per vreg.
    parent: Vec<u32>,
    /// Members of each group as a ring: `next[v]` is the next member after `v`.
    next: Vec<u32>,
    /// Per root of a group of two or more: its members' segments, sorted and disjoint.
    /// A singleton's are its value's own (`LiveIntervals::segments_of`).
    segments: Vec<Vec<Segment>>,
    /// Vregs whose `segments` entry is not empty.
    touched: Vec<u32>,
    order: Vec<(f32, u32)>,
    merged: Vec<Segment>,
}

impl CoalesceGroups {
    /// Forms the groups of the copies in `partners`; returns the number of unions.
    pub fn compute(&mut self, nv: usize, partners: &Partners, intervals: &LiveIntervals) -> usize {
        self.parent.clear();
        self.parent.extend(0..nv as u32);
        self.next.clear();
        self.next.extend(0..nv as u32);
        for &v in &self.touched {
            self.segments[v as usize].clear();
        }
        self.touched.clear();
        if self.segments.len() < nv {
            self.segments.resize_with(nv, Vec::new);
        }
        // Heaviest copies first (ties in program order), as ion merges the hottest
        // moves' ends before others can take their place.
        self.order.clear();
        self.order.extend(
            partners
                .copies
                .iter()
                .enumerate()
                .map(|(i, c)| (c.freq, i as u32)),
        );
        self.order
            .sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut unions = 0;
        for k in 0..self.order.len() {
            let c = partners.copies[self.order[k].1 as usize];
            if c.a.class() == c.b.class() && self.union(c.a, c.b, intervals) {
                unions += 1;
            }
        }
        if unions > 0 {
            log::debug!(
                "coalescing groups: {unions} unions of {} copies",
                self.order.len()
            );
        }
        unions
    }

    fn find(&mut self, v: u32) -> u32 {
        let mut r = v;
        while self.parent[r as usize] != r {
            r = self.parent[r as usize];
        }
        let mut x = v;
        while self.parent[x as usize] != r {
            let up = self.parent[x as usize];
            self.parent[x as usize] = r;
            x = up;
        }
        r
    }

    fn segments_of<'s>(&'s self, root: u32, intervals: &'s LiveIntervals) -> &'s [Segment] {
        let own = &self.segments[root as usize];
        if own.is_empty() {
            intervals.segments_of(VReg::new(root as usize, regalloc2::RegClass::Int))
        } else {
            own
        }
    }

    /// Unites the groups of `a` and `b` unless their segments overlap (or the check or
    /// the result would be too large).
    fn union(&mut self, a: VReg, b: VReg, intervals: &LiveIntervals) -> bool {
        let (ra, rb) = (self.find(a.vreg() as u32), self.find(b.vreg() as u32));
        if ra == rb {
            return false;
        }
        let mut merged = std::mem::take(&mut self.merged);
        merged.clear();
        let (sa, sb) = (
            self.segments_of(ra, intervals),
            self.segments_of(rb, intervals),
        );
        if sa.is_empty() || sb.is_empty() || sa.len() + sb.len() > MAX_GROUP_SEGMENTS {
            self.merged = merged;
            return false;
        }
        let (mut i, mut j, mut steps) = (0, 0, 0);
        while i < sa.len() && j < sb.len() {
            steps += 1;
            if steps > MAX_CHECK_STEPS {
                self.merged = merged;
                return false;
            }
            let (x, y) = (sa[i], sb[j]);
            if x.end <= y.start {
                merged.push(x);
                i += 1;
            } else if y.end <= x.start {
                merged.push(y);
                j += 1;
            } else {
                self.merged = merged;
                return false;
            }
        }
        merged.extend_from_slice(&sa[i..]);
        merged.extend_from_slice(&sb[j..]);
        // The smaller index becomes the root (deterministic); its list takes the union.
        let (root, other) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[other as usize] = root;
        self.next.swap(ra as usize, rb as usize);
        let slot = &mut self.segments[root as usize];
        if slot.is_empty() {
            self.touched.push(root);
        }
        std::mem::swap(slot, &mut merged);
        let old = &mut self.segments[other as usize];
        old.clear();
        self.merged = merged;
        true
    }

    /// The other members of `v`'s group, at most `MAX_GROUP_HINTS`.
    pub fn others(&self, v: VReg) -> impl Iterator<Item = u32> + '_ {
        let start = v.vreg() as u32;
        let mut at = start;
        std::iter::from_fn(move || {
            at = self.next[at as usize];
            (at != start).then_some(at)
        })
        .take(MAX_GROUP_HINTS)
    }
}
