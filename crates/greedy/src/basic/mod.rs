//! The basic allocator (`Algorithm::Basic`), after LLVM's RegAllocBasic: one interval per
//! value (its segments, holes included), queued by spill weight, heaviest first. A
//! dequeued interval takes its hint if free over its runs (the register of a fixed operand
//! or of an assigned copy partner: LLVM's allocation order puts hints first), else the
//! first free register in allocation order; else the first register whose occupants are all spillable and no heavier than it,
//! after spilling them; else it is spilled itself. A spilled value lives in its slot, and
//! each instruction whose operands need it in a register gets an unspillable reload piece,
//! queued like any interval: it may spill any value in its way, and move another reload
//! piece to a free register (`Ledger::make_room`). No splitting and no recoloring: a
//! spill is final, so every interval is dequeued once.

use crate::analysis::Analyses;
use crate::assignment::Assignment;
use crate::slots::SlotLayout;
use crate::whole_value::Ledger;
use crate::{Options, Phase, Stats, phase_clock};
use log::debug;
use regalloc2::{Function, PReg, RegAllocError};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Queue entry: heavier first; among equals the earlier interval.
#[derive(PartialEq)]
struct Entry(f32, u32);

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(other.1.cmp(&self.1))
    }
}

/// The basic allocator's buffers, kept across functions.
#[derive(Default)]
pub(crate) struct BasicCtx {
    pub ledger: Ledger,
    queue: BinaryHeap<Entry>,
    in_the_way: Vec<u32>,
}

pub(crate) struct Basic<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub options: &'a Options,
    pub an: &'a Analyses,
    pub ctx: &'a mut BasicCtx,
    pub out: &'a mut Assignment,
    pub stats: &'a mut Stats,
}

impl<F: Function + ?Sized> Basic<'_, F> {
    pub fn run(&mut self) -> Result<(), RegAllocError> {
        let t = phase_clock(self.options);
        self.ctx.queue.clear();
        self.ctx.ledger.reset(self.func, self.an, self.stats);
        for id in 0..self.ctx.ledger.len() {
            if self.ctx.ledger.get(id).stack_only {
                debug!(
                    "{}: spilled up front, an operand needs it on the stack",
                    self.ctx.ledger.get(id).vreg
                );
                self.spill(id);
            } else {
                self.enqueue(id);
            }
        }
        self.stats.phases.since(Phase::Setup, t);
        let t = phase_clock(self.options);
        while let Some(Entry(_, id)) = self.ctx.queue.pop() {
            self.select(id)?;
        }
        self.stats.phases.since(Phase::Assignment, t);
        let t = phase_clock(self.options);
        SlotLayout::run(
            self.func,
            self.an,
            &self.ctx.ledger.partners,
            self.options,
            &mut self.out.slots,
            self.stats,
        );
        self.stats.phases.since(Phase::SlotSharing, t);
        self.ctx.ledger.export(self.out)
    }

    fn enqueue(&mut self, id: u32) {
        let w = self.ctx.ledger.get(id).weight;
        self.ctx.queue.push(Entry(w, id));
    }

    fn spill(&mut self, id: u32) {
        let pieces = self
            .ctx
            .ledger
            .spill(self.func, self.an, self.out, id, self.stats);
        for piece in pieces {
            self.enqueue(piece);
        }
    }

    fn select(&mut self, id: u32) -> Result<(), RegAllocError> {
        let ledger = &self.ctx.ledger;
        let (vreg, weight) = (ledger.get(id).vreg, ledger.get(id).weight);
        let order = &self.out.order[vreg.class() as usize];
        if let Some(r) = ledger.first_free(self.an, id, order) {
            self.ctx.ledger.assign(id, r, self.stats);
            return Ok(());
        }
        // The first register whose occupants may all be spilled for this interval (or,
        // for a reload piece, moved out of the way when they are reload pieces too).
        let mut in_the_way = std::mem::take(&mut self.ctx.in_the_way);
        let mut chosen: Option<PReg> = None;
        for k in 0..self.out.order[vreg.class() as usize].len() {
            let r = self.out.order[vreg.class() as usize][k];
            let ledger = &self.ctx.ledger;
            if !ledger.may_hold(self.an, id, r) {
                continue;
            }
            ledger.in_the_way(id, r, &mut in_the_way);
            let lighter = |j: &u32| {
                let w = ledger.get(*j).weight;
                w.is_finite() && w <= weight
            };
            if in_the_way.iter().all(lighter)
                || (!weight.is_finite()
                    && self.ctx.ledger.make_room(
                        self.an,
                        &self.out.order[vreg.class() as usize],
                        r,
                        &in_the_way,
                        self.stats,
                    ))
            {
                chosen = Some(r);
                break;
            }
        }
        let outcome = match chosen {
            Some(r) => {
                for &j in &in_the_way {
                    let other = self.ctx.ledger.get(j);
                    if other.reg == Some(r) {
                        debug!(
                            "{} evicted from {r} by {vreg} (weight {} <= {weight})",
                            other.vreg, other.weight
                        );
                        self.stats.evictions += 1;
                        self.spill(j);
                    }
                }
                self.ctx.ledger.assign(id, r, self.stats);
                Ok(())
            }
            None if weight.is_finite() => {
                self.spill(id);
                Ok(())
            }
            None => {
                debug!("reload piece of {vreg} finds no register it may take");
                Err(RegAllocError::TooManyLiveRegs)
            }
        };
        self.ctx.in_the_way = in_the_way;
        outcome
    }
}
