//! Policy behind small traits, as LLVM keeps it behind its priority and eviction
//! advisors: the driver asks, the advisor decides, so a policy can be measured and
//! replaced without touching the mechanism.

use super::interval::{LiveInterval, SpillWeight, Stage};

/// Orders the allocation queue: larger first.
pub(crate) trait PriorityAdvisor {
    /// `weighted_size` is Σ segment length × block frequency; `has_hint` says whether the
    /// interval has a register preference (fixed operand or copy partner).
    fn priority(&self, iv: &LiveInterval, weighted_size: f32, has_hint: bool) -> u64;
}

/// LLVM's default layout: intervals that already failed once (stage `Split`) wait until
/// every other interval has been tried; among the rest, hinted intervals first, then by
/// frequency-weighted size, so long and hot ranges pick registers before short ones.
pub(crate) struct DefaultPriority;

impl PriorityAdvisor for DefaultPriority {
    fn priority(&self, iv: &LiveInterval, weighted_size: f32, has_hint: bool) -> u64 {
        let size = (weighted_size.max(0.0) as u64).min((1 << 40) - 1);
        if iv.deferred {
            return 0;
        }
        if iv.stage == Stage::Split {
            return size;
        }
        (1 << 63) | (u64::from(has_hint) << 62) | size
    }
}

/// Eviction cost of one candidate register, compared lexicographically: fewer broken
/// hints first, then the lightest heaviest-victim.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub(crate) struct EvictionCost {
    pub broken_hints: u32,
    pub max_weight: SpillWeight,
}

pub(crate) trait EvictionAdvisor {
    /// May `evictor` take the register from `victim`, weights alone considered?
    fn should_evict(&self, evictor: &LiveInterval, victim: &LiveInterval) -> bool;
}

/// Strictly heavier evicts lighter. The strictness matters: two intervals of equal
/// weight never evict each other, the first one in keeps the register.
pub(crate) struct DefaultEviction;

impl EvictionAdvisor for DefaultEviction {
    fn should_evict(&self, evictor: &LiveInterval, victim: &LiveInterval) -> bool {
        victim.is_spillable() && evictor.weight > victim.weight
    }
}
