//! Automatic shrinking of a failing function: [`shrink`] repeatedly tries smaller
//! candidates — blocks cut off (a terminator turned into a return, one edge of a branch
//! dropped), straight-line blocks merged into their only predecessor, runs of
//! instructions, operands, block parameters, clobbers and debug labels deleted,
//! constraints relaxed to `any` or `reg`, unusual operand positions made usual, vregs
//! renumbered densely, fixed stack slots, scratch registers and unused register classes
//! dropped from the environment — and keeps a candidate when the caller's predicate
//! ("still fails") holds on it.
//!
//! Invariants: when the input is a valid regalloc2 function, every candidate shown to the
//! predicate passes [`validate_input`] first (so the result is valid too); deleting a
//! value deletes every operand naming it and, for a block parameter, the matching argument
//! on every incoming edge, so most candidates stay valid without search. Each accepted
//! candidate is strictly smaller by (environment, blocks, instructions, operands +
//! parameters, clobbers, constraint strength, unusual positions), which bounds the loop
//! even without the budget;
//! the budget bounds the predicate calls. Everything runs in a fixed order, so the same
//! input and predicate give the same result.

use std::collections::BTreeSet;

use regalloc2::{
    Block, Inst, InstRange, MachineEnv, Operand, OperandConstraint, OperandKind, OperandPos,
    PRegSet, VReg,
};

use crate::builder::{InstData, InstKind, TestFunc};
use crate::validate::validate_input;

/// What [`shrink`] returns.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest function found on which the predicate holds (the input itself if the
    /// predicate is false on it, or if its blocks do not tile the instructions in order).
    pub func: TestFunc,
    /// The environment it holds in: the input's, less what [`shrink`] could drop (fixed
    /// stack slots, scratch registers, the registers of classes the function never names).
    pub env: MachineEnv,
    /// Whether the predicate held on the input.
    pub held: bool,
    /// Predicate calls made, the first (on the input) included; at most the budget.
    pub calls: usize,
    /// Candidates accepted.
    pub accepted: usize,
    /// Whether a whole round of every pass found nothing to remove (false when the budget
    /// ran out first).
    pub fixpoint: bool,
}

#[derive(Clone, Debug)]
struct SInst {
    data: InstData,
    /// Index in the input function, to carry debug labels across deletions.
    orig: usize,
}

#[derive(Clone, Debug)]
struct SBlock {
    params: Vec<VReg>,
    insts: Vec<SInst>,
    succs: Vec<usize>,
    preds: Vec<usize>,
    args: Vec<Vec<VReg>>,
}

/// A function as a list of blocks, so that instructions and blocks can be removed without
/// renumbering by hand; [`Shape::to_func`] lays it out again.
#[derive(Clone, Debug)]
struct Shape {
    blocks: Vec<SBlock>,
    entry: usize,
    num_vregs: usize,
    labels: Vec<(VReg, Inst, Inst, u32)>,
    spillslot_size: [usize; 3],
    multi_spillslot_named_by_last_slot: bool,
    allow_multiple_vreg_defs: bool,
}

/// Whether `f`'s blocks are non-empty, tile its instructions in order and name only
/// existing blocks, i.e. whether it can be taken apart into a [`Shape`] and put back.
fn well_laid_out(f: &TestFunc) -> bool {
    let nb = f.blocks.len();
    let mut next = 0;
    for r in &f.blocks {
        if r.len() == 0 || r.first().index() != next {
            return false;
        }
        next += r.len();
    }
    next == f.insts.len()
        && f.entry.index() < nb
        && f.block_succs.len() == nb
        && f.block_preds.len() == nb
        && f.block_params.len() == nb
        && f.branch_args.len() == nb
        && f.block_succs.iter().flatten().all(|s| s.index() < nb)
        && f.block_preds.iter().flatten().all(|p| p.index() < nb)
}

impl Shape {
    fn from_func(f: &TestFunc) -> Shape {
        let blocks = (0..f.blocks.len())
            .map(|b| SBlock {
                params: f.block_params[b].clone(),
                insts: f.blocks[b]
                    .iter()
                    .map(|i| SInst {
                        data: f.insts[i.index()].clone(),
                        orig: i.index(),
                    })
                    .collect(),
                succs: f.block_succs[b].iter().map(|s| s.index()).collect(),
                preds: f.block_preds[b].iter().map(|p| p.index()).collect(),
                args: f.branch_args[b].clone(),
            })
            .collect();
        Shape {
            blocks,
            entry: f.entry.index(),
            num_vregs: f.num_vregs,
            labels: f.debug_value_labels.clone(),
            spillslot_size: f.spillslot_size,
            multi_spillslot_named_by_last_slot: f.multi_spillslot_named_by_last_slot,
            allow_multiple_vreg_defs: f.allow_multiple_vreg_defs,
        }
    }

    fn to_func(&self) -> TestFunc {
        let mut insts = vec![];
        let mut ranges = vec![];
        let mut origs = vec![];
        for b in &self.blocks {
            let start = insts.len();
            for i in &b.insts {
                insts.push(i.data.clone());
                origs.push(i.orig);
            }
            ranges.push(InstRange::new(Inst::new(start), Inst::new(insts.len())));
        }
        // A label boundary moves to the number of surviving instructions before it; merged
        // blocks can reorder instructions, so this counts rather than assumes order.
        let mut sorted = origs.clone();
        sorted.sort_unstable();
        let defined = self.defined_vregs();
        let map = |i: Inst| Inst::new(sorted.partition_point(|&o| o < i.0 as usize));
        let mut labels: Vec<_> = self
            .labels
            .iter()
            .filter(|l| defined.contains(&l.0))
            .map(|&(v, from, to, l)| (v, map(from), map(to), l))
            .filter(|&(_, from, to, _)| from.0 < to.0)
            .collect();
        labels.sort_unstable();
        TestFunc {
            insts,
            blocks: ranges,
            entry: Block::new(self.entry),
            block_succs: self
                .blocks
                .iter()
                .map(|b| b.succs.iter().map(|&s| Block::new(s)).collect())
                .collect(),
            block_preds: self
                .blocks
                .iter()
                .map(|b| b.preds.iter().map(|&p| Block::new(p)).collect())
                .collect(),
            block_params: self.blocks.iter().map(|b| b.params.clone()).collect(),
            branch_args: self.blocks.iter().map(|b| b.args.clone()).collect(),
            num_vregs: self.num_vregs,
            debug_value_labels: labels,
            spillslot_size: self.spillslot_size,
            multi_spillslot_named_by_last_slot: self.multi_spillslot_named_by_last_slot,
            allow_multiple_vreg_defs: self.allow_multiple_vreg_defs,
        }
    }

    fn defined_vregs(&self) -> BTreeSet<VReg> {
        let mut set = BTreeSet::new();
        for b in &self.blocks {
            set.extend(b.params.iter().copied());
            for i in &b.insts {
                for op in &i.data.operands {
                    if op.kind() == OperandKind::Def && op.as_fixed_nonallocatable().is_none() {
                        set.insert(op.vreg());
                    }
                }
            }
        }
        set
    }

    /// Removes one occurrence of `pred` from `block`'s predecessors (one per edge).
    fn unlink_pred(&mut self, block: usize, pred: usize) {
        let preds = &mut self.blocks[block].preds;
        if let Some(k) = preds.iter().position(|&p| p == pred) {
            preds.remove(k);
        }
    }

    /// Deletes every block not reachable from the entry, renumbering the rest in order.
    fn prune_unreachable(&mut self) {
        let n = self.blocks.len();
        let mut reachable = vec![false; n];
        let mut stack = vec![self.entry];
        reachable[self.entry] = true;
        while let Some(b) = stack.pop() {
            for &s in &self.blocks[b].succs {
                if !reachable[s] {
                    reachable[s] = true;
                    stack.push(s);
                }
            }
        }
        self.retain_blocks(&reachable);
    }

    /// Keeps the blocks with `keep[b]`, dropping every edge to or from the others.
    fn retain_blocks(&mut self, keep: &[bool]) {
        if keep.iter().all(|&k| k) {
            return;
        }
        let mut new_index = vec![usize::MAX; keep.len()];
        let mut next = 0;
        for (b, &k) in keep.iter().enumerate() {
            if k {
                new_index[b] = next;
                next += 1;
            }
        }
        let old = std::mem::take(&mut self.blocks);
        for (b, mut block) in old.into_iter().enumerate() {
            if !keep[b] {
                continue;
            }
            let mut succs = vec![];
            let mut args = vec![];
            for (k, &s) in block.succs.iter().enumerate() {
                if keep[s] {
                    succs.push(new_index[s]);
                    args.push(block.args.get(k).cloned().unwrap_or_default());
                }
            }
            block.succs = succs;
            block.args = args;
            block.preds = block
                .preds
                .iter()
                .filter(|&&p| keep[p])
                .map(|&p| new_index[p])
                .collect();
            self.blocks.push(block);
        }
        self.entry = new_index[self.entry];
    }

    /// Deletes the values `work` and everything that names them: their defs and uses, and
    /// for block parameters the argument on every incoming edge. A value passed as a
    /// branch argument takes the parameter it feeds with it.
    fn delete_values(&mut self, mut work: Vec<VReg>) {
        let mut done = BTreeSet::new();
        while let Some(v) = work.pop() {
            if !done.insert(v) {
                continue;
            }
            for b in 0..self.blocks.len() {
                if let Some(j) = self.blocks[b].params.iter().position(|&p| p == v) {
                    self.blocks[b].params.remove(j);
                    for p in 0..self.blocks.len() {
                        let pb = &mut self.blocks[p];
                        for k in 0..pb.succs.len() {
                            if pb.succs[k] == b && j < pb.args[k].len() {
                                pb.args[k].remove(j);
                            }
                        }
                    }
                }
                for inst in &mut self.blocks[b].insts {
                    let mut k = 0;
                    while k < inst.data.operands.len() {
                        let op = inst.data.operands[k];
                        if op.vreg() == v && op.as_fixed_nonallocatable().is_none() {
                            remove_operand(&mut inst.data, k);
                        } else {
                            k += 1;
                        }
                    }
                }
            }
            for b in 0..self.blocks.len() {
                let block = &self.blocks[b];
                for (k, args) in block.args.iter().enumerate() {
                    for (j, &a) in args.iter().enumerate() {
                        if a == v
                            && let Some(&s) = block.succs.get(k)
                            && let Some(&param) = self.blocks[s].params.get(j)
                        {
                            work.push(param);
                        }
                    }
                }
            }
        }
    }

    /// Renames every use of `from` (operands, branch arguments) to `to`.
    fn rename_uses(&mut self, from: VReg, to: VReg) {
        for b in &mut self.blocks {
            for inst in &mut b.insts {
                for op in &mut inst.data.operands {
                    if op.vreg() == from
                        && op.kind() == OperandKind::Use
                        && op.as_fixed_nonallocatable().is_none()
                    {
                        *op = Operand::new(to, op.constraint(), op.kind(), op.pos());
                    }
                }
            }
            for args in &mut b.args {
                for a in args {
                    if *a == from {
                        *a = to;
                    }
                }
            }
        }
    }

    /// Positions `(block, index)` of every instruction but the blocks' last ones (the
    /// terminators, which only block-level steps remove), in layout order.
    fn body_positions(&self) -> Vec<(usize, usize)> {
        let mut out = vec![];
        for (b, block) in self.blocks.iter().enumerate() {
            for i in 0..block.insts.len().saturating_sub(1) {
                out.push((b, i));
            }
        }
        out
    }
}

/// Removes operand `k`, keeping the other operands' reuse indices pointing at the same
/// operands; a def that reused the removed operand becomes a plain `reg` def.
fn remove_operand(inst: &mut InstData, k: usize) {
    inst.operands.remove(k);
    for op in &mut inst.operands {
        if let OperandConstraint::Reuse(j) = op.constraint() {
            let c = match j.cmp(&k) {
                std::cmp::Ordering::Less => continue,
                std::cmp::Ordering::Equal => OperandConstraint::Reg,
                std::cmp::Ordering::Greater => OperandConstraint::Reuse(j - 1),
            };
            *op = Operand::new(op.vreg(), c, op.kind(), op.pos());
        }
    }
}

fn def_vregs(inst: &InstData) -> impl Iterator<Item = VReg> + '_ {
    inst.operands
        .iter()
        .filter(|op| op.kind() == OperandKind::Def && op.as_fixed_nonallocatable().is_none())
        .map(|op| op.vreg())
}

struct Shrinker<P> {
    cur: Shape,
    env: MachineEnv,
    pred: P,
    keep_valid: bool,
    calls: usize,
    budget: usize,
    accepted: usize,
    /// A candidate went unseen because the budget was spent.
    ran_out: bool,
}

impl<P: FnMut(&TestFunc, &MachineEnv) -> bool> Shrinker<P> {
    fn exhausted(&self) -> bool {
        self.calls >= self.budget
    }

    /// Shows `cand` to the predicate if it is valid (when validity is kept) and budget
    /// remains; adopts it if the predicate holds.
    fn try_candidate(&mut self, cand: Shape) -> bool {
        if self.exhausted() {
            self.ran_out = true;
            return false;
        }
        let f = cand.to_func();
        if self.keep_valid && validate_input(&f).is_err() {
            return false;
        }
        self.calls += 1;
        if (self.pred)(&f, &self.env) {
            self.cur = cand;
            self.accepted += 1;
            true
        } else {
            false
        }
    }

    /// Shows the current function with environment `env` to the predicate; adopts `env` if
    /// the predicate holds.
    fn try_env(&mut self, env: MachineEnv) -> bool {
        if self.exhausted() {
            self.ran_out = true;
            return false;
        }
        self.calls += 1;
        if (self.pred)(&self.cur.to_func(), &env) {
            self.env = env;
            self.accepted += 1;
            true
        } else {
            false
        }
    }

    fn run(&mut self) {
        loop {
            let before = self.accepted;
            self.shrink_env();
            self.drop_labels();
            self.cut_blocks();
            self.delete_instructions();
            self.delete_params();
            self.delete_operands();
            self.delete_clobbers();
            self.relax_constraints();
            self.usual_positions();
            if self.accepted == before || self.exhausted() {
                break;
            }
        }
        self.compact_vregs();
    }

    /// Drops the fixed stack slots, the scratch registers, and the registers of classes
    /// the function no longer names at all.
    fn shrink_env(&mut self) {
        if !self.env.fixed_stack_slots.is_empty() {
            let mut e = self.env.clone();
            e.fixed_stack_slots.clear();
            self.try_env(e);
        }
        let mut named = [false; 3];
        for b in &self.cur.blocks {
            for v in b.params.iter().chain(b.args.iter().flatten()) {
                named[v.class() as usize] = true;
            }
            for i in &b.insts {
                for op in &i.data.operands {
                    named[op.class() as usize] = true;
                }
                for p in i.data.clobbers {
                    named[p.class() as usize] = true;
                }
            }
        }
        for (c, named) in named.into_iter().enumerate() {
            if self.env.scratch_by_class[c].is_some() {
                let mut e = self.env.clone();
                e.scratch_by_class[c] = None;
                self.try_env(e);
            }
            let empty = self.env.preferred_regs_by_class[c] == PRegSet::empty()
                && self.env.non_preferred_regs_by_class[c] == PRegSet::empty();
            if !named && !empty {
                let mut e = self.env.clone();
                e.preferred_regs_by_class[c] = PRegSet::empty();
                e.non_preferred_regs_by_class[c] = PRegSet::empty();
                self.try_env(e);
            }
        }
    }

    fn drop_labels(&mut self) {
        if !self.cur.labels.is_empty() {
            let mut c = self.cur.clone();
            c.labels.clear();
            self.try_candidate(c);
        }
    }

    /// Returns instead of branching (whole subgraphs fall away), drops single edges of
    /// multi-way branches, and merges a block with a successor it alone reaches.
    fn cut_blocks(&mut self) {
        let mut b = 0;
        while b < self.cur.blocks.len() && !self.exhausted() {
            if !self.cur.blocks[b].succs.is_empty() {
                let mut c = self.cur.clone();
                for s in std::mem::take(&mut c.blocks[b].succs) {
                    c.unlink_pred(s, b);
                }
                c.blocks[b].args.clear();
                if let Some(last) = c.blocks[b].insts.last_mut() {
                    last.data.kind = InstKind::Ret;
                }
                c.prune_unreachable();
                self.try_candidate(c);
            }
            b += 1;
        }
        let mut b = 0;
        while b < self.cur.blocks.len() && !self.exhausted() {
            let mut k = 0;
            while k < self.cur.blocks[b].succs.len() && self.cur.blocks[b].succs.len() > 1 {
                let mut c = self.cur.clone();
                let s = c.blocks[b].succs.remove(k);
                if k < c.blocks[b].args.len() {
                    c.blocks[b].args.remove(k);
                }
                c.unlink_pred(s, b);
                c.prune_unreachable();
                if !self.try_candidate(c) {
                    k += 1;
                }
                if b >= self.cur.blocks.len() {
                    break;
                }
            }
            b += 1;
        }
        let mut b = 0;
        while b < self.cur.blocks.len() && !self.exhausted() {
            let merged = self.merged(b);
            if !merged.is_some_and(|c| self.try_candidate(c)) {
                b += 1;
            }
        }
    }

    /// `b` with its only successor `s` appended, when `b` is `s`'s only predecessor: `s`'s
    /// parameters become the arguments `b` passed. `b`'s terminator goes, unless it defines
    /// something, in which case it stays as a plain instruction.
    fn merged(&self, b: usize) -> Option<Shape> {
        let cur = &self.cur;
        let [s] = cur.blocks[b].succs[..] else {
            return None;
        };
        if s == b || s == cur.entry || cur.blocks[s].preds != [b] {
            return None;
        }
        let args = cur.blocks[b].args.first().cloned().unwrap_or_default();
        let params = cur.blocks[s].params.clone();
        if args.len() != params.len()
            || args
                .iter()
                .zip(&params)
                .any(|(a, p)| a.class() != p.class())
        {
            return None;
        }
        let mut c = cur.clone();
        for (&p, &a) in params.iter().zip(&args) {
            c.rename_uses(p, a);
        }
        let succ = std::mem::replace(
            &mut c.blocks[s],
            SBlock {
                params: vec![],
                insts: vec![],
                succs: vec![],
                preds: vec![],
                args: vec![],
            },
        );
        let block = &mut c.blocks[b];
        if let Some(mut term) = block.insts.pop()
            && def_vregs(&term.data).next().is_some()
        {
            term.data.kind = InstKind::Op;
            block.insts.push(term);
        }
        block.insts.extend(succ.insts);
        block.succs = succ.succs;
        block.args = succ.args;
        for t in block.succs.clone() {
            for p in &mut c.blocks[t].preds {
                if *p == s {
                    *p = b;
                }
            }
        }
        let keep: Vec<bool> = (0..c.blocks.len()).map(|x| x != s).collect();
        c.retain_blocks(&keep);
        Some(c)
    }

    /// Deletes runs of instructions (with every value they define), halving the run length
    /// from half the function down to one.
    fn delete_instructions(&mut self) {
        let mut n = (self.cur.body_positions().len() / 2).max(1);
        loop {
            let mut start = 0;
            while !self.exhausted() {
                let positions = self.cur.body_positions();
                if start >= positions.len() {
                    break;
                }
                let chunk = &positions[start..(start + n).min(positions.len())];
                let mut c = self.cur.clone();
                let mut values = vec![];
                // Backwards, so earlier indices in a block stay valid while removing.
                for &(b, i) in chunk.iter().rev() {
                    let inst = c.blocks[b].insts.remove(i);
                    values.extend(def_vregs(&inst.data));
                }
                c.delete_values(values);
                if !self.try_candidate(c) {
                    start += n;
                }
            }
            if n == 1 || self.exhausted() {
                break;
            }
            n /= 2;
        }
    }

    fn delete_params(&mut self) {
        for b in 0..self.cur.blocks.len() {
            let mut j = 0;
            while j < self.cur.blocks[b].params.len() && !self.exhausted() {
                let mut c = self.cur.clone();
                c.delete_values(vec![c.blocks[b].params[j]]);
                if !self.try_candidate(c) {
                    j += 1;
                }
            }
        }
    }

    /// Every instruction position, terminators included, in layout order.
    fn all_positions(&self) -> Vec<(usize, usize)> {
        let mut out = vec![];
        for (b, block) in self.cur.blocks.iter().enumerate() {
            for i in 0..block.insts.len() {
                out.push((b, i));
            }
        }
        out
    }

    fn delete_operands(&mut self) {
        for (b, i) in self.all_positions() {
            let mut k = 0;
            while k < self.cur.blocks[b].insts[i].data.operands.len() && !self.exhausted() {
                let op = self.cur.blocks[b].insts[i].data.operands[k];
                let mut c = self.cur.clone();
                if op.kind() == OperandKind::Def && op.as_fixed_nonallocatable().is_none() {
                    c.delete_values(vec![op.vreg()]);
                } else {
                    remove_operand(&mut c.blocks[b].insts[i].data, k);
                }
                if !self.try_candidate(c) {
                    k += 1;
                }
            }
        }
    }

    fn delete_clobbers(&mut self) {
        for (b, i) in self.all_positions() {
            let clobbers = self.cur.blocks[b].insts[i].data.clobbers;
            if clobbers == PRegSet::empty() || self.exhausted() {
                continue;
            }
            let mut c = self.cur.clone();
            c.blocks[b].insts[i].data.clobbers = PRegSet::empty();
            if self.try_candidate(c) {
                continue;
            }
            for p in clobbers {
                let mut c = self.cur.clone();
                c.blocks[b].insts[i].data.clobbers.remove(p);
                self.try_candidate(c);
            }
        }
    }

    fn relax_constraints(&mut self) {
        for (b, i) in self.all_positions() {
            for k in 0..self.cur.blocks[b].insts[i].data.operands.len() {
                let op = self.cur.blocks[b].insts[i].data.operands[k];
                if op.as_fixed_nonallocatable().is_some() {
                    continue;
                }
                for weaker in [OperandConstraint::Any, OperandConstraint::Reg] {
                    let now = self.cur.blocks[b].insts[i].data.operands[k].constraint();
                    if now == OperandConstraint::Any || now == weaker {
                        break;
                    }
                    let mut c = self.cur.clone();
                    c.blocks[b].insts[i].data.operands[k] =
                        Operand::new(op.vreg(), weaker, op.kind(), op.pos());
                    if self.try_candidate(c) {
                        break;
                    }
                }
            }
        }
    }

    fn usual_positions(&mut self) {
        for (b, i) in self.all_positions() {
            for k in 0..self.cur.blocks[b].insts[i].data.operands.len() {
                let op = self.cur.blocks[b].insts[i].data.operands[k];
                let usual = match op.kind() {
                    OperandKind::Def => OperandPos::Late,
                    OperandKind::Use => OperandPos::Early,
                };
                if op.pos() == usual || op.as_fixed_nonallocatable().is_some() {
                    continue;
                }
                let mut c = self.cur.clone();
                c.blocks[b].insts[i].data.operands[k] =
                    Operand::new(op.vreg(), op.constraint(), op.kind(), usual);
                self.try_candidate(c);
            }
        }
    }

    /// Renumbers vregs densely in order of first appearance (a cosmetic step, but one the
    /// allocators may see, hence a candidate like any other).
    fn compact_vregs(&mut self) {
        let mut map: Vec<Option<usize>> = vec![None; self.cur.num_vregs];
        let mut next = 0;
        let mut see = |v: VReg| {
            if let Some(slot) = map.get_mut(v.vreg())
                && slot.is_none()
            {
                *slot = Some(next);
                next += 1;
            }
        };
        for b in &self.cur.blocks {
            b.params.iter().for_each(|&v| see(v));
            for i in &b.insts {
                for op in &i.data.operands {
                    if op.as_fixed_nonallocatable().is_none() {
                        see(op.vreg());
                    }
                }
            }
            b.args.iter().flatten().for_each(|&v| see(v));
        }
        let identity = map
            .iter()
            .enumerate()
            .all(|(i, m)| m.is_none_or(|m| m == i));
        if identity && next == self.cur.num_vregs {
            return;
        }
        let rename = |v: VReg| match map.get(v.vreg()).copied().flatten() {
            Some(n) => VReg::new(n, v.class()),
            None => v,
        };
        let mut c = self.cur.clone();
        // Every vreg the function names is below `next` after renaming.
        c.num_vregs = next;
        for b in &mut c.blocks {
            b.params.iter_mut().for_each(|v| *v = rename(*v));
            for i in &mut b.insts {
                for op in &mut i.data.operands {
                    if op.as_fixed_nonallocatable().is_none() {
                        *op = Operand::new(rename(op.vreg()), op.constraint(), op.kind(), op.pos());
                    }
                }
            }
            b.args.iter_mut().flatten().for_each(|v| *v = rename(*v));
        }
        c.labels
            .retain(|l| map.get(l.0.vreg()).copied().flatten().is_some());
        c.labels.iter_mut().for_each(|l| l.0 = rename(l.0));
        self.try_candidate(c);
    }
}

/// Shrinks `func` while `pred(candidate, env)` holds, with at most `budget` predicate calls
/// (the first one, on `func` itself, included). If `func` is a valid regalloc2 input,
/// every candidate is validated before the predicate sees it. A predicate that runs an
/// allocator should catch panics itself if a panic is not what it looks for: candidates are
/// valid inputs, but ion panics on some valid over-constrained ones.
pub fn shrink<P>(func: &TestFunc, env: &MachineEnv, budget: usize, mut pred: P) -> Shrunk
where
    P: FnMut(&TestFunc, &MachineEnv) -> bool,
{
    let unchanged = |held, calls| Shrunk {
        func: func.clone(),
        env: env.clone(),
        held,
        calls,
        accepted: 0,
        fixpoint: false,
    };
    if budget == 0 {
        return unchanged(false, 0);
    }
    if !pred(func, env) {
        return unchanged(false, 1);
    }
    if !well_laid_out(func) {
        return unchanged(true, 1);
    }
    let mut s = Shrinker {
        cur: Shape::from_func(func),
        env: env.clone(),
        pred,
        keep_valid: validate_input(func).is_ok(),
        calls: 1,
        budget,
        accepted: 0,
        ran_out: false,
    };
    s.run();
    let fixpoint = !s.ran_out;
    Shrunk {
        func: if s.accepted == 0 {
            func.clone()
        } else {
            s.cur.to_func()
        },
        env: s.env,
        held: true,
        calls: s.calls,
        accepted: s.accepted,
        fixpoint,
    }
}
