//! Fuzz target `moves`: our parallel-move resolver against a simulator. The check lives in
//! the core crate (`regalloc_greedy::fuzzing::check_parallel_moves`, behind its `fuzzing`
//! feature) because the resolver is crate-private; build with `--features moves`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    regalloc_greedy::fuzzing::check_parallel_moves(data);
});
