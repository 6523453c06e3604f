//! Copy-only values follow their partners to the stack (`Options::copy_spilling`), after
//! hint recoloring. A value none of whose operands needs a register — a block parameter
//! only passed on as a branch argument, a Wasm local carried through a merge block — is
//! placed by the main loop like any other, and a free register is where it lands. When
//! the values it is copied from and to live on the stack, that register costs a reload on
//! each edge in and a store on each edge out, where the slot would cost nothing: the
//! partner slots (`slots::sharing`) put copy partners in one slot and the copy becomes a
//! self-move. ion gets this by merging block parameters with their arguments into one
//! bundle before allocating; LLVM by coalescing the copies away before greedy runs.
//!
//! Each candidate (a value with one piece, in a register, no operand needing one) weighs
//! its copies and fixed operands where its partners are now: in its own register 0,
//! another register a move, the stack a load or store; on the stack, a partner in a
//! register costs a load or store, one on the stack nothing if their live segments are
//! disjoint (the slots can merge) and a load and a store otherwise. It moves to the stack
//! when that is strictly cheaper. Candidates are revisited while some moved, at most
//! `MAX_PASSES` times: one leaving for the stack can tip its neighbour in a chain.
//!
//! A chain whose two ends meet spilled partners never tips that way (each member alone
//! pays a load or store to leave its neighbours in registers): the candidates left in
//! registers are then labelled chain by chain by a minimum cut (`Options::
//! copy_spill_chains`). The registers the pass empties, and where, are handed to
//! unspilling, which runs next with `Options::unspill_copy_freed`.

use super::Allocator;
use super::interval::{IntervalId, IntervalKind};
use crate::analysis::intervals::Segment;
use crate::union_find::find;
use log::debug;
use regalloc2::{Function, PReg, PRegSet, VReg};

const MAX_PASSES: usize = 3;
/// A partner with more pieces than this is not looked up (its location counts as
/// unknown, the same on both sides).
const MAX_PIECES: usize = 32;
const NONE: u32 = u32::MAX;
/// Chains of more copy-only values than this are not labelled (the cut's graph is a
/// square matrix over the members).
const MAX_CHAIN: usize = 64;
/// Marks an `index_of` entry as a member's place in the chain being labelled.
const CHAIN_BIT: u32 = 1 << 31;
/// Points per bucket of `CopySpillScratch::freed_prefix`.
const FREED_BUCKET: usize = 64;
/// Capacities and costs below this count as zero (sums of `f32` frequencies in `f64`).
const EPSILON: f64 = 1e-9;

/// Buffers kept across functions.
#[derive(Default)]
pub(crate) struct CopySpillScratch {
    /// The candidate intervals.
    candidates: Vec<IntervalId>,
    /// Per vreg index: its index in `candidates`, or `NONE`. Only candidates' entries
    /// are set, and they are reset before returning.
    index_of: Vec<u32>,
    /// (candidate index, partner, point where the partner takes part, frequency).
    copies: Vec<(u32, VReg, u32, f32)>,
    /// Per candidate, its range in `copies`.
    copy_range: Vec<(u32, u32)>,
    /// (candidate index, fixed register, frequency).
    fixed: Vec<(u32, PReg, f32)>,
    fixed_range: Vec<(u32, u32)>,
    /// Union-find over candidate indices: the chains of copy-connected candidates.
    chain_of: Vec<u32>,
    /// (chain root, candidate index), sorted by chain.
    members: Vec<(u32, u32)>,
    /// Per member, the cost of its copies and fixed operands outside the chain: (in its
    /// register, on the stack).
    unary: Vec<(f64, f64)>,
    /// Copies inside the chain: (member, member, frequency, cost with both on the stack).
    pairs: Vec<(u32, u32, f64, f64)>,
    /// Per candidate, whether a partner of it was on the stack when it was last weighed.
    stack_partner: Vec<bool>,
    /// Per entry of `pairs`, its two values.
    pair_vregs: Vec<(VReg, VReg)>,
    cut: Cut,
    /// The registers that values moved to the stack left, and the runs they left
    /// there as (register, start, end).
    freed: PRegSet,
    freed_runs: Vec<(PReg, u32, u32)>,
    /// Where those registers were left, by bucket (`FREED_BUCKET` points): per freed
    /// register (its row in `freed_row`), the number of buckets before each where it
    /// was, one row of `buckets + 1` entries per register.
    freed_prefix: Vec<u32>,
    freed_row: Vec<u8>,
    freed_cover: Vec<i32>,
    buckets: usize,
}

/// One chain's minimum cut, buffers kept across chains and functions.
#[derive(Default)]
struct Cut {
    /// Capacities as a square matrix over the members, the source (register side) and
    /// the sink (stack side); residual capacities once the flow is pushed.
    cap: Vec<f64>,
    /// Search queue and predecessors of the flow's walks (the queue is also the
    /// labelling walk's stack).
    queue: Vec<usize>,
    pred: Vec<usize>,
    /// Per node, on the stack side; the members' labels once `label` returns.
    on_stack: Vec<bool>,
}

impl Cut {
    /// Labels members `0..unary.len()` at the least `chain_total` (`on_stack`), ties
    /// keeping the register.
    fn label(&mut self, unary: &[(f64, f64)], pairs: &[(u32, u32, f64, f64)]) {
        let m = unary.len();
        let (src, sink, n) = (m, m + 1, m + 2);
        // Source -> member is cut when the member goes to the stack, member -> sink when
        // it stays, x -> y when x stays and y goes.
        self.cap.clear();
        self.cap.resize(n * n, 0.0);
        for (i, &(e0, e1)) in unary.iter().enumerate() {
            self.cap[src * n + i] += e1;
            self.cap[i * n + sink] += e0;
        }
        for &(x, y, freq, e11) in pairs {
            let (x, y) = (x as usize, y as usize);
            // `(e11 - 2f) y`: a cost of the stack side or of the register side.
            self.cap[src * n + x] += 2.0 * freq;
            if e11 >= 2.0 * freq {
                self.cap[src * n + y] += e11 - 2.0 * freq;
            } else {
                self.cap[y * n + sink] += 2.0 * freq - e11;
            }
            self.cap[x * n + y] += 4.0 * freq - e11;
        }
        self.max_flow(n, src, sink);
        // On the stack: the members that still reach the sink (the smallest stack side of
        // a minimum cut).
        self.on_stack.clear();
        self.on_stack.resize(n, false);
        self.on_stack[sink] = true;
        self.queue.clear();
        self.queue.push(sink);
        while let Some(v) = self.queue.pop() {
            for u in 0..n {
                if !self.on_stack[u] && self.cap[u * n + v] > EPSILON {
                    self.on_stack[u] = true;
                    self.queue.push(u);
                }
            }
        }
    }

    /// Pushes a maximum flow from `src` to `sink` through `cap` (an `n` x `n` matrix),
    /// leaving the residual capacities: shortest augmenting paths (Edmonds-Karp).
    fn max_flow(&mut self, n: usize, src: usize, sink: usize) {
        let (cap, queue, pred) = (&mut self.cap, &mut self.queue, &mut self.pred);
        loop {
            pred.clear();
            pred.resize(n, usize::MAX);
            pred[src] = src;
            queue.clear();
            queue.push(src);
            let mut head = 0;
            while head < queue.len() && pred[sink] == usize::MAX {
                let v = queue[head];
                head += 1;
                for u in 0..n {
                    if pred[u] == usize::MAX && cap[v * n + u] > EPSILON {
                        pred[u] = v;
                        queue.push(u);
                    }
                }
            }
            if pred[sink] == usize::MAX {
                return;
            }
            let mut flow = f64::INFINITY;
            let mut v = sink;
            while v != src {
                flow = flow.min(cap[pred[v] * n + v]);
                v = pred[v];
            }
            let mut v = sink;
            while v != src {
                let p = pred[v];
                cap[p * n + v] -= flow;
                cap[v * n + p] += flow;
                v = p;
            }
        }
    }
}

/// A chain's copy cost with the members `stack` says on the stack: each member's own
/// term, and per copy inside the chain nothing with both in registers, a load or store
/// with one on the stack, `e11` with both.
fn chain_total(
    unary: &[(f64, f64)],
    pairs: &[(u32, u32, f64, f64)],
    stack: &dyn Fn(usize) -> bool,
) -> f64 {
    let mut t = 0.0;
    for (i, u) in unary.iter().enumerate() {
        t += if stack(i) { u.1 } else { u.0 };
    }
    for &(x, y, freq, e11) in pairs {
        t += match (stack(x as usize), stack(y as usize)) {
            (false, false) => 0.0,
            (true, true) => e11,
            _ => 2.0 * freq,
        };
    }
    t
}

impl CopySpillScratch {
    /// Fills `freed_prefix` from `freed_runs`, over `points` program points.
    fn index_freed(&mut self, points: usize) {
        self.freed_prefix.clear();
        if self.freed == PRegSet::empty() {
            return;
        }
        self.buckets = points / FREED_BUCKET + 1;
        let width = self.buckets + 1;
        self.freed_row.clear();
        self.freed_row.resize(PReg::NUM_INDEX, u8::MAX);
        let mut rows = 0;
        for p in self.freed {
            self.freed_row[p.index()] = rows as u8;
            rows += 1;
        }
        // First a difference array of the buckets each run covers, then per row the
        // buckets covered (a bucket counts once), then their running count.
        self.freed_prefix.resize(rows * width, 0);
        let mut diff = std::mem::take(&mut self.freed_prefix);
        let covered = &mut self.freed_cover;
        covered.clear();
        covered.resize(rows * width, 0);
        for &(p, start, end) in &self.freed_runs {
            let row = usize::from(self.freed_row[p.index()]) * width;
            covered[row + start as usize / FREED_BUCKET] += 1;
            covered[row + (end as usize - 1) / FREED_BUCKET + 1] -= 1;
        }
        for row in 0..rows {
            let (mut depth, mut count) = (0i32, 0u32);
            for b in 0..width {
                diff[row * width + b] = count;
                depth += covered[row * width + b];
                if depth > 0 {
                    count += 1;
                }
            }
        }
        self.freed_prefix = diff;
    }

    /// Whether a value this pass moved to the stack left `p` somewhere near the hull of
    /// `runs` (within a bucket): only there can the register have become free for it by
    /// this pass.
    pub(crate) fn freed_over(&self, p: PReg, runs: &[Segment]) -> bool {
        let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
            return false;
        };
        let Some(&row) = self.freed_row.get(p.index()) else {
            return false;
        };
        if row == u8::MAX || self.freed_prefix.is_empty() {
            return false;
        }
        let width = self.buckets + 1;
        let prefix = &self.freed_prefix[usize::from(row) * width..][..width];
        let (b0, b1) = (
            first.start as usize / FREED_BUCKET,
            (last.end as usize - 1) / FREED_BUCKET + 1,
        );
        prefix[b1.min(self.buckets)] > prefix[b0.min(self.buckets)]
    }
}

/// Where a partner is at the point of a copy.
#[derive(Clone, Copy, PartialEq)]
enum Location {
    Reg(PReg),
    Stack,
    Unknown,
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    pub(crate) fn spill_copy_only_values(&mut self) -> PRegSet {
        let mut s = self.ctx.copy_spill.take();
        s.candidates.clear();
        s.freed = PRegSet::empty();
        s.freed_runs.clear();
        let nv = self.func.num_vregs();
        if s.index_of.len() < nv {
            s.index_of.resize(nv, NONE);
        }
        for (id, iv) in self.ctx.intervals.iter() {
            if iv.kind == IntervalKind::Main
                && iv.assigned.is_some()
                && self.ctx.vreg_pieces[iv.vreg.vreg()].len() == 1
                && !self.ctx.partners.of(iv.vreg).is_empty()
                && !self
                    .ctx
                    .lists
                    .uses(iv)
                    .iter()
                    .any(|u| self.needs_register(u))
            {
                s.index_of[iv.vreg.vreg()] = s.candidates.len() as u32;
                s.candidates.push(id);
            }
        }
        if s.candidates.is_empty() {
            self.ctx.copy_spill.put(s);
            return PRegSet::empty();
        }
        s.copies.clear();
        s.fixed.clear();
        let partners = &self.ctx.partners;
        for c in &partners.copies {
            let (ia, ib) = (s.index_of[c.a.vreg()], s.index_of[c.b.vreg()]);
            if ia != NONE {
                s.copies.push((ia, c.b, c.at_b, c.freq));
            }
            if ib != NONE {
                s.copies.push((ib, c.a, c.at_a, c.freq));
            }
        }
        for &(v, _, reg, freq) in &partners.fixed {
            let i = s.index_of[v.vreg()];
            if i != NONE {
                s.fixed.push((i, reg, freq));
            }
        }
        s.copies.sort_by_key(|c| c.0);
        s.fixed.sort_by_key(|c| c.0);
        fill_ranges(
            &mut s.copy_range,
            s.candidates.len(),
            s.copies.iter().map(|c| c.0),
        );
        fill_ranges(
            &mut s.fixed_range,
            s.candidates.len(),
            s.fixed.iter().map(|c| c.0),
        );

        s.stack_partner.clear();
        s.stack_partner.resize(s.candidates.len(), false);
        // Whether the last pass moved nothing, so `stack_partner` is up to date.
        let mut settled = false;
        for _ in 0..MAX_PASSES {
            let mut moved = false;
            for k in 0..s.candidates.len() {
                let id = s.candidates[k];
                let Some(reg) = self.ctx.intervals[id].assigned else {
                    continue;
                };
                let vreg = self.ctx.intervals[id].vreg;
                let (copies, fixed) = (s.copy_range[k], s.fixed_range[k]);
                let (in_reg, on_stack, stack_partner) = self.copy_costs(
                    &s.copies[copies.0 as usize..copies.1 as usize],
                    &s.fixed[fixed.0 as usize..fixed.1 as usize],
                    vreg,
                    reg,
                    |_, _| false,
                );
                s.stack_partner[k] = stack_partner;
                if on_stack < in_reg {
                    debug!(
                        "{id} ({vreg}): copy-only value leaves {reg} for the stack \
                         (copies {in_reg} in the register, {on_stack} on the stack)"
                    );
                    self.leave_for_stack(&mut s, id, reg);
                    moved = true;
                }
            }
            if !moved {
                settled = true;
                break;
            }
        }
        if self.options.copy_spill_chains {
            self.spill_copy_only_chains(&mut s, settled);
        }
        for &id in &s.candidates {
            s.index_of[self.ctx.intervals[id].vreg.vreg()] = NONE;
        }
        s.index_freed(2 * self.func.num_insts());
        let freed = s.freed;
        self.ctx.copy_spill.put(s);
        freed
    }

    /// The candidates still in a register, joined by their copies into chains; each chain
    /// is labelled member by member, register or stack, at the least total copy cost (a
    /// minimum cut). A Wasm local that an inner loop only carries is a chain of block
    /// parameters, one per merge block; when its partners at both ends are spilled, each
    /// member alone pays a load or store to leave (its neighbours are in registers), so the
    /// single flips above keep the chain in registers, and the loop around it pays a store
    /// at one end and a load at the other on every iteration.
    ///
    /// A chain can gain only if some member has a partner outside it on the stack (every
    /// other copy costs no more in a register); with `settled`, `s.stack_partner` says
    /// which candidates have one, and chains without such a member are not weighed.
    fn spill_copy_only_chains(&mut self, s: &mut CopySpillScratch, settled: bool) {
        let n = s.candidates.len();
        let in_register = |k: usize| self.ctx.intervals[s.candidates[k]].assigned.is_some();
        if settled && !(0..n).any(|k| s.stack_partner[k] && in_register(k)) {
            return;
        }
        s.chain_of.clear();
        s.chain_of.extend(0..n as u32);
        let mut joined = false;
        for k in 0..n {
            if !in_register(k) {
                continue;
            }
            let (a, b) = s.copy_range[k];
            for &(_, partner, _, _) in &s.copies[a as usize..b as usize] {
                let j = s.index_of[partner.vreg()];
                if j != NONE && in_register(j as usize) {
                    let (x, y) = (find(&mut s.chain_of, k as u32), find(&mut s.chain_of, j));
                    if x != y {
                        s.chain_of[x.max(y) as usize] = x.min(y);
                        joined = true;
                    }
                }
            }
        }
        if !joined {
            return;
        }
        s.members.clear();
        for k in 0..n {
            if in_register(k) {
                let root = find(&mut s.chain_of, k as u32);
                s.members.push((root, k as u32));
            }
        }
        s.members.sort_unstable();
        let mut at = 0;
        while at < s.members.len() {
            let root = s.members[at].0;
            let end = at + s.members[at..].partition_point(|m| m.0 == root);
            let worth = !settled
                || s.members[at..end]
                    .iter()
                    .any(|&(_, k)| s.stack_partner[k as usize]);
            if (2..=MAX_CHAIN).contains(&(end - at)) && worth {
                self.label_chain(s, at, end);
            }
            at = end;
        }
    }

    /// Labels the chain `s.members[from..to]` by a minimum cut of its copy costs and moves
    /// the members labelled stack there, if that lowers the chain's total.
    ///
    /// The costs are the single flips' above, with one exception: a copy between two
    /// members both in registers counts nothing, since hint recoloring, which runs next,
    /// puts copy-connected values in one register where it can (counting a move for
    /// members in different registers sent whole chains to the stack that recoloring
    /// would have joined: meshoptimizer #0 +0.7% instead of -1.7%, fuzz at 8 registers
    /// +2.9% summed). Each cost is then a sum of per-member terms and, per copy inside
    /// the chain, `2f` when exactly one end is on the stack, `e11 <= 4f` when both are
    /// (a load and a store unless their slots merge). In the labels (1 stack) that is
    /// `2f x + (e11 - 2f) y + (4f - e11)(1 - x) y`, with `4f - e11 >= 0`: submodular, so
    /// the cut finds the cheapest labelling.
    fn label_chain(&mut self, s: &mut CopySpillScratch, from: usize, to: usize) {
        let m = to - from;
        s.unary.clear();
        s.unary.resize(m, (0.0, 0.0));
        s.pairs.clear();
        s.pair_vregs.clear();
        for (local, &(_, k)) in s.members[from..to].iter().enumerate() {
            s.index_of[self.ctx.intervals[s.candidates[k as usize]].vreg.vreg()] =
                CHAIN_BIT | local as u32;
        }
        for local in 0..m {
            let k = s.members[from + local].1 as usize;
            let id = s.candidates[k];
            let reg = self.ctx.intervals[id]
                .assigned
                .expect("chain members are assigned");
            let vreg = self.ctx.intervals[id].vreg;
            let (copies, fixed) = (s.copy_range[k], s.fixed_range[k]);
            let (index_of, pairs, pair_vregs) = (&s.index_of, &mut s.pairs, &mut s.pair_vregs);
            let (in_reg, on_stack, _) = self.copy_costs(
                &s.copies[copies.0 as usize..copies.1 as usize],
                &s.fixed[fixed.0 as usize..fixed.1 as usize],
                vreg,
                reg,
                |partner, freq| {
                    let j = index_of[partner.vreg()];
                    if j == NONE || j & CHAIN_BIT == 0 {
                        return false;
                    }
                    // Listed from both ends: kept from the lower.
                    let j = j & !CHAIN_BIT;
                    if j as usize > local {
                        // Both on the stack: weighed below, once the chain is worth a cut.
                        pairs.push((local as u32, j, freq, f64::NAN));
                        pair_vregs.push((vreg, partner));
                    }
                    true
                },
            );
            s.unary[local] = (in_reg, on_stack);
        }
        for &(_, k) in &s.members[from..to] {
            s.index_of[self.ctx.intervals[s.candidates[k as usize]].vreg.vreg()] = k;
        }
        // The copies inside the chain cost nothing with every member in its register,
        // so some member must be cheaper on the stack by its own copies for any
        // labelling to beat that.
        if !s.unary.iter().any(|&(e0, e1)| e1 < e0) {
            return;
        }
        for (pair, &(a, b)) in s.pairs.iter_mut().zip(&s.pair_vregs) {
            pair.3 = if self.disjoint(a, b) {
                0.0
            } else {
                4.0 * pair.2
            };
        }
        s.cut.label(&s.unary, &s.pairs);
        let total = |stack: &dyn Fn(usize) -> bool| chain_total(&s.unary, &s.pairs, stack);
        let before = total(&|_| false);
        let after = total(&|i| s.cut.on_stack[i]);
        if after >= before - EPSILON * before.max(1.0) {
            return;
        }
        for local in 0..m {
            if s.cut.on_stack[local] {
                let id = s.candidates[s.members[from + local].1 as usize];
                let reg = self.ctx.intervals[id]
                    .assigned
                    .expect("chain members are assigned");
                debug!(
                    "{id} ({}): copy-only value leaves {reg} for the stack with its chain \
                     (chain copies {before} in registers, {after} labelled)",
                    self.ctx.intervals[id].vreg,
                );
                self.leave_for_stack(s, id, reg);
                self.stats.chain_copy_spills += 1;
            }
        }
    }

    /// What a candidate's copies and fixed operands cost with it in `reg` and with it on
    /// the stack, and whether a copy partner is on the stack. A copy `inside` takes (by
    /// partner and frequency; a partner in the same chain) is left to the caller.
    fn copy_costs(
        &self,
        copies: &[(u32, VReg, u32, f32)],
        fixed: &[(u32, PReg, f32)],
        vreg: VReg,
        reg: PReg,
        mut inside: impl FnMut(VReg, f64) -> bool,
    ) -> (f64, f64, bool) {
        let (mut in_reg, mut on_stack, mut stack_partner) = (0.0f64, 0.0f64, false);
        for &(_, partner, at, freq) in copies {
            let freq = f64::from(freq);
            if inside(partner, freq) {
                continue;
            }
            match self.location_at(partner, at) {
                Location::Reg(r) => {
                    in_reg += if r == reg { 0.0 } else { freq };
                    on_stack += 2.0 * freq;
                }
                Location::Stack => {
                    stack_partner = true;
                    in_reg += 2.0 * freq;
                    if !self.disjoint(vreg, partner) {
                        on_stack += 4.0 * freq;
                    }
                }
                Location::Unknown => {}
            }
        }
        for &(_, r, freq) in fixed {
            let freq = f64::from(freq);
            in_reg += if r == reg { 0.0 } else { freq };
            on_stack += 2.0 * freq;
        }
        (in_reg, on_stack, stack_partner)
    }

    /// Moves candidate `id` from `reg` to the stack, noting where it left `reg` (for
    /// unspilling).
    fn leave_for_stack(&mut self, s: &mut CopySpillScratch, id: IntervalId, reg: PReg) {
        self.unassign(id);
        self.spill(id);
        self.stats.copy_spills += 1;
        s.freed.add(reg);
        let runs = self.ctx.lists.runs(&self.ctx.intervals[id]);
        s.freed_runs
            .extend(runs.iter().map(|r| (reg, r.start, r.end)));
    }

    /// Where `v` is at point `at`: the piece of it whose runs hold the point.
    fn location_at(&self, v: VReg, at: u32) -> Location {
        let pieces = &self.ctx.vreg_pieces[v.vreg()];
        if pieces.len() > MAX_PIECES {
            return Location::Unknown;
        }
        for &p in pieces {
            let iv = &self.ctx.intervals[p];
            if iv.kind != IntervalKind::Main {
                continue;
            }
            let i = self.ctx.lists.runs(iv).partition_point(|r| r.end <= at);
            if self
                .ctx
                .lists
                .runs(iv)
                .get(i)
                .is_some_and(|r| r.start <= at)
            {
                return match (iv.spilled, iv.assigned) {
                    (true, _) => Location::Stack,
                    (false, Some(r)) => Location::Reg(r),
                    (false, None) => Location::Unknown,
                };
            }
        }
        Location::Unknown
    }

    /// Whether the live segments of `a` and `b` never overlap (so their slots can merge).
    fn disjoint(&self, a: VReg, b: VReg) -> bool {
        let (x, y) = (
            self.an.intervals.segments_of(a),
            self.an.intervals.segments_of(b),
        );
        let (short, long) = if x.len() <= y.len() { (x, y) } else { (y, x) };
        !short.iter().any(|s: &Segment| {
            let i = long.partition_point(|t| t.end <= s.start);
            long.get(i).is_some_and(|t| t.start < s.end)
        })
    }
}

/// Per candidate, its range in a list sorted by candidate index.
fn fill_ranges(ranges: &mut Vec<(u32, u32)>, n: usize, keys: impl Iterator<Item = u32>) {
    ranges.clear();
    ranges.resize(n, (0, 0));
    let mut at = 0u32;
    let mut keys = keys.peekable();
    for (k, range) in ranges.iter_mut().enumerate() {
        let start = at;
        while keys.next_if(|&key| key as usize == k).is_some() {
            at += 1;
        }
        *range = (start, at);
    }
}

#[cfg(test)]
mod tests {
    use super::{Cut, chain_total};

    /// The cut's labelling costs what the cheapest of all labellings costs, on random
    /// chains of up to 9 members (every pair cost as `label_chain` builds them).
    #[test]
    fn the_cut_finds_the_cheapest_labelling() {
        let mut next = crate::tests::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut cut = Cut::default();
        for _ in 0..2000 {
            let m = 1 + next(9) as usize;
            let unary: Vec<(f64, f64)> = (0..m)
                .map(|_| (next(5) as f64 * 10.0, next(5) as f64 * 10.0))
                .collect();
            let mut pairs = Vec::new();
            for _ in 0..next(2 * m as u64 + 1) {
                let (x, y) = (next(m as u64) as u32, next(m as u64) as u32);
                if x < y {
                    let freq = [1.0, 10.0, 100.0][next(3) as usize];
                    let e11 = if next(2) == 0 { 0.0 } else { 4.0 * freq };
                    pairs.push((x, y, freq, e11));
                }
            }
            cut.label(&unary, &pairs);
            let got = chain_total(&unary, &pairs, &|i| cut.on_stack[i]);
            let best = (0..1u32 << m)
                .map(|bits| chain_total(&unary, &pairs, &|i| bits >> i & 1 == 1))
                .fold(f64::INFINITY, f64::min);
            assert!(
                (got - best).abs() < 1e-6,
                "{got} against {best}: {unary:?} {pairs:?}"
            );
        }
    }
}
