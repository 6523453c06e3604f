//! The finishing mechanisms, each compared with itself turned off: copy-only values
//! moved to the stack, copy-partner spill slots, slot sharing (hulls and holes),
//! redundant-move elimination across blocks.
//! Every output, on or off, goes through regalloc2's checker.

use ragreedy_testkit::builder::{FuncBuilder, TestFunc, env, listing_with_output};
use ragreedy_testkit::cost::cost;
use regalloc2::{
    Allocation, Block, Function, MachineEnv, Operand, OperandConstraint, OperandKind, OperandPos,
    Output, PReg, RegClass, VReg,
};

fn alloc_with<F: Function>(
    f: &F,
    e: &MachineEnv,
    options: &crate::Options,
) -> (Output, crate::Stats) {
    super::try_alloc_with(f, e, options).expect("allocates")
}

/// A use that must read the value from the stack: the value is spilled up front, unless
/// its register uses elsewhere weigh more than a reload after this one
/// (`Options::stack_use_pieces`).
fn stack_use(v: VReg) -> Operand {
    Operand::new(
        v,
        OperandConstraint::Stack,
        OperandKind::Use,
        OperandPos::Early,
    )
}

/// The allocation of operand `k` of the `i`-th instruction.
fn alloc_of(out: &Output, i: usize, k: usize) -> Allocation {
    out.allocs[out.inst_alloc_offsets[i] as usize + k]
}

fn partner_slots_off() -> crate::Options {
    crate::Options {
        partner_slots: false,
        ..Default::default()
    }
}

/// `a` is passed to block parameter `p`, which is passed on to `q` and has no other use.
/// With `a` and `q` on the stack (each has a stack-only use), a register for `p` costs a
/// load on the way in and a store on the way out; on the stack, in the slot `a` and `q`
/// share, its copies cost nothing. With `a` and `q` in registers, `p` keeps its register.
#[test]
fn a_copy_only_value_follows_its_partners_to_the_stack() {
    for partners_on_stack in [true, false] {
        let mut b = FuncBuilder::new();
        let (b0, b1, b2) = (b.block(), b.block(), b.block());
        let (a, p, q) = (
            b.vreg(RegClass::Int),
            b.vreg(RegClass::Int),
            b.vreg(RegClass::Int),
        );
        b.set_params(b1, &[p]);
        b.set_params(b2, &[q]);
        let partner_use = |v| {
            if partners_on_stack {
                stack_use(v)
            } else {
                Operand::reg_use(v)
            }
        };
        b.inst(b0, &[Operand::reg_def(a)]);
        b.inst(b0, &[partner_use(a)]);
        b.jump(b0, b1, &[a]);
        b.jump(b1, b2, &[p]);
        b.inst(b2, &[partner_use(q)]);
        b.ret(b2, &[]);
        let f = b.build().func;
        let e = env(2, 0);
        let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
        let off_options = crate::Options {
            copy_spilling: false,
            ..Default::default()
        };
        let (off, stats_off) = alloc_with(&f, &e, &off_options);
        let (cost_on, cost_off) = (cost(&f, &e, &on).weighted, cost(&f, &e, &off).weighted);
        assert_eq!(stats_off.copy_spills, 0);
        if partners_on_stack {
            assert_eq!(stats_on.copy_spills, 1, "{}", listing_with_output(&f, &on));
            // Only the store after `a`'s def is left: the edges copy within one slot.
            assert_eq!(on.edits.len(), 1, "{}", listing_with_output(&f, &on));
            assert!(cost_on < cost_off, "{}", listing_with_output(&f, &off));
        } else {
            assert_eq!(stats_on.copy_spills, 0, "{}", listing_with_output(&f, &on));
            assert_eq!(cost_on, cost_off);
        }
    }
}

/// `a` is passed to block parameter `p`; both live on the stack. `x` dies when `a`
/// does and holds the lowest slot, so plain colouring gives `p` the slot of `x` and the
/// edge needs a stack-to-stack copy; with partner slots `p` takes `a`'s slot and the
/// copy disappears.
#[test]
fn spilled_block_param_takes_its_arguments_slot() {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let (x, a, p) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    b.set_params(b1, &[p]);
    b.inst(b0, &[Operand::reg_def(x)]);
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(b0, &[stack_use(a)]);
    b.inst(b0, &[stack_use(x)]);
    b.jump(b0, b1, &[a]);
    b.inst(b1, &[stack_use(p)]);
    b.ret(b1, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
    let (off, stats_off) = alloc_with(&f, &e, &partner_slots_off());
    assert_eq!(stats_on.partner_slot_values, 1, "{stats_on:?}");
    assert_eq!(stats_off.partner_slot_values, 0, "{stats_off:?}");
    // `a`'s stack use (inst 2) and `p`'s (inst 5) read one slot.
    assert_eq!(alloc_of(&on, 2, 0), alloc_of(&on, 5, 0));
    assert_ne!(alloc_of(&off, 2, 0), alloc_of(&off, 5, 0));
    assert!(
        on.edits.len() < off.edits.len(),
        "on: {:?}\noff: {:?}",
        on.edits,
        off.edits
    );
    assert!(cost(&f, &e, &on).weighted < cost(&f, &e, &off).weighted);
}

/// A loop-carried value on the stack: header parameter `p`, latch argument `a`. When `p`
/// dies before `a` is defined they share a slot and the back-edge copy disappears; when
/// `p` is still live at `a`'s def they must not share (the checker would catch it).
#[test]
fn loop_carried_partners_share_a_slot_only_when_disjoint() {
    for p_live_across_def in [false, true] {
        let mut b = FuncBuilder::new();
        let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
        let (init, p, a) = (
            b.vreg(RegClass::Int),
            b.vreg(RegClass::Int),
            b.vreg(RegClass::Int),
        );
        b.set_params(b1, &[p]);
        b.inst(b0, &[Operand::reg_def(init)]);
        b.inst(b0, &[stack_use(init)]);
        b.jump(b0, b1, &[init]);
        b.inst(b1, &[stack_use(p)]);
        b.inst(b1, &[Operand::reg_def(a)]);
        b.inst(b1, &[stack_use(a)]);
        if p_live_across_def {
            b.inst(b1, &[stack_use(p)]);
        }
        b.branch(b1, &[], &[(b2, &[]), (b3, &[])]);
        b.jump(b2, b1, &[a]);
        b.ret(b3, &[]);
        let f = b.build().func;
        let e = env(2, 0);
        let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
        let (off, _) = alloc_with(&f, &e, &partner_slots_off());
        let (p_at, a_at) = (alloc_of(&on, 3, 0), alloc_of(&on, 5, 0));
        if p_live_across_def {
            assert_ne!(p_at, a_at, "overlapping partners share a slot");
        } else {
            assert_eq!(p_at, a_at);
            assert!(stats_on.partner_slot_values >= 1, "{stats_on:?}");
            assert!(cost(&f, &e, &on).weighted <= cost(&f, &e, &off).weighted);
        }
    }
}

/// Two waves of values spilled under pressure, the second defined after the first died:
/// with sharing the second wave reuses the first wave's slots, without it every value
/// has its own.
#[test]
fn slot_sharing_uses_fewer_slots_than_one_per_value() {
    let f = super::waves_of_values(2, 5);
    let e = env(2, 0);
    let (on, _) = alloc_with(&f, &e, &crate::Options::default());
    let off_options = crate::Options {
        slot_sharing: false,
        ..Default::default()
    };
    let (off, stats_off) = alloc_with(&f, &e, &off_options);
    assert!(
        on.num_spillslots < off.num_spillslots,
        "{} slots with sharing, {} without",
        on.num_spillslots,
        off.num_spillslots
    );
    assert!(off.num_spillslots >= stats_off.shared_slot_values);
}

/// `v` is live in blocks 0 and 2 but not in block 1, laid out between them; `w` lives
/// only in block 1. Their hulls overlap, their segments do not: `w` fills the hole in
/// `v`'s slot, so the function needs one slot, not two.
#[test]
fn a_value_fills_the_hole_in_another_values_slot() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
    let (v, w) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[stack_use(v)]);
    // Layout b0, b1, b2, b3; edges b0 → b1, b0 → b2: each block after its predecessor.
    b.branch(b0, &[], &[(b1, &[]), (b2, &[])]);
    b.inst(b1, &[Operand::reg_def(w)]);
    b.inst(b1, &[stack_use(w)]);
    b.jump(b1, b3, &[]);
    b.inst(b2, &[stack_use(v)]);
    b.jump(b2, b3, &[]);
    b.ret(b3, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let (on, _) = alloc_with(&f, &e, &crate::Options::default());
    let off_options = crate::Options {
        slot_sharing: false,
        ..Default::default()
    };
    let (off, _) = alloc_with(&f, &e, &off_options);
    assert_eq!(on.num_spillslots, 1, "{:?}", on.allocs);
    assert_eq!(off.num_spillslots, 2);
}

/// The redundant-move tests below spill a value with a stack use so that its register
/// uses are reloads: the value is spilled whole (`stack_use_pieces` off; on, a value
/// whose register uses outweigh a reload after the stack use keeps a register and needs
/// no reloads at all).
fn whole_spills() -> crate::Options {
    crate::Options {
        stack_use_pieces: false,
        ..Default::default()
    }
}

fn cross_block_off() -> crate::Options {
    crate::Options {
        cross_block_redundant_moves: false,
        ..whole_spills()
    }
}

/// A spilled value reloaded in a block and again in its only successor, into the same
/// register, with nothing writing that register in between: the second reload goes.
#[test]
fn reload_in_the_single_successor_is_removed() {
    let mut b = FuncBuilder::new();
    let (b0, b1) = (b.block(), b.block());
    let v = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[stack_use(v)]);
    b.inst(b0, &[Operand::reg_use(v)]);
    b.jump(b0, b1, &[]);
    b.inst(b1, &[Operand::reg_use(v)]);
    b.ret(b1, &[]);
    let f = b.build().func;
    let e = env(2, 0);
    let (on, stats_on) = alloc_with(&f, &e, &whole_spills());
    let (off, stats_off) = alloc_with(&f, &e, &cross_block_off());
    assert!(
        on.edits.len() < off.edits.len(),
        "on: {:?}\noff: {:?}",
        on.edits,
        off.edits
    );
    assert!(
        stats_on.cross_block_redundant_moves_removed >= 1,
        "{stats_on:?}"
    );
    assert_eq!(stats_off.cross_block_redundant_moves_removed, 0);
    assert!(stats_on.redundant_moves_removed > stats_off.redundant_moves_removed);
}

/// Both arms of a diamond and their merge block use `v` in r0; the merge block's reload
/// is redundant when the fact "r0 holds v" holds at the end of every predecessor. When
/// one arm clobbers r0 the fact dies in the intersection and the reload stays.
#[test]
fn reload_after_a_merge_needs_the_fact_on_every_path() {
    for clobber_in_one_arm in [false, true] {
        let mut b = FuncBuilder::new();
        let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
        let v = b.vreg(RegClass::Int);
        let r0 = PReg::new(0, RegClass::Int);
        b.inst(b0, &[Operand::reg_def(v)]);
        b.inst(b0, &[stack_use(v)]);
        b.branch(b0, &[], &[(b1, &[]), (b2, &[])]);
        b.inst(b1, &[Operand::reg_fixed_use(v, r0)]);
        b.jump(b1, b3, &[]);
        b.inst(b2, &[Operand::reg_fixed_use(v, r0)]);
        if clobber_in_one_arm {
            b.inst_clobbers(b2, &[], &[r0]);
        }
        b.jump(b2, b3, &[]);
        b.inst(b3, &[Operand::reg_fixed_use(v, r0)]);
        b.ret(b3, &[]);
        let f = b.build().func;
        let e = env(2, 0);
        let (on, stats_on) = alloc_with(&f, &e, &whole_spills());
        let (off, _) = alloc_with(&f, &e, &cross_block_off());
        // The value is still in r0 from its def on entry to both arms, so their
        // reloads go either way; the merge block's depends on the clobber.
        let merge_first = f.block_insns(b3).first();
        assert!(
            !has_edit_before(&on, f.block_insns(b1).first()),
            "{:?}",
            on.edits
        );
        assert!(
            !has_edit_before(&on, f.block_insns(b2).first()),
            "{:?}",
            on.edits
        );
        assert!(has_edit_before(&off, merge_first));
        assert_eq!(
            has_edit_before(&on, merge_first),
            clobber_in_one_arm,
            "{}",
            listing_with_output(&f, &on)
        );
        assert!(on.edits.len() < off.edits.len(), "{:?}", on.edits);
        assert!(
            stats_on.cross_block_redundant_moves_removed >= 2,
            "{stats_on:?}"
        );
    }
}

fn has_edit_before(out: &Output, inst: regalloc2::Inst) -> bool {
    out.edits
        .iter()
        .any(|(p, _)| p.inst() == inst && p.pos() == regalloc2::InstPosition::Before)
}

/// A loop header's facts must also hold at the end of its latch. `v` sits in r0 before
/// the loop and is used in r0 at the header: when the latch leaves r0 alone the header's
/// reload goes (the fixed point keeps the fact); when the latch overwrites r0 it stays.
#[test]
fn loop_header_reload_goes_only_if_the_latch_keeps_the_register() {
    for latch_overwrites in [false, true] {
        let mut b = FuncBuilder::new();
        let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
        let (v, t) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
        let (r0, r1) = (PReg::new(0, RegClass::Int), PReg::new(1, RegClass::Int));
        b.inst(b0, &[Operand::reg_def(v)]);
        b.inst(b0, &[stack_use(v)]);
        b.inst(b0, &[Operand::reg_fixed_use(v, r0)]);
        b.jump(b0, b1, &[]);
        b.inst(b1, &[Operand::reg_fixed_use(v, r0)]);
        b.branch(b1, &[], &[(b2, &[]), (b3, &[])]);
        let r = if latch_overwrites { r0 } else { r1 };
        b.inst(b2, &[Operand::reg_fixed_def(t, r)]);
        b.inst(b2, &[Operand::reg_fixed_use(t, r)]);
        b.jump(b2, b1, &[]);
        b.ret(b3, &[]);
        let f = b.build().func;
        let e = env(2, 0);
        let (on, stats) = alloc_with(&f, &e, &whole_spills());
        let (off, _) = alloc_with(&f, &e, &cross_block_off());
        let header_first = f.block_insns(b1).first();
        assert!(has_edit_before(&off, header_first), "{:?}", off.edits);
        assert_eq!(
            has_edit_before(&on, header_first),
            latch_overwrites,
            "{}",
            listing_with_output(&f, &on)
        );
        if !latch_overwrites {
            assert!(stats.cross_block_redundant_moves_removed >= 1, "{stats:?}");
            assert!(cost(&f, &e, &on).weighted < cost(&f, &e, &off).weighted);
        }
    }
}

/// The moves before `inst` as (stack-to-register, register-to-register) counts.
fn loads_and_copies_before(out: &Output, inst: regalloc2::Inst) -> (usize, usize) {
    let moves = out.edits.iter().filter(|(p, _)| p.inst() == inst);
    moves.fold(
        (0, 0),
        |(loads, copies), (_, regalloc2::Edit::Move { from, to })| match (
            from.is_stack(),
            to.is_reg(),
        ) {
            (true, true) => (loads + 1, copies),
            (false, true) if from.is_reg() => (loads, copies + 1),
            _ => (loads, copies),
        },
    )
}

/// The shape of a Wasm function calling twice with its context `v`, which every call
/// takes in two fixed registers and which lives across the first call (clobbering
/// everything): `v` is stored after its def and loaded before each call. A load into
/// the second register copies the first instead (and the first load before the first
/// call copies the def's register, which still holds `v`). Head splits are off: they
/// would keep `v` in the def's register up to the first call, leaving one load to test.
#[test]
fn a_value_passed_in_two_registers_is_loaded_once() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let v = b.vreg(RegClass::Int);
    let regs: Vec<PReg> = (0..3).map(|k| PReg::new(k, RegClass::Int)).collect();
    b.inst(b0, &[Operand::reg_fixed_def(v, regs[1])]);
    let call = [
        Operand::reg_fixed_use(v, regs[1]),
        Operand::reg_fixed_use(v, regs[0]),
    ];
    let calls = [
        b.inst_clobbers(b0, &call, &regs),
        b.inst_clobbers(b0, &call, &regs),
    ];
    b.ret(b0, &[]);
    let built = b.build();
    let calls = calls.map(|c| built.inst(c));
    let f = built.func;
    let e = env(3, 0);
    let no_heads = crate::Options {
        head_splits: false,
        ..Default::default()
    };
    let (on, stats_on) = alloc_with(&f, &e, &no_heads);
    let (off, stats_off) = alloc_with(
        &f,
        &e,
        &crate::Options {
            reload_from_copies: false,
            // The stores forwarded at a point would copy some of the loads as well.
            forward_stores: false,
            ..no_heads
        },
    );
    let count = |out: &Output| {
        calls.iter().fold((0, 0), |(l, c), &i| {
            let (a, b) = loads_and_copies_before(out, i);
            (l + a, c + b)
        })
    };
    assert_eq!(count(&off), (3, 0), "{}", listing_with_output(&f, &off));
    let listing = listing_with_output(&f, &on);
    assert_eq!(count(&on), (1, 2), "{listing}");
    assert_eq!(stats_on.reloads_from_copies, 2, "{stats_on:?}");
    assert_eq!(stats_off.reloads_from_copies, 0);
    assert!(cost(&f, &e, &on).weighted < cost(&f, &e, &off).weighted);
}

/// Allocates the fuzz function of `seed` at `k` registers per class (as
/// `examples/quality` generates them) with a pass on and off (`off`): the pass must fire
/// (`fired` > 0, 0 with it off) and make the allocation cheaper.
fn pass_fires_and_pays(
    k: usize,
    seed: u64,
    off: fn(&mut crate::Options),
    fired: fn(&crate::Stats) -> usize,
) {
    use ragreedy_testkit::fuzzgen;
    let f = fuzzgen::func_from_seed(seed, &fuzzgen::small_env_options(k))
        .expect("the seed generates a function");
    let e = fuzzgen::restrict_env(&fuzzgen::machine_env(), k);
    let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
    let mut off_options = crate::Options::default();
    off(&mut off_options);
    let (off, stats_off) = alloc_with(&f, &e, &off_options);
    assert_eq!(fired(&stats_off), 0);
    assert!(fired(&stats_on) > 0, "k{k}-s{seed}: the pass did nothing");
    let (cost_on, cost_off) = (cost(&f, &e, &on).weighted, cost(&f, &e, &off).weighted);
    assert!(
        cost_on < cost_off,
        "k{k}-s{seed}: {cost_on} with the pass, {cost_off} without"
    );
}

/// Fuzz functions where a spilled piece ends up with a register free over all of it, the
/// one its own reload pieces took: back in that register it loses its loads and stores
/// (`Stats::unspilled`).
#[test]
fn spilled_pieces_take_back_a_register_left_free() {
    for (k, seed) in [(4, 69), (3, 171), (3, 308)] {
        pass_fires_and_pays(k, seed, |o| o.unspilling = false, |s| s.unspilled);
    }
}

/// Fuzz functions (8 registers per class) where both successors of a branch store the
/// same register to the same slot on entry: the store is made once before the branch
/// (`Stats::hoisted_stores`).
#[test]
fn a_store_made_by_every_successor_moves_before_the_branch() {
    for seed in [571, 2244, 529] {
        pass_fires_and_pays(
            8,
            seed,
            |o| o.hoist_common_stores = false,
            |s| s.hoisted_stores,
        );
    }
}

/// Fuzz functions where both successors of a branch reload the same slot into the same
/// register, or make the same register move, on entry: the move is made once before the
/// branch (`Stats::hoisted_moves`).
#[test]
fn a_reload_made_by_every_successor_moves_before_the_branch() {
    for (k, seed) in [(3, 154), (4, 134), (4, 266)] {
        pass_fires_and_pays(
            k,
            seed,
            |o| o.hoist_common_moves = false,
            |s| s.hoisted_moves,
        );
    }
}

/// Fuzz functions where every predecessor of a join makes the same move before its jump:
/// the move is made once at the join's start (`Stats::sunk_moves`).
#[test]
fn a_move_made_by_every_predecessor_moves_into_the_join() {
    for (k, seed) in [(4, 210), (3, 113), (8, 106)] {
        pass_fires_and_pays(k, seed, |o| o.sink_common_moves = false, |s| s.sunk_moves);
    }
}

/// The shape of a recursive function with an early return (shootout-fib2's `fib2`): the
/// parameter `n` arrives in a fixed register and is compared, and only the path past the
/// early return keeps it, across a call that clobbers every register but one. Whether
/// `n` takes that register or a slot, the move there is made at the start of that path,
/// not at the entry, so the early return does not run it
/// (`Stats::partially_dead_moves`).
#[test]
fn a_parameter_needed_past_an_early_return_is_moved_there() {
    let (f, [entry, early, rest]) = early_return(false, true);
    let e = env(3, 1);
    let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
    let (off, stats_off) = alloc_with(
        &f,
        &e,
        &crate::Options {
            sink_partially_dead_moves: false,
            ..Default::default()
        },
    );
    let listing = listing_with_output(&f, &off);
    assert_eq!(moves_in(&f, &off, entry), 1, "{listing}");
    assert_eq!(stats_off.partially_dead_moves, 0);
    let listing = listing_with_output(&f, &on);
    assert_eq!(moves_in(&f, &on, entry), 0, "{listing}");
    assert_eq!(moves_in(&f, &on, early), 0, "{listing}");
    assert_eq!(
        moves_in(&f, &on, rest),
        moves_in(&f, &off, rest) + 1,
        "{listing}"
    );
    assert_eq!(stats_on.partially_dead_moves, 1, "{stats_on:?}");
    assert_eq!(stats_on.dead_moves_dropped, 0);
    // Equal depth, so the weighted cost cannot tell the two apart.
    assert_eq!(cost(&f, &e, &on).weighted, cost(&f, &e, &off).weighted);
}

/// The same, the branch not reading `n`, with a debug label on `n`: its debug location
/// says `n` is in its home from the move at the entry on, so the move stays (without
/// the label it goes).
#[test]
fn a_move_a_debug_location_relies_on_stays() {
    let (f, _) = early_return(false, false);
    let (_, stats) = alloc_with(&f, &env(3, 1), &crate::Options::default());
    assert_eq!(stats.partially_dead_moves, 1, "{stats:?}");
    let (f, [entry, _, _]) = early_return(true, false);
    let (out, stats) = alloc_with(&f, &env(3, 1), &crate::Options::default());
    assert!(!out.debug_locations.is_empty());
    assert_eq!(stats.partially_dead_moves, 0, "{stats:?}");
    assert_eq!(
        moves_in(&f, &out, entry),
        1,
        "{}",
        listing_with_output(&f, &out)
    );
}

/// The fib2 shape: `n` defined in p1, read by the entry's branch, kept across a call
/// clobbering p0-p2 only past the early return. With `label`, `n` carries a debug label
/// from its def to the end; without `branch_reads`, the branch has no operand.
fn early_return(label: bool, branch_reads: bool) -> (TestFunc, [Block; 3]) {
    let mut b = FuncBuilder::new();
    let (entry, early, rest) = (b.block(), b.block(), b.block());
    let n = b.vreg(RegClass::Int);
    let r = |k| PReg::new(k, RegClass::Int);
    let def = b.inst(entry, &[Operand::reg_fixed_def(n, r(1))]);
    let reads = [Operand::reg_use(n)];
    let operands: &[Operand] = if branch_reads { &reads } else { &[] };
    b.branch(entry, operands, &[(early, &[]), (rest, &[])]);
    b.ret(early, &[]);
    b.inst_clobbers(rest, &[], &[r(0), r(1), r(2)]);
    b.inst(rest, &[Operand::reg_use(n)]);
    let end = b.ret(rest, &[]);
    if label {
        b.debug_label(n, def, end, 7);
    }
    (b.build().func, [entry, early, rest])
}

fn moves_in(f: &TestFunc, out: &Output, blk: Block) -> usize {
    out.edits
        .iter()
        .filter(|(p, _)| f.block_insns(blk).iter().any(|i| i == p.inst()))
        .count()
}

/// Over fuzz functions at 3, 4 and 8 registers per class: moves leave branching blocks
/// somewhere, every allocation still passes the checker (`alloc_with`), and the weighted
/// cost never rises (a move only goes where it runs no more often than before).
#[test]
fn partially_dead_moves_leave_no_allocation_dearer() {
    use ragreedy_testkit::fuzzgen;
    let mut moved = 0;
    for k in [3, 4, 8] {
        for seed in 0..60 {
            let Some(f) = fuzzgen::func_from_seed(seed, &fuzzgen::small_env_options(k)) else {
                continue;
            };
            let e = fuzzgen::restrict_env(&fuzzgen::machine_env(), k);
            let Ok((on, stats)) = super::try_alloc_with(&f, &e, &crate::Options::default()) else {
                continue;
            };
            let off_options = crate::Options {
                sink_partially_dead_moves: false,
                ..Default::default()
            };
            let (off, _) = alloc_with(&f, &e, &off_options);
            moved += stats.partially_dead_moves;
            let (cost_on, cost_off) = (cost(&f, &e, &on).weighted, cost(&f, &e, &off).weighted);
            assert!(cost_on <= cost_off, "k{k}-s{seed}: {cost_on} > {cost_off}");
        }
    }
    assert!(moved > 0, "no move left its block");
}

/// `v` is read by a stack use right after its def and in a register on every trip round
/// a loop. Spilled whole (`stack_use_pieces` off) it is reloaded in the loop; split, only
/// the stack use's instruction is in the slot (written at the def) and the loop reads the
/// register. `w`, whose stack use is followed only by a copy into a block parameter,
/// would pay a reload after the stack use for nothing: it is spilled whole either way.
#[test]
fn a_stack_use_takes_only_its_instruction_to_the_slot() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
    let (v, w, p) = (
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
        b.vreg(RegClass::Int),
    );
    b.set_params(b3, &[p]);
    b.inst(b0, &[Operand::reg_def(v)]);
    b.inst(b0, &[Operand::reg_def(w)]);
    b.inst(b0, &[stack_use(v), stack_use(w)]);
    b.jump(b0, b1, &[]);
    // The loop: b1 reads `v`, b2 is the latch.
    b.inst(b1, &[Operand::reg_use(v)]);
    b.branch(b1, &[], &[(b2, &[]), (b3, &[w])]);
    b.jump(b2, b1, &[]);
    b.inst(b3, &[stack_use(p)]);
    b.ret(b3, &[]);
    let f = b.build().func;
    let e = env(3, 0);
    let (on, stats_on) = alloc_with(&f, &e, &crate::Options::default());
    let off_options = crate::Options {
        stack_use_pieces: false,
        ..Default::default()
    };
    let (off, stats_off) = alloc_with(&f, &e, &off_options);
    assert_eq!(
        stats_on.stack_use_pieces,
        1,
        "{}",
        listing_with_output(&f, &on)
    );
    assert_eq!(stats_off.stack_use_pieces, 0);
    let (cost_on, cost_off) = (cost(&f, &e, &on), cost(&f, &e, &off));
    assert_eq!(cost_on.reloads, 0, "{}", listing_with_output(&f, &on));
    assert!(cost_off.reloads >= 1, "{}", listing_with_output(&f, &off));
    assert!(cost_on.weighted < cost_off.weighted);
}

/// A value defined in a register and used in the fixed stack slot p57f after the
/// clobber of its register (fuzz seed 7334 at 3 registers, shrunk): p57f is written
/// from the def's register right after the def (one store) instead of from the spill
/// slot at the use, a slot-to-slot move through a borrowed register. With another value
/// moved into p57f in between, an early write would be overwritten: the value goes
/// through its spill slot as before.
#[test]
fn a_fixed_stack_slot_is_written_from_the_register_before_the_use() {
    let text = |between: &[&str]| {
        let mut insts = vec!["def v5f any", "def v0f reg"];
        insts.extend_from_slice(between);
        insts.extend([
            "def v1f any, def v2f any; clobbers [p0f]",
            "use v0f fixed p57f",
            "branch -> block1()",
        ]);
        let mut t = String::from(
            "env float preferred [p0f..p2f] non_preferred []\n\
             env fixed_stack_slots [p57f]\n\
             func entry block0 num_vregs 6 spillslot_size [1, 1, 2]\n\
             block0: succs [1]\n",
        );
        for (i, inst) in insts.iter().enumerate() {
            t.push_str(&format!("  i{i}: {inst}\n"));
        }
        let n = insts.len();
        t.push_str("block1: preds [0, 1] succs [1]\n");
        for (k, inst) in [
            "use v0f any, use v5f any",
            "def v3f any",
            "use v3f reg; clobbers [p2f]",
            "def v4f fixed p0f early, use v3f any",
            "branch -> block1()",
        ]
        .iter()
        .enumerate()
        {
            t.push_str(&format!("  i{}: {inst}\n", n + k));
        }
        t
    };
    let free = text(&[]);
    let taken = text(&["use v5f fixed p57f"]);
    early_writes_expected(&[(&free, true), (&taken, false)]);
}

/// The case `fixed-slot-written-in-the-predecessor.txt` writes p53v in block0 for a use
/// in block1. The write also runs on the path to block2: with a non-allocatable operand
/// there reading p53v it would change what that operand reads, and with block0 in a loop
/// that block1 leaves it would run more often than the move it replaces. Neither
/// variant writes early.
#[test]
fn a_fixed_stack_slot_is_written_in_the_predecessor_only_when_safe_and_cheaper() {
    let case = include_str!("../../tests/cases/fixed-slot-written-in-the-predecessor.txt");
    let read_in_block2 = case.replace("  i8: use v4v any\n", "  i8: use v4v any, nonalloc p53v\n");
    assert_ne!(read_in_block2, case);
    // block0 becomes the body of a loop (block2 jumps back to it through block3).
    let in_a_loop = case
        .replace("block0: succs [1, 2]\n", "block0: preds [3] succs [1, 2]\n")
        .replace(
            "block3(v27v): preds [2]\n  i10: ret\n",
            "block3(v27v): preds [2] succs [0]\n  i10: branch -> block0()\n",
        );
    assert_ne!(in_a_loop, case);
    early_writes_expected(&[(case, true), (&read_in_block2, false), (&in_a_loop, false)]);
}

/// The case `fixed-slot-written-before-the-loop.txt` writes p43i for the loop header's
/// use once, in the loop's entry block, though the header has two predecessors and v1
/// uses p43i after the loop. With v1's use moved into the loop's latch, or a clobber of
/// p43i in the loop, the slot would not hold v0 on the next iteration (the checker
/// fails with `loop_leaves_slot` always true): neither variant writes early.
#[test]
fn a_fixed_stack_slot_is_written_before_the_loop_only_when_the_loop_leaves_it() {
    let case = include_str!("../../tests/cases/fixed-slot-written-before-the-loop.txt");
    let used_in_latch = case
        .replace(
            "  i6: branch -> block1()\n",
            "  i6: use v1i fixed p43i\n  i7: branch -> block1()\n",
        )
        .replace(
            "  i7: use v1i fixed p43i\n  i8: ret\n",
            "  i8: op\n  i9: ret\n",
        );
    assert!(used_in_latch.contains("i9: ret"));
    let clobbered = case.replace(
        "  i4: op; clobbers [p0i, p1i, p2i]\n",
        "  i4: op; clobbers [p0i, p1i, p2i, p43i]\n",
    );
    assert_ne!(clobbered, case);
    early_writes_expected(&[(case, true), (&used_in_latch, false), (&clobbered, false)]);
}

/// 2,000 loops in a row, each entered from a block that defines a value its header uses
/// in p43i (the slot is no value's alone, so no write at the def): each use may be
/// written for in its loop's entry, but each check is linear in the function's 6,001
/// blocks, so `LOOP_CHECK_BUDGET` stops them after 174. The early writes made are
/// counted: all 2,000 without the budget.
#[test]
fn writes_before_loops_stop_at_the_functions_budget() {
    let loops = 2000;
    let mut text = String::from(
        "env int preferred [p0i..p2i] non_preferred []\nenv fixed_stack_slots [p43i]\n",
    );
    text += &format!(
        "func entry block0 num_vregs {} spillslot_size [1, 1, 2]\n",
        loops + 1
    );
    text += "block0: succs [1]\n  i0: def v0i reg\n  i1: branch -> block1()\n";
    let mut i = 2;
    for k in 0..loops {
        let (h, l, e) = (3 * k + 1, 3 * k + 2, 3 * k + 3);
        let entry = if k == 0 { 0 } else { h - 1 };
        text += &format!("block{h}: preds [{entry}, {l}] succs [{l}, {e}]\n");
        text += &format!("  i{i}: use v{k}i fixed p43i\n");
        text += &format!("  i{}: op; clobbers [p0i, p1i, p2i]\n", i + 1);
        text += &format!("  i{}: branch -> block{l}(), block{e}()\n", i + 2);
        text += &format!(
            "block{l}: preds [{h}] succs [{h}]\n  i{}: branch -> block{h}()\n",
            i + 3
        );
        i += 4;
        if k + 1 < loops {
            text += &format!("block{e}: preds [{h}] succs [{}]\n", e + 1);
            text += &format!(
                "  i{i}: def v{}i reg\n  i{}: branch -> block{}()\n",
                k + 1,
                i + 1,
                e + 1
            );
            i += 2;
        } else {
            text += &format!("block{e}: preds [{h}]\n  i{i}: ret\n");
        }
    }
    let (f, env) = ragreedy_testkit::text::parse(&text).expect("parse");
    let (_, stats) = alloc_with(&f, &env, &crate::Options::default());
    assert!(
        stats.early_fixed_slot_writes > 0 && stats.early_fixed_slot_writes < loops / 4,
        "{} early writes for {loops} loops",
        stats.early_fixed_slot_writes
    );
}

/// The case `fixed-slot-written-at-the-def.txt` writes p43i once, right after v0's def,
/// for its use in the loop. Each variant breaks one condition of that write: a clobber of
/// p43i on the way (the write would be lost: the checker fails with the clobber check
/// removed), another value used in p43i in the loop (its move would overwrite v0: the
/// checker fails without the sole-reader check), a non-allocatable operand naming p43i
/// (it would read what the write left), and the def in a loop the use is outside of (the
/// store would run more often than the move it replaces). None writes at the def; a
/// second use of the slot takes the first one's write.
#[test]
fn a_fixed_stack_slot_is_written_at_the_def_only_when_it_is_the_values_alone() {
    let case = include_str!("../../tests/cases/fixed-slot-written-at-the-def.txt");
    let variant = |from: &str, to: &str| case_variant(case, from, to);
    let clobbered = variant(
        "  i2: op; clobbers [p0i]\n",
        "  i2: op; clobbers [p0i, p43i]\n",
    );
    let shared = variant("num_vregs 1", "num_vregs 2")
        .replace(
            "  i1: op; clobbers [p1i]\n",
            "  i1: def v1i reg; clobbers [p1i]\n",
        )
        .replace(
            "  i4: op; clobbers [p2i]\n",
            "  i4: use v1i fixed p43i; clobbers [p2i]\n",
        );
    assert!(shared.contains("use v1i fixed p43i"));
    let named = variant(
        "  i1: op; clobbers [p1i]\n",
        "  i1: nonalloc p43i; clobbers [p1i]\n",
    );
    // The def in a loop (block1, with block2 its latch), the use after it.
    let header: String = case
        .lines()
        .filter(|l| l.starts_with("env") || l.starts_with("func"))
        .map(|l| format!("{l}\n"))
        .collect();
    let def_in_loop = header
        + &[
            "block0: succs [1]",
            "  i0: branch -> block1()",
            "block1: preds [0, 2] succs [2, 3]",
            "  i1: def v0i reg",
            "  i2: op; clobbers [p1i]",
            "  i3: op; clobbers [p0i]",
            "  i4: branch -> block2(), block3()",
            "block2: preds [1] succs [1]",
            "  i5: branch -> block1()",
            "block3: preds [1]",
            "  i6: op; clobbers [p2i]",
            "  i7: use v0i fixed p43i",
            "  i8: ret\n",
        ]
        .join("\n");
    // A second use of p43i takes the same write.
    let twice = variant(
        "  i5: use v0i fixed p43i\n  i6: branch -> block1()\n",
        "  i5: use v0i fixed p43i\n  i6: op; clobbers [p2i]\n  i7: use v0i fixed p43i\n  \
         i8: branch -> block1()\n",
    );
    for (source, at_def) in [
        (case, 1),
        (&twice[..], 1),
        (&clobbered[..], 0),
        (&shared[..], 0),
        (&named[..], 0),
        (&def_in_loop[..], 0),
    ] {
        let (f, env) = ragreedy_testkit::text::parse(source).expect("parse");
        let (out, stats) = alloc_with(&f, &env, &crate::Options::default());
        let listing = listing_with_output(&f, &out);
        assert_eq!(stats.fixed_slot_writes_at_def, at_def, "{listing}");
        if at_def == 1 {
            assert_eq!(stats.early_fixed_slot_writes, 1, "{listing}");
        }
    }
}

/// The case `fixed-slot-home.txt` keeps v0, defined in the fixed stack slot p43i, there
/// as its stack home: no copy into a spill slot, and the loop's reload reads p43i. Each
/// variant breaks one condition: a clobber of p43i in the loop (the reload would read
/// what the clobber left: the checker fails with the clobber check removed), another
/// value used in p43i in the loop (its move would overwrite v0: the checker fails
/// without the sole-namer check), a non-allocatable operand naming p43i, and a function
/// that allows a vreg several defs. None is homed, and each costs what it costs with
/// the option off.
#[test]
fn a_spilled_value_is_homed_in_its_defs_fixed_slot_only_when_the_slot_is_its_alone() {
    let case = include_str!("../../tests/cases/fixed-slot-home.txt");
    let variant = |from: &str, to: &str| case_variant(case, from, to);
    let clobbered = variant(
        "  i2: op; clobbers [p0i, p1i, p2i]\n",
        "  i2: op; clobbers [p0i, p1i, p2i, p43i]\n",
    );
    let shared = variant(
        "  i5: branch -> block1()\n",
        "  i5: use v1i fixed p43i\n  i6: branch -> block1()\n",
    )
    .replace("  i6: ret\n", "  i7: ret\n");
    let named = variant(
        "  i2: op; clobbers [p0i, p1i, p2i]\n",
        "  i2: nonalloc p43i; clobbers [p0i, p1i, p2i]\n",
    );
    let multi_defs = variant(
        "spillslot_size [1, 1, 2]",
        "spillslot_size [1, 1, 2] allow_multiple_vreg_defs",
    );
    let off = crate::Options {
        fixed_slot_homes: false,
        ..Default::default()
    };
    let outs = counted_once_where_expected(
        &[
            (case, true),
            (&clobbered, false),
            (&shared, false),
            (&named, false),
            (&multi_defs, false),
        ],
        &off,
        |s| s.fixed_slot_homes,
    );
    // The homed value needs no spill slot of its own.
    assert_eq!(outs[0].num_spillslots, 0);
}

/// `case` with `from` replaced by `to`, which must occur in it.
fn case_variant(case: &str, from: &str, to: &str) -> String {
    let v = case.replace(from, to);
    assert_ne!(v, case, "{from}");
    v
}

/// Allocates each text-format function with and without `early_fixed_slot_writes`:
/// where a write is expected, exactly one is made and the allocation is cheaper; where
/// none is, none is made and the cost is the same.
fn early_writes_expected(cases: &[(&str, bool)]) {
    let off = crate::Options {
        early_fixed_slot_writes: false,
        ..Default::default()
    };
    counted_once_where_expected(cases, &off, |s| s.early_fixed_slot_writes);
}

/// Allocates each text-format function with the default options and with `off`: where
/// `expected`, `counter` counts one and the allocation is cheaper than with `off`;
/// elsewhere it counts none and the cost is the same. Returns the default allocations.
fn counted_once_where_expected(
    cases: &[(&str, bool)],
    off: &crate::Options,
    counter: fn(&crate::Stats) -> usize,
) -> Vec<Output> {
    let mut outs = Vec::new();
    for &(source, expected) in cases {
        let (f, env) = ragreedy_testkit::text::parse(source).expect("parse");
        let (on, stats) = alloc_with(&f, &env, &crate::Options::default());
        let (without, _) = alloc_with(&f, &env, off);
        let (c_on, c_off) = (
            cost(&f, &env, &on).weighted,
            cost(&f, &env, &without).weighted,
        );
        let listing = listing_with_output(&f, &on);
        assert_eq!(counter(&stats), usize::from(expected), "{listing}");
        if expected {
            assert!(c_on < c_off, "{c_on} >= {c_off}\n{listing}");
        } else {
            assert_eq!(c_on, c_off, "{listing}");
        }
        outs.push(on);
    }
    outs
}
