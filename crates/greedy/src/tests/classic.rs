//! The classic allocators (basic, linear scan, iterated register coalescing) on generated
//! functions: every output through regalloc2's checker, and no error where ion allocates.

use crate::{Algorithm, Options};
use ragreedy_testkit::builder::{FuncBuilder, TestFunc, env};
use ragreedy_testkit::check::check_output;
use ragreedy_testkit::fuzzgen;
use regalloc2::{MachineEnv, Operand, PReg, RegClass, RegallocOptions, VReg};

/// Allocates `f` with `algorithm` through the checker; returns the context, whose ledger
/// the caller reads.
fn allocate(f: &TestFunc, env: &MachineEnv, algorithm: Algorithm) -> crate::Context {
    let options = Options {
        algorithm,
        ..Options::default()
    };
    let mut ctx = crate::Context::new();
    let out = crate::run_with_context(f, env, &options, &mut ctx)
        .unwrap_or_else(|e| panic!("{}: {e:?}", algorithm.name()));
    if let Err(e) = check_output(f, env, &out) {
        panic!("{}: checker: {e}", algorithm.name());
    }
    ctx
}

/// Where the value (not a reload piece) `v` lives: `Some(register)` or `None` (its slot).
fn home(ctx: &crate::Context, algorithm: Algorithm, v: VReg) -> Option<PReg> {
    let ledger = match algorithm {
        Algorithm::Basic => &ctx.basic.ledger,
        Algorithm::LinearScan => &ctx.linear_scan.ledger,
        Algorithm::Irc => &ctx.irc.ledger,
        _ => unreachable!("no ledger"),
    };
    let iv = ledger
        .intervals
        .iter()
        .find(|iv| iv.vreg == v && iv.site.is_none())
        .expect("the value has an interval");
    assert_eq!(
        iv.spilled,
        iv.reg.is_none(),
        "{v}: spilled xor in a register"
    );
    iv.reg
}

const R0: PReg = PReg::new(0, RegClass::Int);

/// One register. `a` is defined first and busy, `c` comes after it, both heavier than `b`,
/// which spans them both. Basic places `a` and `c` and spills `b`; `b`'s store piece after
/// its def needs the register inside `a` and cannot be spilled, so it evicts `a`, which is
/// spilled in turn, while `c` keeps the register.
#[test]
fn basic_reload_piece_evicts_a_lighter_value() {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    let [a, long, c] = [0; 3].map(|_| b.vreg(RegClass::Int));
    b.inst(b0, &[Operand::reg_def(a)]);
    b.inst(b0, &[Operand::reg_def(long)]);
    b.inst(b0, &[Operand::reg_use(a)]);
    b.inst(b0, &[Operand::reg_def(c)]);
    b.inst(b0, &[Operand::reg_use(c)]);
    b.inst(b0, &[Operand::reg_use(long)]);
    b.ret(b0, &[]);
    let f = b.build().func;
    let ctx = allocate(&f, &env(1, 0), Algorithm::Basic);
    assert_eq!(home(&ctx, Algorithm::Basic, long), None);
    assert_eq!(home(&ctx, Algorithm::Basic, a), None);
    assert_eq!(home(&ctx, Algorithm::Basic, c), Some(R0));
    assert_eq!(ctx.stats().evictions, 1, "{:?}", ctx.stats());
    assert_eq!(ctx.stats().spills, 2, "{:?}", ctx.stats());
}

const R1: PReg = PReg::new(1, RegClass::Int);

/// Two registers. `a` starts first and is used often up to the end; `c` starts next and
/// ends soon; `b` starts third, inside both, and accepts the stack (no reload pieces).
/// Linear scan spills the interval in the way that ends last (`a`, the heaviest) and `b`
/// takes its register; basic, by weight, spills `b`, the lightest.
#[test]
fn linear_scan_spills_the_interval_that_ends_last() {
    let mut bld = FuncBuilder::new();
    let b0 = bld.block();
    let [a, c, b] = [0; 3].map(|_| bld.vreg(RegClass::Int));
    bld.inst(b0, &[Operand::reg_def(a)]);
    bld.inst(b0, &[Operand::reg_def(c)]);
    bld.inst(b0, &[Operand::any_def(b)]);
    bld.inst(b0, &[Operand::any_use(b), Operand::reg_use(c)]);
    bld.inst(b0, &[Operand::reg_use(c)]);
    for _ in 0..6 {
        bld.inst(b0, &[Operand::reg_use(a)]);
    }
    bld.ret(b0, &[]);
    let f = bld.build().func;
    let ls = Algorithm::LinearScan;
    let ctx = allocate(&f, &env(2, 0), ls);
    assert_eq!(home(&ctx, ls, a), None);
    assert_eq!(home(&ctx, ls, c), Some(R1));
    assert_eq!(home(&ctx, ls, b), Some(R0));
    let ctx = allocate(&f, &env(2, 0), Algorithm::Basic);
    assert_eq!(home(&ctx, Algorithm::Basic, a), Some(R0));
    assert_eq!(home(&ctx, Algorithm::Basic, c), Some(R1));
    assert_eq!(home(&ctx, Algorithm::Basic, b), None);
}

/// One register. `outer` is live in the first and the last block of a diamond's arm and
/// not in between (a lifetime hole, the middle block); `inner` lives only in the middle
/// block. Both fit in the one register: the interval is its segments, not its hull.
#[test]
fn linear_scan_fills_a_lifetime_hole() {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3) = (b.block(), b.block(), b.block(), b.block());
    let outer = b.vreg(RegClass::Int);
    let inner = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(outer)]);
    b.branch(b0, &[], &[(b1, &[]), (b2, &[])]);
    // b1: the value dies here; b2 keeps it, through b3.
    b.inst(b1, &[Operand::reg_use(outer)]);
    b.inst(b1, &[Operand::reg_def(inner)]);
    b.inst(b1, &[Operand::reg_use(inner)]);
    b.ret(b1, &[]);
    b.jump(b2, b3, &[]);
    b.inst(b3, &[Operand::reg_use(outer)]);
    b.ret(b3, &[]);
    let f = b.build().func;
    let ctx = allocate(&f, &env(1, 0), Algorithm::LinearScan);
    assert_eq!(home(&ctx, Algorithm::LinearScan, outer), Some(R0));
    assert_eq!(home(&ctx, Algorithm::LinearScan, inner), Some(R0));
    assert_eq!(ctx.stats().spills, 0);
}

/// Allocates `count` generated functions (seeds from `first`) with `algorithm` in the
/// stress environment with `regs` registers per class; returns a description of each
/// failure: a checker rejection, a panic, or an error on a function ion allocates.
fn failures(algorithm: Algorithm, regs: Option<usize>, first: u64, count: usize) -> Vec<String> {
    let options = Options {
        algorithm,
        ..Options::default()
    };
    let mut ctx = crate::Context::new();
    let env = fuzzgen::stress_env(regs);
    let mut failed = Vec::new();
    let mut done = 0;
    let mut seed = first;
    while done < count {
        let s = seed;
        seed += 1;
        let Some(f) = fuzzgen::func_from_seed(s, &fuzzgen::stress_options(s, regs)) else {
            continue;
        };
        done += 1;
        let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::run_with_context(&f, &env, &options, &mut ctx)
        }));
        match ours {
            Err(_) => {
                ctx = crate::Context::new();
                failed.push(format!("seed {s}: panic"));
            }
            Ok(Err(e)) => {
                let ion = std::panic::catch_unwind(|| {
                    regalloc2::run(&f, &env, &RegallocOptions::default())
                });
                if matches!(ion, Ok(Ok(_))) {
                    failed.push(format!("seed {s}: {e:?} where ion allocates"));
                }
            }
            Ok(Ok(out)) => {
                if let Err(e) = check_output(&f, &env, &out) {
                    failed.push(format!("seed {s}: checker: {e}"));
                }
            }
        }
    }
    failed
}

fn assert_clean(algorithm: Algorithm) {
    for (regs, count) in [(None, 300), (Some(4), 300), (Some(3), 200), (Some(2), 200)] {
        let f = failures(algorithm, regs, 1, count);
        assert!(
            f.is_empty(),
            "{} at {regs:?} registers: {} failures, first: {:?}",
            algorithm.name(),
            f.len(),
            &f[..f.len().min(5)]
        );
    }
}

/// Two registers. A loop carries `acc` around through a block parameter while `step`,
/// defined before the loop, is live throughout: the argument and the parameter are
/// coalesced into one node, so they share a register and the back edge needs no move.
#[test]
fn irc_coalesces_a_block_parameter_with_its_arguments() {
    let mut b = FuncBuilder::new();
    let (entry, head, latch, exit) = (b.block(), b.block(), b.block(), b.block());
    let [step, init, acc, next] = [0; 4].map(|_| b.vreg(RegClass::Int));
    b.set_params(head, &[acc]);
    b.inst(entry, &[Operand::reg_def(step)]);
    b.inst(entry, &[Operand::reg_def(init)]);
    b.jump(entry, head, &[init]);
    b.inst(
        head,
        &[
            Operand::reg_def(next),
            Operand::reg_use(acc),
            Operand::reg_use(step),
        ],
    );
    b.branch(head, &[], &[(latch, &[]), (exit, &[])]);
    b.jump(latch, head, &[next]);
    b.ret(exit, &[Operand::reg_use(step)]);
    let f = b.build().func;
    let env2 = env(2, 0);
    let mut options = Options {
        algorithm: Algorithm::Irc,
        ..Options::default()
    };
    options.redundant_moves = false;
    let mut ctx = crate::Context::new();
    let out = crate::run_with_context(&f, &env2, &options, &mut ctx).expect("allocates");
    check_output(&f, &env2, &out).expect("checker");
    let irc = Algorithm::Irc;
    assert!(ctx.stats().coalesced_copies >= 2, "{:?}", ctx.stats());
    assert_eq!(home(&ctx, irc, init), home(&ctx, irc, acc));
    assert_eq!(home(&ctx, irc, next), home(&ctx, irc, acc));
    assert_ne!(home(&ctx, irc, step), home(&ctx, irc, acc));
    assert!(out.edits.is_empty(), "{:?}", out.edits);
}

#[test]
fn basic_passes_the_checker_on_generated_functions() {
    assert_clean(Algorithm::Basic);
}

#[test]
fn linear_scan_passes_the_checker_on_generated_functions() {
    assert_clean(Algorithm::LinearScan);
}

#[test]
fn irc_passes_the_checker_on_generated_functions() {
    assert_clean(Algorithm::Irc);
}
