//! Probe: ion on `cranelift_like` functions in the x64 environment and smaller ones; tallies
//! outcomes, checks every success, prints sizes and the first failures.
use ragreedy_testkit::builder::listing;
use ragreedy_testkit::check::{Strictness, check_output_with};
use ragreedy_testkit::cost::cost;
use ragreedy_testkit::cranelift_like::*;
use regalloc2::{Function, RegallocOptions};
use std::panic;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(300);
    let show: Option<u64> = std::env::args().nth(2).map(|s| s.parse().unwrap());
    if let Some(seed) = show {
        println!("{}", listing(&from_seed(seed)));
        return;
    }
    panic::set_hook(Box::new(|_| {}));
    for k in [0usize, 3, 4, 6, 8] {
        let (mut ok, mut err, mut panics, mut bad, mut insts, mut blocks, mut spills) =
            (0, 0, 0, 0, 0, 0, 0);
        let mut first = vec![];
        for seed in 0..n {
            let f = from_seed(seed);
            insts += f.num_insts();
            blocks += f.num_blocks();
            let env = if k == 0 { x64_env() } else { x64_env_k(k) };
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
                    spills += cost(&f, &env, &out).spills;
                    if let Err(e) = check_output_with(&f, &env, &out, Strictness::Baseline) {
                        bad += 1;
                        if first.len() < 3 {
                            first.push(format!(
                                "seed {seed}: {}",
                                e.lines().take(3).collect::<Vec<_>>().join(" | ")
                            ));
                        }
                    }
                }
                Ok(Err(e)) => {
                    err += 1;
                    if first.len() < 3 {
                        first.push(format!("seed {seed}: {e:?}"));
                    }
                }
                Err(_) => {
                    panics += 1;
                    if first.len() < 3 {
                        first.push(format!("seed {seed}: panic"));
                    }
                }
            }
        }
        println!(
            "k={k}: ok {ok} err {err} panic {panics} check-fail {bad}; avg insts {} blocks {} spills {}",
            insts / n as usize,
            blocks / n as usize,
            spills
        );
        for f in first {
            println!("   {f}");
        }
    }
}
