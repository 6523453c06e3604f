//! Eviction: take a register from intervals that are all lighter than the evictor,
//! choosing the register whose eviction costs least. Cascade numbers stop cycles: an
//! evictor takes a fresh number the first time it evicts, may only evict intervals with
//! a smaller number, and its victims take its number, so every chain of evictions runs
//! through strictly increasing numbers. Unspillable intervals are urgent: they may evict
//! any spillable interval, and since nothing ever evicts them, that cannot cycle either.

use super::Allocator;
use super::advisor::{EvictionAdvisor, EvictionCost};
use super::interval::IntervalId;
use log::debug;
use regalloc2::{Function, PReg};

/// More interfering intervals than this on one register: not worth evicting.
const MAX_INTERFERENCE: usize = 16;

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
            let urgent = !iv.is_spillable();
            let cascade = if iv.cascade != 0 {
                iv.cascade
            } else {
                self.ctx.next_cascade
            };
            for p in self.order_for(iv) {
                if (avoid_csr && self.ctx.callee_saved.is_untouched(p)) || self.reserved_for(id, p)
                {
                    continue;
                }
                intf.clear();
                self.ctx
                    .matrix
                    .interference(p, &iv.runs, &mut intf, MAX_INTERFERENCE);
                if intf.len() > MAX_INTERFERENCE {
                    continue;
                }
                let mut cost = EvictionCost {
                    broken_hints: 0,
                    max_weight: 0.0,
                };
                let mut ok = true;
                for &j in &intf {
                    let victim = &self.ctx.intervals[j];
                    let allowed = if urgent {
                        victim.is_spillable()
                    } else {
                        victim.cascade < cascade && self.eviction.should_evict(iv, victim)
                    };
                    if !allowed {
                        ok = false;
                        break;
                    }
                    cost.max_weight = cost.max_weight.max(victim.weight);
                    if self.is_hinted_to(j, p) {
                        cost.broken_hints += 1;
                    }
                }
                if !ok {
                    continue;
                }
                if best.is_none_or(|(_, c)| cost < c) {
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
            && iv.uses.iter().any(|u| {
            matches!(u.operand.constraint(), regalloc2::OperandConstraint::FixedReg(q) if q == p)
        })
    }
}
