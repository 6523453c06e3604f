//! Tests of the testkit itself, against regalloc2's own allocators: hand-built functions
//! allocate and check, the structural checks catch broken outputs, the cost metric counts
//! what docs/metrics.md says, and the seeded generator plus restricted environments are accepted.

use ragreedy_testkit::builder::{FuncBuilder, TestFunc, env, listing_with_output};
use ragreedy_testkit::check::{Strictness, check_output, check_output_with, ion_output_passes};
use ragreedy_testkit::cost::{cost, loop_depths};
use ragreedy_testkit::fuzzgen::{
    func_from_seed, fuzz_options, machine_env, next_func, restrict_env, small_env_options,
};
use regalloc2::{
    Algorithm, Allocation, Edit, Function, Inst, MachineEnv, Operand, Output, PReg, ProgPoint,
    RegClass, RegallocOptions, SpillSlot,
};

fn ion(f: &impl Function, e: &MachineEnv) -> Output {
    regalloc2::run(
        f,
        e,
        &RegallocOptions {
            validate_ssa: true,
            ..Default::default()
        },
    )
    .expect("ion")
}

/// A loop: b0 -> b1 (header, param) -> b2 (latch) -> b1 | b3 (exit via split edge).
fn loop_func() -> TestFunc {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3, b4) = (b.block(), b.block(), b.block(), b.block(), b.block());
    let v0 = b.vreg(RegClass::Int);
    let i = b.vreg(RegClass::Int);
    let i2 = b.vreg(RegClass::Int);
    let f0 = b.vreg(RegClass::Float);
    b.set_params(b1, &[i]);
    let d0 = b.inst(b0, &[Operand::reg_def(v0)]);
    b.inst(b0, &[Operand::reg_def(f0)]);
    b.jump(b0, b1, &[v0]);
    b.jump(b1, b2, &[]);
    let call = b.inst_clobbers(
        b2,
        &[Operand::reg_reuse_def(i2, 1), Operand::reg_use(i)],
        &[PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Float)],
    );
    b.branch(b2, &[Operand::reg_use(i2)], &[(b4, &[][..]), (b3, &[][..])]);
    b.jump(b4, b1, &[i2]);
    b.ret(
        b3,
        &[
            Operand::reg_fixed_use(i2, PReg::new(0, RegClass::Int)),
            Operand::any_use(f0),
        ],
    );
    b.debug_label(v0, d0, call, 7);
    b.spillslot_size(RegClass::Float, 2);
    b.build().func
}

#[test]
fn hand_built_function_allocates_and_checks() {
    let f = loop_func();
    assert_eq!(f.block_preds[1].len(), 2);
    for e in [env(2, 1), env(3, 0), machine_env()] {
        let out = ion(&f, &e);
        check_output(&f, &e, &out).unwrap_or_else(|err| {
            panic!("{err}\n{}", listing_with_output(&f, &out));
        });
    }
    assert!(f.to_string().contains("branch"));
}

#[test]
fn ion_output_passes_tells_an_input_the_checker_rejects_for_every_allocator() {
    let f = loop_func();
    for e in [env(2, 1), machine_env()] {
        assert!(ion_output_passes(&f, &e));
    }
    let (f, e) = ragreedy_testkit::text::parse(include_str!(
        "../fixtures/checker-rejects-every-allocation.txt"
    ))
    .expect("the fixture parses");
    let out = regalloc2::run(&f, &e, &RegallocOptions::default()).expect("ion allocates it");
    assert!(check_output_with(&f, &e, &out, Strictness::Baseline).is_err());
    assert!(!ion_output_passes(&f, &e));
}

#[test]
fn loop_depth_and_cost() {
    let f = loop_func();
    assert_eq!(loop_depths(&f), vec![0, 1, 1, 0, 1]);
    // Hand-made output: one reg->reg move in the loop (freq 10), one spill in the entry
    // block (freq 1), one non-preferred register used.
    let e = env(2, 1);
    let np = PReg::new(2, RegClass::Int);
    let out = Output {
        edits: vec![
            (
                ProgPoint::before(Inst::new(1)),
                Edit::Move {
                    from: Allocation::reg(PReg::new(0, RegClass::Int)),
                    to: Allocation::stack(SpillSlot::new(0)),
                },
            ),
            (
                ProgPoint::before(Inst::new(4)),
                Edit::Move {
                    from: Allocation::reg(PReg::new(0, RegClass::Int)),
                    to: Allocation::reg(np),
                },
            ),
        ],
        num_spillslots: 1,
        ..Default::default()
    };
    let c = cost(&f, &e, &out);
    assert_eq!(
        (c.moves, c.spills, c.reloads, c.non_preferred_regs),
        (1, 1, 0, 1)
    );
    assert_eq!(c.weighted, 2 + 10 + 4);
    // The parts: the store in the entry block, the move in the loop, the register opened.
    assert_eq!(
        (
            c.parts.spills,
            c.parts.moves,
            c.parts.reloads,
            c.parts.callee_saved
        ),
        (2, 10, 0, 4)
    );
}

#[test]
fn structural_checks_catch_broken_outputs() {
    let (seed, f) = (0..)
        .find_map(|s| func_from_seed(s, &fuzz_options()).map(|f| (s, f)))
        .unwrap();
    let e = restrict_env(&machine_env(), 4);
    let Ok(good) = regalloc2::run(&f, &e, &RegallocOptions::default()) else {
        return;
    };
    check_output_with(&f, &e, &good, Strictness::Baseline).unwrap();
    let must_fail = |out: Output, what: &str| {
        assert!(
            check_output_with(&f, &e, &out, Strictness::Baseline).is_err(),
            "seed {seed}: {what} not detected"
        );
    };
    let mut o = good.clone();
    o.allocs.pop();
    must_fail(o, "short allocs");
    let mut o = good.clone();
    o.allocs[0] = Allocation::none();
    must_fail(o, "missing alloc");
    if good.edits.len() >= 2 && good.edits[0].0 != good.edits.last().unwrap().0 {
        let mut o = good.clone();
        o.edits.reverse();
        must_fail(o, "unsorted edits");
    }
    let mut o = good.clone();
    o.num_spillslots = 0;
    if good.num_spillslots > 0 {
        must_fail(o, "num_spillslots too small");
    }
    // A move into p63 (only ever a fixed_nonallocatable register) is never legal.
    let mut o = good.clone();
    o.edits.insert(
        0,
        (
            ProgPoint::before(Inst::new(0)),
            Edit::Move {
                from: Allocation::reg(PReg::new(0, RegClass::Int)),
                to: Allocation::reg(PReg::new(63, RegClass::Int)),
            },
        ),
    );
    must_fail(o, "write to a non-allocatable register");
    let mut o = good.clone();
    o.edits.insert(
        0,
        (
            ProgPoint::before(Inst::new(0)),
            Edit::Move {
                from: Allocation::stack(SpillSlot::new(0)),
                to: Allocation::stack(SpillSlot::new(0)),
            },
        ),
    );
    o.num_spillslots = o.num_spillslots.max(1);
    must_fail(o, "stack-to-stack move");
}

#[test]
fn multi_slot_alignment_is_checked() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Float);
    b.inst(b0, &[Operand::any_def(v)]);
    b.ret(b0, &[Operand::any_use(v)]);
    b.spillslot_size(RegClass::Float, 2);
    let f = b.build().func;
    let e = env(1, 0);
    let mut out = Output {
        allocs: vec![Allocation::stack(SpillSlot::new(1)); 2],
        inst_alloc_offsets: vec![0, 1],
        num_spillslots: 3,
        ..Default::default()
    };
    assert!(
        check_output(&f, &e, &out)
            .unwrap_err()
            .contains("not aligned")
    );
    out.allocs = vec![Allocation::stack(SpillSlot::new(2)); 2];
    assert!(
        check_output(&f, &e, &out)
            .unwrap_err()
            .contains("num_spillslots")
    );
    out.num_spillslots = 4;
    check_output(&f, &e, &out).unwrap();
}

/// ion accepts every seeded `Func` in the full environment and, with `small_env_options`,
/// (nearly) every one in restricted environments; its outputs pass our structural checks
/// at baseline strictness. Measured: k >= 4 → no errors at all over 600 functions.
#[test]
fn ion_accepts_seeded_funcs_and_restricted_envs() {
    let mut checked = 0;
    for seed in 0..150 {
        if let Some(f) = func_from_seed(seed, &fuzz_options()) {
            let e = machine_env();
            check_output_with(&f, &e, &ion(&f, &e), Strictness::Baseline).unwrap();
            checked += 1;
        }
        for k in [4, 6] {
            if let Some(f) = func_from_seed(seed, &small_env_options(k)) {
                let e = restrict_env(&machine_env(), k);
                check_output_with(&f, &e, &ion(&f, &e), Strictness::Baseline)
                    .unwrap_or_else(|err| panic!("seed {seed} k {k}: {err}"));
            }
        }
    }
    assert!(checked > 20);
}

#[test]
fn fastalloc_outputs_check_too() {
    for seed in 0..60 {
        let Some(f) = func_from_seed(seed, &fuzz_options()) else {
            continue;
        };
        let e = machine_env();
        let out = regalloc2::run(
            &f,
            &e,
            &RegallocOptions {
                algorithm: Algorithm::Fastalloc,
                ..Default::default()
            },
        )
        .unwrap();
        check_output_with(&f, &e, &out, Strictness::Baseline).unwrap();
    }
}

#[test]
fn restrict_env_keeps_k_registers() {
    let e = restrict_env(&machine_env(), 5);
    for c in 0..3 {
        assert_eq!(e.preferred_regs_by_class[c].len(), 4);
        assert_eq!(e.non_preferred_regs_by_class[c].len(), 1);
    }
    assert_eq!(e.fixed_stack_slots, machine_env().fixed_stack_slots);
    let (_, f) = next_func(0, &fuzz_options()).unwrap();
    let copy = TestFunc::from_function(&f);
    assert_eq!(copy.num_insts(), f.num_insts());
    assert_eq!(copy.to_string(), ragreedy_testkit::builder::listing(&f));
}

/// `broken_fallthroughs`: a move on a loop's exit edge block, laid out right after the
/// loop's branch, breaks the fallthrough into the way round (frequency 10); the same move
/// in the loop's latch block (not right after the branch), or none, breaks nothing.
#[test]
fn broken_fallthroughs_counts_an_edited_exit_edge_after_its_branch() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3, b4, b5) = (
        b.block(),
        b.block(),
        b.block(),
        b.block(),
        b.block(),
        b.block(),
    );
    let c = b.vreg(RegClass::Int);
    b.jump(b0, b1, &[]);
    b.jump(b1, b2, &[]);
    b.inst(b2, &[Operand::reg_def(c)]);
    b.branch(b2, &[Operand::reg_use(c)], &[(b3, &[][..]), (b4, &[][..])]);
    let exit_jump = b.jump(b3, b5, &[]);
    let latch_jump = b.jump(b4, b1, &[]);
    b.ret(b5, &[]);
    let f = b.build().func;
    assert_eq!(loop_depths(&f), vec![0, 1, 1, 0, 1, 0]);
    let r = |i| Allocation::reg(PReg::new(i, RegClass::Int));
    let move_before = |inst: usize| Output {
        edits: vec![(
            ProgPoint::before(Inst::new(inst)),
            Edit::Move {
                from: r(0),
                to: r(1),
            },
        )],
        ..Output::default()
    };
    assert_eq!(
        ragreedy_testkit::cost::broken_fallthroughs(&f, &move_before(exit_jump.0)),
        10
    );
    assert_eq!(
        ragreedy_testkit::cost::broken_fallthroughs(&f, &move_before(latch_jump.0)),
        0
    );
    assert_eq!(
        ragreedy_testkit::cost::broken_fallthroughs(&f, &Output::default()),
        0
    );
}
