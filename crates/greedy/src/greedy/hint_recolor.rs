//! Hint recoloring after the main loop (LLVM's `tryHintsRecoloring`). The main loop
//! assigns intervals one at a time, so a copy's two ends can land in different registers
//! when the register one end preferred was taken by the time it was placed. Once every
//! interval is placed, each such broken copy (a block-param edge, a reuse pair, a fixed
//! operand) is revisited: the group of copy-connected intervals sharing one end's
//! register moves to the other end's register when every member fits there and the
//! frequency-weighted cost of the copies around the group goes down. When a few
//! intervals in that register are in the way and fit in the group's register once it
//! has left, the two are exchanged if that lowers the cost of the copies around both:
//! two block params given each other's argument registers (a move cycle on the edge)
//! cannot be fixed by moving either alone. When some do not fit there, each may move
//! to the group's register or aside to another one free for it (`Options::exchange_aside`).
//!
//! Work is bounded: groups have at most `MAX_GROUP` members, values with more than
//! `MAX_PIECES` pieces are left alone, and each broken copy is visited once, in one pass
//! (as LLVM's). A second pass, retrying the copies whose registers had changed since they
//! failed, bought 0.004% of the Wasm corpus's summed weighted cost (0.02% at most on the
//! fuzz corpora; a few functions 2-10%) for 1.5% of the allocation instructions (session
//! 26, docs/design.md).
//! An interval with more than `MANY_COPIES` copies (a value copied into each case of a
//! wide switch) keeps its partners' frequencies summed by register, so a group or an
//! exchange reaching it reads those sums instead of walking its copies.

use super::Allocator;
use super::csr::CSR_COST;
use super::interval::{IntervalId, LiveInterval};
use crate::analysis::intervals::{Point, before, point_inst};
use crate::observe::observe;
use cranelift_entity::{EntityRef, SecondaryMap};
use log::debug;
use regalloc2::{Function, PReg, VReg};

const MAX_GROUP: usize = 16;
const MAX_PIECES: usize = 32;
/// Occupants of the target register a group may be exchanged with.
const MAX_SWAP: usize = 8;

/// Copies between intervals, as an adjacency list, kept across functions for buffers.
#[derive(Default)]
pub(crate) struct CopyGraph {
    /// (a, b, frequency) for each register-to-register copy between two intervals.
    edges: Vec<(IntervalId, IntervalId, f32)>,
    /// (interval, register its operand is fixed to, frequency).
    fixed: Vec<(IntervalId, PReg, f32)>,
    /// Adjacency: per interval index, a range into `adj`.
    adj_range: SecondaryMap<IntervalId, (u32, u32)>,
    adj: Vec<(IntervalId, f32)>,
    /// Buffers of the adjacency's counting sorts: per interval, its first entry (then
    /// the next free one); the copies seen from both ends, bucketed by neighbour.
    offsets: Vec<u32>,
    next: Vec<u32>,
    by_neighbour: Vec<(IntervalId, IntervalId, f32)>,
    fixed_range: SecondaryMap<IntervalId, (u32, u32)>,
    group: Vec<IntervalId>,
    /// Per interval: whether it is in `group` or in `others` (once they are all known),
    /// and in which attempt (`attempt`); marks of earlier attempts mean neither, so none
    /// are cleared.
    side: SecondaryMap<IntervalId, (u32, Side)>,
    attempt: u32,
    /// Occupants of the target register overlapping the group, in no particular order.
    others: Vec<IntervalId>,
    /// `others` in the order `exchange_gains_in_order` sums them in.
    others_in_order: Vec<IntervalId>,
    /// The weighted cost (before, after) of the copies between the group and everything
    /// outside it, as if the group alone moved to the target, and of its members' fixed
    /// operands: summed while the group is collected, exactly (whole frequencies, far
    /// below 2^53).
    group_cost: (f64, f64),
    pieces: PieceIndex,
    /// Moves made so far in this function's recoloring.
    moves: u32,
    /// Per register index: the value of `moves` when its occupants last changed.
    changed_at: Vec<u32>,
    /// Per interval: the register its group last failed to move to, and `moves` then.
    /// Any member of a group collects the same group, so while neither register changes
    /// the attempt fails again from any of them.
    stuck: SecondaryMap<IntervalId, (Option<PReg>, u32)>,
    broken: Vec<u32>,
    crossings: Vec<EdgeCrossing>,
    /// Whether some interval has more than `MANY_COPIES` copies.
    any_many_copies: bool,
    /// Per interval with more than `MANY_COPIES` copies: 1 + the index of its tally in
    /// `tallies` once one was needed, else 0.
    tally_of: SecondaryMap<IntervalId, u32>,
    tallies: Vec<(IntervalId, PartnerRegs)>,
}

/// Copies of an interval with more than this many are summed by their partners'
/// registers (`PartnerRegs`) once a group or an exchange reaches it: a value copied into
/// each case of a wide switch has thousands, and every attempt next to it would walk them.
const MANY_COPIES: u32 = 64;

/// The partners of one interval with many copies, by the register (`hw_enc`: copies join
/// values of one class) each is assigned to now; kept up to date by `occupy`. Frequencies
/// are whole numbers, so the sums stay exact as partners come and go.
struct PartnerRegs {
    /// Distinct partners in each register.
    partners: [u32; PReg::MAX + 1],
    /// Summed frequency of the copies to the partners in each register.
    freq: [f64; PReg::MAX + 1],
    /// Summed frequency of all its copies.
    total: f64,
    /// Summed frequency of all its fixed operands.
    fixed_total: f64,
}

impl CopyGraph {
    /// Whether `i` is costed from its tally (`tally`).
    fn has_many_copies(&self, i: IntervalId) -> bool {
        let (s, e) = self.adj_range[i];
        e - s > MANY_COPIES
    }

    /// The tally of `i` (one of `has_many_copies`), made on first use from the registers
    /// `reg_of` gives.
    #[inline(never)]
    fn tally(
        &mut self,
        i: IntervalId,
        reg_of: impl Fn(IntervalId) -> Option<PReg>,
    ) -> &PartnerRegs {
        if self.tally_of[i] == 0 {
            let mut regs = PartnerRegs {
                partners: [0; PReg::MAX + 1],
                freq: [0.0; PReg::MAX + 1],
                total: 0.0,
                fixed_total: 0.0,
            };
            let (s, e) = self.fixed_range[i];
            regs.fixed_total = self.fixed[s as usize..e as usize]
                .iter()
                .map(|&(_, _, f)| f64::from(f))
                .sum();
            let (s, e) = self.adj_range[i];
            let mut last = None;
            for &(n, freq) in &self.adj[s as usize..e as usize] {
                let freq = f64::from(freq);
                regs.total += freq;
                if let Some(r) = reg_of(n) {
                    // Partners come sorted, a partner's copies together.
                    if last != Some(n) {
                        regs.partners[r.hw_enc()] += 1;
                    }
                    regs.freq[r.hw_enc()] += freq;
                }
                last = Some(n);
            }
            self.tallies.push((i, regs));
            self.tally_of[i] = self.tallies.len() as u32;
        }
        &self.tallies[self.tally_of[i] as usize - 1].1
    }

    /// Summed frequency of the copies between `a` and `b`, found by a binary search in
    /// `a`'s sorted list.
    fn copies_between(&self, a: IntervalId, b: IntervalId) -> f64 {
        let (s, e) = self.adj_range[a];
        let list = &self.adj[s as usize..e as usize];
        let i = list.partition_point(|&(n, _)| n < b);
        list[i..]
            .iter()
            .take_while(|&&(n, _)| n == b)
            .map(|&(_, f)| f64::from(f))
            .sum()
    }

    /// Summed frequency of the fixed operands of `a` in `p`, found by a binary search
    /// (`fixed` is sorted by interval, then register).
    fn fixed_in(&self, a: IntervalId, p: PReg) -> f64 {
        let (s, e) = self.fixed_range[a];
        let list = &self.fixed[s as usize..e as usize];
        let i = list.partition_point(|&(_, q, _)| q.index() < p.index());
        list[i..]
            .iter()
            .take_while(|&&(_, q, _)| q == p)
            .map(|&(_, _, f)| f64::from(f))
            .sum()
    }

    /// Moves `m` from `from` to `to` in the tallies of its partners: found by a walk
    /// over its copies or by a search in each tally's list, whichever is shorter (`m`
    /// may have many copies itself).
    #[inline(never)]
    fn retally(&mut self, m: IntervalId, from: PReg, to: PReg) {
        let (s, e) = self.adj_range[m];
        let moved = |regs: &mut PartnerRegs, freq: f64| {
            regs.partners[from.hw_enc()] -= 1;
            regs.freq[from.hw_enc()] -= freq;
            regs.partners[to.hw_enc()] += 1;
            regs.freq[to.hw_enc()] += freq;
        };
        if (e - s) as usize > self.tallies.len() {
            for k in 0..self.tallies.len() {
                let freq = self.copies_between(self.tallies[k].0, m);
                if freq > 0.0 {
                    moved(&mut self.tallies[k].1, freq);
                }
            }
            return;
        }
        let mut i = s as usize;
        while i < e as usize {
            let n = self.adj[i].0;
            let mut freq = 0.0;
            while i < e as usize && self.adj[i].0 == n {
                freq += f64::from(self.adj[i].1);
                i += 1;
            }
            let k = self.tally_of[n];
            if k != 0 {
                moved(&mut self.tallies[k as usize - 1].1, freq);
            }
        }
    }

    fn side(&self, i: IntervalId) -> Side {
        let (attempt, side) = self.side[i];
        if attempt == self.attempt {
            side
        } else {
            Side::Neither
        }
    }
}

/// A split value changing piece on a CFG edge: the copy between its two pieces, keyed by
/// where a walk over blocks, their predecessors and live-in values (by vreg) meets it.
#[derive(Clone, Copy)]
struct EdgeCrossing {
    key: (u32, u32, u32),
    copy: (IntervalId, IntervalId, f32),
}

#[derive(Clone, Copy, Default, PartialEq)]
enum Side {
    #[default]
    Neither,
    Group,
    Other,
}

/// Below this, a sum of whole-number frequencies is exact in `f32` (every partial sum is
/// no larger), so it does not depend on the order of its terms.
const EXACT_SUM: f32 = 16_777_216.0;

/// The answer of `tallied_member_costs`.
enum TalliedMember {
    TooManyPartners,
    /// Partners in `from` to find by a walk over the member's copies.
    PartnersToJoin,
    /// No partner in `from`: the weighted cost (before, after) of its copies and fixed
    /// operands.
    Costs(f64, f64),
}

/// The answer of `exchange_gains`.
#[derive(PartialEq)]
enum Gain {
    Pays,
    Loses,
    /// Loses, but the costs were rounded: summed in another order (from another seed of
    /// the same group), they might not.
    LosesRounded,
}

/// Where each piece of a value lies, for values of `2..=MAX_PIECES` pieces: the runs of
/// its assigned pieces in one sorted list (pieces of a value are disjoint), so finding
/// the piece at a point is one binary search rather than one per piece.
#[derive(Default)]
struct PieceIndex {
    runs: Vec<(u32, u32, IntervalId)>,
    /// Per vreg index: its range in `runs`; meaningful only for the values in `vregs`.
    of: Vec<(u32, u32)>,
    vregs: Vec<u32>,
}

impl PieceIndex {
    /// The assigned piece of `v` (one of `vregs`) holding it at point `p`.
    fn split_piece_at(&self, v: u32, p: Point) -> Option<IntervalId> {
        let (s, e) = self.of[v as usize];
        let runs = &self.runs[s as usize..e as usize];
        let i = runs.partition_point(|r| r.1 <= p);
        runs.get(i).filter(|r| r.0 <= p).map(|r| r.2)
    }
}

impl<F: Function + ?Sized> Allocator<'_, F> {
    pub(crate) fn recolor_hints(&mut self) {
        let mut g = self.ctx.copy_graph.take();
        if !self.build_copy_graph(&mut g) {
            self.ctx.copy_graph.put(g);
            return;
        }
        g.tallies.clear();
        g.tally_of.clear();
        // An interval's copies are at most all of them.
        g.any_many_copies = g.edges.len() > MANY_COPIES as usize
            && g.offsets.windows(2).map(|w| w[1] - w[0]).max() > Some(MANY_COPIES);
        self.recolor_pass(&mut g);
        self.ctx.copy_graph.put(g);
    }

    /// The registers of a copy's two ends (or of a fixed operand's interval and its
    /// register) when both are known and differ: the only copies a pass mends.
    fn broken_between(a: Option<PReg>, b: Option<PReg>) -> Option<(PReg, PReg)> {
        match (a, b) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            _ => None,
        }
    }

    /// `broken_between` for the copy between intervals `a` and `b`.
    fn copy_broken(&self, a: IntervalId, b: IntervalId) -> Option<(PReg, PReg)> {
        Self::broken_between(
            self.ctx.intervals[a].assigned,
            self.ctx.intervals[b].assigned,
        )
    }

    fn changed_since(g: &CopyGraph, moves: u32, x: PReg, y: PReg) -> bool {
        g.changed_at[x.index()] > moves || g.changed_at[y.index()] > moves
    }

    fn recolor_pass(&mut self, g: &mut CopyGraph) {
        // Heaviest broken copies first (ties in program order).
        let mut broken = std::mem::take(&mut g.broken);
        broken.clear();
        broken.extend((0..g.edges.len() as u32).filter(|&i| {
            let (a, b, _) = g.edges[i as usize];
            self.copy_broken(a, b).is_some()
        }));
        broken.sort_by(|&x, &y| g.edges[y as usize].2.total_cmp(&g.edges[x as usize].2));
        for &i in &broken {
            let (a, b, _) = g.edges[i as usize];
            // Read again: the moves before it in this pass may have mended it.
            if let Some((ra, rb)) = self.copy_broken(a, b)
                && !self.move_group(g, a, rb)
            {
                self.move_group(g, b, ra);
            }
        }
        g.broken = broken;
        // A fixed operand is a copy too: try moving its group into the fixed register.
        for i in 0..g.fixed.len() {
            let (a, p, _) = g.fixed[i];
            if Self::broken_between(self.ctx.intervals[a].assigned, Some(p)).is_some() {
                self.move_group(g, a, p);
            }
        }
    }

    /// Fills `index` for the current assignment (which pieces are assigned does not
    /// change during hint recoloring, only their registers).
    fn index_pieces(&self, index: &mut PieceIndex) {
        index.runs.clear();
        index.vregs.clear();
        let span = self.an.live.vreg_span();
        if index.of.len() < span.end {
            index.of.resize(span.end, (0, 0));
        }
        for (v, pieces) in self.ctx.vreg_pieces.iter() {
            if !(2..=MAX_PIECES).contains(&pieces.len()) {
                continue;
            }
            index.vregs.push(v as u32);
            let start = index.runs.len();
            for &id in pieces {
                let iv = &self.ctx.intervals[id];
                if iv.assigned.is_some() {
                    index
                        .runs
                        .extend(self.ctx.lists.runs(iv).iter().map(|s| (s.start, s.end, id)));
                }
            }
            index.runs[start..].sort_unstable_by_key(|r| r.0);
            index.of[v] = (start as u32, index.runs.len() as u32);
        }
    }

    /// The assigned piece of `v` holding it at point `p`: a binary search over the runs
    /// of its one piece or, for a split value, over `index`. A value live across the
    /// function has a run per stretch of blocks, and this runs for every CFG edge it
    /// crosses.
    fn piece_at(&self, index: &PieceIndex, v: VReg, p: Point) -> Option<IntervalId> {
        let pieces = &self.ctx.vreg_pieces[v.vreg()];
        match pieces.len() {
            0 => None,
            1 => {
                let iv = &self.ctx.intervals[pieces[0]];
                let i = self.ctx.lists.runs(iv).partition_point(|s| s.end <= p);
                (iv.assigned.is_some()
                    && self.ctx.lists.runs(iv).get(i).is_some_and(|s| s.start <= p))
                .then_some(pieces[0])
            }
            n if n > MAX_PIECES => None,
            _ => index.split_piece_at(v.vreg() as u32, p),
        }
    }

    /// Fills `g` from the copies, fixed operands and piece transitions; false, with only
    /// those listed, when none of them is broken between two registers (the only kind a
    /// pass mends), so that no pass would move anything.
    fn build_copy_graph(&mut self, g: &mut CopyGraph) -> bool {
        g.edges.clear();
        g.fixed.clear();
        self.index_pieces(&mut g.pieces);
        // The copies and fixed operands `Partners::compute` recorded, in program order.
        let partners = &self.ctx.partners;
        for c in &partners.copies {
            if let (Some(x), Some(y)) = (
                self.piece_at(&g.pieces, c.a, c.at_a),
                self.piece_at(&g.pieces, c.b, c.at_b),
            ) && x != y
            {
                g.edges.push((x, y, c.freq));
            }
        }
        for &(v, at, reg, freq) in &partners.fixed {
            if let Some(x) = self.piece_at(&g.pieces, v, at) {
                g.fixed.push((x, reg, freq));
            }
        }
        self.piece_transitions(g);
        let fixed_broken =
            |a: IntervalId, p: PReg| Self::broken_between(self.ctx.intervals[a].assigned, Some(p));
        if !g
            .edges
            .iter()
            .any(|&(a, b, _)| self.copy_broken(a, b).is_some())
            && !g
                .fixed
                .iter()
                .any(|&(a, p, _)| fixed_broken(a, p).is_some())
        {
            return false;
        }
        // Adjacency lists, each interval's neighbours in ascending order: the copies seen
        // from both ends are bucketed by neighbour, then stably by interval (two counting
        // sorts, linear in copies plus intervals). Copies are symmetric, so an interval's
        // count as a neighbour is its count as an end, and one table of offsets serves both.
        let n = self.ctx.intervals.len();
        let offsets = &mut g.offsets;
        offsets.clear();
        offsets.resize(n + 1, 0);
        for &(a, b, _) in &g.edges {
            offsets[a.index() + 1] += 1;
            offsets[b.index() + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let total = offsets[n] as usize;
        let by_neighbour = &mut g.by_neighbour;
        by_neighbour.clear();
        by_neighbour.resize(
            total,
            (IntervalId::from_u32(0), IntervalId::from_u32(0), 0.0),
        );
        let next = &mut g.next;
        next.clear();
        next.extend_from_slice(&offsets[..n]);
        for &(a, b, f) in &g.edges {
            for (x, y) in [(a, b), (b, a)] {
                let at = &mut next[y.index()];
                by_neighbour[*at as usize] = (x, y, f);
                *at += 1;
            }
        }
        g.adj.clear();
        g.adj.resize(total, (IntervalId::from_u32(0), 0.0));
        next.clear();
        next.extend_from_slice(&offsets[..n]);
        for &(x, y, f) in by_neighbour.iter() {
            let at = &mut next[x.index()];
            g.adj[*at as usize] = (y, f);
            *at += 1;
        }
        g.adj_range.clear();
        g.adj_range.resize(n);
        for (id, range) in g.adj_range.iter_mut() {
            *range = (offsets[id.index()], offsets[id.index() + 1]);
        }
        g.fixed.sort_unstable_by_key(|&(a, p, _)| (a, p.index()));
        g.fixed_range.clear();
        let mut i = 0;
        while i < g.fixed.len() {
            let a = g.fixed[i].0;
            let start = i as u32;
            while i < g.fixed.len() && g.fixed[i].0 == a {
                i += 1;
            }
            g.fixed_range[a] = (start, i as u32);
        }
        g.side.clear();
        g.attempt = 0;
        g.moves = 0;
        g.changed_at.clear();
        g.changed_at.resize(PReg::NUM_INDEX, 0);
        g.stuck.clear();
        debug_assert!(
            g.edges.iter().all(|e| e.2.fract() == 0.0)
                && g.fixed.iter().all(|f| f.2.fract() == 0.0),
            "block frequencies are whole numbers"
        );
        true
    }

    /// Moves between two pieces of one value are copies too: where one piece ends and
    /// the next begins inside a block, and across each CFG edge the value is live on.
    fn piece_transitions(&self, g: &mut CopyGraph) {
        let f = self.func;
        let cfg = &self.an.cfg;
        // Runs of one value's pieces are disjoint: a transition is a run ending where
        // the next begins, in another piece.
        for &v in &g.pieces.vregs {
            let (s, e) = g.pieces.of[v as usize];
            for w in g.pieces.runs[s as usize..e as usize].windows(2) {
                let ((_, p, a), (q, _, b)) = (w[0], w[1]);
                let inst = point_inst(p);
                let block = cfg.block_of(inst);
                let block_start = p % 2 == 0 && f.block_insns(block).first() == inst;
                if p == q && a != b && !block_start {
                    g.edges.push((a, b, self.an.freq.of(block)));
                }
            }
        }
        // Across CFG edges: only split values can change piece on an edge, so walk each
        // one's live-in blocks (its segments starting a block other than its def block)
        // instead of every live-in value of every block. The edges are then put in the
        // order of a walk over blocks, predecessors and live-in values (sorted by vreg),
        // which the order broken copies are mended in depends on.
        let mut crossings = std::mem::take(&mut g.crossings);
        crossings.clear();
        for &v in &g.pieces.vregs {
            let class = self.an.live.class[v as usize].unwrap_or(regalloc2::RegClass::Int);
            let vreg = VReg::new(v as usize, class);
            let def_block = self.an.live.def_block[v as usize];
            let (lo, hi) = g.pieces.of[v as usize];
            let runs = &g.pieces.runs[lo as usize..hi as usize];
            // The value's segments come in increasing order, so the run holding each
            // one's start is found by walking the sorted runs forward, not by a search.
            let mut cursor = 0;
            for s in self.an.intervals.segments_of(vreg) {
                let succ = cfg.block_of(point_inst(s.start));
                let start = before(f.block_insns(succ).first());
                if s.start != start || succ == def_block {
                    continue;
                }
                debug_assert!(self.an.live.livein[succ.index()].contains(&vreg));
                while runs.get(cursor).is_some_and(|r| r.1 <= start) {
                    cursor += 1;
                }
                // The piece entering `succ` is the same from every predecessor.
                let Some(&(run_start, run_end, y)) = runs.get(cursor).filter(|r| r.0 <= start)
                else {
                    continue;
                };
                debug_assert_eq!(Some(y), g.pieces.split_piece_at(v, start));
                for (k, &pred) in f.block_preds(succ).iter().enumerate() {
                    let end = before(f.block_insns(pred).last()) + 1;
                    // A predecessor whose end lies in the run entering `succ` (the block
                    // laid out just before it, mostly) leaves the value in the same piece.
                    let x = if (run_start..run_end).contains(&end) {
                        Some(y)
                    } else {
                        g.pieces.split_piece_at(v, end)
                    };
                    if let Some(x) = x
                        && x != y
                    {
                        let freq = self.an.freq.of(pred).min(self.an.freq.of(succ));
                        crossings.push(EdgeCrossing {
                            key: (succ.index() as u32, k as u32, v),
                            copy: (x, y, freq),
                        });
                    }
                }
            }
        }
        crossings.sort_unstable_by_key(|c| c.key);
        g.edges.extend(crossings.iter().map(|c| c.copy));
        g.crossings = crossings;
    }

    /// Moves the copy-connected group of `seed` that shares its register to `target`,
    /// if all of it fits there and the copies around it get cheaper; when only a few
    /// intervals in `target` are in the way, exchanges the group with them if they fit
    /// in the group's register. Returns whether anything moved.
    fn move_group(&mut self, g: &mut CopyGraph, seed: IntervalId, target: PReg) -> bool {
        // Most functions have no interval with many copies: their walks skip the test.
        if g.any_many_copies {
            self.move_group_with::<true>(g, seed, target)
        } else {
            self.move_group_with::<false>(g, seed, target)
        }
    }

    /// `move_group`, where `TALLIES` says whether some interval has many copies.
    fn move_group_with<const TALLIES: bool>(
        &mut self,
        g: &mut CopyGraph,
        seed: IntervalId,
        target: PReg,
    ) -> bool {
        let Some(from) = self.ctx.intervals[seed].assigned else {
            return false;
        };
        if from == target {
            return false;
        }
        let (stuck_on, stuck_at) = g.stuck[seed];
        if stuck_on == Some(target) && !Self::changed_since(g, stuck_at, from, target) {
            return false;
        }
        g.others.clear();
        g.attempt += 1;
        let outcome = if self.collect_group::<TALLIES>(g, seed, from, target) {
            self.move_or_swap::<TALLIES>(g, from, target)
        } else {
            Gain::Loses
        };
        if outcome == Gain::Loses {
            for &m in &g.group {
                g.stuck[m] = (Some(target), g.moves);
            }
        }
        outcome == Gain::Pays
    }

    /// Fills `g.group` with the copy-connected intervals of `seed` assigned to `from`,
    /// and `g.group_cost` for a move to `target`; false when there are more than
    /// `MAX_GROUP`.
    fn collect_group<const TALLIES: bool>(
        &self,
        g: &mut CopyGraph,
        seed: IntervalId,
        from: PReg,
        target: PReg,
    ) -> bool {
        g.group.clear();
        g.group.push(seed);
        g.side[seed] = (g.attempt, Side::Group);
        let (mut before_cost, mut after_cost) = (0.0f64, 0.0f64);
        let mut i = 0;
        while i < g.group.len() {
            let m = g.group[i];
            i += 1;
            if TALLIES && g.has_many_copies(m) {
                match self.tallied_member_costs(g, m, from, target) {
                    TalliedMember::TooManyPartners => return false,
                    TalliedMember::Costs(before, after) => {
                        before_cost += before;
                        after_cost += after;
                        continue;
                    }
                    TalliedMember::PartnersToJoin => {}
                }
            }
            let (s, e) = g.adj_range[m];
            for &(o, freq) in &g.adj[s as usize..e as usize] {
                if g.side(o) == Side::Group {
                    continue;
                }
                // A partner in `from` joins the group; any other stays outside it, so
                // its copy is broken now and whole after the move only if it is in
                // `target`.
                let reg = self.ctx.intervals[o].assigned;
                if reg == Some(from) {
                    if g.group.len() == MAX_GROUP {
                        return false;
                    }
                    g.group.push(o);
                    g.side[o] = (g.attempt, Side::Group);
                } else {
                    before_cost += f64::from(freq);
                    if reg != Some(target) {
                        after_cost += f64::from(freq);
                    }
                }
            }
            let (s, e) = g.fixed_range[m];
            for &(_, p, freq) in &g.fixed[s as usize..e as usize] {
                if p != from {
                    before_cost += f64::from(freq);
                }
                if p != target {
                    after_cost += f64::from(freq);
                }
            }
        }
        g.group_cost = (before_cost, after_cost);
        true
    }

    /// The weighted cost (before, after) of group member `m`'s copies and fixed operands
    /// for a move from `from` to `target`, from its tally: every partner of `m` in `from`
    /// belongs to the group, so too many of them make it too large, and with none, no
    /// copy of `m` is inside the group.
    #[inline(never)]
    fn tallied_member_costs(
        &self,
        g: &mut CopyGraph,
        m: IntervalId,
        from: PReg,
        target: PReg,
    ) -> TalliedMember {
        let regs = g.tally(m, |n| self.ctx.intervals[n].assigned);
        match regs.partners[from.hw_enc()] as usize {
            0 => {}
            in_from if in_from >= MAX_GROUP => return TalliedMember::TooManyPartners,
            _ => return TalliedMember::PartnersToJoin,
        }
        let (total, in_target, fixed_total) =
            (regs.total, regs.freq[target.hw_enc()], regs.fixed_total);
        TalliedMember::Costs(
            total + fixed_total - g.fixed_in(m, from),
            total - in_target + fixed_total - g.fixed_in(m, target),
        )
    }

    /// The weighted cost (before, after) of occupant `o`'s copies and fixed operands for
    /// an exchange of the group (from `from`) with the occupants (of `target`), from its
    /// tally, as if every partner stayed outside both; then corrected for the copies to
    /// the group (in `from`: broken before only in that sum, and broken after) and to the
    /// other occupants (in `target`: whole after only in that sum), found by a search
    /// each in `o`'s list.
    #[inline(never)]
    fn tallied_occupant_costs(
        &self,
        g: &mut CopyGraph,
        o: IntervalId,
        from: PReg,
        target: PReg,
    ) -> (f64, f64) {
        let regs = g.tally(o, |n| self.ctx.intervals[n].assigned);
        let (total, in_from, in_target, fixed_total) = (
            regs.total,
            regs.freq[from.hw_enc()],
            regs.freq[target.hw_enc()],
            regs.fixed_total,
        );
        let to_group: f64 = g.group.iter().map(|&m| g.copies_between(o, m)).sum();
        let to_others: f64 = g
            .others
            .iter()
            .filter(|&&x| x != o)
            .map(|&x| g.copies_between(o, x))
            .sum();
        (
            total - in_target - to_group + fixed_total - g.fixed_in(o, target),
            total - in_from - to_others + to_group + fixed_total - g.fixed_in(o, from),
        )
    }

    /// Whether the group moved (`Pays`); otherwise whether another seed of it would fail
    /// too (`Loses`).
    fn move_or_swap<const TALLIES: bool>(
        &mut self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
    ) -> Gain {
        // `g.others` (empty) gathers the intervals in `target` that overlap the group (the
        // swap partners).
        // The cheap checks of every member before any register probe.
        if g.group.iter().any(|&m| {
            let iv = &self.ctx.intervals[m];
            !self.may_take(target, iv) || self.fixed_conflict(target, iv)
        }) {
            return Gain::Loses;
        }
        for k in 0..g.group.len() {
            let iv = &self.ctx.intervals[g.group[k]];
            self.ctx.matrix.interference_unordered(
                target,
                self.ctx.lists.runs(iv),
                &mut g.others,
                MAX_SWAP,
            );
            if g.others.len() > MAX_SWAP {
                return Gain::Loses;
            }
        }
        if g.others.is_empty() {
            let gain = self.exchange_gains::<TALLIES>(g, from, target);
            if gain != Gain::Pays {
                return gain;
            }
            let group = std::mem::take(&mut g.group);
            self.vacate(g, &group, from);
            self.occupy::<TALLIES>(g, &group, from, target, "to join its copy partners");
            g.group = group;
            g.moves += 1;
            self.ctx.callee_saved.touch(target);
            self.stats.hint_recolorings += 1;
            return Gain::Pays;
        }
        // Exchange: it must pay, and every partner must fit in `from` once the group
        // has left it. The gain is a walk over copies; fitting is a register probe per
        // partner, so it is asked second (most exchanges fail one or the other).
        for &o in &g.others {
            g.side[o] = (g.attempt, Side::Other);
        }
        let gain = self.exchange_gains::<TALLIES>(g, from, target);
        if gain != Gain::Pays {
            return gain;
        }
        if let Some(fit) = (g.others.iter()).position(|&o| !self.fits_once_group_left(g, o, from)) {
            if self.options.exchange_aside {
                return self.exchange_aside::<TALLIES>(g, from, target, fit);
            }
            return Gain::Loses;
        }
        let dest: smallvec::SmallVec<[PReg; MAX_SWAP]> = smallvec::smallvec![from; g.others.len()];
        self.complete_exchange::<TALLIES>(g, from, target, &dest);
        Gain::Pays
    }

    /// Whether occupant `o` of the target register may take `r` once the group being
    /// recolored has left its register: nothing but group members in `r` overlaps it
    /// (in any other register than the group's, nothing at all).
    fn fits_once_group_left(&self, g: &CopyGraph, o: IntervalId, r: PReg) -> bool {
        let iv = &self.ctx.intervals[o];
        self.may_take(r, iv)
            && !self.fixed_conflict(r, iv)
            && !(self.ctx.matrix)
                .overlaps_any(r, self.ctx.lists.runs(iv), |j| g.side(j) != Side::Group)
    }

    /// Moves the group from `from` to `target` and each occupant `g.others[k]` from
    /// `target` to `dest[k]`.
    fn complete_exchange<const TALLIES: bool>(
        &mut self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
        dest: &[PReg],
    ) {
        let others = std::mem::take(&mut g.others);
        let group = std::mem::take(&mut g.group);
        self.vacate(g, &others, target);
        self.vacate(g, &group, from);
        self.occupy::<TALLIES>(g, &group, from, target, "exchanged with the occupants");
        for (k, &r) in dest.iter().enumerate() {
            let why = if r == from {
                "exchanged for copy partners"
            } else {
                "moved aside for copy partners"
            };
            self.occupy::<TALLIES>(g, &others[k..=k], target, r, why);
        }
        g.group = group;
        g.others = others;
        g.moves += 1;
        self.stats.hint_recolorings += 1;
        self.stats.hint_exchanges += 1;
        self.stats.aside_exchanges += usize::from(dest.iter().any(|&r| r != from));
    }

    /// The exchange failed because some occupant of `target` does not fit in `from` (the
    /// first `fit` do, as `move_or_swap` found): moves each occupant to `from` if it fits
    /// there, else to the first register of the order free for it (not an untouched
    /// callee-saved one), when the copies around the group and the occupants then cost
    /// less.
    fn exchange_aside<const TALLIES: bool>(
        &mut self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
        fit: usize,
    ) -> Gain {
        // Priced first as if the occupants' copies and fixed operands all broke in
        // their new register: then any register they fit in pays.
        let (before, worst_after) =
            self.exchange_costs_to::<TALLIES>(g, from, target, PReg::invalid());
        if worst_after >= before {
            return Gain::Loses;
        }
        // Each occupant to the group's register if it fits there once the group has left
        // it, else to the first register of the order free for it (never an untouched
        // callee-saved one). They do not overlap one another, so they may share one.
        let class = target.class() as usize;
        let mut dest: smallvec::SmallVec<[PReg; MAX_SWAP]> = smallvec::smallvec![from; fit];
        for &o in &g.others[fit..] {
            let to = std::iter::once(from)
                .chain(self.out.order[class].iter().copied().filter(|&r| r != from))
                .find(|&r| {
                    r != target
                        && !self.ctx.callee_saved.is_untouched(r)
                        && self.fits_once_group_left(g, o, r)
                });
            match to {
                Some(r) => dest.push(r),
                None => return Gain::Loses,
            }
        }
        self.complete_exchange::<TALLIES>(g, from, target, &dest);
        Gain::Pays
    }

    /// `may_hold`; with `Options::outside_hints`, also a register outside the order that
    /// `may_hold_outside` allows (the target of a recoloring is a copy partner's register
    /// or one a fixed operand names).
    fn may_take(&self, p: PReg, iv: &LiveInterval) -> bool {
        self.may_hold(p, iv)
            || (self.options.outside_recoloring
                && self.options.outside_hints
                && self.may_hold_outside(p, iv, true))
    }

    /// Takes `group` out of `reg` in the interference matrix (their `assigned` is
    /// overwritten by `occupy` right after).
    fn vacate(&mut self, g: &mut CopyGraph, group: &[IntervalId], reg: PReg) {
        g.changed_at[reg.index()] = g.moves + 1;
        for &m in group {
            self.ctx
                .matrix
                .unassign(reg, self.ctx.lists.runs(&self.ctx.intervals[m]));
        }
    }

    fn occupy<const TALLIES: bool>(
        &mut self,
        g: &mut CopyGraph,
        group: &[IntervalId],
        from: PReg,
        target: PReg,
        why: &'static str,
    ) {
        g.changed_at[target.index()] = g.moves + 1;
        for &m in group {
            if TALLIES {
                g.retally(m, from, target);
            }
            self.ctx.intervals[m].assigned = Some(target);
            self.ctx
                .matrix
                .assign(target, m, self.ctx.lists.runs(&self.ctx.intervals[m]));
            self.refresh_hint_reg(self.ctx.intervals[m].vreg);
            observe!(self, self.hint_event(m, from, target, why));
            debug!(
                "{m} ({}): recolored from {from} to {target} {why}",
                self.ctx.intervals[m].vreg
            );
        }
    }

    /// Does moving the group from `from` to `target`, and `g.others` (if any) from
    /// `target` to `from`, lower the weighted cost of the copies around both? Opening an
    /// untouched callee-saved `target` costs its save and restore.
    ///
    /// The group's side is `g.group_cost`; only the occupants' copies are walked here. A
    /// copy between the group and an occupant is broken before and after (the ends trade
    /// registers), where `group_cost` counted it whole after the move. The sums are
    /// exact, so the order of `g.others` does not matter; below `EXACT_SUM` so are the
    /// `f32` sums of `exchange_gains_in_order`, whose answer this is, and above it, where
    /// that answer depends on the order of its terms, it is asked, with the occupants
    /// listed again in the order its sums have always taken them in.
    fn exchange_gains<const TALLIES: bool>(
        &self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
    ) -> Gain {
        let (before_cost, after_cost) = self.exchange_costs::<TALLIES>(g, from, target);
        let exact = f64::from(EXACT_SUM);
        if before_cost < exact && after_cost < exact {
            let gain = if after_cost < before_cost {
                Gain::Pays
            } else {
                Gain::Loses
            };
            debug_assert!(gain == self.exchange_gains_in_order(g, &g.others, from, target));
            return gain;
        }
        // The same occupants (at most `MAX_SWAP`, all found), each member's latest first.
        let mut others = std::mem::take(&mut g.others_in_order);
        others.clear();
        for &m in &g.group {
            let iv = &self.ctx.intervals[m];
            self.ctx
                .matrix
                .interference(target, self.ctx.lists.runs(iv), &mut others, MAX_SWAP);
        }
        debug_assert_eq!(others.len(), g.others.len());
        let gain = self.exchange_gains_in_order(g, &others, from, target);
        g.others_in_order = others;
        gain
    }

    /// The weighted cost (before, after) of the copies around the group and
    /// `g.others` and of their fixed operands (`exchange_gains`), summed in `f64`.
    fn exchange_costs<const TALLIES: bool>(
        &self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
    ) -> (f64, f64) {
        self.exchange_costs_to::<TALLIES>(g, from, target, from)
    }

    /// `exchange_costs` with the occupants going to `others_to`: `from`, a third register
    /// (where none of the group's copies is), or `PReg::invalid()`, no register, for the
    /// most their copies and fixed operands can cost there (all broken).
    fn exchange_costs_to<const TALLIES: bool>(
        &self,
        g: &mut CopyGraph,
        from: PReg,
        target: PReg,
        others_to: PReg,
    ) -> (f64, f64) {
        let (mut before_cost, mut after_cost) = g.group_cost;
        for k in 0..g.others.len() {
            let o = g.others[k];
            if TALLIES && others_to == from && g.has_many_copies(o) {
                let (before, after) = self.tallied_occupant_costs(g, o, from, target);
                before_cost += before;
                after_cost += after;
                continue;
            }
            let (s, e) = g.adj_range[o];
            for &(n, freq) in &g.adj[s as usize..e as usize] {
                match g.side(n) {
                    Side::Other => {}
                    Side::Group => after_cost += f64::from(freq),
                    Side::Neither => {
                        let reg = self.ctx.intervals[n].assigned;
                        if reg != Some(target) {
                            before_cost += f64::from(freq);
                        }
                        if reg != Some(others_to) {
                            after_cost += f64::from(freq);
                        }
                    }
                }
            }
            let (s, e) = g.fixed_range[o];
            for &(_, p, freq) in &g.fixed[s as usize..e as usize] {
                if p != target {
                    before_cost += f64::from(freq);
                }
                if p != others_to {
                    after_cost += f64::from(freq);
                }
            }
        }
        if self.ctx.callee_saved.is_untouched(target) {
            after_cost += f64::from(CSR_COST);
        }
        (before_cost, after_cost)
    }

    /// `exchange_gains` summed in `f32`, member by member and copy by copy, the
    /// occupants in the order of `others`.
    fn exchange_gains_in_order(
        &self,
        g: &CopyGraph,
        others: &[IntervalId],
        from: PReg,
        target: PReg,
    ) -> Gain {
        let (mut before_cost, mut after_cost) = (0.0f32, 0.0f32);
        for (members, now, next, moving) in [
            (&g.group[..], from, target, Side::Group),
            (others, target, from, Side::Other),
        ] {
            for &m in members {
                let (s, e) = g.adj_range[m];
                for &(o, freq) in &g.adj[s as usize..e as usize] {
                    // A copy inside one set stays whole (both ends move together); one
                    // between the two sets is broken before and after (the ends trade
                    // registers), counted once, from the occupants' side.
                    let (before_broken, after_broken) = match g.side(o) {
                        side if side == moving => continue,
                        Side::Other => continue,
                        Side::Group => (true, true),
                        Side::Neither => {
                            let reg = self.ctx.intervals[o].assigned;
                            (reg != Some(now), reg != Some(next))
                        }
                    };
                    if before_broken {
                        before_cost += freq;
                    }
                    if after_broken {
                        after_cost += freq;
                    }
                }
                let (s, e) = g.fixed_range[m];
                for &(_, p, freq) in &g.fixed[s as usize..e as usize] {
                    if p != now {
                        before_cost += freq;
                    }
                    if p != next {
                        after_cost += freq;
                    }
                }
            }
        }
        if self.ctx.callee_saved.is_untouched(target) {
            after_cost += CSR_COST;
        }
        if after_cost < before_cost {
            Gain::Pays
        } else if before_cost < EXACT_SUM && after_cost < EXACT_SUM {
            Gain::Loses
        } else {
            Gain::LosesRounded
        }
    }
}
