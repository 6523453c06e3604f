//! The linear-scan allocator (`Algorithm::LinearScan`), after Poletto and Sarkar: one
//! interval per value, visited by increasing start. An interval takes its hint (the
//! register of a fixed operand or of an assigned copy partner) or else the first register
//! in allocation order free over its runs; otherwise the interval that ends last among
//! those in its way is spilled: for each register it may take, the occupants overlapping
//! it (all spillable), the latest end among them; the register whose occupants end last
//! wins (ties to the lighter occupants by block-frequency spill weight). If those end
//! after the interval itself (or end with it and weigh less), they are spilled and it
//! takes their register; otherwise it is spilled.
//!
//! Lifetime holes are honoured: an interval is its runs, not its hull, and a register's
//! occupancy is the union of its occupants' runs, so an interval fits into another's
//! hole. That union, per register, stands in for the paper's active list: with holes one
//! register may hold several intervals whose hulls overlap, and the question "who is in
//! the way, and when does it end" is asked of the register. Fixed reservations rule a
//! register out over the points they cover. A spilled value's reload pieces are queued by
//! their start like any interval; they cannot be spilled, so one takes a register from
//! spillable occupants, or moves other reload pieces aside (`Ledger::make_room`).

use crate::analysis::Analyses;
use crate::assignment::Assignment;
use crate::slots::SlotLayout;
use crate::whole_value::Ledger;
use crate::{Options, Phase, Stats, phase_clock};
use log::debug;
use regalloc2::{Function, PReg, RegAllocError};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The linear-scan allocator's buffers, kept across functions.
#[derive(Default)]
pub(crate) struct LinearScanCtx {
    pub ledger: Ledger,
    /// Intervals not yet visited, earliest start first (then lowest id).
    unhandled: BinaryHeap<Reverse<(u32, u32)>>,
    in_the_way: Vec<u32>,
}

pub(crate) struct LinearScan<'a, F: Function + ?Sized> {
    pub func: &'a F,
    pub options: &'a Options,
    pub an: &'a Analyses,
    pub ctx: &'a mut LinearScanCtx,
    pub out: &'a mut Assignment,
    pub stats: &'a mut Stats,
}

/// The best register to take from spillable occupants: where they end last, and the sum
/// of their weights.
#[derive(Clone, Copy)]
struct Candidate {
    reg: PReg,
    last_end: u32,
    weight: f32,
}

impl<F: Function + ?Sized> LinearScan<'_, F> {
    pub fn run(&mut self) -> Result<(), RegAllocError> {
        let t = phase_clock(self.options);
        self.ctx.unhandled.clear();
        self.ctx.ledger.reset(self.func, self.an, self.stats);
        for id in 0..self.ctx.ledger.len() {
            if self.ctx.ledger.get(id).stack_only {
                debug!(
                    "{}: spilled up front, an operand needs it on the stack",
                    self.ctx.ledger.get(id).vreg
                );
                self.spill(id);
            } else {
                self.push_unhandled(id);
            }
        }
        self.stats.phases.since(Phase::Setup, t);
        let t = phase_clock(self.options);
        while let Some(Reverse((_, id))) = self.ctx.unhandled.pop() {
            self.visit(id)?;
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

    fn push_unhandled(&mut self, id: u32) {
        let start = self.ctx.ledger.start(id);
        self.ctx.unhandled.push(Reverse((start, id)));
    }

    fn spill(&mut self, id: u32) {
        let pieces = self
            .ctx
            .ledger
            .spill(self.func, self.an, self.out, id, self.stats);
        for piece in pieces {
            self.push_unhandled(piece);
        }
    }

    fn visit(&mut self, id: u32) -> Result<(), RegAllocError> {
        let ledger = &self.ctx.ledger;
        let (vreg, weight) = (ledger.get(id).vreg, ledger.get(id).weight);
        let order = &self.out.order[vreg.class() as usize];
        if let Some(r) = ledger.first_free(self.an, id, order) {
            self.ctx.ledger.assign(id, r, self.stats);
            return Ok(());
        }
        let mut in_the_way = std::mem::take(&mut self.ctx.in_the_way);
        let mut best: Option<Candidate> = None;
        for &r in order {
            if !ledger.may_hold(self.an, id, r) {
                continue;
            }
            ledger.in_the_way(id, r, &mut in_the_way);
            if !in_the_way.iter().all(|&j| ledger.get(j).is_spillable()) {
                continue;
            }
            let c = Candidate {
                reg: r,
                last_end: in_the_way.iter().map(|&j| ledger.end(j)).max().unwrap_or(0),
                weight: in_the_way.iter().map(|&j| ledger.get(j).weight).sum(),
            };
            let better = best.is_none_or(|b| {
                c.last_end > b.last_end || (c.last_end == b.last_end && c.weight < b.weight)
            });
            if better {
                best = Some(c);
            }
        }
        let end = ledger.end(id);
        let take = best.filter(|c| {
            !weight.is_finite() || c.last_end > end || (c.last_end == end && c.weight < weight)
        });
        if let Some(c) = take {
            ledger.in_the_way(id, c.reg, &mut in_the_way);
            for &j in &in_the_way {
                debug!(
                    "{} spilled from {}: ends at {} after {vreg} (ends at {end})",
                    self.ctx.ledger.get(j).vreg,
                    c.reg,
                    self.ctx.ledger.end(j)
                );
                self.stats.evictions += 1;
                self.spill(j);
            }
            self.ctx.ledger.assign(id, c.reg, self.stats);
            self.ctx.in_the_way = in_the_way;
            return Ok(());
        }
        if weight.is_finite() {
            debug!("{vreg} spilled: ends at {end}, last among those in its way");
            self.ctx.in_the_way = in_the_way;
            self.spill(id);
            return Ok(());
        }
        // A reload piece with only reload pieces in its way: move them aside.
        let outcome = self.make_room_for(id, &mut in_the_way);
        self.ctx.in_the_way = in_the_way;
        outcome
    }

    fn make_room_for(&mut self, id: u32, in_the_way: &mut Vec<u32>) -> Result<(), RegAllocError> {
        let vreg = self.ctx.ledger.get(id).vreg;
        let class = vreg.class() as usize;
        for k in 0..self.out.order[class].len() {
            let r = self.out.order[class][k];
            if !self.ctx.ledger.may_hold(self.an, id, r) {
                continue;
            }
            self.ctx.ledger.in_the_way(id, r, in_the_way);
            if self
                .ctx
                .ledger
                .make_room(self.an, &self.out.order[class], r, in_the_way, self.stats)
            {
                for &j in in_the_way.iter() {
                    if self.ctx.ledger.get(j).reg == Some(r) {
                        self.stats.evictions += 1;
                        self.spill(j);
                    }
                }
                self.ctx.ledger.assign(id, r, self.stats);
                return Ok(());
            }
        }
        debug!("reload piece of {vreg} finds no register it may take");
        Err(RegAllocError::TooManyLiveRegs)
    }
}
