//! Fuzz target `malformed`: see `ragreedy_fuzz_checks::check_malformed` for what it checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ragreedy_fuzz_checks::check_malformed(data);
});
