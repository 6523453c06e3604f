//! The patch is in effect: Cranelift's calls into `regalloc2` reach the switch, which routes
//! them to the selected allocator; and a deliberately wrong allocation routed through the
//! switch is rejected by Cranelift's checker (so the checker really reads the switch's output).

mod common;

use ragreedy_jit::{Allocator, run_file, run_source};
use regalloc2::{
    Allocation, Function, MachineEnv, OperandKind, Output, RegAllocError, RegallocOptions,
    Selection,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

const SMALL: &str = "test run
target x86_64

function %f(i64, i64) -> i64 {
block0(v0: i64, v1: i64):
    v2 = imul v0, v1
    v3 = iadd v2, v0
    v4 = isub v3, v1
    return v4
}
; run: %f(6, 7) == 41
";

#[test]
fn ion_selected_compiles_through_the_switch() {
    let before = regalloc2::thread_calls();
    let r = Allocator::Ion.with(|| run_source("small", SMALL));
    assert_eq!((r.passed, r.failed), (1, 0), "{:?}", r.failures);
    // The function and its trampoline were both allocated through the switch.
    assert!(regalloc2::thread_calls() >= before + 2);
    assert_eq!(regalloc2::thread_last_allocator(), Some("ion"));
}

#[test]
fn greedy_selected_reaches_greedy() {
    let outside = regalloc2::outside_calls();
    // Proves the routing even while greedy itself fails: the switch records where it sent the
    // function before calling the allocator.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        Allocator::Greedy.with(|| run_source("small", SMALL))
    }));
    assert_eq!(regalloc2::thread_last_allocator(), Some("greedy"));
    assert!(regalloc2::outside_calls() > outside);
}

#[test]
fn greedy_compiles_and_runs_a_function() {
    let r = Allocator::Greedy.with(|| run_source("small", SMALL));
    assert_eq!((r.passed, r.failed), (1, 0), "{:?}", r.failures);
    assert_eq!(regalloc2::thread_last_allocator(), Some("greedy"));
}

/// ion's allocation with one register use moved to another register of its class.
fn corrupted_ion(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    result: &mut Output,
) -> Result<(), RegAllocError> {
    let mut out = regalloc2::original_run(func, env, options)?;
    for inst in 0..func.num_insts() {
        let inst = regalloc2::Inst::new(inst);
        let start = out.inst_alloc_offsets[inst.index()] as usize;
        for (k, op) in func.inst_operands(inst).iter().enumerate() {
            let Some(reg) = out.allocs[start + k].as_reg() else {
                continue;
            };
            if op.kind() != OperandKind::Use {
                continue;
            }
            let class = reg.class() as usize;
            let other = env.preferred_regs_by_class[class]
                .into_iter()
                .chain(env.non_preferred_regs_by_class[class])
                .find(|r| *r != reg);
            if let Some(other) = other {
                out.allocs[start + k] = Allocation::reg(other);
                *result = out;
                return Ok(());
            }
        }
    }
    panic!("no register use to corrupt");
}

#[test]
fn checker_rejects_a_wrong_allocation_routed_through_the_switch() {
    let file = common::bench_dir().join("many_live.clif");
    let good = Allocator::Ion.with(|| run_file(&file));
    assert!(good.failed == 0 && good.passed > 0, "{:?}", good.failures);

    let bad = regalloc2::with_thread_allocator(Selection::Hook(corrupted_ion), || run_file(&file));
    assert_eq!(regalloc2::thread_last_allocator(), Some("hook"));
    assert_eq!(bad.passed, 0, "a corrupted allocation ran: {:?}", bad);
    assert_eq!(bad.failed, good.passed);
    assert!(
        bad.failures
            .iter()
            .any(|f| f.contains("register allocation checker")),
        "{:?}",
        bad.failures
    );
}
