//! The allocator choice for Cranelift: registers each algorithm of regalloc-greedy with the
//! switch under its name (`greedy`, `basic`, `linear-scan`, `irc`; so `REGALLOC=basic` works once
//! [`install`] ran) and maps the command-line names onto the switch's selections.
//!
//! Our allocators share one reusable [`regalloc_greedy::Context`] per thread, as Cranelift
//! keeps one regalloc2 `Ctx` per compiling thread.

use regalloc2::{Function, MachineEnv, Output, RegAllocError, RegallocOptions, Selection};
use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;
use std::sync::Once;

thread_local! {
    static GREEDY_CTX: RefCell<regalloc_greedy::Context> = RefCell::new(regalloc_greedy::Context::new());
}

/// One of our allocators on the thread's context. The context is taken out for the call, so
/// a panic (e.g. a bug caught by an assertion) leaves a fresh context behind instead of a
/// half-updated one.
fn run_ours(
    algorithm: regalloc_greedy::Algorithm,
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    // Our allocators always validate their input (it is cheap); regalloc2's flag is moot.
    let _ = options.validate_ssa;
    let mut greedy_options = regalloc_greedy::Options::default();
    greedy_options.algorithm = algorithm;
    // Cranelift compiles for the host here. On x64 outside Windows (System V, and Wasmtime's
    // `tail`) no float register is callee-saved: xmm8-15 are non-preferred only for their
    // longer encodings, and a first use of one costs no save and restore.
    if cfg!(all(target_arch = "x86_64", not(windows))) {
        greedy_options.callee_saved = Some(regalloc_greedy::Options::callee_saved_x64_sysv(env));
    }
    let mut ctx = GREEDY_CTX.take();
    // The allocator asks `spillslot_size` only for classes it spills, so Cranelift's x64
    // backend (no vector class) needs no wrapper here; serializing a function does
    // (`regalloc2::DynFunction::vector_spills_as_float`).
    let result = regalloc_greedy::run_with_context_into(func, env, &greedy_options, &mut ctx, out);
    GREEDY_CTX.set(ctx);
    result
}

/// The switch hook of each of our algorithms (a plain function pointer each).
fn greedy_hook(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    run_ours(regalloc_greedy::Algorithm::Greedy, func, env, options, out)
}

fn basic_hook(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    run_ours(regalloc_greedy::Algorithm::Basic, func, env, options, out)
}

fn linear_scan_hook(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    run_ours(
        regalloc_greedy::Algorithm::LinearScan,
        func,
        env,
        options,
        out,
    )
}

fn irc_hook(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    run_ours(regalloc_greedy::Algorithm::Irc, func, env, options, out)
}

/// Register our allocators with the switch. Idempotent; every entry point of this crate
/// calls it.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for a in Allocator::ALL {
            if let (Some(algorithm), Some(hook)) = (a.ours(), a.hook()) {
                regalloc2::register(algorithm.name(), hook);
            }
        }
    });
}

/// The allocators the command line offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    Greedy,
    Basic,
    LinearScan,
    Irc,
    Ion,
    Fastalloc,
}

impl Allocator {
    pub const ALL: [Allocator; 6] = [
        Allocator::Greedy,
        Allocator::Basic,
        Allocator::LinearScan,
        Allocator::Irc,
        Allocator::Ion,
        Allocator::Fastalloc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Allocator::Ion => "ion",
            Allocator::Fastalloc => "fastalloc",
            ours => ours.ours().map_or("?", |a| a.name()),
        }
    }

    /// Which of regalloc-greedy's algorithms this is (`None` for regalloc2's).
    pub fn ours(self) -> Option<regalloc_greedy::Algorithm> {
        use regalloc_greedy::Algorithm;
        match self {
            Allocator::Greedy => Some(Algorithm::Greedy),
            Allocator::Basic => Some(Algorithm::Basic),
            Allocator::LinearScan => Some(Algorithm::LinearScan),
            Allocator::Irc => Some(Algorithm::Irc),
            Allocator::Ion | Allocator::Fastalloc => None,
        }
    }

    fn hook(self) -> Option<regalloc2::AllocFn> {
        match self {
            Allocator::Greedy => Some(greedy_hook),
            Allocator::Basic => Some(basic_hook),
            Allocator::LinearScan => Some(linear_scan_hook),
            Allocator::Irc => Some(irc_hook),
            Allocator::Ion | Allocator::Fastalloc => None,
        }
    }

    /// The switch selection for this allocator (registers ours first).
    pub fn selection(self) -> Selection {
        install();
        match self {
            Allocator::Ion => Selection::Ion,
            Allocator::Fastalloc => Selection::Fastalloc,
            ours => Selection::Named(ours.name()),
        }
    }

    /// Select this allocator for the whole process.
    pub fn select_process_wide(self) {
        regalloc2::set_allocator(Some(self.selection()));
    }

    /// Run `body` with this allocator selected on the current thread only.
    pub fn with<R>(self, body: impl FnOnce() -> R) -> R {
        regalloc2::with_thread_allocator(self.selection(), body)
    }
}

impl fmt::Display for Allocator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Allocator {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Allocator::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Allocator::ALL.iter().map(|a| a.name()).collect();
                format!("unknown allocator `{s}` ({})", names.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    /// On an x64 host outside Windows the hook gives greedy the System V callee-saved
    /// registers, in which no float register is: `%blend` of bench-programs/mixed_call.clif
    /// (more than eight floats live at once) keeps every value in a register, xmm8-15
    /// included, where charging those as callee-saved spilled three values.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(windows)))]
    fn the_hook_treats_x64_float_registers_as_caller_saved() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench-programs/dump/mixed_call.blend.json");
        let f = ragreedy_testkit::corpus::load_function(&path).expect("the committed dump");
        let env = f.machine_env().clone();
        let mut out = regalloc2::Output::default();
        super::greedy_hook(&f, &env, &Default::default(), &mut out).expect("allocates");
        ragreedy_testkit::check::check_output(&f, &env, &out).expect("the checker accepts it");
        let spills = out
            .edits
            .iter()
            .filter(|(_, regalloc2::Edit::Move { from, to })| from.is_stack() || to.is_stack())
            .count();
        assert_eq!((out.num_spillslots, spills), (0, 0), "{out:?}");
        let default = regalloc_greedy::run(&f, &env, &Default::default()).expect("allocates");
        assert!(
            default.num_spillslots > 0,
            "the default spills: {default:?}"
        );
    }
}
