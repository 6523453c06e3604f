//! The allocator choice for Cranelift: registers regalloc-greedy with the switch under the name
//! `greedy` (so `REGALLOC=greedy` works once [`install`] ran) and maps the command-line names
//! onto the switch's selections.
//!
//! Greedy keeps one reusable [`regalloc_greedy::Context`] per thread, as Cranelift keeps one
//! regalloc2 `Ctx` per compiling thread.

use regalloc2::{Function, MachineEnv, Output, RegAllocError, RegallocOptions, Selection};
use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;
use std::sync::Once;

thread_local! {
    static GREEDY_CTX: RefCell<regalloc_greedy::Context> = RefCell::new(regalloc_greedy::Context::new());
}

/// The switch hook for greedy. The context is taken out for the call, so a panic (e.g. a bug
/// caught by an assertion) leaves a fresh context behind instead of a half-updated one.
fn greedy_hook(
    func: &dyn Function,
    env: &MachineEnv,
    options: &RegallocOptions,
) -> Result<Output, RegAllocError> {
    // Our allocator always validates its input (it is cheap); regalloc2's flag is moot.
    let _ = options.validate_ssa;
    let greedy_options = regalloc_greedy::Options::default();
    let mut ctx = GREEDY_CTX.take();
    // The allocator asks `spillslot_size` only for classes it spills, so Cranelift's x64
    // backend (no vector class) needs no wrapper here; serializing a function does
    // (`regalloc2::DynFunction::vector_spills_as_float`).
    let result = regalloc_greedy::run_with_context(func, env, &greedy_options, &mut ctx);
    GREEDY_CTX.set(ctx);
    result
}

/// Register greedy with the switch. Idempotent; every entry point of this crate calls it.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| regalloc2::register("greedy", greedy_hook));
}

/// The allocators the command line offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    Greedy,
    Ion,
    Fastalloc,
}

impl Allocator {
    pub const ALL: [Allocator; 3] = [Allocator::Greedy, Allocator::Ion, Allocator::Fastalloc];

    pub fn name(self) -> &'static str {
        match self {
            Allocator::Greedy => "greedy",
            Allocator::Ion => "ion",
            Allocator::Fastalloc => "fastalloc",
        }
    }

    /// The switch selection for this allocator (registers greedy first).
    pub fn selection(self) -> Selection {
        install();
        match self {
            Allocator::Greedy => Selection::Named("greedy"),
            Allocator::Ion => Selection::Ion,
            Allocator::Fastalloc => Selection::Fastalloc,
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
            .ok_or_else(|| format!("unknown allocator `{s}` (greedy, ion or fastalloc)"))
    }
}
