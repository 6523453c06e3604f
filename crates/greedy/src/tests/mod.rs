//! Unit tests per stage, on small functions written with the testkit builder. Every
//! allocation made here also goes through regalloc2's checker.

mod analysis;
mod classic;
mod driver;
mod finishing;
mod moves;
mod observe;
mod recolor;
mod split;
mod stages;

use ragreedy_testkit::builder::{FuncBuilder, TestFunc};
use ragreedy_testkit::check::check_output;
use regalloc2::{Function, MachineEnv, Operand, Output, RegAllocError, RegClass};

/// A small deterministic generator for randomized unit tests: each call `next(n)` gives
/// a number in `0..n` (xorshift64; `seed` must not be zero).
pub(crate) fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

/// Allocates with default options and insists the checker accepts the result.
pub(crate) fn alloc_checked<F: Function>(f: &F, env: &MachineEnv) -> (Output, crate::Stats) {
    let mut ctx = crate::Context::new();
    let out = crate::run_with_context(f, env, &crate::Options::default(), &mut ctx)
        .unwrap_or_else(|e| panic!("allocation failed: {e:?}"));
    if let Err(e) = check_output(f, env, &out) {
        panic!("checker rejected the allocation: {e}");
    }
    (out, *ctx.stats())
}

pub(crate) fn alloc_err<F: Function>(f: &F, env: &MachineEnv) -> RegAllocError {
    match crate::run(f, env, &crate::Options::default()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

/// Allocates with `options`; an error is returned, an output the checker rejects panics.
pub(crate) fn try_alloc_with<F: Function>(
    f: &F,
    env: &MachineEnv,
    options: &crate::Options,
) -> Result<(Output, crate::Stats), RegAllocError> {
    let mut ctx = crate::Context::new();
    let out = crate::run_with_context(f, env, options, &mut ctx)?;
    if let Err(e) = check_output(f, env, &out) {
        panic!(
            "checker rejected the allocation: {e}\n{}",
            ragreedy_testkit::builder::listing_with_output(f, &out)
        );
    }
    Ok((out, *ctx.stats()))
}

/// `v` is used before and after a loop (blocks 1 to 3) whose body keeps two registers
/// busy with `x` and `y`: with two registers, `v` is region-split around the loop.
/// Returns the function, `v`, and the loop's first and last blocks.
pub(crate) fn value_across_busy_loop() -> (
    TestFunc,
    regalloc2::VReg,
    regalloc2::Block,
    regalloc2::Block,
) {
    let mut b = FuncBuilder::new();
    let (b0, b1, b2, b3, b4) = (b.block(), b.block(), b.block(), b.block(), b.block());
    let v = b.vreg(RegClass::Int);
    b.inst(b0, &[Operand::reg_def(v)]);
    for _ in 0..4 {
        b.inst(b0, &[Operand::reg_use(v)]);
    }
    b.jump(b0, b1, &[]);
    let (x, y) = (b.vreg(RegClass::Int), b.vreg(RegClass::Int));
    b.inst(b1, &[Operand::reg_def(x)]);
    b.inst(b1, &[Operand::reg_def(y)]);
    for _ in 0..4 {
        b.inst(b1, &[Operand::reg_use(x), Operand::reg_use(y)]);
    }
    b.jump(b1, b2, &[]);
    b.branch(b2, &[], &[(b3, &[]), (b4, &[])]);
    b.jump(b3, b1, &[]);
    for _ in 0..4 {
        b.inst(b4, &[Operand::reg_use(v)]);
    }
    b.ret(b4, &[]);
    let f = b.build().func;
    (f, v, b1, b3)
}

/// One block holding `waves` waves of `per_wave` Int values, each wave defined in order
/// and used in reverse, the next wave defined after the previous one died: with fewer
/// registers than `per_wave`, values of every wave are spilled.
pub(crate) fn waves_of_values(waves: usize, per_wave: usize) -> TestFunc {
    let mut b = FuncBuilder::new();
    let b0 = b.block();
    for _ in 0..waves {
        let vs = b.vregs(RegClass::Int, per_wave);
        for &v in &vs {
            b.inst(b0, &[Operand::reg_def(v)]);
        }
        for &v in vs.iter().rev() {
            b.inst(b0, &[Operand::reg_use(v)]);
        }
    }
    b.ret(b0, &[]);
    b.build().func
}

thread_local! {
    /// The debug messages of this crate logged on this thread while `debug_log` runs.
    static CAPTURED: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Records this crate's messages on threads inside `debug_log`, ignores everything else
/// (tests run on parallel threads, and only the capturing one should record).
struct CaptureLogger;

impl log::Log for CaptureLogger {
    fn enabled(&self, m: &log::Metadata) -> bool {
        m.target().starts_with("regalloc_greedy") && CAPTURED.with(|c| c.borrow().is_some())
    }

    fn log(&self, r: &log::Record) {
        if self.enabled(r.metadata()) {
            CAPTURED.with(|c| {
                if let Some(lines) = c.borrow_mut().as_mut() {
                    lines.push(r.args().to_string());
                }
            });
        }
    }

    fn flush(&self) {}
}

/// Runs `f` and returns what it returned with the allocator's debug messages, in order.
/// The logger is installed once per test binary; if another one got there first, the
/// messages are lost, so callers assert that they saw some.
pub(crate) fn debug_log<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        if log::set_logger(&CaptureLogger).is_ok() {
            log::set_max_level(log::LevelFilter::Debug);
        }
    });
    CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let r = f();
    let lines = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (r, lines)
}
