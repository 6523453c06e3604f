//! Eviction, the mechanism: for each candidate register, the intervals in the way; the
//! register whose eviction the `EvictionAdvisor` allows and prices cheapest wins, its
//! occupants are unassigned and requeued, and the evictor takes it. Cascade numbers are
//! kept here: an evictor takes a fresh number the first time it evicts and its victims
//! take its number (the advisor decides what the numbers allow).

use super::Allocator;
use super::advisor::{EvictionAdvisor, EvictionCost};
use super::interval::IntervalId;
use crate::observe::observe;
use log::debug;
use regalloc2::{Function, PReg};

impl<F: Function + ?Sized> Allocator<'_, F> {
    /// Evicts and assigns if some register can be freed; returns whether it did.
    /// `avoid_csr`: skip untouched callee-saved registers.
    pub(crate) fn try_evict(&mut self, id: IntervalId, avoid_csr: bool) -> bool {
        let mut intf = std::mem::take(&mut self.ctx.scratch_intf);
        let mut best_victims = std::mem::take(&mut self.ctx.scratch_best);
        best_victims.clear();
        let mut best: Option<(PReg, EvictionCost)> = None;
        {
            let iv = &self.ctx.intervals[id];
            let max_interference = self.eviction.max_interference();
            let cascade = if iv.cascade != 0 {
                iv.cascade
            } else {
                self.ctx.next_cascade
            };
            for p in self.order_for(iv) {
                if (avoid_csr && self.ctx.callee_saved.is_untouched(p))
                    || self.fixed_conflict(p, iv)
                {
                    continue;
                }
                intf.clear();
                // A register is out as soon as one occupant may not be evicted or the
                // cost so far is no cheaper than the best register's: costs only grow
                // as victims are added (more broken hints, a heavier heaviest victim).
                let mut cost = self.eviction.no_cost();
                let ok = self.ctx.matrix.interference_while(
                    p,
                    self.ctx.lists.runs(iv),
                    &mut intf,
                    max_interference,
                    |j| {
                        let victim = &self.ctx.intervals[j];
                        if !self.eviction.may_evict(iv, victim, cascade) {
                            return false;
                        }
                        self.eviction
                            .add_victim(&mut cost, victim, self.is_hinted_to(j, p));
                        best.is_none_or(|(_, c)| self.eviction.cheaper(&cost, &c))
                    },
                );
                if !ok || intf.len() > max_interference {
                    continue;
                }
                if best.is_none_or(|(_, c)| self.eviction.cheaper(&cost, &c)) {
                    best = Some((p, cost));
                    best_victims.clear();
                    best_victims.extend_from_slice(&intf);
                }
            }
        }
        self.ctx.scratch_intf = intf;
        let Some((p, cost)) = best else {
            self.ctx.scratch_best = best_victims;
            return false;
        };
        let cascade = {
            let iv = &mut self.ctx.intervals[id];
            if iv.cascade == 0 {
                iv.cascade = self.ctx.next_cascade;
                self.ctx.next_cascade += 1;
            }
            iv.cascade
        };
        for &j in &best_victims {
            debug!(
                "{j} ({}): evicted from {p} by {id} ({}), weight {} < {}, cascade {} -> {cascade}, cost {cost:?}",
                self.ctx.intervals[j].vreg,
                self.ctx.intervals[id].vreg,
                self.ctx.intervals[j].weight,
                self.ctx.intervals[id].weight,
                self.ctx.intervals[j].cascade
            );
            observe!(self, self.evicted_event(j, p, id, cascade));
            self.unassign(j);
            self.ctx.intervals[j].cascade = cascade;
            self.stats.evictions += 1;
            self.enqueue(j);
        }
        self.ctx.scratch_best = best_victims;
        self.assign(id, p);
        true
    }

    /// Would `j` lose a preference by leaving `p`?
    fn is_hinted_to(&self, j: IntervalId, p: PReg) -> bool {
        let iv = &self.ctx.intervals[j];
        self.ctx.vreg_fixed_uses[iv.vreg.vreg()]
            && self.ctx.lists.uses(iv).iter().any(|u| {
            matches!(u.operand.constraint(), regalloc2::OperandConstraint::FixedReg(q) if q == p)
        })
    }
}
