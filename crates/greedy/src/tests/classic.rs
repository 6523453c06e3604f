//! The classic allocators (basic, linear scan, iterated register coalescing) on generated
//! functions: every output through regalloc2's checker, and no error where ion allocates.

use crate::{Algorithm, Options};
use ragreedy_testkit::check::check_output;
use ragreedy_testkit::fuzzgen;
use regalloc2::RegallocOptions;

/// Allocates `count` generated functions (seeds from `first`) with `algorithm` in the
/// stress environment with `regs` registers per class; returns a description of each
/// failure: a checker rejection, a panic, or an error on a function ion allocates.
fn failures(algorithm: Algorithm, regs: Option<usize>, first: u64, count: usize) -> Vec<String> {
    let mut options = Options::default();
    options.algorithm = algorithm;
    let mut ctx = crate::Context::new();
    let env = fuzzgen::stress_env(regs);
    let mut failed = Vec::new();
    let mut done = 0;
    let mut seed = first;
    while done < count {
        let s = seed;
        seed += 1;
        let Some(f) = fuzzgen::func_from_seed(s, &fuzzgen::stress_options(s, regs)) else {
            continue;
        };
        done += 1;
        let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::run_with_context(&f, &env, &options, &mut ctx)
        }));
        match ours {
            Err(_) => {
                ctx = crate::Context::new();
                failed.push(format!("seed {s}: panic"));
            }
            Ok(Err(e)) => {
                let ion = std::panic::catch_unwind(|| {
                    regalloc2::run(&f, &env, &RegallocOptions::default())
                });
                if matches!(ion, Ok(Ok(_))) {
                    failed.push(format!("seed {s}: {e:?} where ion allocates"));
                }
            }
            Ok(Ok(out)) => {
                if let Err(e) = check_output(&f, &env, &out) {
                    failed.push(format!("seed {s}: checker: {e}"));
                }
            }
        }
    }
    failed
}

fn assert_clean(algorithm: Algorithm) {
    for (regs, count) in [(None, 300), (Some(4), 300), (Some(3), 200), (Some(2), 200)] {
        let f = failures(algorithm, regs, 1, count);
        assert!(
            f.is_empty(),
            "{} at {regs:?} registers: {} failures, first: {:?}",
            algorithm.name(),
            f.len(),
            &f[..f.len().min(5)]
        );
    }
}

#[test]
fn basic_passes_the_checker_on_generated_functions() {
    assert_clean(Algorithm::Basic);
}

#[test]
fn scratch_dump() {
    let Ok(seed) = std::env::var("SCRATCH_SEED") else { return };
    let seed: u64 = seed.parse().unwrap();
    let regs: usize = std::env::var("SCRATCH_REGS").unwrap().parse().unwrap();
    let alg = Algorithm::from_name(&std::env::var("SCRATCH_ALG").unwrap()).unwrap();
    let f = fuzzgen::func_from_seed(seed, &fuzzgen::stress_options(seed, Some(regs))).unwrap();
    let env = fuzzgen::stress_env(Some(regs));
    println!("{env:?}");
    println!("{}", ragreedy_testkit::builder::listing(&f));
    let mut options = Options::default();
    options.algorithm = alg;
    let (r, log) = super::debug_log(|| crate::run(&f, &env, &options));
    for l in log { println!("{l}"); }
    println!("{:?}", r.map(|_| ()));
}
