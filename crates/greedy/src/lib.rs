//! `regalloc-greedy`: an LLVM-greedy-style register allocator that consumes regalloc2's
//! `Function` + `MachineEnv` and produces regalloc2's `Output`, so any regalloc2 client
//! (Cranelift first) can swap it in.
//!
//! The public surface is deliberately small: [`run`], [`run_with_context`] (and
//! [`run_with_context_into`], which also reuses the caller's `Output`), [`Options`],
//! [`Stats`] and the reusable [`Context`]; [`run_observed`] also reports each decision to
//! an [`Observer`] as an [`Event`]. See `docs/design.md` for the pipeline.
//!
//! [`Options`] and [`Stats`] are `#[non_exhaustive]`, so that a knob or a counter can be added
//! without breaking callers: start from `Options::default()` and set the fields to change.

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod analysis;
mod assignment;
mod basic;
mod edits;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
mod greedy;
mod irc;
mod linear_scan;
mod lists;
mod observe;
mod point_bits;
mod search;
mod slots;
#[cfg(test)]
mod tests;
mod union_find;
mod whole_value;

pub use observe::{Event, Observer, Occupant, Refusal, SplitKind};
use regalloc2::{Function, MachineEnv, Output, PRegSet, RegAllocError, RegClass};
use std::time::{Duration, Instant};

/// Which allocator runs. Each reads the same analyses and hands its result to the same
/// slot layout and edit builder, so each produces a complete `Output`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Algorithm {
    /// LLVM's greedy allocator: eviction, splitting, recoloring (the default).
    #[default]
    Greedy,
    /// LLVM's RegAllocBasic: a queue by spill weight, eviction of lighter values by
    /// spilling them, no splitting.
    Basic,
    /// Poletto and Sarkar's linear scan: intervals by increasing start, the one that ends
    /// last spilled, lifetime holes honoured.
    LinearScan,
    /// George and Appel's iterated register coalescing: graph colouring with conservative
    /// coalescing, rebuilt after each round of spills.
    Irc,
}

impl Algorithm {
    /// Every algorithm, greedy first.
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Greedy,
        Algorithm::Basic,
        Algorithm::LinearScan,
        Algorithm::Irc,
    ];

    /// The name command lines and the allocator switch use.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Greedy => "greedy",
            Algorithm::Basic => "basic",
            Algorithm::LinearScan => "linear-scan",
            Algorithm::Irc => "irc",
        }
    }

    /// The algorithm called `name` (see [`Algorithm::name`]).
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Algorithm::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// Tuning knobs. `Default` is what we ship; change a field on a default value:
///
/// ```
/// let mut options = regalloc_greedy::Options::default();
/// options.splitting = false;
/// ```
///
/// Input is always validated (SSA, CFG shape, operand shapes): bad input gets a
/// `RegAllocError`, never a panic.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Options {
    /// The allocator. The other fields tune greedy, except the slot and move options
    /// (`slot_sharing`, `partner_slots`, the redundant-move passes, `phase_times`), which
    /// apply to every algorithm.
    pub algorithm: Algorithm,
    /// Queue a range bound for the spiller once more, after everything else, in case
    /// evictions freed a register for it. On by default: slightly better in every fuzz
    /// and Cranelift-shaped corpus we measure (about 0.1% lower weighted cost), at no
    /// measurable time.
    pub deferred_spilling: bool,
    /// Live-range splitting (local, region, block, instruction) before spilling. On by
    /// default: measured better than spilling whole values at 8 registers per class and
    /// in Cranelift-shaped code, slightly worse at 3-4.
    pub splitting: bool,
    /// Local splitting also weighs windows whose register is taken by lighter intervals
    /// (LLVM's gap weights): such a window is queued to evict them, where only free windows
    /// were split off before. It also tries registers past the first few in allocation
    /// order that no call clobbers over the interval, so that a value used all along a
    /// long block of calls can keep a callee-saved register.
    pub evicting_local_split: bool,
    /// Last-chance recoloring for an interval that would otherwise fail: reassign the
    /// intervals in its way, recursively, with every tentative move rolled back on failure.
    pub last_chance_recoloring: bool,
    /// Also try last-chance recoloring (one level deep) for an interval about to be
    /// spilled, not only for one that would fail. Off by default, as in LLVM, which
    /// recolors only what cannot be spilled: on the Sightglass Wasm functions it took
    /// about 7% of the allocation time and lowered the weighted cost by 0.03% (geomean;
    /// 0.1% summed), on generated functions at 4 registers per class by 0.1%.
    pub spill_recoloring: bool,
    /// Recursion depth of last-chance recoloring (LLVM's default: 5).
    pub recoloring_max_depth: u32,
    /// Interfering intervals a register may have and still be tried by last-chance
    /// recoloring (LLVM's default: 8).
    pub recoloring_max_interferers: usize,
    /// Charge the first use of an untouched callee-saved register (`callee_saved`) its
    /// save and restore, and split or spill instead when that is cheaper.
    pub csr_first_use_cost: bool,
    /// The registers the function must save and restore if it writes them (its calling
    /// convention's callee-saved registers), per class: what `csr_first_use_cost` charges
    /// for. `None`: every register of `MachineEnv::non_preferred_regs_by_class`, which is
    /// what Cranelift's aarch64 environment and the integer registers of its x64 one mean
    /// by them. Cranelift's x64 float non-preferred registers (xmm8-15) are caller-saved
    /// in the System V and `tail` conventions (non-preferred only for their longer
    /// encodings): an x64 embedder passes the integer non-preferred registers alone
    /// ([`Options::callee_saved_x64_sysv`]), so that a float value takes xmm8-15 instead of
    /// being spilled to spare a save that never happens.
    pub callee_saved: Option<[PRegSet; 3]>,
    /// LLVM's pre-split (`tryAssignCSRFirstTime`): an interval in its first round whose only
    /// free register is an untouched callee-saved one is region-split around the
    /// interference (calls, mostly) instead when that costs less than the save, restore
    /// and the moves the callee-saved register would cost at its fixed operands.
    /// Needs `csr_first_use_cost`.
    pub csr_pre_split: bool,
    /// After the main loop, move copy-connected groups to one register when that lowers the
    /// frequency-weighted copy cost.
    pub hint_recoloring: bool,
    /// With `hint_recoloring`: when a group's exchange with the occupants of its target
    /// register fails only because an occupant does not fit in the group's register, each
    /// occupant that does not moves aside to another register free for it, if the copies
    /// around them all still cost less. Wasm corpus: 59 functions cheaper, 4 dearer,
    /// geomean 0.7793 -> 0.7791, summed cost -0.074% (meshoptimizer #0 -0.26%), for
    /// +0.17% allocation instructions.
    pub exchange_aside: bool,
    /// Copy-connected values whose live ranges do not overlap form groups (as ion merges
    /// them into bundles); a value whose copy partners have no register yet is hinted
    /// the registers of its group's placed members, after its direct hints. On the Wasm
    /// corpus it lowers the cost geomean against ion 0.8361 -> 0.8292 and raises the
    /// summed cost 0.7% (one function) and greedy's allocation instructions 1.7%.
    pub group_hints: bool,
    /// A value live across blocks tries the preferred registers from the back of the
    /// environment's list, those fewest fixed-register operands name first; values
    /// inside one block keep the list's order. On the Wasm corpus it lowers the cost
    /// geomean against ion 0.8275 -> 0.8232 and the summed cost 0.7142 -> 0.6999.
    pub long_value_order: bool,
    /// With `group_hints`: the first member of a coalescing group to be dequeued places
    /// the whole group in one register free over all its members (`greedy::group_place`).
    pub group_placement: bool,
    /// With `group_hints`: a value live across blocks with no hint to take, whose first
    /// free register some unplaced member of its group could not live in, takes the
    /// first register free for it and for every such member instead, when there is one
    /// (not an untouched callee-saved one): the copies between them then need no move,
    /// at no price to the value (`greedy::assign`).
    pub group_free_choice: bool,
    /// After hint recoloring, a value none of whose operands needs a register moves from
    /// its register to the stack when its copy partners live there and that removes the
    /// loads and stores on its copies (its slot is merged with theirs).
    pub copy_spilling: bool,
    /// With `copy_spilling`: copy-only values still in registers, joined by their copies
    /// into chains, are labelled register or stack together by a minimum cut of the
    /// chain's copy costs (`greedy::copy_spill`), so that a chain whose ends meet spilled
    /// partners leaves the registers as a whole.
    pub copy_spill_chains: bool,
    /// After the main loop, a spilled piece takes a register left free over it when that
    /// removes more loads and stores than it adds moves (`greedy::unspill`), as ion
    /// tries each spill bundle in a register once more before it goes to the stack.
    pub unspilling: bool,
    /// After unspilling, a spilled piece that starts at its value's def keeps a free
    /// register from the def up to some of its first uses in the def's block
    /// (`greedy::head`): those uses need no reload, and the slot is written at the def
    /// anyway. Typically a value spilled across a call with a use before it, a fixed
    /// argument of that call among them.
    pub head_splits: bool,
    /// A value with an operand that must read or write its spill slot (`Stack`) is split
    /// when its interval is made, where that saves reloads: a piece in the slot around
    /// each such instruction, the rest allocated as any value (the slot is written at
    /// the def, so each slot piece the value outlives costs one reload). Off, or where
    /// the reloads at its register uses weigh less, the whole value is spilled up front
    /// and reloaded at every register use, inside hot loops too.
    pub stack_use_pieces: bool,
    /// With `copy_spilling` and `unspilling`: copy spilling runs first, and unspilling
    /// also probes, for each spilled piece with reload pieces, the registers that values
    /// moved to the stack by copy spilling left where the piece lives.
    pub unspill_copy_freed: bool,
    /// A store to the same slot from the same register at the start of every successor
    /// of a branch (each entered only from it) is made once, before the branch
    /// (`edits::hoist`).
    pub hoist_common_stores: bool,
    /// A reload (slot to register) or register move made the same at the start of every
    /// successor of a branch (each entered only from it) is made once, before the branch
    /// (`edits::hoist`): a value spilled around a call and read on both sides of a
    /// branch after it, or needed in the same other register on both sides.
    pub hoist_common_moves: bool,
    /// A move made the same before the jump of every predecessor of a join (each
    /// jumping only to it) is made once, at the join's start (`edits::sink`): the edge
    /// moves of a parameter whose arguments all sit in one place, or a value reloaded on
    /// every side of a diamond.
    pub sink_common_moves: bool,
    /// A move in a block ending in a branch, whose destination only some successors
    /// read, is made at the start of those successors instead (`edits::partial_dead`),
    /// so the paths that never read it do not run it: a parameter copied into a
    /// callee-saved register at the entry, needed only past an early return. A move no
    /// successor reads is dropped.
    pub sink_partially_dead_moves: bool,
    /// Among the moves at one program point, a load from a slot that an earlier move
    /// there stored from a register reads that register instead (`edits::forward`): the
    /// edit passes above can leave a store sunk into a join right before the join's own
    /// reload of the slot.
    pub forward_stores: bool,
    /// A use fixed to a fixed stack slot, whose value is in a stack location there, has
    /// the slot written from the register the value sat in earlier (`edits::fixed_slots`):
    /// once right after the def when only the value's uses name the slot in the whole
    /// function, else in the use's block or its only predecessor if nothing touches the
    /// slot in between. A store instead of a slot-to-slot move through a borrowed
    /// register.
    pub early_fixed_slot_writes: bool,
    /// A spilled value whose def is fixed to a fixed stack slot that nothing else in the
    /// function names keeps that slot as its stack home (`slots::fixed_homes`): no copy
    /// into a spill slot of its own (a slot-to-slot move through a borrowed register),
    /// and its reloads read the fixed slot.
    pub fixed_slot_homes: bool,
    /// Where the successors of a branch, each entered only from it, start by reusing the
    /// same input, their reuse defs are copy partners (of the branch's frequency): in one
    /// register, the copies into them are one move before the branch
    /// (`hoist_common_moves`), which hints and hint recoloring now aim for.
    pub sibling_reuse_copies: bool,
    /// A region split whose register keeps some block only in part (up to interference
    /// after its operands, or from interference before them) makes one register piece
    /// per island the labelling connects: an island entered from the stack picks its own
    /// register by its hints (the register a fixed operand in it names saves a move)
    /// instead of the candidate the split was weighed for.
    pub region_islands: bool,
    /// A split product its split found free in a register (a region split's register
    /// part, a local split's free window) is queued with that register as a hint (LLVM's
    /// products are queued, tied to the register by the split's copies) instead of
    /// assigned to it at once: intervals already queued with a higher priority keep their
    /// turn, and a fixed operand or copy partner of the product can outweigh it.
    pub queue_split_parts: bool,
    /// A hint naming a register outside the allocation order (a fixed operand of the
    /// value, or of a copy partner, names a non-allocatable register) is taken like any
    /// other hint when that register is free, as ion places a bundle with such a fixed
    /// use there: the value then needs no allocatable register where it is live. A
    /// coalescing group placed at once (`group_placement`) may take such a register too,
    /// where it may hold every member.
    pub outside_hints: bool,
    /// With `outside_hints`: a hinted fixed stack slot too (a fixed operand of the value
    /// or of a partner names it), for an interval none of whose operands needs a
    /// register: the value then lives in that stack location, as ion places such a
    /// bundle, and its fixed operand there needs no store or load. The move resolver
    /// treats the slot as the stack (a move to another stack location goes through a
    /// free register).
    pub outside_stack_hints: bool,
    /// With `outside_stack_hints`: an interval that starts where its value's spill slot
    /// leaves off (so entering the fixed stack slot is a slot-to-slot move, through a
    /// register the move resolver borrows) takes the slot only if that entry is no more
    /// frequent than the hint's operands and copies: in the spill slot it would enter for
    /// free and pay a move at those instead.
    pub fixed_slot_entry_cost: bool,
    /// A piece with operands, none of which needs a register, and no copy (spill weight
    /// zero, with `any_uses_weightless`) waits until every other queued piece is placed,
    /// then takes a free register already in use, or its slot: a register saves it
    /// nothing, taken early it can be the one a value needing it asks for next, and an
    /// untouched callee-saved register would cost a save and restore for nothing.
    pub weightless_to_stack: bool,
    /// Operands that accept the stack (`Any`, `Stack`) add nothing to an interval's spill
    /// weight: spilled, the value serves them from its slot at no cost.
    pub any_uses_weightless: bool,
    /// With `outside_hints`: hint recoloring may also move a group to a register outside
    /// the order (a copy partner's, or one a fixed operand names) under the same rules.
    pub outside_recoloring: bool,
    /// Spilled values whose lifetimes do not overlap share a slot.
    pub slot_sharing: bool,
    /// A spilled value prefers the slot of a spilled copy partner, so the copy disappears.
    pub partner_slots: bool,
    /// Drop moves whose destination already holds the value (inside blocks).
    pub redundant_moves: bool,
    /// Also across block boundaries, where SSA makes the knowledge safe to carry.
    pub cross_block_redundant_moves: bool,
    /// With `redundant_moves`: a move from the stack whose value a register already
    /// holds (an earlier reload of the same slot, a use, a def) copies that register
    /// instead, e.g. a spilled value passed in two fixed registers is loaded once.
    pub reload_from_copies: bool,
    /// A spilled parameter of a block with several predecessors is received in a free
    /// register and stored once at the block's start, instead of stored on every
    /// incoming edge, where that is cheaper by block frequency.
    pub join_stores: bool,
    /// A copy on an edge block that Cranelift lays out right after the branch it leaves
    /// (blocks are emitted in index order; one holding a move is not elided) weighs the
    /// frequency of the branch's other successors as well: a move there puts the edge
    /// block in the branch's fallthrough and turns the way into those successors, often
    /// a hot loop's, into a taken branch. Hints and hint recoloring then keep that
    /// block empty where it costs them less (`Partners::compute`).
    pub fallthrough_copies: bool,
    /// Record the wall time of each allocation phase in `Stats::phases`. Off by default:
    /// a clock read costs tens of nanoseconds, which adds up to a few percent on small
    /// functions with many eviction and split attempts.
    pub phase_times: bool,
    /// Test-only: deliberately breaks one allocation rule (a spilled value's defs are no
    /// longer stored to its slot: the store pieces after its defs are dropped), so that
    /// tests can check that a wrong allocation is caught and shrunk. Never set it otherwise.
    #[doc(hidden)]
    pub debug_break_rule: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            algorithm: Algorithm::Greedy,
            deferred_spilling: true,
            splitting: true,
            evicting_local_split: true,
            last_chance_recoloring: true,
            spill_recoloring: false,
            recoloring_max_depth: 5,
            recoloring_max_interferers: 8,
            csr_first_use_cost: true,
            callee_saved: None,
            csr_pre_split: true,
            hint_recoloring: true,
            exchange_aside: true,
            group_hints: true,
            long_value_order: true,
            group_placement: true,
            group_free_choice: true,
            copy_spilling: true,
            copy_spill_chains: true,
            unspilling: true,
            head_splits: true,
            stack_use_pieces: true,
            unspill_copy_freed: true,
            hoist_common_stores: true,
            hoist_common_moves: true,
            sink_common_moves: true,
            forward_stores: true,
            early_fixed_slot_writes: true,
            fixed_slot_homes: true,
            sink_partially_dead_moves: true,
            sibling_reuse_copies: true,
            region_islands: true,
            queue_split_parts: true,
            outside_hints: true,
            outside_stack_hints: true,
            fixed_slot_entry_cost: true,
            weightless_to_stack: true,
            any_uses_weightless: true,
            outside_recoloring: true,
            slot_sharing: true,
            partner_slots: true,
            redundant_moves: true,
            cross_block_redundant_moves: true,
            reload_from_copies: true,
            join_stores: true,
            fallthrough_copies: true,
            phase_times: false,
            debug_break_rule: false,
        }
    }
}

impl Options {
    /// The callee-saved registers of Cranelift's x64 environment under the System V and
    /// `tail` calling conventions (Linux, macOS; Wasmtime's Wasm functions): its integer
    /// non-preferred registers (rbx, r12-r15); no float register is callee-saved there.
    pub fn callee_saved_x64_sysv(env: &MachineEnv) -> [PRegSet; 3] {
        [
            env.non_preferred_regs_by_class[RegClass::Int as usize],
            PRegSet::empty(),
            PRegSet::empty(),
        ]
    }
}

/// What the allocator did on the last function (or, summed with `+=`, on several). Read it
/// from [`Context::stats`]; `Stats::default()` is the zero to sum from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Live intervals created: one per vreg at first, plus split pieces and reload pieces.
    pub intervals: usize,
    /// Register assignments, counting an interval again each time it is reassigned (after an
    /// eviction or by last-chance recoloring).
    pub assignments: usize,
    /// Intervals evicted from their register, by eviction or by last-chance recoloring.
    pub evictions: usize,
    /// Local splits: an interval inside one block keeps a register over a window of its uses.
    pub local_splits: usize,
    /// Of `local_splits`: windows queued to evict lighter occupants of their register
    /// (`Options::evicting_local_split`).
    pub evicting_local_splits: usize,
    /// Region splits: an interval across blocks keeps a register in some of its blocks, on
    /// the stack in the others.
    pub region_splits: usize,
    /// Of `region_splits`: compact regions (the value's own register in its use blocks,
    /// chosen over every candidate register).
    pub compact_region_splits: usize,
    /// Register islands of region splits queued to choose their own register: a split
    /// whose register keeps some block in part can leave register pieces that reach
    /// each other only through the stack (`Options::region_islands`).
    pub region_islands: usize,
    /// Block splits: a local piece per block with at least two use instructions, the rest
    /// spilled.
    pub block_splits: usize,
    /// Pieces of block splits that keep all the value's blocks of one loop (the value
    /// also lives outside it) instead of one piece per block.
    pub loop_split_pieces: usize,
    /// Instruction splits: an interval in one block whose uses are pinned to fixed
    /// registers, split around them.
    pub instruction_splits: usize,
    /// Spilled values whose head (from the def to some first uses) kept a register
    /// (`Options::head_splits`).
    pub head_splits: usize,
    /// Values with a `Stack` operand split around it when made, not spilled whole
    /// (`Options::stack_use_pieces`).
    pub stack_use_pieces: usize,
    /// Intervals spilled (sent to a spill slot, with reload pieces at their uses).
    pub spills: usize,
    /// Intervals bound for the spiller that were queued once more at the end instead.
    pub deferred_spills: usize,
    /// Intervals allocated by last-chance recoloring.
    pub last_chance_recolorings: usize,
    /// Intervals moved to another register by last-chance recoloring.
    pub recolored_intervals: usize,
    /// Unspillable intervals no allocatable register could hold, placed in a register
    /// outside the allocatable set that a fixed-register operand of their value names.
    pub fixed_register_fallbacks: usize,
    /// Intervals that took a hinted register outside the allocation order
    /// (`Options::outside_hints`).
    pub outside_hints: usize,
    /// Of `outside_hints`: fixed stack slots (`Options::outside_stack_hints`).
    pub outside_stack_hints: usize,
    /// Hinted fixed stack slots not taken because entering them from the value's spill
    /// slot costs more than they save (`Options::fixed_slot_entry_cost`).
    pub fixed_slots_declined: usize,
    /// Weightless pieces that found no free register already in use at the end of the
    /// queue and went to their slot (`Options::weightless_to_stack`).
    pub weightless_spills: usize,
    /// Untouched callee-saved registers taken, having paid their first-use cost.
    pub csr_first_uses: usize,
    /// Intervals that split or spilled rather than open an untouched callee-saved register.
    pub csr_declined: usize,
    /// Of `region_splits`: pre-splits made instead of a first use of a callee-saved register.
    pub csr_pre_splits: usize,
    /// Copy-connected groups that hint recoloring moved to one register.
    pub hint_recolorings: usize,
    /// Of `hint_recolorings`: groups exchanged with the occupants of their target register.
    pub hint_exchanges: usize,
    /// Of `hint_exchanges`: those in which some occupant moved aside to a third register
    /// (`Options::exchange_aside`).
    pub aside_exchanges: usize,
    /// Copies whose two values joined one coalescing group (`Options::group_hints`).
    pub group_unions: usize,
    /// Values live across blocks assigned a register in `Options::long_value_order`.
    pub long_order_assignments: usize,
    /// Coalescing groups placed in one register at once (`Options::group_placement`).
    pub group_placements: usize,
    /// Registers chosen free for unplaced group members too (`Options::group_free_choice`).
    pub group_free_choices: usize,
    /// Values with no operand needing a register moved to the stack after the main loop,
    /// beside their spilled copy partners (`Options::copy_spilling`).
    pub copy_spills: usize,
    /// Of `copy_spills`: values moved with their chain (`Options::copy_spill_chains`).
    pub chain_copy_spills: usize,
    /// Spilled pieces moved back into a register after the main loop
    /// (`Options::unspilling`).
    pub unspilled: usize,
    /// Stores removed from a branch's successors by one store before the branch
    /// (`Options::hoist_common_stores`).
    pub hoisted_stores: usize,
    /// Reloads and register moves removed from a branch's successors by one such move
    /// before the branch (`Options::hoist_common_moves`).
    pub hoisted_moves: usize,
    /// Moves removed from a join's predecessors by one move at its start
    /// (`Options::sink_common_moves`).
    pub sunk_moves: usize,
    /// Moves taken out of a branching block because only some successors read them
    /// (`Options::sink_partially_dead_moves`), dropped ones included.
    pub partially_dead_moves: usize,
    /// Of those, moves no successor read, dropped.
    pub dead_moves_dropped: usize,
    /// Loads that read the register a store at the same point had just written to their
    /// slot, or were dropped as that register was their destination
    /// (`Options::forward_stores`).
    pub forwarded_stores: usize,
    /// Fixed stack slots written from a register before their use instead of from the
    /// value's slot at it (`Options::early_fixed_slot_writes`).
    pub early_fixed_slot_writes: usize,
    /// Of those, the writes made once right after the value's def, serving every use of
    /// the slot.
    pub fixed_slot_writes_at_def: usize,
    /// Spilled values given their def's fixed stack slot as their stack home
    /// (`Options::fixed_slot_homes`).
    pub fixed_slot_homes: usize,
    /// Register-to-register and stack-to-stack moves in the output.
    pub moves_inserted: usize,
    /// Register-to-stack moves in the output.
    pub spill_stores: usize,
    /// Stack-to-register moves in the output.
    pub reloads: usize,
    /// The output's `num_spillslots`.
    pub spill_slots: usize,
    /// Moves dropped because their destination already held the value.
    pub redundant_moves_removed: usize,
    /// Spilled values laid out in shared spill slots (`spill_slots` counts the units).
    pub shared_slot_values: usize,
    /// Spilled values that took a copy partner's slot.
    pub partner_slot_values: usize,
    /// Of `redundant_moves_removed`: those whose knowledge came across a block boundary.
    pub cross_block_redundant_moves_removed: usize,
    /// Moves from the stack turned into copies of a register holding the same value
    /// (`Options::reload_from_copies`).
    pub reloads_from_copies: usize,
    /// Spilled merge-block parameters received in a register and stored once at the
    /// block's start instead of on every incoming edge (`Options::join_stores`).
    pub join_stores: usize,
    /// Branch-argument copies weighed up for the fallthrough their move would break
    /// (`Options::fallthrough_copies`).
    pub fallthrough_copies: usize,
    /// Copies whose two ends iterated register coalescing merged into one node (counted
    /// again in each colouring round).
    pub coalesced_copies: usize,
    /// Colouring rounds of iterated register coalescing (one, plus one per round that
    /// spilled).
    pub colouring_rounds: usize,
    /// Wall time per phase of the allocation (zero unless `Options::phase_times`).
    pub phases: PhaseTimes,
}

/// The phases of one allocation, as [`PhaseTimes`] records them. They do not overlap:
/// the main loop's time is `Assignment` minus what the phases it calls (eviction, the
/// splits, last-chance recoloring) took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// CFG, loops, liveness, live intervals.
    Analyses,
    /// Pressure, copy partners, intervals and their weights, the initial queue.
    Setup,
    /// The main loop: dequeue, assign, wait for a second round, spill.
    Assignment,
    /// Choosing and evicting lighter intervals to free a register.
    Eviction,
    /// Local splitting (an interval inside one block).
    LocalSplit,
    /// Region splitting (register or stack per block of the interval).
    RegionSplit,
    /// Block splitting (a local piece per block with uses).
    BlockSplit,
    /// Instruction splitting (around uses pinned to fixed registers).
    InstructionSplit,
    /// Last-chance recoloring.
    Recoloring,
    /// Moving copy-connected groups to one register after the main loop (and, just
    /// before, moving copy-only values to the stack, spilled pieces back into registers
    /// and spilled values' heads into registers: `Options::copy_spilling`, `unspilling`
    /// and `head_splits`).
    HintRecoloring,
    /// Laying out spill slots, shared among values whose lifetimes do not overlap.
    SlotSharing,
    /// Operand allocations, moves, parallel-move resolution, debug locations.
    Edits,
    /// Dropping moves whose destination already holds the value.
    RedundantMoves,
}

impl Phase {
    /// How many phases there are.
    pub const COUNT: usize = 13;
    /// Every phase, in pipeline order (the index of a phase is its `as usize`).
    pub const ALL: [Phase; Phase::COUNT] = [
        Phase::Analyses,
        Phase::Setup,
        Phase::Assignment,
        Phase::Eviction,
        Phase::LocalSplit,
        Phase::RegionSplit,
        Phase::BlockSplit,
        Phase::InstructionSplit,
        Phase::Recoloring,
        Phase::HintRecoloring,
        Phase::SlotSharing,
        Phase::Edits,
        Phase::RedundantMoves,
    ];

    /// The phase's name as tables print it.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Analyses => "analyses",
            Phase::Setup => "setup",
            Phase::Assignment => "assignment",
            Phase::Eviction => "eviction",
            Phase::LocalSplit => "local split",
            Phase::RegionSplit => "region split",
            Phase::BlockSplit => "block split",
            Phase::InstructionSplit => "instruction split",
            Phase::Recoloring => "recoloring",
            Phase::HintRecoloring => "hint recoloring",
            Phase::SlotSharing => "slot sharing",
            Phase::Edits => "edits",
            Phase::RedundantMoves => "redundant moves",
        }
    }

    /// Phases the main loop calls (timed inside `Assignment`'s span).
    const IN_MAIN_LOOP: [Phase; 6] = [
        Phase::Eviction,
        Phase::LocalSplit,
        Phase::RegionSplit,
        Phase::BlockSplit,
        Phase::InstructionSplit,
        Phase::Recoloring,
    ];
}

/// Wall time per [`Phase`], in nanoseconds, recorded when `Options::phase_times` is on
/// (an `Instant` read around each phase, at most a few per interval).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    ns: [u64; Phase::COUNT],
}

impl PhaseTimes {
    /// Times given per phase in nanoseconds (e.g. medians over several runs).
    pub fn from_fn(mut f: impl FnMut(Phase) -> u64) -> Self {
        PhaseTimes {
            ns: Phase::ALL.map(&mut f),
        }
    }

    /// The time recorded for phase `p`.
    pub fn get(&self, p: Phase) -> Duration {
        Duration::from_nanos(self.ns[p as usize])
    }

    /// The time recorded for phase `p`, in nanoseconds.
    pub fn nanos(&self, p: Phase) -> u64 {
        self.ns[p as usize]
    }

    /// The sum over all phases.
    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.ns.iter().sum())
    }

    pub(crate) fn add(&mut self, p: Phase, d: Duration) {
        self.ns[p as usize] += d.as_nanos() as u64;
    }

    /// Time in the phases the main loop calls.
    pub(crate) fn in_main_loop(&self) -> Duration {
        Duration::from_nanos(Phase::IN_MAIN_LOOP.iter().map(|&p| self.nanos(p)).sum())
    }

    /// Time since `t` (from [`phase_clock`]), counted in phase `p`.
    pub(crate) fn since(&mut self, p: Phase, t: Option<Instant>) {
        if let Some(t) = t {
            self.add(p, t.elapsed());
        }
    }
}

/// The time now if phases are timed, else `None` (and no clock read).
pub(crate) fn phase_clock(options: &Options) -> Option<Instant> {
    options.phase_times.then(Instant::now)
}

impl std::ops::AddAssign for PhaseTimes {
    fn add_assign(&mut self, o: PhaseTimes) {
        for (a, b) in self.ns.iter_mut().zip(o.ns) {
            *a += b;
        }
    }
}

impl std::ops::AddAssign for Stats {
    fn add_assign(&mut self, o: Stats) {
        let Stats {
            intervals,
            assignments,
            evictions,
            local_splits,
            evicting_local_splits,
            region_splits,
            compact_region_splits,
            region_islands,
            block_splits,
            loop_split_pieces,
            instruction_splits,
            head_splits,
            stack_use_pieces,
            spills,
            deferred_spills,
            last_chance_recolorings,
            recolored_intervals,
            fixed_register_fallbacks,
            outside_hints,
            outside_stack_hints,
            fixed_slots_declined,
            weightless_spills,
            csr_first_uses,
            csr_declined,
            csr_pre_splits,
            hint_recolorings,
            hint_exchanges,
            aside_exchanges,
            group_unions,
            long_order_assignments,
            group_placements,
            group_free_choices,
            copy_spills,
            chain_copy_spills,
            unspilled,
            hoisted_stores,
            hoisted_moves,
            sunk_moves,
            partially_dead_moves,
            dead_moves_dropped,
            forwarded_stores,
            early_fixed_slot_writes,
            fixed_slot_writes_at_def,
            fixed_slot_homes,
            moves_inserted,
            spill_stores,
            reloads,
            spill_slots,
            redundant_moves_removed,
            shared_slot_values,
            partner_slot_values,
            cross_block_redundant_moves_removed,
            reloads_from_copies,
            join_stores,
            fallthrough_copies,
            coalesced_copies,
            colouring_rounds,
            phases,
        } = o;
        self.intervals += intervals;
        self.assignments += assignments;
        self.evictions += evictions;
        self.local_splits += local_splits;
        self.evicting_local_splits += evicting_local_splits;
        self.region_splits += region_splits;
        self.compact_region_splits += compact_region_splits;
        self.region_islands += region_islands;
        self.block_splits += block_splits;
        self.loop_split_pieces += loop_split_pieces;
        self.instruction_splits += instruction_splits;
        self.head_splits += head_splits;
        self.stack_use_pieces += stack_use_pieces;
        self.spills += spills;
        self.deferred_spills += deferred_spills;
        self.last_chance_recolorings += last_chance_recolorings;
        self.recolored_intervals += recolored_intervals;
        self.fixed_register_fallbacks += fixed_register_fallbacks;
        self.outside_hints += outside_hints;
        self.outside_stack_hints += outside_stack_hints;
        self.fixed_slots_declined += fixed_slots_declined;
        self.weightless_spills += weightless_spills;
        self.csr_first_uses += csr_first_uses;
        self.csr_declined += csr_declined;
        self.csr_pre_splits += csr_pre_splits;
        self.hint_recolorings += hint_recolorings;
        self.hint_exchanges += hint_exchanges;
        self.aside_exchanges += aside_exchanges;
        self.group_unions += group_unions;
        self.long_order_assignments += long_order_assignments;
        self.group_placements += group_placements;
        self.group_free_choices += group_free_choices;
        self.copy_spills += copy_spills;
        self.chain_copy_spills += chain_copy_spills;
        self.unspilled += unspilled;
        self.hoisted_stores += hoisted_stores;
        self.hoisted_moves += hoisted_moves;
        self.sunk_moves += sunk_moves;
        self.partially_dead_moves += partially_dead_moves;
        self.dead_moves_dropped += dead_moves_dropped;
        self.forwarded_stores += forwarded_stores;
        self.early_fixed_slot_writes += early_fixed_slot_writes;
        self.fixed_slot_writes_at_def += fixed_slot_writes_at_def;
        self.fixed_slot_homes += fixed_slot_homes;
        self.moves_inserted += moves_inserted;
        self.spill_stores += spill_stores;
        self.reloads += reloads;
        self.spill_slots += spill_slots;
        self.redundant_moves_removed += redundant_moves_removed;
        self.shared_slot_values += shared_slot_values;
        self.partner_slot_values += partner_slot_values;
        self.cross_block_redundant_moves_removed += cross_block_redundant_moves_removed;
        self.reloads_from_copies += reloads_from_copies;
        self.join_stores += join_stores;
        self.fallthrough_copies += fallthrough_copies;
        self.coalesced_copies += coalesced_copies;
        self.colouring_rounds += colouring_rounds;
        self.phases += phases;
    }
}

/// Reusable allocator state: keeps its buffers across functions, one per thread, the way
/// Cranelift reuses regalloc2's `Ctx`.
#[derive(Default)]
pub struct Context {
    stats: Stats,
    analyses: analysis::Analyses,
    greedy: greedy::GreedyCtx,
    basic: basic::BasicCtx,
    linear_scan: linear_scan::LinearScanCtx,
    irc: irc::IrcCtx,
    assignment: assignment::Assignment,
    edits: edits::EditsCtx,
}

impl Context {
    /// An empty context; its buffers grow to the largest function it allocates.
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
    let mut out = Output::default();
    run_inner(func, env, options, ctx, None, &mut out)?;
    Ok(out)
}

/// Allocate registers for `func` into `out`, reusing the buffers in `ctx` and `out`'s own
/// vectors (cleared first), as regalloc2's `run_with_ctx` reuses the `Output` inside its
/// `Ctx`: a client that keeps one `Output` per thread allocates no output memory once it
/// has seen its largest function. On `Err`, `out` holds no meaningful allocation.
pub fn run_with_context_into<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    options: &Options,
    ctx: &mut Context,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    run_inner(func, env, options, ctx, None, out)
}

/// Allocate registers for `func` like [`run_with_context`], reporting every decision of
/// the allocator to `observer` as it is made. The output is the same as without one.
pub fn run_observed<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    options: &Options,
    ctx: &mut Context,
    observer: &mut dyn Observer,
) -> Result<Output, RegAllocError> {
    let mut out = Output::default();
    run_inner(func, env, options, ctx, Some(observer), &mut out)?;
    Ok(out)
}

fn run_inner<F: Function + ?Sized>(
    func: &F,
    env: &MachineEnv,
    options: &Options,
    ctx: &mut Context,
    observer: Option<&mut dyn Observer>,
    out: &mut Output,
) -> Result<(), RegAllocError> {
    ctx.stats = Stats::default();
    out.stats = Default::default();
    let t = phase_clock(options);
    ctx.analyses.compute(func)?;
    ctx.stats.phases.since(Phase::Analyses, t);
    ctx.assignment
        .reset(func, env, ctx.analyses.live.vreg_span());
    match options.algorithm {
        Algorithm::Greedy => greedy::Allocator {
            func,
            env,
            options,
            an: &ctx.analyses,
            ctx: &mut ctx.greedy,
            out: &mut ctx.assignment,
            stats: &mut ctx.stats,
            priority: greedy::advisor::DefaultPriority,
            eviction: greedy::advisor::DefaultEviction,
            observer: observer.map(|o| o as &mut dyn Observer),
        }
        .run()?,
        Algorithm::Basic => basic::Basic {
            func,
            options,
            an: &ctx.analyses,
            ctx: &mut ctx.basic,
            out: &mut ctx.assignment,
            stats: &mut ctx.stats,
        }
        .run()?,
        Algorithm::LinearScan => linear_scan::LinearScan {
            func,
            options,
            an: &ctx.analyses,
            ctx: &mut ctx.linear_scan,
            out: &mut ctx.assignment,
            stats: &mut ctx.stats,
        }
        .run()?,
        Algorithm::Irc => irc::Irc {
            func,
            options,
            an: &ctx.analyses,
            ctx: &mut ctx.irc,
            out: &mut ctx.assignment,
            stats: &mut ctx.stats,
        }
        .run()?,
    }
    let t = phase_clock(options);
    edits::OutputBuilder {
        func,
        env,
        options,
        an: &ctx.analyses,
        a: &mut ctx.assignment,
        ctx: &mut ctx.edits,
        stats: &mut ctx.stats,
    }
    .build(out)?;
    if let Some(t) = t {
        // The redundant-move pass runs inside the builder and is timed on its own.
        let edits = t
            .elapsed()
            .saturating_sub(ctx.stats.phases.get(Phase::RedundantMoves));
        ctx.stats.phases.add(Phase::Edits, edits);
    }
    Ok(())
}
