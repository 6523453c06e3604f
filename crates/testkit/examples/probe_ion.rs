//! Probe: ion on fuzz `Func`s in full and restricted environments; tallies outcomes and
//! runs `check_output` on every success.
use ragreedy_testkit::check::{Strictness, check_output_with};
use ragreedy_testkit::fuzzgen::*;
use regalloc2::RegallocOptions;
use std::panic;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(300);
    let small_opts = args.get(2).is_some();
    panic::set_hook(Box::new(|_| {}));
    for k in [0usize, 2, 3, 4, 6, 8, 12] {
        let (mut ok, mut err, mut panics, mut bad, mut valid) = (0, 0, 0, 0, 0);
        let mut errs = std::collections::BTreeMap::new();
        for seed in 0..n {
            let opts = if k == 0 || !small_opts {
                fuzz_options()
            } else {
                small_env_options(k)
            };
            let Some(f) = func_from_seed(seed, &opts) else {
                continue;
            };
            valid += 1;
            let env = if k == 0 {
                machine_env()
            } else {
                restrict_env(&machine_env(), k)
            };
            let r = panic::catch_unwind(|| {
                regalloc2::run(
                    &f,
                    &env,
                    &RegallocOptions {
                        validate_ssa: true,
                        ..Default::default()
                    },
                )
            });
            match r {
                Ok(Ok(out)) => {
                    ok += 1;
                    if let Err(e) = check_output_with(&f, &env, &out, Strictness::Baseline) {
                        bad += 1;
                        if bad <= 4 {
                            println!(
                                "k={k} seed={seed}: {}",
                                e.lines().take(5).collect::<Vec<_>>().join("\n")
                            );
                        }
                    }
                }
                Ok(Err(e)) => {
                    err += 1;
                    *errs
                        .entry(format!("{e:?}").split('(').next().unwrap().to_string())
                        .or_insert(0) += 1;
                }
                Err(_) => panics += 1,
            }
        }
        println!("k={k}: valid {valid} ok {ok} err {err} {errs:?} panic {panics} check-fail {bad}");
    }
}
