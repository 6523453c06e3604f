//! Fuzz target `small_env`: see `ragreedy_fuzz_checks::check_small_env` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ragreedy_fuzz_checks::check_small_env(data);
});
