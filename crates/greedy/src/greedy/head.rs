//! Heads of spilled values back in registers, after unspilling (`Options::head_splits`).
//! A value spilled for want of a register somewhere along it (across a call, through a
//! stretch of pressure) is reloaded at every use, even at the uses right after its def,
//! where a register may well have been free all along. Once every interval is placed,
//! such a spilled piece that starts at its value's def gives its *head* (from the def up
//! to some of its first uses in the def's block) to a register free over it, and keeps
//! the rest in the slot. The slot is written at the def either way (so the rest needs no
//! store), each use in the head drops its reload (a fixed use in another register still
//! needs a move), and a fixed def in another register costs a move. Only registers free
//! now are taken (nothing moves or is evicted), never an untouched callee-saved one.
//!
//! Work is bounded: values with more than `MAX_PIECES` pieces are left alone, and a
//! head spans at most `MAX_HEAD_INSTS` instructions with operands of its value.

use super::Allocator;
use super::interval::{IntervalId, IntervalKind, Room, Stage, UseList};
use super::split::use_limit;
use crate::analysis::intervals::{Segment, UseSite, fixed_conflict, needs_register, point_inst};
use crate::observe::{SplitKind, observe};
use log::debug;
use regalloc2::{Function, OperandConstraint, PReg, PRegSet};

/// A value with more pieces than this keeps its spilled pieces as they are.
const MAX_PIECES: usize = 32;
/// Instructions with operands of the value that a head may span.
const MAX_HEAD_INSTS: usize = 8;
/// A reload or a store costs this many moves (docs/metrics.md: 2 against 1).
const MEMORY_MOVES: f32 = 2.0;

impl<F: Function + ?Sized> Allocator<'_, F> {
    pub(crate) fn keep_spilled_heads(&mut self) {
        for k in 0..self.ctx.spill_log.len() {
            let id = self.ctx.spill_log[k].0;
            let iv = &self.ctx.intervals[id];
            if !iv.in_slot() || self.ctx.vreg_pieces[iv.vreg.vreg()].len() > MAX_PIECES {
                continue;
            }
            if let Some((gain, p, end)) = self.best_head(id) {
                self.split_off_head(id, p, end, gain);
            }
        }
    }

    /// The head of spilled piece `id` that saves the most, with its register: (gain,
    /// register, end), or `None` if no head pays. A head starts at the value's def (where
    /// the slot is written), ends after all of an instruction's operands of the value
    /// (one that ended between two would leave the later one to the slot), stays short
    /// of the def block segment's end (the rest of the value stays), stops before any
    /// operand that needs the slot, and spans at most `MAX_HEAD_INSTS` instructions.
    fn best_head(&self, id: IntervalId) -> Option<(f32, PReg, u32)> {
        let iv = &self.ctx.intervals[id];
        let vreg = iv.vreg;
        let def = self.an.live.def_inst(vreg)?;
        let s0 = *self.ctx.lists.segments(iv).first()?;
        let uses = self.ctx.lists.uses(iv);
        // A fixed def's segment starts right after the def.
        let def_point = 2 * def.index() as u32;
        if s0.start < def_point || s0.start > def_point + 2 || !self.slot_written_at_def(vreg) {
            return None;
        }
        let def_constraint = uses
            .iter()
            .find(|u| u.is_def() && u.inst == def)
            .map(|u| u.operand.constraint());
        // A def that must write the slot leaves no head.
        if def_constraint == Some(OperandConstraint::Stack) {
            return None;
        }
        let freq = self.an.freq.of(self.an.cfg.block_of(point_inst(s0.start)));
        // The head's possible ends, one per instruction with operands of the value: its
        // end point, what its operands save in a register named by none of them, and
        // the registers its fixed uses name (each saves one move more there).
        let mut steps = [(0u32, 0.0f32, PRegSet::empty()); MAX_HEAD_INSTS];
        let mut n = 0;
        let first = uses.partition_point(|u| u.inst <= def);
        let fits = |u: &UseSite| {
            !u.is_def()
                && u.operand.constraint() != OperandConstraint::Stack
                && u.last() + 1 < s0.end
        };
        for group in uses[first..].chunk_by(|a, b| a.inst == b.inst) {
            if n == MAX_HEAD_INSTS || !group.iter().all(fits) {
                break;
            }
            let mut step = (s0.start, 0.0, PRegSet::empty());
            for u in group {
                step.0 = step.0.max(u.last() + 1);
                step.1 += self.head_use_gain(u, PReg::invalid(), freq);
                if let OperandConstraint::FixedReg(q) = u.operand.constraint() {
                    step.2.add(q);
                }
            }
            steps[n] = step;
            n += 1;
        }
        let steps = &steps[..n];
        // No register does better than one that every fixed use names.
        let most: f32 = steps
            .iter()
            .map(|s| s.1 + freq * s.2.into_iter().count() as f32)
            .sum();
        if most <= 0.0 {
            return None;
        }
        // The value's own reload pieces there are not in the way: the head replaces them.
        let own_reload = |j: IntervalId| {
            let o = &self.ctx.intervals[j];
            o.vreg == vreg && matches!(o.kind, IntervalKind::Reload { .. })
        };
        // The registers the fixed operands name first: the best head is mostly in one
        // of them, and once a head saves `most` no register can do better.
        let mut named = steps.iter().fold(PRegSet::empty(), |set, s| set | s.2);
        if let Some(OperandConstraint::FixedReg(q)) = def_constraint {
            named.add(q);
        }
        let order = &self.out.order[vreg.class() as usize];
        let candidates = order
            .iter()
            .filter(|&&p| named.contains(p))
            .chain(order.iter().filter(|&&p| !named.contains(p)))
            .copied()
            .filter(|p| p.hw_enc() < iv.limit);
        let mut best: Option<(f32, PReg, u32)> = None;
        for p in candidates {
            if best.is_some_and(|(g, _, _)| g >= most) {
                break;
            }
            if self.ctx.callee_saved.is_untouched(p) {
                continue;
            }
            let reservations = &self.an.intervals.fixed[p.index()];
            let free_to = |end: u32| {
                let head = [Segment {
                    start: s0.start,
                    end,
                }];
                !self.ctx.matrix.overlaps_any(p, &head, |j| !own_reload(j))
                    && !fixed_conflict(reservations, &head, vreg)
            };
            // The longest free head (freedom only shrinks as the head grows), by a
            // binary search over its ends once the shortest is free.
            if !free_to(steps[0].0) {
                continue;
            }
            let free = 1 + steps[1..].partition_point(|&(end, _, _)| free_to(end));
            // A def in a register stores into the slot either way; one that may write
            // the slot directly stores only for the head, and a fixed one in another
            // register needs a move.
            let mut gain = match def_constraint {
                Some(OperandConstraint::FixedReg(q)) if q != p => -freq,
                Some(OperandConstraint::Any) => -MEMORY_MOVES * freq,
                _ => 0.0,
            };
            for &(end, saved, named) in &steps[..free] {
                gain += saved + if named.contains(p) { freq } else { 0.0 };
                if gain > 0.0 && best.is_none_or(|(g, _, _)| gain > g) {
                    best = Some((gain, p, end));
                }
            }
        }
        best
    }

    /// What use `u` saves in a head in register `p` rather than on the stack, in moves
    /// at block frequency `freq`.
    fn head_use_gain(&self, u: &UseSite, p: PReg, freq: f32) -> f32 {
        match u.operand.constraint() {
            _ if u.is_def() => 0.0,
            // A reload into the fixed register becomes a move, or nothing.
            OperandConstraint::FixedReg(q) => MEMORY_MOVES * freq - if q == p { 0.0 } else { freq },
            _ if needs_register(self.func, u) => MEMORY_MOVES * freq,
            // A reused input: the reuse copy reads the register instead of the slot.
            OperandConstraint::Reg | OperandConstraint::Limit(_) => freq,
            OperandConstraint::Any | OperandConstraint::Stack | OperandConstraint::Reuse(_) => 0.0,
        }
    }

    /// Replaces spilled piece `id` by a head `[start, end)` in `p` and the rest, still
    /// spilled. A cut inside an instruction leaves its late point to the slot, as a
    /// region split's bridge (the slot holds the value from its def on).
    fn split_off_head(&mut self, id: IntervalId, p: PReg, end: u32, gain: f32) {
        let vreg = self.ctx.intervals[id].vreg;
        let start = self.ctx.lists.segments(&self.ctx.intervals[id])[0].start;
        // The reload pieces inside the head go: it holds their uses now.
        let ctx = &mut *self.ctx;
        ctx.vreg_pieces[vreg.vreg()].retain(|&j| {
            let r = &mut ctx.intervals[j];
            let inside = matches!(r.kind, IntervalKind::Reload { .. })
                && ctx
                    .lists
                    .segments(r)
                    .first()
                    .is_some_and(|s| s.start >= start && s.end <= end);
            if inside {
                if let Some(q) = r.assigned {
                    ctx.matrix.unassign(q, ctx.lists.runs(r));
                }
                r.retire();
            }
            !inside
        });
        let iv = &mut self.ctx.intervals[id];
        let lists = &mut self.ctx.lists;
        let first = &mut lists.segments_mut(iv.segments)[0];
        debug_assert!(end < first.end);
        first.start = end;
        iv.runs = lists.add_runs_of(iv.segments);
        let head_uses: UseList = lists
            .uses(iv)
            .iter()
            .filter(|u| u.first() < end)
            .copied()
            .collect();
        iv.uses = lists.retain_uses(iv.uses, |u| u.first() >= end);
        iv.limit = use_limit(lists.uses(iv));
        iv.fixed_conflicts = (self.an.intervals.fixed_index).conflicts(lists.runs(iv), vreg);
        let cascade = iv.cascade;
        let head = Segment { start, end };
        let piece = self.push_main_piece(
            &mut Room::default(),
            vreg,
            &[head],
            &head_uses,
            Stage::Done,
            cascade,
        );
        self.stats.head_splits += 1;
        debug!("{piece} ({vreg}): head [{start}, {end}) of spilled {id} kept in {p}, gain {gain}");
        observe!(self, self.split_event(id, SplitKind::Head));
        self.assign(piece, p);
    }
}
