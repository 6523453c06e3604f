//! `OFF=a,b` in the environment: options turned off, to weigh what a mechanism costs or
//! buys (shared by the `profile`, `quality` and `show` examples); `CALLEE_SAVED=x64-sysv`:
//! the callee-saved registers of Cranelift's x64 System V and `tail` conventions
//! (`Options::callee_saved_x64_sysv`) for functions Cranelift produced.

/// `Options::default()` with the options `OFF` names turned off; exits on an unknown name.
pub fn options_from_env() -> regalloc_greedy::Options {
    let mut options = regalloc_greedy::Options::default();
    for name in std::env::var("OFF").unwrap_or_default().split(',') {
        match name {
            "" => {}
            "evicting_local_split" => options.evicting_local_split = false,
            "csr_pre_split" => options.csr_pre_split = false,
            "csr_first_use_cost" => options.csr_first_use_cost = false,
            "deferred_spilling" => options.deferred_spilling = false,
            "spill_recoloring" => options.spill_recoloring = false,
            "outside_hints" => options.outside_hints = false,
            "outside_stack_hints" => options.outside_stack_hints = false,
            "fixed_slot_entry_cost" => options.fixed_slot_entry_cost = false,
            "weightless_to_stack" => options.weightless_to_stack = false,
            "any_uses_weightless" => options.any_uses_weightless = false,
            "partner_slots" => options.partner_slots = false,
            "hint_recoloring" => options.hint_recoloring = false,
            "exchange_aside" => options.exchange_aside = false,
            "group_hints" => options.group_hints = false,
            "long_value_order" => options.long_value_order = false,
            "group_placement" => options.group_placement = false,
            "group_free_choice" => options.group_free_choice = false,
            "copy_spilling" => options.copy_spilling = false,
            "copy_spill_chains" => options.copy_spill_chains = false,
            "unspilling" => options.unspilling = false,
            "head_splits" => options.head_splits = false,
            "stack_use_pieces" => options.stack_use_pieces = false,
            "unspill_copy_freed" => options.unspill_copy_freed = false,
            "hoist_common_stores" => options.hoist_common_stores = false,
            "hoist_common_moves" => options.hoist_common_moves = false,
            "sink_common_moves" => options.sink_common_moves = false,
            "forward_stores" => options.forward_stores = false,
            "early_fixed_slot_writes" => options.early_fixed_slot_writes = false,
            "fixed_slot_homes" => options.fixed_slot_homes = false,
            "sink_partially_dead_moves" => options.sink_partially_dead_moves = false,
            "sibling_reuse_copies" => options.sibling_reuse_copies = false,
            "region_islands" => options.region_islands = false,
            "queue_split_parts" => options.queue_split_parts = false,
            "join_stores" => options.join_stores = false,
            "fallthrough_copies" => options.fallthrough_copies = false,
            "last_chance_recoloring" => options.last_chance_recoloring = false,
            "slot_sharing" => options.slot_sharing = false,
            "redundant_moves" => options.redundant_moves = false,
            "splitting" => options.splitting = false,
            other => {
                eprintln!("OFF: unknown option {other}");
                std::process::exit(2);
            }
        }
    }
    options
}

/// Whether `CALLEE_SAVED=x64-sysv` is set; exits on another value.
#[allow(dead_code)]
pub fn x64_sysv_from_env() -> bool {
    match std::env::var("CALLEE_SAVED").as_deref() {
        Ok("x64-sysv") => true,
        Ok("") | Err(_) => false,
        Ok(other) => {
            eprintln!("CALLEE_SAVED: unknown convention {other}");
            std::process::exit(2);
        }
    }
}
