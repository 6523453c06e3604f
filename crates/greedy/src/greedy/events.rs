//! Builds the observer's events (`crate::observe`) that need more than a field or two of
//! allocator state. Only called behind `observe!` or an `observer.is_some()` test, so
//! none of this runs when no observer is attached; every builder is cold and out of line,
//! so it adds nothing to the code of the hot paths that call it.

use super::Allocator;
use super::interval::{IntervalId, Stage};
use crate::observe::{Event, Occupant, Refusal, SplitKind};
use cranelift_entity::EntityRef;
use regalloc2::{Function, Inst, PReg};

/// Occupants listed per refused register.
const MAX_OCCUPANTS: usize = 16;

pub(crate) fn stage_name(stage: Stage) -> &'static str {
    match stage {
        Stage::New => "new",
        Stage::Assign => "assign",
        Stage::Split => "split",
        Stage::Split2 => "split2",
        Stage::Spill => "spill",
        Stage::Done => "done",
    }
}

pub(crate) fn index(id: IntervalId) -> u32 {
    id.index() as u32
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    #[cold]
    #[inline(never)]
    pub(crate) fn assigned_event(&self, id: IntervalId, p: PReg) -> Event {
        Event::Assigned {
            interval: index(id),
            vreg: self.ctx.intervals[id].vreg,
            reg: p,
            first_callee_saved_use: self.ctx.callee_saved.is_untouched(p),
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn csr_refusal_event(&self, id: IntervalId, p: PReg) -> Event {
        Event::Refused {
            interval: index(id),
            reg: p,
            reason: Refusal::CalleeSavedCost,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn requeued_event(&self, id: IntervalId, why: &'static str) -> Event {
        Event::Requeued {
            interval: index(id),
            vreg: self.ctx.intervals[id].vreg,
            why,
        }
    }

    /// `victim` leaves `p` for `by`, which carries cascade number `cascade`.
    #[cold]
    #[inline(never)]
    pub(crate) fn evicted_event(
        &self,
        victim: IntervalId,
        p: PReg,
        by: IntervalId,
        cascade: u32,
    ) -> Event {
        let v = &self.ctx.intervals[victim];
        Event::Evicted {
            victim: index(victim),
            vreg: v.vreg,
            reg: p,
            by: index(by),
            victim_weight: v.weight,
            evictor_weight: self.ctx.intervals[by].weight,
            cascade: (v.cascade, cascade),
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn split_event(&self, id: IntervalId, kind: SplitKind) -> Event {
        Event::Split {
            interval: index(id),
            vreg: self.ctx.intervals[id].vreg,
            kind,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn spilled_event(&self, id: IntervalId) -> Event {
        let iv = &self.ctx.intervals[id];
        Event::Spilled {
            interval: index(id),
            vreg: iv.vreg,
            weight: iv.weight,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn reload_event(&self, piece: IntervalId, inst: Inst, is_def: bool) -> Event {
        Event::ReloadPiece {
            interval: index(piece),
            vreg: self.ctx.intervals[piece].vreg,
            inst: inst.index() as u32,
            is_def,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn hint_event(
        &self,
        id: IntervalId,
        from: PReg,
        to: PReg,
        why: &'static str,
    ) -> Event {
        Event::HintRecolored {
            interval: index(id),
            vreg: self.ctx.intervals[id].vreg,
            from,
            to,
            why,
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn dequeue_event(&self, id: IntervalId, priority: u64) -> Event {
        let iv = &self.ctx.intervals[id];
        Event::Dequeue {
            interval: index(id),
            vreg: iv.vreg,
            start: self.ctx.lists.segments(iv).first().map_or(0, |s| s.start),
            end: self.ctx.lists.segments(iv).last().map_or(0, |s| s.end),
            weight: iv.weight,
            priority,
            stage: stage_name(iv.stage),
        }
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn product_event(&self, piece: IntervalId, of: IntervalId) -> Event {
        let iv = &self.ctx.intervals[piece];
        Event::SplitProduct {
            interval: index(piece),
            of: index(of),
            vreg: iv.vreg,
            start: self.ctx.lists.segments(iv).first().map_or(0, |s| s.start),
            end: self.ctx.lists.segments(iv).last().map_or(0, |s| s.end),
            stage: stage_name(iv.stage),
            weight: iv.weight,
        }
    }

    /// A last-chance recoloring attempt of `id` just ended. On success, the undo log
    /// holds each interval it moved, from the register it had before the attempt to the
    /// one it has now (`None`: evicted back to the queue); on failure every change was
    /// rolled back, so the log is empty and `id` unassigned.
    #[cold]
    #[inline(never)]
    pub(crate) fn recoloring_event(&self, id: IntervalId, why: &'static str) -> Event {
        let mut moved: Vec<(u32, PReg, Option<PReg>)> = Vec::new();
        for &(j, prev, _) in self.ctx.recolor.undo() {
            if let Some(prev) = prev
                && j != id
                && !moved.iter().any(|m| m.0 == index(j))
            {
                moved.push((index(j), prev, self.ctx.intervals[j].assigned));
            }
        }
        let iv = &self.ctx.intervals[id];
        Event::Recoloring {
            interval: index(id),
            vreg: iv.vreg,
            why,
            outcome: iv.assigned,
            moved,
        }
    }

    /// After `try_assign` found nothing free for `id`: why each register of its
    /// allocation order was refused.
    #[cold]
    #[inline(never)]
    pub(crate) fn report_refusals(&mut self, id: IntervalId) {
        let mut events = Vec::new();
        let mut intf = Vec::new();
        let iv = &self.ctx.intervals[id];
        for p in self.order_for(iv) {
            let reason = if self.fixed_conflict(p, iv) {
                Refusal::Reserved
            } else {
                intf.clear();
                self.ctx
                    .matrix
                    .interference(p, self.ctx.lists.runs(iv), &mut intf, MAX_OCCUPANTS);
                let more = intf.len() > MAX_OCCUPANTS;
                let by = intf
                    .iter()
                    .take(MAX_OCCUPANTS)
                    .map(|&j| {
                        let o = &self.ctx.intervals[j];
                        Occupant {
                            interval: index(j),
                            vreg: o.vreg,
                            weight: o.weight,
                            cascade: o.cascade,
                        }
                    })
                    .collect();
                Refusal::Occupied { by, more }
            };
            events.push(Event::Refused {
                interval: index(id),
                reg: p,
                reason,
            });
        }
        if let Some(o) = self.observer.as_deref_mut() {
            for e in events {
                o.event(e);
            }
        }
    }
}
