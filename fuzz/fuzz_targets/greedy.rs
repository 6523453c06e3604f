//! Fuzz target `greedy`: see `ragreedy_fuzz_checks::check_greedy` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ragreedy_fuzz_checks::check_greedy(data);
});
