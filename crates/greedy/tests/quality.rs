//! Quality regression guard: the weighted cost (docs/metrics.md) that `Options::default()`
//! gives a fixed fuzz corpus may not rise more than 1% above the figures recorded below.
//!
//! The corpus is the first [`FUNCTIONS`] functions of `ragreedy stress` (seeds from 0,
//! `fuzzgen::stress_options` / `stress_env`) in the fuzzer's full environment and at 4
//! registers per class. Every output must pass regalloc2's checker (through testkit's
//! wrapper); an error is allowed only where ion fails too, and such a function counts for
//! neither allocator.
//!
//! To record new figures (after a change that lowers the cost, or one that raises it on
//! purpose), run
//!
//! ```sh
//! cargo test --test quality -- --nocapture
//! ```
//!
//! and copy the measured sums from its `quality:` lines into [`RECORDED`]. Where ion allocates
//! every function, `ragreedy stress --count 300 [--regs 4]` prints the same sums (`total`).

use ragreedy_testkit::{check, cost, fuzzgen};
use regalloc2::RegallocOptions;

/// Functions per environment.
const FUNCTIONS: usize = 300;

/// Allowed rise above a recorded figure, in percent.
const TOLERANCE_PERCENT: u64 = 1;

/// Per environment (`None`: the full environment, `Some(k)`: k registers per class), the
/// recorded sum of weighted costs over the corpus.
const RECORDED: [(Option<usize>, u64); 2] = [(None, 3_779_229), (Some(4), 1_257_541)];

/// The sum of weighted costs over the corpus in `regs`, and how many functions it covers.
fn weighted_cost(regs: Option<usize>) -> (u64, usize) {
    let env = fuzzgen::stress_env(regs);
    let options = regalloc_greedy::Options::default();
    let mut ctx = regalloc_greedy::Context::new();
    let (mut total, mut allocated, mut functions) = (0, 0, 0);
    for seed in 0.. {
        if functions == FUNCTIONS {
            break;
        }
        let Some(func) = fuzzgen::func_from_seed(seed, &fuzzgen::stress_options(seed, regs)) else {
            continue;
        };
        functions += 1;
        match regalloc_greedy::run_with_context(&func, &env, &options, &mut ctx) {
            Ok(out) => {
                if let Err(e) = check::check_output(&func, &env, &out) {
                    panic!("seed {seed}, regs {regs:?}: checker rejected our allocation: {e}");
                }
                total += cost::cost(&func, &env, &out).weighted;
                allocated += 1;
            }
            Err(e) => {
                // ion panics on some over-constrained inputs: that is its failure too.
                let ion = std::panic::catch_unwind(|| {
                    regalloc2::run(&func, &env, &RegallocOptions::default())
                });
                assert!(
                    !matches!(ion, Ok(Ok(_))),
                    "seed {seed}, regs {regs:?}: {e:?} where ion allocates"
                );
            }
        }
    }
    (total, allocated)
}

#[test]
fn weighted_cost_stays_within_one_percent_of_the_recorded_figures() {
    let mut regressions = Vec::new();
    for (regs, recorded) in RECORDED {
        let (measured, allocated) = weighted_cost(regs);
        eprintln!(
            "quality: regs {regs:?}: measured {measured} (recorded {recorded}) over {allocated} \
             of {FUNCTIONS} functions"
        );
        if measured * 100 > recorded * (100 + TOLERANCE_PERCENT) {
            regressions.push(format!(
                "regs {regs:?}: weighted cost {measured} is more than {TOLERANCE_PERCENT}% \
                 above the recorded {recorded}"
            ));
        }
    }
    assert!(
        regressions.is_empty(),
        "{}\n(if the rise is intended, record the new figures: see this test's module docs)",
        regressions.join("\n")
    );
}
