//! The shrinker on structural predicates over fuzzer functions: it keeps the predicate
//! true, keeps the function valid, gets a 200-instruction function down to a handful of
//! instructions, stays within its budget, and gives the same answer every time.

use ragreedy_testkit::builder::{TestFunc, function_difference};
use ragreedy_testkit::check::check_output;
use ragreedy_testkit::fuzzgen::{func_from_seed, fuzz_options, machine_env};
use ragreedy_testkit::shrink::shrink;
use ragreedy_testkit::text::{parse, print};
use ragreedy_testkit::validate::validate_input;
use regalloc2::{
    Function, Inst, MachineEnv, OperandConstraint, OperandKind, PReg, PRegSet, RegClass,
};

/// An instruction with a use fixed to p0i that also clobbers p1i.
fn fixed_use_and_clobber(f: &TestFunc, _: &MachineEnv) -> bool {
    let (p0, p1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
    (0..f.num_insts()).any(|i| {
        let inst = Inst::new(i);
        f.inst_clobbers(inst).contains(p1)
            && f.inst_operands(inst).iter().any(|op| {
                op.kind() == OperandKind::Use
                    && op.constraint() == OperandConstraint::FixedReg(p0)
                    && op.as_fixed_nonallocatable().is_none()
            })
    })
}

/// The first fuzzer function (by seed) with at least 200 instructions that has the property.
fn big_function_with_property() -> (u64, TestFunc) {
    let env = machine_env();
    (0..5000)
        .filter_map(|s| {
            func_from_seed(s, &fuzz_options()).map(|f| (s, TestFunc::from_function(&f)))
        })
        .find(|(_, f)| f.num_insts() >= 200 && fixed_use_and_clobber(f, &env))
        .expect("some seed below 5000 has a 200-instruction function with the property")
}

#[test]
fn structural_property_shrinks_to_a_few_instructions() {
    let (seed, f) = big_function_with_property();
    let env = machine_env();
    let r = shrink(&f, &env, 5000, fixed_use_and_clobber);
    assert!(r.held && r.fixpoint, "seed {seed}: {} calls", r.calls);
    assert!(r.calls <= 5000);
    assert!(fixed_use_and_clobber(&r.func, &env));
    validate_input(&r.func).unwrap_or_else(|e| panic!("seed {seed}: shrunk invalid: {e}"));
    assert!(
        r.func.num_insts() <= 10,
        "seed {seed}: {} -> {} instructions\n{}",
        f.num_insts(),
        r.func.num_insts(),
        print(&r.func, &env)
    );
    // Everything not needed went: one block, and vregs numbered densely.
    assert_eq!(r.func.num_blocks(), 1, "{}", print(&r.func, &env));
    assert!(r.func.num_vregs() <= 3, "{}", print(&r.func, &env));
    // The environment lost what the predicate does not need: fixed stack slots and the
    // registers of the classes the function no longer names.
    assert!(r.env.fixed_stack_slots.is_empty());
    for c in [1, 2] {
        assert_eq!(r.env.preferred_regs_by_class[c], PRegSet::empty());
        assert_eq!(r.env.non_preferred_regs_by_class[c], PRegSet::empty());
    }
    assert_eq!(
        r.env.preferred_regs_by_class[0],
        env.preferred_regs_by_class[0]
    );
    // A valid function allocates (through the checker) like any other.
    let out = regalloc2::run(&r.func, &r.env, &Default::default()).expect("ion allocates");
    check_output(&r.func, &r.env, &out).expect("checker accepts ion");
    // Deterministic: the same input and predicate give the same function and call count.
    let again = shrink(&f, &env, 5000, fixed_use_and_clobber);
    assert_eq!(print(&again.func, &env), print(&r.func, &env));
    assert_eq!(again.calls, r.calls);
    // And the result is a text case like any other.
    let (parsed, _) = parse(&print(&r.func, &env)).expect("parses");
    assert_eq!(function_difference(&parsed, &r.func), None);
}

#[test]
fn budget_bounds_the_predicate_calls() {
    let (_, f) = big_function_with_property();
    let env = machine_env();
    for budget in [1, 2, 7, 40] {
        let mut calls = 0;
        let r = shrink(&f, &env, budget, |f, e| {
            calls += 1;
            fixed_use_and_clobber(f, e)
        });
        assert_eq!(calls, r.calls);
        assert!(r.calls <= budget, "{} calls for budget {budget}", r.calls);
        assert!(
            !r.fixpoint,
            "a 200-instruction function is not done in {budget} calls"
        );
        assert!(fixed_use_and_clobber(&r.func, &env));
        assert!(validate_input(&r.func).is_ok());
    }
    let r = shrink(&f, &env, 0, fixed_use_and_clobber);
    assert_eq!((r.calls, r.held), (0, false));
}

#[test]
fn false_predicate_returns_the_input() {
    let (_, f) = big_function_with_property();
    let env = machine_env();
    let r = shrink(&f, &env, 100, |_, _| false);
    assert!(!r.held);
    assert_eq!((r.calls, r.accepted), (1, 0));
    assert_eq!(function_difference(&r.func, &f), None);
}

/// A predicate that needs control flow keeps it: "some block has a parameter and two
/// predecessors" (a merge point) cannot shrink to one block, and the edges into the merge
/// keep matching argument counts.
#[test]
fn merge_point_survives_shrinking() {
    let env = machine_env();
    let merge = |f: &TestFunc, _: &MachineEnv| {
        (0..f.num_blocks()).any(|b| {
            let b = regalloc2::Block::new(b);
            !f.block_params(b).is_empty() && f.block_preds(b).len() >= 2
        })
    };
    let mut shrunk_some = 0;
    for seed in 0..60 {
        let Some(f) = func_from_seed(seed, &fuzz_options()) else {
            continue;
        };
        let f = TestFunc::from_function(&f);
        if !merge(&f, &env) {
            continue;
        }
        let r = shrink(&f, &env, 3000, merge);
        assert!(merge(&r.func, &env));
        validate_input(&r.func).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        // The floor is an entry jumping to a block that loops to itself (a merge of two
        // edges) or a diamond (entry, two arms, merge).
        assert!(
            r.func.num_blocks() <= 4 && r.func.num_insts() <= 6,
            "seed {seed}:\n{}",
            print(&r.func, &env)
        );
        let out = regalloc2::run(&r.func, &r.env, &Default::default()).expect("ion allocates");
        check_output(&r.func, &r.env, &out).expect("checker accepts ion");
        if std::env::var_os("SHOW").is_some() {
            println!("{}", print(&r.func, &r.env));
        }
        shrunk_some += 1;
    }
    assert!(
        shrunk_some >= 5,
        "only {shrunk_some} seeds had a merge point"
    );
}
