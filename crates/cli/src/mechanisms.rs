//! The mechanisms of regalloc-greedy that the command line can turn off, in one table:
//! `ragreedy stress --disable NAME` looks names up here, and `ragreedy ablate` turns each
//! row off in turn and reads the row's counter.

use regalloc_greedy::{Options, Stats};

/// One mechanism: how the command line names it, how to turn it off, and the statistics
/// counter that shows it at work.
pub struct Mechanism {
    /// The name `stress --disable` takes.
    pub name: &'static str,
    /// The `Options` field that turns it off (ablate labels its configurations `-FIELD`).
    pub option: &'static str,
    /// Sets that field to off.
    pub disable: fn(&mut Options),
    /// What the counter shows, as ablate's table labels it.
    pub counter: &'static str,
    /// Reads the counter from summed statistics.
    pub count: fn(&Stats) -> usize,
}

impl Mechanism {
    /// `base` with this mechanism turned off.
    pub fn off(&self, base: &Options) -> Options {
        let mut options = base.clone();
        (self.disable)(&mut options);
        options
    }
}

/// Every mechanism, in the order ablate prints them.
pub static MECHANISMS: &[Mechanism] = &[
    Mechanism {
        name: "recoloring",
        option: "last_chance_recoloring",
        disable: |o| o.last_chance_recoloring = false,
        counter: "last_chance_recolorings",
        count: |s| s.last_chance_recolorings,
    },
    Mechanism {
        name: "csr",
        option: "csr_first_use_cost",
        disable: |o| o.csr_first_use_cost = false,
        counter: "csr_first_uses + csr_declined",
        count: |s| s.csr_first_uses + s.csr_declined,
    },
    Mechanism {
        name: "csr-pre-split",
        option: "csr_pre_split",
        disable: |o| o.csr_pre_split = false,
        counter: "csr_pre_splits",
        count: |s| s.csr_pre_splits,
    },
    Mechanism {
        name: "hints",
        option: "hint_recoloring",
        disable: |o| o.hint_recoloring = false,
        counter: "hint_recolorings",
        count: |s| s.hint_recolorings,
    },
    Mechanism {
        name: "exchange-aside",
        option: "exchange_aside",
        disable: |o| o.exchange_aside = false,
        counter: "aside_exchanges",
        count: |s| s.aside_exchanges,
    },
    Mechanism {
        name: "group-hints",
        option: "group_hints",
        disable: |o| o.group_hints = false,
        counter: "group_unions",
        count: |s| s.group_unions,
    },
    Mechanism {
        name: "group-placement",
        option: "group_placement",
        disable: |o| o.group_placement = false,
        counter: "group_placements",
        count: |s| s.group_placements,
    },
    Mechanism {
        name: "group-free-choice",
        option: "group_free_choice",
        disable: |o| o.group_free_choice = false,
        counter: "group_free_choices",
        count: |s| s.group_free_choices,
    },
    Mechanism {
        name: "long-value-order",
        option: "long_value_order",
        disable: |o| o.long_value_order = false,
        counter: "long_order_assignments",
        count: |s| s.long_order_assignments,
    },
    Mechanism {
        name: "evicting-local-split",
        option: "evicting_local_split",
        disable: |o| o.evicting_local_split = false,
        counter: "evicting_local_splits",
        count: |s| s.evicting_local_splits,
    },
    Mechanism {
        name: "copy-spilling",
        option: "copy_spilling",
        disable: |o| o.copy_spilling = false,
        counter: "copy_spills",
        count: |s| s.copy_spills,
    },
    Mechanism {
        name: "copy-spill-chains",
        option: "copy_spill_chains",
        disable: |o| o.copy_spill_chains = false,
        counter: "chain_copy_spills",
        count: |s| s.chain_copy_spills,
    },
    Mechanism {
        name: "unspilling",
        option: "unspilling",
        disable: |o| o.unspilling = false,
        counter: "unspilled",
        count: |s| s.unspilled,
    },
    Mechanism {
        name: "region-islands",
        option: "region_islands",
        disable: |o| o.region_islands = false,
        counter: "region_islands",
        count: |s| s.region_islands,
    },
    Mechanism {
        name: "queue-split-parts",
        option: "queue_split_parts",
        disable: |o| o.queue_split_parts = false,
        counter: "region_splits",
        count: |s| s.region_splits,
    },
    Mechanism {
        name: "head-splits",
        option: "head_splits",
        disable: |o| o.head_splits = false,
        counter: "head_splits",
        count: |s| s.head_splits,
    },
    Mechanism {
        name: "stack-use-pieces",
        option: "stack_use_pieces",
        disable: |o| o.stack_use_pieces = false,
        counter: "stack_use_pieces",
        count: |s| s.stack_use_pieces,
    },
    Mechanism {
        name: "unspill-copy-freed",
        option: "unspill_copy_freed",
        disable: |o| o.unspill_copy_freed = false,
        counter: "unspilled",
        count: |s| s.unspilled,
    },
    Mechanism {
        name: "hoist-common-stores",
        option: "hoist_common_stores",
        disable: |o| o.hoist_common_stores = false,
        counter: "hoisted_stores",
        count: |s| s.hoisted_stores,
    },
    Mechanism {
        name: "hoist-common-moves",
        option: "hoist_common_moves",
        disable: |o| o.hoist_common_moves = false,
        counter: "hoisted_moves",
        count: |s| s.hoisted_moves,
    },
    Mechanism {
        name: "sink-common-moves",
        option: "sink_common_moves",
        disable: |o| o.sink_common_moves = false,
        counter: "sunk_moves",
        count: |s| s.sunk_moves,
    },
    Mechanism {
        name: "sink-partially-dead-moves",
        option: "sink_partially_dead_moves",
        disable: |o| o.sink_partially_dead_moves = false,
        counter: "partially_dead_moves",
        count: |s| s.partially_dead_moves,
    },
    Mechanism {
        name: "forward-stores",
        option: "forward_stores",
        disable: |o| o.forward_stores = false,
        counter: "forwarded_stores",
        count: |s| s.forwarded_stores,
    },
    Mechanism {
        name: "early-fixed-slot-writes",
        option: "early_fixed_slot_writes",
        disable: |o| o.early_fixed_slot_writes = false,
        counter: "early_fixed_slot_writes",
        count: |s| s.early_fixed_slot_writes,
    },
    Mechanism {
        name: "fixed-slot-homes",
        option: "fixed_slot_homes",
        disable: |o| o.fixed_slot_homes = false,
        counter: "fixed_slot_homes",
        count: |s| s.fixed_slot_homes,
    },
    Mechanism {
        name: "fallthrough-copies",
        option: "fallthrough_copies",
        disable: |o| o.fallthrough_copies = false,
        counter: "fallthrough_copies",
        count: |s| s.fallthrough_copies,
    },
    Mechanism {
        name: "sibling-reuse-copies",
        option: "sibling_reuse_copies",
        disable: |o| o.sibling_reuse_copies = false,
        counter: "hoisted_moves",
        count: |s| s.hoisted_moves,
    },
    Mechanism {
        name: "outside-hints",
        option: "outside_hints",
        disable: |o| o.outside_hints = false,
        counter: "outside_hints",
        count: |s| s.outside_hints,
    },
    Mechanism {
        name: "outside-stack-hints",
        option: "outside_stack_hints",
        disable: |o| o.outside_stack_hints = false,
        counter: "outside_stack_hints",
        count: |s| s.outside_stack_hints,
    },
    Mechanism {
        name: "fixed-slot-entry-cost",
        option: "fixed_slot_entry_cost",
        disable: |o| o.fixed_slot_entry_cost = false,
        counter: "fixed_slots_declined",
        count: |s| s.fixed_slots_declined,
    },
    Mechanism {
        name: "weightless-to-stack",
        option: "weightless_to_stack",
        disable: |o| o.weightless_to_stack = false,
        counter: "weightless_spills",
        count: |s| s.weightless_spills,
    },
    Mechanism {
        name: "outside-recoloring",
        option: "outside_recoloring",
        disable: |o| o.outside_recoloring = false,
        counter: "hint_recolorings",
        count: |s| s.hint_recolorings,
    },
    Mechanism {
        name: "weightless-any",
        option: "any_uses_weightless",
        disable: |o| o.any_uses_weightless = false,
        counter: "spills",
        count: |s| s.spills,
    },
    Mechanism {
        name: "slot-sharing",
        option: "slot_sharing",
        disable: |o| o.slot_sharing = false,
        counter: "spill_slots",
        count: |s| s.spill_slots,
    },
    Mechanism {
        name: "partner-slots",
        option: "partner_slots",
        disable: |o| o.partner_slots = false,
        counter: "partner_slot_values",
        count: |s| s.partner_slot_values,
    },
    Mechanism {
        name: "redundant-moves",
        option: "redundant_moves",
        disable: |o| o.redundant_moves = false,
        counter: "redundant_moves_removed",
        count: |s| s.redundant_moves_removed,
    },
    Mechanism {
        name: "cross-block",
        option: "cross_block_redundant_moves",
        disable: |o| o.cross_block_redundant_moves = false,
        counter: "cross_block_redundant_moves_removed",
        count: |s| s.cross_block_redundant_moves_removed,
    },
    Mechanism {
        name: "reload-from-copies",
        option: "reload_from_copies",
        disable: |o| o.reload_from_copies = false,
        counter: "reloads_from_copies",
        count: |s| s.reloads_from_copies,
    },
    Mechanism {
        name: "join-stores",
        option: "join_stores",
        disable: |o| o.join_stores = false,
        counter: "join_stores",
        count: |s| s.join_stores,
    },
    Mechanism {
        name: "deferred-spilling",
        option: "deferred_spilling",
        disable: |o| o.deferred_spilling = false,
        counter: "deferred_spills",
        count: |s| s.deferred_spills,
    },
    Mechanism {
        name: "splitting",
        option: "splitting",
        disable: |o| o.splitting = false,
        counter: "splits (all kinds)",
        count: |s| s.local_splits + s.region_splits + s.block_splits + s.instruction_splits,
    },
];

/// The mechanism `stress --disable` calls `name`.
pub fn find(name: &str) -> Option<&'static Mechanism> {
    MECHANISMS.iter().find(|m| m.name == name)
}

/// The names `stress --disable` accepts, comma-separated (for messages).
pub fn names() -> String {
    let names: Vec<&str> = MECHANISMS.iter().map(|m| m.name).collect();
    names.join(", ")
}
