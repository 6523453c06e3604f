//! Coalescing groups (`Options::group_hints`): values joined by copies (block parameter
//! ↔ branch argument, reuse def ↔ input) whose live ranges do not overlap, united
//! transitively as ion's `merge` unites them into one bundle, heaviest copies first.
//! A group of three or more may be placed in one register at once (`group_place.rs`);
//! otherwise, and once any member is placed or split, a group only hints. A value with
//! no copy partner in a register yet (the first of a chain of joins to be placed) would
//! otherwise take the first free register, and the values a join's parameters are
//! passed on to, placed before it, may sit in other registers: each edge of a permuted
//! join then pays a move cycle (shootout-fib2 #45: `v278` in p1 and `v280` in p2, their
//! copies two joins on in p2 and p1, a swap on every edge between them).
//!
//! Work is bounded as ion bounds it: a union is given up where ion's overlap walk would
//! take more than `MAX_CHECK_STEPS` steps, and a group holds at most
//! `MAX_GROUP_SEGMENTS` segments, so each union costs at most a constant; and only the
//! `MAX_GROUP_COPIES` heaviest copies of a function are tried. A hint lookup costs a
//! constant too: each group keeps the number of its members placed in each register
//! (`Votes`), updated as their registers change.

use crate::analysis::copies::{CopySite, Partners};
use crate::analysis::intervals::{LiveIntervals, Segment};
use regalloc2::{PReg, VReg};

/// Steps of the two-cursor overlap check before a union is given up (ion: 200).
const MAX_CHECK_STEPS: usize = 200;
/// Segments a group may hold (the union's merge moves the longer list). At 256 the
/// Wasm corpus allocated no better and forming groups cost 10% more.
const MAX_GROUP_SEGMENTS: usize = 128;
/// Copies tried per function, heaviest first. Half of the Wasm corpus's copies are in
/// its 15 largest functions, where the cold copies' unions, into long lists, cost most
/// and mattered least (trying them all took 1.4% more allocation instructions for a
/// 0.05% higher summed cost; 250 saved 0.2% and raised the summed cost 0.5%).
const MAX_GROUP_COPIES: usize = 500;
/// Registers a group counts members in; members in a further register do not hint.
const MAX_GROUP_REGS: usize = 8;
/// Distinct copy frequencies `sort_copies` counts; more make it sort.
const MAX_COUNTED_FREQS: usize = 16;
/// `slot` of a vreg in no group of two or more.
const NO_GROUP: u32 = u32::MAX;

/// Per group: how many of its members have a register for hints, per register
/// (`GreedyCtx::vreg_hint_reg`). A register whose count fell to zero keeps its entry
/// until another needs it.
#[derive(Clone, Copy)]
struct Votes {
    regs: [PReg; MAX_GROUP_REGS],
    counts: [u16; MAX_GROUP_REGS],
    len: u8,
}

impl Votes {
    const EMPTY: Votes = Votes {
        regs: [PReg::invalid(); MAX_GROUP_REGS],
        counts: [0; MAX_GROUP_REGS],
        len: 0,
    };

    fn add(&mut self, p: PReg) {
        let n = self.len as usize;
        if let Some(i) = self.regs[..n].iter().position(|&r| r == p) {
            self.counts[i] += 1;
        } else if n < MAX_GROUP_REGS {
            self.regs[n] = p;
            self.counts[n] = 1;
            self.len += 1;
        } else if let Some(i) = self.counts.iter().position(|&c| c == 0) {
            self.regs[i] = p;
            self.counts[i] = 1;
        }
    }

    fn remove(&mut self, p: PReg) {
        let n = self.len as usize;
        // Absent when the group already counted `MAX_GROUP_REGS` others as it arrived;
        // and such a member, once another took a freed entry for its register, leaves a
        // count it never added to: counts are then low, never below zero.
        if let Some(i) = self.regs[..n].iter().position(|&r| r == p) {
            self.counts[i] = self.counts[i].saturating_sub(1);
        }
    }
}

#[derive(Default)]
pub(crate) struct CoalesceGroups {
    /// Union-find parent per vreg.
    parent: Vec<u32>,
    /// Members of each group as a ring: `next[v]` is the next member after `v`.
    next: Vec<u32>,
    /// Per root of a group of two or more: its members' segments, sorted and disjoint.
    /// A singleton's are its value's own (`LiveIntervals::segments_of`).
    segments: Vec<Vec<Segment>>,
    /// Vregs whose `segments` entry is not empty (and some whose entry was emptied since).
    touched: Vec<u32>,
    /// Emptied lists kept for their capacity: a context allocating many functions stops
    /// allocating here once warm.
    spare: Vec<Vec<Segment>>,
    /// Per vreg in a group of two or more: its group's index in `votes`. Stale for
    /// others (`next[v] == v` tells them apart).
    slot: Vec<u32>,
    votes: Vec<Votes>,
    /// The members of the last function's groups of two or more: the only vregs whose
    /// `parent` and `next` entries are not their own index between calls.
    members: Vec<u32>,
    /// Copy indices in the order `compute` tries them (`sort_copies`).
    order: Vec<u32>,
    /// `sort_copies` scratch: per copy, its frequency's index in `freqs`.
    freq_of: Vec<u8>,
    /// `sort_copies` scratch: the distinct frequency keys, in order of appearance.
    freqs: Vec<u32>,
    /// `sort_copies` scratch when the frequencies are many: (key, span, copy index).
    keys: Vec<u128>,
    /// `sort_copies` scratch: (span, copy index) of one frequency's copies.
    span_keys: Vec<u64>,
    /// Per segment of the shorter list of a union: how many segments of the longer list
    /// precede it.
    at: Vec<u32>,
}

impl CoalesceGroups {
    /// Forms the groups of the copies in `partners`; returns the number of unions.
    pub fn compute(&mut self, nv: usize, partners: &Partners, intervals: &LiveIntervals) -> usize {
        for &m in &self.members {
            self.parent[m as usize] = m;
            self.next[m as usize] = m;
        }
        self.members.clear();
        self.votes.clear();
        if self.parent.len() < nv {
            self.parent.extend(self.parent.len() as u32..nv as u32);
            self.next.extend(self.next.len() as u32..nv as u32);
            self.slot.resize(nv, NO_GROUP);
        }
        for k in 0..self.touched.len() {
            let list = std::mem::take(&mut self.segments[self.touched[k] as usize]);
            self.recycle(list);
        }
        self.touched.clear();
        if self.segments.len() < nv {
            self.segments.resize_with(nv, Vec::new);
        }
        self.sort_copies(partners, intervals);
        let mut unions = 0;
        for k in 0..self.order.len().min(MAX_GROUP_COPIES) {
            let c = partners.copies[self.order[k] as usize];
            if c.a.class() == c.b.class() && self.union(c.a, c.b, intervals) {
                unions += 1;
            }
        }
        // Every root that ever held a list is in `touched`, so the groups of two or more
        // are those of its entries still roots with a list.
        for k in 0..self.touched.len() {
            let root = self.touched[k];
            if self.parent[root as usize] != root || self.segments[root as usize].is_empty() {
                continue;
            }
            let g = self.votes.len() as u32;
            self.votes.push(Votes::EMPTY);
            let mut m = root;
            loop {
                self.slot[m as usize] = g;
                self.members.push(m);
                m = self.next[m as usize];
                if m == root {
                    break;
                }
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

    /// Fills `order`: heaviest copies first, as ion merges the hottest moves' ends before
    /// others can take their place; among equally hot copies, those whose two values live
    /// in fewer block segments first (then program order). A value live across many
    /// blocks overlaps many others: united first with a join parameter, it keeps out
    /// every branch argument of the join's other edges that is defined while it is live
    /// (bz2 #91, a function in 16 modules: a value passed on one of eight edges joined
    /// the parameter and the seven fresh arguments could not). Frequencies are powers of
    /// ten by loop depth, so a function has a few distinct ones: a counting sort by them,
    /// then the copies that can be tried (`MAX_GROUP_COPIES`) ordered by span within
    /// each frequency.
    fn sort_copies(&mut self, partners: &Partners, intervals: &LiveIntervals) {
        // Orders frequencies as `f32::total_cmp` does, descending.
        let key = |freq: f32| {
            let bits = freq.to_bits();
            !(bits ^ ((((bits as i32) >> 31) as u32) >> 1) ^ 0x8000_0000)
        };
        let copies = &partners.copies;
        let span = |c: &CopySite| {
            (intervals.segments_of(c.a).len() + intervals.segments_of(c.b).len()) as u32
        };
        self.order.clear();
        self.freqs.clear();
        self.freq_of.clear();
        let mut counts = [0u32; MAX_COUNTED_FREQS];
        for c in copies {
            let k = key(c.freq);
            let f = match self.freqs.iter().position(|&x| x == k) {
                Some(f) => f,
                None if self.freqs.len() < MAX_COUNTED_FREQS => {
                    self.freqs.push(k);
                    self.freqs.len() - 1
                }
                None => break,
            };
            counts[f] += 1;
            self.freq_of.push(f as u8);
        }
        if self.freq_of.len() < copies.len() {
            // Keys are distinct (the low half is the index): an unstable sort is
            // deterministic.
            self.keys.clear();
            self.keys.extend(copies.iter().enumerate().map(|(i, c)| {
                (u128::from(key(c.freq)) << 64) | (u128::from(span(c)) << 32) | i as u128
            }));
            self.keys.sort_unstable();
            self.order.extend(self.keys.iter().map(|&k| k as u32));
            return;
        }
        let n = self.freqs.len();
        let mut by_key = [0usize; MAX_COUNTED_FREQS];
        for (f, slot) in by_key[..n].iter_mut().enumerate() {
            *slot = f;
        }
        by_key[..n].sort_unstable_by_key(|&f| self.freqs[f]);
        let mut start = [0u32; MAX_COUNTED_FREQS];
        let mut at = 0;
        for &f in &by_key[..n] {
            start[f] = at;
            at += counts[f];
        }
        self.order.resize(copies.len(), 0);
        for (i, &f) in self.freq_of.iter().enumerate() {
            self.order[start[f as usize] as usize] = i as u32;
            start[f as usize] += 1;
        }
        // `start[f]` is now the end of frequency `f`'s run. Within each run that reaches
        // into the copies tried, the narrowest first: only those tried need their order,
        // so the run straddling the limit is partitioned before its tried part is sorted.
        let tried = copies.len().min(MAX_GROUP_COPIES);
        let mut lo = 0;
        for &f in &by_key[..n] {
            let hi = start[f] as usize;
            if lo >= tried {
                break;
            }
            // (span, copy index) as one integer, each span looked up once.
            let run = &mut self.order[lo..hi];
            let keys = &mut self.span_keys;
            keys.clear();
            keys.extend(
                run.iter()
                    .map(|&i| (u64::from(span(&copies[i as usize])) << 32) | u64::from(i)),
            );
            if hi > tried {
                let keep = tried - lo;
                keys.select_nth_unstable(keep - 1);
                keys[..keep].sort_unstable();
            } else {
                keys.sort_unstable();
            }
            for (slot, &k) in run.iter_mut().zip(keys.iter()) {
                *slot = k as u32;
            }
            lo = hi;
        }
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

    fn segments_of<'s>(
        segments: &'s [Vec<Segment>],
        root: u32,
        intervals: &'s LiveIntervals,
    ) -> &'s [Segment] {
        let own = &segments[root as usize];
        if own.is_empty() {
            intervals.segments_of(VReg::new(root as usize, regalloc2::RegClass::Int))
        } else {
            own
        }
    }

    /// Unites the groups of `a` and `b` unless their segments overlap (or the check or
    /// the result would be too large).
    ///
    /// The limits are those of a two-cursor walk over both lists that gives up after
    /// `MAX_CHECK_STEPS` segments, but the check binary-searches the longer list for
    /// each segment of the shorter: most unions add one value of a few segments to a
    /// group of many.
    fn union(&mut self, a: VReg, b: VReg, intervals: &LiveIntervals) -> bool {
        let (ra, rb) = (self.find(a.vreg() as u32), self.find(b.vreg() as u32));
        if ra == rb {
            return false;
        }
        let (sa, sb) = (
            Self::segments_of(&self.segments, ra, intervals),
            Self::segments_of(&self.segments, rb, intervals),
        );
        if sa.is_empty() || sb.is_empty() || sa.len() + sb.len() > MAX_GROUP_SEGMENTS {
            return false;
        }
        let (short, long, short_root, long_root) = if sa.len() <= sb.len() {
            (sa, sb, ra, rb)
        } else {
            (sb, sa, rb, ra)
        };
        self.at.clear();
        let mut from = 0;
        for x in short {
            // Segments of one list are sorted and disjoint, so the first of `long`
            // ending after `x` starts is the only one `x` can meet first.
            from += long[from..].partition_point(|y| y.end <= x.start);
            if from < long.len() && long[from].start < x.end {
                return false;
            }
            self.at.push(from as u32);
        }
        // The walk consumes segments until one list runs out: the list whose last
        // segment comes first, together with the other's segments before that one.
        let last = *self.at.last().unwrap() as usize;
        let walked = if last == long.len() {
            long.len() + self.at.partition_point(|&p| (p as usize) < long.len())
        } else {
            short.len() + last
        };
        if walked > MAX_CHECK_STEPS {
            return false;
        }
        // The smaller index becomes the root (deterministic); its slot takes the union,
        // made in the longer list's own vector when it has one.
        let (root, other) = if ra < rb { (ra, rb) } else { (rb, ra) };
        if self.segments[root as usize].is_empty() {
            self.touched.push(root);
        }
        let mut list = std::mem::take(&mut self.segments[long_root as usize]);
        if list.is_empty() {
            list = self.spare.pop().unwrap_or_default();
            list.extend_from_slice(
                intervals.segments_of(VReg::new(long_root as usize, regalloc2::RegClass::Int)),
            );
        }
        let short_own = std::mem::take(&mut self.segments[short_root as usize]);
        let short = if short_own.is_empty() {
            intervals.segments_of(VReg::new(short_root as usize, regalloc2::RegClass::Int))
        } else {
            &short_own[..]
        };
        // From the back, each run of the longer list moves once, past the segments of
        // the shorter that precede it.
        let (n, k) = (list.len(), short.len());
        list.resize(n + k, short[0]);
        let mut end = n;
        for i in (0..k).rev() {
            let p = self.at[i] as usize;
            list.copy_within(p..end, p + i + 1);
            list[p + i] = short[i];
            end = p;
        }
        self.recycle(short_own);
        self.segments[root as usize] = list;
        self.parent[other as usize] = root;
        self.next.swap(ra as usize, rb as usize);
        true
    }

    fn recycle(&mut self, mut list: Vec<Segment>) {
        if list.capacity() > 0 {
            list.clear();
            self.spare.push(list);
        }
    }

    /// Whether `v` shares its group with another value (after `compute`).
    #[inline]
    pub fn in_group(&self, v: VReg) -> bool {
        self.next
            .get(v.vreg())
            .is_some_and(|&n| n as usize != v.vreg())
    }

    /// The members of `v`'s group, `v` first (just `v` outside a group).
    pub fn members(&self, v: VReg) -> impl Iterator<Item = VReg> + '_ {
        let start = v.vreg() as u32;
        let mut at = Some(start);
        std::iter::from_fn(move || {
            let m = at?;
            let next = self.next.get(m as usize).copied().unwrap_or(m);
            at = (next != start).then_some(next);
            Some(VReg::new(m as usize, v.class()))
        })
    }

    /// Records that the register for hints of `v`, in a group, changed from `old` to `new`.
    pub fn moved(&mut self, v: VReg, old: Option<PReg>, new: Option<PReg>) {
        let votes = &mut self.votes[self.slot[v.vreg()] as usize];
        if let Some(p) = old {
            votes.remove(p);
        }
        if let Some(p) = new {
            votes.add(p);
        }
    }

    /// The registers of the other members of `v`'s group (`v` in one), with how many of
    /// them are there; `own` is `v`'s register for hints, counted among its group's.
    #[inline]
    pub fn votes(&self, v: VReg, own: Option<PReg>) -> impl Iterator<Item = (PReg, u16)> + '_ {
        let votes = &self.votes[self.slot[v.vreg()] as usize];
        let n = votes.len as usize;
        votes.regs[..n]
            .iter()
            .zip(&votes.counts[..n])
            .map(move |(&p, &c)| (p, c.saturating_sub(u16::from(own == Some(p)))))
            .filter(|&(_, c)| c > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regalloc2::RegClass;

    /// Counts per register go up and down with their members; a full table takes a new
    /// register only into an entry whose count fell to zero; a register it never counted
    /// leaves the counts alone when a member leaves it, and no count drops below zero.
    #[test]
    fn votes_count_members_per_register() {
        let reg = |i| PReg::new(i, RegClass::Int);
        let count = |v: &Votes, p: PReg| {
            let n = v.len as usize;
            v.regs[..n]
                .iter()
                .position(|&r| r == p)
                .map(|i| v.counts[i])
        };
        let mut v = Votes::EMPTY;
        v.add(reg(0));
        v.add(reg(0));
        v.add(reg(1));
        assert_eq!(count(&v, reg(0)), Some(2));
        v.remove(reg(0));
        assert_eq!(count(&v, reg(0)), Some(1));
        for i in 2..MAX_GROUP_REGS {
            v.add(reg(i));
        }
        // Full: a ninth register has no entry to take.
        v.add(reg(20));
        assert_eq!(count(&v, reg(20)), None);
        v.remove(reg(20));
        v.remove(reg(1));
        assert_eq!(count(&v, reg(1)), Some(0));
        // Now the zero entry is free for it.
        v.add(reg(20));
        assert_eq!(count(&v, reg(20)), Some(1));
        assert_eq!(count(&v, reg(1)), None);
        v.remove(reg(20));
        v.remove(reg(20));
        assert_eq!(count(&v, reg(20)), Some(0));
    }
}
