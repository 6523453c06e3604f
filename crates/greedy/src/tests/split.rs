//! The classic splitting cases, with `Options::splitting` on; every output goes through
//! regalloc2's checker.

use super::value_across_busy_loop;
use ragreedy_testkit::builder::{FuncBuilder, env};
use ragreedy_testkit::check::check_output;
use regalloc2::{Edit, Function, Operand, PReg, RegClass};

fn alloc_split<F: Function>(f: &F, e: &regalloc2::MachineEnv) -> (regalloc2::Output, crate::Stats) {
    let options = crate::Options {
        splitting: true,
        ..Default::default()
    };
    let mut ctx = crate::Context::new();
    let out = crate::run_with_context(f, e, &options, &mut ctx).expect("allocates");
    check_output(f, e, &out).expect("checker accepts");
    (out, *ctx.stats())
}

/// `v` is used before and after a loop whose body keeps both registers busy: it keeps
/// a register outside the loop and sits on the stack inside it (one store before, one
/// reload after), instead of a reload at every use.
#[test]
fn value_live_across_a_busy_loop_is_region_split() {
    let (f, _, b1, b3) = value_across_busy_loop();
    let (out, stats) = alloc_split(&f, &env(2, 0));
    assert!(stats.region_splits >= 1, "{stats:?}");
    assert!(stats.reloads <= 2, "reloaded at uses: {stats:?}");
    // Nothing moves inside the loop (blocks 1..=3).
    let loop_insts = f.block_insns(b1).first().index()..=f.block_insns(b3).last().index();
    for (point, Edit::Move { from, to }) in &out.edits {
        assert!(
            !loop_insts.contains(&point.inst().index()),
            "move {from} -> {to} at {point:?} inside the loop"
        );
    }
}

/// One block: `v` is defined, used `end_uses` times, then the middle is crowded with
/// short busy values, then `v` is used `end_uses` times again.
fn crowded_middle(end_uses: usize) -> ragreedy_testkit::builder::TestFunc {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    for _ in 0..end_uses {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    for _ in 0..4 {
        let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
        b.inst(b0, &[Operand::reg_def(x)]);
        b.inst(b0, &[Operand::reg_def(y)]);
        b.inst(b0, &[Operand::reg_use(x), Operand::reg_use(y)]);
    }
    for _ in 0..end_uses {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    b.ret(b0, &[]);
    b.build().func
}

/// `crowded_middle` with 3 uses at each end: they keep a register (local splits), the
/// middle is spilled.
#[test]
fn long_range_with_a_crowded_middle_is_local_split() {
    let (_, stats) = alloc_split(&crowded_middle(3), &env(2, 0));
    assert!(stats.local_splits >= 1, "{stats:?}");
    // Six uses of `v`, fewer reloads.
    assert!(stats.reloads < 6, "{stats:?}");
}

/// A value whose uses are pinned to alternating fixed registers in one block gets an
/// instruction split: a piece around each use, each hinted to its fixed register.
#[test]
fn uses_in_fixed_registers_get_instruction_splits() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let (p0, p1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    for i in 0..6 {
        let p = if i % 2 == 0 { p0 } else { p1 };
        let t = b.vreg(RegClass::Int);
        b.inst_clobbers(
            b0,
            &[Operand::reg_fixed_use(v, p), Operand::reg_fixed_def(t, p0)],
            &[p1],
        );
    }
    b.ret(b0, &[]);
    let f = b.build().func;
    let (_, stats) = alloc_split(&f, &env(2, 0));
    // The value lives in one block, but no window of its uses is free in one register
    // (each instruction pins it to another), so it is the instruction split that fires.
    assert!(stats.instruction_splits >= 1, "{stats:?}");
}

/// One value used by hundreds of calls with alternating fixed argument registers and
/// caller-saved clobbers (the shape of wasmtime#4291): allocation completes, the
/// checker accepts, and the work stays proportional to the calls (intervals created).
#[test]
fn value_used_by_hundreds_of_calls_stays_linear() {
    let calls = 600;
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let regs: Vec<PReg> = (0..4).map(|i| PReg::new(i, RegClass::Int)).collect();
    b.inst(b0, &[Operand::reg_def(v)]);
    for i in 0..calls {
        let r = b.vreg(RegClass::Int);
        b.inst_clobbers(
            b0,
            &[
                Operand::reg_fixed_use(v, regs[i % 2]),
                Operand::reg_fixed_def(r, regs[0]),
            ],
            &regs[1..4],
        );
    }
    b.ret(b0, &[Operand::reg_use(v)]);
    let f = b.build().func;
    let (_, stats) = alloc_split(&f, &env(4, 2));
    assert!(stats.intervals < 20 * calls, "{stats:?}");
}

/// `v` is used all over a two-block loop. Two long values with fixed uses at the end
/// (so they are queued, and placed, before `v`) hold both registers through the loop;
/// they are lighter than `v` there. After the loop one instruction needs both registers
/// for fixed operands, so `v` can neither take nor evict for its whole range, and no
/// register is free for it anywhere in the loop: every candidate register would leave
/// the loop on the stack. The compact region (its own register in its use blocks,
/// chosen before any candidate) keeps the loop as one piece, which then takes a register
/// by eviction: nothing moves inside the loop. (A candidate register free only after the
/// crowded instruction also beats spilling, thanks to the uses there: a compact region
/// tried only when no candidate wins would not be tried here.)
#[test]
fn loop_uses_form_a_compact_region() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3, b4) = (b.block(), b.block(), b.block(), b.block(), b.block());
    let (p0, p1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
    let v = b.vreg(RegClass::Int);
    let (w, u) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    for _ in 0..3 {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    b.inst(b0, &[Operand::reg_def(w)]);
    b.inst(b0, &[Operand::reg_def(u)]);
    b.jump(b0, b1, &[]);
    // Loop: header b1 (exits to b3), body b2 (back to b1).
    for _ in 0..4 {
        b.inst(b1, &[Operand::reg_use(v)]);
    }
    b.branch(b1, &[], &[(b2, &[]), (b3, &[])]);
    for _ in 0..4 {
        b.inst(b2, &[Operand::reg_use(v)]);
    }
    b.jump(b2, b1, &[]);
    b.inst(
        b3,
        &[Operand::reg_fixed_use(w, p0), Operand::reg_fixed_use(u, p1)],
    );
    let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b3, &[Operand::reg_def(x)]);
    b.inst(b3, &[Operand::reg_def(y)]);
    b.inst(
        b3,
        &[Operand::reg_fixed_use(x, p0), Operand::reg_fixed_use(y, p1)],
    );
    b.jump(b3, b4, &[]);
    for _ in 0..3 {
        b.inst(b4, &[Operand::reg_use(v)]);
    }
    b.ret(b4, &[Operand::reg_use(v)]);
    let f = b.build().func;
    let (out, stats) = alloc_split(&f, &env(2, 0));
    assert!(stats.compact_region_splits >= 1, "{stats:?}");
    let loop_insts = f.block_insns(b1).first().index()..=f.block_insns(b2).last().index();
    for (point, Edit::Move { from, to }) in &out.edits {
        assert!(
            !loop_insts.contains(&point.inst().index()),
            "move {from} -> {to} at {point:?} inside the loop"
        );
    }
}

/// `v`'s last use in its first stretch may only live in `p0` or `p1` (`Limit(2)`); the
/// middle of the block clobbers both, and the uses after it need just a register. The
/// local split keeps the first stretch in a limited register; the rest of the value
/// holds no limited use, so it takes `p2` or `p3` and nothing is spilled. (A product
/// that inherited the whole value's limit could only wait out the clobbers on the
/// stack: a store and a reload.)
#[test]
fn split_products_keep_only_their_own_register_limit() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let limited = Operand::new(
        v,
        regalloc2::OperandConstraint::Limit(2),
        regalloc2::OperandKind::Use,
        regalloc2::OperandPos::Early,
    );
    let (p0, p1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    for _ in 0..4 {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    b.inst(b0, &[limited]);
    for _ in 0..3 {
        b.inst_clobbers(b0, &[], &[p0, p1]);
    }
    for _ in 0..3 {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    b.ret(b0, &[]);
    let f = b.build().func;
    let (_, stats) = alloc_split(&f, &env(4, 0));
    assert!(stats.local_splits >= 1, "{stats:?}");
    assert_eq!(stats.spill_stores + stats.reloads, 0, "{stats:?}");
}

/// `v` is defined before a loop (its def accepts any location), read twice in the loop
/// header and lives through a body block where two busy values take both registers.
/// Keeping `v` in a register outside the body costs one store at the def (freq 1) and
/// one reload on the edge out of the body (freq 10): the edit builder writes the slot
/// once at the def, so entering the stack on the edge into the body is free. Spilling
/// `v` whole costs a reload at each use in the header (2 × 20). A region cost that also
/// charged a store on the edge into the body (20 more) saw no gain and spilled.
#[test]
fn region_split_cost_counts_the_store_at_the_def_once() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3, b4) = (b.block(), b.block(), b.block(), b.block(), b.block());
    let v = b.vreg(RegClass::Int);
    b.inst(
        b0,
        &[Operand::new(
            v,
            regalloc2::OperandConstraint::Any,
            regalloc2::OperandKind::Def,
            regalloc2::OperandPos::Late,
        )],
    );
    b.jump(b0, b1, &[]);
    b.inst(b1, &[Operand::reg_use(v)]);
    b.inst(b1, &[Operand::reg_use(v)]);
    b.branch(b1, &[], &[(b2, &[]), (b4, &[])]);
    let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b2, &[Operand::reg_def(x)]);
    b.inst(b2, &[Operand::reg_def(y)]);
    b.inst(b2, &[Operand::reg_use(x), Operand::reg_use(y)]);
    b.jump(b2, b3, &[]);
    b.jump(b3, b1, &[]);
    b.ret(b4, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let (out, stats) = alloc_split(&f, &e);
    let c = ragreedy_testkit::cost::cost(&f, &e, &out);
    assert!(stats.region_splits >= 1, "{stats:?}");
    assert!(c.weighted < 40, "{c:?} {stats:?}");
}

/// Fuzz seed 2716 at 3 registers (`ragreedy stress --regs 3`): a split value's pieces
/// that hold none of its block-parameter copies used to weigh those copies anyway, and
/// evicted lighter values they should have left alone (weighted cost 194; 174 once each
/// piece weighs only the copies inside its segments).
#[test]
fn split_pieces_weigh_only_their_own_copies() {
    use ragreedy_testkit::fuzzgen;
    let opts = fuzzgen::stress_options(2716, Some(3));
    let f = fuzzgen::func_from_seed(2716, &opts).expect("seed generates a function");
    let e = fuzzgen::stress_env(Some(3));
    let (out, stats) = alloc_split(&f, &e);
    let c = ragreedy_testkit::cost::cost(&f, &e, &out);
    assert!(c.weighted < 194, "{c:?} {stats:?}");
}

/// `v` lives through 300 blocks (too many for a region split, so a block split serves
/// it) where two heavier values hold both registers, then through a loop that uses it
/// once in each of its three blocks and leaves a register free. The block split keeps
/// the loop's blocks whole in one piece, which takes the free register: one reload
/// before the loop. (One piece per block with two uses or more would leave every loop
/// use to a reload of its own, three per iteration.)
#[test]
fn block_split_keeps_a_loop_whole() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (v, a, c) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(b0, &[Operand::reg_def(c)]);
    let mut prev = b0;
    for _ in 0..300 {
        let next = b.block();
        b.jump(prev, next, &[]);
        b.inst(next, &[Operand::reg_use(a), Operand::reg_use(c)]);
        prev = next;
    }
    // Loop: header h, body m, latch l (exits to e or goes back through back).
    let (h, m, l, back, e) = (b.block(), b.block(), b.block(), b.block(), b.block());
    b.jump(prev, h, &[]);
    b.inst(h, &[Operand::reg_use(v)]);
    b.jump(h, m, &[]);
    b.inst(m, &[Operand::reg_use(v)]);
    b.jump(m, l, &[]);
    b.inst(l, &[Operand::reg_use(v)]);
    b.branch(l, &[], &[(back, &[]), (e, &[])]);
    b.jump(back, h, &[]);
    b.ret(e, &[Operand::reg_use(v)]);
    let f = b.build().func;
    let (out, stats) = alloc_split(&f, &env(2, 0));
    let loop_insts = f.block_insns(h).first().index()..=f.block_insns(back).last().index();
    for (point, Edit::Move { from, to }) in &out.edits {
        assert!(
            !loop_insts.contains(&point.inst().index()),
            "move {from} -> {to} at {point:?} inside the loop"
        );
    }
    assert!(stats.loop_split_pieces >= 1, "{stats:?}");
}

/// The shape of ed25519's largest block: one value `v` used three times between each pair of
/// calls all along a block of `calls` calls that clobber the preferred registers, and
/// each call's result (fixed in p0, so hinted and placed before `v`) live across the
/// next two calls (their arguments), which keeps both callee-saved registers taken in
/// turns. `v` cannot evict
/// its way in over the whole block (far more than 16 occupants), so it is local-split.
fn value_used_between_calls(calls: usize) -> TestFuncAndEnv {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let (p0, p1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    let (mut prev, mut prev2) = (None, None);
    for _ in 0..calls {
        let r = b.vreg(RegClass::Int);
        let args: Vec<Operand> = [(prev, p1), (prev2, p0)]
            .into_iter()
            .filter_map(|(q, p)| q.map(|q| Operand::reg_fixed_use(q, p)))
            .collect();
        b.inst_clobbers(b0, &args, &[p0, p1]);
        b.inst(b0, &[Operand::reg_fixed_def(r, p0)]);
        for _ in 0..3 {
            b.inst(b0, &[Operand::reg_use(v)]);
        }
        (prev2, prev) = (prev, Some(r));
    }
    b.ret(
        b0,
        &[
            Operand::reg_use(prev.unwrap()),
            Operand::reg_use(prev2.unwrap()),
        ],
    );
    (b.build().func, env(4, 0))
}

type TestFuncAndEnv = (ragreedy_testkit::builder::TestFunc, regalloc2::MachineEnv);

/// With windows that evict (`Options::evicting_local_split`), `v` keeps a callee-saved
/// register over long stretches of the block instead of a reload at every use (the
/// local split used to give up past 64 use instructions and look only at free windows
/// among the first six registers in allocation order).
#[test]
fn value_used_between_calls_keeps_a_callee_saved_register() {
    let (f, e) = value_used_between_calls(60);
    let run = |evicting| {
        let options = crate::Options {
            evicting_local_split: evicting,
            ..Default::default()
        };
        let mut ctx = crate::Context::new();
        let out = crate::run_with_context(&f, &e, &options, &mut ctx).expect("allocates");
        check_output(&f, &e, &out).expect("checker accepts");
        (
            ragreedy_testkit::cost::cost(&f, &e, &out).weighted,
            *ctx.stats(),
        )
    };
    let (with, stats) = run(true);
    let (without, _) = run(false);
    assert!(with < without, "{with} vs {without} without: {stats:?}");
}

/// A random block of the shape that makes evicting local splits, which the fuzz corpus
/// never does: a few long values used throughout, calls that clobber every caller-saved
/// register and return in one of them, and short temporaries in between; 3-7
/// caller-saved registers and 1-4 callee-saved ones.
fn calls_among_long_values(next: &mut impl FnMut(u64) -> u64) -> TestFuncAndEnv {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let caller_saved = 3 + next(5) as usize;
    let callee_saved = 1 + next(4) as usize;
    let long: Vec<_> = (0..1 + next(4)).map(|_| b.vreg(RegClass::Int)).collect();
    for &v in &long {
        b.inst(b0, &[Operand::reg_def(v)]);
    }
    let clobbered: Vec<PReg> = (0..caller_saved)
        .map(|i| PReg::new(i, RegClass::Int))
        .collect();
    let mut temps = Vec::new();
    for _ in 0..40 + next(200) {
        match next(10) {
            0 => {
                b.inst_clobbers(b0, &[], &clobbered);
                let r = b.vreg(RegClass::Int);
                let p = clobbered[next(caller_saved as u64) as usize];
                b.inst(b0, &[Operand::reg_fixed_def(r, p)]);
                temps.push(r);
            }
            1 | 2 => {
                let t = b.vreg(RegClass::Int);
                b.inst(b0, &[Operand::reg_def(t)]);
                temps.push(t);
            }
            3 if !temps.is_empty() => {
                let t = temps.swap_remove(next(temps.len() as u64) as usize);
                b.inst(b0, &[Operand::reg_use(t)]);
            }
            _ => {
                let v = long[next(long.len() as u64) as usize];
                b.inst(b0, &[Operand::reg_use(v)]);
            }
        }
    }
    for &v in &long {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    let results: Vec<Operand> = temps.iter().take(2).map(|&t| Operand::reg_use(t)).collect();
    b.ret(b0, &results);
    (b.build().func, env(caller_saved, callee_saved))
}

/// The evicting local split, its window search and its pruning, through regalloc2's
/// checker on random blocks of calls among long values (the Wasm corpus's ed25519 shape).
#[test]
fn evicting_local_splits_on_random_blocks_pass_the_checker() {
    let mut next = super::xorshift(0x1234_5678_9abc_def1);
    let mut evicting = 0;
    for _ in 0..500 {
        let (f, e) = calls_among_long_values(&mut next);
        let (_, stats) = super::alloc_checked(&f, &e);
        evicting += stats.evicting_local_splits;
    }
    // The shape does reach the mechanism (about one evicting split in four functions).
    assert!(evicting >= 50, "only {evicting} evicting local splits");
}

/// `crowded_middle` with 50 uses at each end: past the 64 use instructions the local
/// split once stopped at, `v` still keeps a register at both ends rather than a reload
/// at each of its 100 uses.
#[test]
fn local_split_takes_values_with_many_uses() {
    let (_, stats) = alloc_split(&crowded_middle(50), &env(2, 0));
    assert!(stats.local_splits >= 1, "{stats:?}");
    assert!(stats.reloads < 10, "{stats:?}");
}

/// The shape of shootout-fib2 function 53 (common in Wasm): `v` arrives in a fixed
/// register, is used, passed to a call in that same register and is live across it (the
/// call clobbers every caller-saved register), then used in the next block and passed to
/// another call in a second fixed register (the first call returns its result in `p0`
/// and clobbers the other caller-saved registers). Only the callee-saved `p4` is free all along:
/// taking it costs its save and restore (4) plus moves (into it after the def, out of it
/// into the call registers). The pre-split instead keeps the argument register
/// up to the first call (the region split keeps the def block in part, cut inside the
/// call between its use and its clobber) and the stack across it: a store at the def and
/// a reload after the call, and `p4` is never opened.
#[test]
fn value_passed_to_a_call_and_live_across_it_is_pre_split() {
    let int = |i| PReg::new(i, RegClass::Int);
    let caller_saved: Vec<PReg> = (0..4).map(int).collect();
    let mut b = FuncBuilder::new();
    let (b0, b1, b2) = (b.block(), b.block(), b.block());
    let v = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_fixed_def(v, int(2))]);
    let t = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(t), Operand::reg_use(v)]);
    b.inst(b0, &[Operand::reg_use(t)]);
    let r = b.vreg(RegClass::Int);
    b.inst_clobbers(
        b0,
        &[
            Operand::reg_fixed_use(v, int(2)),
            Operand::reg_fixed_def(r, int(0)),
        ],
        &caller_saved[1..],
    );
    b.branch(b0, &[Operand::reg_use(r)], &[(b1, &[]), (b2, &[])]);
    let s = b.vreg(RegClass::Int);
    b.inst(b1, &[Operand::reg_def(s), Operand::reg_use(v)]);
    b.inst(b1, &[Operand::reg_use(s)]);
    b.inst_clobbers(b1, &[Operand::reg_fixed_use(v, int(1))], &caller_saved);
    b.ret(b1, &[]);
    b.ret(b2, &[]);
    let f = b.build().func;
    let e = env(4, 1);
    let weighted = |options: &crate::Options| {
        let mut ctx = crate::Context::new();
        let out = crate::run_with_context(&f, &e, options, &mut ctx).expect("allocates");
        check_output(&f, &e, &out).expect("checker accepts");
        let cost = ragreedy_testkit::cost::cost(&f, &e, &out);
        (cost.weighted, cost.non_preferred_regs, *ctx.stats())
    };
    // Without the pre-split `v` takes the callee-saved register: 4 and the moves.
    let (without, csr, _) = weighted(&crate::Options {
        csr_pre_split: false,
        ..Default::default()
    });
    assert_eq!(csr, 1);
    assert!(
        without >= 6,
        "cost {without} with the callee-saved register"
    );
    let (with, csr, stats) = weighted(&crate::Options::default());
    assert!(stats.csr_pre_splits >= 1, "{stats:?}");
    assert_eq!(csr, 0, "{stats:?}");
    // A store, a reload and at most one move.
    assert!(with <= 5 && with < without, "cost {with}, {stats:?}");
}

/// LLVM's stage rule for a region split's register interval: one that lives in fewer
/// blocks than the value it comes from starts over (stage New), so that an eviction can
/// region-split it again; only one that did not shrink goes on to Split2.
#[test]
fn region_split_register_product_that_shrank_starts_over() {
    use crate::observe::{Event, SplitKind};
    let (f, _, _, _) = value_across_busy_loop();
    let e = env(2, 0);
    let mut events = Vec::new();
    let mut ctx = crate::Context::new();
    let out = crate::run_observed(&f, &e, &crate::Options::default(), &mut ctx, &mut events)
        .expect("allocates");
    check_output(&f, &e, &out).expect("checker accepts");
    let split = events
        .iter()
        .position(|e| {
            matches!(
                e,
                Event::Split {
                    kind: SplitKind::Region,
                    ..
                }
            )
        })
        .expect("a region split");
    // The register product is the first product listed after the split.
    let Some(Event::SplitProduct { stage, .. }) = events[split + 1..]
        .iter()
        .find(|e| matches!(e, Event::SplitProduct { .. }))
    else {
        panic!("no product after the region split");
    };
    assert_eq!(*stage, "new", "{events:#?}");
}

/// Ends block `k` of the chain `bs`: a jump to the next, a return from the last.
fn end_chain_block(b: &mut FuncBuilder, bs: &[regalloc2::Block], k: usize) {
    match bs.get(k + 1) {
        Some(&next) => b.jump(bs[k], next, &[]),
        None => b.ret(bs[k], &[]),
    };
}

/// `v` lives through a chain of `blocks` blocks, used in every other one, while the others
/// each hold two short values that fill both registers (of two).
fn value_through_busy_chain(blocks: usize) -> ragreedy_testkit::builder::TestFunc {
    let mut b = FuncBuilder::new();
    let bs: Vec<_> = (0..blocks).map(|_| b.block()).collect();
    let v = b.vreg(RegClass::Int);
    b.inst(bs[0], &[Operand::reg_def(v)]);
    for (k, &blk) in bs.iter().enumerate() {
        if k % 2 == 1 {
            let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
            b.inst(blk, &[Operand::reg_def(x)]);
            b.inst(blk, &[Operand::reg_def(y)]);
            b.inst(blk, &[Operand::reg_use(x), Operand::reg_use(y)]);
        } else {
            b.inst(blk, &[Operand::reg_use(v)]);
            b.inst(blk, &[Operand::reg_use(v)]);
        }
        end_chain_block(&mut b, &bs, k);
    }
    b.build().func
}

/// A value this long, past the length at which the region split's probe budget cuts its
/// candidates but within `MAX_REGION_SEGMENTS`, still keeps a register in the quiet blocks.
#[test]
fn a_value_through_hundreds_of_blocks_is_still_region_split() {
    let blocks = 200;
    assert!(blocks <= crate::greedy::MAX_REGION_SEGMENTS);
    let (_, stats) = alloc_split(&value_through_busy_chain(blocks), &env(2, 0));
    assert!(stats.region_splits >= 1, "{stats:?}");
    // A reload per busy block at most, not one per use.
    assert!(stats.reloads <= blocks / 2 + 1, "{stats:?}");
}

/// Past `MAX_REGION_SEGMENTS` the value goes to the block splitter instead, which serves
/// it as well here: a reload per use block at most.
#[test]
fn a_value_past_the_region_limit_is_block_split() {
    let blocks = 300;
    assert!(blocks > crate::greedy::MAX_REGION_SEGMENTS);
    let (_, stats) = alloc_split(&value_through_busy_chain(blocks), &env(2, 0));
    assert_eq!(stats.region_splits, 0, "{stats:?}");
    assert!(stats.block_splits >= 1, "{stats:?}");
    assert!(stats.reloads <= blocks / 2 + 1, "{stats:?}");
}

/// `v` is defined before a loop nest, used in its inner loop, then lives through a chain
/// of `chain` blocks that each fill both registers (of two) before its last use: three
/// use blocks among `chain` + 7 block segments.
fn sparse_value_with_nested_use(
    chain: usize,
) -> (ragreedy_testkit::builder::TestFunc, regalloc2::Block) {
    let mut b = FuncBuilder::new();
    let [b0, outer, inner, latch, exit_inner, outer_latch] = std::array::from_fn(|_| b.block());
    let bs: Vec<_> = (0..chain).map(|_| b.block()).collect();
    let last = b.block();
    let v = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[Operand::reg_use(v)]);
    b.jump(b0, outer, &[]);
    b.jump(outer, inner, &[]);
    b.inst(inner, &[Operand::reg_use(v)]);
    b.inst(inner, &[Operand::reg_use(v)]);
    b.branch(inner, &[], &[(latch, &[]), (exit_inner, &[])]);
    b.jump(latch, inner, &[]);
    b.branch(exit_inner, &[], &[(outer_latch, &[]), (bs[0], &[])]);
    b.jump(outer_latch, outer, &[]);
    for (k, &blk) in bs.iter().enumerate() {
        let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
        b.inst(blk, &[Operand::reg_def(x)]);
        b.inst(blk, &[Operand::reg_def(y)]);
        b.inst(blk, &[Operand::reg_use(x), Operand::reg_use(y)]);
        b.jump(blk, bs.get(k + 1).copied().unwrap_or(last), &[]);
    }
    b.inst(last, &[Operand::reg_use(v)]);
    b.ret(last, &[]);
    (b.build().func, inner)
}

/// A value with a use in a nested loop and few others is region-split through up to
/// `SPARSE_NESTED_REGION_SEGMENTS` block segments however sparse its uses; past that it
/// goes to the block splitter, which keeps the loop nest in a register all the same.
#[test]
fn a_long_sparse_value_with_a_nested_use_is_block_split() {
    for (chain, region) in [(100, true), (200, false)] {
        assert_eq!(
            chain + 7 <= crate::greedy::SPARSE_NESTED_REGION_SEGMENTS,
            region
        );
        let (f, inner) = sparse_value_with_nested_use(chain);
        let (out, stats) = alloc_split(&f, &env(2, 0));
        if region {
            assert!(stats.region_splits >= 1, "{chain}: {stats:?}");
        } else {
            assert_eq!(stats.region_splits, 0, "{chain}: {stats:?}");
            assert!(stats.block_splits >= 1, "{chain}: {stats:?}");
        }
        let in_loop = f.block_insns(inner);
        for (point, edit) in out.edits.iter() {
            assert!(
                !(in_loop.first().index()..=in_loop.last().index()).contains(&point.inst().index()),
                "{chain}: {edit:?} at {point:?} in the inner loop"
            );
        }
    }
}

/// `v` lives through 200 blocks. Where it is used, registers 0-3 hold values fixed to them
/// across the use; in the blocks between, registers 4 and 5 do. No register is free all
/// along, and the region split of a value this long weighs only two of its six candidates:
/// those whose interference in the use blocks forces the least, 4 and 5, not the first two
/// of the allocation order (which would force every use onto the stack). So `v` is region
/// split and read in register 4 or 5 at every use.
#[test]
fn a_long_value_weighs_the_candidates_free_in_its_use_blocks() {
    let blocks = 200;
    let regs: Vec<PReg> = (0..6).map(|i| PReg::new(i, RegClass::Int)).collect();
    let mut b = FuncBuilder::new();
    let bs: Vec<_> = (0..blocks).map(|_| b.block()).collect();
    let v = b.vreg(RegClass::Int);
    b.inst(bs[0], &[Operand::reg_def(v)]);
    for (k, &blk) in bs.iter().enumerate() {
        let held = if k % 2 == 0 { &regs[..4] } else { &regs[4..] };
        let xs: Vec<_> = held.iter().map(|_| b.vreg(RegClass::Int)).collect();
        let fixed_to_held = |operand: fn(regalloc2::VReg, PReg) -> Operand| -> Vec<Operand> {
            xs.iter().zip(held).map(|(&x, &p)| operand(x, p)).collect()
        };
        b.inst(blk, &fixed_to_held(Operand::reg_fixed_def));
        if k % 2 == 0 {
            b.inst(blk, &[Operand::reg_use(v)]);
            b.inst(blk, &[Operand::reg_use(v)]);
        }
        b.inst(blk, &fixed_to_held(Operand::reg_fixed_use));
        end_chain_block(&mut b, &bs, k);
    }
    let f = b.build().func;
    let (out, stats) = alloc_split(&f, &env(6, 0));
    assert!(stats.region_splits >= 1, "{stats:?}");
    for i in 0..f.num_insts() {
        let inst = regalloc2::Inst::new(i);
        for (op, alloc) in f.inst_operands(inst).iter().zip(out.inst_allocs(inst)) {
            if op.vreg() == v && op.kind() == regalloc2::OperandKind::Use {
                assert!(
                    alloc.as_reg().is_some_and(|p| p.hw_enc() >= 4),
                    "use of v at {inst:?} in {alloc}"
                );
            }
        }
    }
}
