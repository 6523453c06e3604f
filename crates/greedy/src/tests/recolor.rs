//! Last-chance recoloring, the callee-saved first-use cost and hint recoloring: each test
//! builds a function where the mechanism has something to buy, and compares the
//! allocation with and without it (both through regalloc2's checker).

use ragreedy_testkit::builder::{FuncBuilder, env};
use ragreedy_testkit::{cost, fuzzgen};
use regalloc2::{Operand, OperandConstraint, OperandKind, OperandPos};
use regalloc2::{PReg, RegAllocError, RegClass};

use super::try_alloc_with as alloc_with;

fn early_def(v: regalloc2::VReg) -> Operand {
    Operand::new(
        v,
        OperandConstraint::Reg,
        OperandKind::Def,
        OperandPos::Early,
    )
}

/// `u` is heavy and takes `p0` first. `d` is defined early at the instruction that last
/// reads `u`, and `p1` is clobbered there, so `d` can only live in `p0`; it is too light
/// to evict `u`. Without recoloring `d` is spilled; with it, `u`
/// moves to `p1`, which it can use since its last read comes before the clobber.
/// Recoloring a spillable interval is opt-in (`Options::spill_recoloring`). Unspilling
/// is off on both sides: after the main loop it gives `d` the register `u` left free
/// too, which would hide what recoloring does.
#[test]
fn last_chance_recoloring_avoids_a_spill() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (u, d) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(u)]);
    for _ in 0..6 {
        b.inst(b0, &[Operand::reg_use(u)]);
    }
    let i = b.inst(b0, &[early_def(d), Operand::reg_use(u)]);
    b.add_clobbers(i, &[PReg::new(1, RegClass::Int)]);
    b.inst(b0, &[Operand::reg_use(d)]);
    b.ret(b0, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let off = crate::Options {
        unspilling: false,
        ..Default::default()
    };
    let on = crate::Options {
        spill_recoloring: true,
        ..off.clone()
    };
    let (_, without) = alloc_with(&f, &e, &off).expect("allocates without recoloring");
    let (out, with) = alloc_with(&f, &e, &on).expect("allocates");
    // Without, `d` is spilled (its store and reload may both go again later: its
    // register holds it from def to use, so the edit builder drops them).
    assert!(without.spills > 0, "{without:?}");
    assert_eq!(with.spills, 0, "{with:?}");
    assert_eq!(with.spill_stores + with.reloads, 0, "{with:?}");
    assert!(with.last_chance_recolorings >= 1, "{with:?}");
    assert!(cost::cost(&f, &e, &out).weighted == 0);
}

/// A generated function at two registers per class where an unspillable reload finds
/// both registers held by other unspillable reloads: it allocates only because
/// recoloring moves one of them (seed 1128 of `ragreedy stress --regs 2`; seed 6499 served until
/// the region split costed stores at the def, seed 274 until values live across blocks took
/// registers from the back of the order, after which each allocated without recoloring).
#[test]
fn last_chance_recoloring_turns_a_failure_into_an_allocation() {
    let (f, e) = stress_function(1128, 2);
    // Deferred spilling changes the queue order enough that this seed no longer needs
    // recoloring with it: both runs leave it off, so only recoloring differs. Outside
    // hints (a register outside the order for a value a fixed operand hands over there)
    // and weightless stack operands relieve the pressure that made it fail: off too.
    let on = crate::Options {
        deferred_spilling: false,
        outside_hints: false,
        any_uses_weightless: false,
        ..Default::default()
    };
    let off = crate::Options {
        last_chance_recoloring: false,
        ..on.clone()
    };
    assert!(matches!(
        alloc_with(&f, &e, &off),
        Err(RegAllocError::TooManyLiveRegs)
    ));
    let (_, stats) = alloc_with(&f, &e, &on).expect("allocates");
    assert!(stats.last_chance_recolorings >= 1, "{stats:?}");
}

/// `p0` is the only preferred register and `p1` is callee-saved. `a` holds `p0` from its
/// def on; `c` is cold: it is defined into a register (still free) just before, but its
/// one use accepts the stack, so spilling it costs one store (2), less than saving and
/// restoring `p1` (4).
#[test]
fn callee_saved_cost_keeps_a_cold_value_out_of_an_untouched_register() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (a, c) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(c)]);
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(b0, &[Operand::reg_use(a)]);
    b.inst(b0, &[Operand::any_use(c)]);
    b.inst(b0, &[Operand::reg_use(a)]);
    b.inst(b0, &[Operand::reg_use(a)]);
    b.ret(b0, &[]);
    let f = b.build().func;
    let e = env(1, 1);
    let off = crate::Options {
        csr_first_use_cost: false,
        ..Default::default()
    };
    let (out_off, _) = alloc_with(&f, &e, &off).expect("allocates");
    let (out_on, stats) = alloc_with(&f, &e, &crate::Options::default()).expect("allocates");
    let (cost_off, cost_on) = (cost::cost(&f, &e, &out_off), cost::cost(&f, &e, &out_on));
    assert_eq!(cost_off.non_preferred_regs, 1, "{cost_off:?}");
    assert_eq!(cost_on.non_preferred_regs, 0, "{cost_on:?} {stats:?}");
    assert!(
        cost_on.weighted < cost_off.weighted,
        "{cost_on:?} vs {cost_off:?}"
    );
    assert!(stats.csr_declined >= 1, "{stats:?}");
}

/// `z` (biggest, fixed to `p0` at its last use) takes `p0` first; `x` comes next and,
/// knowing nothing of its partner yet, also takes `p0` in its own block; its partner `y`
/// then finds `p0` held by `z` and takes `p1`, so the edge needs a move. Hint recoloring
/// moves `x` to `p1` afterwards and the move disappears.
#[test]
fn hint_recoloring_removes_a_block_param_copy() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let (x, y, z) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    let b1 = b.block_with_params(&[y]);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_use(x)]);
    b.inst(b0, &[Operand::reg_use(x)]);
    b.jump(b0, b1, &[x]);
    b.inst(b1, &[Operand::reg_def(z)]);
    b.inst(b1, &[Operand::reg_use(y)]);
    b.inst(b1, &[Operand::reg_use(y)]);
    b.inst(b1, &[]);
    b.inst(
        b1,
        &[Operand::reg_fixed_use(z, PReg::new(0, RegClass::Int))],
    );
    b.ret(b1, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let off = crate::Options {
        hint_recoloring: false,
        ..Default::default()
    };
    let (out_off, _) = alloc_with(&f, &e, &off).expect("allocates");
    let (out_on, stats) = alloc_with(&f, &e, &crate::Options::default()).expect("allocates");
    assert!(
        !out_off.edits.is_empty(),
        "no copy to remove in the first place"
    );
    assert!(
        out_on.edits.len() < out_off.edits.len(),
        "{:?} vs {:?}",
        out_on.edits,
        out_off.edits
    );
    assert!(stats.hint_recolorings >= 1, "{stats:?}");
}

/// Fuzz seed 18179 at 8 registers: the main loop gave two block params of a loop block
/// each other's argument registers, a three-move cycle on the loop edge (weighted cost
/// 31 where ion's is 0). Neither copy group can move alone, each target register being
/// held by the other group; exchanging the two removes the cycle.
#[test]
fn hint_recoloring_exchanges_groups_that_block_each_other() {
    let (f, e) = stress_function(18179, 8);
    let off = crate::Options {
        hint_recoloring: false,
        ..Default::default()
    };
    let (out_off, _) = alloc_with(&f, &e, &off).expect("allocates without hint recoloring");
    let (out, stats) = alloc_with(&f, &e, &crate::Options::default()).expect("allocates");
    assert!(cost::cost(&f, &e, &out_off).weighted > 0);
    assert_eq!(cost::cost(&f, &e, &out).weighted, 0, "{stats:?}");
    assert!(stats.hint_exchanges >= 1, "{stats:?}");
}

/// The function and environment `ragreedy stress --regs <regs>` builds for `seed`.
fn stress_function(
    seed: u64,
    regs: usize,
) -> (regalloc2::fuzzing::func::Func, regalloc2::MachineEnv) {
    let opts = fuzzgen::stress_options(seed, Some(regs));
    let f = fuzzgen::func_from_seed(seed, &opts).expect("seed generates a function");
    (f, fuzzgen::stress_env(Some(regs)))
}

/// A chain of joins passing two values on in swapped order: `p, q` (params of `b1`) go to
/// `m, n` (of `b2`), which go to the loop header `b3` as `(n, m)`. The loop's values are
/// the hottest and are placed first, with no partner in a register yet; `p` and `q`
/// come next, their partners (`a`, `c`, `m`, `n`) still unplaced, and without group hints
/// take the first free registers, crossed against the loop's: `m` and `n` follow them,
/// and the edge into the loop swaps two registers. Their coalescing groups (`p`, `m`,
/// `s` and `q`, `n`, `r`) hint `p` and `q` to the loop's registers. Hint recoloring, which
/// could exchange groups afterwards, is off on both sides.
#[test]
fn group_hints_place_a_chain_of_joins_like_its_placed_end() {
    let mut b = FuncBuilder::new();
    let int = RegClass::Int;
    let (a, c, p, q, m, n) = (
        b.vreg(int),
        b.vreg(int),
        b.vreg(int),
        b.vreg(int),
        b.vreg(int),
        b.vreg(int),
    );
    let (r, s, r2, s2) = (b.vreg(int), b.vreg(int), b.vreg(int), b.vreg(int));
    let b0 = b.block();
    let b1 = b.block_with_params(&[p, q]);
    let b2 = b.block_with_params(&[m, n]);
    let b3 = b.block_with_params(&[r, s]);
    let (b4, b5) = (b.block(), b.block());
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(b0, &[Operand::reg_def(c)]);
    b.jump(b0, b1, &[a, c]);
    for _ in 0..8 {
        b.inst(b1, &[Operand::reg_use(p), Operand::reg_use(q)]);
    }
    b.jump(b1, b2, &[p, q]);
    b.inst(b2, &[Operand::reg_use(m)]);
    b.jump(b2, b3, &[n, m]);
    b.inst(b3, &[Operand::reg_use(r), Operand::reg_use(s)]);
    b.inst(b3, &[Operand::reg_def(r2), Operand::reg_use(r)]);
    b.inst(b3, &[Operand::reg_def(s2), Operand::reg_use(s)]);
    b.branch(b3, &[], &[(b4, &[]), (b5, &[])]);
    b.jump(b4, b3, &[r2, s2]);
    b.ret(b5, &[]);
    let f = b.build().func;
    let e = env(4, 0);
    let off = crate::Options {
        hint_recoloring: false,
        group_hints: false,
        ..Default::default()
    };
    let on = crate::Options {
        hint_recoloring: false,
        group_hints: true,
        ..Default::default()
    };
    let (out_off, _) = alloc_with(&f, &e, &off).expect("allocates without group hints");
    let (out_on, _) = alloc_with(&f, &e, &on).expect("allocates");
    let (cost_off, cost_on) = (
        cost::cost(&f, &e, &out_off).weighted,
        cost::cost(&f, &e, &out_on).weighted,
    );
    assert!(cost_on < cost_off, "{cost_on} vs {cost_off}");
}

/// `Options::callee_saved` decides which registers the first-use cost charges. One shape
/// per class: `a` holds the class's one preferred register, and `c`, whose only use
/// accepts the stack, is cheaper to spill (a store) than a save and restore of the
/// non-preferred register. By default both classes' non-preferred registers are
/// callee-saved and both `c`s are declined them; with x64's System V set (no float
/// register is callee-saved) the float `c` is defined into the free float register and
/// the integer one is still declined.
#[test]
fn callee_saved_registers_come_from_the_options() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    // The instruction defining each class's `c`.
    let mut c_defs = Vec::new();
    for class in [RegClass::Int, RegClass::Float] {
        let (a, c) = (b.vreg(class), b.vreg(class));
        c_defs.push(b.inst(b0, &[Operand::reg_def(c)]));
        b.inst(b0, &[Operand::reg_def(a)]);
        b.inst(b0, &[Operand::reg_use(a)]);
        b.inst(b0, &[Operand::any_use(c)]);
        b.inst(b0, &[Operand::reg_use(a)]);
    }
    b.ret(b0, &[]);
    let built = b.build();
    let c_defs = c_defs.iter().map(|&id| built.inst(id)).collect::<Vec<_>>();
    let f = built.func;
    let e = env(1, 1);
    let non_preferred = [RegClass::Int, RegClass::Float].map(|c| PReg::new(1, c));
    let in_non_preferred = |out: &regalloc2::Output| {
        [0, 1].map(|k| out.inst_allocs(c_defs[k])[0].as_reg() == Some(non_preferred[k]))
    };
    let (out, stats) = alloc_with(&f, &e, &crate::Options::default()).expect("allocates");
    assert_eq!(stats.csr_declined, 2, "{stats:?}");
    assert_eq!(in_non_preferred(&out), [false, false], "{out:?}");
    let x64 = crate::Options {
        callee_saved: Some(crate::Options::callee_saved_x64_sysv(&e)),
        ..Default::default()
    };
    let (out, stats) = alloc_with(&f, &e, &x64).expect("allocates");
    assert_eq!(stats.csr_declined, 1, "{stats:?}");
    assert_eq!(in_non_preferred(&out), [false, true], "{out:?}");
}
