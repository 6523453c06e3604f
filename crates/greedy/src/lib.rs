//! `regalloc-greedy`: an LLVM-greedy-style register allocator that consumes regalloc2's
//! `Function` + `MachineEnv` and produces regalloc2's `Output`, so any regalloc2 client
//! (Cranelift first) can swap it in.
//!
//! The public surface is deliberately small: [`run`], [`run_with_context`], [`Options`],
//! [`Stats`] and the reusable [`Context`]. See `docs/design.md` for the pipeline.

mod analysis;
mod edits;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod greedy;
mod slots;
#[cfg(test)]
mod tests;

use regalloc2::{Function, MachineEnv, Output, RegAllocError};

/// Tuning knobs. `Default` is what we ship.
///
/// Input is always validated (SSA, CFG shape, operand shapes): bad input gets a
/// `RegAllocError`, never a panic.
#[derive(Clone, Debug)]
pub struct Options {
    /// Queue a range bound for the spiller once more, after everything else, in case
    /// evictions freed a register for it.
    pub deferred_spilling: bool,
    /// Live-range splitting (local, region, block, instruction) before spilling. On by
    /// default: measured better than spilling whole values at 8 registers per class and
    /// in Cranelift-shaped code, slightly worse at 3-4 (see the issue-3 note).
    pub splitting: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            deferred_spilling: false,
            splitting: true,
        }
    }
}

/// What the allocator did on the last function (or, summed, on several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub intervals: usize,
    pub assignments: usize,
    pub evictions: usize,
    pub local_splits: usize,
    pub region_splits: usize,
    pub block_splits: usize,
    pub instruction_splits: usize,
    pub spills: usize,
    pub recolorings: usize,
    pub moves_inserted: usize,
    pub spill_stores: usize,
    pub reloads: usize,
    pub spill_slots: usize,
    /// Moves dropped because their destination already held the value.
    pub redundant_moves_removed: usize,
    /// Spilled values laid out in shared spill slots (`spill_slots` counts the units).
    pub shared_slot_values: usize,
}

/// Reusable allocator state: keeps its buffers across functions, one per thread, the way
/// Cranelift reuses regalloc2's `Ctx`.
#[derive(Default)]
pub struct Context {
    stats: Stats,
    analyses: analysis::Analyses,
    greedy: greedy::GreedyCtx,
    edits: edits::EditsCtx,
}

impl Context {
    pub fn new() -> Self {
        Self::default()
    }

    /// Statistics of the last `run` on this context.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// Allocate registers for `func` in `env`.
pub fn run<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    options: &Options,
) -> Result<Output, RegAllocError> {
    let mut ctx = Context::new();
    run_with_context(func, env, options, &mut ctx)
}

/// Allocate registers for `func`, reusing the buffers in `ctx`.
pub fn run_with_context<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    options: &Options,
    ctx: &mut Context,
) -> Result<Output, RegAllocError> {
    ctx.stats = Stats::default();
    ctx.analyses.compute(func)?;
    greedy::Allocator {
        func,
        env,
        options,
        an: &ctx.analyses,
        ctx: &mut ctx.greedy,
        stats: &mut ctx.stats,
        priority: greedy::advisor::DefaultPriority,
        eviction: greedy::advisor::DefaultEviction,
    }
    .run()?;
    let mut out = Output::default();
    edits::OutputBuilder {
        func,
        env,
        an: &ctx.analyses,
        g: &mut ctx.greedy,
        ctx: &mut ctx.edits,
        stats: &mut ctx.stats,
    }
    .build(&mut out)?;
    Ok(out)
}
