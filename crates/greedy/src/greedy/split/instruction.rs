//! Instruction splitting, for an interval inside one block whose uses pin it to fixed
//! registers: a piece around each use instruction and each gap between them, all bound
//! for the spiller. Also `split_off_stack_uses`, which keeps a new value in its slot
//! around its `Stack` operands and allocates the rest.

use super::{Placement, Product};
use crate::analysis::intervals::{Segment, UseSite, point_inst};
use crate::greedy::Allocator;
use crate::greedy::interval::{IntervalId, SegmentList, Stage};
use crate::observe::{SplitKind, observe};
use log::debug;
use regalloc2::{Function, OperandConstraint};

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// For an interval inside one block whose uses pin it to fixed registers: a piece
    /// around each use instruction and the gaps between them, all bound for the spiller
    /// (each piece may still find a register when dequeued).
    pub(super) fn try_instruction_split(&mut self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        // Fixed operands are served by a copy from wherever the value lives, a reload as
        // cheap as any piece's: the split only pays where some operand needs a register
        // of its own, which a piece around it may find.
        if iv.segments.len() != 1
            || !self
                .ctx
                .lists
                .uses(iv)
                .iter()
                .any(|u| matches!(u.operand.constraint(), OperandConstraint::FixedReg(_)))
            || !self
                .ctx
                .lists
                .uses(iv)
                .iter()
                .any(|u| self.needs_register(u))
        {
            return false;
        }
        let seg = self.ctx.lists.segments(iv)[0];
        // The local splitter's scratch (this split follows a local one that failed).
        let mut scratch = self.ctx.local_scratch.take();
        let split = self.instruction_split_with(&mut scratch.cuts, &mut scratch.products, id, seg);
        self.ctx.local_scratch.put(scratch);
        split
    }

    fn instruction_split_with(
        &mut self,
        cuts: &mut Vec<u32>,
        products: &mut Vec<Product>,
        id: IntervalId,
        seg: Segment,
    ) -> bool {
        let iv = &self.ctx.intervals[id];
        cuts.clear();
        for u in self.ctx.lists.uses(iv) {
            for c in [2 * u.inst.index() as u32, 2 * u.inst.index() as u32 + 2] {
                if c > seg.start && c < seg.end && cuts.last() != Some(&c) {
                    cuts.push(c);
                }
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        if cuts.is_empty() {
            return false;
        }
        products.clear();
        let mut start = seg.start;
        for &c in cuts.iter().chain(std::iter::once(&seg.end)) {
            products.push(Product {
                segments: smallvec::smallvec![Segment { start, end: c }],
                stage: Stage::Spill,
                place: Placement::Queue,
            });
            start = c;
        }
        debug!(
            "{id} ({}): instruction split into {} pieces",
            iv.vreg,
            products.len()
        );
        self.stats.instruction_splits += 1;
        observe!(self, self.split_event(id, SplitKind::Instruction));
        self.split_into(id, products);
        true
    }

    /// For a value just made whose operands include `Stack` ones: a piece in the slot
    /// around each instruction with such an operand (stage `Done`), and the rest of the
    /// value as one piece allocated as any other. The slot is written at the def
    /// (`stores_at_def`), so entering a slot piece costs nothing and leaving one a
    /// reload, where spilling the whole value reloads at every register use: done only
    /// when those reloads weigh more (by block frequency) than one after each piece in
    /// the slot; otherwise (false) the value is spilled whole as before.
    pub(crate) fn split_off_stack_uses(&mut self, id: IntervalId) -> bool {
        let iv = &self.ctx.intervals[id];
        if !self.slot_written_at_def(iv.vreg) {
            return false;
        }
        // Instruction windows [2i, 2i + 2) of the `Stack` operands, in order (uses are
        // sorted by instruction).
        let mut windows: SegmentList = SegmentList::new();
        for u in self.ctx.lists.uses(iv) {
            let w = Segment {
                start: 2 * u.inst.index() as u32,
                end: 2 * u.inst.index() as u32 + 2,
            };
            if u.operand.constraint() == OperandConstraint::Stack && windows.last() != Some(&w) {
                windows.push(w);
            }
        }
        // Spilled whole, the value is reloaded before each instruction outside the
        // windows that reads it in a register, and a fixed-register use or a reused
        // input is served by a load where a register would serve it by a move (half a
        // reload); split, it is reloaded at most once after each window it outlives (its
        // def and the windows' own operands cost the same either way). Instructions and
        // windows are both in order: one cursor over the windows.
        let freq_at = |inst: regalloc2::Inst| self.an.freq.of(self.an.cfg.block_of(inst));
        let mut reloads_whole = 0.0f32;
        let mut w = 0;
        for group in self.ctx.lists.uses(iv).chunk_by(|a, b| a.inst == b.inst) {
            let inst = group[0].inst;
            let start = 2 * inst.index() as u32;
            while windows.get(w).is_some_and(|win| win.start < start) {
                w += 1;
            }
            if windows.get(w).is_some_and(|win| win.start == start) {
                continue;
            }
            let saves = |u: &UseSite| {
                if u.is_def() {
                    0.0
                } else if self.needs_register(u) {
                    1.0
                } else if matches!(u.operand.constraint(), OperandConstraint::FixedReg(_))
                    || u.reused_input()
                {
                    0.5
                } else {
                    0.0
                }
            };
            reloads_whole += group.iter().map(saves).fold(0.0, f32::max) * freq_at(inst);
        }
        let live_end = self.ctx.lists.segments(iv).last().map_or(0, |s| s.end);
        let reloads_split: f32 = windows
            .iter()
            .filter(|win| win.end < live_end)
            .map(|win| freq_at(point_inst(win.start)))
            .sum();
        if reloads_split >= reloads_whole {
            return false;
        }
        // The segments cut at the windows: the parts inside go to the slot, one piece
        // each, the parts outside to one piece. Segments and windows are both sorted
        // and a window lies in one block: one cursor over the windows.
        let mut rest = SegmentList::new();
        let mut products = Vec::new();
        let mut w = 0;
        for &s in self.ctx.lists.segments(iv) {
            let mut at = s.start;
            while w < windows.len() && windows[w].end <= s.start {
                w += 1;
            }
            while let Some(&win) = windows.get(w)
                && win.start < s.end
            {
                let inside = Segment {
                    start: win.start.max(s.start),
                    end: win.end.min(s.end),
                };
                if at < inside.start {
                    rest.push(Segment {
                        start: at,
                        end: inside.start,
                    });
                }
                products.push(Product {
                    segments: smallvec::smallvec![inside],
                    stage: Stage::Done,
                    place: Placement::Queue,
                });
                at = inside.end;
                if win.end > s.end {
                    break;
                }
                w += 1;
            }
            if at < s.end {
                rest.push(Segment {
                    start: at,
                    end: s.end,
                });
            }
        }
        if rest.is_empty() {
            return false;
        }
        // New intervals in program order of their first point, as other splits make them.
        products.push(Product {
            segments: rest,
            stage: Stage::New,
            place: Placement::Queue,
        });
        products.sort_by_key(|p| p.segments[0].start);
        debug!(
            "{id} ({}): {} pieces in the slot around its stack operands, the rest allocated",
            iv.vreg,
            products.len() - 1
        );
        self.stats.stack_use_pieces += 1;
        self.split_into(id, &mut products);
        true
    }
}
