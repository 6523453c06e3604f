//! Block splitting, for an interval across blocks that region splitting did not split:
//! a piece per block from its first to its last use instruction, a piece per innermost
//! loop with at least two use instructions when the interval reaches outside it, and the
//! rest to the spiller.

use super::{Placement, Product};
use crate::greedy::Allocator;
use crate::greedy::interval::{IntervalId, LiveInterval, SegmentList, Stage};
use crate::observe::{SplitKind, observe};
use log::debug;
use regalloc2::{Block, Function};

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// One local piece per block, from the first to the last of its use instructions,
    /// where there are at least two (LLVM's `shouldSplitSingleBlock` in spirit: a single
    /// use is served as well by a reload); everything else forms the remainder, which goes
    /// to the spiller. With the slot written at the def, entering a piece costs a reload
    /// and leaving it nothing.
    ///
    /// Except inside loops: the blocks of one innermost loop holding at least two use
    /// instructions of the value become one piece, whole blocks, when the interval
    /// reaches outside that loop. Its uses then share one reload per entry into the
    /// loop (from the outer, ten times colder, block) instead of one per use block, and
    /// its weight (the loop's uses over the loop's size, not the whole range's) is
    /// what lets it evict the short dense values of a hot loop. Only a piece in a loop
    /// nested two deep or more is queued to evict and region-split like a new interval;
    /// one in an outermost loop takes a free register or is block-split again (stage
    /// `Split2`): the full treatment there doubled the time of the 900-block functions
    /// of the Wasm corpus for a share of the gain that the nested ones alone also give.
    /// Such a piece is strictly smaller than the interval (some segment lies outside its
    /// loop), and once it is split again all its segments share one loop, so it gets
    /// per-block pieces: splitting still terminates.
    pub(super) fn try_block_split(&mut self, id: IntervalId) -> bool {
        let mut scratch = self.ctx.block_scratch.take();
        let split = self.block_split_with(&mut scratch, id);
        self.ctx.block_scratch.put(scratch);
        split
    }

    fn block_split_with(&mut self, scratch: &mut BlockScratch, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        let loops = &self.an.loops;
        let BlockScratch {
            keyed,
            per_loop,
            headers,
            loop_groups,
            products,
        } = scratch;
        if per_loop.len() < self.func.num_blocks() {
            per_loop.resize(self.func.num_blocks(), (0, 0));
        }
        // Debug builds go on to check the shortcut against the exit it stands for.
        let ruled_out = self.block_split_ruled_out(iv, per_loop, headers);
        if ruled_out && !cfg!(debug_assertions) {
            return false;
        }
        // Per segment: its block's innermost loop header and its use instructions that
        // need a register.
        keyed.clear();
        keyed.extend(
            self.ctx
                .lists
                .segments(iv)
                .iter()
                .map(|s| (loops.header[self.block_of_point(s.start).index()], 0)),
        );
        let mut carvable = false;
        for (k, uses) in Self::uses_by_segment(&self.ctx.lists, iv) {
            let mut count = 0u32;
            let mut last = u32::MAX;
            for u in uses.iter().filter(|u| self.needs_register(u)) {
                let inst = u.inst.index() as u32;
                if inst != last {
                    count += 1;
                    last = inst;
                }
            }
            carvable |= count >= 2;
            keyed[k].1 = count;
        }
        // Loops (by header) whose segments become one piece: only when the segments do
        // not all share one loop (else the piece would be the whole interval). Summed
        // per header in a table indexed by block (a sort of every segment here was most
        // of a failed attempt on a value through hundreds of blocks).
        loop_groups.clear();
        if keyed.iter().any(|&(h, _)| h != keyed[0].0) {
            headers.clear();
            for &(h, count) in keyed.iter().filter(|(h, _)| h.is_valid()) {
                let e = &mut per_loop[h.index()];
                if e.0 == 0 {
                    headers.push(h);
                }
                *e = (e.0 + 1, e.1 + count);
            }
            headers.sort_unstable();
            for &h in headers.iter() {
                let (segments, uses) = std::mem::take(&mut per_loop[h.index()]);
                if segments >= 2 && uses >= 2 {
                    loop_groups.push((h, segments));
                }
            }
        }
        // No loop piece and no block with two use instructions: nothing to split off.
        if loop_groups.is_empty() && !carvable {
            return false;
        }
        debug_assert!(
            !ruled_out,
            "{id}: block split ruled out by its uses, yet possible"
        );
        products.clear();
        products.extend(loop_groups.iter().map(|&(h, segments)| Product {
            segments: SegmentList::with_capacity(segments as usize),
            stage: if loops.depth[h.index()] >= 2 {
                Stage::New
            } else {
                Stage::Split2
            },
            place: Placement::Queue,
        }));
        let loop_pieces = products.len();
        // Each loop piece's number (plus one) in its header's `per_loop` entry, cleared
        // below: a segment's piece is a table lookup, not a search.
        let mut grouped = 0;
        for (g, &(h, segments)) in loop_groups.iter().enumerate() {
            per_loop[h.index()].0 = g as u32 + 1;
            grouped += segments as usize;
        }
        // The segments outside loop pieces, a few more if some are carved in two.
        let mut rest = SegmentList::with_capacity(iv.segments.len() - grouped);
        let mut at = 0;
        for (k, &s) in self.ctx.lists.segments(iv).iter().enumerate() {
            let (h, use_insts) = keyed[k];
            if h.is_valid() {
                let g = per_loop[h.index()].0;
                if g != 0 {
                    products[g as usize - 1].segments.push(s);
                    continue;
                }
            }
            // `carve_uses` carves nothing from under two use instructions; the segments
            // passed over here leave `uses_from` the same slices for the others.
            if use_insts < 2 {
                self.debug_assert_uncarvable(iv, at, s);
                rest.push(s);
                continue;
            }
            let uses = Self::uses_from(self.ctx.lists.uses(iv), &mut at, &s);
            match self.carve_uses(uses, s, &mut rest) {
                Some(piece) => products.push(Product {
                    segments: smallvec::smallvec![piece],
                    stage: Stage::New,
                    place: Placement::Queue,
                }),
                None => rest.push(s),
            }
        }
        for &(h, _) in loop_groups.iter() {
            per_loop[h.index()].0 = 0;
        }
        if loop_pieces > 0 {
            debug!(
                "{id} ({}): block split keeps {loop_pieces} loops whole",
                iv.vreg
            );
            self.stats.loop_split_pieces += loop_pieces;
        }
        if products.is_empty() || (products.len() < 2 && rest.is_empty()) {
            return false;
        }
        debug!(
            "{id} ({}): block split into {} pieces with uses",
            iv.vreg,
            products.len()
        );
        if !rest.is_empty() {
            products.push(Product {
                segments: rest,
                stage: Stage::Spill,
                place: Placement::Queue,
            });
        }
        self.stats.block_splits += 1;
        observe!(self, self.split_event(id, SplitKind::Block));
        self.split_into(id, products);
        true
    }

    /// True when the uses alone show that `block_split_with` has nothing to split off:
    /// no block with two use instructions that need a register, and no loop with two
    /// such uses. The walk over the segments that decides it exactly costs a failed
    /// attempt on a value through hundreds of blocks far more than its few uses do.
    /// Counts over all uses (a block's for a segment's, every use for a distinct
    /// instruction) can only overstate, so this never rules out a split that would be
    /// made. `per_loop`'s second fields are zero before and after.
    fn block_split_ruled_out(
        &self,
        iv: &LiveInterval,
        per_loop: &mut [(u32, u32)],
        headers: &mut Vec<Block>,
    ) -> bool {
        let mut last: Option<(regalloc2::Inst, Block)> = None;
        let mut found = false;
        headers.clear();
        for u in self
            .ctx
            .lists
            .uses(iv)
            .iter()
            .filter(|u| self.needs_register(u))
        {
            let b = self.an.cfg.block_of(u.inst);
            // Uses are sorted by instruction, so a block's uses are adjacent.
            if last.is_some_and(|(i, lb)| i != u.inst && lb == b) {
                found = true;
                break;
            }
            last = Some((u.inst, b));
            let h = self.an.loops.header[b.index()];
            if h.is_valid() {
                let count = &mut per_loop[h.index()].1;
                if *count == 0 {
                    headers.push(h);
                }
                *count += 1;
                if *count >= 2 {
                    found = true;
                    break;
                }
            }
        }
        for h in headers.drain(..) {
            per_loop[h.index()].1 = 0;
        }
        !found
    }
}

/// The buffers of one block split attempt, kept across attempts and functions.
#[derive(Default)]
pub(crate) struct BlockScratch {
    /// Per block segment: its innermost loop header and its use instructions.
    keyed: Vec<(Block, u32)>,
    /// Per loop header (indexed by block): segments and use instructions summed over the
    /// attempt, then a loop piece's number plus one; all zero between attempts.
    per_loop: Vec<(u32, u32)>,
    /// The headers with an entry in `per_loop`.
    headers: Vec<Block>,
    /// The headers whose segments become one piece, sorted, each with its number of
    /// segments (the piece's size, allocated once).
    loop_groups: Vec<(Block, u32)>,
    /// The split's products.
    products: Vec<Product>,
}
