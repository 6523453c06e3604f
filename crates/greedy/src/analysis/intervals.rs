//! Live intervals: for each vreg, sorted disjoint segments of program points (each inside
//! one block) plus its use and def sites; for each physical register, the points that
//! fixed-register operands and clobbers reserve on it.
//!
//! Program points are numbered `2 * inst + pos` (`pos` 0 = Before/Early, 1 = After/Late),
//! and a segment `[start, end)` is a half-open range of them. The rules follow regalloc2's:
//! an early use is live at `2i`, a late use at `2i + 1`; in an instruction with a reused
//! input every other early use is live at `2i + 1` too (it must not share the output's
//! register); an early def starts at `2i`, a late def at `2i + 1`, a dead def lives until
//! the next instruction. A value with a fixed-register operand is copied to or from that
//! register around the instruction, so its own segment does not need the register: a
//! fixed def's segment starts at `2i + 2`, after the copy out of the fixed register.

use super::{cfg::Cfg, liveness::Liveness};
use crate::lists::reset_span;
use regalloc2::{
    Block, Function, Inst, Operand, OperandConstraint, OperandKind, OperandPos, PReg, PRegSet,
    RegAllocError, RegClass, VReg,
};
use std::ops::Range;

pub(crate) type Point = u32;

pub(crate) fn before(inst: Inst) -> Point {
    2 * inst.index() as u32
}

/// One past the last point any segment or reservation of `f` can reach (block ends are
/// at `2 * insts`; the slack keeps a fixed def's copy at the last instruction inside).
pub(crate) fn point_bound<F: Function + ?Sized>(f: &F) -> Point {
    Point::try_from(f.num_insts())
        .ok()
        .and_then(|n| n.checked_mul(2))
        .and_then(|p| p.checked_add(2))
        .unwrap_or(Point::MAX)
}

pub(crate) fn point_inst(p: Point) -> Inst {
    Inst::new((p / 2) as usize)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Segment {
    pub start: Point,
    pub end: Point,
}

impl Segment {
    pub fn len(&self) -> u32 {
        self.end - self.start
    }
}

/// One operand of an instruction that mentions a vreg: 16 bytes. Its points are its
/// instruction's early or late one (`operand_points`), so two bits stand for them;
/// the operand lists are among the largest arrays the allocators read and write (the
/// analysis's, greedy's arenas, every split product's), and spelt out as two points
/// and a flag they took 24 bytes an operand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UseSite {
    pub inst: Inst,
    pub operand: Operand,
    /// Index of the operand in `inst_operands(inst)`.
    pub slot: u16,
    /// `FIRST_LATE`, `LAST_LATE`, `REUSED_INPUT`.
    flags: u8,
}

/// `UseSite::first` is the instruction's late point (else its early one).
const FIRST_LATE: u8 = 1;
/// `UseSite::last` is the instruction's late point.
const LAST_LATE: u8 = 2;
/// `UseSite::reused_input`.
const REUSED_INPUT: u8 = 4;

impl UseSite {
    /// Operand `slot` of `inst`, needed over `[first, last]` (each the instruction's
    /// early or late point), the input of a reuse def if `reused_input`.
    pub fn new(
        inst: Inst,
        slot: u16,
        operand: Operand,
        (first, last): (Point, Point),
        reused_input: bool,
    ) -> UseSite {
        let early = before(inst);
        debug_assert!(
            (early..=early + 1).contains(&first) && (first..=early + 1).contains(&last),
            "{inst:?}: operand points {first}..={last} outside the instruction"
        );
        let mut flags = 0;
        if first > early {
            flags |= FIRST_LATE;
        }
        if last > early {
            flags |= LAST_LATE;
        }
        if reused_input {
            flags |= REUSED_INPUT;
        }
        UseSite {
            inst,
            operand,
            slot,
            flags,
        }
    }

    #[inline]
    pub fn is_def(&self) -> bool {
        self.operand.kind() == OperandKind::Def
    }

    /// First point at which the operand's value must be in its allocation.
    #[inline]
    pub fn first(&self) -> Point {
        before(self.inst) + Point::from(self.flags & FIRST_LATE)
    }

    /// Last point at which it must be there.
    #[inline]
    pub fn last(&self) -> Point {
        before(self.inst) + Point::from((self.flags & LAST_LATE) >> 1)
    }

    /// Whether a reuse def of the instruction names this operand (its input): see
    /// `needs_register`. Found while the intervals are built, where the instruction's
    /// operands are at hand.
    #[inline]
    pub fn reused_input(&self) -> bool {
        self.flags & REUSED_INPUT != 0
    }
}

/// Points on a physical register that belong to a fixed operand of `owner` (or to a
/// clobber, `owner` invalid). An interval of the same vreg may overlap its own reservation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reservation {
    pub start: Point,
    pub end: Point,
    pub owner: VReg,
}

/// The reservations of one physical register, sorted and disjoint (so sorted by end as
/// well), with a coarse index: `bucket[k]` is the first reservation ending after point
/// `k * BUCKET_POINTS`. A caller-saved register carries a clobber per call, thousands in a
/// big function, and register probes ask "the first reservation ending after p" for every
/// candidate of every interval; the index turns that search into a lookup and a short scan.
/// A list of at most `SHORT_RESERVATIONS` has none (`bucket` empty).
#[derive(Default)]
pub(crate) struct RegReservations {
    list: Vec<Reservation>,
    bucket: Vec<u32>,
}

/// Reservations up to which a register's list gets no index (`first_ending_after` scans
/// them, never past its gallop threshold).
const SHORT_RESERVATIONS: usize = 8;

/// Points per bucket of the reservation index (64 instructions).
const BUCKET_POINTS: u32 = 128;

/// Points per bucket of `FixedIndex` (4 instructions): each probe binary-searches its
/// bucket's entries (every register's reservations together), and the index has one
/// entry per bucket, not per register.
const FIXED_BUCKET_POINTS: u32 = 8;

impl std::ops::Deref for RegReservations {
    type Target = [Reservation];
    fn deref(&self) -> &[Reservation] {
        &self.list
    }
}

impl RegReservations {
    /// The index of the first reservation at or after `lo` that ends after point `p`.
    pub fn first_ending_after(&self, lo: usize, p: Point) -> usize {
        let list = &self.list;
        let n = list.len();
        let mut i = match self.bucket.get((p / BUCKET_POINTS) as usize) {
            Some(&b) => lo.max(b as usize),
            // A short list has no index: the scan below covers it.
            None if self.bucket.is_empty() => lo,
            None => lo.max(n),
        };
        // Within a bucket the scan is short (one clobber per instruction at most); past a
        // few steps it gallops, so a caller-chosen `lo` far behind stays cheap.
        let mut steps = 0;
        while i < n && list[i].end <= p {
            i += 1;
            steps += 1;
            if steps == 8 {
                return crate::search::gallop(list, i, |r| r.end <= p);
            }
        }
        i
    }

    fn build_index(&mut self, points: Point) {
        let list = &self.list;
        if list.len() <= SHORT_RESERVATIONS {
            // An index over every bucket of the function would cost more than the scans.
            self.bucket.clear();
            return;
        }
        bucket_index(&mut self.bucket, points, BUCKET_POINTS, list.len(), |i| {
            list[i].end
        });
    }
}

/// Fills `bucket` so that `bucket[k]` is the first of `len` items whose `reach` (non-
/// decreasing in the index) passes point `k * per`, for every bucket of `per` points up
/// to `points`; empty when there are no items.
fn bucket_index(
    bucket: &mut Vec<u32>,
    points: Point,
    per: Point,
    len: usize,
    reach: impl Fn(usize) -> Point,
) {
    bucket.clear();
    if len == 0 {
        return;
    }
    let buckets = points.div_ceil(per) as usize + 1;
    let mut i = 0;
    for k in 0..buckets {
        let p = k as u32 * per;
        while i < len && reach(i) <= p {
            i += 1;
        }
        bucket.push(i as u32);
    }
}

/// Every reservation of a function in one list sorted by start, a register set per
/// entry (a call's clobbers are one entry): answers "which registers does a fixed
/// reservation of another value block anywhere over these runs" in one walk, where
/// asking each register's list costs a search per register.
#[derive(Default)]
pub(crate) struct FixedIndex {
    entries: Vec<FixedEntry>,
    /// The longest reservation: an entry starting this far before a run cannot reach it.
    max_len: Point,
    /// Every register with a reservation: once an interval conflicts with all of them,
    /// the rest of its runs cannot add one.
    all: PRegSet,
    /// `bucket[k]`: the first entry that can reach past point `k * FIXED_BUCKET_POINTS` (start
    /// plus `max_len` beyond it). A run starting in bucket `k` has its first candidate
    /// entry between `bucket[k]` and `bucket[k + 1]`, so its search spans one bucket, not
    /// the whole function.
    bucket: Vec<u32>,
}

#[derive(Clone, Copy)]
struct FixedEntry {
    start: Point,
    end: Point,
    /// Invalid for clobbers.
    owner: VReg,
    regs: PRegSet,
}

impl FixedIndex {
    fn clear(&mut self) {
        self.entries.clear();
        self.max_len = 0;
        self.all = PRegSet::empty();
        self.bucket.clear();
    }

    fn push(&mut self, start: Point, end: Point, owner: VReg, regs: PRegSet) {
        self.entries.push(FixedEntry {
            start,
            end,
            owner,
            regs,
        });
        self.max_len = self.max_len.max(end.saturating_sub(start));
        self.all.union_from(regs);
    }

    /// Sorts the entries by start (blocks and instructions are scanned last to first, so
    /// the entries arrive nearly reversed), then indexes them up to point `points`.
    fn finish(&mut self, points: Point) {
        self.entries.reverse();
        if !self.entries.is_sorted_by_key(|e| e.start) {
            self.entries.sort_unstable_by_key(|e| e.start);
        }
        let mut bucket = std::mem::take(&mut self.bucket);
        bucket_index(
            &mut bucket,
            points,
            FIXED_BUCKET_POINTS,
            self.entries.len(),
            |i| self.reach(&self.entries[i]),
        );
        self.bucket = bucket;
    }

    /// No run starting at or after this point can overlap `e`.
    fn reach(&self, e: &FixedEntry) -> Point {
        e.start.saturating_add(self.max_len)
    }

    /// The first entry at or after `lo` that can reach past point `p` (`lo` at most that
    /// entry).
    fn first_reaching_past(&self, lo: usize, p: Point) -> usize {
        let k = (p / FIXED_BUCKET_POINTS) as usize;
        let n = self.entries.len();
        let hi = self.bucket.get(k + 1).map_or(n, |&b| b as usize);
        let lo = self
            .bucket
            .get(k)
            .map_or(n, |&b| b as usize)
            .max(lo)
            .min(hi);
        lo + self.entries[lo..hi].partition_point(|e| self.reach(e) <= p)
    }

    /// The registers on which a reservation not owned by `owner` overlaps one of `runs`
    /// (sorted and disjoint): exactly those `fixed_conflict` answers true for.
    pub fn conflicts(&self, runs: &[Segment], owner: VReg) -> PRegSet {
        let mut regs = PRegSet::empty();
        let mut i = 0;
        for r in runs {
            // Entries before `i` cannot reach past an earlier run's start, so not into
            // this run; if the one at `i` starts after this run ends, so do all after it
            // (they are sorted by start), and the run needs no search.
            match self.entries.get(i) {
                None => break,
                Some(e) if e.start >= r.end => continue,
                Some(_) => {}
            }
            // Entries starting at or before `r.start - max_len` end by `r.start`.
            i = self.first_reaching_past(i, r.start);
            debug_assert_eq!(
                i,
                self.entries
                    .partition_point(|e| e.start.saturating_add(self.max_len) <= r.start)
            );
            for e in self.entries[i..].iter().take_while(|e| e.start < r.end) {
                if e.end > r.start && e.owner != owner {
                    regs.union_from(e.regs);
                    if regs == self.all {
                        return regs;
                    }
                }
            }
        }
        regs
    }
}

/// `op.as_fixed_nonallocatable()`, decoding the constraint only for an operand naming
/// `VReg::MAX` (only a fixed non-allocatable operand does): the decode is a chain of
/// tests on its bits, and almost every operand is an ordinary one. The vreg is read from
/// the low 32 bits of the encoding (regalloc2's layout; checked against the decoded
/// answer in debug builds), as `op.vreg()` decodes the class too, panic check included.
#[inline]
pub(crate) fn fixed_nonallocatable(op: Operand) -> Option<PReg> {
    let named = op.bits() as u32 as usize;
    debug_assert_eq!(named, op.vreg().vreg());
    if named != VReg::MAX {
        debug_assert_eq!(op.as_fixed_nonallocatable(), None);
        return None;
    }
    op.as_fixed_nonallocatable()
}

/// The operands some reuse def of an instruction names, as bits by operand index (a
/// reuse constraint names one of the first 32).
fn reused_inputs(ops: &[Operand]) -> u32 {
    ops.iter().fold(0, |m, op| match op.constraint() {
        OperandConstraint::Reuse(j) => m | 1u32.checked_shl(j as u32).unwrap_or(0),
        _ => m,
    })
}

/// The vreg an instruction's reuse constraint copies from, if any.
#[inline]
pub(crate) fn reused_vreg(ops: &[Operand]) -> Option<VReg> {
    ops.iter().find_map(|op| match op.constraint() {
        OperandConstraint::Reuse(j) => Some(ops[j].vreg()),
        _ => None,
    })
}

/// Does this operand need its value in a register of its own? A fixed-register operand
/// is served by a copy to or from its register, and `Any` / `Stack` accept the slot; the
/// reused input of a two-address instruction is read from the output's register, which
/// the reuse copy fills.
pub(crate) fn needs_register<F: Function + ?Sized>(func: &F, u: &UseSite) -> bool {
    debug_assert_eq!(
        u.reused_input(),
        func.inst_operands(u.inst)
            .iter()
            .any(|o| o.constraint() == OperandConstraint::Reuse(u.slot as usize))
    );
    match u.operand.constraint() {
        OperandConstraint::Reg | OperandConstraint::Limit(_) => {
            u.operand.kind() == OperandKind::Def || !u.reused_input()
        }
        OperandConstraint::Reuse(_) => true,
        OperandConstraint::Any | OperandConstraint::Stack | OperandConstraint::FixedReg(_) => false,
    }
}

/// Points `[first, last]` at which `op` of `inst` needs its value in its allocation.
#[inline]
pub(crate) fn operand_points(inst: Inst, op: Operand, reused: Option<VReg>) -> (Point, Point) {
    let b = before(inst);
    match (op.kind(), op.pos()) {
        (OperandKind::Use, OperandPos::Late) => (b, b + 1),
        (OperandKind::Use, OperandPos::Early) => {
            if reused.is_some_and(|r| r != op.vreg()) {
                (b, b + 1)
            } else {
                (b, b)
            }
        }
        (OperandKind::Def, OperandPos::Early) => (b, b + 1),
        (OperandKind::Def, OperandPos::Late) => (b + 1, b + 1),
    }
}

#[derive(Default)]
pub(crate) struct LiveIntervals {
    /// Per vreg: range into `segments`. Each vreg owns room for one segment per block it
    /// is live into plus one for its defining block, and its range is the tail of that
    /// room (the slot before it may be unused). A vreg the function never mentions has
    /// no room: `(0, 0)`, as in `vreg_uses`.
    vreg_segments: Vec<(u32, u32)>,
    segments: Vec<Segment>,
    /// Per vreg: range into `uses` (sorted by instruction, then slot).
    vreg_uses: Vec<(u32, u32)>,
    /// The vregs the last `build` gave room: between builds, the only entries of
    /// `vreg_segments` and `vreg_uses` not `(0, 0)`. Both tables only grow, and are
    /// reset through this list rather than whole (most vregs are never mentioned).
    laid_out: Vec<u32>,
    uses: Vec<UseSite>,
    /// Per physical register index: reservations sorted by start, disjoint unless they
    /// share an owner.
    pub fixed: Vec<RegReservations>,
    /// The registers with reservations: a function touches a few of the 256 indices,
    /// and only those are cleared and indexed.
    fixed_used: PRegSet,
    /// The same reservations across all registers, for "which registers can this
    /// interval never take" in one pass.
    pub fixed_index: FixedIndex,
    /// The instructions that clobber registers (calls), ascending.
    calls: Vec<Inst>,
    open_end: Vec<Point>,
    open_list: Vec<u32>,
    /// Per vreg: the stamp of the instruction that last defined it (`def_segment`).
    def_stamp: Vec<u32>,
    /// Per vreg: the stamp of the last block it was found live out of.
    out_stamp: Vec<u32>,
    /// The stamps of this build are `stamp_base` plus an instruction or block index
    /// (blocks are fewer), up to `stamp_end`; those of earlier builds lie below, so the
    /// stamp tables need no clearing between builds.
    stamp_base: u32,
    stamp_end: u32,
}

const NOT_OPEN: Point = Point::MAX;

impl LiveIntervals {
    #[inline]
    pub fn segments_of(&self, v: VReg) -> &[Segment] {
        let (a, b) = self.vreg_segments[v.vreg()];
        &self.segments[a as usize..b as usize]
    }

    /// Does an instruction in `from..to` clobber registers (a call)?
    pub fn call_between(&self, from: Inst, to: Inst) -> bool {
        let k = self.calls.partition_point(|&i| i < from);
        self.calls.get(k).is_some_and(|&i| i < to)
    }

    #[inline]
    pub fn uses_of(&self, v: VReg) -> &[UseSite] {
        let (a, b) = self.vreg_uses[v.vreg()];
        &self.uses[a as usize..b as usize]
    }

    pub fn build<F: Function + ?Sized>(
        &mut self,
        f: &F,
        _cfg: &Cfg,
        live: &Liveness,
    ) -> Result<(), RegAllocError> {
        let nv = f.num_vregs();
        // Blocks and instructions are scanned last to first, and an instruction's
        // operands last to first: each vreg's segments (one per block it is live in) and
        // use sites arrive in strictly decreasing order, so each is written just before
        // the previous one, from the end of the vreg's room, and comes out sorted. The
        // room is known up front: the live-in blocks and operands liveness counted. Only
        // a vreg the function mentions has any; every other keeps the empty `(0, 0)`.
        // The two tables grow together: cut to one length, one bounds check covers both.
        let n = self.vreg_segments.len();
        let (vreg_segments, vreg_uses) = (&mut self.vreg_segments[..n], &mut self.vreg_uses[..n]);
        for &v in &self.laid_out {
            vreg_segments[v as usize] = (0, 0);
            vreg_uses[v as usize] = (0, 0);
        }
        debug_assert!(
            self.vreg_segments
                .iter()
                .chain(&self.vreg_uses)
                .all(|&r| r == (0, 0))
        );
        if self.vreg_segments.len() < nv {
            self.vreg_segments.resize(nv, (0, 0));
            self.vreg_uses.resize(nv, (0, 0));
        }
        self.laid_out.clear();
        let (mut end, mut uses_end) = (0u32, 0u32);
        let n = self.vreg_segments.len();
        let (vreg_segments, vreg_uses) = (&mut self.vreg_segments[..n], &mut self.vreg_uses[..n]);
        for v in live.mentioned() {
            end += live.livein_count[v] + 1;
            vreg_segments[v] = (end, end);
            uses_end += live.operand_count[v];
            vreg_uses[v] = (uses_end, uses_end);
            self.laid_out.push(v as u32);
        }
        // Only the slots `put_segment` writes are ever read, so what the last function
        // left in them needs no clearing, and a longer table than this function needs
        // is kept as it is (cutting it would make the next larger function refill it).
        if self.segments.len() < end as usize {
            self.segments
                .resize(end as usize, Segment { start: 0, end: 0 });
        }
        // Every slot is written by `put_site` (each vreg's room is exactly its
        // operands) before it is read.
        if self.uses.len() < uses_end as usize {
            self.uses.resize(
                uses_end as usize,
                UseSite {
                    inst: Inst::invalid(),
                    slot: 0,
                    operand: Operand::any_use(VReg::new(0, RegClass::Int)),
                    flags: 0,
                },
            );
        }
        // Every block's scan closes what it opened, so the table is all `NOT_OPEN`
        // between builds: it only grows.
        debug_assert!(self.open_end.iter().all(|&e| e == NOT_OPEN));
        if self.open_end.len() < nv {
            self.open_end.resize(nv, NOT_OPEN);
        }
        if self.def_stamp.len() < nv {
            self.def_stamp.resize(nv, u32::MAX);
            self.out_stamp.resize(nv, u32::MAX);
        }
        let end = u32::try_from(f.num_insts())
            .ok()
            .and_then(|ni| self.stamp_end.checked_add(ni))
            .filter(|&e| e < u32::MAX);
        (self.stamp_base, self.stamp_end) = match end {
            Some(e) => (self.stamp_end, e),
            None => {
                // Out of stamps: start again from clean tables.
                self.def_stamp.fill(u32::MAX);
                self.out_stamp.fill(u32::MAX);
                (0, u32::try_from(f.num_insts()).unwrap_or(u32::MAX - 1))
            }
        };
        for p in std::mem::replace(&mut self.fixed_used, PRegSet::empty()) {
            let r = &mut self.fixed[p.index()];
            r.list.clear();
            r.bucket.clear();
        }
        self.fixed
            .resize_with(PReg::NUM_INDEX, RegReservations::default);
        self.fixed_index.clear();
        self.calls.clear();

        // Blocks are scanned last to first, so the cursor into the (ordered) list of
        // instructions with a reuse or fixed-register operand only moves back.
        let mut copy_or_fixed = live.copy_or_fixed_insts.len();
        for b in (0..f.num_blocks()).rev() {
            let block = Block::new(b);
            self.scan_block(f, live, block, &mut copy_or_fixed)?;
        }

        debug_assert!({
            let (mut prev_end, mut prev_uses_end) = (0, 0);
            live.mentioned().all(|v| {
                let (a, b) = self.vreg_segments[v];
                let (ua, ub) = self.vreg_uses[v];
                let ok = a >= prev_end
                    && b - prev_end == live.livein_count[v] + 1
                    && self.segments[a as usize..b as usize].is_sorted_by(|x, y| x.start < y.start)
                    && ua == prev_uses_end
                    && self.uses[ua as usize..ub as usize]
                        .is_sorted_by_key(|u| (u.inst.index(), u.slot));
                (prev_end, prev_uses_end) = (b, ub);
                ok
            })
        });

        let points = f
            .num_insts()
            .checked_mul(2)
            .and_then(|p| Point::try_from(p).ok())
            .unwrap_or(Point::MAX);
        self.fixed_index.finish(points);
        // Blocks and their instructions were walked last to first.
        self.calls.reverse();
        debug_assert!(self.calls.is_sorted());
        for p in self.fixed_used {
            let reservations = &mut self.fixed[p.index()];
            let list = &mut reservations.list;
            if list.len() < 2 {
                reservations.build_index(points);
                continue;
            }
            // Blocks and instructions were scanned last to first, so the list is nearly
            // reversed: turned around it is nearly sorted, which the sort passes over in
            // one walk, where a short reversed list costs it a quadratic insertion sort.
            list.reverse();
            list.sort_unstable_by_key(|r| (r.start, r.end, r.owner.bits()));
            // Two values (or a value and a clobber) pinned to one register at the same
            // point: no allocation can satisfy that.
            let mut clash = false;
            list.dedup_by(|r, prev| {
                let overlaps = r.start < prev.end;
                if overlaps {
                    clash |= r.owner != prev.owner;
                    prev.end = prev.end.max(r.end);
                }
                overlaps
            });
            if clash {
                return Err(RegAllocError::TooManyLiveRegs);
            }
            reservations.build_index(points);
        }
        Ok(())
    }

    // Out of line: inlined, the phases of the analysis cost more instructions together.
    #[inline(never)]
    fn scan_block<F: Function + ?Sized>(
        &mut self,
        f: &F,
        live: &Liveness,
        block: Block,
        copy_or_fixed: &mut usize,
    ) -> Result<(), RegAllocError> {
        let insns = f.block_insns(block);
        let start = before(insns.first());
        let end = before(insns.last()) + 2;
        let bstamp = self.stamp_base + block.index() as u32;
        self.open_list.clear();

        let last = insns.last();
        // A value live out of the block is live to its end whatever the block does with
        // it: its segment is the whole block, cut short by its def if an instruction
        // here defines it (`def_segment`). Its uses here need no tracking; `out_stamp`
        // tells them apart.
        // Slices, not the vectors: their lengths and pointers stay in registers over
        // every live-out value, not reloaded after each write.
        // Both per-vreg tables cut to the function's vregs: one bounds check covers both.
        let nv = f.num_vregs();
        let (out_stamp, vreg_segments, segments) = (
            &mut self.out_stamp[..nv],
            &mut self.vreg_segments[..nv],
            &mut self.segments[..],
        );
        for (i, &succ) in f.block_succs(block).iter().enumerate() {
            for &v in &live.livein[succ.index()] {
                let vi = v.vreg();
                // The first successor's live-ins are distinct, and none is stamped yet.
                if i > 0 && out_stamp[vi] == bstamp {
                    continue;
                }
                out_stamp[vi] = bstamp;
                put_segment_in(vreg_segments, segments, vi, Segment { start, end });
            }
        }
        if f.is_branch(last) {
            for i in 0..f.block_succs(block).len() {
                for &arg in f.branch_blockparams(block, last, i) {
                    if self.out_stamp[arg.vreg()] != bstamp {
                        self.open_until(arg.vreg(), end);
                    }
                }
            }
        }

        for inst in insns.iter().rev() {
            let ops = f.inst_operands(inst);
            let b = before(inst);
            let clobbers = f.inst_clobbers(inst);
            // Most instructions clobber nothing, and iterating an empty set still walks
            // its words.
            if clobbers != PRegSet::empty() {
                self.calls.push(inst);
                self.fixed_index
                    .push(b + 1, b + 2, VReg::invalid(), clobbers);
                // `reserve` for each, without its per-register owner test and set update.
                self.fixed_used.union_from(clobbers);
                let clobber = Reservation {
                    start: b + 1,
                    end: b + 2,
                    owner: VReg::invalid(),
                };
                for p in clobbers {
                    self.fixed[p.index()].list.push(clobber);
                }
            }
            let listed = &live.copy_or_fixed_insts;
            while *copy_or_fixed > 0 && listed[*copy_or_fixed - 1] > inst {
                *copy_or_fixed -= 1;
            }
            let plain = *copy_or_fixed == 0 || listed[*copy_or_fixed - 1] != inst;
            if plain {
                // No reuse and no fixed register: a def and a use in one instruction
                // are of different vregs and reserve nothing, so the uses go with the
                // sites (last to first, as the sites need) and only the defs take a
                // walk of their own (first to last, so that of two defs of one vreg
                // the first decides, as below).
                for (k, &op) in ops.iter().enumerate().rev() {
                    if fixed_nonallocatable(op).is_some() {
                        continue;
                    }
                    let (first, lastp) = operand_points(inst, op, None);
                    self.put_site(inst, k, op, (first, lastp), false);
                    let v = op.vreg().vreg();
                    if op.kind() == OperandKind::Use && self.out_stamp[v] != bstamp {
                        self.open_until(v, lastp + 1);
                    }
                }
                for &op in ops {
                    if op.kind() == OperandKind::Def && fixed_nonallocatable(op).is_none() {
                        let (first, _) = operand_points(inst, op, None);
                        self.def_segment(op.vreg().vreg(), inst, first, false, end, bstamp);
                    }
                }
                continue;
            }
            let reused = reused_vreg(ops);
            let inputs = reused_inputs(ops);
            for (k, &op) in ops.iter().enumerate().rev() {
                if fixed_nonallocatable(op).is_none() {
                    let points = operand_points(inst, op, reused);
                    let input = inputs.checked_shr(k as u32).is_some_and(|m| m & 1 != 0);
                    self.put_site(inst, k, op, points, input);
                }
            }
            for &op in ops {
                if op.kind() != OperandKind::Def || fixed_nonallocatable(op).is_some() {
                    continue;
                }
                let v = op.vreg();
                let (first, _) = operand_points(inst, op, reused);
                let fixed = if let OperandConstraint::FixedReg(p) = op.constraint() {
                    self.reserve(
                        p,
                        Reservation {
                            start: first,
                            end: b + 2,
                            owner: v,
                        },
                    );
                    true
                } else {
                    false
                };
                self.def_segment(v.vreg(), inst, first, fixed, end, bstamp);
            }
            for &op in ops {
                if op.kind() != OperandKind::Use || fixed_nonallocatable(op).is_some() {
                    continue;
                }
                let v = op.vreg();
                let (first, lastp) = operand_points(inst, op, reused);
                if let OperandConstraint::FixedReg(p) = op.constraint() {
                    self.reserve(
                        p,
                        Reservation {
                            start: first,
                            end: lastp + 1,
                            owner: v,
                        },
                    );
                }
                if self.out_stamp[v.vreg()] != bstamp {
                    self.open_until(v.vreg(), lastp + 1);
                }
            }
        }

        for i in 0..self.open_list.len() {
            let v = self.open_list[i] as usize;
            let e = std::mem::replace(&mut self.open_end[v], NOT_OPEN);
            if e != NOT_OPEN {
                self.put_segment(v, Segment { start, end: e });
            }
        }
        Ok(())
    }
}

impl LiveIntervals {
    fn reserve(&mut self, p: PReg, r: Reservation) {
        if r.owner != VReg::invalid() {
            let mut one = PRegSet::empty();
            one.add(p);
            self.fixed_index.push(r.start, r.end, r.owner, one);
        }
        self.fixed_used.add(p);
        self.fixed[p.index()].list.push(r);
    }

    /// Writes `op`'s site (operand `k` of `inst`, needed over `[first, last]`, the
    /// input of a reuse def if `reused_input`) just before its vreg's previous one.
    #[inline]
    fn put_site(
        &mut self,
        inst: Inst,
        k: usize,
        op: Operand,
        points: (Point, Point),
        reused_input: bool,
    ) {
        let site = UseSite::new(inst, k as u16, op, points, reused_input);
        let r = &mut self.vreg_uses[op.vreg().vreg()];
        r.0 -= 1;
        self.uses[r.0 as usize] = site;
    }

    /// A use of `v` in the block being scanned needs it until `until`: opens its
    /// segment (closed by its def, or at the block start) or stretches it.
    #[inline]
    fn open_until(&mut self, v: usize, until: Point) {
        if self.open_end[v] == NOT_OPEN {
            self.open_end[v] = until;
            self.open_list.push(v as u32);
        } else {
            self.open_end[v] = self.open_end[v].max(until);
        }
    }

    /// The segment a def of `v` at `inst` makes: from its first point (after the copy
    /// out of the register for a `fixed` def) to the end of the block `end` when `v` is
    /// live out (block stamp `bstamp`), else to its last use below in the block, else
    /// (a dead def) to the next instruction. Later defs of `v` in the same instruction
    /// add nothing.
    #[inline]
    fn def_segment(
        &mut self,
        v: usize,
        inst: Inst,
        first: Point,
        fixed: bool,
        end: Point,
        bstamp: u32,
    ) {
        let istamp = self.stamp_base + inst.index() as u32;
        if self.def_stamp[v] == istamp {
            return;
        }
        self.def_stamp[v] = istamp;
        let after = before(inst) + 2;
        let seg_start = if fixed { after } else { first };
        if self.out_stamp[v] == bstamp {
            // Live out: the block's whole segment, the last one put for `v` (its uses
            // here open none), now starts at the def, or goes if nothing is left.
            let r = &mut self.vreg_segments[v];
            debug_assert_eq!(self.segments[r.0 as usize].end, end);
            if seg_start < end {
                self.segments[r.0 as usize].start = seg_start;
            } else {
                r.0 += 1;
            }
            return;
        }
        let open_end = std::mem::replace(&mut self.open_end[v], NOT_OPEN);
        if open_end != NOT_OPEN {
            if seg_start < open_end {
                self.put_segment(
                    v,
                    Segment {
                        start: seg_start,
                        end: open_end,
                    },
                );
            }
        } else if !fixed {
            self.put_segment(
                v,
                Segment {
                    start: seg_start,
                    end: after,
                },
            );
        }
    }

    /// Writes `v`'s next segment (in decreasing order) just before its previous one.
    #[inline]
    fn put_segment(&mut self, v: usize, s: Segment) {
        put_segment_in(&mut self.vreg_segments, &mut self.segments, v, s);
    }
}

/// `LiveIntervals::put_segment` on the tables themselves.
#[inline]
fn put_segment_in(
    vreg_segments: &mut [(u32, u32)],
    segments: &mut [Segment],
    v: usize,
    s: Segment,
) {
    let r = &mut vreg_segments[v];
    r.0 -= 1;
    segments[r.0 as usize] = s;
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
    // Callers pass runs (already merged); joining touching segments would not change
    // the answer anyway.
    let mut lo = 0;
    segments
        .iter()
        .any(|&s| fixed_conflict_from(reservations, &mut lo, s, owner))
}

/// `fixed_conflict` for one segment, for callers probing sorted segments in order:
/// `lo` carries the search position from one call to the next.
#[inline]
pub(crate) fn fixed_conflict_from(
    reservations: &RegReservations,
    lo: &mut usize,
    seg: Segment,
    owner: VReg,
) -> bool {
    // Probes come segment by segment and reservations are sparse: mostly the one at `lo`
    // still ends after the segment starts (so the search would stay there) and starts
    // after it ends, and the answer is no without a search.
    if let Some(r) = reservations.get(*lo)
        && r.end > seg.start
        && r.start >= seg.end
    {
        debug_assert!({
            let mut searched = *lo;
            !fixed_conflict_search(reservations, &mut searched, seg, owner) && searched == *lo
        });
        return false;
    }
    fixed_conflict_search(reservations, lo, seg, owner)
}

#[inline(never)]
fn fixed_conflict_search(
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

/// Turns `(vreg, item)` pairs into per-vreg ranges of a flat vector (a counting sort by
/// vreg, keeping the pairs' order within a vreg), then lets `order` sort each vreg's run.
/// Items are unique per vreg under the key `order` sorts by, so the result does not
/// depend on the order they came in.
pub(crate) fn group<T: Copy>(
    raw: &[(u32, T)],
    nv: usize,
    ranges: &mut Vec<(u32, u32)>,
    out: &mut Vec<T>,
    order: impl FnMut(&mut [T]),
) {
    group_keys(raw, 0..nv, 0..nv, ranges, out, order);
}

/// `group` where every vreg of `raw` is in `keys` (increasing), all of them in `span`:
/// the walks over the ranges visit only those, every other vreg of `span` gets `(0, 0)`,
/// empty, and entries outside `span` are stale. Most vregs a function numbers have no
/// item.
pub(crate) fn group_keys<T: Copy>(
    raw: &[(u32, T)],
    span: Range<usize>,
    keys: impl Iterator<Item = usize> + Clone,
    ranges: &mut Vec<(u32, u32)>,
    out: &mut Vec<T>,
    mut order: impl FnMut(&mut [T]),
) {
    reset_span(ranges, span.end, span, (0, 0));
    for &(v, _) in raw {
        ranges[v as usize].1 += 1;
    }
    // Each range becomes (start, start): `end` then advances as the items are placed.
    let mut start = 0;
    for v in keys.clone() {
        let r = &mut ranges[v];
        let n = r.1;
        *r = (start, start);
        start += n;
    }
    debug_assert_eq!(start as usize, raw.len(), "an item's vreg is not a key");
    out.clear();
    let Some(&(_, first)) = raw.first() else {
        return;
    };
    out.resize(raw.len(), first);
    for &(v, item) in raw {
        let r = &mut ranges[v as usize];
        out[r.1 as usize] = item;
        r.1 += 1;
    }
    for v in keys {
        let (a, b) = ranges[v];
        if b - a > 1 {
            order(&mut out[a as usize..b as usize]);
        }
    }
}

#[cfg(test)]
impl LiveIntervals {
    /// Leaves no stamps for the next build, which must then clear the stamp tables and
    /// start again from zero.
    pub(crate) fn exhaust_stamps(&mut self) {
        self.stamp_end = u32::MAX - 1;
    }
}
