//! The Cranelift-like generator: every function is accepted by ion (with SSA validation) and
//! passes the checker, in the x64 environment and in small ones; the shapes it exists for
//! actually appear; no critical edges.

use ragreedy_testkit::check::{Strictness, check_output_with};
use ragreedy_testkit::cranelift_like::{from_seed, x64_env, x64_env_k};
use regalloc2::{Block, Function, Inst, OperandConstraint, RegallocOptions};

#[test]
fn ion_accepts_every_generated_function() {
    let opts = RegallocOptions {
        validate_ssa: true,
        ..Default::default()
    };
    for seed in 0..300 {
        let f = from_seed(seed);
        for env in [x64_env(), x64_env_k(4)] {
            let out = regalloc2::run(&f, &env, &opts)
                .unwrap_or_else(|e| panic!("seed {seed}: ion error {e:?}"));
            check_output_with(&f, &env, &out, Strictness::Baseline)
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
    }
}

#[test]
fn shapes_appear_and_no_critical_edges() {
    let (mut stack, mut reuse, mut branch_ops, mut calls, mut loops) = (0, 0, 0, 0, 0);
    for seed in 0..100 {
        let f = from_seed(seed);
        for b in 0..f.num_blocks() {
            let b = Block::new(b);
            let succs = f.block_succs(b);
            if succs.len() > 1 {
                for s in succs {
                    assert_eq!(f.block_preds(*s).len(), 1, "seed {seed}: critical edge");
                }
                if !f.inst_operands(f.block_insns(b).last()).is_empty() {
                    branch_ops += 1;
                }
            }
            loops += succs.iter().filter(|s| s.index() <= b.index()).count();
        }
        for i in 0..f.num_insts() {
            let i = Inst::new(i);
            for op in f.inst_operands(i) {
                match op.constraint() {
                    OperandConstraint::Stack => stack += 1,
                    OperandConstraint::Reuse(_) => reuse += 1,
                    _ => {}
                }
            }
            if f.inst_clobbers(i).len() >= 20 {
                calls += 1;
            }
        }
    }
    assert!(stack > 0 && reuse > 0 && branch_ops > 0 && calls > 0 && loops > 0);
}

#[test]
fn generated_inputs_validate() {
    use ragreedy_testkit::fuzzgen::{func_from_seed, fuzz_options};
    use ragreedy_testkit::validate::validate_input;
    for seed in 0..200 {
        validate_input(&from_seed(seed)).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if let Some(f) = func_from_seed(seed, &fuzz_options()) {
            validate_input(&f).unwrap_or_else(|e| panic!("Func seed {seed}: {e}"));
        }
    }
}
