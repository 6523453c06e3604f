//! A wide sweep of the generator `ragreedy stress` uses, at 2 and 3 registers per class:
//! every function through ours, ion and regalloc2's checker. Ignored (minutes in
//! release); run with `cargo test --release --test sweep -- --ignored --nocapture`.
//! Fails if ours errs where ion allocates or the checker rejects ours, and prints the
//! weighted cost against ion over the functions both allocate.

use ragreedy_testkit::{check, cost, fuzzgen};
use regalloc2::RegallocOptions;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn sweep(seeds: std::ops::Range<u64>, k: usize) -> Vec<String> {
    let env = fuzzgen::stress_env(Some(k));
    let options = regalloc_greedy::Options::default();
    let mut ctx = regalloc_greedy::Context::new();
    let (mut functions, mut ion_errors, mut compared) = (0usize, 0usize, 0usize);
    let (mut ours_cost, mut ion_cost, mut log_ratio) = (0u64, 0u64, 0f64);
    let mut failures = Vec::new();
    for seed in seeds {
        let opts = fuzzgen::stress_options(seed, Some(k));
        let Some(f) = fuzzgen::func_from_seed(seed, &opts) else {
            continue;
        };
        functions += 1;
        // ion panics on some over-constrained inputs (regalloc2#222): its error too.
        let ion = catch_unwind(AssertUnwindSafe(|| {
            regalloc2::run(&f, &env, &RegallocOptions::default())
        }))
        .ok()
        .and_then(Result::ok);
        ion_errors += usize::from(ion.is_none());
        match regalloc_greedy::run_with_context(&f, &env, &options, &mut ctx) {
            Err(e) if ion.is_some() => failures.push(format!("seed {seed} k {k}: {e:?}")),
            Err(_) => {}
            Ok(out) => {
                if let Err(e) = check::check_output(&f, &env, &out) {
                    failures.push(format!("seed {seed} k {k}: checker: {e}"));
                } else if let Some(ion) = &ion {
                    let (a, b) = (
                        cost::cost(&f, &env, &out).weighted,
                        cost::cost(&f, &env, ion).weighted,
                    );
                    ours_cost += a;
                    ion_cost += b;
                    log_ratio += ((a as f64 + 1.0) / (b as f64 + 1.0)).ln();
                    compared += 1;
                }
            }
        }
    }
    println!(
        "k {k}: {functions} functions, {} failures, {ion_errors} ion errors; weighted cost \
         {ours_cost} vs ion {ion_cost}, geomean ratio {:.4} over {compared}",
        failures.len(),
        (log_ratio / compared.max(1) as f64).exp()
    );
    failures
}

#[test]
#[ignore]
fn stress_sweep_two_and_three_registers() {
    let mut failures = sweep(0..8000, 2);
    failures.extend(sweep(0..3000, 3));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
