//! The weighted cost of one allocation, exactly as `docs/metrics.md` defines it: block frequency
//! `10^min(loop_depth, 6)` from natural loops (back edges to a dominator), edit costs
//! reg→reg 1, reg→stack 2, stack→reg 2, stack→stack 4 times the frequency of the edit's
//! block, plus 4 per distinct non-preferred register used anywhere (allocs or edits).
//!
//! It has its own small CFG analysis (Cooper–Harvey–Kennedy dominators over a reverse
//! postorder, natural loops by backward walk from each back edge's source) so the metric
//! never depends on the allocator being measured. Unreachable blocks get depth 0.

use regalloc2::{Allocation, Block, Edit, Function, MachineEnv, Output, PRegSet};

/// Weighted cost and the plain counts reported beside it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// The docs/metrics.md weighted cost.
    pub weighted: u64,
    /// Register→register moves (count, unweighted).
    pub moves: usize,
    /// Register→stack moves.
    pub spills: usize,
    /// Stack→register moves.
    pub reloads: usize,
    /// Stack→stack moves (should be 0: the checker rejects them).
    pub stack_moves: usize,
    pub num_spillslots: usize,
    /// Distinct non-preferred registers used anywhere.
    pub non_preferred_regs: usize,
    /// `weighted` split by what it pays for: register→register moves, stores (reg→stack),
    /// reloads (stack→reg), stack→stack moves, and callee-saved (non-preferred) registers.
    /// The five always sum to `weighted`.
    pub parts: CostParts,
}

/// The parts of a weighted cost (see [`Cost::parts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostParts {
    pub moves: u64,
    pub spills: u64,
    pub reloads: u64,
    pub stack_moves: u64,
    pub callee_saved: u64,
}

impl std::ops::AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        self.weighted += o.weighted;
        self.moves += o.moves;
        self.spills += o.spills;
        self.reloads += o.reloads;
        self.stack_moves += o.stack_moves;
        self.num_spillslots += o.num_spillslots;
        self.non_preferred_regs += o.non_preferred_regs;
        self.parts.moves += o.parts.moves;
        self.parts.spills += o.parts.spills;
        self.parts.reloads += o.parts.reloads;
        self.parts.stack_moves += o.parts.stack_moves;
        self.parts.callee_saved += o.parts.callee_saved;
    }
}

/// Maximum loop depth that still raises the frequency.
pub const MAX_FREQ_DEPTH: u32 = 6;

/// The cost of `out` as an allocation of `func` in `env`.
pub fn cost<F: Function + ?Sized>(func: &F, env: &MachineEnv, out: &Output) -> Cost {
    let depth = loop_depths(func);
    let freq: Vec<u64> = depth
        .iter()
        .map(|&d| 10u64.pow(d.min(MAX_FREQ_DEPTH)))
        .collect();
    let fixed_stack: PRegSet = env.fixed_stack_slots.iter().copied().collect();
    let is_stack = |a: Allocation| match a.as_reg() {
        Some(r) => fixed_stack.contains(r),
        None => a.is_stack(),
    };
    let mut c = Cost {
        num_spillslots: out.num_spillslots,
        ..Cost::default()
    };
    // Edits are sorted by point; walk blocks alongside them instead of searching per edit.
    let block_of_inst = inst_blocks(func);
    for &(pt, Edit::Move { from, to }) in &out.edits {
        let f = block_of_inst
            .get(pt.inst().index())
            .and_then(|b| b.map(|b| freq[b.index()]))
            .unwrap_or(1);
        let (unit, part) = match (is_stack(from), is_stack(to)) {
            (false, false) => {
                c.moves += 1;
                (1, &mut c.parts.moves)
            }
            (false, true) => {
                c.spills += 1;
                (2, &mut c.parts.spills)
            }
            (true, false) => {
                c.reloads += 1;
                (2, &mut c.parts.reloads)
            }
            (true, true) => {
                c.stack_moves += 1;
                (4, &mut c.parts.stack_moves)
            }
        };
        *part += unit * f;
        c.weighted += unit * f;
    }
    let mut non_pref = PRegSet::empty();
    for npr in &env.non_preferred_regs_by_class {
        non_pref.union_from(*npr);
    }
    let mut used = PRegSet::empty();
    let mut note = |a: Allocation| {
        if let Some(r) = a.as_reg()
            && non_pref.contains(r)
        {
            used.add(r);
        }
    };
    out.allocs.iter().copied().for_each(&mut note);
    for &(_, Edit::Move { from, to }) in &out.edits {
        note(from);
        note(to);
    }
    c.non_preferred_regs = used.into_iter().count();
    c.parts.callee_saved = 4 * c.non_preferred_regs as u64;
    c.weighted += c.parts.callee_saved;
    c
}

/// Broken fallthroughs: not part of the weighted cost, a diagnostic beside it. Cranelift
/// emits blocks in index order and drops a block that only jumps, so an edge block (one
/// predecessor, one successor, nothing but its jump) that receives an edit stays in the
/// code; laid out right after its predecessor's branch, it becomes that branch's
/// fallthrough and the way into each other successor a taken branch. Sums, over such
/// edge blocks with an edit, the frequency (as in [`cost`]) of each other successor of
/// the branch, capped at the branch's own: a hot loop's way round made a taken branch by
/// a move on its exit edge counts its loop's frequency.
pub fn broken_fallthroughs<F: Function + ?Sized>(func: &F, out: &Output) -> u64 {
    let depth = loop_depths(func);
    let freq = |b: Block| 10u64.pow(depth[b.index()].min(MAX_FREQ_DEPTH));
    let block_of_inst = inst_blocks(func);
    let mut edited = vec![false; func.num_blocks()];
    for (pt, _) in &out.edits {
        if let Some(Some(b)) = block_of_inst.get(pt.inst().index()) {
            edited[b.index()] = true;
        }
    }
    let mut broken = 0;
    for e in (1..func.num_blocks()).map(Block::new) {
        let &[p] = func.block_preds(e) else {
            continue;
        };
        if !edited[e.index()]
            || p.index() + 1 != e.index()
            || func.block_succs(e).len() != 1
            || func.block_insns(e).len() != 1
        {
            continue;
        }
        broken += func
            .block_succs(p)
            .iter()
            .filter(|&&s| s != e)
            .map(|&s| freq(s).min(freq(p)))
            .sum::<u64>();
    }
    broken
}

/// For each instruction, its block (None for instructions in no block's range).
fn inst_blocks<F: Function + ?Sized>(func: &F) -> Vec<Option<Block>> {
    let mut v = vec![None; func.num_insts()];
    for b in 0..func.num_blocks() {
        for i in func.block_insns(Block::new(b)).iter() {
            if let Some(slot) = v.get_mut(i.index()) {
                *slot = Some(Block::new(b));
            }
        }
    }
    v
}

/// The CFG facts the metric (and the input validator) need: successors/predecessors derived
/// from `block_succs` only (out-of-range successors dropped), reverse postorder from the entry,
/// immediate dominators (Cooper–Harvey–Kennedy) and reachability.
pub struct Cfg {
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
    pub rpo: Vec<usize>,
    /// `usize::MAX` for unreachable blocks; the entry is its own idom.
    pub idom: Vec<usize>,
    pub reachable: Vec<bool>,
    pub entry: usize,
}

impl Cfg {
    /// Build from any function; never panics on out-of-range ids (they are ignored; an
    /// out-of-range entry yields an empty analysis with nothing reachable).
    pub fn new<F: Function + ?Sized>(func: &F) -> Cfg {
        let n = func.num_blocks();
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|b| {
                func.block_succs(Block::new(b))
                    .iter()
                    .map(|s| s.index())
                    .filter(|&s| s < n)
                    .collect()
            })
            .collect();
        let mut preds = vec![vec![]; n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        let entry = func.entry_block().index();
        let mut cfg = Cfg {
            succs,
            preds,
            rpo: vec![],
            idom: vec![usize::MAX; n],
            reachable: vec![false; n],
            entry,
        };
        if entry >= n {
            return cfg;
        }
        // Iterative DFS postorder.
        let mut postorder = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = vec![(entry, 0)];
        cfg.reachable[entry] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if *i < cfg.succs[b].len() {
                let s = cfg.succs[b][*i];
                *i += 1;
                if !cfg.reachable[s] {
                    cfg.reachable[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(b);
                stack.pop();
            }
        }
        cfg.rpo = postorder.into_iter().rev().collect();
        let mut rpo_num = vec![usize::MAX; n];
        for (i, &b) in cfg.rpo.iter().enumerate() {
            rpo_num[b] = i;
        }
        let idom = &mut cfg.idom;
        idom[entry] = entry;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.rpo.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &cfg.preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while rpo_num[x] > rpo_num[y] {
                                x = idom[x];
                            }
                            while rpo_num[y] > rpo_num[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if new != idom[b] {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        cfg
    }

    /// Does `h` dominate `b`? (False if either is unreachable.)
    pub fn dominates(&self, h: usize, mut b: usize) -> bool {
        if !self.reachable[h] || !self.reachable[b] {
            return false;
        }
        loop {
            if b == h {
                return true;
            }
            if b == self.entry {
                return false;
            }
            b = self.idom[b];
        }
    }
}

/// Loop depth of every block: the number of natural loops containing it. Back edges
/// `u -> h` with `h` dominating `u`; edges to the same header form one loop.
pub fn loop_depths<F: Function + ?Sized>(func: &F) -> Vec<u32> {
    let cfg = Cfg::new(func);
    let n = func.num_blocks();
    let mut depth = vec![0u32; n];
    // Natural loop per header: union of the bodies of all its back edges.
    let mut in_loop = vec![usize::MAX; n]; // marker: header of the loop being collected
    for &h in &cfg.rpo {
        let latches: Vec<usize> = cfg.preds[h]
            .iter()
            .copied()
            .filter(|&u| cfg.dominates(h, u))
            .collect();
        if latches.is_empty() {
            continue;
        }
        in_loop[h] = h;
        depth[h] += 1;
        let mut work = latches;
        while let Some(u) = work.pop() {
            if in_loop[u] == h {
                continue;
            }
            in_loop[u] = h;
            depth[u] += 1;
            for &p in &cfg.preds[u] {
                if cfg.reachable[p] && in_loop[p] != h {
                    work.push(p);
                }
            }
        }
    }
    depth
}

/// `10^min(depth, 6)` for every block.
pub fn block_frequencies<F: Function + ?Sized>(func: &F) -> Vec<u64> {
    loop_depths(func)
        .into_iter()
        .map(|d| 10u64.pow(d.min(MAX_FREQ_DEPTH)))
        .collect()
}

/// Geometric mean (`None` for no values): how every ratio against ion is aggregated, so that
/// a function twice as costly and one half as costly cancel out.
pub fn geomean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        s += x.ln();
        n += 1;
    }
    (n > 0).then(|| (s / n as f64).exp())
}
