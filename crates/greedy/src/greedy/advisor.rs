//! Policy behind small traits, as LLVM keeps it behind its priority and eviction
//! advisors: the driver asks, the advisor decides, so a policy can be measured and
//! replaced without touching the mechanism.

use super::interval::{Cascade, LiveInterval, SpillWeight, Stage};

/// Orders the allocation queue: larger first.
pub(crate) trait PriorityAdvisor {
    /// `weighted_size` is Σ segment length × block frequency; `local_fixed_hint` says
    /// whether the interval lies in one block and has a fixed-register operand.
    fn priority(&self, iv: &LiveInterval, weighted_size: f32, local_fixed_hint: bool) -> u64;
}

/// LLVM's default layout: intervals that already failed once (stage `Split`) wait until
/// every other interval has been tried; among the rest, single-block intervals with a
/// fixed-register operand first, then by frequency-weighted size, so long and hot ranges
/// pick registers before short ones. LLVM raises every interval with a known register
/// preference; raising values live across blocks for one fixed operand (or, worse, for
/// copy partners, which nearly every Wasm value has) put short hinted values ahead of a
/// hot value used everywhere, which then found every callee-saved register taken.
pub(crate) struct DefaultPriority;

impl PriorityAdvisor for DefaultPriority {
    #[inline]
    fn priority(&self, iv: &LiveInterval, weighted_size: f32, local_fixed_hint: bool) -> u64 {
        let size = (weighted_size.max(0.0) as u64).min((1 << 40) - 1);
        if iv.deferred {
            return 0;
        }
        if iv.stage == Stage::Split {
            return size;
        }
        (1 << 63) | (u64::from(local_fixed_hint) << 62) | size
    }
}

/// Eviction cost of one candidate register, compared lexicographically: fewer broken
/// hints first, then the lightest heaviest-victim.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(crate) struct EvictionCost {
    pub broken_hints: u32,
    pub max_weight: SpillWeight,
}

/// The eviction policy: who may take a register from whom, what taking one register
/// costs and which cost wins, and how crowded a register may be before it is not worth
/// looking at. `evict.rs` is the mechanism (probing registers, evicting, requeueing,
/// cascade bookkeeping) and asks only this.
pub(crate) trait EvictionAdvisor {
    /// Registers with more interfering intervals than this are skipped.
    fn max_interference(&self) -> usize;
    /// May `evictor` take a register from `victim`? `cascade` is the number the evictor
    /// will carry (its own, or the next fresh one).
    fn may_evict(&self, evictor: &LiveInterval, victim: &LiveInterval, cascade: Cascade) -> bool;
    /// The cost of evicting nothing yet.
    fn no_cost(&self) -> EvictionCost;
    /// Adds `victim` to the cost of a register; `breaks_hint` says whether the victim
    /// loses a register it is hinted to. Adding a victim never makes a cost `cheaper`
    /// than it was: the mechanism drops a register once its partial cost loses.
    fn add_victim(&self, cost: &mut EvictionCost, victim: &LiveInterval, breaks_hint: bool);
    /// Is `a` strictly cheaper than `b`? Ties keep the register found first.
    fn cheaper(&self, a: &EvictionCost, b: &EvictionCost) -> bool;
}

/// LLVM's default policy. Strictly heavier evicts lighter, and only a victim with a
/// smaller cascade number: the strictness means two intervals of equal weight never
/// evict each other (the first one in keeps the register), and the cascade order means
/// every chain of evictions runs through increasing numbers, so it ends. Unspillable
/// intervals are urgent and may evict any spillable interval; nothing evicts them, so
/// that cannot cycle either. A register with more than 16 interfering intervals is not
/// worth the probe.
pub(crate) struct DefaultEviction;

impl EvictionAdvisor for DefaultEviction {
    fn max_interference(&self) -> usize {
        16
    }

    fn may_evict(&self, evictor: &LiveInterval, victim: &LiveInterval, cascade: Cascade) -> bool {
        if !victim.is_spillable() {
            return false;
        }
        !evictor.is_spillable() || (victim.cascade < cascade && evictor.weight > victim.weight)
    }

    fn no_cost(&self) -> EvictionCost {
        EvictionCost {
            broken_hints: 0,
            max_weight: 0.0,
        }
    }

    fn add_victim(&self, cost: &mut EvictionCost, victim: &LiveInterval, breaks_hint: bool) {
        cost.max_weight = cost.max_weight.max(victim.weight);
        cost.broken_hints += u32::from(breaks_hint);
    }

    fn cheaper(&self, a: &EvictionCost, b: &EvictionCost) -> bool {
        a < b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::greedy::interval::IntervalKind;
    use regalloc2::{RegClass, VReg};

    fn interval(weight: SpillWeight, cascade: Cascade) -> LiveInterval {
        LiveInterval {
            vreg: VReg::new(0, RegClass::Int),
            kind: IntervalKind::Main,
            segments: Default::default(),
            runs: Default::default(),
            fixed_conflicts: Default::default(),
            uses: Default::default(),
            stage: Stage::Assign,
            cascade,
            weight,
            assigned: None,
            split_hint: None,
            limit: usize::MAX,
            deferred: false,
            spilled: false,
        }
    }

    /// Strictly heavier with a newer cascade evicts; equal weight, an older cascade or an
    /// unspillable victim does not; an unspillable evictor ignores cascades.
    #[test]
    fn default_eviction_rules() {
        let a = DefaultEviction;
        let heavy = interval(2.0, 0);
        assert!(a.may_evict(&heavy, &interval(1.0, 0), 1));
        assert!(!a.may_evict(&heavy, &interval(2.0, 0), 1));
        assert!(!a.may_evict(&heavy, &interval(1.0, 1), 1));
        assert!(!a.may_evict(&heavy, &interval(f32::INFINITY, 0), 1));
        let urgent = interval(f32::INFINITY, 0);
        assert!(a.may_evict(&urgent, &interval(5.0, 7), 1));
        assert!(!a.may_evict(&urgent, &interval(f32::INFINITY, 0), 1));
    }

    /// A single-block interval with a fixed operand goes before any larger one without;
    /// otherwise larger first; a second-round (`Split`) interval after every first-round
    /// one, however large; a deferred spill last of all.
    #[test]
    fn default_priority_layout() {
        let a = DefaultPriority;
        let fresh = interval(1.0, 0);
        let hinted_small = a.priority(&fresh, 3.0, true);
        let plain_large = a.priority(&fresh, 5000.0, false);
        let plain_small = a.priority(&fresh, 3.0, false);
        assert!(hinted_small > plain_large);
        assert!(plain_large > plain_small);
        let mut second = interval(1.0, 0);
        second.stage = Stage::Split;
        assert!(a.priority(&second, 1e9, true) < plain_small);
        assert!(a.priority(&second, 10.0, false) > a.priority(&second, 3.0, false));
        let mut deferred = interval(1.0, 0);
        deferred.deferred = true;
        assert_eq!(a.priority(&deferred, 1e9, true), 0);
    }

    /// Fewer broken hints win before a lighter heaviest victim; an equal cost is not
    /// cheaper, so the register found first keeps a tie.
    #[test]
    fn default_eviction_cost_order() {
        let a = DefaultEviction;
        let mut light_but_hinted = a.no_cost();
        a.add_victim(&mut light_but_hinted, &interval(1.0, 0), true);
        let mut heavy = a.no_cost();
        a.add_victim(&mut heavy, &interval(3.0, 0), false);
        a.add_victim(&mut heavy, &interval(2.0, 0), false);
        assert_eq!(heavy.max_weight, 3.0);
        assert!(a.cheaper(&heavy, &light_but_hinted));
        assert!(!a.cheaper(&light_but_hinted, &heavy));
        assert!(!a.cheaper(&heavy, &heavy));
        assert_eq!(a.max_interference(), 16);
    }
}
