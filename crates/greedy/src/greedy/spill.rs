//! The spiller: a spilled interval lives in its vreg's spill slot, and every operand
//! that needs the value in a register gets a minimal unspillable reload piece around its
//! instruction (a reload before it for uses, a store after it for defs). Operands that
//! accept the stack use the slot directly.

use super::Allocator;
use super::interval::{IntervalId, IntervalKind, LiveInterval, Stage, UseList};
use crate::analysis::intervals::{Segment, UseSite, needs_register};
use crate::assignment::ReloadPiece;
use crate::observe::observe;
use log::debug;
use regalloc2::Function;

impl<F: Function + ?Sized> Allocator<'_, F> {
    pub(crate) fn spill(&mut self, id: IntervalId) {
        let vreg = self.ctx.intervals[id].vreg;
        // The slot itself is chosen after the main loop, shared among values whose live
        // ranges do not overlap (`slots::SlotLayout`).
        self.out.slots.mark_needed(vreg);
        let moment = self.spill_moment();
        self.ctx.spill_log.push((id, moment));
        {
            let iv = &mut self.ctx.intervals[id];
            iv.spilled = true;
            iv.stage = Stage::Done;
        }
        self.stats.spills += 1;
        observe!(self, self.spilled_event(id));
        debug!(
            "{id} ({vreg}): spilled, weight {}",
            self.ctx.intervals[id].weight
        );

        // The spilled interval keeps its operands (their reload pieces serve them).
        let all_uses = self.ctx.intervals[id].uses;
        let mut i = 0;
        while i < all_uses.len() {
            let uses = self.ctx.lists.uses_at(all_uses);
            let inst = uses[i].inst;
            let mut j = i;
            while j < uses.len() && uses[j].inst == inst {
                j += 1;
            }
            for is_def in [false, true] {
                let group: UseList = self.ctx.lists.uses_at(all_uses)[i..j]
                    .iter()
                    .filter(|u| u.is_def() == is_def && needs_register(self.func, u))
                    .copied()
                    .collect();
                let Some(Segment { start, end }) = ReloadPiece::span(inst, is_def, &group) else {
                    continue;
                };
                let limit = super::split::use_limit(&group);
                let lists = &mut self.ctx.lists;
                // One segment: its run is the same range.
                let segments = lists.add_segments(&[Segment { start, end }]);
                let piece = self.ctx.intervals.push(LiveInterval {
                    vreg,
                    kind: IntervalKind::Reload { is_def },
                    segments,
                    runs: segments,
                    fixed_conflicts: self
                        .an
                        .intervals
                        .fixed_index
                        .conflicts(&[Segment { start, end }], vreg),
                    uses: lists.add_uses(&group),
                    stage: Stage::Done,
                    cascade: 0,
                    weight: f32::INFINITY,
                    assigned: None,
                    split_hint: None,
                    limit,
                    deferred: false,
                    spilled: false,
                });
                debug!("{piece} ({vreg}): reload piece [{start}, {end}) for {inst:?}");
                observe!(self, self.reload_event(piece, inst, is_def));
                self.stats.intervals += 1;
                self.ctx.vreg_pieces[vreg.vreg()].push(piece);
                self.refresh_hint_reg(vreg);
                self.enqueue(piece);
            }
            i = j;
        }
    }

    /// Does this operand need its value in a register (other than a fixed one, which is
    /// served by a copy to or from the fixed register)?
    pub(super) fn needs_register(&self, u: &UseSite) -> bool {
        needs_register(self.func, u)
    }
}
