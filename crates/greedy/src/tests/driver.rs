//! The greedy driver end to end on small functions: assignment with hints, eviction,
//! spilling, constraints, errors. Every output goes through regalloc2's checker.

use super::{alloc_checked, alloc_err, waves_of_values};
use ragreedy_testkit::builder::{FuncBuilder, TestFunc, env, env_by_class};
use ragreedy_testkit::cranelift_like;
use regalloc2::{Inst, Operand, PReg, RegAllocError, RegClass, VReg};

#[test]
fn block_param_takes_its_argument_register() {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let v0 = b.vreg(RegClass::Int);
    let v1 = b.vreg(RegClass::Int);
    b.set_params(b1, &[v1]);
    b.inst(b0, &[Operand::reg_def(v0)]);
    b.jump(b0, b1, &[v0]);
    b.ret(b1, &[Operand::reg_use(v1)]);
    let f = b.build().func;
    let (out, stats) = alloc_checked(&f, &env(4, 0));
    assert!(out.edits.is_empty(), "hint missed: {:?}", out.edits);
    assert_eq!(stats.spills, 0);
}

#[test]
fn fixed_use_hints_the_value_into_its_register() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let p3 = PReg::new(3, RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[Operand::reg_fixed_use(v, p3)]);
    b.ret(b0, &[]);
    let f = b.build().func;
    let (out, _) = alloc_checked(&f, &env(4, 0));
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(p3));
    assert!(out.edits.is_empty());
}

/// A long, lightly used value and a chain of short, busy ones in one register: the
/// short ones are heavier, evict the long one, and it ends up spilled.
#[test]
fn heavier_short_values_evict_a_long_light_one() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let long = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(long)]);
    let mut prev = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(prev)]);
    for _ in 0..10 {
        let next = b.vreg(RegClass::Int);
        b.inst(b0, &[Operand::reg_def(next), Operand::reg_use(prev)]);
        prev = next;
    }
    b.inst(b0, &[Operand::reg_use(prev)]);
    b.ret(b0, &[Operand::reg_use(long)]);
    let f = b.build().func;
    let (out, stats) = alloc_checked(&f, &env(1, 0));
    assert!(stats.evictions > 0, "{stats:?}");
    assert_eq!(stats.spills, 1, "{stats:?}");
    assert!(out.num_spillslots >= 1);
}

#[test]
fn more_register_uses_than_registers_is_too_many_live_regs() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let vs = b.vregs(RegClass::Int, 3);
    for &v in &vs {
        b.inst(b0, &[Operand::reg_def(v)]);
    }
    b.inst(
        b0,
        &vs.iter().map(|&v| Operand::reg_use(v)).collect::<Vec<_>>(),
    );
    b.ret(b0, &[]);
    assert!(matches!(
        alloc_err(&b.build().func, &env(2, 0)),
        RegAllocError::TooManyLiveRegs
    ));
}

#[test]
fn two_values_fixed_to_one_register_is_an_error() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    let p0 = PReg::new(0, RegClass::Int);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_def(y)]);
    b.inst(
        b0,
        &[Operand::reg_fixed_use(x, p0), Operand::reg_fixed_use(y, p0)],
    );
    b.ret(b0, &[]);
    assert!(matches!(
        alloc_err(&b.build().func, &env(4, 0)),
        RegAllocError::TooManyLiveRegs
    ));
}

/// Spilled values live in slots; their register uses get reloads, their defs stores.
#[test]
fn spilling_under_pressure_reloads_and_stores() {
    let f = waves_of_values(1, 6);
    let (_, stats) = alloc_checked(&f, &env(2, 0));
    assert!(stats.spills >= 4, "{stats:?}");
    assert!(stats.reloads >= 4 && stats.spill_stores >= 4, "{stats:?}");
}

#[test]
fn operand_constraints_are_honoured() {
    let mut b = FuncBuilder::new();
    b.spillslot_size(RegClass::Float, 2)
        .allow_multiple_vreg_defs(true);
    let b0 = b.block();
    let [a, c, d, s] = [0; 4].map(|_| b.vreg(RegClass::Int));
    let floats = b.vregs(RegClass::Float, 5);
    let p1 = PReg::new(1, RegClass::Int);
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(
        b0,
        &[Operand::reg_fixed_def(c, p1), Operand::reg_def_at_start(s)],
    );
    b.inst(
        b0,
        &[
            Operand::reg_reuse_def(d, 1),
            Operand::reg_use(a),
            Operand::reg_use(c),
        ],
    );
    b.inst(
        b0,
        &[Operand::new(
            d,
            regalloc2::OperandConstraint::Stack,
            regalloc2::OperandKind::Use,
            regalloc2::OperandPos::Early,
        )],
    );
    for &x in &floats {
        b.inst(b0, &[Operand::reg_def(x)]);
    }
    // Every float live at once in a single float register: four of them spill to
    // two-unit slots, which the structural check requires to be aligned and disjoint.
    b.inst(
        b0,
        &floats
            .iter()
            .map(|&x| Operand::any_use(x))
            .collect::<Vec<_>>(),
    );
    b.ret(b0, &[Operand::reg_use(d), Operand::reg_use(a)]);
    let f = b.build().func;
    let e = env_by_class([(3, 1), (1, 0), (1, 0)], 0);
    let (out, _) = alloc_checked(&f, &e);
    assert_eq!(out.allocs[1], regalloc2::Allocation::reg(p1));
    assert!(out.num_spillslots >= 8);
}

#[test]
fn debug_locations_cover_the_labelled_range() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let i0 = b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[]);
    let i2 = b.inst(b0, &[Operand::reg_use(v)]);
    b.ret(b0, &[]);
    b.debug_label(v, i0, i2, 7);
    let f = b.build().func;
    let (out, _) = alloc_checked(&f, &env(2, 0));
    assert!(!out.debug_locations.is_empty());
    for &(label, from, to, alloc) in &out.debug_locations {
        assert_eq!(label, 7);
        assert!(from < to && alloc.is_some());
    }
}

#[test]
fn same_input_same_output() {
    for seed in 0..40 {
        let Some(f) = ragreedy_testkit::fuzzgen::func_from_seed(
            seed,
            &ragreedy_testkit::fuzzgen::fuzz_options(),
        ) else {
            continue;
        };
        let e =
            ragreedy_testkit::fuzzgen::restrict_env(&ragreedy_testkit::fuzzgen::machine_env(), 4);
        let a = crate::run(&f, &e, &crate::Options::default());
        let mut ctx = crate::Context::new();
        // A context that already allocated other functions must give the same answer.
        let _ = crate::run_with_context(
            &f,
            &ragreedy_testkit::fuzzgen::machine_env(),
            &crate::Options::default(),
            &mut ctx,
        );
        let b = crate::run_with_context(&f, &e, &crate::Options::default(), &mut ctx);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.allocs, b.allocs);
                assert_eq!(format!("{:?}", a.edits), format!("{:?}", b.edits));
                assert_eq!(a.num_spillslots, b.num_spillslots);
            }
            (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}")),
            (a, b) => panic!("seed {seed}: {:?} vs {:?}", a.err(), b.err()),
        }
    }
}

#[test]
fn spilling_without_deferral_still_checks() {
    let opts = crate::Options {
        deferred_spilling: false,
        ..Default::default()
    };
    for seed in 0..60 {
        let Some(f) = ragreedy_testkit::fuzzgen::func_from_seed(
            seed,
            &ragreedy_testkit::fuzzgen::small_env_options(4),
        ) else {
            continue;
        };
        let e =
            ragreedy_testkit::fuzzgen::restrict_env(&ragreedy_testkit::fuzzgen::machine_env(), 4);
        match crate::run(&f, &e, &opts) {
            Ok(out) => ragreedy_testkit::check::check_output(&f, &e, &out).unwrap(),
            // Failing is only allowed where ion fails too.
            Err(err) => assert!(
                regalloc2::run(&f, &e, &regalloc2::RegallocOptions::default()).is_err(),
                "seed {seed}: {err:?} where ion allocates"
            ),
        }
    }
}

/// A context that formed coalescing groups for one function, then allocates others with
/// group hints off: group placement, which reads those groups, stays off with them (the
/// groups of the earlier function are not the later one's), and every allocation checks.
#[test]
fn group_placement_never_reads_another_functions_groups() {
    use ragreedy_testkit::fuzzgen;
    let e = fuzzgen::machine_env();
    let opts = fuzzgen::fuzz_options();
    let without_hints = crate::Options {
        group_hints: false,
        ..Default::default()
    };
    let mut ctx = crate::Context::new();
    let mut placed = 0;
    let mut pairs = 0;
    for seed in 0..400u64 {
        if pairs == 30 {
            break;
        }
        let (Some(first), Some(next)) = (
            fuzzgen::func_from_seed(2 * seed, &opts),
            fuzzgen::func_from_seed(2 * seed + 1, &opts),
        ) else {
            continue;
        };
        if crate::run_with_context(&first, &e, &crate::Options::default(), &mut ctx).is_err() {
            continue;
        }
        placed += ctx.stats().group_placements;
        if let Ok(out) = crate::run_with_context(&next, &e, &without_hints, &mut ctx) {
            ragreedy_testkit::check::check_output(&next, &e, &out).unwrap();
            assert_eq!(ctx.stats().group_placements, 0, "seed {}", 2 * seed + 1);
            pairs += 1;
        }
    }
    // The first functions did form and place groups, so stale ones were there to read.
    assert!(
        placed > 0 && pairs == 30,
        "{placed} placements, {pairs} pairs"
    );
}

/// Two waves of values spilled under pressure, the second defined after the first died:
/// the second wave reuses the first wave's slots.
#[test]
fn spilled_values_with_disjoint_lives_share_slots() {
    let f = waves_of_values(2, 5);
    let (out, stats) = alloc_checked(&f, &env(2, 0));
    assert!(stats.shared_slot_values >= 6, "{stats:?}");
    // One slot per spilled value without sharing.
    assert!(
        out.num_spillslots * 2 <= stats.shared_slot_values,
        "{} slots for {} spilled values",
        out.num_spillslots,
        stats.shared_slot_values
    );
}

/// A def at an instruction that clobbers every allocatable register, of a value later
/// handed over in a register outside the allocatable set: the def piece takes that
/// register (as ion's bundles do), and a value with no such operand is still an error.
#[test]
fn def_under_a_full_clobber_takes_its_fixed_register_outside_the_order() {
    let build = |fixed: PReg| {
        let mut b = FuncBuilder::new();
        let b0 = b.block();
        let v = b.vreg(RegClass::Int);
        let all = [PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int)];
        b.inst_clobbers(b0, &[Operand::reg_def(v)], &all);
        b.inst(b0, &[]);
        b.inst(b0, &[Operand::reg_fixed_use(v, fixed)]);
        b.ret(b0, &[]);
        b.build().func
    };
    let outside = PReg::new(5, RegClass::Int);
    let (out, stats) = alloc_checked(&build(outside), &env(2, 0));
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
    // Found as a hint first (`Options::outside_hints`); the fallback finds it without.
    assert_eq!(stats.outside_hints, 1, "{stats:?}");
    let (out, stats) =
        super::try_alloc_with(&build(outside), &env(2, 0), &no_outside_hints()).unwrap();
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
    assert_eq!(stats.fixed_register_fallbacks, 1, "{stats:?}");
    // Its fixed register is allocatable and clobbered too: nothing can hold the def.
    assert!(matches!(
        alloc_err(&build(PReg::new(1, RegClass::Int)), &env(2, 0)),
        RegAllocError::TooManyLiveRegs
    ));
}

/// As above, but the register outside the allocatable set is named by a fixed operand of
/// the block parameter the value is passed to: copy partners' fixed registers count.
#[test]
fn def_under_a_full_clobber_takes_a_partners_fixed_register() {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let (v, w) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    let all = [PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int)];
    let outside = PReg::new(5, RegClass::Int);
    b.set_params(b1, &[w]);
    b.inst_clobbers(b0, &[Operand::reg_def(v)], &all);
    b.jump(b0, b1, &[v]);
    b.ret(b1, &[Operand::reg_fixed_use(w, outside)]);
    let f = b.build().func;
    let (out, stats) = super::try_alloc_with(&f, &env(2, 0), &no_outside_hints()).unwrap();
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
    assert_eq!(stats.fixed_register_fallbacks, 1, "{stats:?}");
    // Hint recoloring would move the pair there afterwards: off, so that the choice
    // shows. Group hints off too: `d` is in `a`'s copy group, and its register as a group
    // hint would break the tie this test is about.
    let options = crate::Options {
        hint_recoloring: false,
        group_hints: false,
        ..Default::default()
    };
    let (out, _) = super::try_alloc_with(&f, &env(2, 0), &options).unwrap();
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
}

fn no_outside_hints() -> crate::Options {
    crate::Options {
        outside_hints: false,
        ..Default::default()
    }
}

#[test]
fn output_reused_across_functions_matches_a_fresh_one() {
    // A function with spills and moves, then a smaller one, then the first again, all
    // into one `Output`: stale allocations, edits or offsets of a larger function must
    // not survive into a smaller one.
    let (big, small) = (waves_of_values(6, 8), waves_of_values(1, 2));
    let env = env(3, 0);
    let options = crate::Options::default();
    let mut ctx = crate::Context::new();
    let mut reused = regalloc2::Output::default();
    for f in [&big, &small, &big] {
        crate::run_with_context_into(f, &env, &options, &mut ctx, &mut reused).unwrap();
        let (fresh, _) = alloc_checked(f, &env);
        assert_eq!(format!("{reused:?}"), format!("{fresh:?}"));
    }
    assert!(!reused.edits.is_empty(), "the larger function spills");
}

/// `f` with every vreg renumbered `by` higher (the first `by` ids left unmentioned, as
/// Cranelift leaves its first 192).
fn shifted(f: &TestFunc, by: usize) -> TestFunc {
    let mut g = f.clone();
    g.rename_vregs(|v| VReg::new(v.vreg() + by, v.class()));
    g.num_vregs += by;
    g
}

#[test]
fn tables_reused_across_vreg_spans_match_fresh_ones() {
    // A context's per-vreg tables are reset only over the vregs the function mentions
    // (`Liveness::vreg_span`), the others keeping an earlier function's entries.
    // Functions numbered from 0 and from higher up, with spills, splits and calls,
    // alternate through one context: each must allocate as a fresh context does.
    let low = waves_of_values(6, 8);
    let mut high = shifted(&low, 192);
    // Labels on a vreg below the span (no table holds it) and on a spilled one.
    high.debug_value_labels = vec![
        (VReg::new(3, RegClass::Int), Inst::new(0), Inst::new(5), 1),
        (
            VReg::new(192 + 3, RegClass::Int),
            Inst::new(0),
            Inst::new(40),
            2,
        ),
    ];
    let tiny_high = shifted(&waves_of_values(1, 2), 400);
    let calls: Vec<TestFunc> = (0..6).map(cranelift_like::from_seed).collect();
    let mut order: Vec<(&TestFunc, regalloc2::MachineEnv)> = Vec::new();
    for f in [&high, &low, &tiny_high, &high, &low, &high] {
        order.push((f, env(3, 0)));
    }
    for f in &calls {
        order.push((f, cranelift_like::x64_env_k(4)));
        order.push((&low, env(3, 0)));
    }
    // The classic allocators share the spill slots and the edit builder's tables.
    for algorithm in [
        crate::Algorithm::Greedy,
        crate::Algorithm::Basic,
        crate::Algorithm::LinearScan,
        crate::Algorithm::Irc,
    ] {
        let options = crate::Options {
            algorithm,
            ..Default::default()
        };
        let mut ctx = crate::Context::new();
        let mut reused = regalloc2::Output::default();
        let mut labelled = false;
        for (f, env) in &order {
            crate::run_with_context_into(*f, env, &options, &mut ctx, &mut reused).unwrap();
            let fresh = crate::run(*f, env, &options).unwrap();
            ragreedy_testkit::check::check_output(*f, env, &fresh)
                .unwrap_or_else(|e| panic!("{algorithm:?}: checker rejected: {e}"));
            assert_eq!(format!("{reused:?}"), format!("{fresh:?}"), "{algorithm:?}");
            labelled |= reused.debug_locations.iter().any(|l| l.0 == 2);
            assert!(reused.debug_locations.iter().all(|l| l.0 != 1));
        }
        assert!(
            labelled,
            "{algorithm:?}: the spilled value's label has locations"
        );
    }
}

/// Two values `a` and `b` fill both allocatable registers while `v` is live; `v` is
/// handed over in `p5`, a register outside the allocatable set, at its last use.
/// Returns the function and that register.
fn value_handed_over_outside_the_order(nonallocatable_between: bool) -> (TestFunc, PReg) {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (v, x, y) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    let outside = PReg::new(5, RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_def(y)]);
    if nonallocatable_between {
        b.inst(b0, &[Operand::fixed_nonallocatable(outside)]);
    }
    b.inst(b0, &[Operand::reg_use(x), Operand::reg_use(y)]);
    b.inst(b0, &[Operand::reg_fixed_use(v, outside)]);
    b.ret(b0, &[]);
    (b.build().func, outside)
}

/// `Options::outside_hints`: `v` lives in the register outside the order its fixed use
/// names, so `x` and `y` keep the two allocatable ones and nothing is spilled or moved.
#[test]
fn value_lives_in_the_register_outside_the_order_its_fixed_use_names() {
    let (f, outside) = value_handed_over_outside_the_order(false);
    let (out, stats) = alloc_checked(&f, &env(2, 0));
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
    assert!(out.edits.is_empty(), "{:?}", out.edits);
    assert_eq!(stats.outside_hints, 1, "{stats:?}");
    let (out, stats) = super::try_alloc_with(&f, &env(2, 0), &no_outside_hints()).unwrap();
    assert!(!out.edits.is_empty());
    assert_eq!(stats.outside_hints, 0, "{stats:?}");
}

/// A fixed non-allocatable operand naming that register inside `v`'s life (not reserved
/// in the interference matrix) keeps `v` out of it.
#[test]
fn no_value_outside_the_order_across_a_nonallocatable_operand_naming_its_register() {
    let (f, outside) = value_handed_over_outside_the_order(true);
    let (out, _) = alloc_checked(&f, &env(2, 0));
    // The def may take `p5` only in a piece that ends before instruction 3 (the
    // checker does not see the non-allocatable operand): `v` leaves `p5` by then.
    let leaves = out.edits.iter().any(|(point, edit)| {
        let regalloc2::Edit::Move { from, .. } = edit;
        point.inst().index() <= 3 && *from == regalloc2::Allocation::reg(outside)
    });
    assert!(
        out.allocs[0] != regalloc2::Allocation::reg(outside) || leaves,
        "{}",
        ragreedy_testkit::builder::listing_with_output(&f, &out)
    );
}

/// A value defined into any location and handed over in fixed stack slot `p2` (the
/// environment's one, right after the two registers); `reg_def` makes the def need a
/// register instead.
fn value_handed_over_in_a_fixed_stack_slot(reg_def: bool) -> (TestFunc, PReg) {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (v, x) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    let slot = PReg::new(2, RegClass::Int);
    let def = if reg_def {
        Operand::reg_def(v)
    } else {
        Operand::any_def(v)
    };
    b.inst(b0, &[def]);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_use(x), Operand::any_use(v)]);
    b.inst(b0, &[Operand::reg_fixed_use(v, slot)]);
    b.ret(b0, &[]);
    (b.build().func, slot)
}

/// `Options::outside_stack_hints`: a value none of whose operands needs a register lives
/// in the fixed stack slot its fixed use names, so that use needs no store.
#[test]
fn value_needing_no_register_lives_in_its_fixed_stack_slot() {
    let (f, slot) = value_handed_over_in_a_fixed_stack_slot(false);
    let e = env_by_class([(2, 0); 3], 1);
    let (out, stats) = alloc_checked(&f, &e);
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(slot));
    assert!(out.edits.is_empty(), "{:?}", out.edits);
    assert_eq!(stats.outside_stack_hints, 1, "{stats:?}");
    let off = crate::Options {
        outside_stack_hints: false,
        ..Default::default()
    };
    let (out, stats) = super::try_alloc_with(&f, &e, &off).unwrap();
    assert_ne!(out.allocs[0], regalloc2::Allocation::reg(slot));
    assert!(!out.edits.is_empty());
    assert_eq!(stats.outside_stack_hints, 0, "{stats:?}");
}

/// A value whose def needs a register never lives in a fixed stack slot.
#[test]
fn value_needing_a_register_stays_out_of_its_fixed_stack_slot() {
    let (f, slot) = value_handed_over_in_a_fixed_stack_slot(true);
    let (out, stats) = alloc_checked(&f, &env_by_class([(2, 0); 3], 1));
    assert_ne!(out.allocs[0], regalloc2::Allocation::reg(slot));
    assert_eq!(stats.outside_stack_hints, 0, "{stats:?}");
}

/// `Options::any_uses_weightless`: `v`, defined and used only by operands that accept
/// the stack, is used more often than `x` and `y`, which need registers, while all three
/// are live at two registers. Weighed by its uses `v` would keep a register and push `x`
/// or `y` to the stack (a store and reloads); weighed by nothing it goes to the stack,
/// where its operands cost nothing.
#[test]
fn value_with_only_stack_operands_gives_way() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (v, x, y) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    b.inst(b0, &[Operand::any_def(v)]);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_def(y)]);
    for _ in 0..6 {
        b.inst(b0, &[Operand::any_use(v)]);
    }
    b.inst(b0, &[Operand::reg_use(x), Operand::reg_use(y)]);
    b.inst(b0, &[Operand::any_use(v)]);
    b.ret(b0, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let (out, _) = alloc_checked(&f, &e);
    assert_eq!(ragreedy_testkit::cost::cost(&f, &e, &out).weighted, 0);
    // Unspilling off too: it gives the pushed-out value its register back once `v` is
    // placed, which would hide what the weight decided.
    let off = crate::Options {
        any_uses_weightless: false,
        unspilling: false,
        ..Default::default()
    };
    let (out, _) = super::try_alloc_with(&f, &e, &off).unwrap();
    assert!(ragreedy_testkit::cost::cost(&f, &e, &out).weighted > 0);
}

/// `a`, which `p5` (outside the allocatable set at `env(2, 0)`) names, reused by `d`,
/// which lives longer: `a` is defined in `p5` (`fixed_def`), or defined in any register
/// and then read in `p5`. `a` lives into a second block, so that its fixed operand does
/// not queue it ahead of `d` (only single-block intervals go ahead for one). Returns the
/// function and `p5`.
fn reuse_pair_named_outside(fixed_def: bool) -> (TestFunc, PReg) {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let (a, d) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    let outside = PReg::new(5, RegClass::Int);
    if fixed_def {
        b.inst(b0, &[Operand::reg_fixed_def(a, outside)]);
    } else {
        b.inst(b0, &[Operand::reg_def(a)]);
        b.inst(b0, &[Operand::reg_fixed_use(a, outside)]);
    }
    b.jump(b0, b1, &[]);
    b.inst(b1, &[Operand::reg_reuse_def(d, 1), Operand::reg_use(a)]);
    for _ in 0..4 {
        b.inst(b1, &[]);
    }
    b.inst(b1, &[Operand::reg_use(d)]);
    b.ret(b1, &[]);
    (b.build().func, outside)
}

/// `Options::outside_recoloring`: `a` is defined in `p5`, outside the allocatable set,
/// and reused by `d`, which lives longer and is placed first (in `p0`); `a` then
/// follows its partner there. Hint recoloring moves the pair to `p5`, where the fixed
/// def needs no copy.
#[test]
fn hint_recoloring_moves_a_pair_to_the_register_outside_the_order_of_a_fixed_def() {
    let (f, _) = reuse_pair_named_outside(true);
    let e = env(2, 0);
    let (out, _) = alloc_checked(&f, &e);
    assert!(out.edits.is_empty(), "{:?}", out.edits);
    let off = crate::Options {
        outside_recoloring: false,
        ..Default::default()
    };
    let (out, _) = super::try_alloc_with(&f, &e, &off).unwrap();
    assert!(!out.edits.is_empty());
}

/// Hints of equal weight: `a`'s fixed use names `p5`, outside the allocatable set, and
/// its reuse partner `d` (longer, placed first) holds `p0`. `a` takes `p5`, which no
/// other value can use, rather than the lower-numbered `p0`.
#[test]
fn equal_hints_prefer_the_register_outside_the_order() {
    let (f, outside) = reuse_pair_named_outside(false);
    // Hint recoloring would move the pair there afterwards: off, so that the choice
    // shows. Group hints off too: `d` is in `a`'s copy group, and its register as a group
    // hint would break the tie this test is about.
    let options = crate::Options {
        hint_recoloring: false,
        group_hints: false,
        ..Default::default()
    };
    let (out, _) = super::try_alloc_with(&f, &env(2, 0), &options).unwrap();
    assert_eq!(out.allocs[0], regalloc2::Allocation::reg(outside));
}
