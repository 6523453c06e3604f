//! The allocator switch that sits under Cranelift in place of regalloc2: it re-exports the
//! registry regalloc2 0.15.2 unchanged (every type is the upstream type, so an `Output` built by
//! any allocator against `=0.15.2` is what Cranelift consumes) and overrides only [`run`] and
//! [`run_with_ctx`], which route each function to the allocator currently selected.
//!
//! Selection, from strongest to weakest: a per-thread override ([`with_thread_allocator`], so
//! parallel tests can each pick one), the process-wide choice ([`set_allocator`]), the
//! `REGALLOC` environment variable (read once: `ion`, `fastalloc`, `default`, or the name of an
//! allocator registered with [`register`], e.g. `greedy`), and finally whatever Cranelift asked
//! for in `RegallocOptions::algorithm`. This crate knows nothing of any outside allocator: they
//! come in as plain function pointers ([`AllocFn`]), so editing one never rebuilds Cranelift.
//!
//! It also offers a per-thread capture callback ([`with_thread_capture`]) that sees every
//! function and machine environment before allocation, and call counters that prove the patch
//! is in effect (if Cargo ever resolved Cranelift to the registry crate, they would stay at 0).
//!
//! For benchmarking only, [`set_entry_padding`] makes every allocation, whichever allocator
//! made it, start its entry block with register self-moves: the code after them shifts by
//! their encoded size, so a harness can measure how much of a run-time difference is where
//! the code happens to land rather than what the allocator did.

pub use upstream::*;

/// The registry regalloc2 itself, for callers that want the real allocator explicitly.
pub use upstream as original;

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{OnceLock, RwLock};

/// An outside allocator. regalloc2's `Function` has no generic methods, so it is dyn-compatible
/// and one non-generic entry point serves every client. It writes its result into the
/// `Output` it is given (the one inside the client's `Ctx`, whose buffers it may reuse, as
/// ion does).
pub type AllocFn =
    fn(&dyn Function, &MachineEnv, &RegallocOptions, &mut Output) -> Result<(), RegAllocError>;

/// A callback shown every function (and its environment) before it is allocated.
pub type CaptureFn = Box<dyn FnMut(&dyn Function, &MachineEnv)>;

/// Which allocator the switch sends functions to.
#[derive(Clone, Copy, Debug)]
pub enum Selection {
    /// Whatever the client asked for in `RegallocOptions::algorithm`.
    Default,
    /// regalloc2's backtracking allocator, whatever the options say.
    Ion,
    /// regalloc2's single-pass allocator, whatever the options say.
    Fastalloc,
    /// An allocator registered under this name with [`register`]; resolved at each call, so the
    /// name may be selected before it is registered.
    Named(&'static str),
    /// An anonymous outside allocator (tests use this for deliberately wrong allocators).
    Hook(AllocFn),
}

impl Selection {
    /// Parse an allocator name as used by `REGALLOC` and command lines. Names other than the
    /// built-in ones must have been registered.
    pub fn parse(name: &str) -> Result<Selection, String> {
        match name {
            "default" | "cranelift" => Ok(Selection::Default),
            "ion" | "backtracking" => Ok(Selection::Ion),
            "fastalloc" | "single_pass" => Ok(Selection::Fastalloc),
            _ => registered(name)
                .map(|(n, _)| Selection::Named(n))
                .ok_or_else(|| {
                    format!(
                        "unknown allocator `{name}` (known: default, ion, fastalloc{})",
                        registered_names()
                            .iter()
                            .map(|n| format!(", {n}"))
                            .collect::<String>()
                    )
                }),
        }
    }
}

static REGISTRY: RwLock<Vec<(&'static str, AllocFn)>> = RwLock::new(Vec::new());
/// `None` until [`set_allocator`] is called; then the environment is no longer consulted.
static GLOBAL: RwLock<Option<Selection>> = RwLock::new(None);
static ENV_CHOICE: OnceLock<Option<String>> = OnceLock::new();
static ENTRY_PADDING: RwLock<Vec<PReg>> = RwLock::new(Vec::new());
static CALLS: AtomicUsize = AtomicUsize::new(0);
static OUTSIDE_CALLS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_SELECTION: Cell<Option<Selection>> = const { Cell::new(None) };
    static THREAD_CAPTURE: RefCell<Option<CaptureFn>> = const { RefCell::new(None) };
    static THREAD_CALLS: Cell<usize> = const { Cell::new(0) };
    static THREAD_LAST: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Make an outside allocator selectable by `name` (through `REGALLOC`, [`Selection::parse`] or
/// [`Selection::Named`]). Registering a name again replaces the function.
pub fn register(name: &'static str, f: AllocFn) {
    let mut reg = REGISTRY.write().unwrap_or_else(|e| e.into_inner());
    match reg.iter_mut().find(|(n, _)| *n == name) {
        Some(slot) => slot.1 = f,
        None => reg.push((name, f)),
    }
}

fn registered(name: &str) -> Option<(&'static str, AllocFn)> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    reg.iter().find(|(n, _)| *n == name).copied()
}

/// Names registered with [`register`], in registration order.
pub fn registered_names() -> Vec<&'static str> {
    let reg = REGISTRY.read().unwrap_or_else(|e| e.into_inner());
    reg.iter().map(|(n, _)| *n).collect()
}

/// Choose the allocator for the whole process (`None`: back to `REGALLOC`, then the options).
pub fn set_allocator(sel: Option<Selection>) {
    *GLOBAL.write().unwrap_or_else(|e| e.into_inner()) = sel;
}

/// Run `body` with `sel` selected on this thread only; the previous choice comes back after,
/// also when `body` panics.
pub fn with_thread_allocator<R>(sel: Selection, body: impl FnOnce() -> R) -> R {
    struct Restore(Option<Selection>);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREAD_SELECTION.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(THREAD_SELECTION.with(|s| s.replace(Some(sel))));
    body()
}

/// Run `body` with `capture` shown every function allocated on this thread; the previous
/// callback comes back after, also when `body` panics.
pub fn with_thread_capture<R>(capture: CaptureFn, body: impl FnOnce() -> R) -> R {
    struct Restore(Option<CaptureFn>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = self.0.take();
            THREAD_CAPTURE.with(|c| *c.borrow_mut() = old);
        }
    }
    let _restore = Restore(THREAD_CAPTURE.with(|c| c.borrow_mut().replace(capture)));
    body()
}

/// How many functions went through the switch in this process.
pub fn calls() -> usize {
    CALLS.load(Ordering::Relaxed)
}

/// How many of those went to an outside allocator (named or hook).
pub fn outside_calls() -> usize {
    OUTSIDE_CALLS.load(Ordering::Relaxed)
}

/// How many functions went through the switch on this thread.
pub fn thread_calls() -> usize {
    THREAD_CALLS.with(Cell::get)
}

/// The allocator that took the last function on this thread: `ion`, `fastalloc`, `hook` or a
/// registered name.
pub fn thread_last_allocator() -> Option<&'static str> {
    THREAD_LAST.with(Cell::get)
}

/// Every allocation from now on, by any allocator and on any thread, starts its entry block
/// with one self-move (`r <- r`) per register of `moves`, in order; an empty list (the
/// default) turns this off. A self-move changes no value, so the allocation stays correct;
/// what it changes is the code's size before everything that follows in the function. The
/// registers should be ones no calling convention saves (a move into a callee-saved register
/// makes the prologue save it) and the caller picks them for their encoded size.
pub fn set_entry_padding(moves: &[PReg]) {
    let mut pad = ENTRY_PADDING.write().unwrap_or_else(|e| e.into_inner());
    pad.clear();
    pad.extend_from_slice(moves);
}

/// Insert the entry padding into `out`, before every other edit at the entry block's first
/// instruction (edits stay sorted by program point).
fn pad_entry<F: Function>(func: &F, out: &mut Output) {
    let pad = ENTRY_PADDING.read().unwrap_or_else(|e| e.into_inner());
    if pad.is_empty() {
        return;
    }
    let at = ProgPoint::before(func.block_insns(func.entry_block()).first());
    let k = out.edits.partition_point(|&(p, _)| p < at);
    let moves = pad.iter().map(|&r| {
        let a = Allocation::reg(r);
        (at, Edit::Move { from: a, to: a })
    });
    out.edits.splice(k..k, moves);
}

/// The selection in force on this thread right now, as described in the crate docs.
pub fn current_selection() -> Result<Selection, String> {
    if let Some(sel) = THREAD_SELECTION.with(Cell::get) {
        return Ok(sel);
    }
    if let Some(sel) = *GLOBAL.read().unwrap_or_else(|e| e.into_inner()) {
        return Ok(sel);
    }
    let env = ENV_CHOICE.get_or_init(|| std::env::var("REGALLOC").ok().filter(|s| !s.is_empty()));
    match env {
        Some(name) => Selection::parse(name).map_err(|e| format!("REGALLOC: {e}")),
        None => Ok(Selection::Default),
    }
}

enum Route {
    Upstream(&'static str, Algorithm),
    Outside(&'static str, AllocFn),
}

fn route(options: &RegallocOptions) -> Route {
    // A bad name must not quietly fall back to ion: results would be credited to the wrong
    // allocator. Panicking inside the client's compile is the loudest available signal.
    let sel = current_selection().unwrap_or_else(|e| panic!("regalloc2 switch: {e}"));
    match sel {
        Selection::Default => match options.algorithm {
            Algorithm::Ion => Route::Upstream("ion", Algorithm::Ion),
            Algorithm::Fastalloc => Route::Upstream("fastalloc", Algorithm::Fastalloc),
        },
        Selection::Ion => Route::Upstream("ion", Algorithm::Ion),
        Selection::Fastalloc => Route::Upstream("fastalloc", Algorithm::Fastalloc),
        Selection::Named(name) => match registered(name) {
            Some((name, f)) => Route::Outside(name, f),
            None => panic!("regalloc2 switch: allocator `{name}` selected but not registered"),
        },
        Selection::Hook(f) => Route::Outside("hook", f),
    }
}

/// Run the selected allocator (the override of regalloc2's `run`).
pub fn run<F: Function>(
    func: &F,
    env: &MachineEnv,
    options: &RegallocOptions,
) -> Result<Output, RegAllocError> {
    let mut ctx = Ctx::default();
    run_with_ctx(func, env, options, &mut ctx)?;
    Ok(core::mem::take(&mut ctx.output))
}

/// Run the selected allocator with a reusable context (the override of regalloc2's
/// `run_with_ctx`, which is what Cranelift calls). The result is always left in `ctx.output`:
/// Cranelift's checker and emitter read it from there.
pub fn run_with_ctx<'a, F: Function>(
    func: &F,
    env: &MachineEnv,
    options: &RegallocOptions,
    ctx: &'a mut Ctx,
) -> Result<&'a Output, RegAllocError> {
    CALLS.fetch_add(1, Ordering::Relaxed);
    THREAD_CALLS.with(|c| c.set(c.get() + 1));
    THREAD_CAPTURE.with(|c| {
        if let Some(capture) = c.borrow_mut().as_mut() {
            capture(func, env);
        }
    });
    match route(options) {
        Route::Upstream(name, algorithm) => {
            THREAD_LAST.with(|l| l.set(Some(name)));
            let options = RegallocOptions {
                algorithm,
                ..*options
            };
            upstream::run_with_ctx(func, env, &options, ctx)?;
            pad_entry(func, &mut ctx.output);
            Ok(&ctx.output)
        }
        Route::Outside(name, f) => {
            THREAD_LAST.with(|l| l.set(Some(name)));
            OUTSIDE_CALLS.fetch_add(1, Ordering::Relaxed);
            f(func, env, options, &mut ctx.output)?;
            pad_entry(func, &mut ctx.output);
            Ok(&ctx.output)
        }
    }
}

/// Run the registry regalloc2 on a `&dyn Function` (its entry points are generic over sized
/// types), honouring `options.algorithm`. Meant for hooks that wrap or perturb ion/fastalloc.
pub fn original_run(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
) -> Result<Output, RegAllocError> {
    upstream::run(&DynFunction::new(func), env, options)
}

/// `&dyn Function` as a sized `Function`, to call generic regalloc2 APIs (`run`,
/// `SerializableFunction::new`, the checker) from a hook. Every method forwards, including the
/// ones with default bodies, so the wrapper built by [`DynFunction::new`] is indistinguishable
/// from the wrapped function.
///
/// The one deliberate difference is [`DynFunction::vector_spills_as_float`], for a quirk of
/// Cranelift's x64 backend: its `Function` hits `unreachable!` when asked the spill-slot size
/// of the vector class (x64 keeps vectors in the float class), yet code that serializes or
/// replays a function (regalloc2's `SerializableFunction::new`) asks for all three classes.
/// No x64 vreg is ever in the vector class, so any answer is inert; that wrapper gives the
/// float class's size.
pub struct DynFunction<'a> {
    func: &'a dyn Function,
    vector_spills_as_float: bool,
}

impl<'a> DynFunction<'a> {
    /// Forwards every method unchanged.
    pub fn new(func: &'a dyn Function) -> Self {
        DynFunction {
            func,
            vector_spills_as_float: false,
        }
    }

    /// Forwards every method, except that the vector class's spill-slot size is the float
    /// class's (Cranelift x64's quirk, see the type's documentation).
    pub fn vector_spills_as_float(func: &'a dyn Function) -> Self {
        DynFunction {
            func,
            vector_spills_as_float: true,
        }
    }
}

impl Function for DynFunction<'_> {
    fn num_insts(&self) -> usize {
        self.func.num_insts()
    }
    fn num_blocks(&self) -> usize {
        self.func.num_blocks()
    }
    fn entry_block(&self) -> Block {
        self.func.entry_block()
    }
    fn block_insns(&self, block: Block) -> InstRange {
        self.func.block_insns(block)
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        self.func.block_succs(block)
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        self.func.block_preds(block)
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        self.func.block_params(block)
    }
    fn is_ret(&self, insn: Inst) -> bool {
        self.func.is_ret(insn)
    }
    fn is_branch(&self, insn: Inst) -> bool {
        self.func.is_branch(insn)
    }
    fn branch_blockparams(&self, block: Block, insn: Inst, succ_idx: usize) -> &[VReg] {
        self.func.branch_blockparams(block, insn, succ_idx)
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        self.func.inst_operands(insn)
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        self.func.inst_clobbers(insn)
    }
    fn num_vregs(&self) -> usize {
        self.func.num_vregs()
    }
    fn debug_value_labels(&self) -> &[(VReg, Inst, Inst, u32)] {
        self.func.debug_value_labels()
    }
    fn spillslot_size(&self, regclass: RegClass) -> usize {
        match regclass {
            RegClass::Vector if self.vector_spills_as_float => {
                self.func.spillslot_size(RegClass::Float)
            }
            rc => self.func.spillslot_size(rc),
        }
    }
    fn multi_spillslot_named_by_last_slot(&self) -> bool {
        self.func.multi_spillslot_named_by_last_slot()
    }
    fn allow_multiple_vreg_defs(&self) -> bool {
        self.func.allow_multiple_vreg_defs()
    }
}
