//! Last-chance recoloring (LLVM's `tryLastChanceRecoloring`): an interval that would
//! otherwise fail (unspillable with no register to evict) or be spilled takes a register
//! whose few occupants can all move elsewhere, each of them recursively in the same way.
//! Every tentative move goes into an undo log and is rolled back when a branch of the
//! search fails, so a failed attempt leaves the assignment exactly as it found it.
//!
//! The search is bounded three ways: recursion depth (`Options::recoloring_max_depth`),
//! occupants per register (`Options::recoloring_max_interferers`), and a budget of
//! register probes per function that grows with its size, so pathological inputs stay
//! near-linear. Intervals on the current recoloring path are never displaced again,
//! which is what keeps the search from chasing its own tail. An attempt made only to
//! avoid a spill goes one level deep: the occupants must fit elsewhere as they are,
//! which is checked before anything moves; it is opt-in (`Options::spill_recoloring`),
//! since on real code it bought almost nothing for its time.

use super::Allocator;
use super::interval::IntervalId;
use crate::observe::observe;
use log::{debug, trace};
use regalloc2::{Function, PReg, PRegSet};

/// Register probes one top-level recoloring may spend: an unspillable interval (the
/// alternative is failing) gets many, one about to be spilled (the alternative is a few
/// reloads) gets few, since every spill asks.
const PROBES_PER_ATTEMPT: u32 = 2_000;
const PROBES_PER_SPILL_ATTEMPT: u32 = 64;
/// Recursion depth of an attempt to avoid a spill: its occupants move only to registers
/// where they fit as they are. Deeper searches bought 0.1% of weighted cost at 4 and 8
/// registers on the fuzz corpus and doubled the allocation time there.
const SPILL_ATTEMPT_MAX_DEPTH: u32 = 1;
/// Register probes per function: a base plus this many per instruction.
const PROBES_BASE: u32 = 20_000;
const PROBES_PER_INST: u32 = 4;

/// Scratch state of the recoloring search, kept across functions for its buffers.
#[derive(Default)]
pub(crate) struct RecolorCtx {
    /// (interval, its assignment before the change, the callee-saved registers paid for
    /// before the change), in the order the changes happened. Rolling back restores both:
    /// a register a failed branch tried must not stay marked as paid for, or a later
    /// interval would take it without weighing its save and restore.
    undo: Vec<(IntervalId, Option<PReg>, PRegSet)>,
    /// Intervals on the current recoloring path: they keep the register they were given.
    path: Vec<IntervalId>,
    /// Spillable occupants displaced for an unspillable interval; requeued on success.
    evicted: Vec<IntervalId>,
    /// Probes left for this function, and for the current top-level attempt.
    function_budget: u32,
    attempt_budget: u32,
}

impl RecolorCtx {
    /// The tentative changes of the last attempt, oldest first.
    pub fn undo(&self) -> &[(IntervalId, Option<PReg>, PRegSet)] {
        &self.undo
    }

    pub fn reset(&mut self, num_insts: usize) {
        self.undo.clear();
        self.path.clear();
        self.function_budget =
            PROBES_BASE.saturating_add((num_insts as u32).saturating_mul(PROBES_PER_INST));
    }
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Tries to give `id` (currently unassigned) a register by moving what occupies it.
    /// Returns whether it did; on failure nothing has changed.
    /// `avoid_csr`: open no untouched callee-saved register, for this interval or any
    /// it displaces (the interval found spilling cheaper than opening one).
    pub(crate) fn last_chance_recolor(
        &mut self,
        id: IntervalId,
        why: &'static str,
        avoid_csr: bool,
    ) -> bool {
        if !self.options.last_chance_recoloring || self.options.recoloring_max_depth == 0 {
            return false;
        }
        let rc = &mut self.ctx.recolor;
        if rc.function_budget == 0 {
            return false;
        }
        let urgent = !self.ctx.intervals[id].is_spillable();
        let per_attempt = if urgent {
            PROBES_PER_ATTEMPT
        } else {
            PROBES_PER_SPILL_ATTEMPT
        };
        let rc = &mut self.ctx.recolor;
        rc.attempt_budget = rc.function_budget.min(per_attempt);
        let before = rc.attempt_budget;
        rc.undo.clear();
        rc.path.clear();
        rc.evicted.clear();
        let ok = self.recolor(id, 0, urgent, avoid_csr);
        let rc = &mut self.ctx.recolor;
        rc.function_budget -= before - rc.attempt_budget;
        if !ok {
            trace!("{id}: last-chance recoloring found nothing ({why})");
            observe!(self, self.recoloring_event(id, why));
            return false;
        }
        let undo = std::mem::take(&mut self.ctx.recolor.undo);
        let mut moved = 0;
        for &(j, prev, _) in &undo {
            if j != id && prev.is_some() {
                moved += 1;
                debug!(
                    "{j} ({}): recolored from {} to {:?} to make room for {id}",
                    self.ctx.intervals[j].vreg,
                    prev.unwrap_or(PReg::invalid()),
                    self.ctx.intervals[j].assigned
                );
            }
        }
        self.ctx.recolor.undo = undo;
        let evicted = std::mem::take(&mut self.ctx.recolor.evicted);
        for &j in &evicted {
            debug!(
                "{j} ({}): evicted by last-chance recoloring for unspillable {id}",
                self.ctx.intervals[j].vreg
            );
            self.stats.evictions += 1;
            self.enqueue(j);
        }
        self.ctx.recolor.evicted = evicted;
        debug!(
            "{id} ({}): assigned {:?} by last-chance recoloring ({why}), {moved} intervals moved",
            self.ctx.intervals[id].vreg, self.ctx.intervals[id].assigned
        );
        self.stats.last_chance_recolorings += 1;
        observe!(self, self.recoloring_event(id, why));
        self.stats.recolored_intervals += moved;
        self.stats.assignments += 1;
        true
    }

    /// `urgent`: the interval at the root is unspillable, so spillable occupants that
    /// cannot move may be evicted back to the queue (as urgent eviction does), instead
    /// of recolored.
    fn recolor(&mut self, id: IntervalId, depth: u32, urgent: bool, avoid_csr: bool) -> bool {
        let maxd = if urgent {
            self.options.recoloring_max_depth
        } else {
            self.options
                .recoloring_max_depth
                .min(SPILL_ATTEMPT_MAX_DEPTH)
        };
        if depth >= maxd {
            return false;
        }
        self.ctx.recolor.path.push(id);
        let mut candidates: Vec<PReg> = Vec::new();
        self.collect_hints(id);
        {
            let iv = &self.ctx.intervals[id];
            for &(p, _) in &self.ctx.scratch_hints {
                if self.may_hold(p, iv) {
                    candidates.push(p);
                }
            }
            for p in self.order_for(iv) {
                if !candidates.contains(&p) {
                    candidates.push(p);
                }
            }
        }
        let max_intf = self.options.recoloring_max_interferers;
        let mut intf: Vec<IntervalId> = Vec::new();
        for p in candidates {
            if self.ctx.recolor.attempt_budget == 0 {
                break;
            }
            self.ctx.recolor.attempt_budget -= 1;
            let iv = &self.ctx.intervals[id];
            if (avoid_csr && self.ctx.callee_saved.is_untouched(p)) || self.fixed_conflict(p, iv) {
                continue;
            }
            intf.clear();
            self.ctx
                .matrix
                .interference(p, self.ctx.lists.runs(iv), &mut intf, max_intf);
            if intf.len() > max_intf || intf.iter().any(|j| self.ctx.recolor.path.contains(j)) {
                continue;
            }
            // At the last level an occupant can only move to a register where it fits as
            // is, and none of those registers is touched by this move: if one occupant has
            // no such register, the probe fails, so find out before changing anything.
            if depth + 1 >= maxd
                && !urgent
                && !intf.iter().all(|&j| self.fits_elsewhere(j, p, avoid_csr))
            {
                continue;
            }
            let mark = self.ctx.recolor.undo.len();
            let evicted_mark = self.ctx.recolor.evicted.len();
            for &j in &intf {
                self.tentatively_move(j, None);
            }
            self.tentatively_move(id, Some(p));
            // The widest occupants are the hardest to place: they go first.
            intf.sort_by_key(|&j| std::cmp::Reverse(self.ctx.intervals[j].size(&self.ctx.lists)));
            let all_placed = intf.iter().all(|&j| {
                let free = self
                    .try_assign(j)
                    .filter(|&q| !(avoid_csr && self.ctx.callee_saved.is_untouched(q)));
                if let Some(q) = free {
                    self.tentatively_move(j, Some(q));
                    true
                } else if urgent && self.ctx.intervals[j].is_spillable() {
                    self.ctx.recolor.evicted.push(j);
                    true
                } else {
                    self.recolor(j, depth + 1, urgent, avoid_csr)
                }
            });
            if all_placed {
                self.ctx.recolor.path.pop();
                return true;
            }
            self.roll_back(mark);
            self.ctx.recolor.evicted.truncate(evicted_mark);
        }
        self.ctx.recolor.path.pop();
        false
    }

    /// Is there a register other than `taken` where `j` fits without moving anything?
    fn fits_elsewhere(&self, j: IntervalId, taken: PReg, avoid_csr: bool) -> bool {
        let iv = &self.ctx.intervals[j];
        self.order_for(iv).any(|q| {
            q != taken
                && !(avoid_csr && self.ctx.callee_saved.is_untouched(q))
                && !self.fixed_conflict(q, iv)
                && self.ctx.matrix.is_free(q, self.ctx.lists.runs(iv))
        })
    }

    /// Moves `j` to `to` (or out of the matrix), logging the change for `roll_back`.
    fn tentatively_move(&mut self, j: IntervalId, to: Option<PReg>) {
        let prev = self.ctx.intervals[j].assigned;
        let touched = self.ctx.callee_saved.touched();
        self.ctx.recolor.undo.push((j, prev, touched));
        self.set_assignment(j, to);
    }

    fn set_assignment(&mut self, j: IntervalId, to: Option<PReg>) {
        if let Some(p) = self.ctx.intervals[j].assigned.take() {
            self.ctx
                .matrix
                .unassign(p, self.ctx.lists.runs(&self.ctx.intervals[j]));
        }
        if let Some(p) = to {
            self.ctx.intervals[j].assigned = Some(p);
            self.ctx.callee_saved.touch(p);
            self.ctx
                .matrix
                .assign(p, j, self.ctx.lists.runs(&self.ctx.intervals[j]));
        }
        self.refresh_hint_reg(self.ctx.intervals[j].vreg);
    }

    /// Undoes every tentative change made since the undo log had length `mark`.
    fn roll_back(&mut self, mark: usize) {
        while self.ctx.recolor.undo.len() > mark {
            let Some((j, prev, touched)) = self.ctx.recolor.undo.pop() else {
                break;
            };
            self.set_assignment(j, prev);
            self.ctx.callee_saved.restore_touched(touched);
        }
    }
}
