//! Fuzz target `differential`: ion and ours on the same input; see
//! `ragreedy_fuzz_checks::check_differential` (quality is reported with
//! `RAGREEDY_FUZZ_REPORT=1`, never asserted).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ragreedy_fuzz_checks::check_differential(data);
});
