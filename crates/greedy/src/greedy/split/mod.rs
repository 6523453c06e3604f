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
//!
//! Each stage is a module of its own: `local`, `instruction`, `region` (its labelling
//! search in `descent`) and `block`. This one holds what they share: the stage driver
//! (`try_split`), the walks over an interval's segments and uses, and the split editor.

mod block;
mod descent;
mod instruction;
mod local;
mod region;

pub(crate) use block::BlockScratch;
pub(crate) use local::LocalScratch;
pub(crate) use region::RegionScratch;
#[cfg(test)]
pub(crate) use region::SPARSE_NESTED_REGION_SEGMENTS;

use super::Allocator;
use super::interval::{
    IntervalId, IntervalKind, IntervalLists, LiveInterval, Room, SegmentList, Stage,
};
use super::matrix::fixed_conflict_from;
use crate::Phase;
use crate::analysis::intervals::{Point, Segment, UseSite, point_inst};
use crate::observe::observe;
use crate::search::gallop;
use log::debug;
use regalloc2::{Block, Function, OperandConstraint, PReg};
use smallvec::SmallVec;

/// Candidate registers examined per split attempt, in allocation order. Each region
/// candidate costs a probe of every block segment and up to two descents; on the wasm
/// corpus 6 instead of every register cut 7% of all instructions for +0.16% weighted
/// cost (geomean; summed cost fell), 4 cut 10% for +0.37%.
const MAX_CANDIDATES: usize = 6;
/// Block segments beyond which an interval is not region-split.
pub(crate) const MAX_REGION_SEGMENTS: usize = 256;
/// A split must beat spilling by this factor (LLVM's hysteresis).
const HYSTERESIS: f32 = 0.98;

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
        let segments = self.ctx.lists.segments(iv);
        let first_block = self.block_of_point(segments[0].start);
        let local = segments
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
    fn uses_from<'i>(uses: &'i [UseSite], at: &mut usize, s: &Segment) -> &'i [UseSite] {
        while *at < uses.len() && uses[*at].first() < s.start {
            *at += 1;
        }
        let lo = *at;
        while *at < uses.len() && uses[*at].first() < s.end {
            *at += 1;
        }
        &uses[lo..*at]
    }

    /// The segments of `iv` (by index) that `uses_from` gives uses, walked in order, with
    /// those uses: the same slices as `uses_from` over every segment, but a segment that
    /// ends before the next use is passed over with one comparison (a value through
    /// hundreds of blocks has uses in a few).
    fn uses_by_segment<'i>(
        lists: &'i IntervalLists,
        iv: &LiveInterval,
    ) -> impl Iterator<Item = (usize, &'i [UseSite])> + 'i {
        let segments = lists.segments_at(iv.segments);
        let uses = lists.uses_at(iv.uses);
        let mut at = 0;
        let mut k = 0;
        std::iter::from_fn(move || {
            loop {
                let next = uses.get(at)?.first();
                // `uses_from` gives these nothing and leaves `at` where it is.
                k = gallop_segments(segments, k, next);
                let s = segments.get(k)?;
                k += 1;
                let found = Self::uses_from(uses, &mut at, s);
                if !found.is_empty() {
                    return Some((k - 1, found));
                }
            }
        })
    }

    /// Will the edit builder write `v`'s slot right after its def (`stores_at_def`)? Then
    /// the slot holds the value wherever it is live, and a move into it is dropped.
    pub(crate) fn slot_written_at_def(&self, v: regalloc2::VReg) -> bool {
        match self.an.live.def_inst(v) {
            Some(inst) => !self.func.is_branch(inst) && !self.func.is_ret(inst),
            None => self.an.live.def_block[v.vreg()].is_valid(),
        }
    }

    /// Debug builds: a segment passed over without `carve_uses` (`at` as `uses_from`
    /// would take it) is one it would carve nothing from.
    fn debug_assert_uncarvable(&self, iv: &LiveInterval, at: usize, s: Segment) {
        debug_assert!(
            self.carve_uses(
                Self::uses_from(self.ctx.lists.uses(iv), &mut { at }, &s),
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

    // ----- The split editor -----------------------------------------------------------

    /// Replaces interval `id` by `products` (a partition of its segments, each product's
    /// in order), distributing its uses by point, and assigns or queues each product.
    /// Takes the products out, leaving the vector (a splitter's scratch) empty.
    fn split_into(&mut self, id: IntervalId, products: &mut Vec<Product>) {
        // The old lists are read to distribute the uses before any product is made;
        // the products' lists then take their stretches (`room`).
        let retired = &mut self.ctx.intervals[id];
        let (old_uses, old_segments) = (retired.uses, retired.segments);
        let mut room = IntervalLists::room_of(retired);
        debug_assert!(retired.assigned.is_none());
        retired.retire();
        let (vreg, cascade) = (retired.vreg, retired.cascade);
        debug_assert_eq!(
            products
                .iter()
                .map(|p| p.segments.iter().map(Segment::len).sum::<u32>())
                .sum::<u32>(),
            self.ctx
                .lists
                .segments_at(old_segments)
                .iter()
                .map(Segment::len)
                .sum::<u32>()
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
        found.clear();
        let old_uses = self.ctx.lists.uses_at(old_uses);
        // Where each product's uses end in `found`.
        let mut found_ends: SmallVec<[usize; 8]> = SmallVec::with_capacity(products.len());
        for product in products.iter() {
            // Every split kind builds its products' segments in order, none empty.
            debug_assert!(product.segments.iter().all(|s| s.start < s.end));
            debug_assert!(product.segments.is_sorted());
            // Segments are sorted: the first use reaching into each is found by a cursor.
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
                lo = gallop_uses(old_uses, lo, s.start);
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
                        .filter(|u| s.start <= u.first() && u.first() < s.end)
                        .copied(),
                );
            }
            found_ends.push(found.len());
        }
        let mut lo = 0;
        for (product, hi) in products.drain(..).zip(found_ends) {
            let uses = &found[lo..hi];
            lo = hi;
            if product.segments.is_empty() {
                continue;
            }
            let piece = self.push_main_piece(
                &mut room,
                vreg,
                &product.segments,
                uses,
                product.stage,
                cascade,
            );
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
        self.ctx.scratch_uses = found;
        self.refresh_hint_reg(vreg);
    }

    /// A new `Main` interval of `vreg` (a split product, a spilled value's head) over
    /// `segments`, holding `uses`, its lists written into `room` where they fit: its
    /// runs, fixed conflicts, limit and spill weight computed, and listed among its
    /// value's pieces; neither assigned nor queued.
    pub(crate) fn push_main_piece(
        &mut self,
        room: &mut Room,
        vreg: regalloc2::VReg,
        segments: &[Segment],
        uses: &[UseSite],
        stage: Stage,
        cascade: super::interval::Cascade,
    ) -> IntervalId {
        let lists = &mut self.ctx.lists;
        let segments = lists.add_segments_in(room, segments);
        let runs = lists.add_runs_of_in(room, segments);
        let fixed_conflicts =
            (self.an.intervals.fixed_index).conflicts(lists.segments_at(runs), vreg);
        // Each piece is limited by its own operands only: one `Limit` use must not pin
        // the pieces that do not hold it.
        let limit = use_limit(uses);
        let uses = lists.add_uses_in(room, uses);
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
