//! Redundant-move elimination: replay each block's instructions and moves while tracking
//! which vreg each location is known to hold, and drop a move whose destination already
//! holds the value it would copy (a second reload of a spilled value into the same
//! register, a store of a value the slot already holds), or whose source is its
//! destination. Knowledge comes from defs, uses and moves, and is lost at clobbers and at
//! writes by instructions.
//!
//! A move from the stack that is kept reads a register instead when one holds the same
//! value (`Options::reload_from_copies`): a value loaded before a call that takes it in
//! two fixed registers is loaded once and copied, and a value reloaded into a second
//! register while the first still holds it is copied. A location with no known fact
//! gets a name for "what it holds" when a move reads it, shared by the move's
//! destination, and a use that reads a location with that name says which vreg it is.
//! (A register too: a value received at a merge block, where the predecessors agree on
//! no fact, is stored and later loaded back while the register still holds it.)
//!
//! Across blocks (`Options::cross_block_redundant_moves`), blocks are replayed in reverse
//! postorder and a block starts from the facts that hold at the end of *every*
//! predecessor (the intersection), restricted to its live-in values and, with a single
//! predecessor, the arguments of that edge (its edge moves run at the block's start). A
//! block reached by a retreating edge (a loop header) starts from an assumption: first
//! the facts of its forward predecessors, then, after each replay of the function,
//! intersected with what its predecessors really ended with, until nothing shrinks (a
//! fixed point: every block's facts hold at the end of all its predecessors). After
//! `MAX_PASSES` replays without one, loop headers start empty, which needs no check.
//! Blocks that can decide nothing are not replayed when there are many: an edit-free
//! block, not a loop header, whose successors are all such blocks (return paths).
//!
//! Why this is sound: a block only starts with facts about values live into it (or
//! passed to it), which it does not define; inside the block a value's facts appear only
//! at or after its def. So a def never leaves a stale fact about an older instance of its
//! vreg (a previous loop iteration), and only writes, all replayed (instruction defs,
//! clobbers, edge moves at the end of the predecessor or the start of the block), can
//! break a fact. Dropping a move never changes the facts (its destination held the value
//! already), so the replay that decides the drops is the one that checked the fixed
//! point. It is also a subset of what regalloc2's checker concludes: it meets
//! predecessor states by intersection, starting from "anything" at unvisited blocks, and
//! its block-parameter moves only add labels to the argument's locations.

use crate::analysis::Analyses;
use crate::analysis::intervals::fixed_nonallocatable;
use regalloc2::{
    Allocation, AllocationKind, Block, Edit, Function, Inst, OperandKind, Output, PReg, PRegSet,
    ProgPoint,
};

/// What a location is known to hold: the vreg index and whether the fact came across a
/// block boundary (for `Stats::cross_block_redundant_moves_removed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fact {
    vreg: u32,
    inherited: bool,
}

/// Moves removed: all of them, and those that needed a fact from another block.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Removed {
    pub total: usize,
    pub cross_block: usize,
    /// Moves kept but made to read a register already holding their value instead of
    /// a stack location.
    pub from_copies: usize,
}

/// No vreg (an unknown not resolved yet).
const NO_VREG: u32 = u32::MAX;

/// Replays of the function allowed to settle loop headers' facts.
const MAX_PASSES: usize = 4;

/// A location as a dense index: registers by `PReg` index, then the empty allocation,
/// then stack slots by slot index (both bounded by the function's own numbering).
/// The kind is decoded once (`as_reg` and `as_stack` would each decode it again).
#[inline]
fn loc(a: Allocation) -> u32 {
    let i = a.index() as u32;
    match a.kind() {
        AllocationKind::Reg => i,
        AllocationKind::None => PReg::NUM_INDEX as u32,
        AllocationKind::Stack => PReg::NUM_INDEX as u32 + 1 + i,
    }
}

/// The facts of the block being replayed, by location: those it started with (`entry`,
/// sorted by location, never copied into the table), overridden by the writes of the
/// block so far (a dense table stamped with the block's generation, so starting a block
/// costs nothing, and the locations written in this generation). A hash map here cost a
/// hash per operand and move; inserting every entry fact into the table cost more than
/// the block's own writes, which are fewer, and the lookups that reach `entry` (a move's
/// source and destination) fewer still.
#[derive(Default)]
struct Holds {
    entry: Vec<(u32, u32)>,
    table: Vec<(u32, Option<Fact>)>,
    written: Vec<u32>,
    generation: u32,
    /// Facts at or above this id (the function's vreg count) name "what some location
    /// held when a move read it without a known fact": the move's source and destination
    /// then hold the same unknown value. Such a name lives in one replay of one block
    /// (never in an end state), until a use reads a location holding it and so tells
    /// which vreg it is (`read_as`).
    unknown_base: u32,
    /// Per unknown of the block being replayed: the vreg it turned out to be, if known.
    unknown_value: Vec<u32>,
    /// The registers that may hold a fact: those of the entry facts and those written
    /// in this block. A call's clobbers are looked up only where they meet this set
    /// (most hold nothing, and each lookup may search the entry facts).
    regs: PRegSet,
}

impl Holds {
    /// Starts a block from `entry`'s facts (the previous block's are given back in it).
    fn start(&mut self, entry: &mut Vec<(u32, u32)>) {
        std::mem::swap(&mut self.entry, entry);
        self.regs = PRegSet::empty();
        // Sorted by location: registers first.
        for &(l, _) in self
            .entry
            .iter()
            .take_while(|&&(l, _)| l < PReg::NUM_INDEX as u32)
        {
            self.regs.add(PReg::from_index(l as usize));
        }
        self.written.clear();
        self.unknown_value.clear();
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.table.fill((0, None));
            self.generation = 1;
        }
    }

    /// The fact at `l`, an unknown resolved to its vreg once a use has told it.
    fn get(&self, l: u32) -> Option<Fact> {
        self.raw(l).map(|f| self.resolve(f))
    }

    #[inline]
    fn resolve(&self, f: Fact) -> Fact {
        match f.vreg.checked_sub(self.unknown_base) {
            Some(k) if self.unknown_value[k as usize] != NO_VREG => Fact {
                vreg: self.unknown_value[k as usize],
                inherited: f.inherited,
            },
            _ => f,
        }
    }

    /// A new unknown value (see `unknown_base`).
    fn unknown(&mut self) -> Fact {
        self.unknown_value.push(NO_VREG);
        fresh((self.unknown_base as usize) + self.unknown_value.len() - 1)
    }

    /// A use reads `vreg` at `l`: if `l` held an unknown, every location holding that
    /// unknown holds `vreg` (nothing wrote them since they took the same value).
    #[inline]
    fn read_as(&mut self, l: u32, vreg: u32) {
        // Unknowns are only ever written in this block: the entry facts hold none, and
        // most blocks make none.
        if !self.unknown_value.is_empty()
            && let Some(&(g, Some(f))) = self.table.get(l as usize)
            && g == self.generation
            && let Some(k) = f.vreg.checked_sub(self.unknown_base)
            && self.unknown_value[k as usize] == NO_VREG
        {
            self.unknown_value[k as usize] = vreg;
        }
        self.insert(l, fresh(vreg as usize));
    }

    fn raw(&self, l: u32) -> Option<Fact> {
        match self.table.get(l as usize) {
            Some(&(g, fact)) if g == self.generation => fact,
            _ => self
                .entry
                .binary_search_by_key(&l, |&(el, _)| el)
                .ok()
                .map(|i| Fact {
                    vreg: self.entry[i].1,
                    inherited: true,
                }),
        }
    }

    #[inline]
    fn set(&mut self, l: u32, fact: Option<Fact>) {
        let l = l as usize;
        if l >= self.table.len() {
            self.table.resize(l + 1, (0, None));
        }
        if self.table[l].0 != self.generation {
            self.written.push(l as u32);
            if l < PReg::NUM_INDEX {
                self.regs.add(PReg::from_index(l));
            }
        }
        self.table[l] = (self.generation, fact);
    }

    #[inline]
    fn insert(&mut self, l: u32, fact: Fact) {
        self.set(l, Some(fact));
    }

    /// Also hides an entry fact at `l`, hence a write even where the block wrote nothing.
    /// A location with no fact is left alone: a call's clobbers name dozens of registers
    /// that mostly hold none, and each write would be sorted and merged at the block's
    /// end (`facts_into`).
    #[inline]
    fn remove(&mut self, l: u32) {
        if self.raw(l).is_some() {
            self.set(l, None);
        }
    }

    /// The current facts as (location, vreg), sorted by location, appended to `state`:
    /// the entry facts merged with the written locations (sorted here; each is written
    /// once per generation, so they are distinct).
    fn facts_into(&mut self, state: &mut Vec<(u32, u32)>) {
        self.written.sort_unstable();
        // Unknowns never leave the block: one a use resolved is its vreg, one still
        // unknown is dropped.
        let held = |l: u32| {
            let (_, fact) = self.table[l as usize];
            fact.map(|f| self.resolve(f))
                .filter(|f| f.vreg < self.unknown_base)
                .map(|f| (l, f.vreg))
        };
        let (entry, written) = (&self.entry, &self.written);
        let (mut i, mut j) = (0, 0);
        while i < entry.len() && j < written.len() {
            let (el, w) = (entry[i].0, written[j]);
            if el < w {
                state.push(entry[i]);
                i += 1;
            } else {
                state.extend(held(w));
                j += 1;
                i += usize::from(el == w);
            }
        }
        state.extend_from_slice(&entry[i..]);
        state.extend(written[j..].iter().filter_map(|&w| held(w)));
    }
}

/// One list of facts per block, all in one vector: a block's list is rewritten in place
/// when the new one fits, else appended (later passes rewrite few lists).
#[derive(Default)]
struct States {
    facts: Vec<(u32, u32)>,
    /// Per block: (start, length) in `facts`.
    range: Vec<(u32, u32)>,
}

impl States {
    fn reset(&mut self, nb: usize) {
        self.facts.clear();
        self.range.clear();
        self.range.resize(nb, (0, 0));
    }

    #[inline]
    fn get(&self, b: usize) -> &[(u32, u32)] {
        let (s, n) = self.range[b];
        &self.facts[s as usize..(s + n) as usize]
    }

    fn set(&mut self, b: usize, state: &[(u32, u32)]) {
        let (s, n) = self.range[b];
        let s = if state.len() <= n as usize {
            self.facts[s as usize..s as usize + state.len()].copy_from_slice(state);
            s
        } else {
            let s = self.facts.len() as u32;
            self.facts.extend_from_slice(state);
            s
        };
        self.range[b] = (s, state.len() as u32);
    }

    /// `set(b, facts[start..])` for a list just appended (no copy when it is new, as
    /// in the first pass): returns whether it differs from `b`'s list.
    fn set_from_tail(&mut self, b: usize, start: usize) -> bool {
        let (s, n) = self.range[b];
        let (s, n) = (s as usize, n as usize);
        let len = self.facts.len() - start;
        if self.facts[start..] == self.facts[s..s + n] {
            self.facts.truncate(start);
            return false;
        }
        if len <= n {
            self.facts.copy_within(start.., s);
            self.facts.truncate(start);
            self.range[b].1 = len as u32;
        } else {
            self.range[b] = (start as u32, len as u32);
        }
        true
    }
}

#[derive(Default)]
pub(crate) struct RedundantMoves {
    holds: Holds,
    keep: Vec<bool>,
    /// Per edit: the register it reads instead of its stack source (`Allocation::none()`
    /// for none), decided by the same replays as `keep`.
    source: Vec<Allocation>,
    /// Whether a move from the stack may read a register holding its value instead.
    copies: bool,
    /// Registers that are stack locations (`MachineEnv::fixed_stack_slots`).
    stack_regs: PRegSet,
    /// Per fact (vreg or unknown): a register that took it last in the block at hand, to
    /// be checked against `holds` before use (it may have been written since).
    last_reg: Vec<u32>,
    /// Per block: the range of its edits in `out.edits`.
    edit_range: Vec<(u32, u32)>,
    /// The blocks to replay, in replay order.
    order: Vec<Block>,
    /// Per block: whether its replay may matter (see `mark_unneeded_tails`).
    needed: Vec<bool>,
    stack: Vec<Block>,
    /// Per block: its facts at the end, (location, vreg) sorted by location (none for
    /// an exit, which no block reads). Facts about values no successor carries in are
    /// dropped on entry to the successor.
    end_state: States,
    /// Per block with several predecessors: the facts it started with when last
    /// replayed. A later pass replays it again only if they changed: its end state and
    /// its drops would not. A block with one predecessor is replayed whenever that
    /// predecessor's end state changed (a replay from the same facts decides the same):
    /// few are, and keeping every block's list cost more than those replays.
    entry_state: States,
    /// Per block: the moves its last replay removed.
    block_removed: Vec<Removed>,
    /// Per block: whether what it starts from may have changed since it was last looked
    /// at (a predecessor's end state or its own assumption changed).
    dirty: Vec<bool>,
    /// Per block: whether a predecessor's end state changed since `refine_assumptions`
    /// last met them (if not, a loop header's assumption cannot shrink).
    preds_changed: Vec<bool>,
    /// Per block reached by a retreating edge (listed in `headers`, marked in
    /// `has_assumption`): the facts it is assumed to start with. Rewritten in place as
    /// they shrink; one vector for all, not one per block and function.
    assumed: States,
    headers: Vec<Block>,
    has_assumption: Vec<bool>,
    /// Per vreg: `epoch` when it may be carried across the boundary at hand.
    carry: Vec<u32>,
    epoch: u32,
    meet: Vec<(u32, u32)>,
}

impl RedundantMoves {
    /// Removes redundant moves from `out.edits`.
    pub fn run<F: Function + ?Sized>(
        &mut self,
        f: &F,
        an: &Analyses,
        cross_block: bool,
        copies: bool,
        stack_regs: PRegSet,
        out: &mut Output,
    ) -> Removed {
        if out.edits.is_empty() {
            return Removed::default();
        }
        self.copies = copies;
        self.stack_regs = stack_regs;
        self.holds.unknown_base = f.num_vregs() as u32;
        // Stale entries are harmless (`register_holding` checks `holds`), so the table
        // is only grown, never cleared.
        if self.last_reg.len() < f.num_vregs() {
            self.last_reg.resize(f.num_vregs(), u32::MAX);
        }
        let mut edits = std::mem::take(&mut out.edits);
        let nb = f.num_blocks();
        self.find_edit_ranges(f, an, &edits);
        self.order.clear();
        let removed = if cross_block {
            self.order.extend(an.cfg.postorder.iter().rev());
            self.order
                .extend((0..nb).map(Block::new).filter(|&b| !an.cfg.is_reachable(b)));
            // Replaying a block that decides nothing is harmless: for a few, filtering
            // the order costs more than their replays.
            if self.mark_unneeded_tails(f, an) > nb / 16 {
                let needed = &self.needed;
                self.order.retain(|b| needed[b.index()]);
            }
            self.end_state.reset(nb);
            self.entry_state.reset(nb);
            self.dirty.clear();
            self.dirty.resize(nb, true);
            self.preds_changed.clear();
            self.preds_changed.resize(nb, true);
            self.assumed.reset(nb);
            self.headers.clear();
            self.has_assumption.clear();
            self.has_assumption.resize(nb, false);
            // Entries are stamped with `epoch`, so stale ones need no clearing, and a
            // longer table than this function needs is kept.
            if self.carry.len() < f.num_vregs() {
                self.carry.resize(f.num_vregs(), 0);
            }
            let mut passes = 1;
            loop {
                let removed = self.pass(f, an, &edits, out, true, passes == 1);
                if !self.refine_assumptions(f, an) {
                    break removed;
                }
                passes += 1;
                if passes > MAX_PASSES {
                    log::debug!("redundant moves: loop headers unsettled, they start empty");
                    for &b in &self.headers {
                        if !self.assumed.get(b.index()).is_empty() {
                            self.assumed.set(b.index(), &[]);
                            self.dirty[b.index()] = true;
                        }
                    }
                    break self.pass(f, an, &edits, out, true, false);
                }
            }
        } else {
            // Each block starts from nothing: one without edits decides nothing.
            let ranges = &self.edit_range;
            self.order.extend(
                (0..nb)
                    .map(Block::new)
                    .filter(|b| ranges[b.index()].0 != ranges[b.index()].1),
            );
            self.pass(f, an, &edits, out, false, true)
        };
        for (edit, &source) in edits.iter_mut().zip(&self.source) {
            if let Some(r) = source.as_reg() {
                let Edit::Move { to, .. } = edit.1;
                edit.1 = Edit::Move {
                    from: Allocation::reg(r),
                    to,
                };
            }
        }
        let mut i = 0;
        out.edits = edits;
        out.edits.retain(|_| {
            i += 1;
            self.keep[i - 1]
        });
        removed
    }

    /// One replay of every block (after the first pass, of every block whose starting
    /// facts may have changed, see `entry_state`); decides `keep` and, across blocks,
    /// the end states.
    fn pass<F: Function + ?Sized>(
        &mut self,
        f: &F,
        an: &Analyses,
        edits: &[(ProgPoint, Edit)],
        out: &Output,
        cross_block: bool,
        first: bool,
    ) -> Removed {
        if first {
            self.keep.clear();
            self.keep.resize(edits.len(), true);
            self.source.clear();
            self.source.resize(edits.len(), Allocation::none());
            self.block_removed.clear();
            self.block_removed
                .resize(f.num_blocks(), Removed::default());
        }
        for k in 0..self.order.len() {
            let b = self.order[k];
            self.meet.clear();
            if cross_block {
                if !first && !self.dirty[b.index()] {
                    continue;
                }
                self.dirty[b.index()] = false;
                self.entry_facts(f, an, b);
                if let [_, _, ..] = f.block_preds(b) {
                    if !first && self.meet[..] == *self.entry_state.get(b.index()) {
                        continue;
                    }
                    self.entry_state.set(b.index(), &self.meet);
                }
            }
            let insns = f.block_insns(b);
            let (lo, hi) = self.edit_range[b.index()];
            // An edit-free block of one instruction that names no location and clobbers
            // nothing (a jump, as on a split edge) ends with the facts it starts with
            // (the entry facts pass `facts_into` unchanged) and removes nothing: no replay.
            if lo == hi && insns.len() == 1 {
                let only = insns.first();
                if f.inst_operands(only).is_empty() && f.inst_clobbers(only) == PRegSet::empty() {
                    self.block_removed[b.index()] = Removed::default();
                    if cross_block && !f.block_succs(b).is_empty() {
                        let state = std::mem::take(&mut self.meet);
                        self.update_end_state(f, b, &state);
                        self.meet = state;
                    }
                    continue;
                }
            }
            self.holds.start(&mut self.meet);
            let (lo, hi) = (lo as usize, hi as usize);
            debug_assert!(
                lo == hi
                    || (lo, hi)
                        == (
                            edits.partition_point(|(p, _)| p.inst() < insns.first()),
                            edits.partition_point(|(p, _)| p.inst() <= insns.last()),
                        )
            );
            let edits = &edits[..hi];
            if !first {
                self.keep[lo..hi].fill(true);
                self.source[lo..hi].fill(Allocation::none());
            }
            let mut removed = Removed::default();
            let mut e = lo;
            for inst in insns.iter() {
                if e < hi && edits[e].0 == ProgPoint::before(inst) {
                    self.replay_edits(edits, &mut e, ProgPoint::before(inst), &mut removed);
                }
                self.replay_inst(f, out, inst);
                if e < hi && edits[e].0 == ProgPoint::after(inst) {
                    self.replay_edits(edits, &mut e, ProgPoint::after(inst), &mut removed);
                }
            }
            self.block_removed[b.index()] = removed;
            // Only successors read a block's end state: an exit's is never needed.
            if cross_block && !f.block_succs(b).is_empty() {
                let start = self.end_state.facts.len();
                self.holds.facts_into(&mut self.end_state.facts);
                if self.end_state.set_from_tail(b.index(), start) {
                    self.mark_succs_changed(f, b);
                }
            }
        }
        self.block_removed
            .iter()
            .fold(Removed::default(), |a, r| Removed {
                total: a.total + r.total,
                cross_block: a.cross_block + r.cross_block,
                from_copies: a.from_copies + r.from_copies,
            })
    }

    /// Records `state` as `b`'s end state; if it changed, `b`'s successors must look at
    /// their starting facts again.
    fn update_end_state<F: Function + ?Sized>(&mut self, f: &F, b: Block, state: &[(u32, u32)]) {
        if *state != *self.end_state.get(b.index()) {
            self.end_state.set(b.index(), state);
            self.mark_succs_changed(f, b);
        }
    }

    fn mark_succs_changed<F: Function + ?Sized>(&mut self, f: &F, b: Block) {
        for s in f.block_succs(b) {
            self.dirty[s.index()] = true;
            self.preds_changed[s.index()] = true;
        }
    }

    /// Each block's edits: those at points of its instructions, a run of `edits` as
    /// they are sorted by point and a block's instructions are consecutive. Found in
    /// one walk, with a lookup per block that has edits, instead of two binary searches
    /// per block replayed.
    fn find_edit_ranges<F: Function + ?Sized>(
        &mut self,
        f: &F,
        an: &Analyses,
        edits: &[(ProgPoint, Edit)],
    ) {
        self.edit_range.clear();
        self.edit_range.resize(f.num_blocks(), (0, 0));
        let mut e = 0;
        while e < edits.len() {
            let b = an.cfg.block_of(edits[e].0.inst());
            let last = f.block_insns(b).last();
            let start = e;
            while e < edits.len() && edits[e].0.inst() <= last {
                e += 1;
            }
            self.edit_range[b.index()] = (start as u32, e as u32);
        }
    }

    /// Clears `needed` for blocks whose replay decides nothing, found from the exits
    /// backwards, and returns how many it found: a block that is not a loop header,
    /// has no edits and whose successors (none, at an exit) are all such blocks. It has no move to drop, and only blocks of its kind read its end state:
    /// no drop, assumption or pass count depends on it. Only predecessors with one
    /// successor are followed, which finds the edit-free return paths at a cost of a
    /// test per block.
    fn mark_unneeded_tails<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses) -> usize {
        let nb = f.num_blocks();
        let rpo = &an.cfg.rpo_index;
        let no_edits = |b: Block| self.edit_range[b.index()].0 == self.edit_range[b.index()].1;
        // All predecessors are replayed before it: not a loop header.
        let forward_only = |b: Block| {
            f.block_preds(b)
                .iter()
                .all(|p| rpo[p.index()] < rpo[b.index()])
        };
        self.needed.clear();
        self.needed.resize(nb, true);
        self.stack.clear();
        for b in (0..nb).map(Block::new) {
            if f.block_succs(b).is_empty() && no_edits(b) && forward_only(b) {
                self.needed[b.index()] = false;
                self.stack.push(b);
            }
        }
        let mut found = self.stack.len();
        while let Some(s) = self.stack.pop() {
            for &p in f.block_preds(s) {
                if self.needed[p.index()]
                    && f.block_succs(p).len() == 1
                    && no_edits(p)
                    && forward_only(p)
                {
                    self.needed[p.index()] = false;
                    self.stack.push(p);
                    found += 1;
                }
            }
        }
        found
    }

    /// Marks in `carry` the vregs whose facts may cross into `b`: its live-ins and, with
    /// a single predecessor, the arguments that predecessor passes it.
    fn mark_carried_into<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses, b: Block) {
        for v in &an.live.livein[b.index()] {
            self.carry[v.vreg()] = self.epoch;
        }
        if let [pred] = f.block_preds(b) {
            let last = f.block_insns(*pred).last();
            if f.is_branch(last)
                && let Some(i) = an.cfg.succ_index_in_pred(b)
            {
                for a in f.branch_blockparams(*pred, last, i) {
                    self.carry[a.vreg()] = self.epoch;
                }
            }
        }
    }

    fn next_epoch(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.carry.fill(0);
            self.epoch = 1;
        }
    }

    /// `self.meet` = the facts at the end of all of `b`'s predecessors (only those
    /// replayed before it in this pass when `only_earlier`) that may cross into `b`.
    /// Intersected first and filtered last (keeping a fact commutes with intersecting):
    /// the intersection is often empty, and then `b`'s live-ins need no marking.
    fn meet_preds<F: Function + ?Sized>(
        &mut self,
        f: &F,
        an: &Analyses,
        b: Block,
        only_earlier: bool,
    ) {
        self.meet.clear();
        let rb = an.cfg.rpo_index[b.index()];
        let mut first = true;
        for p in f.block_preds(b) {
            if only_earlier && an.cfg.rpo_index[p.index()] >= rb {
                continue;
            }
            let state = self.end_state.get(p.index());
            if first {
                self.meet.extend_from_slice(state);
                first = false;
            } else {
                intersect(&mut self.meet, state);
            }
            if self.meet.is_empty() {
                return;
            }
        }
        if self.meet.is_empty() {
            return;
        }
        self.next_epoch();
        self.mark_carried_into(f, an, b);
        let (carry, epoch) = (&self.carry, self.epoch);
        self.meet.retain(|&(_, v)| carry[v as usize] == epoch);
    }

    /// After a pass: intersects each loop header's assumption with what its
    /// predecessors ended with. Returns whether any assumption shrank (then the pass
    /// must be redone; otherwise the assumptions are a fixed point).
    fn refine_assumptions<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses) -> bool {
        let mut shrank = false;
        // Each header's assumption is met with its own predecessors: the order they are
        // visited in does not matter.
        for k in 0..self.headers.len() {
            let b = self.headers[k];
            if self.assumed.get(b.index()).is_empty()
                || !std::mem::take(&mut self.preds_changed[b.index()])
            {
                continue;
            }
            self.meet_preds(f, an, b, false);
            let (s, n) = self.assumed.range[b.index()];
            let kept = intersect_in(
                &mut self.assumed.facts[s as usize..(s + n) as usize],
                &self.meet,
            );
            if kept < n as usize {
                self.assumed.range[b.index()].1 = kept as u32;
                shrank = true;
                self.dirty[b.index()] = true;
            }
        }
        shrank
    }

    /// `self.meet` = the facts block `b` starts from: those true at the end of all its
    /// predecessors (or, at a loop header, its current assumption).
    fn entry_facts<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses, b: Block) {
        self.meet.clear();
        let rb = an.cfg.rpo_index[b.index()];
        let preds = f.block_preds(b);
        if b == f.entry_block()
            || rb == u32::MAX
            || preds.is_empty()
            || preds.iter().any(|p| !an.cfg.is_reachable(*p))
        {
            return;
        }
        if preds.iter().all(|p| an.cfg.rpo_index[p.index()] < rb) {
            self.meet_preds(f, an, b, false);
        } else if self.has_assumption[b.index()] {
            self.meet.extend_from_slice(self.assumed.get(b.index()));
        } else {
            // First visit of a loop header: assume what its forward predecessors
            // (replayed already) agree on; `refine_assumptions` checks the rest.
            self.meet_preds(f, an, b, true);
            self.assumed.set(b.index(), &self.meet);
            self.has_assumption[b.index()] = true;
            self.headers.push(b);
        }
    }

    fn replay_edits(
        &mut self,
        edits: &[(ProgPoint, Edit)],
        e: &mut usize,
        at: ProgPoint,
        removed: &mut Removed,
    ) {
        while *e < edits.len() && edits[*e].0 == at {
            let Edit::Move { from, to } = edits[*e].1;
            let value = self.holds.get(loc(from));
            let known = self.holds.get(loc(to));
            match (value, known) {
                _ if from == to => {
                    self.keep[*e] = false;
                    removed.total += 1;
                }
                (Some(v), Some(k)) if v.vreg == k.vreg => {
                    self.keep[*e] = false;
                    removed.total += 1;
                    if v.inherited || k.inherited {
                        removed.cross_block += 1;
                    }
                }
                (value, _) if self.copies && self.is_stack(from) => {
                    // A stack source with no known fact is named, so that its
                    // destination and later moves from it can be matched.
                    let v = value.unwrap_or_else(|| self.name_unknown(loc(from)));
                    if let Some(r) = self.register_holding(v.vreg, loc(to)) {
                        // The register holds what the stack location holds: a register
                        // copy instead of a load (or of a stack-to-stack move).
                        self.source[*e] = Allocation::reg(r);
                        removed.from_copies += 1;
                    }
                    self.holds.insert(loc(to), v);
                    self.note_register(loc(to), v.vreg);
                }
                (Some(v), _) => {
                    self.holds.insert(loc(to), v);
                    self.note_register(loc(to), v.vreg);
                }
                (None, _) if self.copies => {
                    // A register source with no known fact is named as well: a store of
                    // a value received at a merge block (its predecessors agree on no
                    // fact there) and a load of it back into the same register are
                    // then seen to be one value.
                    let x = self.name_unknown(loc(from));
                    self.note_register(loc(from), x.vreg);
                    self.holds.insert(loc(to), x);
                    self.note_register(loc(to), x.vreg);
                }
                (None, _) => {
                    self.holds.remove(loc(to));
                }
            }
            *e += 1;
        }
    }

    /// Gives location `l`, which holds no known fact, a new unknown (see `unknown_base`).
    fn name_unknown(&mut self, l: u32) -> Fact {
        let x = self.holds.unknown();
        self.holds.insert(l, x);
        if x.vreg as usize >= self.last_reg.len() {
            self.last_reg.resize(x.vreg as usize + 1, u32::MAX);
        }
        x
    }

    fn is_stack(&self, a: Allocation) -> bool {
        match a.as_reg() {
            Some(r) => self.stack_regs.contains(r),
            None => a.is_stack(),
        }
    }

    /// Remembers that location `l`, if a register, took fact `vreg`. Not a fixed stack
    /// slot: it is no register to copy from, and remembered it would hide the register
    /// the value was written from (a fixed slot written early from a register that
    /// still holds the value, then a reload of the value).
    #[inline]
    fn note_register(&mut self, l: u32, vreg: u32) {
        if l < PReg::NUM_INDEX as u32
            && !self.stack_regs.contains(PReg::from_index(l as usize))
            && let Some(slot) = self.last_reg.get_mut(vreg as usize)
        {
            *slot = l;
        }
    }

    /// A register other than location `not` that holds `vreg` now.
    fn register_holding(&self, vreg: u32, not: u32) -> Option<PReg> {
        let l = *self.last_reg.get(vreg as usize)?;
        if l == not || l == u32::MAX || self.stack_regs.contains(PReg::from_index(l as usize)) {
            return None;
        }
        self.holds
            .get(l)
            .is_some_and(|f| f.vreg == vreg)
            .then(|| PReg::from_index(l as usize))
    }

    /// The instruction's effect, in the order of regalloc2's checker: uses read their
    /// allocations (so those hold the used vregs), then each def writes its allocation
    /// (a vreg defined twice holds only in the last one), then clobbers erase.
    fn replay_inst<F: Function + ?Sized>(&mut self, f: &F, out: &Output, inst: Inst) {
        let ops = f.inst_operands(inst);
        // An instruction has an allocation per operand, from its offset on.
        let allocs = &out.allocs[out.inst_alloc_offsets[inst.index()] as usize..][..ops.len()];
        debug_assert_eq!(allocs, out.inst_allocs(inst));
        for (op, &alloc) in ops.iter().zip(allocs) {
            if op.kind() == OperandKind::Use && fixed_nonallocatable(*op).is_none() {
                let v = op.vreg().vreg() as u32;
                self.holds.read_as(loc(alloc), v);
                self.note_register(loc(alloc), v);
            }
        }
        for (k, (op, &alloc)) in ops.iter().zip(allocs).enumerate() {
            // A register outside the allocator's control that an instruction names is the
            // client's there, whatever the operand's kind: the allocator moved any value
            // out of it first, and what it holds afterwards is unknown.
            if fixed_nonallocatable(*op).is_some() {
                self.holds.remove(loc(alloc));
                continue;
            }
            if op.kind() != OperandKind::Def {
                continue;
            }
            let v = op.vreg();
            for (prev, &prev_alloc) in ops[..k].iter().zip(allocs) {
                if prev.kind() == OperandKind::Def && prev.vreg() == v && prev_alloc != alloc {
                    self.holds.remove(loc(prev_alloc));
                }
            }
            self.holds.insert(loc(alloc), fresh(v.vreg()));
            self.note_register(loc(alloc), v.vreg() as u32);
        }
        let clobbers = f.inst_clobbers(inst);
        // Most instructions clobber nothing: no walk over the set's words for those.
        if clobbers != PRegSet::empty() {
            for clobber in clobbers & self.holds.regs {
                self.holds.remove(clobber.index() as u32);
            }
        }
    }
}

fn fresh(vreg: usize) -> Fact {
    Fact {
        vreg: vreg as u32,
        inherited: false,
    }
}

/// `meet ∩= other` (both sorted by location, one fact per location).
fn intersect(meet: &mut Vec<(u32, u32)>, other: &[(u32, u32)]) {
    let kept = intersect_in(meet, other);
    meet.truncate(kept);
}

/// `intersect` in place: the facts of `meet` also in `other` moved to its front,
/// returning how many.
fn intersect_in(meet: &mut [(u32, u32)], other: &[(u32, u32)]) -> usize {
    let mut kept = 0;
    let mut j = 0;
    for i in 0..meet.len() {
        let x = meet[i];
        while j < other.len() && other[j].0 < x.0 {
            j += 1;
        }
        if j < other.len() && other[j] == x {
            meet[kept] = x;
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block starting from `entry`, with vregs below 100.
    fn holds_from(entry: &[(u32, u32)]) -> Holds {
        let mut h = Holds {
            unknown_base: 100,
            ..Holds::default()
        };
        h.start(&mut entry.to_vec());
        h
    }

    fn facts(h: &mut Holds) -> Vec<(u32, u32)> {
        let mut state = Vec::new();
        h.facts_into(&mut state);
        state
    }

    #[test]
    fn removing_where_nothing_is_known_writes_nothing() {
        let mut h = holds_from(&[(3, 7)]);
        // A call's clobbers: registers with no fact, one of them never seen at all.
        for l in [0, 5, 40] {
            h.remove(l);
        }
        assert!(h.written.is_empty(), "{:?}", h.written);
        assert_eq!(facts(&mut h), [(3, 7)]);
    }

    #[test]
    fn removing_hides_entry_and_written_facts() {
        let mut h = holds_from(&[(3, 7), (8, 1)]);
        h.insert(9, fresh(2));
        h.remove(3);
        h.remove(9);
        assert_eq!(h.get(3), None);
        assert_eq!(h.get(9), None);
        assert_eq!(facts(&mut h), [(8, 1)]);
        // Removed again: already unknown, nothing more to write.
        let written = h.written.len();
        h.remove(3);
        assert_eq!(h.written.len(), written);
    }
}
