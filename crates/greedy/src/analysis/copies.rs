//! Copies between values (block parameter ↔ branch argument, reuse def ↔ input) and
//! fixed-register operands, weighted by block frequency: the preferences every
//! allocator may read (register hints, spill weights, shared spill slots), computed
//! from the function alone.

use super::intervals::Segment;
use super::loops::BlockFrequency;
use regalloc2::{Function, Inst, OperandConstraint, OperandKind, PReg, VReg};

/// Copy ends below which `Partners::compute` sorts them all at once.
const SORT_ALL_BELOW: usize = 256;

/// Copy-related partners of each vreg (block-param edges, reuse pairs) with the
/// frequency of the copy, for hints and hint-aware weights; each vreg's partners are
/// sorted by that frequency, strongest first.
#[derive(Default)]
pub(crate) struct Partners {
    range: Vec<(u32, u32)>,
    list: Vec<(VReg, f32)>,
    raw: Vec<(u32, (VReg, f32))>,
    /// `raw` grouped by its first vreg (at `site_range`, as `raw_sites` is), each group
    /// sorted by partner; unused when `raw` is sorted whole.
    grouped: Vec<(VReg, f32)>,
    /// The vregs in some copy, in order of first appearance; between calls, those of the
    /// last function, the only entries of `range` and `site_range` not `(0, 0)`.
    touched: Vec<u32>,
    /// Per vreg, its copies as (program point, frequency), sorted by point: the point
    /// lies in the segment of the vreg that takes part in the copy, so a piece of a split
    /// value can weigh only the copies it holds.
    site_range: Vec<(u32, u32)>,
    sites: Vec<(u32, f32)>,
    raw_sites: Vec<(u32, (u32, f32))>,
    /// Every copy in program order (block by block: reuse pairs, then the block's branch
    /// arguments), then the sibling reuse copies, each end with the point where it is
    /// read or written.
    pub copies: Vec<CopySite>,
    /// Every fixed-register operand in program order: the value, the point where it is
    /// in that register, the register and the block frequency.
    pub fixed: Vec<(VReg, u32, PReg, f32)>,
    /// Weigh a merge block's parameter by its block's frequency at most over all its
    /// incoming copies (set from `Options::join_stores`, which stores a spilled one once
    /// at the block's start rather than on every edge).
    pub join_params_once: bool,
    /// Record a copy between the reuse defs that sibling blocks start with when they
    /// reuse the same input (`pair_sibling_reuses`; set from
    /// `Options::sibling_reuse_copies`).
    pub sibling_reuses: bool,
    /// Weigh a copy on an edge block laid out right after its branch by the frequency
    /// of the branch's other successors as well (`fallthrough_cost`; set from
    /// `Options::fallthrough_copies`).
    pub fallthrough_copies: bool,
    /// The copies `fallthrough_cost` weighed up in the last `compute`.
    pub fallthrough_weighted: usize,
    /// Successors of branches that start with a reuse: (branch block, input, reuse def,
    /// the def's point), between `note_sibling_reuse` and `pair_sibling_reuses`.
    siblings: Vec<(u32, VReg, VReg, u32)>,
    /// Per block with several predecessors: the sum of their frequencies.
    in_freq: Vec<f32>,
}

/// One copy between two values: `a` at point `at_a`, `b` at `at_b`.
#[derive(Clone, Copy)]
pub(crate) struct CopySite {
    pub a: VReg,
    pub at_a: u32,
    pub b: VReg,
    pub at_b: u32,
    pub freq: f32,
}

impl Partners {
    #[inline]
    pub fn of(&self, v: VReg) -> &[(VReg, f32)] {
        let (a, b) = self.range[v.vreg()];
        &self.list[a as usize..b as usize]
    }

    /// Σ frequency of `v`'s copies at points inside `segments` (sorted, disjoint).
    pub fn copy_freq_in(&self, v: VReg, segments: &[Segment]) -> f32 {
        let (a, b) = self.site_range[v.vreg()];
        let sites = &self.sites[a as usize..b as usize];
        if sites.is_empty() {
            return 0.0;
        }
        let mut sum = 0.0;
        // Segments are sorted, so a cursor finds each one's first site: one walk over
        // the sites (a binary search per segment cost a value through hundreds of
        // blocks more than its handful of copies).
        let mut lo = 0;
        for s in segments {
            while lo < sites.len() && sites[lo].0 < s.start {
                lo += 1;
            }
            if lo == sites.len() {
                break;
            }
            sum += sites[lo..]
                .iter()
                .take_while(|&&(p, _)| p < s.end)
                .map(|&(_, f)| f)
                .sum::<f32>();
        }
        sum
    }

    /// Records every copy and fixed-register operand of `f`, weighted by `freq`.
    pub fn compute<F: Function + ?Sized>(&mut self, f: &F, freq: &BlockFrequency) {
        self.record(f, freq, None);
    }

    /// `compute`, visiting only `insts`: every instruction of `f` with a reuse or
    /// fixed-register operand, in order (`Liveness::copy_or_fixed_insts`). The others
    /// record nothing.
    pub fn compute_listed<F: Function + ?Sized>(
        &mut self,
        f: &F,
        freq: &BlockFrequency,
        insts: &[Inst],
    ) {
        self.record(f, freq, Some(insts));
    }

    fn record<F: Function + ?Sized>(
        &mut self,
        f: &F,
        freq: &BlockFrequency,
        listed: Option<&[Inst]>,
    ) {
        let p = self;
        p.raw.clear();
        p.raw_sites.clear();
        p.copies.clear();
        p.fixed.clear();
        p.fallthrough_weighted = 0;
        let mut next_listed = 0;
        let freq_of = |b: regalloc2::Block| freq.of(b);
        let mut in_freq = std::mem::take(&mut p.in_freq);
        in_freq.clear();
        if p.join_params_once {
            in_freq.extend((0..f.num_blocks()).map(|b| {
                let preds = f.block_preds(regalloc2::Block::new(b));
                if preds.len() > 1 {
                    preds.iter().map(|&q| freq_of(q)).sum()
                } else {
                    0.0
                }
            }));
        }
        for b in 0..f.num_blocks() {
            let block = regalloc2::Block::new(b);
            let insns = f.block_insns(block);
            let freq = freq.of(block);
            let last = insns.last();
            match listed {
                None => {
                    for inst in insns.iter() {
                        p.record_inst(f, inst, freq);
                    }
                }
                Some(list) => {
                    while let Some(&inst) = list.get(next_listed)
                        && inst <= last
                    {
                        p.record_inst(f, inst, freq);
                        next_listed += 1;
                    }
                }
            }
            if p.sibling_reuses {
                p.note_sibling_reuse(f, block);
            }
            if f.is_branch(last) {
                let broken = if p.fallthrough_copies {
                    fallthrough_cost(f, freq_of, block)
                } else {
                    0.0
                };
                // Hints and hint recoloring weigh the move (the edge's frequency plus what a
                // broken fallthrough costs); the spill weight (`raw_sites`) the edge's
                // frequency alone.
                let succs = f.block_succs(block);
                for (i, &succ) in succs.iter().enumerate() {
                    let params = f.block_params(succ);
                    // The edge's frequency: a branch to several successors has its edge
                    // moves at each successor's start (none has another predecessor), so a
                    // loop's exit edge runs as often as the block after the loop, not as
                    // the loop's branch.
                    let edge_freq = if succs.len() > 1 {
                        freq.min(freq_of(succ))
                    } else {
                        freq
                    };
                    let copy_freq = edge_freq + broken;
                    // The argument is live out of this block (through its branch), the
                    // parameter from the successor's first point.
                    let arg_point = 2 * last.index() as u32 + 1;
                    let param_point = 2 * f.block_insns(succ).first().index() as u32;
                    // Spilled, a merge block's parameter costs a store at its start (the
                    // edit builder's join stores), not one per edge: its copies' share of
                    // its spill weight is scaled to the block's frequency when the edges
                    // are more frequent together.
                    let param_freq = match in_freq.get(succ.index()) {
                        Some(&total) if total > 0.0 => {
                            edge_freq * (2.0 * freq_of(succ) / total).min(1.0)
                        }
                        _ => edge_freq,
                    };
                    for (&arg, &param) in f.branch_blockparams(block, last, i).iter().zip(params) {
                        // A value passed back to itself (a loop-carried value the loop
                        // does not change, as a parameter of its header) moves nothing
                        // wherever it lives: counted, each back edge added its frequency
                        // to the value's spill weight twice over, and the values a hot
                        // loop only carries outweighed the ones it uses.
                        if arg == param {
                            continue;
                        }
                        if broken > 0.0 {
                            p.fallthrough_weighted += 1;
                        }
                        p.raw.push((arg.vreg() as u32, (param, copy_freq)));
                        p.raw.push((param.vreg() as u32, (arg, copy_freq)));
                        p.raw_sites
                            .push((arg.vreg() as u32, (arg_point, edge_freq)));
                        p.raw_sites
                            .push((param.vreg() as u32, (param_point, param_freq)));
                        p.copies.push(CopySite {
                            a: arg,
                            at_a: arg_point,
                            b: param,
                            at_b: param_point,
                            freq: copy_freq,
                        });
                    }
                }
            }
        }
        if p.sibling_reuses {
            p.pair_sibling_reuses(freq);
        }
        p.in_freq = in_freq;
        // `raw` and `raw_sites` are pushed in pairs keyed by the same vreg, so one count
        // places both, and past it only the vregs in some copy (`touched`) are visited:
        // medium functions have several times more vregs than instructions.
        // Vregs far outnumber copies in most functions: only the last function's entries
        // are cleared, not every vreg's.
        let nv = f.num_vregs();
        for &v in &p.touched {
            if let Some(r) = p.site_range.get_mut(v as usize) {
                *r = (0, 0);
            }
            if let Some(r) = p.range.get_mut(v as usize) {
                *r = (0, 0);
            }
        }
        debug_assert!(p.site_range.iter().chain(&p.range).all(|&r| r == (0, 0)));
        // Longer tables than `nv` are kept: cut, they would be filled again by the next
        // larger function.
        if p.site_range.len() < nv {
            p.site_range.resize(nv, (0, 0));
            p.range.resize(nv, (0, 0));
        }
        p.touched.clear();
        for &(v, _) in &p.raw_sites {
            let r = &mut p.site_range[v as usize];
            if r.1 == 0 {
                p.touched.push(v);
            }
            r.1 += 1;
        }
        let mut start = 0;
        for &v in &p.touched {
            let r = &mut p.site_range[v as usize];
            let n = r.1;
            *r = (start, start);
            start += n;
        }
        // Few copies: one sort. Many: the counting sort above, then each vreg's few copies
        // by partner (a sort of every copy was a visible part of setting up big
        // functions). Either way each vreg's copies come out sorted by partner, and the
        // small path keeps the global sort's order of equal copies (it decides how their
        // frequencies round when summed).
        let sort_all = p.raw.len() < SORT_ALL_BELOW;
        p.sites.clear();
        p.grouped.clear();
        if let Some(&(_, site)) = p.raw_sites.first() {
            p.sites.resize(p.raw_sites.len(), site);
            if sort_all {
                for &(v, site) in &p.raw_sites {
                    let r = &mut p.site_range[v as usize];
                    p.sites[r.1 as usize] = site;
                    r.1 += 1;
                }
            } else {
                p.grouped.resize(p.raw.len(), p.raw[0].1);
                for (&(v, site), &(_, copy)) in p.raw_sites.iter().zip(&p.raw) {
                    let r = &mut p.site_range[v as usize];
                    p.sites[r.1 as usize] = site;
                    p.grouped[r.1 as usize] = copy;
                    r.1 += 1;
                }
            }
        }
        p.list.clear();
        for &v in &p.touched {
            let (a, b) = p.site_range[v as usize];
            let (a, b) = (a as usize, b as usize);
            if b - a > 1 {
                p.sites[a..b].sort_unstable_by_key(|&(point, _)| point);
            }
            if !sort_all {
                if b - a > 1 {
                    p.grouped[a..b].sort_unstable_by_key(|&(w, _)| w.vreg());
                }
                p.range[v as usize] = merge_partners(&mut p.list, p.grouped[a..b].iter().copied());
            }
        }
        if sort_all {
            p.raw.sort_unstable_by_key(|&(v, (w, _))| (v, w.vreg()));
            for run in p.raw.chunk_by(|x, y| x.0 == y.0) {
                p.range[run[0].0 as usize] =
                    merge_partners(&mut p.list, run.iter().map(|&(_, c)| c));
            }
        }
    }

    /// Sibling reuse copies, first half: notes block `block` if it is a successor of a
    /// branch (entered only from it: the CFG has no critical edges) whose first
    /// instruction reuses an input. Its copies were recorded last (`record_inst`).
    fn note_sibling_reuse<F: Function + ?Sized>(&mut self, f: &F, block: regalloc2::Block) {
        // The reuse pairs of the block's first instruction, if any, are among the last
        // copies recorded (a block's instructions come before its branch's copies): most
        // blocks stop at the first look, at a copy of an earlier block.
        let at = 2 * f.block_insns(block).first().index() as u32 + 1;
        let mut reuses = self
            .copies
            .iter()
            .rev()
            .skip_while(|c| c.at_a > at)
            .take_while(|c| c.at_a == at)
            .peekable();
        if reuses.peek().is_none() {
            return;
        }
        let &[pred] = f.block_preds(block) else {
            return;
        };
        if f.block_succs(pred).len() < 2 {
            return;
        }
        let pred = pred.index() as u32;
        self.siblings.extend(reuses.map(|c| (pred, c.b, c.a, at)));
    }

    /// Sibling reuse copies, second half: where successors of one branch start with a
    /// reuse of the same input, the copies into the reuse defs are one move before the
    /// branch if the defs share a register (the edit builder hoists a move every
    /// successor makes on entry). Each such pair of defs becomes a copy of the branch
    /// block's frequency, for hints and hint recoloring; it weighs nothing in spill
    /// weights (a spilled def saves no move).
    fn pair_sibling_reuses(&mut self, freq: &BlockFrequency) {
        if self.siblings.len() < 2 {
            self.siblings.clear();
            return;
        }
        self.siblings
            .sort_unstable_by_key(|&(pred, input, _, at)| (pred, input.vreg(), at));
        for k in 1..self.siblings.len() {
            let (pred, input, a, at_a) = self.siblings[k - 1];
            let (other_pred, other, b, at_b) = self.siblings[k];
            if (pred, input) != (other_pred, other) || a == b {
                continue;
            }
            let freq = freq.of(regalloc2::Block::new(pred as usize));
            self.raw.push((a.vreg() as u32, (b, freq)));
            self.raw.push((b.vreg() as u32, (a, freq)));
            self.raw_sites.push((a.vreg() as u32, (at_a, 0.0)));
            self.raw_sites.push((b.vreg() as u32, (at_b, 0.0)));
            self.copies.push(CopySite {
                a,
                at_a,
                b,
                at_b,
                freq,
            });
        }
        self.siblings.clear();
    }

    /// Records the reuse pairs and fixed-register operands of `inst`, in a block of
    /// frequency `freq`.
    #[inline]
    fn record_inst<F: Function + ?Sized>(&mut self, f: &F, inst: Inst, freq: f32) {
        let p = self;
        let ops = f.inst_operands(inst);
        for op in ops {
            match op.constraint() {
                OperandConstraint::Reuse(j) => {
                    let input = ops[j].vreg();
                    p.raw.push((op.vreg().vreg() as u32, (input, freq)));
                    p.raw.push((input.vreg() as u32, (op.vreg(), freq)));
                    // The input is read at the early point, the def written late.
                    let early = 2 * inst.index() as u32;
                    p.raw_sites
                        .push((op.vreg().vreg() as u32, (early + 1, freq)));
                    p.raw_sites.push((input.vreg() as u32, (early, freq)));
                    p.copies.push(CopySite {
                        a: op.vreg(),
                        at_a: early + 1,
                        b: input,
                        at_b: early,
                        freq,
                    });
                }
                OperandConstraint::FixedReg(reg) if op.as_fixed_nonallocatable().is_none() => {
                    // A fixed def's value is in its register after the instruction.
                    let at =
                        2 * inst.index() as u32 + if op.kind() == OperandKind::Def { 2 } else { 0 };
                    p.fixed.push((op.vreg(), at, reg, freq));
                }
                _ => {}
            }
        }
    }
}

/// Appends one vreg's copies (sorted by partner) to `list`, summing those with the same
/// partner, strongest first; returns their range in `list`.
fn merge_partners(
    list: &mut Vec<(VReg, f32)>,
    copies: impl Iterator<Item = (VReg, f32)>,
) -> (u32, u32) {
    let start = list.len();
    for (w, freq) in copies {
        let len = list.len();
        match list.last_mut() {
            Some(last) if len > start && last.0 == w => last.1 += freq,
            _ => list.push((w, freq)),
        }
    }
    // Strongest copies first: hints read only the head of the list.
    list[start..].sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    (start as u32, list.len() as u32)
}

/// What a move on edge block `e` costs beyond itself: the frequency of every other
/// successor of `e`'s branch, when `e` is laid out right after that branch. Cranelift
/// emits blocks in index order and drops a block that only jumps; one holding a move
/// stays, as the branch's fallthrough, and the way into each other successor (a hot
/// loop's next iteration, where `e` is its exit) becomes a taken branch. Charged at the
/// lower of the branch's frequency and the successor's, as much as a move there:
/// shootout-heapsort's sift-down loop, allocated with two moves fewer per iteration than
/// ion's but two more taken branches, ran about 5% slower than ion's code.
/// Zero for any other block.
fn fallthrough_cost<F: Function + ?Sized>(
    f: &F,
    freq_of: impl Fn(regalloc2::Block) -> f32,
    e: regalloc2::Block,
) -> f32 {
    // An edge block: one predecessor, one successor, nothing but its jump.
    let &[p] = f.block_preds(e) else {
        return 0.0;
    };
    if p.index() + 1 != e.index() || f.block_succs(e).len() != 1 || f.block_insns(e).len() != 1 {
        return 0.0;
    }
    let at_branch = freq_of(p);
    f.block_succs(p)
        .iter()
        .filter(|&&s| s != e)
        .map(|&s| freq_of(s).min(at_branch))
        .sum()
}
