//! Redundant-move elimination: replay each block's instructions and moves while tracking
//! which vreg each location is known to hold, and drop a move whose destination already
//! holds the value it would copy (a second reload of a spilled value into the same
//! register, a store of a value the slot already holds), or whose source is its
//! destination. Knowledge comes from defs, uses and moves, and is lost at clobbers and at
//! writes by instructions.
//!
//! Across blocks (`Options::cross_block_redundant_moves`), blocks are replayed in reverse
//! postorder and a block starts from the facts that hold at the end of *every*
//! predecessor (the intersection), restricted to its live-in values and, with a single
//! predecessor, the arguments of that edge (its edge moves run at the block's start).
//! A block with a predecessor not replayed yet (a back edge, an unreachable block)
//! starts empty. Why this is sound: a fact "location L holds v" learned along a path of
//! increasing RPO stays true until something on the path writes L, and every write on
//! that path (instruction defs, clobbers, edge moves at the end of the predecessor or the
//! start of the block) is replayed. No fact can name a block parameter of the block or a
//! vreg defined in it: those are only mentioned in blocks it dominates, which come after
//! it in RPO, so SSA redefinition (a later loop iteration) never meets a stale fact. It is
//! also what regalloc2's checker concludes: it meets predecessor states by intersection
//! and its block-parameter moves only add labels to the argument's locations.

use crate::analysis::Analyses;
use hashbrown::HashMap;
use regalloc2::{Allocation, Block, Edit, Function, Inst, OperandKind, Output, ProgPoint};

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
}

#[derive(Default)]
pub(crate) struct RedundantMoves {
    holds: HashMap<u32, Fact>,
    keep: Vec<bool>,
    order: Vec<Block>,
    /// Per block: its facts at the end, (location bits, vreg) sorted by location, kept
    /// until every later successor in RPO has read them.
    end_state: Vec<Vec<(u32, u32)>>,
    /// Per block: successors after it in RPO that have not read `end_state` yet.
    readers_left: Vec<u32>,
    /// Per vreg: `epoch` when it may be carried into the block being entered.
    carry: Vec<u32>,
    epoch: u32,
    meet: Vec<(u32, u32)>,
    meet_tmp: Vec<(u32, u32)>,
}

impl RedundantMoves {
    /// Removes redundant moves from `out.edits`.
    pub fn run<F: Function + ?Sized>(
        &mut self,
        f: &F,
        an: &Analyses,
        cross_block: bool,
        out: &mut Output,
    ) -> Removed {
        let edits = std::mem::take(&mut out.edits);
        self.keep.clear();
        self.keep.resize(edits.len(), true);
        let nb = f.num_blocks();
        self.order.clear();
        if cross_block {
            self.order.extend(an.cfg.postorder.iter().rev());
            self.order
                .extend((0..nb).map(Block::new).filter(|&b| !an.cfg.is_reachable(b)));
            self.prepare_states(f, an);
        } else {
            self.order.extend((0..nb).map(Block::new));
        }
        let mut removed = Removed::default();
        for k in 0..self.order.len() {
            let b = self.order[k];
            self.holds.clear();
            if cross_block {
                self.enter(f, an, b);
            }
            let insns = f.block_insns(b);
            // This block's edits: those at points of its instructions (edits are sorted).
            let lo = edits.partition_point(|(p, _)| p.inst() < insns.first());
            let hi = edits.partition_point(|(p, _)| p.inst() <= insns.last());
            let mut e = lo;
            for inst in insns.iter() {
                self.replay_edits(&edits[..hi], &mut e, ProgPoint::before(inst), &mut removed);
                self.replay_inst(f, out, inst);
                self.replay_edits(&edits[..hi], &mut e, ProgPoint::after(inst), &mut removed);
            }
            if cross_block && self.readers_left[b.index()] > 0 {
                let state = &mut self.end_state[b.index()];
                state.clear();
                state.extend(self.holds.iter().map(|(&l, fact)| (l, fact.vreg)));
                state.sort_unstable();
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

    /// Counts, per block, the successors that will read its end state.
    fn prepare_states<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses) {
        let nb = f.num_blocks();
        self.end_state.resize_with(nb, Vec::new);
        for s in &mut self.end_state[..nb] {
            s.clear();
        }
        self.readers_left.clear();
        self.readers_left.resize(nb, 0);
        for &b in &an.cfg.postorder {
            let rb = an.cfg.rpo_index[b.index()];
            self.readers_left[b.index()] = f
                .block_succs(b)
                .iter()
                .filter(|s| an.cfg.rpo_index[s.index()] > rb && readable(f, an, **s))
                .count() as u32;
        }
        self.carry.resize(f.num_vregs(), 0);
    }

    /// Starts block `b` from the facts true at the end of all its predecessors.
    fn enter<F: Function + ?Sized>(&mut self, f: &F, an: &Analyses, b: Block) {
        if !readable(f, an, b) {
            return;
        }
        let preds = f.block_preds(b);
        // Which vregs may be carried in: live-ins, and with one predecessor the branch
        // arguments its edge moves read at this block's start.
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.carry.fill(0);
            self.epoch = 1;
        }
        for v in &an.live.livein[b.index()] {
            self.carry[v.vreg()] = self.epoch;
        }
        if let [pred] = preds {
            let last = f.block_insns(*pred).last();
            if f.is_branch(last)
                && let Some(i) = f.block_succs(*pred).iter().position(|&s| s == b)
            {
                for a in f.branch_blockparams(*pred, last, i) {
                    self.carry[a.vreg()] = self.epoch;
                }
            }
        }
        self.meet.clear();
        for (k, p) in preds.iter().enumerate() {
            let state = &self.end_state[p.index()];
            if k == 0 {
                let (carry, epoch) = (&self.carry, self.epoch);
                self.meet.extend(
                    state
                        .iter()
                        .filter(|&&(_, v)| carry.get(v as usize) == Some(&epoch)),
                );
            } else {
                intersect(&mut self.meet, state, &mut self.meet_tmp);
            }
            let left = &mut self.readers_left[p.index()];
            *left = left.saturating_sub(1);
            if *left == 0 {
                // Every reader is done: give the memory back.
                self.end_state[p.index()] = Vec::new();
            }
        }
        for &(l, vreg) in &self.meet {
            self.holds.insert(
                l,
                Fact {
                    vreg,
                    inherited: true,
                },
            );
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
            let value = self.holds.get(&from.bits()).copied();
            let known = self.holds.get(&to.bits()).copied();
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
                (Some(v), _) => {
                    self.holds.insert(to.bits(), v);
                }
                (None, _) => {
                    self.holds.remove(&to.bits());
                }
            }
            *e += 1;
        }
    }

    /// The instruction's effect, in the order of regalloc2's checker: uses read their
    /// allocations (so those hold the used vregs), then each def writes its allocation
    /// (a vreg defined twice holds only in the last one), then clobbers erase.
    fn replay_inst<F: Function + ?Sized>(&mut self, f: &F, out: &Output, inst: Inst) {
        let ops = f.inst_operands(inst);
        let allocs = out.inst_allocs(inst);
        for (op, &alloc) in ops.iter().zip(allocs) {
            if op.kind() == OperandKind::Use && op.as_fixed_nonallocatable().is_none() {
                self.holds.insert(alloc.bits(), fresh(op.vreg().vreg()));
            }
        }
        for (k, (op, &alloc)) in ops.iter().zip(allocs).enumerate() {
            if op.kind() != OperandKind::Def {
                continue;
            }
            if op.as_fixed_nonallocatable().is_some() {
                self.holds.remove(&alloc.bits());
                continue;
            }
            let v = op.vreg();
            for (prev, &prev_alloc) in ops[..k].iter().zip(allocs) {
                if prev.kind() == OperandKind::Def && prev.vreg() == v && prev_alloc != alloc {
                    self.holds.remove(&prev_alloc.bits());
                }
            }
            self.holds.insert(alloc.bits(), fresh(v.vreg()));
        }
        for clobber in f.inst_clobbers(inst) {
            self.holds.remove(&Allocation::reg(clobber).bits());
        }
    }
}

fn fresh(vreg: usize) -> Fact {
    Fact {
        vreg: vreg as u32,
        inherited: false,
    }
}

/// Does block `b` start from its predecessors' facts? Only if every predecessor comes
/// before it in reverse postorder (so is replayed already); never the entry.
fn readable<F: Function + ?Sized>(f: &F, an: &Analyses, b: Block) -> bool {
    let rb = an.cfg.rpo_index[b.index()];
    let preds = f.block_preds(b);
    b != f.entry_block()
        && rb != u32::MAX
        && !preds.is_empty()
        && preds.iter().all(|p| an.cfg.rpo_index[p.index()] < rb)
}

/// `meet ∩= other` (both sorted by location, one fact per location).
fn intersect(meet: &mut Vec<(u32, u32)>, other: &[(u32, u32)], tmp: &mut Vec<(u32, u32)>) {
    tmp.clear();
    let mut j = 0;
    for &x in meet.iter() {
        while j < other.len() && other[j].0 < x.0 {
            j += 1;
        }
        if j < other.len() && other[j] == x {
            tmp.push(x);
        }
    }
    std::mem::swap(meet, tmp);
}
