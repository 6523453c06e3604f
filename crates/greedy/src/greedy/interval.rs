//! The allocator's unit of work: a `LiveInterval` is a piece of one vreg's live range
//! (all of it at first; split products and spill reload/store pieces later) together
//! with its stage, cascade number, spill weight and assignment.

use crate::analysis::intervals::{Segment, UseSite};
use cranelift_entity::entity_impl;
use regalloc2::{PReg, PRegSet, VReg};
use smallvec::SmallVec;

/// An interval's segments (or runs), stored inline up to four. Past the inline size a
/// list is a heap allocation, freed when the next function clears the intervals: with
/// two (segments and operands), 54k allocations and 67k frees per pass over the Wasm
/// corpus; four for both cut 0.4% of the allocator's instructions (callgrind, cold and
/// warm) and its time per function about 1% (`compare`, three runs each), three for both
/// 0.35%.
pub(crate) type SegmentList = SmallVec<[Segment; 4]>;
/// An interval's operands, stored inline up to four (a temporary's def and use, and a
/// few more; see `SegmentList`).
pub(crate) type UseList = SmallVec<[UseSite; 4]>;

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct IntervalId(u32);
entity_impl!(IntervalId, "iv");

/// LLVM's stage machine. An interval only moves forward through it, which is what makes
/// the main loop terminate: each stage either assigns, or hands the interval (or its
/// products) to a later stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Stage {
    /// Never queued.
    New,
    /// Try assignment and eviction only; on failure, requeue in `Split`.
    Assign,
    /// Try splitting; queued after every non-`Split` interval.
    Split,
    /// Split products that must make progress when split again.
    Split2,
    /// Will be spilled; no more splitting.
    Spill,
    /// Nothing more can be done: must be assigned (unspillable) or it is an error.
    Done,
}

/// What part of its vreg an interval stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IntervalKind {
    /// A piece of the value's home: where the value lives over its segments.
    Main,
    /// A register copy of a spilled value around one instruction: loaded before it (for
    /// uses) or stored after it (for defs). Unspillable.
    Reload { is_def: bool },
}

/// Cascade number 0 means "never evicted anything and never evicted".
pub(crate) type Cascade = u32;

/// Spill weight: use density weighted by block frequency. `f32::INFINITY` marks an
/// unspillable interval.
pub(crate) type SpillWeight = f32;

pub(crate) struct LiveInterval {
    pub vreg: VReg,
    pub kind: IntervalKind,
    pub segments: SegmentList,
    /// `segments` with touching neighbours joined, computed once: what the interference
    /// matrix stores and what register probes walk. A value live through consecutive
    /// blocks has a segment per block but one run, so a probe costs the runs, not the
    /// blocks.
    pub runs: SegmentList,
    /// The registers a fixed reservation of another value (or a clobber) blocks
    /// somewhere over `runs`: fixed for the interval's life, so computed once.
    pub fixed_conflicts: PRegSet,
    /// Operands of `vreg` inside the segments (for reload pieces: the operands they serve).
    pub uses: UseList,
    pub stage: Stage,
    pub cascade: Cascade,
    pub weight: SpillWeight,
    pub assigned: Option<PReg>,
    /// The register its split found free for this piece (a region split's candidate, a
    /// local split's window register): a hint, as the split's copies are in LLVM, not an
    /// assignment.
    pub split_hint: Option<PReg>,
    /// Only registers with `hw_enc < limit` may hold it (from `Limit` constraints).
    pub limit: usize,
    /// Bound for the spiller once already and requeued (deferred spilling).
    pub deferred: bool,
    /// Lives in its vreg's spill slot (a main interval the spiller took).
    pub spilled: bool,
}

impl LiveInterval {
    pub fn is_spillable(&self) -> bool {
        self.weight.is_finite()
    }

    /// A piece of the value's home that lives in its spill slot (not retired).
    /// Retires a piece that another took over (a reload piece inside a piece that took
    /// a register): no segments, no operands, no register. The caller takes it out of
    /// the matrix and its value's piece list.
    pub fn retire(&mut self) {
        self.assigned = None;
        self.segments.clear();
        self.runs.clear();
        self.uses.clear();
    }

    pub fn in_slot(&self) -> bool {
        self.kind == IntervalKind::Main && self.spilled && !self.runs.is_empty()
    }

    /// Number of program points covered.
    pub fn size(&self) -> u32 {
        self.segments.iter().map(Segment::len).sum()
    }
}
